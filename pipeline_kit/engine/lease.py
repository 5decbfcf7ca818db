"""Writes a lease holder makes: heartbeat, cost, remote job id, complete and fail.

Each names (task_id, lease_token) and is guarded by it: a token that is no longer current is
rejected, recorded as a `stale` event, and changes nothing on the task (invariant 2).
Completing again with the current token succeeds and writes nothing twice (invariant 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import blobs, dialects, routines
from pipeline_kit.db.blobs import Upload
from pipeline_kit.db.connect import Database, json_text

from pipeline_kit.db.driver import Tx, run_named, transaction, within
from pipeline_kit.db.finishes import Finish, finish
from pipeline_kit.db.schema import task_deps, tasks
from pipeline_kit.engine.dependents import block_dependents
from pipeline_kit.engine.events import alert, record
from pipeline_kit.engine.retry import DEFAULT_POLICY, RetryPolicy
from pipeline_kit.engine.states import Ack, Status


@dataclass(kw_only=True, slots=True)
class Completion:
    """One finished task as its worker reports it. A plain record, not frozen: a worker builds
    one per task, and a frozen dataclass's __init__ took three times as long."""

    task_id: str
    token: str
    result: Mapping[str, Any] | None = None
    output_path: str | None = None
    cost: float | None = None  # when given, the attempt's cost (else what record_cost stored)
    output_bytes: int | None = None
    model: str | None = None
    settings: Mapping[str, Any] | None = None
    uploads: Sequence[Upload] = ()  # the database store's blobs of the output, kept once it is accepted (db/blobs.py)


def heartbeat(
    db: Database,
    task_id: str,
    token: str,
    *,
    lease_s: float,
    stage: str | None = None,
    progress: float | None = None,
    worker_id: str | None = None,
) -> Ack:
    """Extend one lease and record its stage; FENCED if the token is no longer current."""
    return _heartbeat(db, worker_id, {task_id: token}, lease_s, {task_id: stage}, progress)[task_id]


def heartbeat_many(
    db: Database, worker_id: str, leases: Mapping[str, str], *, lease_s: float, stages: Mapping[str, str] | None = None
) -> dict[str, Ack]:
    """Renew every lease a worker holds (task_id -> token) in one transaction.

    Returns each task's Ack; fenced ones are recorded and should be abandoned by the worker.
    """
    if not leases:
        return {}
    return _heartbeat(db, worker_id, leases, lease_s, stages or {}, None, event=True)


def _heartbeat(
    db: Database,
    worker_id: str | None,
    leases: Mapping[str, str],
    lease_s: float,
    stages: Mapping[str, str | None],
    progress: float | None,
    *,
    event: bool = False,
) -> dict[str, Ack]:
    """Each lease renewed only under its token (the file's `heartbeat`, or for a worker account
    the routine that runs it); the fenced ones recorded as stale."""
    ids = list(leases)
    with db.engine.begin() as conn:
        if routines.enabled(conn):
            renewed = set(
                routines.names(
                    routines.call(
                        conn,
                        "pk_heartbeat",
                        worker_id=worker_id,
                        ids=ids,
                        tokens=[leases[t] for t in ids],
                        stages=[stages.get(t) for t in ids],
                        progress=progress,
                        lease_s=float(lease_s),
                    )
                )
            )
        else:
            renewed = {
                t
                for t in ids
                if run_named(
                    conn,
                    "heartbeat",
                    task_id=t,
                    token=leases[t],
                    stage=stages.get(t),
                    progress=progress,
                    lease_s=float(lease_s),
                )
            }
        acks = {t: Ack.ACCEPTED if t in renewed else Ack.FENCED for t in ids}
        for task_id, ack in acks.items():
            if ack is Ack.FENCED:
                _stale(conn, task_id, leases[task_id], worker_id, "heartbeat")
        if event:
            record(conn, "heartbeat", {"count": len(ids)}, worker_id=worker_id)
    return acks


def _note(conn: sa.Connection, task_id: str, token: str, **values: Any) -> None:
    """Write what a worker notes on its attempt (cost, model, remote job id): the file's
    `note_attempt`, or for a worker account the routine that runs it."""
    fields = {"cost": None, "model": None, "remote_job_id": None, "keep_cost": False}
    if routines.enabled(conn):
        routines.call(conn, "pk_note_attempt", task_id=task_id, token=token, **{**fields, **values})
    else:
        run_named(conn, "note_attempt", task_id=task_id, token=token, **{**fields, **values})


