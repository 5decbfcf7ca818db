"""The bench's pieces on their own: flag validation, the raw statement renderer, the goals."""

from __future__ import annotations

import pytest

from pipeline_kit.bench.config import build_config
from pipeline_kit.bench.goals import judge
from pipeline_kit.bench.peers import REPORT_FIGURES
from pipeline_kit.bench.raw import complete_statement
from pipeline_kit.bench.results import LatencyRow, ThroughputRow
from pipeline_kit.db import claims
from pipeline_kit.db.driver import prepare
from pipeline_kit.errors import BadInput


def test_quick_defaults_and_lists() -> None:
    quick = build_config(quick=True)
    assert quick.workers == (1, 2) and quick.runs == 1 and quick.latency_history == 0
    full = build_config(databases="SQLite, postgresql", workers="8,1,8", latency_rows="0")
    assert full.databases == ("sqlite", "postgresql") and full.workers == (8, 1) and full.latency_rows == ()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"workers": "0"},
        {"workers": "1,,2"},
        {"batches": "1001"},
        {"databases": "oracle"},
        {"databases": ","},
        {"tasks": 3},
    ],
)
def test_bad_values_are_bad_input(kwargs: dict[str, object]) -> None:
    with pytest.raises(BadInput):
        build_config(**kwargs)  # type: ignore[arg-type]


def test_a_run_drains_as_many_claims_at_every_batch_size_unless_tasks_is_given() -> None:
    """By default a run makes 2,000 claims (20,000 tasks at batch 10, as the peers' own runs), so
    a batch-10 run is not over in a tenth of a second; --tasks fixes the count for every batch."""
    full = build_config()
    assert [full.tasks_for(b) for b in (1, 10, 100)] == [2000, 20_000, 20_000]
    assert [build_config(tasks=500).tasks_for(b) for b in (1, 10)] == [500, 500]
    assert build_config(quick=True).tasks_for(10) == 1000


def test_raw_loop_runs_the_engines_claim_sql_rendered_for_each_driver() -> None:
    """The raw ceiling executes the engine's own claim text; lists bind as each driver takes them."""
    values = {"worker_id": "w", "token": "t", "lease_s": 5.0, "lanes": ["a", "b"]}
    sql, params = prepare("sqlite", claims.statements("sqlite", 10)["claim"], values)
    assert "INDEXED BY ix_tasks_eligible" in sql and "lane IN (:lanes_0, :lanes_1)" in sql and "LIMIT 10" in sql
    assert params == {"worker_id": "w", "token": "t", "lease_s": 5.0, "lanes_0": "a", "lanes_1": "b"}
    sql, params = prepare("postgresql", claims.statements("postgresql", 10)["claim_and_open"], values)
    assert "lane = ANY(%(lanes)s)" in sql and "FOR UPDATE SKIP LOCKED" in sql and params["lanes"] == ["a", "b"]
    sql, params = prepare("mysql", complete_statement("mysql"), {"ids": ["x", "y"], "token": "t"})
    assert "task_id IN %(ids)s AND lease_token = %(token)s" in sql and params["ids"] == ("x", "y")


def throughput_row(database: str, workers: int, engine: float, raw: float) -> ThroughputRow:
    return ThroughputRow(
        database=database,
        workers=workers,
        batch=10,
        tasks=100,
        runs=1,
        tasks_per_s=engine,
        tasks_per_s_min=engine,
        tasks_per_s_max=engine,
        raw_tasks_per_s=raw,
        raw_tasks_per_s_min=raw,
        raw_tasks_per_s_max=raw,
        ratio=engine / raw,
        minimal_tasks_per_s=raw * 2,
        minimal_tasks_per_s_min=raw * 2,
        minimal_tasks_per_s_max=raw * 2,
        minimal_ratio=engine / (raw * 2),
        cpu_ms_per_task=1.0,
        raw_cpu_ms_per_task=0.5,
        exactly_once=True,
        fairness=1.0,
    )


def _lat(pending: int, p50: float) -> LatencyRow:
    return LatencyRow(
        database="postgresql",
        pending=pending,
        completed=0,
        claims=10,
        p50_ms=p50,
        p95_ms=p50,
        raw_p50_ms=p50,
        raw_p95_ms=p50,
        seed_s=0.0,
    )


def test_goals_are_judged_from_measurements_only() -> None:
    goals = {
        g.goal.split(":")[0].split(" ")[0]: g
        for g in judge(
            [throughput_row("postgresql", 1, 900, 1000), throughput_row("postgresql", 2, 500, 1000)],
            [_lat(10_000, 1.0), _lat(1_000_000, 1.6)],
            REPORT_FIGURES,
        )
    }
    assert goals["engine"].met is False and "0.50" in goals["engine"].detail
    assert "no attempt history 0.25–0.45" in goals["engine"].detail  # the minimal floor shown beside
    assert goals["ahead"].met is False and "procrastinate x1: 900" in goals["ahead"].detail
    assert goals["postgresql"].met is False
    assert goals["every"].met is True
    assert judge([], [], REPORT_FIGURES)[1].met is None
