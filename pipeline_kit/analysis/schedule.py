"""The scheduling core shared by the counterfactual replay and the planning simulator.

A discrete-event run of identical machines' loops over a list of tasks, under one of two
strategies:
- dynamic: every free machine claims the lowest-numbered available task (FIFO, as the shared
  task table does); a failed task is available again when its attempt ends, a lost one when its
  lease has run out, and whoever is free first takes it;
- static: the tasks are cut into contiguous equal blocks, one per machine in order; a machine
  retries its own failed or lost task itself, so the rest of its block waits on it.
What an attempt does (how long it takes, whether it fails) is the machine model's business.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import pandas as pd

STRATEGIES = ("dynamic", "static")
COMPLETED, FAILED, LOST = "completed", "failed", "lost"


class Try(NamedTuple):
    """What one attempt did: its outcome, when it ended, and when its task is free again.

    A named tuple rather than a dataclass: the replay of a big log makes millions of them.
    """

    outcome: str  # completed | failed | lost
    end: float
    available_at: float  # for a lost task, end plus the lease; otherwise end


class Machine(Protocol):
    name: str

    def awake_at(self, t: float) -> float:
        """The earliest time >= t at which the machine can start an attempt."""

    def attempt(self, task: int, work: float, start: float) -> Try:
        """Run one attempt of `task` (of nominal length `work`) starting at `start`."""


@dataclass(frozen=True)
class Schedule:
    """Every attempt of one run, and what it adds up to."""

    strategy: str
    gantt: pd.DataFrame  # machine, task, start, end, outcome: one row per attempt
    machines: tuple[str, ...]
    gave_up: int  # tasks abandoned after max_attempts

    @property
    def makespan(self) -> float:
        return float(self.gantt["end"].max()) if len(self.gantt) else 0.0

    def completed(self) -> dict[str, int]:
        done = self.gantt[self.gantt["outcome"] == COMPLETED]
        counts = done.groupby("machine").size()
        return {m: int(counts.get(m, 0)) for m in self.machines}


def contiguous_blocks(n_tasks: int, n_machines: int) -> list[range]:
    """Split 0..n-1 into n_machines contiguous runs whose sizes differ by at most one."""
    base, extra = divmod(n_tasks, n_machines)
    blocks, start = [], 0
    for i in range(n_machines):
        size = base + (1 if i < extra else 0)
        blocks.append(range(start, start + size))
        start += size
    return blocks


def run(strategy: str, work: Sequence[float], machines: Sequence[Machine], max_attempts: int | None = None) -> Schedule:
    """Schedule tasks of the given nominal lengths on the machines; deterministic for a given
    machine state (ties go to the earlier-listed machine and the lower task number)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    log = _Attempts(len(work), max_attempts or 0)
    if strategy == "static":
        _static(work, machines, log)
    else:
        _dynamic(work, machines, log)
    names = [m.name for m in machines]
    outcomes, ends, _ = zip(*log.tried, strict=True) if log.tried else ((), (), ())
    gantt = pd.DataFrame(
        {
            "machine": pd.Categorical.from_codes(log.on, categories=names).astype(str),
            "task": pd.Series(log.tasks, dtype="int64"),
            "start": pd.Series(log.starts, dtype="float64"),
            "end": pd.Series(ends, dtype="float64"),
            "outcome": pd.Series(outcomes, dtype=object),
        }
    )
    gantt = gantt.sort_values(["start", "machine", "task"], kind="stable", ignore_index=True)
    return Schedule(strategy, gantt, tuple(names), log.gave_up)


class _Attempts:
    """Column lists of every attempt, plus the retry budget (a hot loop: plain lists)."""

    def __init__(self, n_tasks: int, limit: int) -> None:
        self.on: list[int] = []
        self.tasks: list[int] = []
        self.starts: list[float] = []
        self.tried: list[Try] = []
        self.failures = [0] * n_tasks
        self.limit = limit  # 0: no limit
        self.gave_up = 0

    def again(self, machine: int, task: int, start: float, t: Try) -> bool:
        """Log the attempt; True when the task needs another one."""
        self.on.append(machine)
        self.tasks.append(task)
        self.starts.append(start)
        self.tried.append(t)
        if t.outcome == COMPLETED:
            return False
        self.failures[task] += 1
        if self.limit and self.failures[task] >= self.limit:
            self.gave_up += 1
            return False
        return True


def _static(work: Sequence[float], machines: Sequence[Machine], log: _Attempts) -> None:
    """Each machine works through its own contiguous block, retrying its own failures."""
    for i, (m, block) in enumerate(zip(machines, contiguous_blocks(len(work), len(machines)), strict=True)):
        clock = 0.0
        for task in block:
            again = True
            while again:
                start = m.awake_at(clock)
                t = m.attempt(task, work[task], start)
                clock = t.end
                again = log.again(i, task, start, t)


def _dynamic(work: Sequence[float], machines: Sequence[Machine], log: _Attempts) -> None:
    """Free machines claim the lowest-numbered available task, as the shared table does."""
    push, pop = heapq.heappush, heapq.heappop
    fresh, n = 0, len(work)  # tasks never tried are fresh..n-1, in order
    back: list[int] = []  # failed or lost tasks that are available again (a heap)
    later: list[tuple[float, int]] = []  # (available_at, task) not yet available
    free = [(0.0, i) for i in range(len(machines))]
    while free:
        now, i = pop(free)
        m = machines[i]
        start = m.awake_at(now)
        if start > now:
            push(free, (start, i))
            continue
        while later and later[0][0] <= now:
            push(back, pop(later)[1])
        if back and (fresh >= n or back[0] < fresh):
            task = pop(back)
        elif fresh < n:
            task, fresh = fresh, fresh + 1
        else:
            if later:
                push(free, (later[0][0], i))
            continue
        t = m.attempt(task, work[task], now)
        if log.again(i, task, now, t):
            push(later, (t.available_at, task))
        push(free, (t.end, i))
