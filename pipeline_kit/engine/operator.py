"""Operator verbs: retry, cancel and reset tasks, keeping every attempt on record."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import run_named
from pipeline_kit.db.schema import attempts, books, task_deps, tasks
from pipeline_kit.engine.dependents import (
    block_dependents,
    recount_dependencies,
    transitive_dependents,
    unblock_dependents,
)
from pipeline_kit.engine.events import record_each
from pipeline_kit.engine.states import DEAD_ENDS, VERBS, Status
from pipeline_kit.errors import BadInput, NotFound


RETRYABLE = VERBS["retry"].sources  # failed or canceled: the states the `retry` verb takes tasks from
RETRY_BATCH = 500  # tasks retried per transaction by a bulk retry


@dataclass(frozen=True)
class RetrySelection:
    """Which tasks a retry takes: the named tasks, and, when `by_filter`, the tasks in one of
    `statuses` of the named books (of every book when none is named), narrowed by kind, lane
    and the error kind of their last attempt."""

    task_ids: tuple[str, ...] = ()
    by_filter: bool = False
    bookcodes: tuple[str, ...] = ()
    statuses: tuple[Status, ...] = (Status.FAILED,)
    kinds: tuple[str, ...] = ()
    lanes: tuple[str, ...] = ()
    error_kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class RetryReport:
    """What a retry did (or, on a dry run, would do): the tasks made pending again, in id order,
    and the blocked dependents that were released with them."""

    retried: tuple[str, ...]
    released: tuple[str, ...] = ()
    dry_run: bool = False


def retry_task(db: Database, task_id: str, *, by: str = "operator") -> list[str]:
    """Give a failed or canceled task a fresh attempt budget; returns the dependents released."""
    return list(retry(db, RetrySelection(task_ids=(task_id,)), by=by).released)


def retry(db: Database, selection: RetrySelection, *, by: str = "operator", dry_run: bool = False) -> RetryReport:
    """Retry every task `selection` names, RETRY_BATCH tasks per transaction (each batch whole or
    not at all), keeping every attempt on record. A named task that is unknown, blocked or not
    failed/canceled is refused before anything changes."""
    wrong = [s.value for s in selection.statuses if s not in RETRYABLE]
    if wrong:
        raise BadInput(f"only failed or canceled tasks can be retried, not {', '.join(wrong)} ones")
    with db.reading() as conn:
        chosen = _chosen(conn, selection)
        conn.rollback()
    if dry_run:
        return RetryReport(tuple(chosen), dry_run=True)
    retried: list[str] = []
    released: list[str] = []
    for i in range(0, len(chosen), RETRY_BATCH):
        with db.engine.begin() as conn:
            done = retry_tasks(conn, chosen[i : i + RETRY_BATCH], by=by)
            retried += done
            released += unblock_dependents(conn, done)
    return RetryReport(tuple(retried), tuple(released))


def retry_tasks(conn: sa.Connection, task_ids: Iterable[str], *, by: str = "operator") -> list[str]:
    """The `retry` verb in the caller's transaction: those of `task_ids` still failed or canceled
    go back to pending with a fresh attempt budget (their attempts stay); returns them. Their
    blocked dependents are the caller's to release (`unblock_dependents`)."""
    ids = list(dict.fromkeys(task_ids))
    retryable = sorted(s.value for s in RETRYABLE)
    found = list(
        conn.execute(
            sa.select(tasks.c.task_id)
            .where(tasks.c.task_id.in_(ids), tasks.c.status.in_(retryable))
            .order_by(tasks.c.id)
            .with_for_update()
        ).scalars()
    )
    if not found:
        return []
    run_named(conn, "retry", ids=found)
    record_each(conn, "retry", found, by, {})
    return found


def _chosen(conn: sa.Connection, selection: RetrySelection) -> list[str]:
    """The ids a selection takes, in id order; named tasks are checked one by one."""
    for task_id in selection.task_ids:
        _check_retryable(conn, task_id)
    chosen = list(selection.task_ids)
    if selection.by_filter:
        query = sa.select(tasks.c.task_id).where(tasks.c.status.in_([s.value for s in selection.statuses]))
        if selection.bookcodes:
            query = query.where(tasks.c.bookcode.in_(selection.bookcodes))
        if selection.kinds:
            query = query.where(tasks.c.kind.in_(selection.kinds))
        if selection.lanes:
            query = query.where(tasks.c.lane.in_(selection.lanes))
        if selection.error_kinds:
            last = sa.select(attempts.c.task_id).where(
                attempts.c.task_id == tasks.c.task_id,
                attempts.c.attempt_no == tasks.c.attempts,
                attempts.c.error_kind.in_(selection.error_kinds),
            )
            query = query.where(last.exists())
        chosen += conn.execute(query.order_by(tasks.c.id)).scalars()
    return list(dict.fromkeys(chosen))


