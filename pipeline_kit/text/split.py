"""`split_book`: every chapter not yet split becomes shots and tasks.

The slow part (splitting) runs outside any transaction. Chapters are then written in batches of
about a thousand shots, one transaction each: each chapter's shots and tasks go in together with
its claim, which sets `chapters.split_at` where it is still NULL and the text is the one that
was split: that guarded update is the lock, so a second or concurrent run creates nothing. The
same transaction plans the chapters' films and re-plans the book's, so a chapter that comes after
a split (and after films were made) is filmed and joins the book's film.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from tqdm import tqdm

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import chapters
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.text.cast import Bible, ChapterCast, build_bible, cast_drafts
from pipeline_kit.text.castdb import load_characters, refresh_appearances, save_bible
from pipeline_kit.text.direct import Direction, DirectorSettings, book_director
from pipeline_kit.text.names import book_mentions
from pipeline_kit.text.placesdb import load_places, save_places
from pipeline_kit.text.refold import follow_bible
from pipeline_kit.text.prompts import Templates
from pipeline_kit.text.records import Book, get_book, lock_book
from pipeline_kit.text.splitter import ChapterShots, RuleSplitter, Splitter, build_shots
from pipeline_kit.text.film_tasks import AssemblyPlan, plan_assembly
from pipeline_kit.text.store import insert_chapters

PROGRESS_MIN_CHAPTERS = 5
BATCH_SHOTS = 1000  # chapters are written together until this many shots: fewer, larger transactions


@dataclass(frozen=True)
class SplitReport:
    """What one split run did."""

    bookcode: str
    chapters_split: int
    chapters_already_split: int
    shots_created: int
    tasks_created: int
    films_replanned: tuple[str, ...] = ()  # why films made (or being made) were re-planned and reset
    recast: tuple[str, ...] = ()  # tasks of earlier shots made again because the re-folded bible re-cast them


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a split: the hundreds of thousands of objects a
    book's shots and tasks are built from live until it ends, and scanning them again and again
    cost 8% of 西游记's split (its peak memory is the same without)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@_collector_paused()
def split_book(
    db: Database,
    bookcode: str,
    *,
    splitter: Splitter | None = None,
    templates: Templates | None = None,
    progress: bool | None = None,
    director: DirectorSettings | None = None,
) -> SplitReport:
    """Split every unsplit chapter of the book into shots and enqueue their tasks (after a chat
    model's director tasks, with `director`)."""
    splitter = splitter or RuleSplitter()
    templates = templates or Templates.load()
    with db.reading() as conn:
        book = get_book(conn, bookcode)
        rows = conn.execute(
            sa.select(chapters.c.number, chapters.c.text, chapters.c.checksum, chapters.c.split_at)
            .where(chapters.c.bookcode == bookcode)
            .order_by(chapters.c.number)
        ).all()
        conn.rollback()
    todo = [r for r in rows if r.split_at is None]
    bible = book_bible(db, book, [r.text for r in rows]) if todo else None
    if director is None and todo:  # a book once directed keeps its director for chapters that come later
        with db.reading() as conn:
            director = book_director(conn, bookcode)
    earlier = [r.number for r in rows if r.split_at is not None]
    recast: list[str] = []
    if bible is not None and earlier:  # the bible was folded again: earlier shots follow it
        with db.engine.begin() as conn:
            lock_book(conn, bookcode)
            recast = follow_bible(conn, book, bible, templates, earlier)
    direction = Direction(book, bible, [r.text for r in rows], director) if director and todo else None
    done = shots_created = tasks_created = 0
    replanned: list[str] = []
    show = progress if progress is not None else len(todo) >= PROGRESS_MIN_CHAPTERS
    batch: list[tuple[sa.Row[Any], ChapterShots]] = []
    for k, row in enumerate(tqdm(todo, desc=f"split {bookcode}", unit="ch", disable=not show)):
        batch.append((row, chapter_shots(book, row.number, row.text, splitter, templates, bible)))
        if k + 1 < len(todo) and sum(len(m.shots) for _, m in batch) < BATCH_SHOTS:
            continue
        with db.engine.begin() as conn:
            lock_book(conn, bookcode)
            # A chapter split meanwhile by another run, or re-ingested since it was read, is left alone.
            claimed = [
                (r.number, m) for r, m in batch if claim_chapter(conn, bookcode, r.number, r.checksum, splitter.version)
            ]
            tasks_created += insert_chapters(conn, [m for _, m in claimed], book.lang, direction)
            plan = plan_films(conn, bookcode, {n for n, _ in claimed}, last=k + 1 == len(todo))
        tasks_created += plan.created
        replanned += plan.why
        done += len(claimed)
        shots_created += sum(len(m.shots) for _, m in claimed)
        batch = []
    if not todo:  # nothing to split: still plan what an interrupted run left unplanned
        with db.engine.begin() as conn:
            plan = plan_films(conn, bookcode, None, last=True)
        tasks_created += plan.created
        replanned += plan.why
    return SplitReport(bookcode, done, len(rows) - done, shots_created, tasks_created, tuple(replanned), tuple(recast))


def plan_films(conn: sa.Connection, bookcode: str, written: set[int] | None, *, last: bool) -> AssemblyPlan:
    """In the transaction that wrote the `written` chapters' shots (None: look at every chapter):
    their films and, once every chapter is split, the book's, re-planned over every chapter; with
    the `last` chapters of a run, the cast's first and last shots over all of them."""
    plan = plan_assembly(conn, bookcode, written)
    if last:
        refresh_appearances(conn, bookcode)
    return plan


def book_bible(db: Database, book: Book, texts: list[str]) -> Bible:
    """The book's character and place bibles built afresh from all its chapters (what a person
    fixed is kept) and stored; each character's appearances re-counted over every split shot."""
    with db.reading() as conn:
        fixed = [c for c in load_characters(conn, book.bookcode) if c.locked or c.dropped]
        fixed_places = [p for p in load_places(conn, book.bookcode) if p.locked or p.dropped]
    found = book_mentions(texts, book.lang)
    bible = build_bible(texts, book.lang, fixed, mentions=found, fixed_places=fixed_places)
    with db.engine.begin() as conn:
        save_bible(conn, book.bookcode, bible)
        save_places(conn, book.bookcode, bible.places)
        refresh_appearances(conn, book.bookcode)  # the shots of chapters split before still name them
    return bible


def chapter_shots(
    book: Book, number: int, text: str, splitter: Splitter, templates: Templates, bible: Bible | None = None
) -> ChapterShots:
    """The chapter's shots as the splitter cuts them, with ids and prompts; characters as the bible names them."""
    drafts = splitter.split(text, book.lang)
    reading = ChapterCast.read(text, bible, drafts) if bible is not None else None  # the cast and prompts' one
    if bible is not None:
        drafts = cast_drafts(text, drafts, bible, reading)
    return build_shots(
        bookcode=book.bookcode,
        title=book.title,
        lang=book.lang,
        chapter=number,
        text=text,
        drafts=drafts,
        templates=templates,
        bible=bible,
        style=book.style,
        reading=reading,
    )


def claim_chapter(conn: sa.Connection, bookcode: str, number: int, checksum: str, version: str) -> bool:
    """Set the chapter's split lock if it is unsplit and unchanged; False if another got there first."""
    result = conn.execute(
        sa.update(chapters)
        .where(
            chapters.c.bookcode == bookcode,
            chapters.c.number == number,
            chapters.c.split_at.is_(None),
            chapters.c.checksum == checksum,
        )
        .values(split_at=db_now(), splitter_version=version)
    )
    return result.rowcount == 1
