"""The admin screen's view-model on every database: counts, workers, expiring leases, problems,
throughput, and the retry / cancel / pause / resume buttons."""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import Completion, TaskSpec
from pipeline_kit.ui.monitor import MonitorModel


def _enqueue(db: Database, *keys: str, lane: str = "default") -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=k, kind="noop", lane=lane) for k in keys])


def _status(db: Database, task_id: str) -> str:
    with db.engine.connect() as conn:
        return str(conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar_one())


def test_snapshot_shows_counts_workers_expiring_failures_and_throughput(db: Database) -> None:
    """One failed-for-good, one done, one running on a short lease, one pending."""
    _enqueue(db, "t-bad", "t-done", "t-run", "t-wait")
    engine.register_worker(db, "w1", lanes=["default"])
    bad, done = engine.claim(db, "w1", ["default"], limit=2, lease_s=60)
    engine.fail(db, bad.task_id, bad.token, error="bad prompt", error_kind="bad_request", retryable=False,
                worker_id="w1")
    engine.complete(db, Completion(task_id=done.task_id, token=done.token), worker_id="w1")
    (run,) = engine.claim(db, "w1", ["default"], limit=1, lease_s=10)
    engine.heartbeat(db, run.task_id, run.token, lease_s=10, stage="generating")

    snap = MonitorModel(db, expiring_within_s=30).snapshot()
    assert (snap.counts["failed"], snap.counts["completed"], snap.counts["processing"],
            snap.counts["pending"]) == (1, 1, 1, 1)
    assert snap.total == 4 and snap.open == 2
    assert dict(next(r for r in snap.lanes if r.lane == "default").counts) == {
        "failed": 1, "completed": 1, "processing": 1, "pending": 1}
    (worker,) = snap.workers
    assert (worker.worker_id, worker.task_id, worker.stage, worker.completed) == ("w1", "t-run", "generating", 1)
    assert worker.heartbeat_age_s is not None and worker.heartbeat_age_s < 30
    assert [(e.task_id, e.worker_id) for e in snap.expiring] == [("t-run", "w1")]
    assert 0 < snap.expiring[0].lease_left_s <= 10
    assert [(f.task_id, f.status) for f in snap.failed] == [("t-bad", "failed")]
    assert "bad prompt" in snap.failed[0].detail
    assert snap.throughput.outcomes == {"completed": 1, "failed": 1}
    assert snap.throughput.completed == 1 and snap.throughput.per_minute > 0
    assert MonitorModel(db, expiring_within_s=5).snapshot().expiring == ()


def test_retry_cancel_and_lane_buttons(db: Database) -> None:
    """Retry puts a failed task back to pending; cancel blocks its dependents; pause stops claims."""
    _enqueue(db, "a")
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="b", kind="noop", lane="default", depends_on=("a",))])
    (lease,) = engine.claim(db, "w1", ["default"], limit=1)
    engine.fail(db, lease.task_id, lease.token, error="boom", retryable=False)
    model = MonitorModel(db)
    assert [b.task_id for b in model.snapshot().blocked] == ["b"]

    retried = model.retry("a")
    assert retried.ok and "pending" in retried.message and "1 dependent" in retried.message
    assert (_status(db, "a"), _status(db, "b")) == ("pending", "pending")
    again = model.retry("a")
    assert not again.ok and "only failed or canceled" in again.message
    assert not model.retry("nope").ok

    canceled = model.cancel("a")
    assert canceled.ok and _status(db, "a") == "canceled" and _status(db, "b") == "blocked"
    assert not model.cancel("a").ok

    assert model.pause("default").ok
    assert next(r for r in model.snapshot().lanes if r.lane == "default").paused
    _enqueue(db, "c")
    assert engine.claim(db, "w1", ["default"], limit=1) == []
    assert model.resume("default").ok
    assert [lease.task_id for lease in engine.claim(db, "w1", ["default"], limit=1)] == ["c"]
    assert not model.pause("no-such-lane").ok


def test_snapshot_scoped_to_a_book(db: Database) -> None:
    """With a bookcode, counts and throughput are that book's only."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="x1", kind="noop", lane="default", bookcode="bk-x"),
                              TaskSpec(task_id="y1", kind="noop", lane="default", bookcode="bk-y")])
    for lease in engine.claim(db, "w1", ["default"], limit=2):
        engine.complete(db, Completion(task_id=lease.task_id, token=lease.token))
    snap = MonitorModel(db, "bk-x").snapshot()
    assert snap.total == 1 and snap.throughput.completed == 1
    assert MonitorModel(db).snapshot().throughput.completed == 2
