"""Writes a lease holder makes: heartbeat, cost, remote job id, complete and fail.

Each names (task_id, lease_token) and is guarded by it: a token that is no longer current is
rejected, recorded as a `stale` event, and changes nothing on the task (invariant 2).
Completing again with the current token succeeds and writes nothing twice (invariant 3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, events, task_deps, tasks
from pipeline_kit.db.sqltime import db_now, now_plus
from pipeline_kit.engine.dependents import block_dependents, release_dependents
from pipeline_kit.engine.review import needs_review
from pipeline_kit.engine.retry import DEFAULT_POLICY, RetryPolicy
from pipeline_kit.engine.states import Ack, Outcome, Status


@dataclass(frozen=True, kw_only=True)
class Completion:
    """One finished task as its worker reports it."""

    task_id: str
    token: str
    result: Mapping[str, Any] | None = None
    output_path: str | None = None
    cost: float | None = None  # when given, the attempt's cost (else what record_cost stored)
    output_bytes: int | None = None
    model: str | None = None
    settings: Mapping[str, Any] | None = None


def heartbeat(db: Database, task_id: str, token: str, *, lease_s: float, stage: str | None = None,
              progress: float | None = None, worker_id: str | None = None) -> Ack:
    """Extend one lease and record its stage; FENCED if the token is no longer current."""
    values: dict[str, Any] = {"lease_expires_at": now_plus(lease_s), "heartbeat_at": db_now()}
    if stage is not None:
        values["stage"] = stage
    if progress is not None:
        values["progress"] = progress
    with db.engine.begin() as conn:
        done = conn.execute(
            sa.update(tasks).where(_held(task_id, token)).values(**values)
        ).rowcount
        if done:
            return Ack.ACCEPTED
        _stale(conn, task_id, token, worker_id, "heartbeat")
    return Ack.FENCED


def heartbeat_many(db: Database, worker_id: str, leases: Mapping[str, str], *, lease_s: float,
                   stages: Mapping[str, str] | None = None) -> dict[str, Ack]:
    """Renew every lease a worker holds (task_id -> token) in one transaction.

    Returns each task's Ack; fenced ones are recorded and should be abandoned by the worker.
    """
    if not leases:
        return {}
    stages = stages or {}
    with db.engine.begin() as conn:
        pairs = list(leases.items())
        conn.execute(
            sa.update(tasks)
            .where(tasks.c.task_id.in_([t for t, _ in pairs]), tasks.c.worker_id == worker_id,
                   tasks.c.status == Status.PROCESSING.value,
                   tasks.c.lease_token.in_({tok for _, tok in pairs}))
            .values(lease_expires_at=now_plus(lease_s), heartbeat_at=db_now())
        )
        for task_id, stage in stages.items():
            if task_id in leases:
                conn.execute(sa.update(tasks).where(_held(task_id, leases[task_id])).values(stage=stage))
        current = _current_tokens(conn, [t for t, _ in pairs])
        acks = {t: Ack.ACCEPTED if current.get(t) == (tok, Status.PROCESSING.value) else Ack.FENCED
                for t, tok in pairs}
        for task_id, ack in acks.items():
            if ack is Ack.FENCED:
                _stale(conn, task_id, leases[task_id], worker_id, "heartbeat")
        conn.execute(sa.insert(events).values(at=db_now(), kind="heartbeat", worker_id=worker_id,
                                              detail={"count": len(pairs)}))
    return acks


def record_cost(db: Database, task_id: str, token: str, cost: float, *, model: str | None = None) -> None:
    """Book what an external call cost on its attempt, once, even if the lease was since lost.

    Money spent is a fact about the attempt, not a result: a fenced worker's call still cost.
    """
    with db.engine.begin() as conn:
        conn.execute(
            sa.update(attempts)
            .where(attempts.c.task_id == task_id, attempts.c.lease_token == token)
            .values(cost=cost, model=model if model is not None else attempts.c.model)
        )


def record_remote_job(db: Database, task_id: str, token: str, remote_job_id: str) -> None:
    """Remember a backend's remote job id at once, so a takeover resumes instead of paying again."""
    with db.engine.begin() as conn:
        conn.execute(
            sa.update(attempts)
            .where(attempts.c.task_id == task_id, attempts.c.lease_token == token)
            .values(remote_job_id=remote_job_id)
        )


