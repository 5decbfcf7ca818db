"""The engine's contract, run against SQLite, PostgreSQL and MariaDB alike (the `db` fixture)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, events, tasks
from pipeline_kit.engine import Ack, Completion, Status, TaskSpec
from tests.engine.clock import backoffs_end, leases_run_out

ROOT = Path(__file__).resolve().parents[2]


def put(db: Database, n: int, lane: str = "default", prefix: str = "t", **kw: object) -> list[str]:
    specs = [TaskSpec(task_id=f"{prefix}{i}", kind="noop", lane=lane, **kw) for i in range(n)]  # type: ignore[arg-type]
    with db.engine.begin() as conn:
        engine.enqueue(conn, specs)
    return [s.task_id for s in specs]


def rows(db: Database, query: sa.Select) -> list[sa.Row]:  # type: ignore[type-arg]
    with db.engine.connect() as conn:
        return list(conn.execute(query))


def task(db: Database, task_id: str) -> sa.RowMapping:
    with db.engine.connect() as conn:
        return conn.execute(sa.select(tasks).where(tasks.c.task_id == task_id)).mappings().one()


def test_claim_order_is_priority_then_fifo(db: Database) -> None:
    """Higher priority first; within a priority the oldest task first."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id=k, kind="noop", lane="default", priority=p)
                for k, p in [("a", 0), ("b", 5), ("c", 0), ("d", 5)]
            ],
        )
    got = [lease.task_id for lease in engine.claim(db, "w", ["default"], limit=4)]
    assert got == ["b", "d", "a", "c"]


def test_claim_makes_processing_rows_with_token_and_attempt(db: Database) -> None:
    """A processing task has a worker, a lease token and expiry; its attempt row is open."""
    put(db, 3)
    leases = engine.claim(db, "w1", ["default"], limit=2, lease_s=30)
    assert len(leases) == 2 and len({lease.token for lease in leases}) == 1
    for lease in leases:
        row = task(db, lease.task_id)
        assert row["status"] == "processing" and row["worker_id"] == "w1"
        assert row["lease_token"] == lease.token and row["lease_expires_at"] is not None
        assert lease.attempt_no == 1
    opened = rows(db, sa.select(attempts.c.task_id, attempts.c.outcome, attempts.c.lease_token))
    assert sorted(r.task_id for r in opened) == sorted(lease.task_id for lease in leases)
    assert all(r.outcome is None for r in opened)


def test_business_key_dedup(db: Database) -> None:
    """Enqueueing the same key again is a no-op, not a duplicate, and leaves the first version."""
    with db.engine.begin() as conn:
        first = engine.enqueue(conn, [TaskSpec(task_id="k", kind="a", lane="default", params={"v": 1})])
    with db.engine.begin() as conn:
        again = engine.enqueue(conn, [TaskSpec(task_id="k", kind="a", lane="default", params={"v": 2})])
    assert (first.created, again.created, again.existing) == (1, 0, 1)
    assert task(db, "k")["params"] == {"v": 1}
    assert len(rows(db, sa.select(tasks.c.id))) == 1


def test_absent_json_values_are_sql_null(db: Database) -> None:
    """A task enqueued without params, and completed without a result, holds SQL NULL in both
    (not the JSON text 'null'), so `IS NULL` finds it; a lease still sees params as {}."""
    put(db, 1)
    (lease,) = engine.claim(db, "w", ["default"])
    assert lease.params == {}
    assert engine.complete(db, Completion(task_id="t0", token=lease.token)) is Ack.ACCEPTED
    found = rows(
        db, sa.select(sa.func.count()).select_from(tasks).where(tasks.c.params.is_(None), tasks.c.result.is_(None))
    )
    assert found[0][0] == 1


def test_bulk_enqueue_thousands_in_one_call(db: Database) -> None:
    """A bulk enqueue stores every task of the call."""
    put(db, 3000)
    assert rows(db, sa.select(sa.func.count()).select_from(tasks))[0][0] == 3000


