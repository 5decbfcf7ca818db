"""What of a book's film exists and what is still missing: per chapter, clips done and blockers.

A chapter's film can be assembled once every shot's clip (its `video` task) is completed; the
shots whose clip is not are the chapter's blockers. The film paths are the output paths of
completed assembly tasks (where the worker published them).

A film is out of date when it does not cover the book as it is now: a chapter was added and is
not split yet, or is not in the book film's plan, or the film was made and then re-opened (a
chapter added, a chapter re-split, a shot edited: the reset's reason says which). `out_of_date`
lists why, empty once the film is made again from the current shots.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit import kinds
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, chapters, shots
from pipeline_kit.engine.planned import task_params
from pipeline_kit.engine.queries import TaskOutput, find_tasks, reopened, tasks_by_id
from pipeline_kit.engine.states import Status
from pipeline_kit.errors import NotFound
from pipeline_kit.film.names import book_task_id, chapter_task_id, music_task_id
from pipeline_kit.film.profile import parse_profile

DONE = Status.COMPLETED
CLIPS = kinds.names(kinds.Role.CLIP)  # a shot's clip: what a chapter's film is made of


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
    split: bool
    shots: int
    clips_done: int
    blockers: tuple[Blocker, ...]
    task_id: str
    task_status: str | None  # None: the assembly task is not planned (chapter unsplit, or no shots)
    film_path: str | None  # set once the chapter's assembly completed
    out_of_date: tuple[str, ...] = ()  # why the film made or planned does not match the chapter now

    @property
    def ready(self) -> bool:
        return self.shots > 0 and self.clips_done == self.shots

    @property
    def state(self) -> str:
        """The film's path once made, else its task's status, else why it is not planned."""
        if self.film_path or self.task_status:
            return str(self.film_path or self.task_status)
        if not self.split:
            return "not planned (chapter not split yet: run split)"
        return "nothing to film (no shots)" if not self.shots else "not planned (run split again)"


@dataclass(frozen=True, kw_only=True)
class FilmStatus:
    """A book's film: its chapters, and the book assembly's task and path."""

    bookcode: str
    title: str
    chapters: tuple[ChapterStatus, ...]
    task_id: str
    task_status: str | None
    film_path: str | None
    out_of_date: tuple[str, ...] = ()  # why the book's film made or planned does not cover the book now
    profile: str = ""  # the film profile, in words (film/profile.py)
    music: str | None = None  # the music bed's file and its task's status; None: no music

    @property
    def state(self) -> str:
        """The film's path once made, else its task's status, else why it is not planned."""
        if self.film_path or self.task_status:
            return str(self.film_path or self.task_status)
        unsplit = [c.chapter for c in self.chapters if not c.split]
        return f"not planned (chapter {unsplit[0]} not split yet: run split)" if unsplit else "not planned"

    @property
    def clips_done(self) -> int:
        return sum(c.clips_done for c in self.chapters)

    @property
    def shots(self) -> int:
        return sum(c.shots for c in self.chapters)


def film_status(db: Database, bookcode: str) -> FilmStatus:
    """The book's film status; unknown bookcode -> NotFound."""
    with db.reading() as conn:
        book_row = conn.execute(
            sa.select(books.c.title, books.c.film_profile, books.c.music).where(books.c.bookcode == bookcode)
        ).first()
        if book_row is None:
            raise NotFound(f"no book {bookcode!r}")
        title = book_row.title
        bed = next(iter(tasks_by_id(conn, [music_task_id(bookcode)])), None)
        bed_params = task_params(conn, [bed.task_id]).get(bed.task_id, {}) if bed else {}
        chapter_rows = conn.execute(
            sa.select(chapters.c.number, chapters.c.title, chapters.c.split_at)
            .where(chapters.c.bookcode == bookcode)
            .order_by(chapters.c.number)
        ).all()
        shot_rows = conn.execute(
            sa.select(shots.c.shot_id, shots.c.chapter)
            .where(shots.c.bookcode == bookcode)
            .order_by(shots.c.chapter, shots.c.seq)
        ).all()
        task_rows = find_tasks(conn, bookcode=bookcode, kinds=(*CLIPS, *kinds.names(kinds.Role.FILM)))
        assembly = {r.task_id: r for r in task_rows if r.kind not in CLIPS}
        planned = task_params(conn, assembly)
        remade = reopened(conn, [t for t, r in assembly.items() if r.status is not DONE])
    video = {r.shot_id: r.status.value for r in task_rows if r.kind in CLIPS}
    by_chapter: dict[int, list[str]] = defaultdict(list)
    for row in shot_rows:
        by_chapter[row.chapter].append(row.shot_id)
    parts = []
    for ch in chapter_rows:
        ids = by_chapter[ch.number]
        blockers = tuple(Blocker(shot_id=s, status=video.get(s)) for s in ids if video.get(s) != DONE.value)
        task = assembly.get(chapter_task_id(bookcode, ch.number))
        parts.append(
            ChapterStatus(
                chapter=ch.number,
                title=ch.title,
                split=ch.split_at is not None,
                shots=len(ids),
                clips_done=len(ids) - len(blockers),
                blockers=blockers,
                task_id=chapter_task_id(bookcode, ch.number),
                task_status=task.status.value if task else None,
                film_path=_film(task),
                out_of_date=_chapter_stale(task, planned, ids, remade) if task else (),
            )
        )
    book = assembly.get(book_task_id(bookcode))
    return FilmStatus(
        bookcode=bookcode,
        title=title,
        chapters=tuple(parts),
        task_id=book_task_id(bookcode),
        task_status=book.status.value if book else None,
        film_path=_film(book),
        out_of_date=_book_stale(book, planned, parts, remade) if book else (),
        profile=parse_profile(book_row.film_profile).describe(),
        music=f"{bed_params.get('name') or 'a file'} ({bed.status.value})" if book_row.music and bed else None,
    )


def _chapter_stale(
    task: TaskOutput, planned: Mapping[str, Mapping[str, Any]], shot_ids: list[str], remade: Mapping[str, str]
) -> tuple[str, ...]:
    shots_planned = [s["shot_id"] for s in planned.get(task.task_id, {}).get("shots") or []]
    found = ["planned over other shots than the chapter has now (run split)"] if shots_planned != shot_ids else []
    return (*found, *_made_earlier(task, remade))


def _book_stale(
    task: TaskOutput, planned: Mapping[str, Mapping[str, Any]], parts: list[ChapterStatus], remade: Mapping[str, str]
) -> tuple[str, ...]:
    chapters_planned = {int(c["chapter"]) for c in planned.get(task.task_id, {}).get("chapters") or []}
    found = [f"chapter {c.chapter} is not split yet (run split)" for c in parts if not c.split]
    found += [
        f"chapter {c.chapter} is not in it (run split)" for c in parts if c.shots and c.chapter not in chapters_planned
    ]
    found += [
        f"chapter {n} has no shots now (run split)"
        for n in sorted(chapters_planned - {c.chapter for c in parts if c.shots})
    ]
    return (*found, *_made_earlier(task, remade))


def _made_earlier(task: TaskOutput, remade: Mapping[str, str]) -> tuple[str, ...]:
    reason = remade.get(task.task_id)
    return (f"made before: {reason}",) if reason else ()


def _film(row: TaskOutput | None) -> str | None:
    return row.output_path if row is not None and row.status is DONE else None
