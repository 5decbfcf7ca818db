"""The store as a folder: the SQLite database's own data folder (its root fixed by `init`) or
one every PC mounts (a NAS).

A name maps onto the folder as it reads: ROOT/outputs/BOOK/..., ROOT/films/BOOK/film.mp4. The
root is absolute and kept in the database, and task rows record the name, never a path, so every
process on the PC (workers in any folder, Voilà in notebooks/, `export`) finds the same file.

Files are kept by name, so a publish would replace what is there: a worker's publish (one with a
lease) therefore stages its files beside the name under its lease's mark (NAME.staged-MARK, side
files first, each by one atomic rename, a copy first from another file system), its completion
records the mark, and only once that completion was accepted does `conclude` rename them onto
their names; a fenced one gives them back to its worker's ready file (for a takeover on that PC
to reuse, paying nothing) or deletes them. A late worker never replaces the output of the worker
that took its task over, with no lease renewal before its publish. A crash between the
completion and the rename is finished by whoever next reads the output (`fetch`, `fetch_side`),
from the mark the result records, idempotently. Staged files of other leases seen at a publish
(a task's first lease has none to look for) are deleted once that publish's completion was
accepted (they can never be accepted now), so a completion revealed late can never land over a
newer one; `store gc` deletes those no lease can have accepted (gc.py).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pipeline_kit.store import Holder, Kept, Stored, checked_name, side_name
from pipeline_kit.errors import BadInput, StoreUnavailable
from pipeline_kit.store.cache import file_digest, move

OUTPUTS = "outputs/"
STAGED = ".staged-"
_MARK = re.compile(r"[0-9a-f]{16}")


def mark_of(token: str) -> str:
    """The mark a lease stages its files under (a hash: a result never shows a lease token)."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def staged_path(path: Path, mark: str | None) -> Path:
    """Where the file for `path` waits under `mark` (None: straight onto `path`)."""
    return path if mark is None else path.with_name(f"{path.name}{STAGED}{mark}")


class FolderStore:
    """Outputs under an absolute root folder, by name."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = str(root)

    def locate(self, name: str) -> Path:
        """Where the file named `name` lives in this store."""
        return self.root.joinpath(*checked_name(name).parts)

    def publish(
        self, name: str, main: Path, sides: Mapping[str, Path], *, lease: Holder = None, first: bool = False
    ) -> Stored:
        """A worker's output (`lease` given) staged under its lease's mark until `conclude`; any
        other (a copy between stores) straight onto its name. Other leases' staged files are
        looked for (a scan of the folder) unless this is the task's `first` lease."""
        self._reachable()
        target = self.locate(name)
        mark = mark_of(lease[1]) if lease else None
        size, sha = file_digest(main)
        side_shas = {}
        target.parent.mkdir(parents=True, exist_ok=True)
        stale = tuple(sorted(_marks(_named(target, sides)) - {mark})) if mark and not first else ()
        for suffix, path in sorted(sides.items()):
            if path.is_file():
                side_shas[suffix] = file_digest(path)[1]
                move(path, staged_path(side_name(target, suffix), mark))
        move(main, staged_path(target, mark))
        return Stored(output_path=name, size=size, sha256=sha, sides=side_shas, staged=mark, stale=stale)

    def settle(self, stored: Stored, main: Path, sides: Mapping[str, Path]) -> None:
        """Nothing stays behind: publishing moved the files."""

    def conclude(self, stored: Stored, *, accepted: bool, keep: Kept = None) -> None:
        if stored.staged is None:
            return
        self._reachable()
        target = self.locate(stored.output_path)
        if not accepted:
            if keep is not None and not keep[0].exists():  # a takeover on this PC reuses it, paying nothing
                main, sides = keep
                for suffix in sorted(stored.sides):
                    _give_back(staged_path(side_name(target, suffix), stored.staged), sides[suffix])
                _give_back(staged_path(target, stored.staged), main)
            _remove(_named(target, stored.sides), [stored.staged])
            return
        _remove(_named(target, stored.sides), stored.stale)  # leases that can no longer be accepted
        _reveal(target, stored.staged, stored.sides)

    def fetch(self, output_path: str, result: Mapping[str, Any]) -> Path:
        self._reachable()
        target = self.locate(output_path)
        self._recover(target, result)
        return target

    def fetch_side(self, output_path: str, result: Mapping[str, Any], suffix: str) -> Path | None:
        self._reachable()
        target = self.locate(output_path)
        self._recover(target, result)
        side = side_name(target, suffix)
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

    def _recover(self, target: Path, result: Mapping[str, Any]) -> None:
        """Finish the reveal of the completion `result` records, if a crash cut it short."""
        mark = result.get("staged")
        if isinstance(mark, str) and _MARK.fullmatch(mark):
            try:
                _reveal(target, mark, dict(result.get("sides") or {}))
            except OSError:  # a read-only mount or permissions: the next reader that may write does it
                pass

    def _reachable(self) -> None:
        if not self.root.is_dir():
            raise StoreUnavailable(f"store folder {self.root} is not there (not mounted?)")


def _reveal(target: Path, mark: str, sides: Iterable[str]) -> None:
    """Rename the files staged under `mark` onto their names, side files first; those already
    renamed (or removed as stale) are skipped."""
    for path in _named(target, sides):
        try:
            os.replace(staged_path(path, mark), path)
        except FileNotFoundError:
            pass


def _give_back(staged: Path, path: Path) -> None:
    """A fenced lease's staged file back where its worker made it (gone already: nothing)."""
    try:
        move(staged, path)
    except FileNotFoundError:
        pass


def _named(target: Path, sides: Iterable[str]) -> list[Path]:
    """The files an output is made of: its side files first, then the main one."""
    return [*(side_name(target, suffix) for suffix in sorted(sides)), target]


def _marks(files: list[Path]) -> set[str]:
    """The marks of the files staged for these names (all in one folder: one scan of it)."""
    prefixes = tuple(f"{f.name}{STAGED}" for f in files)
    with os.scandir(files[0].parent) as found:
        return {e.name.rsplit(STAGED, 1)[1] for e in found if e.name.startswith(prefixes)}


def _remove(files: Iterable[Path], marks: Iterable[str]) -> None:
    """Delete the files staged for these names under `marks`."""
    for mark in marks:
        for path in files:
            staged_path(path, mark).unlink(missing_ok=True)
