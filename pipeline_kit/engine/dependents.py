"""Walking the dependency graph: who waits on whom, blocking and unblocking dependents (counting
a completion off them is db/finishes.py's `count_off`)."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from pipeline_kit.db.schema import task_deps, tasks
from pipeline_kit.engine.states import DEAD_ENDS, Status

_CHUNK = 500


def transitive_dependents(conn: sa.Connection, roots: Iterable[str]) -> list[str]:
    """Every task that waits, directly or not, on one of `roots` (roots excluded), breadth first."""
    seen: set[str] = set(roots)
    order: list[str] = []
    frontier = list(seen)
    while frontier:
        found: list[str] = []
        for i in range(0, len(frontier), _CHUNK):
            chunk = frontier[i : i + _CHUNK]
            found += conn.execute(
                sa.select(task_deps.c.task_id).where(task_deps.c.depends_on.in_(chunk))
            ).scalars().all()
        frontier = [t for t in dict.fromkeys(found) if t not in seen]
        seen.update(frontier)
        order += frontier
    return order


def block_dependents(conn: sa.Connection, failed: Iterable[str]) -> list[str]:
    """Mark waiting dependents of tasks that can no longer finish as blocked."""
    waiting = transitive_dependents(conn, failed)
    if waiting:
        conn.execute(
            sa.update(tasks)
            .where(tasks.c.task_id.in_(waiting), tasks.c.status == Status.PENDING.value)
            .values(status=Status.BLOCKED.value)
        )
    return waiting


def unblock_dependents(conn: sa.Connection, revived: Iterable[str]) -> list[str]:
    """Release blocked dependents whose direct dependencies are all alive again, in graph order."""
    released: list[str] = []
    dead = {s.value for s in DEAD_ENDS}
    candidates = transitive_dependents(conn, revived)
    changed = True
    while changed:  # repeat: breadth-first order can reach a task before one of its blockers
        changed = False
        for task_id in candidates:
            if task_id in released or _status(conn, task_id) != Status.BLOCKED.value:
                continue
            dep_states = conn.execute(
                sa.select(tasks.c.status).join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
                .where(task_deps.c.task_id == task_id)
            ).scalars().all()
            if not any(s in dead for s in dep_states):
                conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id)
                             .values(status=Status.PENDING.value))
                released.append(task_id)
                changed = True
    return released


def _status(conn: sa.Connection, task_id: str) -> str | None:
    return conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar()


def recount_dependencies(conn: sa.Connection, task_ids: Iterable[str]) -> None:
    """Set deps_remaining from the graph (after a reset changed which dependencies are done)."""
    ids = list(task_ids)
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        counts = dict(
            conn.execute(
                sa.select(task_deps.c.task_id, sa.func.count())
                .join(tasks, tasks.c.task_id == task_deps.c.depends_on)
                .where(task_deps.c.task_id.in_(chunk), tasks.c.status != Status.COMPLETED.value)
                .group_by(task_deps.c.task_id)
            ).all()
        )
        conn.execute(
            sa.update(tasks).where(tasks.c.task_id == sa.bindparam("tid"))
            .values(deps_remaining=sa.bindparam("n")),
            [{"tid": t, "n": counts.get(t, 0)} for t in chunk],
        )