def _check_retryable(conn: sa.Connection, task_id: str) -> None:
    """Refuse, in one line, a named task that retry cannot take (and say what to do instead)."""
    status = _status(conn, task_id)
    if status == Status.BLOCKED.value:
        blockers = _dead_dependencies(conn, task_id)
        raise BadInput(
            f"task {task_id!r} is blocked by {', '.join(blockers) or 'a dependency'}: retry that task instead"
        )
    if status not in {s.value for s in RETRYABLE}:
        raise BadInput(f"task {task_id!r} is {status}: only failed or canceled tasks can be retried")


def split_targets(db: Database, targets: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Targets an operator typed, as (task ids, bookcodes): a task's id names that task, else a
    book's code names the book; anything else is NotFound."""
    names = list(dict.fromkeys(targets))
    with db.reading() as conn:
        task_ids = set(conn.execute(sa.select(tasks.c.task_id).where(tasks.c.task_id.in_(names))).scalars())
        rest = [n for n in names if n not in task_ids]
        known = set(conn.execute(sa.select(books.c.bookcode).where(books.c.bookcode.in_(rest))).scalars())
        known |= set(conn.execute(sa.select(tasks.c.bookcode).distinct().where(tasks.c.bookcode.in_(rest))).scalars())
    unknown = [n for n in rest if n not in known]
    if unknown:
        raise NotFound(f"no task or book named {unknown[0]!r} (`pipeline-kit status` lists the books)")
    return tuple(n for n in names if n in task_ids), tuple(n for n in names if n in known)


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
    with db.reading() as conn:
        return (
            conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar() == Status.CANCELED.value
        )


def cancel_tasks(conn: sa.Connection, task_ids: Iterable[str], *, reason: str, by: str = "operator") -> list[str]:
    """Cancel the unfinished ones among `task_ids` in the caller's transaction (e.g. the tasks of
    shots a re-split removed); returns the dependents that became blocked."""
    ids = list(
        conn.execute(
            sa.select(tasks.c.task_id).where(
                tasks.c.task_id.in_(list(task_ids)),
                tasks.c.status.notin_([Status.COMPLETED.value, Status.CANCELED.value]),
            )
        ).scalars()
    )
    if not ids:
        return []
    _revoke_leases(conn, ids)
    run_named(conn, "cancel", ids=ids)
    record_each(conn, "cancel", ids, by, {"reason": reason})
    return block_dependents(conn, ids)


def set_dependencies(
    conn: sa.Connection, task_id: str, depends_on: Iterable[str], optional: Iterable[str] = ()
) -> None:
    """Replace a task's dependencies (an edited shot gained or lost a character) and recount them;
    those in `optional` let it go ahead if they fail."""
    deps = list(dict.fromkeys(depends_on))
    waivable = set(optional)
    _status(conn, task_id)
    known = set(conn.execute(sa.select(tasks.c.task_id).where(tasks.c.task_id.in_(deps))).scalars())
    missing = [d for d in deps if d not in known]
    if missing:
        raise NotFound(f"unknown dependency {missing[0]!r}")
    if task_id in deps or set(deps) & set(transitive_dependents(conn, [task_id])):
        raise BadInput(f"dependencies of {task_id!r} would form a cycle")
    conn.execute(sa.delete(task_deps).where(task_deps.c.task_id == task_id))
    if deps:
        conn.execute(
            sa.insert(task_deps), [{"task_id": task_id, "depends_on": d, "optional": d in waivable} for d in deps]
        )
    recount_dependencies(conn, [task_id])
    dead = _dead_dependencies(conn, task_id)
    if dead:  # a required dependency that can never finish blocks this task (and what waits on it)
        block_dependents(conn, dead, dead_before=True)


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
        run_named(conn, "reset", ids=every[i : i + 500])
    recount_dependencies(conn, every)
    record_each(conn, "reset", every, by, {"reason": reason})
    return every


def _revoke_leases(conn: sa.Connection, task_ids: list[str]) -> None:
    """Close the open attempts of running tasks as canceled; clearing the token fences their workers."""
    for i in range(0, len(task_ids), 500):
        run_named(conn, "revoke_attempts", ids=task_ids[i : i + 500])
        run_named(conn, "revoke_tokens", ids=task_ids[i : i + 500])


def _dead_dependencies(conn: sa.Connection, task_id: str) -> list[str]:
    return list(
        conn.execute(
            sa.select(tasks.c.task_id)
            .join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
            .where(
                task_deps.c.task_id == task_id,
                task_deps.c.optional.is_(False),
                tasks.c.status.in_([s.value for s in DEAD_ENDS]),
            )
        ).scalars()
    )


def _status(conn: sa.Connection, task_id: str) -> str:
    status = conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar()
    if status is None:
        raise NotFound(f"unknown task {task_id!r}")
    return str(status)
