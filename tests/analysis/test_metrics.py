"""Every metric against the hand-built log in conftest.py, whose answers are worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline_kit.analysis import metrics, reliability
from pipeline_kit.analysis.load import load, read_snapshot, snapshot
from pipeline_kit.db import Database

from .conftest import at


def rows(frame: pd.DataFrame, *cols: str) -> list[tuple]:
    return [tuple(r) for r in frame[list(cols)].itertuples(index=False)]


def test_completed_per_pc_names_every_worker(known_db: Database) -> None:
    """Completions are counted per worker with shares summing to 1; an idle worker shows 0."""
    got = metrics.completed_per_pc(load(known_db))
    assert rows(got, "worker_id", "completed", "share") == [("pc-a", 3, 0.6), ("pc-b", 2, 0.4), ("pc-c", 0, 0.0)]


def test_throughput_per_hour(known_db: Database) -> None:
    """Completions land in the clock hour they finished, per worker."""
    got = metrics.throughput(load(known_db), bin_s=3600)
    assert rows(got, "bin_start", "bin_s", "worker_id", "completed") == [
        (at(0), 3600, "pc-a", 1),
        (at(0), 3600, "pc-b", 1),
        (at(60), 3600, "pc-a", 2),
        (at(60), 3600, "pc-b", 1),
    ]


def test_throughput_bins_fit_the_run(known_db: Database) -> None:
    """Without a bin size, the bins fit the span of the completions (10..90 min -> 5 min
    bins, zero-filled between), so a short run is not one lonely hourly point."""
    got = metrics.throughput(load(known_db))
    assert set(got["bin_s"]) == {300}
    assert got["bin_start"].min() == at(10) and got["bin_start"].max() == at(90)
    assert got["completed"].sum() == 5 and len(got) == 17 * 2


def test_duration_stats_per_lane_and_kind(known_db: Database) -> None:
    """Only completed attempts count; quantiles interpolate (image: 600, 600, 900, 1200 s)."""
    got = metrics.duration_stats(load(known_db)).set_index(["lane", "kind"])
    image = got.loc[("image", "frame")]
    assert (image["attempts"], image["mean_s"], image["p50_s"]) == (4, 825, 750)
    assert (image["min_s"], image["max_s"]) == (600, 1200)
    assert image["p90_s"] == pytest.approx(1110)
    assert got.loc[("video", "clip"), "p50_s"] == 1800


def test_retries(known_db: Database) -> None:
    """Attempts per task include never-claimed tasks; a lost lease without an error kind counts as
    lease_lost; failure rates are per worker."""
    log = load(known_db)
    assert rows(reliability.attempts_per_task(log), "attempts", "tasks") == [(0, 1), (1, 4), (2, 2)]
    assert rows(reliability.errors_by_kind(log), "error_kind", "attempts") == [
        ("bad_request", 1),
        ("lease_lost", 1),
        ("timeout", 1),
    ]
    got = reliability.outcomes_by_pc(log)
    assert rows(got, "worker_id", "attempts", "completed", "retried", "failed", "lost", "failure_rate") == [
        ("pc-a", 4, 3, 0, 0, 1, 0.25),
        ("pc-b", 4, 2, 1, 1, 0, 0.5),
    ]


def test_reclaims_name_loser_reclaimer_and_successor(known_db: Database) -> None:
    """A lost lease names who lost it, when, the watchdog that took it back and the next holder."""
    got = reliability.reclaims(load(known_db))
    assert rows(got, "at", "task_id", "attempt_no", "lost_by", "reclaimed_by", "taken_over_by", "taken_over_at") == [
        (at(40), "t3", 1, "pc-a", "pc-b", "pc-b", at(40))
    ]


def test_heartbeat_gaps(known_db: Database) -> None:
    """Gaps are per worker; a gap over 3x the worker's median is listed as long."""
    got = reliability.heartbeat_gaps(load(known_db))
    assert rows(got.per_worker, "worker_id", "beats", "median_gap_s", "max_gap_s", "long_gaps") == [
        ("pc-a", 5, 60, 600, 1),
        ("pc-b", 3, 120, 120, 0),
    ]
    assert rows(got.long_gaps, "worker_id", "gap_from", "gap_to", "gap_s") == [("pc-a", at(3), at(13), 600)]


