"""This PC's cache of stored outputs, keyed by checksum, so each input is fetched once.

An output and its side files share one folder, named by the checksums of all of them (the same
film with other subtitles is another entry): CACHE/ab/KEY/film.mp4 beside CACHE/ab/KEY/film.srt.
Files appear by an atomic rename only after their checksum was verified, so a file that is there
is whole; a fetched file that does not match is a missing input (its blob is damaged), not an
outage.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from pipeline_kit.errors import GenerationError


def file_digest(path: Path) -> tuple[int, str]:
    """(bytes, sha256 hex) of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    size = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return size, h.hexdigest()


class Cache:
    """Files by checksum under `root`; `fill` writes a missing one through a fetch function."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self, sha256: str, sides: Mapping[str, str]) -> Path:
        key = (
            sha256
            if not sides
            else hashlib.sha256((sha256 + "".join(f"|{s}={h}" for s, h in sorted(sides.items()))).encode()).hexdigest()
        )
        return self.root / key[:2] / key

    def fill(self, target: Path, sha256: str, write: Callable[[Path], None]) -> Path:
        """`target`, written by `write(temp)` unless already there; refused if the checksum is off."""
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            write(tmp)
            if file_digest(tmp)[1] != sha256:
                raise GenerationError(  # a damaged blob, not an outage: pausing would wait forever
                    f"fetched {target.name} does not match its checksum {sha256[:12]}: the stored copy is damaged",
                    error_kind="missing_input",
                    retryable=True,
                )
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        return target

    def adopt(self, target: Path, source: Path) -> None:
        """Keep a file this PC made (already published) at `target`, moving it there."""
        if target.is_file() or not source.is_file():
            source.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        move(source, target)


def move(source: Path, target: Path) -> None:
    """Move a file with one atomic rename (a copy beside the target first, across file systems)."""
    if source.resolve() == target.resolve():
        return
    try:
        os.replace(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        source.unlink(missing_ok=True)