def test_complete_is_idempotent_and_fenced_after_reclaim(db: Database) -> None:
    """Completing twice with the token writes nothing twice; a reclaimed lease's writes are rejected."""
    put(db, 1)
    (lease,) = engine.claim(db, "old", ["default"], lease_s=30)
    leases_run_out(db)
    assert [r.task_id for r in engine.reclaim_expired(db, by="test")] == ["t0"]
    (new,) = engine.claim(db, "new", ["default"], lease_s=30)
    assert new.attempt_no == 2 and new.token != lease.token
    # the old holder wakes up: heartbeat, completion and failure are all fenced
    assert engine.heartbeat(db, "t0", lease.token, lease_s=30, worker_id="old") is Ack.FENCED
    assert engine.complete(db, Completion(task_id="t0", token=lease.token, result={"by": "old"})) is Ack.FENCED
    assert engine.fail(db, "t0", lease.token, error="late")[0] is Ack.FENCED
    assert task(db, "t0")["status"] == "processing" and task(db, "t0")["worker_id"] == "new"
    done = Completion(task_id="t0", token=new.token, result={"by": "new"}, output_path="x.png")
    assert engine.complete(db, done) is Ack.ACCEPTED
    assert engine.complete(db, done) is Ack.DUPLICATE
    # the late result arrives after the new one: still rejected, the new result stands
    assert engine.complete(db, Completion(task_id="t0", token=lease.token, result={"by": "old"})) is Ack.FENCED
    row = task(db, "t0")
    assert row["status"] == "completed" and row["result"] == {"by": "new"} and row["attempts"] == 2
    outcomes = rows(db, sa.select(attempts.c.attempt_no, attempts.c.outcome).order_by(attempts.c.attempt_no))
    assert [(r.attempt_no, r.outcome) for r in outcomes] == [(1, "lost"), (2, "completed")]
    stale = rows(db, sa.select(events.c.detail).where(events.c.kind == "stale"))
    assert sorted(r.detail["op"] for r in stale) == ["complete", "complete", "fail", "heartbeat"]
    assert len(rows(db, sa.select(events.c.id).where(events.c.kind == "reclaim"))) == 1


def test_heartbeat_extends_the_lease(db: Database) -> None:
    """A heartbeating worker keeps its task past the original lease; the watchdog leaves it alone."""
    put(db, 1)
    (lease,) = engine.claim(db, "w", ["default"], lease_s=1.5)
    for _ in range(4):  # 2 s in all, past the first lease; each renewal has a second to spare
        time.sleep(0.5)
        assert engine.heartbeat(db, "t0", lease.token, lease_s=1.5, stage="generating_image") is Ack.ACCEPTED
    assert engine.reclaim_expired(db, by="test") == []
    assert task(db, "t0")["stage"] == "generating_image"
    acks = engine.heartbeat_many(db, "w", {"t0": lease.token}, lease_s=5)
    assert acks == {"t0": Ack.ACCEPTED}


def test_heartbeat_many_records_each_stage_and_fences_a_lost_lease(db: Database) -> None:
    """One renewal for all held tasks sets each one's own stage; a task whose lease was taken
    over is answered FENCED and keeps the new holder's stage."""
    put(db, 2)
    old = {le.task_id: le.token for le in engine.claim(db, "w", ["default"], limit=2, lease_s=30)}
    leases_run_out(db)
    assert len(engine.reclaim_expired(db, by="test")) == 2
    (theirs,) = engine.claim(db, "other", ["default"], limit=1, lease_s=30)
    assert theirs.task_id == "t0"
    engine.heartbeat(db, "t0", theirs.token, lease_s=30, stage="theirs")
    (mine,) = engine.claim(db, "w", ["default"], limit=1, lease_s=30)
    acks = engine.heartbeat_many(
        db, "w", {"t0": old["t0"], "t1": mine.token}, lease_s=30, stages={"t0": "mine?", "t1": "rendering"}
    )
    assert acks == {"t0": Ack.FENCED, "t1": Ack.ACCEPTED}
    assert task(db, "t0")["stage"] == "theirs" and task(db, "t1")["stage"] == "rendering"