def record_cost(db: Database, task_id: str, token: str, cost: float, *, model: str | None = None) -> None:
    """Book what an external call cost on its attempt, once, even if the lease was since lost.

    Money spent is a fact about the attempt, not a result: a fenced worker's call still cost.
    """
    with db.engine.begin() as conn:
        _note(conn, task_id, token, cost=float(cost), model=model)


def record_remote_job(db: Database, task_id: str, token: str, remote_job_id: str) -> None:
    """Remember a backend's remote job id at once, so a takeover resumes instead of paying again."""
    with db.engine.begin() as conn:
        _note(conn, task_id, token, remote_job_id=remote_job_id)


def complete(db: Database, completion: Completion, *, worker_id: str | None = None) -> Ack:
    """Accept one result (see `complete_many`)."""
    return complete_many(db, [completion], worker_id=worker_id)[completion.task_id]


def complete_many(db: Database, items: Sequence[Completion], *, worker_id: str | None = None) -> dict[str, Ack]:
    """Accept a batch of results; each is ACCEPTED, DUPLICATE or FENCED.

    Accepting closes the attempt as completed, books the task's total cost, and counts the task
    off its dependents' deps_remaining (exactly once, because acceptance happens once). Tasks
    that share a token and a result are finished by one guarded statement per group
    (db/finishes.py), all groups in one transaction; only ids it did not accept are read again,
    to tell a repeated completion (DUPLICATE) from a late one (FENCED).
    """
    if not items:
        return {}
    by_id = {c.task_id: c for c in items}
    alike: dict[tuple[Any, ...], list[str]] = {}
    for c in by_id.values():  # Finish's fields in its order, as a plain tuple: cheaper than a Finish per item
        result = _json(c.result)
        fields = (c.token, result, c.output_path, c.cost, c.output_bytes, c.model, _json(c.settings), _blobs(c.result))
        alike.setdefault(fields, []).append(c.task_id)
    groups = {Finish(*fields): ids for fields, ids in alike.items()}
    accepted: set[str] = set()
    routine = routines.enabled(db)
    one = dialects.of(db.dialect).finish_one_statement and len(groups) == 1  # MariaDB: a CALL needs its transaction
    try:
        with transaction(db, single=one and not any(c.uploads for c in items)) as tx:
            for how, ids in groups.items():
                done = finish(tx, ids, how, routine=routine)
                if done is None:
                    raise _Unsure
                accepted.update(done)
            _keep_uploads(tx, [by_id[t] for t in accepted], routine=routine)
    except _Unsure:  # MariaDB: some were not accepted, and it cannot say which without locking them
        return _complete_locked(db, by_id, groups, worker_id)
    if len(accepted) == len(by_id):  # the common case: nothing to read again
        return dict.fromkeys(by_id, Ack.ACCEPTED)
    acks = dict.fromkeys(accepted, Ack.ACCEPTED)
    with db.engine.begin() as conn:
        rest = [t for t in by_id if t not in accepted]
        current = _lease_states(conn, {t: by_id[t].token for t in rest}) if routine else _current_tokens(conn, rest)
        acks.update(_refuse(conn, [by_id[t] for t in rest], current, worker_id))
    return {t: acks[t] for t in by_id}


def _keep_uploads(tx: Tx, accepted: Sequence[Completion], *, routine: bool = False) -> None:
    """The database store's blobs of the accepted completions, in their transaction."""
    blobs.keep_all(tx, (((c.task_id, c.token), u) for c in accepted for u in c.uploads), routine=routine)


class _Unsure(Exception):
    """Roll the fast path back: MariaDB accepted fewer than it was given."""


