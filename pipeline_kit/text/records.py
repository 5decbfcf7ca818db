"""Stored books and shots as frozen dataclasses, and a shot's conversion to and from its row."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.schema import books
from pipeline_kit.errors import NotFound


@dataclass(frozen=True, kw_only=True)
class Shot:
    """One storyboard shot: where it sits in the book, what it shows, and its prompts."""

    shot_id: str
    bookcode: str
    chapter: int
    seq: int
    scene: int
    location: str | None
    time_of_day: str | None
    characters: tuple[str, ...]
    text: str  # the chapter's text[span_start:span_end], exactly
    span_start: int
    span_end: int
    dialogue: bool
    duration_s: float
    prompt: str
    video_prompt: str
    inferred: tuple[str, ...] = ()  # names in `characters` inferred from a pronoun, not named

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Shot:
        return cls(
            shot_id=row["shot_id"],
            bookcode=row["bookcode"],
            chapter=row["chapter"],
            seq=row["seq"],
            scene=row["scene"],
            location=row["location"],
            time_of_day=row["time_of_day"],
            characters=tuple(row["characters"] or ()),
            text=row["text"],
            span_start=row["span_start"],
            span_end=row["span_end"],
            dialogue=bool(row["dialogue"]),
            duration_s=float(row["duration_s"]),
            prompt=row["prompt"] or "",
            video_prompt=row["video_prompt"] or "",
            inferred=tuple(row.get("inferred") or ()),
        )

    def to_row(self) -> dict[str, Any]:
        row = {f.name: getattr(self, f.name) for f in fields(self)}
        row["characters"] = list(self.characters)
        row["inferred"] = list(self.inferred) or None
        return row


def shot_id(bookcode: str, chapter: int, seq: int) -> str:
    """The shot's business key, e.g. `my-book-1a2b3c-c003-s0042`."""
    return f"{bookcode}-c{chapter:03d}-s{seq:04d}"


@dataclass(frozen=True)
class Book:
    """A book as stored: its code, title, language and style line (None: the default look)."""

    bookcode: str
    title: str
    lang: str
    style: str | None = None


def lock_book(conn: sa.Connection, bookcode: str) -> None:
    """Lock the book's row for this transaction, so writers of one book's shots, bible and films
    take turns. Take it first: a transaction that inserted a row naming the book holds a shared
    lock on it (MariaDB's foreign-key check), and two such upgrading at once deadlock."""
    found = conn.execute(sa.select(books.c.bookcode).where(books.c.bookcode == bookcode).with_for_update()).first()
    if found is None:
        raise NotFound(f"no book {bookcode!r}; `pipeline-kit status` lists the books")


def get_book(conn: sa.Connection, bookcode: str) -> Book:
    """The stored book, or NotFound."""
    row = conn.execute(
        sa.select(books.c.bookcode, books.c.title, books.c.lang, books.c.style).where(books.c.bookcode == bookcode)
    ).first()
    if row is None:
        raise NotFound(f"no book {bookcode!r}: ingest it first (`pipeline-kit ingest FILE --title TITLE`)")
    return Book(row.bookcode, row.title, row.lang, row.style)
