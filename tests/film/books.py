"""A small stored book for film tests: books, chapters and shots rows, and their video tasks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.schema import books, chapters, shots
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.engine import TaskSpec, enqueue

BOOK = "tale-1a2b3c"
LINES = (
    'She opened the door. "Who is there?" she asked.',
    "Rain fell on the empty road.",
    "“We leave at dawn,” he said. “Not a moment later.”",
)


def shot_id(chapter: int, seq: int) -> str:
    return f"{BOOK}-c{chapter:03d}-s{seq:04d}"


def add_chapter(conn: sa.Connection, number: int, shot_count: int, *, split: bool = True) -> None:
    """A chapter of `shot_count` shots; split ones get their shots and video tasks stored."""
    conn.execute(
        sa.insert(chapters).values(
            bookcode=BOOK,
            number=number,
            title=f"Part {number}",
            text="...",
            checksum=f"c{number}",
            split_at=db_now() if split else None,
        )
    )
    if not split:
        return
    texts = [LINES[seq % len(LINES)] for seq in range(1, shot_count + 1)]
    rows: list[dict[str, Any]] = [
        {
            "shot_id": shot_id(number, seq),
            "bookcode": BOOK,
            "chapter": number,
            "seq": seq,
            "scene": 1,
            "characters": [],
            "text": text,
            "span_start": 0,
            "span_end": len(text),
            "dialogue": '"' in text or "“" in text,
            "duration_s": 2.0 + seq / 4,
        }
        for seq, text in enumerate(texts, start=1)
    ]
    conn.execute(sa.insert(shots), rows)
    enqueue(
        conn,
        [
            TaskSpec(
                task_id=f"{r['shot_id']}/video",
                kind="video",
                lane="video",
                params={"width": 640, "height": 360, "fps": 12, "duration_s": r["duration_s"]},
                bookcode=BOOK,
                shot_id=r["shot_id"],
            )
            for r in rows
        ],
    )


def add_book(conn: sa.Connection, layout: Mapping[int, int], unsplit: tuple[int, ...] = ()) -> None:
    """The book with chapters {number: shot count}, and `unsplit` chapters not split yet."""
    conn.execute(sa.insert(books).values(bookcode=BOOK, title="A Tale", lang="en"))
    for number, count in layout.items():
        add_chapter(conn, number, count)
    for number in unsplit:
        add_chapter(conn, number, 0, split=False)