def _json(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else json_text(dict(value))


def _blobs(result: Mapping[str, Any] | None) -> str | None:
    """The checksums a result names (its output's and its side files'), space-separated: what the
    completion names on its attempt."""
    sides = (result or {}).get("sides")
    found = [(result or {}).get("sha256"), *(sides.values() if isinstance(sides, Mapping) else ())]
    return " ".join(dict.fromkeys(v for v in found if isinstance(v, str))) or None


def _complete_locked(
    db: Database, by_id: Mapping[str, Completion], groups: Mapping[Finish, list[str]], worker_id: str | None
) -> dict[str, Ack]:
    """The careful path: lock the rows, then finish only those still held by the caller's token."""
    with db.engine.begin() as conn:
        current = _current_tokens(conn, list(by_id), lock=True)
        held = {t for t, c in by_id.items() if current.get(t) == (c.token, Status.PROCESSING.value)}
        with within(conn, db.dialect) as tx:
            for how, ids in groups.items():
                mine = [t for t in ids if t in held]
                if mine and finish(tx, mine, how) is None:
                    raise RuntimeError("a locked, held task was not accepted")
            _keep_uploads(tx, [by_id[t] for t in held])
        acks = {t: Ack.ACCEPTED for t in held}
        acks.update(_refuse(conn, [c for t, c in by_id.items() if t not in held], current, worker_id))
    return {t: acks[t] for t in by_id}


def _refuse(
    conn: sa.Connection, refused: Sequence[Completion], current: Mapping[str, tuple[str, str]], worker_id: str | None
) -> dict[str, Ack]:
    """DUPLICATE for a task already finished under the same token; FENCED (recorded) otherwise."""
    acks: dict[str, Ack] = {}
    for c in refused:
        token, status = current.get(c.task_id, (None, None))
        if token == c.token and status in _DONE:
            acks[c.task_id] = Ack.DUPLICATE
            continue
        acks[c.task_id] = Ack.FENCED
        if c.cost is not None:  # the call was paid for even if its result is refused
            _note(conn, c.task_id, c.token, cost=c.cost, keep_cost=True)
        _stale(conn, c.task_id, c.token, worker_id, "complete")
    return acks


def fail(
    db: Database,
    task_id: str,
    token: str,
    *,
    error: str,
    error_kind: str = "error",
    retryable: bool = True,
    retry_after: float | None = None,
    cost: float | None = None,
    worker_id: str | None = None,
    policy: RetryPolicy = DEFAULT_POLICY,
) -> tuple[Ack, Status | None]:
    """Report a failed attempt: back to pending after a backoff, or failed for good with an alert.

    Returns the Ack and, when accepted, the task's new status.
    """
    routine = routines.enabled(db)
    with db.engine.begin() as conn:
        # a worker account may neither lock rows (PostgreSQL asks UPDATE for FOR UPDATE) nor read
        # tokens: its routine checks the token under the row's lock instead
        token_column = sa.literal(token).label("lease_token") if routine else tasks.c.lease_token
        query = sa.select(
            token_column, tasks.c.status, tasks.c.attempts, tasks.c.retry_base, tasks.c.max_attempts
        ).where(tasks.c.task_id == task_id)
        row = conn.execute(query if routine else query.with_for_update()).first()
        if row is None or row.lease_token != token or row.status != Status.PROCESSING.value:
            _stale(conn, task_id, token, worker_id, "fail")
            return Ack.FENCED, None
        decision = policy.decide(
            retryable=retryable,
            attempts_used=row.attempts - row.retry_base,
            max_attempts=row.max_attempts,
            retry_after=retry_after,
        )
        if routine:
            return _fail_routine(conn, task_id, token, worker_id, decision, error_kind, error, cost)
        # the routine's steps (db/routines.py _fail), from the same file
        steps = {"task_id": task_id, "token": token, "retry": decision.retry, "error_kind": error_kind}
        run_named(
            conn, "fail_task", **steps, delay_s=float(decision.delay_s), last_error=f"{error_kind}: {error}"[:4000]
        )
        run_named(conn, "fail_attempt", **steps, error=error[:4000], cost=cost)
        run_named(conn, "book_cost", task_id=task_id)
        status = Status.PENDING if decision.retry else Status.FAILED
        if status is Status.FAILED:
            alert(conn, task_id, worker_id, f"failed for good: {decision.reason}: {error_kind}: {error}"[:1000])
            block_dependents(conn, [task_id])
    return Ack.ACCEPTED, status


def _fail_routine(
    conn: sa.Connection,
    task_id: str,
    token: str,
    worker_id: str | None,
    decision: Any,
    error_kind: str,
    error: str,
    cost: float | None,
) -> tuple[Ack, Status | None]:
    """`fail` through the worker account's routine (which blocks dependents of a final failure)."""
    message = f"failed for good: {decision.reason}: {error_kind}: {error}"[:1000]
    (accepted,) = routines.names(
        routines.call(
            conn,
            "pk_fail",
            task_id=task_id,
            token=token,
            worker_id=worker_id,
            retry=decision.retry,
            delay_s=float(decision.delay_s),
            error_kind=error_kind,
            error=error[:4000],
            last_error=f"{error_kind}: {error}"[:4000],
            cost=cost,
            alert=json_text({"message": message}),
        )
    )
    if not accepted:
        _stale(conn, task_id, token, worker_id, "fail")
        return Ack.FENCED, None
    return Ack.ACCEPTED, Status.PENDING if decision.retry else Status.FAILED


def release_many(
    db: Database, leases: Mapping[str, str], *, worker_id: str | None = None, why: str = "on shutdown"
) -> list[str]:
    """Give back leases (task_id -> token) no task is to blame for, without using up a retry: a
    graceful stop, or a provider refusing every call (`why` says which).

    Their attempts close as canceled with error_kind 'released'; the tasks are claimable at once.
    """
    released: list[str] = []
    routine = routines.enabled(db)
    with db.engine.begin() as conn:
        for task_id, token in leases.items():
            error = f"released by {worker_id} {why}"[:4000]
            if routine:
                if routines.names(routines.call(conn, "pk_release", task_id=task_id, token=token, error=error))[0]:
                    released.append(task_id)
            elif run_named(conn, "release_task", task_id=task_id, token=token):
                run_named(conn, "release_attempt", task_id=task_id, token=token, error=error)
                released.append(task_id)
    return released


@dataclass(frozen=True)
class Produced:
    """A finished dependency's output: the path it was recorded under and its result (checksums)."""

    output_path: str
    result: Mapping[str, Any]


def dependency_outputs(db: Database, task_id: str) -> dict[str, Produced]:
    """Recorded outputs of a task's dependencies, by task id and by kind (first of a kind)."""
    with db.reading() as conn:
        found = conn.execute(
            sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.output_path, tasks.c.result)
            .join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
            .where(task_deps.c.task_id == task_id, tasks.c.output_path.is_not(None))
            .order_by(tasks.c.id)
        ).all()
    made = {r.task_id: Produced(r.output_path, dict(r.result or {})) for r in found}
    by_kind = {r.kind: made[r.task_id] for r in reversed(found)}
    return {**by_kind, **made}