def complete(db: Database, completion: Completion, *, worker_id: str | None = None) -> Ack:
    """Accept one result (see `complete_many`)."""
    return complete_many(db, [completion], worker_id=worker_id)[completion.task_id]


def complete_many(db: Database, items: Sequence[Completion], *, worker_id: str | None = None) -> dict[str, Ack]:
    """Accept a batch of results in one transaction; each is ACCEPTED, DUPLICATE or FENCED.

    Accepting closes the attempt as completed, books the task's total cost, and counts the task
    off its dependents' deps_remaining (exactly once, because acceptance happens once). Tasks
    that share a token and a result are written by one set-based statement each (a claimed batch
    of no-op tasks costs a handful of statements, not a handful per task).
    """
    if not items:
        return {}
    by_id = {c.task_id: c for c in items}
    with db.engine.begin() as conn:
        current = {r.task_id: r for r in conn.execute(_LOCK_CURRENT, {"ids": list(by_id)})}
        acks: dict[str, Ack] = {}
        for task_id, c in by_id.items():
            row = current.get(task_id)
            if row is not None and row.lease_token == c.token and row.status == Status.PROCESSING.value:
                acks[task_id] = Ack.ACCEPTED
            elif row is not None and row.lease_token == c.token and row.status in _DONE:
                acks[task_id] = Ack.DUPLICATE
            else:
                acks[task_id] = Ack.FENCED
        accepted = [by_id[t] for t, a in acks.items() if a is Ack.ACCEPTED]
        if accepted:
            held = needs_review(conn, [current[c.task_id] for c in accepted])
            _close_attempts(conn, accepted)
            _finish_tasks(conn, accepted, held)
            waited_on = [c.task_id for c in accepted if c.task_id not in held and current[c.task_id].waited_on]
            if waited_on:  # leaf tasks (most of a batch) skip the dependents round trip
                release_dependents(conn, waited_on)
        for task_id, ack in acks.items():
            if ack is Ack.FENCED:
                c = by_id[task_id]
                if c.cost is not None:  # the call was paid for even if its result is refused
                    conn.execute(_BOOK_FENCED_COST, {"tid": task_id, "tok": c.token, "cost": c.cost})
                _stale(conn, task_id, c.token, worker_id, "complete")
    return acks


def fail(db: Database, task_id: str, token: str, *, error: str, error_kind: str = "error",
         retryable: bool = True, retry_after: float | None = None, cost: float | None = None,
         worker_id: str | None = None, policy: RetryPolicy = DEFAULT_POLICY) -> tuple[Ack, Status | None]:
    """Report a failed attempt: back to pending after a backoff, or failed for good with an alert.

    Returns the Ack and, when accepted, the task's new status.
    """
    with db.engine.begin() as conn:
        row = conn.execute(
            sa.select(tasks.c.lease_token, tasks.c.status, tasks.c.attempts, tasks.c.retry_base,
                      tasks.c.max_attempts)
            .where(tasks.c.task_id == task_id).with_for_update()
        ).first()
        if row is None or row.lease_token != token or row.status != Status.PROCESSING.value:
            _stale(conn, task_id, token, worker_id, "fail")
            return Ack.FENCED, None
        decision = policy.decide(retryable=retryable, attempts_used=row.attempts - row.retry_base,
                                 max_attempts=row.max_attempts, retry_after=retry_after)
        outcome = Outcome.RETRIED if decision.retry else Outcome.FAILED
        conn.execute(
            sa.update(attempts)
            .where(attempts.c.task_id == task_id, attempts.c.lease_token == token)
            .values(outcome=outcome.value, finished_at=db_now(), error_kind=error_kind,
                    error=error[:4000], cost=cost if cost is not None else attempts.c.cost)
        )
        values: dict[str, Any] = {"last_error": f"{error_kind}: {error}"[:4000], "lease_expires_at": None,
                                  "stage": None, "cost": _ATTEMPTS_COST}
        if decision.retry:
            status = Status.PENDING
            values.update(status=status.value, run_after=now_plus(decision.delay_s))
        else:
            status = Status.FAILED
            values.update(status=status.value, finished_at=db_now())
        conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id).values(**values))
        if status is Status.FAILED:
            alert(conn, task_id, worker_id, f"failed for good: {decision.reason}: {error_kind}: {error}"[:1000])
            block_dependents(conn, [task_id])
    return Ack.ACCEPTED, status


