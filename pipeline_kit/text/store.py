"""Writes of shots and their tasks, always inside the caller's transaction.

`insert_chapters` stores freshly split chapters; `replace_chapter` re-splits one (ingest
--force): unchanged shots stay, changed ones are rewritten and their tasks reset (attempt history
kept), new ones are added, and shots past the new end are removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.schema import shots as shots_table
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.operator import cancel_tasks, reset_tasks, set_dependencies
from pipeline_kit.text.film_tasks import plan_assembly
from pipeline_kit.text.graph import FRAMES, sheet_spec, sheet_task_id, shot_params, shot_specs, shot_task_ids
from pipeline_kit.text.direct import Direction
from pipeline_kit.text.records import Shot
from pipeline_kit.text.splitter import ChapterShots

_CHUNK = 500


@dataclass(frozen=True)
class ShotChanges:
    """What a re-split did to one chapter's shots (ids)."""

    changed: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    reset_tasks: tuple[str, ...]


def insert_chapters(conn: sa.Connection, made: list[ChapterShots], lang: str,
                    direction: Direction | None = None) -> int:
    """Insert the chapters' shots and enqueue their tasks in one call; returns the tasks created."""
    rows = [s.to_row() for m in made for s in m.shots]
    if rows:
        conn.execute(sa.insert(shots_table), rows)
    return enqueue_tasks(conn, made, lang, [s for m in made for s in m.shots], direction)


def enqueue_tasks(conn: sa.Connection, made: list[ChapterShots], lang: str, selected: Iterable[Shot],
                  direction: Direction | None = None) -> int:
    """Enqueue sheets for the chapters' characters (first description wins) and the `selected` shots' tasks
    (after their director tasks, with a `direction`)."""
    prompts: dict[tuple[str, str], str] = {}
    for m in made:
        for name, prompt in m.sheet_prompts.items():
            prompts.setdefault((m.shots[0].bookcode, name), prompt)
    specs = [sheet_spec(bookcode, name, prompt) for (bookcode, name), prompt in prompts.items()]
    for shot in selected:
        specs.extend(shot_specs(shot, lang))
    if direction is not None:
        specs = direction.specs(made, specs)
    return enqueue(conn, specs).created


def replace_chapter(conn: sa.Connection, made: ChapterShots, lang: str, *, bookcode: str, chapter: int,
                    reason: str) -> ShotChanges:
    """Bring a split chapter's shots to `made`, touching only the shots that differ."""
    old = {
        r["shot_id"]: Shot.from_row(r)
        for r in conn.execute(sa.select(shots_table).where(
            shots_table.c.bookcode == bookcode, shots_table.c.chapter == chapter)).mappings()
    }
    new = {s.shot_id: s for s in made.shots}
    changed = [s for sid, s in new.items() if sid in old and old[sid] != s]
    added = [s for sid, s in new.items() if sid not in old]
    removed = sorted(set(old) - set(new))
    if removed:  # their tasks stop; attempts stay on record
        cancel_tasks(conn, [t for sid in removed for t in shot_task_ids(sid).values()], reason=reason)
        conn.execute(sa.delete(shots_table).where(shots_table.c.shot_id.in_(removed)))
    if added:
        conn.execute(sa.insert(shots_table), [s.to_row() for s in added])
    enqueue_tasks(conn, [made], lang, added)  # also the sheets of characters new to changed shots
    for shot in changed:
        conn.execute(sa.update(shots_table).where(shots_table.c.shot_id == shot.shot_id).values(**shot.to_row()))
        update_task_params(conn, shot, lang)
    reset = reset_shot_tasks(conn, [s.shot_id for s in changed], reason) if changed else []
    reset += [t for t in plan_assembly(conn, bookcode)[1] if t not in reset]
    return ShotChanges(tuple(s.shot_id for s in changed), tuple(s.shot_id for s in added), tuple(removed),
                       tuple(reset))


def update_task_params(conn: sa.Connection, shot: Shot, lang: str) -> None:
    """Rewrite the params of the shot's three tasks, and its frames' sheet dependencies, to match the shot."""
    ids = shot_task_ids(shot.shot_id)
    for kind, params in shot_params(shot, lang).items():
        conn.execute(sa.update(tasks).where(tasks.c.task_id == ids[kind]).values(params=params))
    sheets = [sheet_task_id(shot.bookcode, name) for name in shot.characters]
    for kind in FRAMES:
        set_dependencies(conn, ids[kind], sheets)


def reset_shot_tasks(conn: sa.Connection, shot_ids: list[str], reason: str) -> list[str]:
    """Reset the shots' tasks and their dependents to pending (the engine keeps attempt history)."""
    task_ids = [tid for sid in shot_ids for tid in shot_task_ids(sid).values()]
    present: list[str] = []
    for i in range(0, len(task_ids), _CHUNK):
        chunk = task_ids[i : i + _CHUNK]
        present += conn.execute(sa.select(tasks.c.task_id).where(tasks.c.task_id.in_(chunk))).scalars().all()
    return list(reset_tasks(conn, sorted(present), reason=reason)) if present else []
