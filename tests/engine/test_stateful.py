"""A stateful property test: random claim / heartbeat / expire / complete / fail sequences
against a plain-Python model of what the engine promises, on every database."""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, events, tasks
from pipeline_kit.db.sqltime import now_plus
from pipeline_kit.engine import Ack, Completion, Status, TaskSpec
from pipeline_kit.engine.states import TRANSITIONS

NO_WAIT = engine.RetryPolicy(base_s=0.0, jitter=0.0)
MAX_ATTEMPTS = 3


@dataclass
class Model:
    status: str = "pending"
    token: str | None = None  # the current lease token (kept after completion)
    attempts: int = 0


@dataclass(frozen=True)
class Held:
    task_id: str
    token: str


@dataclass
class World:
    tasks: dict[str, Model] = field(default_factory=dict)


def machine_for(db: Database) -> type[RuleBasedStateMachine]:
    class EngineMachine(RuleBasedStateMachine):
        leases = Bundle("leases")

        def __init__(self) -> None:
            super().__init__()
            with db.engine.begin() as conn:
                for table in (events, attempts, tasks):
                    conn.execute(table.delete())
            self.world = World()
            self.n = 0
            self.seen: dict[str, str] = {}  # each task's status at the last check

        @rule(count=st.integers(1, 4))
        def enqueue(self, count: int) -> None:
            specs = []
            for _ in range(count):
                self.n += 1
                specs.append(TaskSpec(task_id=f"s{self.n}", kind="noop", lane="default", max_attempts=MAX_ATTEMPTS))
                self.world.tasks[f"s{self.n}"] = Model()
            with db.engine.begin() as conn:
                assert engine.enqueue(conn, specs).created == count

        @rule(target=leases, limit=st.integers(1, 3), worker=st.sampled_from(["a", "b"]))
        def claim(self, limit: int, worker: str) -> object:
            pending = [k for k, m in self.world.tasks.items() if m.status == "pending"]
            got = engine.claim(db, worker, ["default"], limit=limit, lease_s=60)
            assert len(got) == min(limit, len(pending))
            assert [lease.task_id for lease in got] == sorted(pending, key=lambda k: int(k[1:]))[: len(got)]
            for lease in got:
                model = self.world.tasks[lease.task_id]
                model.status, model.token = "processing", lease.token
                model.attempts += 1
                assert lease.attempt_no == model.attempts
            return multiple(*[Held(lease.task_id, lease.token) for lease in got])

        def _expected(self, held: Held) -> Ack:
            model = self.world.tasks[held.task_id]
            if model.token != held.token:
                return Ack.FENCED
            return Ack.ACCEPTED if model.status == "processing" else Ack.FENCED

        @rule(held=leases)
        def heartbeat(self, held: object) -> None:
            if not isinstance(held, Held):
                return
            assert engine.heartbeat(db, held.task_id, held.token, lease_s=60) is self._expected(held)

        @rule(held=leases)
        def complete(self, held: object) -> None:
            if not isinstance(held, Held):
                return
            model = self.world.tasks[held.task_id]
            want = self._expected(held)
            if model.token == held.token and model.status == "completed":
                want = Ack.DUPLICATE
            assert engine.complete(db, Completion(task_id=held.task_id, token=held.token)) is want
            if want is Ack.ACCEPTED:
                model.status = "completed"

        @rule(held=leases, retryable=st.booleans())
        def fail(self, held: object, retryable: bool) -> None:
            if not isinstance(held, Held):
                return
            model = self.world.tasks[held.task_id]
            want = self._expected(held)
            ack, status = engine.fail(db, held.task_id, held.token, error="x", retryable=retryable, policy=NO_WAIT)
            assert ack is want
            if want is Ack.ACCEPTED:
                model.status = "pending" if retryable and model.attempts < MAX_ATTEMPTS else "failed"
                assert status is Status(model.status)

        @rule(held=leases)
        def expire(self, held: object) -> None:
            """Time passes for one lease (its expiry is moved into the past), then the watchdog runs."""
            if not isinstance(held, Held):
                return
            with db.engine.begin() as conn:
                conn.execute(
                    sa.update(tasks)
                    .where(tasks.c.task_id == held.task_id, tasks.c.status == "processing")
                    .values(lease_expires_at=now_plus(-5))
                )
            reclaimed = {r.task_id for r in engine.reclaim_expired(db, by="test")}
            model = self.world.tasks[held.task_id]
            if model.status == "processing":
                assert reclaimed == {held.task_id}
                model.status = "failed" if model.attempts >= MAX_ATTEMPTS else "pending"
            else:
                assert reclaimed == set()

        @invariant()
        def database_matches_model(self) -> None:
            with db.engine.connect() as conn:
                rows = {
                    r.task_id: r for r in conn.execute(sa.select(tasks.c.task_id, tasks.c.status, tasks.c.attempts))
                }
                done = dict(
                    conn.execute(
                        sa.select(attempts.c.task_id, sa.func.count())
                        .where(attempts.c.outcome == "completed")
                        .group_by(attempts.c.task_id)
                    ).all()
                )
                open_ = set(conn.execute(sa.select(attempts.c.task_id).where(attempts.c.outcome.is_(None))).scalars())
            for task_id, model in self.world.tasks.items():
                assert (rows[task_id].status, rows[task_id].attempts) == (model.status, model.attempts), task_id
                assert done.get(task_id, 0) == (1 if model.status == "completed" else 0)
            assert open_ == {k for k, m in self.world.tasks.items() if m.status == "processing"}
            for task_id, row in rows.items():  # every move the engine made is an allowed transition
                before = self.seen.get(task_id, "pending")
                assert row.status == before or Status(row.status) in TRANSITIONS[Status(before)], (before, row.status)
                self.seen[task_id] = row.status

    return EngineMachine


def test_engine_matches_model(db: Database) -> None:
    """Whatever the order of claims, heartbeats, expiries, completions and failures, the database
    says what the model says: fenced writes change nothing, completion happens once, every
    processing task has exactly one open attempt."""
    run_state_machine_as_test(
        machine_for(db),
        settings=settings(
            max_examples=12 if db.dialect != "sqlite" else 25,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
