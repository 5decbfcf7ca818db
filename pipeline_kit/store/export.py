"""`pipeline-kit export`: a book's outputs out of the store into a folder, under their names.

Films, subtitles and contact sheets, frames, sheets, clips and voices: every output a completed task of
the book recorded, fetched through the store (so from any PC and any folder), checked against
its checksum and written as DIR/NAME with its side files beside it, each file whole or not at
all. Only what a completed task row names is exported, never a stray blob. A folder that holds
files already is refused unless the caller asks to update it (write only what differs) or to
overwrite it; a file that cannot be had is listed, and the rest is still written.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books
from pipeline_kit.engine.queries import MADE, find_tasks
from pipeline_kit.errors import BadInput, NotFound, PipelineKitError
from pipeline_kit.store import Store, checked_name, side_name
from pipeline_kit.store.cache import file_digest

Mode = Literal["new", "update", "force"]  # empty folders only; write what differs; overwrite


@dataclass
class Exported:
    """What an export did: files written, files already there as they should be, and the names
    it could not write with why."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def export_book(db: Database, store: Store, bookcode: str, folder: Path, *, mode: Mode = "new") -> Exported:
    """Write the book's outputs under `folder` (made if missing)."""
    with db.reading() as conn:
        if conn.execute(sa.select(books.c.bookcode).where(books.c.bookcode == bookcode)).first() is None:
            raise NotFound(f"no book {bookcode!r}; `pipeline-kit status` lists the books")
        rows = find_tasks(conn, bookcode=bookcode, statuses=MADE, made=True)
    prepare(folder, mode)
    done = Exported()
    for row in rows:
        result = dict(row.result or {})
        try:
            source = store.fetch(row.output_path, result)
            target = folder.joinpath(*checked_name(row.output_path).parts)
            files = [(source, target, result.get("sha256"))]
            files += [
                (side_name(source, s), side_name(target, s), sha) for s, sha in (result.get("sides") or {}).items()
            ]
            for source_file, target_file, sha in files:
                _write(source_file, target_file, sha if isinstance(sha, str) else None, mode, done)
        except (PipelineKitError, OSError) as exc:
            done.failed.append((row.output_path, _why(exc)))
    return done


def prepare(folder: Path, mode: Mode) -> None:
    """Make `folder`, or BadInput saying why it cannot be an export's folder."""
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"cannot export into {folder}: it is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"cannot make the folder {folder}: {exc.strerror or exc}") from None
    if mode == "new" and any(folder.iterdir()):
        raise BadInput(f"{folder} is not empty: --update writes only what changed, --force overwrites what is there")


def _write(source: Path, target: Path, sha: str | None, mode: Mode, done: Exported) -> None:
    """Copy one file in whole after checking it against its checksum (`--update`: only if the
    file there differs)."""
    if sha is not None and file_digest(source)[1] != sha:
        raise PipelineKitError(f"{source.name} in the store does not match its checksum {sha[:12]}")
    if mode == "update" and sha is not None and target.is_file() and file_digest(target)[1] == sha:
        done.unchanged.append(target)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    done.written.append(target)


def _why(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"not in the store ({exc.filename or exc})"
    return (str(exc).splitlines() or [type(exc).__name__])[0]