def release_many(db: Database, leases: Mapping[str, str], *, worker_id: str | None = None) -> list[str]:
    """Give back unstarted leases (task_id -> token) on a graceful stop, without using up a retry.

    Their attempts close as canceled with error_kind 'released'; the tasks are claimable at once.
    """
    released: list[str] = []
    with db.engine.begin() as conn:
        for task_id, token in leases.items():
            if conn.execute(
                sa.update(tasks).where(_held(task_id, token))
                .values(status=Status.PENDING.value, lease_expires_at=None, stage=None, run_after=db_now(),
                        retry_base=tasks.c.retry_base + 1)
            ).rowcount:
                conn.execute(
                    sa.update(attempts)
                    .where(attempts.c.task_id == task_id, attempts.c.lease_token == token)
                    .values(outcome=Outcome.CANCELED.value, finished_at=db_now(), error_kind="released",
                            error=f"released unstarted by {worker_id} on shutdown")
                )
                released.append(task_id)
    return released


def dependency_outputs(db: Database, task_id: str) -> dict[str, str]:
    """Recorded output paths of a task's dependencies, by task id and by kind (first of a kind)."""
    with db.engine.connect() as conn:
        found = conn.execute(
            sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.output_path)
            .join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
            .where(task_deps.c.task_id == task_id, tasks.c.output_path.is_not(None))
            .order_by(tasks.c.id)
        ).all()
    by_kind = {r.kind: r.output_path for r in reversed(found)}
    return {**by_kind, **{r.task_id: r.output_path for r in found}}


def alert(conn: sa.Connection, task_id: str | None, worker_id: str | None, message: str) -> None:
    """Record an alert event: something a person should look at."""
    conn.execute(sa.insert(events).values(at=db_now(), kind="alert", task_id=task_id,
                                          worker_id=worker_id, detail={"message": message}))


def _held(task_id: str, token: str) -> sa.ColumnElement[bool]:
    return sa.and_(tasks.c.task_id == task_id, tasks.c.lease_token == token,
                   tasks.c.status == Status.PROCESSING.value)


_DONE = (Status.COMPLETED.value, Status.AWAITING_REVIEW.value)


def _current_tokens(conn: sa.Connection, task_ids: list[str]) -> dict[str, tuple[str, str]]:
    query = sa.select(tasks.c.task_id, tasks.c.lease_token, tasks.c.status).where(tasks.c.task_id.in_(task_ids))
    return {r.task_id: (r.lease_token, r.status) for r in conn.execute(query)}


def _close_attempts(conn: sa.Connection, done: Sequence[Completion]) -> None:
    """Close accepted attempts: one statement per token for plain ones, one row each with details."""
    plain: dict[str, list[str]] = {}
    detailed = []
    for c in done:
        if c.cost is None and c.output_bytes is None and c.model is None and c.settings is None:
            plain.setdefault(c.token, []).append(c.task_id)
        else:
            detailed.append({"tid": c.task_id, "tok": c.token, "cost": c.cost, "bytes": c.output_bytes,
                             "model": c.model, "settings": dict(c.settings) if c.settings is not None else None})
    for token, ids in plain.items():
        conn.execute(_CLOSE_ATTEMPTS, {"ids": ids, "tok": token})
    if detailed:
        conn.execute(_CLOSE_ATTEMPT, detailed)


