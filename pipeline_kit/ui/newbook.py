"""The new-book screen's view-model: a title, then chapters pasted or uploaded one at a time.

Each chapter goes through `text.ingest_text` with its number, so adding the same text again is a
no-op ("unchanged", also when no number is given: the text is matched to the chapter it already
is) and changing a chapter says what changed. A chapter added to a book that was split already is
split at once: its shots, tasks and film are planned and the book's film is re-planned over every
chapter. The screen shows the bookcode as soon as a title is typed, the chapters stored so far and
what the last submission did.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit import text
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, chapters
from pipeline_kit.errors import BadInput, PipelineKitError
from pipeline_kit.text.chapters import one_chapter
from pipeline_kit.text.decode import decode_bytes
from pipeline_kit.text.ingest import ChapterOutcome
from pipeline_kit.plural import plural


SPLIT_NOW = {"added": "new chapter stored", "updated": "text replaced"}  # what a chapter of a split book gets


@dataclass(frozen=True)
class BookRow:
    bookcode: str
    title: str
    lang: str
    chapters: int
    review: bool


@dataclass(frozen=True)
class ChapterRow:
    number: int
    title: str
    length: int  # characters of text
    split: bool  # its shots exist (a changed text then needs `force` to re-split)


@dataclass(frozen=True)
class Change:
    """What one submission did to one chapter, in words."""

    number: int
    title: str
    action: str  # added | unchanged | updated | resplit
    detail: str


@dataclass(frozen=True)
class AddResult:
    ok: bool
    message: str
    bookcode: str | None
    changes: tuple[Change, ...] = ()


class NewBookModel:
    """Books and their chapters, and adding one chapter at a time."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def bookcode_for(title: str) -> str | None:
        """The code the title will be stored under (None while the title is empty)."""
        try:
            return text.make_bookcode(title)
        except BadInput:
            return None

    def books(self) -> tuple[BookRow, ...]:
        counted = sa.select(chapters.c.bookcode, sa.func.count().label("n")).group_by(chapters.c.bookcode).subquery()
        query = (
            sa.select(books.c.bookcode, books.c.title, books.c.lang, books.c.review, counted.c.n)
            .outerjoin(counted, counted.c.bookcode == books.c.bookcode)
            .order_by(books.c.title)
        )
        with self.db.reading() as conn:
            return tuple(
                BookRow(r.bookcode, r.title, r.lang, int(r.n or 0), bool(r.review)) for r in conn.execute(query)
            )

    def chapters(self, bookcode: str | None) -> tuple[ChapterRow, ...]:
        if not bookcode:
            return ()
        query = (
            sa.select(
                chapters.c.number, chapters.c.title, sa.func.length(chapters.c.text).label("size"), chapters.c.split_at
            )
            .where(chapters.c.bookcode == bookcode)
            .order_by(chapters.c.number)
        )
        with self.db.reading() as conn:
            return tuple(
                ChapterRow(r.number, r.title, int(r.size), r.split_at is not None) for r in conn.execute(query)
            )

    def next_number(self, bookcode: str | None) -> int:
        """The number a new chapter gets by default: one past the last stored."""
        stored = self.chapters(bookcode)
        return stored[-1].number + 1 if stored else 1

    def add_chapter(
        self, title: str, body: str, number: int | None = None, *, lang: str | None = None, force: bool = False
    ) -> AddResult:
        """Store `body` as chapter `number` (default: the next) of the book titled `title`."""
        bookcode = self.bookcode_for(title)
        if bookcode is None:
            return AddResult(False, "enter the book's title first", None)
        if not body.strip():
            return AddResult(False, "paste a chapter's text or upload a file first", bookcode)
        number = number or self.stored_as(bookcode, body) or self.next_number(bookcode)
        split_before = any(c.split for c in self.chapters(bookcode))
        try:
            report = text.ingest_text(self.db, body, title, lang, number, force, progress=False)
        except PipelineKitError as exc:
            return AddResult(False, str(exc), bookcode)
        changes = tuple(_change(c) for c in report.chapters)
        summary = "; ".join(f"chapter {c.number} {c.action}" for c in changes)
        if split_before and any(c.action in SPLIT_NOW for c in changes):
            return self._split_now(report.bookcode, summary, changes)
        return AddResult(True, f"{report.bookcode}: {summary}", report.bookcode, changes)

    def _split_now(self, bookcode: str, summary: str, changes: tuple[Change, ...]) -> AddResult:
        """A chapter that comes after the book was split is split at once, so its film is planned
        and the book's film re-planned over every chapter (as `pipeline-kit split` would)."""
        try:
            split = text.split_book(self.db, bookcode, progress=False)
        except PipelineKitError as exc:
            return AddResult(False, f"{bookcode}: {summary}, but splitting it failed: {exc}", bookcode, changes)
        said = f"{bookcode}: {summary}; split into {plural(split.shots_created, 'shot')} (the book was split already)"
        if split.films_replanned:
            said += f"; films to be made again: {'; '.join(split.films_replanned)}"
        if split.recast:
            said += f"; the bible re-cast earlier shots: {plural(len(split.recast), 'task')} to be made again"
        split_now = tuple(
            dataclasses.replace(c, detail=f"{SPLIT_NOW[c.action]} and split into shots: its film is planned")
            if c.action in SPLIT_NOW
            else c
            for c in changes
        )
        return AddResult(True, said, bookcode, split_now)

    def stored_as(self, bookcode: str, body: str) -> int | None:
        """The number of the stored chapter whose text is `body` (as one chapter), if any."""
        try:
            text = body.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
            raw = one_chapter(text, 1).chapters[0]
        except PipelineKitError:
            return None
        checksum = hashlib.sha256(raw.text.encode()).hexdigest()
        with self.db.reading() as conn:
            return conn.execute(
                sa.select(sa.func.min(chapters.c.number)).where(
                    chapters.c.bookcode == bookcode, chapters.c.checksum == checksum
                )
            ).scalar()

    def add_upload(
        self,
        title: str,
        data: bytes,
        name: str,
        number: int | None = None,
        *,
        lang: str | None = None,
        force: bool = False,
    ) -> AddResult:
        """Decode an uploaded file (UTF-8, UTF-16 or GB18030) and add it as one chapter."""
        try:
            decoded = decode_bytes(data, name=name)
        except PipelineKitError as exc:
            return AddResult(False, str(exc), self.bookcode_for(title))
        return self.add_chapter(title, decoded.text, number, lang=lang, force=force)


def _change(outcome: ChapterOutcome) -> Change:
    detail = {
        "added": "new chapter stored",
        "unchanged": "same text as stored: nothing changed",
        "updated": "text replaced (not split yet)",
        "resplit": "re-split",
    }.get(outcome.action, outcome.action)
    if outcome.changes is not None:
        c = outcome.changes
        detail += (
            f": {plural(len(c.changed), 'shot')} changed, {len(c.added)} added, "
            f"{len(c.removed)} removed; the changed shots' frames and clips will be made "
            "again"
        )
    return Change(outcome.number, outcome.title, outcome.action, detail)
