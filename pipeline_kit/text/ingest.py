"""Ingest a book (or one chapter of it) into the database, in one transaction.

An unchanged chapter is a no-op. A changed chapter that was never split is updated; one that was
split is refused unless `force`, which re-splits just that chapter and says which shots changed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from tqdm import tqdm

from pipeline_kit import fonts
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, chapters
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.errors import BadInput, PipelineKitError
from pipeline_kit.text.castdb import load_bible, refresh_appearances
from pipeline_kit.text.bookcode import make_bookcode, normalise_title
from pipeline_kit.text.chapters import Found, find_chapters, one_chapter
from pipeline_kit.text.decode import read_book
from pipeline_kit.text.lang import check_lang, detect_lang
from pipeline_kit.text.prompts import Templates
from pipeline_kit.text.direct import redirect
from pipeline_kit.text.records import Book
from pipeline_kit.text.split import PROGRESS_MIN_CHAPTERS, chapter_shots
from pipeline_kit.text.splitter import ChapterShots, RuleSplitter, Splitter
from pipeline_kit.text.store import ShotChanges, replace_chapter

MAX_CHAPTER = 100_000


@dataclass(frozen=True)
class ChapterOutcome:
    """What ingest did to one chapter: added, unchanged, updated (not yet split) or resplit."""

    number: int
    title: str
    action: str
    changes: ShotChanges | None = None


@dataclass(frozen=True)
class IngestReport:
    """The book ingested and what happened to each of its chapters in this file."""

    bookcode: str
    title: str
    lang: str
    encoding: str
    chapters: tuple[ChapterOutcome, ...]
    warnings: tuple[str, ...]

    def count(self, action: str) -> int:
        return sum(c.action == action for c in self.chapters)


def ingest_file(
    db: Database,
    path: str | Path,
    title: str,
    lang: str | None = None,
    chapter: int | None = None,
    force: bool = False,
    *,
    splitter: Splitter | None = None,
    templates: Templates | None = None,
    progress: bool | None = None,
) -> IngestReport:
    """Read `path` (UTF-8/UTF-16/GB18030) and ingest it; see `ingest_text`."""
    decoded = read_book(path)
    return ingest_text(
        db,
        decoded.text,
        title,
        lang,
        chapter,
        force,
        encoding=decoded.encoding,
        splitter=splitter,
        templates=templates,
        progress=progress,
    )


def ingest_text(
    db: Database,
    text: str,
    title: str,
    lang: str | None = None,
    chapter: int | None = None,
    force: bool = False,
    *,
    encoding: str = "text",
    splitter: Splitter | None = None,
    templates: Templates | None = None,
    progress: bool | None = None,
) -> IngestReport:
    """Store the book's chapters (or, with `chapter`, that one chapter) under the title's bookcode."""
    title = normalise_title(title)
    if lang is not None:
        check_lang(lang)
    if chapter is not None and not 1 <= chapter <= MAX_CHAPTER:
        raise BadInput(f"--chapter must be from 1 to {MAX_CHAPTER}, got {chapter}")
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise BadInput("the text is empty: nothing to ingest")
    found: Found = one_chapter(text, chapter) if chapter else find_chapters(text, title)
    numbers = [chapter] if chapter else list(range(1, len(found.chapters) + 1))
    bookcode = make_bookcode(title)

    with db.reading() as conn:
        snapshot = _state(conn, bookcode)
        conn.rollback()
    stored_lang = snapshot.book_lang
    if stored_lang and lang and lang != stored_lang:
        raise BadInput(f"book {bookcode} is stored as {stored_lang!r}; it cannot be re-ingested as {lang!r}")
    detected = detect_lang(text)  # a text in a language the rules cannot read is refused, whatever --lang says
    book = Book(bookcode, title, stored_lang or lang or detected)

    plans: list[tuple[int, str, str, str, str, ChapterShots | None]] = []  # number, title, text, sum, action, shots
    for number, raw in zip(numbers, found.chapters):
        checksum = hashlib.sha256(raw.text.encode()).hexdigest()
        old = snapshot.chapters.get(number)
        if old is None:
            plans.append((number, raw.title, raw.text, checksum, "added", None))
        elif old[0] == checksum:
            plans.append((number, raw.title, raw.text, checksum, "unchanged", None))
        elif old[1] is None:
            plans.append((number, raw.title, raw.text, checksum, "updated", None))
        elif not force:
            raise BadInput(
                f"chapter {number} of {bookcode} changed since it was split; "
                "re-ingest with --force to re-split it (its changed shots are reset)"
            )
        else:
            plans.append((number, raw.title, raw.text, checksum, "resplit", None))
    splitter = splitter or RuleSplitter()
    templates = templates or Templates.load()
    bible = None
    if any(a == "resplit" for *_, a, _ in plans):
        with db.reading() as conn:
            bible = load_bible(conn, book)
    plans = [
        (n, t, body, s, a, chapter_shots(book, n, body, splitter, templates, bible) if a == "resplit" else None)
        for n, t, body, s, a, _ in plans
    ]

    warnings = list(found.warnings)
    no_font = fonts.missing_warning([book.lang])  # said here, once, rather than per frame
    if no_font:
        warnings.append(no_font)
    if not chapter and snapshot.chapters and max(snapshot.chapters) > len(numbers):
        warnings.append(
            f"the book holds chapters up to {max(snapshot.chapters)}; this file has {len(numbers)} "
            "(the others are kept)"
        )
    waiting = [n for n, *_, a, _ in plans if a in ("added", "updated")]
    if waiting and any(split_at is not None for _, split_at in snapshot.chapters.values()):
        warnings.append(
            f"chapter {', '.join(map(str, waiting))} not split yet: `pipeline-kit split {bookcode}` plans its shots "
            "and film and re-plans the book's film over every chapter (the book's film is out of date until then)"
        )
    outcomes: list[ChapterOutcome] = []
    show = progress if progress is not None else len(plans) >= PROGRESS_MIN_CHAPTERS
    with db.engine.begin() as conn:
        if _state(conn, bookcode) != snapshot:
            raise PipelineKitError(f"book {bookcode} changed while it was being ingested: run the ingest again")
        if snapshot.book_lang is None:
            conn.execute(
                sa.insert(books).values(
                    bookcode=bookcode, title=title, lang=book.lang, created_at=db_now(), review=False
                )
            )
        for number, ch_title, body, checksum, action, made in tqdm(
            plans, desc=f"ingest {bookcode}", unit="ch", disable=not show
        ):
            changes = _write(conn, book, number, ch_title, body, checksum, action, made, splitter.version)
            outcomes.append(ChapterOutcome(number, ch_title, action, changes))
    return IngestReport(bookcode, title, book.lang, encoding, tuple(outcomes), tuple(warnings))


@dataclass(frozen=True)
class _Snapshot:
    book_lang: str | None
    chapters: dict[int, tuple[str, object]]  # number -> (checksum, split_at)


def _state(conn: sa.Connection, bookcode: str) -> _Snapshot:
    lang = conn.execute(sa.select(books.c.lang).where(books.c.bookcode == bookcode)).scalar()
    rows = conn.execute(
        sa.select(chapters.c.number, chapters.c.checksum, chapters.c.split_at).where(chapters.c.bookcode == bookcode)
    )
    return _Snapshot(lang, {r.number: (r.checksum, r.split_at) for r in rows})


def _write(
    conn: sa.Connection,
    book: Book,
    number: int,
    title: str,
    body: str,
    checksum: str,
    action: str,
    made: ChapterShots | None,
    version: str,
) -> ShotChanges | None:
    key = (chapters.c.bookcode == book.bookcode, chapters.c.number == number)
    if action == "added":
        conn.execute(
            sa.insert(chapters).values(
                bookcode=book.bookcode, number=number, title=title[:500], text=body, checksum=checksum
            )
        )
    elif action == "updated":
        conn.execute(sa.update(chapters).where(*key).values(title=title[:500], text=body, checksum=checksum))
    elif action == "resplit" and made is not None:
        conn.execute(
            sa.update(chapters)
            .where(*key)
            .values(title=title[:500], text=body, checksum=checksum, split_at=db_now(), splitter_version=version)
        )
        changes = replace_chapter(
            conn,
            made,
            book.lang,
            bookcode=book.bookcode,
            chapter=number,
            reason=f"chapter {number} re-ingested with --force",
        )
        redo = {*changes.changed, *changes.added}
        redirect(conn, book, [s for s in made.shots if s.shot_id in redo], load_bible(conn, book))
        refresh_appearances(conn, book.bookcode)
        return changes
    return None