def output_owner(db: Database, output_path: str, task_id: str) -> str | None:
    """Another task that recorded `output_path` as its output, if any (publish must not replace
    its file)."""
    with db.reading() as conn:
        return conn.execute(
            sa.select(tasks.c.task_id).where(tasks.c.output_path == output_path, tasks.c.task_id != task_id).limit(1)
        ).scalar()


_DONE = (Status.COMPLETED.value, Status.AWAITING_REVIEW.value)


def _lease_states(conn: sa.Connection, leases: Mapping[str, str]) -> dict[str, tuple[str | None, str]]:
    """`_current_tokens` for a worker account, which may not read tokens: a task's token is
    given back only where it is the caller's own (the routine compares them)."""
    ids = list(leases)
    rows = routines.call(conn, "pk_lease_state", ids=ids, tokens=[leases[t] for t in ids])
    return {r.task_id: (leases[r.task_id] if r.mine else None, r.status) for r in rows}


def _current_tokens(conn: sa.Connection, task_ids: list[str], *, lock: bool = False) -> dict[str, tuple[str, str]]:
    query = sa.select(tasks.c.task_id, tasks.c.lease_token, tasks.c.status).where(tasks.c.task_id.in_(task_ids))
    return {r.task_id: (r.lease_token, r.status) for r in conn.execute(query.with_for_update() if lock else query)}


def _stale(conn: sa.Connection, task_id: str, token: str, worker_id: str | None, op: str) -> None:
    record(conn, "stale", {"op": op}, task_id=task_id, worker_id=worker_id, lease_token=token)


__all__ = [
    "Completion",
    "Produced",
    "alert",
    "complete",
    "complete_many",
    "dependency_outputs",
    "fail",
    "heartbeat",
    "heartbeat_many",
    "output_owner",
    "record_cost",
    "record_remote_job",
    "release_many",
]