def test_racing_watchdogs_reclaim_once(db: Database) -> None:
    """Several watchdogs running at once take each expired task back exactly once."""
    put(db, 20)
    engine.claim(db, "dead", ["default"], limit=20, lease_s=30)
    leases_run_out(db)
    results: list[list[str]] = []

    def run() -> None:
        results.append([r.task_id for r in engine.reclaim_expired(db, by=threading.current_thread().name)])

    threads = [threading.Thread(target=run, name=f"wd{i}") for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reclaimed = [t for r in results for t in r]
    assert sorted(reclaimed) == sorted(f"t{i}" for i in range(20))
    lost = rows(db, sa.select(attempts.c.task_id).where(attempts.c.outcome == "lost"))
    assert len(lost) == 20
    assert all(task(db, f"t{i}")["status"] == "pending" for i in range(20))


def test_transient_failure_backs_off_then_fails_for_good(db: Database) -> None:
    """Retryable errors return to pending after a backoff; past max_attempts the task fails with an alert."""
    put(db, 1, max_attempts=2)
    policy = engine.RetryPolicy(base_s=60, factor=2, jitter=0.0)
    (lease,) = engine.claim(db, "w", ["default"])
    ack, status = engine.fail(db, "t0", lease.token, error="HTTP 503", error_kind="server_error", policy=policy)
    assert (ack, status) == (Ack.ACCEPTED, Status.PENDING)
    assert engine.claim(db, "w", ["default"]) == []  # run_after is a minute away
    backoffs_end(db)
    (lease2,) = engine.claim(db, "w", ["default"])
    assert lease2.attempt_no == 2
    ack, status = engine.fail(db, "t0", lease2.token, error="HTTP 503", error_kind="server_error", policy=policy)
    assert status is Status.FAILED
    assert rows(db, sa.select(events.c.kind).where(events.c.kind == "alert", events.c.task_id == "t0"))
    outcomes = [r.outcome for r in rows(db, sa.select(attempts.c.outcome).order_by(attempts.c.attempt_no))]
    assert outcomes == ["retried", "failed"]


def test_permanent_failure_fails_at_once(db: Database) -> None:
    """A permanent error (bad input) fails the task on its first attempt."""
    put(db, 1, max_attempts=5)
    (lease,) = engine.claim(db, "w", ["default"])
    _, status = engine.fail(db, "t0", lease.token, error="missing prompt", error_kind="bad_request", retryable=False)
    assert status is Status.FAILED and task(db, "t0")["attempts"] == 1


def test_dependencies_block_and_release(db: Database) -> None:
    """A task runs only after its dependencies complete; a dependency failing for good blocks it
    until that dependency is retried and completes."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="a", kind="x", lane="default", max_attempts=1),
                TaskSpec(task_id="b", kind="x", lane="default", depends_on=("a",)),
                TaskSpec(task_id="c", kind="x", lane="default", depends_on=("b",)),
            ],
        )
    (lease,) = engine.claim(db, "w", ["default"], limit=5)
    assert lease.task_id == "a"
    engine.fail(db, "a", lease.token, error="boom", retryable=False)
    assert task(db, "b")["status"] == "blocked" and task(db, "c")["status"] == "blocked"
    assert engine.claim(db, "w", ["default"], limit=5) == []
    view = engine.overview(db)
    assert {p.task_id for p in view.blocked} == {"b", "c"} and view.failed[0].task_id == "a"
    assert sorted(engine.retry_task(db, "a")) == ["b", "c"]
    (lease,) = engine.claim(db, "w", ["default"], limit=5)
    assert lease.task_id == "a"
    engine.complete(db, Completion(task_id="a", token=lease.token))
    (lease,) = engine.claim(db, "w", ["default"], limit=5)
    assert lease.task_id == "b"


def test_cancel_and_reset_keep_history(db: Database) -> None:
    """Cancel fences the running worker; reset re-queues a task and its dependents, keeping attempts."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="a", kind="x", lane="default"),
                TaskSpec(task_id="b", kind="x", lane="default", depends_on=("a",)),
            ],
        )
    (la,) = engine.claim(db, "w", ["default"])
    engine.complete(db, Completion(task_id="a", token=la.token))
    (lb,) = engine.claim(db, "w", ["default"])
    with db.engine.begin() as conn:
        assert engine.reset_tasks(conn, ["a"], reason="prompt edited") == ["a", "b"]
    assert engine.complete(db, Completion(task_id="b", token=lb.token)) is Ack.FENCED
    assert task(db, "a")["status"] == "pending" and task(db, "b")["deps_remaining"] == 1
    assert len(rows(db, sa.select(attempts.c.id))) == 2
    (la2,) = engine.claim(db, "w", ["default"], limit=5)
    assert la2.task_id == "a" and la2.attempt_no == 2
    engine.cancel_task(db, "a")
    assert task(db, "b")["status"] == "blocked"
    assert engine.complete(db, Completion(task_id="a", token=la2.token)) is Ack.FENCED


