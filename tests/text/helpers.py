"""Small helpers shared by the text tests: row counts and chapter files of the sample book."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import books, chapters, shots, task_deps, tasks
from pipeline_kit.text import ingest_file, sample_book_path, split_book
from pipeline_kit.text.chapters import find_chapters

SAMPLE_TITLE = "The Lamplighter of Gullhaven"


def row_counts(db: Database) -> dict[str, int]:
    """Rows in each table the text layer writes."""
    with db.engine.connect() as conn:
        return {
            t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
            for t in (books, chapters, shots, tasks, task_deps)
        }


def sample_chapter_files(directory: Path) -> list[Path]:
    """The sample book written out one chapter per file, heading first (as a creator would)."""
    found = find_chapters(sample_book_path().read_text(encoding="utf-8"), SAMPLE_TITLE)
    paths = []
    for number, chapter in enumerate(found.chapters, start=1):
        path = directory / f"chapter{number}.txt"
        path.write_text(f"{chapter.title}\n\n{chapter.text}\n", encoding="utf-8")
        paths.append(path)
    return paths


def book_all_completed(db: Database) -> str:
    """The sample book split, with every task marked completed after one attempt."""
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode)
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).values(status="completed", attempts=1, deps_remaining=0))
    return bookcode


def shots_with_frame_prompts(db: Database) -> list[tuple[Any, str, str]]:
    """(shot row, first frame prompt, last frame prompt) of every shot, in book order."""
    with db.engine.connect() as conn:
        params = {r.task_id: r.params for r in conn.execute(sa.select(tasks.c.task_id, tasks.c.params))}
        rows = conn.execute(sa.select(shots).order_by(shots.c.chapter, shots.c.seq)).mappings().all()
    return [
        (r, params[f"{r['shot_id']}/first_frame"]["prompt"], params[f"{r['shot_id']}/last_frame"]["prompt"])
        for r in rows
    ]
