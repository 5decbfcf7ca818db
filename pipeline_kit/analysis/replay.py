"""Static split versus dynamic claiming, replayed from the real log (a counterfactual).

Each worker becomes a machine with its observed pace (speed) and its observed failures:
- pace: the median, over its completed attempts, of duration / the fleet's median duration for
  that lane and kind (2.0 = took twice as long as usual);
- failures: its finished attempts in claim order form a tape that the replay plays back (and
  repeats when it runs out); a failed, retried or lost entry costs its real duration and the
  task is tried again, a completed entry takes the task's work times the machine's pace.
A task's work is its completed duration divided by the completing worker's pace (or its lane
and kind's median when it never completed). The same tasks, in id order, are then scheduled
under both strategies from time 0 (see `schedule`); times are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline_kit.analysis import schedule
from pipeline_kit.analysis.duck import query
from pipeline_kit.analysis.load import RunLog

FAILURES = ("failed", "retried", "lost")


@dataclass(frozen=True, eq=False)
class Replay:
    """Both strategies' schedules for the observed tasks and workers, and the real makespan."""

    dynamic: schedule.Schedule
    static: schedule.Schedule
    machines: pd.DataFrame  # worker_id, pace, attempts, failures
    task_ids: tuple[str, ...]  # schedule task number -> task_id
    observed_makespan_s: float

    def makespans(self) -> pd.DataFrame:
        """Makespan in hours of the real run and of each strategy."""
        rows = [
            ("observed", self.observed_makespan_s),
            ("dynamic", self.dynamic.makespan),
            ("static", self.static.makespan),
        ]
        return pd.DataFrame({"run": [r for r, _ in rows], "makespan_h": [s / 3600 for _, s in rows]})


@dataclass
class _Tape:
    """A worker played back: its pace and its attempt outcomes in claim order."""

    name: str
    pace: float
    entries: list[tuple[str, float]]  # (outcome, seconds)
    played: int = 0

    def awake_at(self, t: float) -> float:
        return t

    def attempt(self, task: int, work: float, start: float) -> schedule.Try:
        outcome, seconds = self.entries[self.played % len(self.entries)]
        self.played += 1
        if outcome == schedule.COMPLETED:
            end = start + work * self.pace
        else:
            end = start + seconds
            outcome = schedule.LOST if outcome == "lost" else schedule.FAILED
        return schedule.Try(outcome, end, end)


def replay(log: RunLog) -> Replay | None:
    """Replay the log under both strategies; None when no attempt has finished yet."""
    att = query(
        """
        SELECT a.task_id, a.worker_id, a.outcome, a.claimed_at, a.finished_at, a.attempt_no,
               t.id, t.lane, t.kind,
               date_diff('microsecond', a.claimed_at, a.finished_at) / 1e6 AS seconds
        FROM a JOIN t USING (task_id)
        WHERE a.finished_at IS NOT NULL AND a.outcome IN ('completed', 'failed', 'retried', 'lost')
    """,
        a=log.attempts,
        t=log.tasks,
    )
    done = att[att["outcome"] == "completed"]
    if done.empty:
        return None
    typical = done.groupby(["lane", "kind"])["seconds"].median().rename("typical")
    done = done.join(typical, on=["lane", "kind"])
    ratio = (done["seconds"] / done["typical"]).where(done["typical"] > 0, 1.0)
    pace = ratio.groupby(done["worker_id"]).median()
    pace = pace.where(pace > 0, 1.0)
    machines = query(
        """
        SELECT worker_id, count(*) AS attempts,
               count(*) FILTER (outcome IN ('failed', 'retried', 'lost')) AS failures
        FROM att GROUP BY worker_id ORDER BY worker_id
    """,
        att=att,
    )
    machines["pace"] = machines["worker_id"].map(pace).fillna(1.0).astype(float)
    work = _work(att, done, pace, typical)
    order = att.sort_values(["claimed_at", "task_id", "attempt_no"], kind="stable")

    entries = {
        str(w): list(zip(g["outcome"].tolist(), g["seconds"].tolist(), strict=True))
        for w, g in order.groupby("worker_id", sort=True)
    }

    def tapes() -> list[_Tape]:
        return [
            _Tape(str(w), float(s), entries[str(w)])
            for w, s in zip(machines["worker_id"], machines["pace"], strict=True)
        ]

    tries = log.tasks["max_attempts"].dropna()
    limit = int(tries.median()) if len(tries) else None
    span = (att["finished_at"].max() - att["claimed_at"].min()).total_seconds()
    return Replay(
        dynamic=schedule.run("dynamic", list(work.values), tapes(), limit),
        static=schedule.run("static", list(work.values), tapes(), limit),
        machines=machines[["worker_id", "pace", "attempts", "failures"]],
        task_ids=tuple(str(t) for t in work.index),
        observed_makespan_s=float(span),
    )


def _work(att: pd.DataFrame, done: pd.DataFrame, pace: pd.Series, typical: pd.Series) -> pd.Series:
    """Seconds each attempted task needs on a machine of pace 1, indexed by task_id, id order."""
    first = done.sort_values(["task_id", "attempt_no"]).drop_duplicates("task_id")
    own = (first["seconds"] / first["worker_id"].map(pace)).set_axis(first["task_id"])
    tasks = (
        att[["task_id", "id", "lane", "kind"]]
        .drop_duplicates("task_id")
        .sort_values(["id", "task_id"])
        .join(typical, on=["lane", "kind"])
    )
    fallback = tasks["typical"].fillna(float(done["seconds"].median()))
    work = tasks["task_id"].map(own).fillna(fallback).set_axis(tasks["task_id"])
    return work.astype(float)
