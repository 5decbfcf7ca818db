"""Writes of shots and their tasks, always inside the caller's transaction.

`insert_chapters` stores freshly split chapters; `replace_chapter` re-splits one (ingest
--force): unchanged shots stay, changed ones are rewritten and their tasks reset (attempt history
kept), new ones are added, and shots past the new end are removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.connect import json_text
from pipeline_kit.db.driver import within
from pipeline_kit.db.schema import shots as shots_table
from pipeline_kit.engine.planned import set_params, task_shots
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.operator import cancel_tasks, reset_tasks, set_dependencies
from pipeline_kit.text.film_tasks import plan_assembly
from pipeline_kit.text.graph import (
    FRAMES,
    frame_dependencies,
    place_task_id,
    sheet_spec,
    shot_params,
    shot_specs,
    shot_task_ids,
)
from pipeline_kit.text.direct import Direction
from pipeline_kit.text.voices import book_voices, restate_voices
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


def insert_chapters(
    conn: sa.Connection, made: list[ChapterShots], lang: str, direction: Direction | None = None
) -> int:
    """Insert the chapters' shots and enqueue their tasks in one call; returns the tasks created."""
    insert_shots(conn, [s for m in made for s in m.shots])
    return enqueue_tasks(conn, made, lang, [s for m in made for s in m.shots], direction)


def insert_shots(conn: sa.Connection, shots: list[Shot]) -> None:
    """Store new shots, through the driver: SQLAlchemy's processing of each of a book's 6,000
    rows cost more than the insert. The JSON columns are encoded as SQLAlchemy encodes them."""
    if not shots:
        return
    rows = [s.to_row() for s in shots]
    for row in rows:
        row["characters"] = json_text(row["characters"])
        row["inferred"] = None if row["inferred"] is None else json_text(row["inferred"])
    columns = list(rows[0])
    sql = f"INSERT INTO shots ({', '.join(columns)}) VALUES ({', '.join(f':{c}' for c in columns)})"
    with within(conn, conn.dialect.name) as tx:
        tx.many(sql, rows)


def enqueue_tasks(
    conn: sa.Connection,
    made: list[ChapterShots],
    lang: str,
    selected: Iterable[Shot],
    direction: Direction | None = None,
) -> int:
    """Enqueue sheets for the chapters' characters (first description wins) and the `selected` shots' tasks
    (after their director tasks, with a `direction`)."""
    prompts: dict[tuple[str, str, str], str] = {}
    for m in made:
        for kind, named in (("character_sheet", m.sheet_prompts), ("location_sheet", m.place_prompts)):
            for name, prompt in named.items():
                prompts.setdefault((kind, m.shots[0].bookcode, name), prompt)
    specs = [sheet_spec(bookcode, name, prompt, kind) for (kind, bookcode, name), prompt in prompts.items()]
    selected = list(selected)
    placed = {(b, n) for k, b, n in prompts if k == "location_sheet"} | _place_sheets(conn, selected)
    voices = {
        b: book_voices(conn, b, {s.chapter for s in selected if s.bookcode == b})
        for b in {s.bookcode for s in selected}
    }
    for shot in selected:
        specs.extend(shot_specs(shot, lang, (shot.bookcode, shot.location) in placed, voices[shot.bookcode]))
    if direction is not None:
        specs = direction.specs(made, specs)
    return enqueue(conn, specs).created


def replace_chapter(
    conn: sa.Connection, made: ChapterShots, lang: str, *, bookcode: str, chapter: int, reason: str
) -> ShotChanges:
    """Bring a split chapter's shots to `made`, touching only the shots that differ."""
    old = {
        r["shot_id"]: Shot.from_row(r)
        for r in conn.execute(
            sa.select(shots_table).where(shots_table.c.bookcode == bookcode, shots_table.c.chapter == chapter)
        ).mappings()
    }
    new = {s.shot_id: s for s in made.shots}
    changed = [s for sid, s in new.items() if sid in old and old[sid] != s]
    added = [s for sid, s in new.items() if sid not in old]
    removed = sorted(set(old) - set(new))
    if removed:  # their tasks stop; attempts stay on record
        cancel_tasks(conn, [t for sid in removed for t in shot_task_ids(sid).values()], reason=reason)
        conn.execute(sa.delete(shots_table).where(shots_table.c.shot_id.in_(removed)))
    insert_shots(conn, added)
    enqueue_tasks(conn, [made], lang, added)  # also the sheets of characters new to changed shots
    for shot in changed:
        conn.execute(sa.update(shots_table).where(shots_table.c.shot_id == shot.shot_id).values(**shot.to_row()))
        update_task_params(conn, shot, lang)
    reset = reset_shot_tasks(conn, [s.shot_id for s in changed], reason) if changed else []
    reset += [t for t in plan_assembly(conn, bookcode, {chapter}).reset if t not in reset]
    return ShotChanges(tuple(s.shot_id for s in changed), tuple(s.shot_id for s in added), tuple(removed), tuple(reset))


def update_task_params(conn: sa.Connection, shot: Shot, lang: str) -> None:
    """Rewrite the params of the shot's picture tasks, and what its frames are drawn from, to
    match the shot (its voice follows in `reset_shot_tasks`)."""
    ids = shot_task_ids(shot.shot_id)
    placed = bool(_place_sheets(conn, [shot]))
    for kind, params in shot_params(shot, lang, placed).items():
        if kind != "voice":  # rewritten by reset_shot_tasks, only if what the shot says changed
            set_params(conn, ids[kind], params)
    for kind in FRAMES:
        set_dependencies(conn, ids[kind], frame_dependencies(shot, kind, placed))


def _place_sheets(conn: sa.Connection, shots: Iterable[Shot]) -> set[tuple[str, str]]:
    """(bookcode, place) of the shots' places that have a location sheet task already."""
    wanted = {place_task_id(s.bookcode, s.location): (s.bookcode, s.location) for s in shots if s.location}
    found: set[tuple[str, str]] = set()
    keys = list(wanted)
    for i in range(0, len(keys), _CHUNK):
        chunk = keys[i : i + _CHUNK]
        found |= {wanted[t] for t in task_shots(conn, chunk)}
    return found


def reset_shot_tasks(conn: sa.Connection, shot_ids: list[str], reason: str) -> list[str]:
    """Reset the shots' picture tasks, and their voices whose lines changed (rewritten to the
    shots as they now are), with their dependents to pending (the engine keeps attempt history)."""
    task_ids = [tid for sid in shot_ids for kind, tid in shot_task_ids(sid).items() if kind != "voice"]
    task_ids += restate_voices(conn, shot_ids)
    present: list[str] = []
    for i in range(0, len(task_ids), _CHUNK):
        chunk = task_ids[i : i + _CHUNK]
        present += task_shots(conn, chunk)
    return list(reset_tasks(conn, sorted(present), reason=reason)) if present else []
