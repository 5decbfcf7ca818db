"""A book's film settings as stored: its film profile (books.film_profile) and the music bed under
its films (books.music, and the book's `music` task that carries the file to every PC).

A change re-plans the book's films in the same transaction (`film_tasks.plan_assembly`): films
already made are re-opened, with the reason, and made again at the new picture or with the new
music; a setting that did not change re-opens nothing.
"""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.lanes import seed_lanes
from pipeline_kit.engine.models import TaskSpec
from pipeline_kit.engine.operator import reset_tasks
from pipeline_kit.engine.planned import set_params, task_params
from pipeline_kit.film.names import MUSIC_KIND, MUSIC_LANE, music_task_id
from pipeline_kit.film.profile import parse_profile
from pipeline_kit.text.film_tasks import AssemblyPlan, plan_assembly
from pipeline_kit.text.records import lock_book


def set_film_profile(db: Database, bookcode: str, profile: str) -> AssemblyPlan:
    """Store the book's film profile (parsed first: a bad one is BadInput and changes nothing)
    and re-plan its films."""
    chosen = parse_profile(profile)
    with db.engine.begin() as conn:
        lock_book(conn, bookcode)
        conn.execute(sa.update(books).where(books.c.bookcode == bookcode).values(film_profile=chosen.name))
        return plan_assembly(conn, bookcode)


def set_music(db: Database, bookcode: str, sha256: str | None, name: str = "") -> AssemblyPlan:
    """Put the music whose file has `sha256` under the book's films (None: take it off): its
    `music` task is planned (or re-planned for another file, which re-opens the films through
    it), then the films are re-planned. The task waits in the music lane, which no worker serves
    by default: `film --music` makes it on the PC that has the file."""
    task_id = music_task_id(bookcode)
    with db.engine.begin() as conn:
        lock_book(conn, bookcode)
        if sha256 is not None:
            seed_lanes(conn)  # a database made before the music lane was a default gets it now
            params = {"sha256": sha256, "name": name}
            stored = task_params(conn, [task_id]).get(task_id)
            if stored is None:
                enqueue(
                    conn,
                    [TaskSpec(task_id=task_id, kind=MUSIC_KIND, lane=MUSIC_LANE, params=params, bookcode=bookcode)],
                )
            elif stored != params:
                set_params(conn, task_id, params)
                reset_tasks(conn, [task_id], reason=f"the music is now {name}")
        conn.execute(sa.update(books).where(books.c.bookcode == bookcode).values(music=sha256))
        return plan_assembly(conn, bookcode)