def test_idle_time_uses_union_of_attempts(known_db: Database) -> None:
    """Busy time is the union of a worker's attempt intervals; idle is the rest of its span."""
    got = reliability.idle_time(load(known_db))
    assert rows(got, "worker_id", "span_s", "busy_s", "idle_s") == [
        ("pc-a", 5400, 3600, 1800),
        ("pc-b", 4500, 3300, 1200),
    ]


def test_costs_per_shot_pc_and_lane(known_db: Database) -> None:
    """Every attempt's cost counts once, under its task's shot and lane and its own worker."""
    got = metrics.costs(load(known_db))
    assert rows(got.by_shot, "shot_id", "cost") == [("s1", 3.0), ("s2", 1.5), ("s3", 1.0), ("x1", 3.0)]
    assert rows(got.by_pc, "worker_id", "cost") == [("pc-a", 5.0), ("pc-b", 3.5)]
    assert rows(got.by_lane, "lane", "cost") == [("image", 6.5), ("video", 2.0)]
    assert got.total == 8.5


def test_queue_depth_steps(known_db: Database) -> None:
    """Created tasks queue, claims move them to running, a retried or lost attempt re-queues."""
    got = metrics.queue_depth(load(known_db)).set_index("at")
    assert tuple(got.loc[at(0)]) == (5, 2, 0, 0)
    assert tuple(got.loc[at(30)]) == (5, 0, 2, 0)  # t3's lease lost: back in the queue
    assert tuple(got.loc[at(75)]) == (2, 1, 3, 1)
    assert tuple(got.iloc[-1]) == (1, 0, 5, 1)  # t6 still pending


def test_eta_from_recent_rate(known_db: Database) -> None:
    """ETA = remaining / completions per hour in the window (5 in the 1.5 h run -> 0.3 h)."""
    got = metrics.eta(load(known_db))
    assert (got.remaining, got.completed_in_window, got.window_hours) == (1, 5, 1.5)
    assert got.hours_left == pytest.approx(0.3)
    assert got.finish_at == pd.Timestamp(at(108))


def test_book_filter(known_db: Database) -> None:
    """A book's log holds only its tasks, their attempts and the workers that touched them."""
    log = load(known_db, "bk1")
    assert sorted(log.tasks["task_id"]) == ["t1", "t2", "t3", "t4", "t5", "t6"]
    assert "t7" not in set(log.attempts["task_id"])
    assert log.worker_ids() == ["pc-a", "pc-b"]
    assert rows(metrics.completed_per_pc(log), "worker_id", "completed") == [("pc-a", 2), ("pc-b", 2)]


def test_snapshot_round_trip(known_db: Database, tmp_path: Path) -> None:
    """A Parquet snapshot reads back into frames equal to the loaded ones."""
    log = load(known_db)
    snapshot(log, tmp_path)
    back = read_snapshot(tmp_path)
    for name in ("tasks", "attempts", "events", "workers", "books"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(log, name))


def test_empty_database(sqlite_db: Database) -> None:
    """Every metric works on a database with no rows (a fresh init)."""
    log = load(sqlite_db)
    assert metrics.completed_per_pc(log).empty and reliability.idle_time(log).empty
    assert metrics.eta(log).hours_left is None


def test_key_metrics_on_every_dialect(known_any_db: Database) -> None:
    """SQLite, PostgreSQL and MariaDB logs give the same answers (times, types, JSON detail)."""
    log = load(known_any_db)
    assert rows(metrics.completed_per_pc(log), "worker_id", "completed") == [("pc-a", 3), ("pc-b", 2), ("pc-c", 0)]
    assert rows(reliability.reclaims(log), "lost_by", "reclaimed_by", "taken_over_by") == [("pc-a", "pc-b", "pc-b")]
    assert rows(reliability.idle_time(log), "busy_s") == [(3600,), (3300,)]
    assert metrics.costs(log).total == 8.5
    assert tuple(metrics.queue_depth(log).iloc[-1]) == (at(90), 1, 0, 5, 1)
    assert rows(load(known_any_db, "bk2").tasks, "task_id") == [("t7",)]


def test_queue_depth_thins_long_series(known_db: Database) -> None:
    """Past max_points changes the series keeps the last state of each equal time bin, ending
    with the true final state."""
    got = metrics.queue_depth(load(known_db), max_points=4)
    assert len(got) <= 4
    assert tuple(got.iloc[-1]) == (at(90), 1, 0, 5, 1)
    assert list(got["at"]) == sorted(got["at"])
