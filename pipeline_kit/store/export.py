"""`pipeline-kit export`: a book's outputs out of the store into a folder, under their names.

Films, subtitles and contact sheets, frames, sheets and clips: every output a completed task of
the book recorded, fetched through the store (so from any PC), written as DIR/NAME with its side
files beside it. Only what a completed task row names is exported, never a stray blob.
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, tasks
from pipeline_kit.errors import NotFound
from pipeline_kit.store import Store, side_name

DONE = ("completed", "awaiting_review")


def export_book(db: Database, store: Store, bookcode: str, folder: Path) -> list[Path]:
    """Write the book's outputs under `folder`; returns the files written (side files included)."""
    with db.engine.connect() as conn:
        if conn.execute(sa.select(books.c.bookcode).where(books.c.bookcode == bookcode)).first() is None:
            raise NotFound(f"no book {bookcode!r}; `pipeline-kit status` lists the books")
        rows = conn.execute(sa.select(tasks.c.output_path, tasks.c.result)
                            .where(tasks.c.bookcode == bookcode, tasks.c.status.in_(DONE),
                                   tasks.c.output_path.is_not(None))
                            .order_by(tasks.c.id)).all()
    written: list[Path] = []
    for row in rows:
        result = dict(row.result or {})
        source = store.fetch(row.output_path, result)
        target = folder.joinpath(*PurePosixPath(store.name_of(row.output_path)).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        for suffix in sorted(result.get("sides") or {}):
            written.append(Path(shutil.copyfile(side_name(source, suffix), side_name(target, suffix))))
        written.append(Path(shutil.copyfile(source, target)))
    return written
