"""The film's tasks in the book's task graph: one assembly per chapter (after its shots' videos),
one for the book; planned in the split's transaction, like the shots' tasks (`graph.py`).

`assembly_specs` reads the book's chapters, shots and video tasks and returns TaskSpecs with
business keys, so calling it again (as every split transaction does) adds nothing. The book's
task is only planned once every chapter is split: a book task created earlier would miss the
chapters split later, and an existing key is never enqueued twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.schema import books, chapters, shots, tasks
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.models import TaskSpec
from pipeline_kit.engine.operator import reset_tasks, set_dependencies
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.film.dialogue import subtitles
from pipeline_kit.film.names import (
    BOOK_KIND,
    CHAPTER_KIND,
    LANE,
    book_film_path,
    book_task_id,
    chapter_film_path,
    chapter_task_id,
)
from pipeline_kit.film.timeline import TITLE_CARD_S, card_frames, frames_for

DEFAULT_SIZE, DEFAULT_FPS = (640, 360), 12


def assembly_specs(conn: sa.Connection, bookcode: str) -> list[TaskSpec]:
    """Chapter assemblies for every split chapter with shots; the book's once all are split."""
    book = conn.execute(sa.select(books.c.title, books.c.lang)
                        .where(books.c.bookcode == bookcode)).first()
    if book is None:
        raise NotFound(f"no book {bookcode!r}")
    chapter_rows = conn.execute(
        sa.select(chapters.c.number, chapters.c.title, chapters.c.split_at)
        .where(chapters.c.bookcode == bookcode).order_by(chapters.c.number)).all()
    by_chapter: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for row in conn.execute(
            sa.select(shots.c.shot_id, shots.c.chapter, shots.c.text, shots.c.dialogue,
                      shots.c.duration_s)
            .where(shots.c.bookcode == bookcode).order_by(shots.c.chapter, shots.c.seq)).mappings():
        by_chapter[row["chapter"]].append(dict(row))
    videos = {r.shot_id: (r.task_id, r.params or {}) for r in conn.execute(
        sa.select(tasks.c.shot_id, tasks.c.task_id, tasks.c.params)
        .where(tasks.c.bookcode == bookcode, tasks.c.kind == "video"))}

    specs = [_chapter_spec(bookcode, ch.number, ch.title, by_chapter[ch.number], videos, book.lang)
             for ch in chapter_rows if ch.split_at is not None and by_chapter[ch.number]]
    if specs and all(ch.split_at is not None for ch in chapter_rows):
        specs.append(_book_spec(bookcode, book.title, specs))
    return specs


def _chapter_spec(bookcode: str, number: int, title: str, rows: list[Mapping[str, Any]],
                  videos: Mapping[str, tuple[str, Mapping[str, Any]]], lang: str) -> TaskSpec:
    missing = [r["shot_id"] for r in rows if r["shot_id"] not in videos]
    if missing:
        raise BadInput(f"shot {missing[0]!r} has no video task: enqueue its tasks first")
    first = videos[rows[0]["shot_id"]][1]
    width = int(first.get("width") or DEFAULT_SIZE[0])
    height = int(first.get("height") or DEFAULT_SIZE[1])
    fps = int(first.get("fps") or DEFAULT_FPS)
    shot_params = [
        {"shot_id": r["shot_id"], "video_task": videos[r["shot_id"]][0],
         "duration_s": float(r["duration_s"]),
         "subtitles": subtitles(r["text"], dialogue=bool(r["dialogue"]), lang=lang)}
        for r in rows
    ]
    params = {"bookcode": bookcode, "chapter": number, "title": title, "shots": shot_params,
              "width": width, "height": height, "fps": fps, "title_card_s": TITLE_CARD_S,
              "burn_subtitles": False, "publish_as": chapter_film_path(bookcode, number)}
    return TaskSpec(task_id=chapter_task_id(bookcode, number), kind=CHAPTER_KIND, lane=LANE,
                    params=params, depends_on=tuple(s["video_task"] for s in shot_params),
                    bookcode=bookcode)


def chapter_duration_s(params: Mapping[str, Any]) -> float:
    """The length of the film a chapter's assembly makes: its title card plus its shots."""
    fps = int(params["fps"])
    frames = card_frames(float(params["title_card_s"]), fps) + sum(
        frames_for(float(s["duration_s"]), fps) for s in params["shots"])
    return frames / fps


def _book_spec(bookcode: str, title: str, chapter_specs: list[TaskSpec]) -> TaskSpec:
    first = dict(chapter_specs[0].params or {})
    entries = [
        {"chapter": p["chapter"], "title": p["title"], "task": spec.task_id,
         "duration_s": round(chapter_duration_s(p), 3)}
        for spec in chapter_specs for p in [dict(spec.params or {})]
    ]
    params = {"bookcode": bookcode, "title": title, "chapters": entries,
              "width": first["width"], "height": first["height"], "fps": first["fps"],
              "title_card_s": TITLE_CARD_S, "publish_as": book_film_path(bookcode)}
    return TaskSpec(task_id=book_task_id(bookcode), kind=BOOK_KIND, lane=LANE, params=params,
                    depends_on=tuple(e["task"] for e in entries), bookcode=bookcode)


def plan_assembly(conn: sa.Connection, bookcode: str) -> tuple[int, list[str]]:
    """Enqueue missing assembly tasks and re-plan stale ones (a re-split changed the shot list).

    A stale task gets the new params and dependencies and is reset (attempts kept), so its
    chapter and the book are assembled again from the current shots. Returns (created, reset).
    """
    # Racing splits of one book plan its films one at a time (the book row lock), so each task is
    # created, and counted, once.
    conn.execute(sa.select(books.c.bookcode).where(books.c.bookcode == bookcode).with_for_update())
    specs = assembly_specs(conn, bookcode)
    stored = {r.task_id: r.params for r in conn.execute(
        sa.select(tasks.c.task_id, tasks.c.params).where(tasks.c.task_id.in_([s.task_id for s in specs])))}
    stale = [s for s in specs if s.task_id in stored and stored[s.task_id] != dict(s.params or {})]
    for spec in stale:
        conn.execute(sa.update(tasks).where(tasks.c.task_id == spec.task_id).values(params=dict(spec.params or {})))
        set_dependencies(conn, spec.task_id, spec.depends_on)
    created = enqueue(conn, [s for s in specs if s.task_id not in stored]).created
    reset = reset_tasks(conn, [s.task_id for s in stale], reason="shots changed") if stale else []
    return created, reset
