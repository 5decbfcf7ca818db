"""Operator verbs: retry, cancel and reset tasks, keeping every attempt on record."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, task_deps, tasks
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.engine.dependents import (
    block_dependents,
    recount_dependencies,
    transitive_dependents,
    unblock_dependents,
)
from pipeline_kit.engine.events import record, record_each
from pipeline_kit.engine.states import DEAD_ENDS, Outcome, Status
from pipeline_kit.errors import BadInput, NotFound


def retry_task(db: Database, task_id: str, *, by: str = "operator") -> list[str]:
    """Give a failed or canceled task a fresh attempt budget; returns the dependents released."""
    with db.engine.begin() as conn:
        status = _status(conn, task_id)
        if status == Status.BLOCKED.value:
            blockers = _dead_dependencies(conn, task_id)
            raise BadInput(f"task {task_id!r} is blocked by {', '.join(blockers) or 'a dependency'}: "
                           "retry that task instead")
        if status not in (Status.FAILED.value, Status.CANCELED.value):
            raise BadInput(f"task {task_id!r} is {status}: only failed or canceled tasks can be retried")
        conn.execute(
            sa.update(tasks).where(tasks.c.task_id == task_id)
            .values(status=Status.PENDING.value, retry_base=tasks.c.attempts, run_after=db_now(),
                    finished_at=None, worker_id=None)
        )
        record(conn, "retry", {}, task_id=task_id, worker_id=by)
        return unblock_dependents(conn, [task_id])


def cancel_task(db: Database, task_id: str, *, by: str = "operator") -> list[str]:
    """Stop a task (a running one's lease is revoked: its worker will be fenced); blocks dependents."""
    with db.engine.begin() as conn:
        status = _status(conn, task_id)
        if status in (Status.COMPLETED.value, Status.CANCELED.value):
            raise BadInput(f"task {task_id!r} is {status}: nothing to cancel")
        return cancel_tasks(conn, [task_id], reason="canceled by an operator", by=by)


def was_canceled(db: Database, task_id: str) -> bool:
    """Whether the task was canceled: a fenced worker's cue to stop and cancel its remote job
    (a lease lost for any other reason leaves the remote job for the next holder to resume)."""
    with db.engine.connect() as conn:
        return conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)
                            ).scalar() == Status.CANCELED.value


def cancel_tasks(conn: sa.Connection, task_ids: Iterable[str], *, reason: str, by: str = "operator") -> list[str]:
    """Cancel the unfinished ones among `task_ids` in the caller's transaction (e.g. the tasks of
    shots a re-split removed); returns the dependents that became blocked."""
    ids = list(conn.execute(
        sa.select(tasks.c.task_id).where(tasks.c.task_id.in_(list(task_ids)),
                                         tasks.c.status.notin_([Status.COMPLETED.value, Status.CANCELED.value]))
    ).scalars())
    if not ids:
        return []
    _revoke_leases(conn, ids)
    conn.execute(sa.update(tasks).where(tasks.c.task_id.in_(ids))
                 .values(status=Status.CANCELED.value, lease_expires_at=None, finished_at=db_now()))
    record_each(conn, "cancel", ids, by, {"reason": reason})
    return block_dependents(conn, ids)


def set_dependencies(conn: sa.Connection, task_id: str, depends_on: Iterable[str]) -> None:
    """Replace a task's dependencies (an edited shot gained or lost a character) and recount them."""
    deps = list(dict.fromkeys(depends_on))
    _status(conn, task_id)
    known = set(conn.execute(sa.select(tasks.c.task_id).where(tasks.c.task_id.in_(deps))).scalars())
    missing = [d for d in deps if d not in known]
    if missing:
        raise NotFound(f"unknown dependency {missing[0]!r}")
    if task_id in deps or set(deps) & set(transitive_dependents(conn, [task_id])):
        raise BadInput(f"dependencies of {task_id!r} would form a cycle")
    conn.execute(sa.delete(task_deps).where(task_deps.c.task_id == task_id))
    if deps:
        conn.execute(sa.insert(task_deps), [{"task_id": task_id, "depends_on": d} for d in deps])
    recount_dependencies(conn, [task_id])
    dead = _dead_dependencies(conn, task_id)
    if dead:  # a dependency that can never finish blocks this task (and what waits on it)
        block_dependents(conn, dead)


def reset_tasks(conn: sa.Connection, task_ids: Iterable[str], *, reason: str, by: str = "operator") -> list[str]:
    """Send tasks and everything that depends on them back to pending for a re-run.

    Attempt history stays; a live lease is revoked (its worker's late result will be fenced);
    results and outputs are cleared so nothing stale passes for new. Runs in the caller's
    transaction. Returns the ids reset, roots first.
    """
    roots = list(dict.fromkeys(task_ids))
    known = set(conn.execute(sa.select(tasks.c.task_id).where(tasks.c.task_id.in_(roots))).scalars())
    missing = [t for t in roots if t not in known]
    if missing:
        raise NotFound(f"unknown task {missing[0]!r}")
    every = roots + [t for t in transitive_dependents(conn, roots) if t not in known]
    _revoke_leases(conn, every)
    for i in range(0, len(every), 500):
        conn.execute(
            sa.update(tasks).where(tasks.c.task_id.in_(every[i : i + 500]))
            .values(status=Status.PENDING.value, retry_base=tasks.c.attempts, run_after=db_now(),
                    generation=tasks.c.generation + 1, result=None, output_path=None, finished_at=None,
                    lease_expires_at=None, stage=None, progress=None, last_error=None)
        )
    recount_dependencies(conn, every)
    record_each(conn, "reset", every, by, {"reason": reason})
    return every


def _revoke_leases(conn: sa.Connection, task_ids: list[str]) -> None:
    """Close the open attempts of running tasks as canceled; clearing the token fences their workers."""
    running = conn.execute(
        sa.select(tasks.c.task_id, tasks.c.lease_token)
        .where(tasks.c.task_id.in_(task_ids), tasks.c.status == Status.PROCESSING.value)
    ).all()
    for row in running:
        conn.execute(
            sa.update(attempts)
            .where(attempts.c.task_id == row.task_id, attempts.c.lease_token == row.lease_token,
                   attempts.c.outcome.is_(None))
            .values(outcome=Outcome.CANCELED.value, finished_at=db_now(), error_kind="revoked")
        )
        conn.execute(sa.update(tasks).where(tasks.c.task_id == row.task_id).values(lease_token=None))


def _dead_dependencies(conn: sa.Connection, task_id: str) -> list[str]:
    return list(conn.execute(
        sa.select(tasks.c.task_id).join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
        .where(task_deps.c.task_id == task_id, tasks.c.status.in_([s.value for s in DEAD_ENDS]))
    ).scalars())


def _status(conn: sa.Connection, task_id: str) -> str:
    status = conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar()
    if status is None:
        raise NotFound(f"unknown task {task_id!r}")
    return str(status)
