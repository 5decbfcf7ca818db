"""The admin screen's view-model on every database: counts, workers and their liveness,
expiring leases, problems, recent throughput, the database watched, and the retry / cancel /
pause / resume buttons."""

from __future__ import annotations

import html
import re

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from pipeline_kit import engine
from pipeline_kit.cli.engine_cmds import render_status
from pipeline_kit.db import Database, create
from pipeline_kit.db.connect import describe_url
from pipeline_kit.db.schema import attempts, tasks, workers
from pipeline_kit.db.sqltime import now_plus
from pipeline_kit.engine import Completion, TaskSpec
from pipeline_kit.engine.outages import vote_down
from pipeline_kit.ui.monitor import MonitorModel
from pipeline_kit.ui.monitor_view import monitor_screen


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
    engine.fail(
        db, bad.task_id, bad.token, error="bad prompt", error_kind="bad_request", retryable=False, worker_id="w1"
    )
    engine.complete(db, Completion(task_id=done.task_id, token=done.token), worker_id="w1")
    (run,) = engine.claim(db, "w1", ["default"], limit=1, lease_s=10)
    engine.heartbeat(db, run.task_id, run.token, lease_s=10, stage="generating")

    snap = MonitorModel(db, expiring_within_s=30).snapshot()
    assert (snap.counts["failed"], snap.counts["completed"], snap.counts["processing"], snap.counts["pending"]) == (
        1,
        1,
        1,
        1,
    )
    assert snap.total == 4 and snap.open == 2
    assert dict(next(r for r in snap.lanes if r.lane == "default").counts) == {
        "failed": 1,
        "completed": 1,
        "processing": 1,
        "pending": 1,
    }
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
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="x1", kind="noop", lane="default", bookcode="bk-x"),
                TaskSpec(task_id="y1", kind="noop", lane="default", bookcode="bk-y"),
            ],
        )
    for lease in engine.claim(db, "w1", ["default"], limit=2):
        engine.complete(db, Completion(task_id=lease.task_id, token=lease.token))
    snap = MonitorModel(db, "bk-x").snapshot()
    assert snap.total == 1 and snap.throughput.completed == 1
    assert MonitorModel(db).snapshot().throughput.completed == 2


def _seen_ago(db: Database, worker_id: str, seconds: float) -> None:
    with db.engine.begin() as conn:
        conn.execute(sa.update(workers).where(workers.c.worker_id == worker_id).values(last_seen_at=now_plus(-seconds)))


def test_snapshot_names_the_database_but_never_its_password(db: Database, db_url: str) -> None:
    """The screen says which database it watches (its host and name, or the SQLite file) and
    never a user's password, even when the URL carries one."""
    url = make_url(db_url)
    snap = MonitorModel(db).snapshot()
    assert snap.database == db.where and url.database and url.database in snap.database
    if url.host:
        assert url.host in snap.database
    screen = monitor_screen(MonitorModel(db), auto=False)
    assert html.escape(snap.database) in screen.clock.value
    if url.host:  # a URL with a password gives the same words, and never the password
        secret = create(url.set(password="s3cret-pw").render_as_string(hide_password=False))
        assert secret.where == snap.database and "s3cret" not in secret.where
    assert (
        describe_url("postgresql://pk:s3cret@films.example:6543/night?password=s3cret")
        == "PostgreSQL films.example:6543, database night"
    )


def test_rates_are_over_the_last_minutes_not_the_hour(db: Database) -> None:
    """Throughput counts attempts closed in the last few minutes and gives their rate per
    minute over that window; completions from half an hour ago count only in the hour."""
    _enqueue(db, *(f"t{i}" for i in range(4)))
    for lease in engine.claim(db, "w1", ["default"], limit=4):
        engine.complete(db, Completion(task_id=lease.task_id, token=lease.token), worker_id="w1")
    with db.engine.begin() as conn:
        conn.execute(
            sa.update(attempts).where(attempts.c.task_id.in_(["t0", "t1"])).values(finished_at=now_plus(-1800))
        )
    t = MonitorModel(db).snapshot().throughput
    assert t.window_s <= 600 and t.outcomes == {"completed": 2} and t.completed_last_hour == 4
    assert t.per_minute == round(2 / (t.window_s / 60), 2)


def test_not_responding_is_red_and_old_workers_fold(db: Database) -> None:
    """A worker silent for longer than its lease shows `not responding` in red; one not seen for
    a day is folded away (the screen says how many) until the toggle shows it."""
    for worker_id in ("fine", "silent", "gone"):
        engine.register_worker(db, worker_id, lanes=["default"], lease_s=10)
    _seen_ago(db, "silent", 60)
    _seen_ago(db, "gone", 3 * 24 * 3600)
    snap = MonitorModel(db).snapshot()
    assert {r.worker_id: r.state for r in snap.workers} == {"fine": "working", "silent": "not responding"}
    assert snap.folded_workers == 1
    screen = monitor_screen(MonitorModel(db), auto=False)
    assert '<span class="pk-bad">not responding</span>' in screen.workers.value
    assert "gone" not in screen.workers.value and "1 worker not seen for a day" in screen.folded.value
    screen.fold.value = True
    assert "gone" in screen.workers.value and screen.folded.value == ""


def test_a_paused_worker_and_a_provider_down_are_red(db: Database) -> None:
    """A worker paused on a provider shows `paused: PROVIDER unreachable since HH:MM` in red, as
    `status` does; a provider workers voted down is a red line under the workers, as in status."""
    engine.register_worker(db, "gpu", lanes=["default"], lease_s=60)
    engine.touch_worker(db, "gpu", "working", paused="comfyui at gpu:8188 unreachable")
    vote_down(db, "comfyui at gpu:8188", "gpu", "connection refused", hold_s=60)
    view = engine.overview(db)
    shown = engine.shown_state(view.workers["gpu"])
    assert shown is not None and re.fullmatch(r"paused: comfyui at gpu:8188 unreachable since \d\d:\d\d", shown)
    [down] = view.providers_down
    assert re.fullmatch(r"comfyui at gpu:8188 unreachable for 1 worker since \d\d:\d\d: connection refused", down)
    assert shown in render_status(view) and down in render_status(view)
    screen = monitor_screen(MonitorModel(db), auto=False)
    assert f'<span class="pk-bad">{html.escape(shown)}</span>' in screen.workers.value
    assert html.escape(down) in screen.down.value and "pk-bad" in screen.down.value
