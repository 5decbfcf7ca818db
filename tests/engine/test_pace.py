"""The pace an operator reads, on every database: completions over the last 5 and 60 minutes
divided by the part of the window work covered (a run that began two minutes ago by two
minutes, never by five), each worker's own rate, an ETA at the recent rate, and a warning when
work is open and nothing completed for N minutes; `status --json` carries the same, and the
monitor's throughput divides by the same covered window."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts
from pipeline_kit.db.sqltime import now_plus
from pipeline_kit.engine import Completion, TaskSpec
from pipeline_kit.ui.monitor import MonitorModel


def _done(db: Database, worker_id: str, count: int, *, claimed_s: float, finished_s: float, tag: str) -> None:
    """`count` tasks claimed `claimed_s` seconds ago and completed `finished_s` seconds ago by `worker_id`."""
    ids = [f"{tag}-{i}" for i in range(count)]
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=t, kind="noop", lane="default") for t in ids])
    for lease in engine.claim(db, worker_id, ["default"], limit=count):
        engine.complete(db, Completion(task_id=lease.task_id, token=lease.token), worker_id=worker_id)
    with db.engine.begin() as conn:
        conn.execute(
            sa.update(attempts)
            .where(attempts.c.task_id.in_(ids))
            .values(claimed_at=now_plus(-claimed_s), finished_at=now_plus(-finished_s))
        )


def _open(db: Database, count: int) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"open-{i}", kind="noop", lane="default") for i in range(count)])


def test_a_run_begun_two_minutes_ago_divides_by_two(db: Database) -> None:
    """Six completions in a run that began 120 s ago: 3 a minute over both windows, not 1.2
    (over five minutes) or 0.1 (over the hour); the ETA is the open tasks at that rate."""
    _done(db, "pc-1", 6, claimed_s=120, finished_s=10, tag="a")
    _open(db, 30)
    pace = engine.overview(db).pace
    assert pace is not None
    for rate in (pace.last_5m, pace.last_60m):
        assert rate.completed == 6 and 115 <= rate.window_s <= 135, rate
        assert 2.6 <= rate.per_minute <= 3.2, rate
    assert pace.open_tasks == 30 and pace.eta_s is not None
    assert pace.eta_s == pytest.approx(30 / pace.last_5m.per_minute * 60, rel=0.01)
    assert not pace.stalled


def test_a_long_run_uses_the_whole_windows(db: Database) -> None:
    """Work that began hours ago: the 5-minute rate is over 300 s and the hour's over 3600 s."""
    _done(db, "pc-1", 1, claimed_s=7200, finished_s=1800, tag="old")
    _done(db, "pc-1", 10, claimed_s=400, finished_s=60, tag="new")
    pace = engine.overview(db).pace
    assert pace is not None
    assert (pace.last_5m.completed, pace.last_5m.window_s) == (10, 300.0)
    assert (pace.last_60m.completed, pace.last_60m.window_s) == (11, 3600.0)
    assert pace.last_5m.per_minute == 2.0


def test_each_worker_has_its_own_rate(db: Database) -> None:
    """Per worker: its completions over the window its own work covered."""
    _done(db, "fast", 8, claimed_s=240, finished_s=5, tag="f")
    _done(db, "slow", 2, claimed_s=240, finished_s=5, tag="s")
    workers = engine.overview(db).workers
    fast, slow = workers["fast"]["pace"]["last_5m"], workers["slow"]["pace"]["last_5m"]
    assert fast["completed"] == 8 and slow["completed"] == 2
    assert fast["per_minute"] == pytest.approx(4 * slow["per_minute"], rel=0.01)


def test_stall_warning_after_n_minutes(db: Database, db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Open work and the last completion 20 minutes ago: `status` warns (default 10 minutes),
    not with --stall-minutes 30; --json says `stalled` and gives no ETA (nothing lately at the
    5-minute rate, so the hour's is used)."""
    _done(db, "pc-1", 3, claimed_s=1500, finished_s=1200, tag="a")
    _open(db, 5)
    assert main(["--db", db_url, "status"]) == 0
    out = capsys.readouterr().out
    assert "warning: no task completed for 20" in out and "with 5 tasks open" in out, out
    assert main(["status", "--db", db_url, "--stall-minutes", "30"]) == 0
    assert "warning" not in capsys.readouterr().out
    assert main(["--db", db_url, "status", "--json"]) == 0
    pace = json.loads(capsys.readouterr().out)["pace"]
    assert pace["stalled"] is True and pace["open_tasks"] == 5 and 1150 <= pace["idle_s"] <= 1300
    assert pace["last_5m"]["completed"] == 0 and pace["last_60m"]["completed"] == 3
    assert pace["eta_s"] is not None and pace["eta_at"]


def test_nothing_done_yet_is_no_rate_and_no_stall(db: Database) -> None:
    """A split book no worker has touched: rates 0, no ETA, no stall warning (nothing ran)."""
    _open(db, 4)
    pace = engine.overview(db).pace
    assert pace is not None and pace.last_5m.per_minute == 0 and pace.eta_s is None
    assert pace.idle_s is None and not pace.stalled


def test_monitor_divides_by_the_window_covered(db: Database) -> None:
    """The admin screen's rate for a run begun two minutes ago is over about two minutes."""
    _done(db, "pc-1", 9, claimed_s=120, finished_s=10, tag="a")
    t = MonitorModel(db).snapshot().throughput
    assert 120 <= t.window_s <= 138 and t.completed == 9
    assert t.per_minute == round(9 / (t.window_s / 60), 2) and t.per_minute > 3.5
