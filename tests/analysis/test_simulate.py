"""The planning simulator against the design's figures, failure streaks, sleep and seeding."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline_kit.analysis.simulate import Plan, parse_sleep, parse_streak, simulate
from pipeline_kit.errors import BadInput


def test_one_machine_takes_a_week() -> None:
    """1,029 shots x 10 min = 10,290 machine-minutes: about 7.1 days on one machine."""
    got = simulate(Plan(tasks=1029, minutes=10, machines=1)).to_dict()
    assert got["makespan_minutes"] == pytest.approx(10_290, rel=0.01)
    assert got["makespan_days"] == pytest.approx(7.1, rel=0.01)
    assert got["machine_minutes"] == pytest.approx(10_290, rel=0.01)


@pytest.mark.parametrize("strategy", ["dynamic", "static"])
def test_three_machines_take_57_hours(strategy: str) -> None:
    """On three equal machines the same work takes about 3,430 minutes (57 hours)."""
    got = simulate(Plan(tasks=1029, minutes=10, machines=3, strategy=strategy)).to_dict()
    assert got["makespan_minutes"] == pytest.approx(3_430, rel=0.01)
    assert got["makespan_hours"] == pytest.approx(57.2, rel=0.01)
    assert got["completed"] == {"A": 343, "B": 343, "C": 343}


def test_failure_streak_hurts_static_more() -> None:
    """20 failures on A: static waits on A (343 + 20 attempts = 3,630 min) while dynamic spreads
    the extra 200 machine-minutes (1,049 attempts / 3 -> 3,500 min)."""
    streak = (parse_streak("A:20", 3),)
    static = simulate(Plan(1029, 10, 3, strategy="static", fail_streaks=streak))
    dynamic = simulate(Plan(1029, 10, 3, strategy="dynamic", fail_streaks=streak))
    assert static.makespan_minutes == 3_630
    assert dynamic.makespan_minutes == 3_500
    for result in (static, dynamic):
        assert sum(result.to_dict()["completed"].values()) == 1029
        assert result.to_dict()["per_machine"]["A"]["failed_attempts"] == 20


def test_sleep_loses_the_task_and_dynamic_reclaims_it_after_the_lease() -> None:
    """B falls asleep mid-task at minute 605: the attempt is lost, and under dynamic claiming
    another machine takes the task once the 15-minute lease has run out (minute 620)."""
    plan = Plan(300, 10, 3, sleeps=(parse_sleep("B:605-720", 3),), lease=15)
    g = simulate(plan).schedule.gantt
    lost = g[g["outcome"] == "lost"]
    assert list(zip(lost["machine"], lost["end"], strict=True)) == [("B", 605.0)]
    task = int(lost["task"].iloc[0])
    retry = g[(g["task"] == task) & (g["outcome"] == "completed")]
    assert retry["start"].iloc[0] == 620 and retry["machine"].iloc[0] != "B"
    assert not ((g["machine"] == "B") & (g["start"] >= 605) & (g["start"] < 720)).any()
    assert g[g["outcome"] == "completed"]["task"].is_unique


def test_static_sleeper_restarts_its_own_task_on_waking() -> None:
    """Under a static split the sleeping machine's lost task waits for it to wake."""
    plan = Plan(300, 10, 3, strategy="static", sleeps=(parse_sleep("2:605-720", 3),))
    g = simulate(plan).schedule.gantt
    b = g[g["machine"] == "B"]
    assert list(b[b["outcome"] == "lost"]["end"]) == [605.0]
    assert 720.0 in set(b["start"]) and simulate(plan).makespan_minutes == 720 + 400


def test_seeded_runs_repeat_exactly() -> None:
    """The same plan and seed give the same schedule; another seed gives another."""
    plan = Plan(500, 10, 3, fail_rate=0.2, speeds=(1.0, 0.9, 1.1), seed=7)
    first, again = simulate(plan), simulate(plan)
    pd.testing.assert_frame_equal(first.schedule.gantt, again.schedule.gantt)
    other = simulate(Plan(500, 10, 3, fail_rate=0.2, speeds=(1.0, 0.9, 1.1), seed=8))
    assert not first.schedule.gantt.equals(other.schedule.gantt)


def test_speeds_scale_durations() -> None:
    """A machine of speed 2 finishes a 10-minute task in 5 minutes."""
    got = simulate(Plan(2, 10, 1, speeds=(2.0,)))
    assert got.makespan_minutes == 10


@pytest.mark.parametrize(
    "make",
    [
        lambda: Plan(10, 10, 0),
        lambda: Plan(10, 10, 3, speeds=(1.0, 1.0)),
        lambda: Plan(10, 10, 3, fail_rate=1.0),
        lambda: parse_streak("A20", 3),
        lambda: parse_streak("D:2", 3),
        lambda: parse_sleep("B:9-3", 3) and Plan(10, 10, 3, sleeps=(parse_sleep("B:9-3", 3),)),
    ],
)
def test_bad_plans_are_bad_input(make) -> None:  # type: ignore[no-untyped-def]
    """Invalid plans raise BadInput (exit 2 from the CLI), never a traceback or a hang."""
    with pytest.raises(BadInput):
        make()