def test_paused_lane_and_served_lanes(db: Database) -> None:
    """A worker claims only lanes it serves, and nothing from a paused lane."""
    put(db, 2, lane="image", prefix="i")
    put(db, 2, lane="video", prefix="v")
    assert {lease.lane for lease in engine.claim(db, "w", ["video"], limit=5)} == {"video"}
    engine.update_lane(db, "image", paused=True)
    assert engine.claim(db, "w", ["image"], limit=5) == []
    engine.update_lane(db, "image", paused=False)
    assert len(engine.claim(db, "w", ["image"], limit=5)) == 2


def test_expiry_on_fail_lane_alerts(db: Database) -> None:
    """On a lane whose expired leases mean failure, the watchdog fails the task and raises an alert."""
    engine.add_lane(db, "paid-video", on_expire="fail")
    put(db, 1, lane="paid-video")
    engine.claim(db, "w", ["paid-video"], lease_s=30)
    leases_run_out(db)
    (r,) = engine.reclaim_expired(db, by="test")
    assert r.new_status is Status.FAILED
    assert rows(db, sa.select(events.c.id).where(events.c.kind == "alert"))


def _spawn(url: str, worker: str, lanes: str, batch: int, hold: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.engine.racer", url, worker, lanes, str(batch), str(hold)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("batch", [1, 10])
def test_processes_racing_complete_every_task_once(db_url: str, db: Database, batch: int) -> None:
    """N processes racing over M tasks: each task completed exactly once, one completed attempt each."""
    put(db, 400)
    procs = [_spawn(db_url, f"p{i}", "default", batch, 0.0) for i in range(4)]
    outputs = [p.communicate(timeout=240)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    done = [line.split()[1] for out in outputs for line in out.splitlines()]
    assert sorted(done) == sorted(f"t{i}" for i in range(400))  # each exactly once
    counts = rows(db, sa.select(tasks.c.status, sa.func.count()).group_by(tasks.c.status))
    assert dict((r[0], r[1]) for r in counts) == {"completed": 400}
    per_task = rows(
        db,
        sa.select(attempts.c.task_id, sa.func.count())
        .where(attempts.c.outcome == "completed")
        .group_by(attempts.c.task_id),
    )
    assert len(per_task) == 400 and all(r[1] == 1 for r in per_task)


@pytest.mark.parametrize("limit", [1, 2])
def test_lane_limit_holds_across_processes(db_url: str, db: Database, limit: int) -> None:
    """A lane's max_running is never exceeded while several processes race for it (sampled)."""
    engine.update_lane(db, "llm", max_running=limit)
    put(db, 24, lane="llm")
    procs = [_spawn(db_url, f"p{i}", "llm", 3, 0.05) for i in range(4)]
    peak = 0
    while any(p.poll() is None for p in procs):
        running = rows(
            db,
            sa.select(sa.func.count()).select_from(tasks).where(tasks.c.lane == "llm", tasks.c.status == "processing"),
        )[0][0]
        peak = max(peak, running)
        time.sleep(0.005)
    assert all(p.returncode == 0 for p in procs)
    assert peak <= limit
    assert peak >= 1  # the sampler did see work in flight
    assert rows(db, sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status == "completed"))[0][0] == 24


def test_paid_lane_stops_when_the_book_budget_is_spent(db: Database) -> None:
    """A book's paid tasks stop being claimed once its attempts cost its budget (fenced and lost
    attempts count); other books and unpaid lanes go on."""
    from pipeline_kit.db.schema import books

    engine.add_lane(db, "paid-image", paid=True)
    with db.engine.begin() as conn:
        conn.execute(
            sa.insert(books),
            [
                {"bookcode": "b1", "title": "One", "lang": "en", "budget": 0.05, "review": False},
                {"bookcode": "b2", "title": "Two", "lang": "en", "budget": None, "review": False},
            ],
        )
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id=f"{b}-{i}", kind="x", lane=lane, bookcode=b)
                for b in ("b1", "b2")
                for i in range(2)
                for lane in ("paid-image",)
            ]
            + [TaskSpec(task_id="b1-free", kind="x", lane="default", bookcode="b1")],
        )
    (lease,) = engine.claim(db, "w", ["paid-image"], limit=1)
    assert lease.task_id == "b1-0"
    engine.record_cost(db, lease.task_id, lease.token, 0.05)
    engine.complete(db, Completion(task_id=lease.task_id, token=lease.token))
    got = [le.task_id for le in engine.claim(db, "w", ["paid-image", "default"], limit=10)]
    assert sorted(got) == ["b1-free", "b2-0", "b2-1"]
    assert task(db, "b1-0")["cost"] == pytest.approx(0.05)


