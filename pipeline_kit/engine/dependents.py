"""Walking the dependency graph: who waits on whom, blocking and unblocking dependents (counting
a completion off them is db/finishes.py's `count_off`).

A dependency marked optional (a director pass) never blocks: when it can no longer finish, its
dependents stop waiting for it (counted off like a completion, an `went_ahead` event says so) and
go ahead without its output; if it is revived, those that have not run yet wait for it again.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from pipeline_kit.db.driver import rows_named, run_named
from pipeline_kit.db.schema import task_deps, tasks
from pipeline_kit.engine.events import record
from pipeline_kit.engine.states import DEAD_ENDS, Status

_CHUNK = 500


def transitive_dependents(conn: sa.Connection, roots: Iterable[str], *, required_only: bool = False) -> list[str]:
    """Every task that waits, directly or not, on one of `roots` (roots excluded), breadth first
    (`required_only`: through required dependencies only, the ones a failure blocks)."""
    seen: set[str] = set(roots)
    order: list[str] = []
    frontier = list(seen)
    while frontier:
        found: list[str] = []
        for i in range(0, len(frontier), _CHUNK):
            query = sa.select(task_deps.c.task_id).where(task_deps.c.depends_on.in_(frontier[i : i + _CHUNK]))
            if required_only:
                query = query.where(task_deps.c.optional.is_(False))
            found += conn.execute(query).scalars().all()
        frontier = [t for t in dict.fromkeys(found) if t not in seen]
        seen.update(frontier)
        order += frontier
    return order


def block_dependents(conn: sa.Connection, failed: Iterable[str], *, dead_before: bool = False) -> list[str]:
    """Mark waiting dependents of tasks that can no longer finish as blocked; those that wait on
    one of them (or on a task this blocks) through an optional dependency go ahead without it
    (`dead_before`: the roots were dead already, so theirs went ahead then)."""
    failed = list(failed)
    waiting = transitive_dependents(conn, failed, required_only=True)
    newly: list[str] = []  # blocked now, not before: their optional dependents stop waiting now
    for i in range(0, len(waiting), _CHUNK):
        chunk = waiting[i : i + _CHUNK]
        pending = [r["task_id"] for r in rows_named(conn, "newly_blocked", waiting=chunk)]
        if pending:
            run_named(conn, "block", newly=pending)
        newly += pending
    _waive(conn, [*([] if dead_before else failed), *newly])
    return waiting


def _optional_edges(conn: sa.Connection, dead: list[str]) -> list[tuple[str, str]]:
    """(dependent, dependency) of the optional dependencies on `dead` whose dependent has not run."""
    edges: list[tuple[str, str]] = []
    for i in range(0, len(dead), _CHUNK):
        edges += [
            (r.task_id, r.depends_on)
            for r in conn.execute(
                sa.select(task_deps.c.task_id, task_deps.c.depends_on)
                .join(tasks, tasks.c.task_id == task_deps.c.task_id)
                .where(
                    task_deps.c.depends_on.in_(dead[i : i + _CHUNK]),
                    task_deps.c.optional.is_(True),
                    tasks.c.status.in_([Status.PENDING.value, Status.BLOCKED.value]),
                )
            )
        ]
    return edges


def _waive(conn: sa.Connection, dead: list[str]) -> None:
    """Dependents stop waiting for the optional dependencies among `dead` (once per dependency's
    death: a dependency already dead before was counted off then, and is left alone)."""
    edges = _optional_edges(conn, dead)
    if not edges:
        return
    _shift(conn, edges, -1)
    for dependency in dict.fromkeys(d for _, d in edges):
        went = [t for t, d in edges if d == dependency]
        record(conn, "went_ahead", {"without": dependency, "tasks": len(went), "first": went[0]}, task_id=dependency)


def _shift(conn: sa.Connection, edges: list[tuple[str, str]], by: int) -> None:
    """deps_remaining of each edge's dependent moved by `by` (once per edge)."""
    counts: dict[str, int] = {}
    for task_id, _ in edges:
        counts[task_id] = counts.get(task_id, 0) + by
    conn.execute(
        sa.update(tasks)
        .where(tasks.c.task_id == sa.bindparam("tid"))
        .values(deps_remaining=tasks.c.deps_remaining + sa.bindparam("n")),
        [{"tid": t, "n": n} for t, n in counts.items()],
    )


def unblock_dependents(conn: sa.Connection, revived: Iterable[str]) -> list[str]:
    """Release blocked dependents whose required dependencies are all alive again, in graph
    order; dependents that went ahead without a revived optional dependency and have not run yet
    wait for it again."""
    revived = list(revived)
    released: list[str] = []
    dead = {s.value for s in DEAD_ENDS}
    candidates = transitive_dependents(conn, revived, required_only=True)
    changed = True
    while changed:  # repeat: breadth-first order can reach a task before one of its blockers
        changed = False
        for task_id in candidates:
            if task_id in released or _status(conn, task_id) != Status.BLOCKED.value:
                continue
            dep_states = (
                conn.execute(
                    sa.select(tasks.c.status)
                    .join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
                    .where(task_deps.c.task_id == task_id, task_deps.c.optional.is_(False))
                )
                .scalars()
                .all()
            )
            if not any(s in dead for s in dep_states):
                run_named(conn, "unblock", task_id=task_id)
                released.append(task_id)
                changed = True
    edges = _optional_edges(conn, [*revived, *released])
    if edges:
        _shift(conn, edges, +1)
    return released


def _status(conn: sa.Connection, task_id: str) -> str | None:
    return conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar()


def recount_dependencies(conn: sa.Connection, task_ids: Iterable[str]) -> None:
    """Set deps_remaining from the graph (after a reset changed which dependencies are done): the
    dependencies not completed, less the optional ones that can no longer finish."""
    ids = list(task_ids)
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        counts = dict(
            conn.execute(
                sa.select(task_deps.c.task_id, sa.func.count())
                .join(tasks, tasks.c.task_id == task_deps.c.depends_on)
                .where(
                    task_deps.c.task_id.in_(chunk),
                    tasks.c.status != Status.COMPLETED.value,
                    sa.or_(
                        task_deps.c.optional.is_(False),
                        tasks.c.status.notin_([s.value for s in DEAD_ENDS]),
                    ),
                )
                .group_by(task_deps.c.task_id)
            ).all()
        )
        conn.execute(
            sa.update(tasks).where(tasks.c.task_id == sa.bindparam("tid")).values(deps_remaining=sa.bindparam("n")),
            [{"tid": t, "n": counts.get(t, 0)} for t in chunk],
        )
