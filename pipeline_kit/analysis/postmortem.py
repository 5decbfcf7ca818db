"""The whole metric set of one run, computed once for the report and the post-mortem notebook."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline_kit.analysis import charts, metrics, reliability
from pipeline_kit.analysis.load import RunLog
from pipeline_kit.analysis.replay import Replay, replay

# The replay is a Python event loop (~5 us an attempt per strategy); past this many attempts the
# report leaves it out and says so, keeping a million-task report within a minute.
REPLAY_MAX_ATTEMPTS = 1_000_000


@dataclass(frozen=True, eq=False)
class Postmortem:
    """Every metric of a run, as frames (and the ETA and the counterfactual replay)."""

    log: RunLog
    status: pd.DataFrame
    completed: pd.DataFrame
    throughput: pd.DataFrame
    durations: pd.DataFrame
    duration_stats: pd.DataFrame
    attempts_per_task: pd.DataFrame
    errors: pd.DataFrame
    outcomes: pd.DataFrame
    reclaims: pd.DataFrame
    heartbeats: reliability.HeartbeatGaps
    idle: pd.DataFrame
    costs: metrics.Costs
    queue: pd.DataFrame
    eta: metrics.Eta
    replay: Replay | None
    replay_note: str  # why there is no replay, when there is none

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every metric as a named table: the report's CSV files, in reading order."""
        out = {
            "status": self.status,
            "completed_per_pc": self.completed,
            "throughput": self.throughput,
            "duration_stats": self.duration_stats,
            "attempts_per_task": self.attempts_per_task,
            "errors_by_kind": self.errors,
            "outcomes_by_pc": self.outcomes,
            "reclaims": self.reclaims,
            "heartbeats": self.heartbeats.per_worker,
            "heartbeat_long_gaps": self.heartbeats.long_gaps,
            "idle_time": self.idle,
            "cost_by_shot": self.costs.by_shot,
            "cost_by_pc": self.costs.by_pc,
            "cost_by_lane": self.costs.by_lane,
            "cost_by_provider": self.costs.by_provider,
            "queue_depth": self.queue,
            "eta": eta_table(self.eta),
        }
        if self.replay is not None:
            out["replay_makespans"] = self.replay.makespans()
            out["replay_machines"] = self.replay.machines
        return out

    def figures(self) -> dict[str, charts.Chart]:
        """Every chart, named for its PNG file, or why it has nothing to show."""
        figs = {
            "completed_per_pc": charts.completed_per_pc(self.completed),
            "throughput": charts.throughput(self.throughput),
            "durations": charts.durations(self.durations),
            "errors": charts.errors(self.errors),
            "heartbeats": charts.heartbeats(
                self.heartbeats.per_worker, self.heartbeats.long_gaps, reliability.LONG_GAP_FACTOR, self.idle
            ),
            "idle": charts.idle(self.idle),
            "costs": charts.costs(self.costs),
            "queue_depth": charts.queue_depth(self.queue),
        }
        figs["replay_gantt"] = (
            charts.gantt([self.replay.static, self.replay.dynamic], title="replay, ")
            if self.replay is not None
            else charts.NothingToShow(self.replay_note)
        )
        return figs


def postmortem(log: RunLog, *, with_replay: bool | None = None) -> Postmortem:
    """Compute every metric of `log`; the replay runs when asked, or by default when the log
    has at most REPLAY_MAX_ATTEMPTS attempts."""
    if with_replay is None:
        with_replay = len(log.attempts) <= REPLAY_MAX_ATTEMPTS
    result = replay(log) if with_replay else None
    if result is not None:
        note = ""
    elif with_replay:
        note = "no attempt has completed yet, so there is nothing to replay"
    else:
        note = (
            f"the replay was left out: {len(log.attempts):,} attempts is more than the "
            f"{REPLAY_MAX_ATTEMPTS:,} a report replays; call "
            "pipeline_kit.analysis.replay.replay(log) to run it anyway."
        )
    return Postmortem(
        log=log,
        status=metrics.status_counts(log),
        completed=metrics.completed_per_pc(log),
        throughput=metrics.throughput(log),
        durations=metrics.durations(log),
        duration_stats=metrics.duration_stats(log),
        attempts_per_task=reliability.attempts_per_task(log),
        errors=reliability.errors_by_kind(log),
        outcomes=reliability.outcomes_by_pc(log),
        reclaims=reliability.reclaims(log),
        heartbeats=reliability.heartbeat_gaps(log),
        idle=reliability.idle_time(log),
        costs=metrics.costs(log),
        queue=metrics.queue_depth(log),
        eta=metrics.eta(log),
        replay=result,
        replay_note=note,
    )


def eta_table(eta: metrics.Eta) -> pd.DataFrame:
    """The ETA as a one-row table."""
    return pd.DataFrame(
        [
            {
                "remaining": eta.remaining,
                "window_hours": eta.window_hours,
                "completed_in_window": eta.completed_in_window,
                "rate_per_hour": eta.rate_per_hour,
                "hours_left": eta.hours_left,
                "finish_at": eta.finish_at,
            }
        ]
    )
