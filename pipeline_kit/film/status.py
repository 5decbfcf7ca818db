"""What of a book's film exists and what is still missing: per chapter, clips done and blockers.

A chapter's film can be assembled once every shot's clip (its `video` task) is completed; the
shots whose clip is not are the chapter's blockers. The film paths are the output paths of
completed assembly tasks (where the worker published them).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, chapters, shots, tasks
from pipeline_kit.errors import NotFound
from pipeline_kit.film.names import BOOK_KIND, CHAPTER_KIND, book_task_id, chapter_task_id

DONE = "completed"


@dataclass(frozen=True, kw_only=True)
class Blocker:
    """A shot whose clip is not done; `status` is its video task's (None: no such task)."""

    shot_id: str
    status: str | None


@dataclass(frozen=True, kw_only=True)
class ChapterStatus:
    """One chapter: how many of its shots' clips are done, who blocks it, its film."""

    chapter: int
    title: str
    shots: int
    clips_done: int
    blockers: tuple[Blocker, ...]
    task_id: str
    task_status: str | None   # None: the assembly task is not planned (chapter unsplit)
    film_path: str | None     # set once the chapter's assembly completed

    @property
    def ready(self) -> bool:
        return self.shots > 0 and self.clips_done == self.shots


@dataclass(frozen=True, kw_only=True)
class FilmStatus:
    """A book's film: its chapters, and the book assembly's task and path."""

    bookcode: str
    title: str
    chapters: tuple[ChapterStatus, ...]
    task_id: str
    task_status: str | None
    film_path: str | None

    @property
    def clips_done(self) -> int:
        return sum(c.clips_done for c in self.chapters)

    @property
    def shots(self) -> int:
        return sum(c.shots for c in self.chapters)


def film_status(db: Database, bookcode: str) -> FilmStatus:
    """The book's film status; unknown bookcode -> NotFound."""
    with db.engine.connect() as conn:
        title = conn.execute(sa.select(books.c.title).where(books.c.bookcode == bookcode)).scalar()
        if title is None:
            raise NotFound(f"no book {bookcode!r}")
        chapter_rows = conn.execute(
            sa.select(chapters.c.number, chapters.c.title).where(chapters.c.bookcode == bookcode)
            .order_by(chapters.c.number)).all()
        shot_rows = conn.execute(
            sa.select(shots.c.shot_id, shots.c.chapter).where(shots.c.bookcode == bookcode)
            .order_by(shots.c.chapter, shots.c.seq)).all()
        task_rows = conn.execute(
            sa.select(tasks.c.task_id, tasks.c.shot_id, tasks.c.kind, tasks.c.status,
                      tasks.c.output_path)
            .where(tasks.c.bookcode == bookcode,
                   tasks.c.kind.in_(["video", CHAPTER_KIND, BOOK_KIND]))).all()
    video = {r.shot_id: r.status for r in task_rows if r.kind == "video"}
    assembly = {r.task_id: r for r in task_rows if r.kind != "video"}
    by_chapter: dict[int, list[str]] = defaultdict(list)
    for row in shot_rows:
        by_chapter[row.chapter].append(row.shot_id)
    parts = []
    for ch in chapter_rows:
        ids = by_chapter[ch.number]
        blockers = tuple(Blocker(shot_id=s, status=video.get(s)) for s in ids
                         if video.get(s) != DONE)
        task = assembly.get(chapter_task_id(bookcode, ch.number))
        parts.append(ChapterStatus(
            chapter=ch.number, title=ch.title, shots=len(ids), clips_done=len(ids) - len(blockers),
            blockers=blockers, task_id=chapter_task_id(bookcode, ch.number),
            task_status=task.status if task else None, film_path=_film(task)))
    book = assembly.get(book_task_id(bookcode))
    return FilmStatus(bookcode=bookcode, title=title, chapters=tuple(parts),
                      task_id=book_task_id(bookcode), task_status=book.status if book else None,
                      film_path=_film(book))


def _film(row: sa.Row | None) -> str | None:  # type: ignore[type-arg]
    return row.output_path if row is not None and row.status == DONE else None
