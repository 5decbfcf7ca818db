"""Planning simulator: how long would N shots take on K machines, and what do failures cost?

Each task takes `minutes / speed` on a machine. A failed attempt costs its full length (the
failure shows at the end, as a bad output or a timeout does) and the task is tried again. A
machine's failure streak fails its first COUNT attempts; `fail_rate` fails any attempt with that
probability (seeded). A sleeping machine starts nothing; the attempt it was running is lost and,
under dynamic claiming, free for another machine once the lease runs out (under a static split
the machine restarts it when it wakes). Everything is in minutes from the start.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from pipeline_kit.analysis import schedule
from pipeline_kit.errors import BadInput

DEFAULT_LEASE_MIN = 15.0
MAX_TASKS = 2_000_000
MAX_MACHINES = 500


@dataclass(frozen=True)
class Plan:
    """A validated simulation request."""

    tasks: int
    minutes: float
    machines: int
    strategy: str = "dynamic"
    speeds: tuple[float, ...] = ()  # one per machine; empty means all 1.0
    fail_streaks: tuple[tuple[int, int], ...] = ()  # (machine index, consecutive failures)
    fail_rate: float = 0.0
    sleeps: tuple[tuple[int, float, float], ...] = ()  # (machine index, from, to) minutes
    lease: float = DEFAULT_LEASE_MIN
    seed: int = 0

    def __post_init__(self) -> None:
        _check(1 <= self.tasks <= MAX_TASKS, f"--tasks must be 1..{MAX_TASKS}, got {self.tasks}")
        _check(0 < self.minutes <= 100_000, f"--minutes must be above 0, got {self.minutes}")
        _check(1 <= self.machines <= MAX_MACHINES, f"--machines must be 1..{MAX_MACHINES}, got {self.machines}")
        _check(self.strategy in schedule.STRATEGIES, f"--strategy must be dynamic or static, got {self.strategy!r}")
        _check(
            not self.speeds or len(self.speeds) == self.machines,
            f"--speeds needs one value per machine ({self.machines}), got {len(self.speeds)}",
        )
        _check(all(0 < s <= 100 for s in self.speeds), "--speeds must each be above 0 and at most 100")
        _check(0 <= self.fail_rate < 1, f"--fail-rate must be from 0 to below 1, got {self.fail_rate}")
        _check(self.lease > 0, f"--lease must be above 0 minutes, got {self.lease}")
        for index, count in self.fail_streaks:
            _check(0 <= index < self.machines, f"--fail-streak names machine {index + 1} of {self.machines}")
            _check(count >= 0, "--fail-streak COUNT must be 0 or more")
        for index, start, end in self.sleeps:
            _check(0 <= index < self.machines, f"--sleep names machine {index + 1} of {self.machines}")
            _check(0 <= start < end, f"--sleep window must be FROM-TO with FROM < TO, got {start:g}-{end:g}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(machine_name(i) for i in range(self.machines))


@dataclass(frozen=True, eq=False)
class SimResult:
    """One simulated run: the plan, its schedule and the headline figures."""

    plan: Plan
    schedule: schedule.Schedule

    @property
    def makespan_minutes(self) -> float:
        return self.schedule.makespan

    def to_dict(self) -> dict[str, Any]:
        """The JSON `simulate --json` prints."""
        g = self.schedule.gantt
        counts = g.groupby(["machine", "outcome"]).size()
        busy = (g["end"] - g["start"]).groupby(g["machine"]).sum()
        per = {
            name: {
                "completed": int(counts.get((name, schedule.COMPLETED), 0)),
                "failed_attempts": int(counts.get((name, schedule.FAILED), 0)),
                "lost_attempts": int(counts.get((name, schedule.LOST), 0)),
                "busy_minutes": round(float(busy.get(name, 0.0)), 6),
            }
            for name in self.plan.names
        }
        return {
            "strategy": self.plan.strategy,
            "tasks": self.plan.tasks,
            "machines": self.plan.machines,
            "minutes_per_task": self.plan.minutes,
            "seed": self.plan.seed,
            "makespan_minutes": round(self.makespan_minutes, 6),
            "makespan_hours": round(self.makespan_minutes / 60, 6),
            "makespan_days": round(self.makespan_minutes / 1440, 6),
            "machine_minutes": round(sum(p["busy_minutes"] for p in per.values()), 6),
            "attempts": len(g),
            "completed": {n: p["completed"] for n, p in per.items()},
            "per_machine": per,
        }


@dataclass
class _SimMachine:
    """A machine with a speed, a failure streak, a random failure rate and sleep windows."""

    name: str
    speed: float
    streak: int
    fail_rate: float
    sleeps: list[tuple[float, float]]
    lease: float
    rng: random.Random = field(repr=False)

    def awake_at(self, t: float) -> float:
        for start, end in self.sleeps:
            if start <= t < end:
                t = end
        return t

    def attempt(self, task: int, work: float, start: float) -> schedule.Try:
        end = start + work / self.speed
        for nap, _wake in self.sleeps:
            if start < nap < end:
                return schedule.Try(schedule.LOST, nap, nap + self.lease)
        failed = self.rng.random() < self.fail_rate if self.fail_rate else False
        if self.streak > 0:
            self.streak -= 1
            failed = True
        return schedule.Try(schedule.FAILED if failed else schedule.COMPLETED, end, end)


def simulate(plan: Plan) -> SimResult:
    """Run the plan; the same plan (seed included) always gives the same schedule."""
    rng = random.Random(plan.seed)
    streaks = dict(plan.fail_streaks)
    machines = [
        _SimMachine(
            name=name,
            speed=plan.speeds[i] if plan.speeds else 1.0,
            streak=streaks.get(i, 0),
            fail_rate=plan.fail_rate,
            sleeps=sorted((s, e) for m, s, e in plan.sleeps if m == i),
            lease=plan.lease,
            rng=rng,
        )
        for i, name in enumerate(plan.names)
    ]
    return SimResult(plan, schedule.run(plan.strategy, [plan.minutes] * plan.tasks, machines))


def compare(plan: Plan) -> dict[str, SimResult]:
    """The same plan under both strategies, static first."""
    return {s: simulate(replace(plan, strategy=s)) for s in ("static", "dynamic")}


def summary(results: dict[str, SimResult]) -> pd.DataFrame:
    """One row per result: makespan and completions per machine."""
    rows = []
    for name, result in results.items():
        d = result.to_dict()
        rows.append(
            {
                "run": name,
                "makespan_minutes": d["makespan_minutes"],
                "makespan_hours": d["makespan_hours"],
                "attempts": d["attempts"],
                **{f"completed_{m}": n for m, n in d["completed"].items()},
            }
        )
    return pd.DataFrame(rows)


def machine_name(index: int) -> str:
    """A, B, ..., Z, AA, AB, ...: how the design talks about PCs."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def parse_machine(text: str, machines: int) -> int:
    """A machine named by letter (A) or 1-based number (1) -> its 0-based index."""
    text = text.strip()
    names = [machine_name(i) for i in range(machines)]
    if text.isdigit():
        index = int(text) - 1
    else:
        index = names.index(text.upper()) if text.upper() in names else -1
    _check(0 <= index < machines, f"no machine {text!r} (use A..{machine_name(machines - 1)} or 1..{machines})")
    return index


def parse_speeds(text: str) -> tuple[float, ...]:
    """'1,0.9,1.1' -> (1.0, 0.9, 1.1)."""
    try:
        return tuple(float(p) for p in text.split(","))
    except ValueError:
        raise BadInput(f"--speeds must be numbers separated by commas, got {text!r}") from None


def parse_streak(text: str, machines: int) -> tuple[int, int]:
    """'A:20' -> (0, 20)."""
    m = re.fullmatch(r"\s*([^:]+):(\d+)\s*", text)
    _check(m is not None, f"--fail-streak must be MACHINE:COUNT like A:20, got {text!r}")
    assert m is not None
    return parse_machine(m.group(1), machines), int(m.group(2))


def parse_sleep(text: str, machines: int) -> tuple[int, float, float]:
    """'B:600-720' -> (1, 600.0, 720.0): machine B sleeps from minute 600 to 720."""
    m = re.fullmatch(r"\s*([^:]+):(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)\s*", text)
    _check(m is not None, f"--sleep must be MACHINE:FROM-TO in minutes like B:600-720, got {text!r}")
    assert m is not None
    return parse_machine(m.group(1), machines), float(m.group(2)), float(m.group(3))


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise BadInput(message)
