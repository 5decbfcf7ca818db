"""The store as a folder: the SQLite database's own data folder (its root fixed by `init`) or
one every PC mounts (a NAS).

A name maps onto the folder as it reads: ROOT/outputs/BOOK/..., ROOT/films/BOOK/film.mp4. The
root is absolute and kept in the database, and task rows record the name, never a path, so every
process on the PC (workers in any folder, Voilà in notebooks/, `export`) finds the same file.
Publishing moves the file in with one atomic rename (a copy first when it comes from another
file system), side files first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline_kit.store import Holder, Stored, checked_name, side_name
from pipeline_kit.errors import BadInput, StoreUnavailable
from pipeline_kit.store.cache import file_digest, move

OUTPUTS = "outputs/"


class FolderStore:
    """Outputs under an absolute root folder, by name."""

    swept = False  # files by name: nothing for `store gc`, so nothing to name before a publish
    replaces = True  # a publish renames over the file under its name

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = str(root)

    def locate(self, name: str) -> Path:
        """Where the file named `name` lives in this store."""
        return self.root.joinpath(*checked_name(name).parts)

    def publish(self, name: str, main: Path, sides: Mapping[str, Path], *, lease: Holder = None) -> Stored:
        self._reachable()
        target = self.locate(name)
        size, sha = file_digest(main)
        side_shas = {}
        target.parent.mkdir(parents=True, exist_ok=True)
        for suffix, path in sorted(sides.items()):
            if path.is_file():
                side_shas[suffix] = file_digest(path)[1]
                move(path, side_name(target, suffix))
        move(main, target)
        return Stored(output_path=name, size=size, sha256=sha, sides=side_shas)

    def settle(self, stored: Stored, main: Path, sides: Mapping[str, Path]) -> None:
        """Nothing stays behind: publishing moved the files."""

    def fetch(self, output_path: str, result: Mapping[str, Any]) -> Path:
        self._reachable()
        return self.locate(output_path)

    def fetch_side(self, output_path: str, result: Mapping[str, Any], suffix: str) -> Path | None:
        self._reachable()
        side = side_name(self.locate(output_path), suffix)
        return side if suffix in (result.get("sides") or {}) and side.is_file() else None

    def check(self) -> None:
        if not self.root.is_dir():
            raise BadInput(f"store folder {self.root} does not exist: make it (or mount it) first")
        probe = self.root / f".pipeline-kit-probe-{os.getpid()}"
        try:
            probe.write_bytes(b"probe")
            ok = probe.read_bytes() == b"probe"
            probe.unlink()
        except OSError as exc:
            raise BadInput(f"store folder {self.root} cannot be written: {exc.strerror or exc}") from None
        if not ok:
            raise BadInput(f"store folder {self.root} did not give back what was written")

    def _reachable(self) -> None:
        if not self.root.is_dir():
            raise StoreUnavailable(f"store folder {self.root} is not there (not mounted?)")