def _finish_tasks(conn: sa.Connection, done: Sequence[Completion], held: set[str]) -> None:
    """Mark accepted tasks completed (or awaiting review) with their results and total cost."""
    groups: dict[tuple[str, str, str, str | None], list[Completion]] = {}
    for c in done:
        status = (Status.AWAITING_REVIEW if c.task_id in held else Status.COMPLETED).value
        key = (c.token, status, json.dumps(c.result, sort_keys=True, default=str), c.output_path)
        groups.setdefault(key, []).append(c)
    for (token, status, _, path), group in groups.items():
        result = dict(group[0].result) if group[0].result is not None else None
        conn.execute(_FINISH_TASKS, {"ids": [c.task_id for c in group], "tok": token, "st": status,
                                     "res": result, "path": path})


# A task's cost: the sum over all its attempts (paid calls of lost attempts included).
_ATTEMPTS_COST = (
    sa.select(sa.func.coalesce(sa.func.sum(attempts.c.cost), 0.0))
    .where(attempts.c.task_id == tasks.c.task_id)
    .scalar_subquery()
)
# Built once: these run for every completed batch, and building a statement costs more CPU
# than the database spends executing it.
_IDS = sa.bindparam("ids", expanding=True)
_LOCK_CURRENT = (
    sa.select(tasks.c.task_id, tasks.c.lease_token, tasks.c.status, tasks.c.lane, tasks.c.bookcode,
              sa.exists().where(task_deps.c.depends_on == tasks.c.task_id).label("waited_on"))
    .where(tasks.c.task_id.in_(_IDS)).with_for_update(of=tasks)
)
_CLOSE_ATTEMPTS = (
    sa.update(attempts)
    .where(attempts.c.task_id.in_(_IDS), attempts.c.lease_token == sa.bindparam("tok"),
           attempts.c.outcome.is_(None))
    .values(outcome=Outcome.COMPLETED.value, finished_at=db_now())
)
_CLOSE_ATTEMPT = (
    sa.update(attempts)
    .where(attempts.c.task_id == sa.bindparam("tid"), attempts.c.lease_token == sa.bindparam("tok"))
    .values(outcome=Outcome.COMPLETED.value, finished_at=db_now(),
            cost=sa.func.coalesce(sa.bindparam("cost", type_=sa.Float), attempts.c.cost),
            output_bytes=sa.bindparam("bytes"),
            model=sa.func.coalesce(sa.bindparam("model", type_=sa.String), attempts.c.model),
            settings=sa.bindparam("settings", type_=attempts.c.settings.type))
)
_FINISH_TASKS = (
    sa.update(tasks)
    .where(tasks.c.task_id.in_(_IDS), tasks.c.lease_token == sa.bindparam("tok"))
    .values(status=sa.bindparam("st"), result=sa.bindparam("res", type_=tasks.c.result.type),
            output_path=sa.bindparam("path", type_=tasks.c.output_path.type), finished_at=db_now(),
            lease_expires_at=None, stage="done", progress=1.0, last_error=None, cost=_ATTEMPTS_COST)
)
_BOOK_FENCED_COST = (
    sa.update(attempts)
    .where(attempts.c.task_id == sa.bindparam("tid"), attempts.c.lease_token == sa.bindparam("tok"),
           attempts.c.cost.is_(None))
    .values(cost=sa.bindparam("cost", type_=sa.Float))
)


def _stale(conn: sa.Connection, task_id: str, token: str, worker_id: str | None, op: str) -> None:
    conn.execute(sa.insert(events).values(at=db_now(), kind="stale", task_id=task_id, worker_id=worker_id,
                                          lease_token=token, detail={"op": op}))


__all__ = ["Completion", "alert", "complete", "complete_many", "fail", "heartbeat", "heartbeat_many",
           "record_cost", "record_remote_job", "release_many",
           "dependency_outputs"]