def test_a_workers_cached_budget_check_stops_claims_within_its_lifetime(db: Database) -> None:
    """A worker re-reads spent budgets every ttl_s (summing attempts per claim is too dear):
    once that lifetime has passed, a book whose budget is spent gets no more paid claims."""
    from pipeline_kit.db.schema import books

    engine.add_lane(db, "paid-image", paid=True)
    with db.engine.begin() as conn:
        conn.execute(
            sa.insert(books), [{"bookcode": "b1", "title": "One", "lang": "en", "budget": 0.05, "review": False}]
        )
        engine.enqueue(
            conn, [TaskSpec(task_id=f"b1-{i}", kind="x", lane="paid-image", bookcode="b1") for i in range(3)]
        )
    cache = engine.LaneCache(ttl_s=0.3)
    (lease,) = engine.claim(db, "w", ["paid-image"], limit=1, cache=cache)
    engine.record_cost(db, lease.task_id, lease.token, 0.05)
    engine.complete(db, Completion(task_id=lease.task_id, token=lease.token))
    time.sleep(0.4)
    assert engine.claim(db, "w", ["paid-image"], limit=10, cache=cache) == []


def test_stale_lane_cache_cannot_break_a_pause_or_a_new_limit(db: Database) -> None:
    """A worker's cached lane settings may be seconds old; the claim itself re-checks the lanes
    table, so a just-paused lane yields nothing and a just-limited one no more than its limit."""
    put(db, 4, lane="image")
    cache = engine.LaneCache(ttl_s=3600)
    assert len(engine.claim(db, "w", ["image"], limit=1, cache=cache)) == 1  # cache: image unlimited
    engine.update_lane(db, "image", paused=True)
    assert engine.claim(db, "w", ["image"], limit=3, cache=cache) == []
    engine.update_lane(db, "image", paused=False, max_running=1)
    assert engine.claim(db, "w", ["image"], limit=3, cache=cache) == []  # one runs already: limit reached
    running = rows(db, sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status == "processing"))
    assert running[0][0] == 1
