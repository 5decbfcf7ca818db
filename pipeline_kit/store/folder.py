"""The store as a folder: this PC's data folder (the SQLite default) or one every PC mounts.

Names map onto the folder as they read: `outputs/BOOK/...` under the outputs folder, any other
name (`films/BOOK/film.mp4`) beside it. Publishing moves the file in with one atomic rename
(a copy first when it comes from another file system), side files first; output_path is the
file's path, so readers open it where it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline_kit.errors import StoreUnavailable
from pipeline_kit.store import Stored, side_name
from pipeline_kit.store.cache import file_digest, move

OUTPUTS = "outputs/"


class FolderStore:
    """Outputs under `outputs`, other names under its parent (the data folder)."""

    def __init__(self, outputs: Path, *, url: str, must_exist: bool) -> None:
        self.outputs, self.url, self._must_exist = outputs, url, must_exist

    def output_path(self, name: str) -> str:
        return str(self.locate(name))

    def name_of(self, output_path: str) -> str:
        path = Path(output_path)
        for base, prefix in ((self.outputs, OUTPUTS), (self.outputs.parent, "")):
            if path.is_relative_to(base):
                return prefix + path.relative_to(base).as_posix()
        return path.name

    def locate(self, name: str) -> Path:
        if name.startswith(OUTPUTS):
            return self.outputs / name[len(OUTPUTS):]
        return self.outputs.parent / name

    def publish(self, name: str, main: Path, sides: Mapping[str, Path]) -> Stored:
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
        return Stored(output_path=str(target), size=size, sha256=sha, sides=side_shas)

    def settle(self, stored: Stored, main: Path, sides: Mapping[str, Path]) -> None:
        """Nothing stays behind: publishing moved the files."""

    def fetch(self, output_path: str, result: Mapping[str, Any]) -> Path:
        self._reachable()
        return Path(output_path)

    def fetch_side(self, output_path: str, result: Mapping[str, Any], suffix: str) -> Path | None:
        self._reachable()
        side = side_name(Path(output_path), suffix)
        return side if suffix in (result.get("sides") or {}) and side.is_file() else None

    def _reachable(self) -> None:
        root = self.outputs.parent
        if self._must_exist and not root.is_dir():
            raise StoreUnavailable(f"store folder {root} is not there (not mounted?)")

