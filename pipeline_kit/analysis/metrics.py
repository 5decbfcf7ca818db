"""Throughput, durations, cost, queue depth and ETA of a run, computed with DuckDB.

Every function takes a `RunLog` and returns a frame sorted on its key columns, so a report of the
same data is the same bytes. Attempts are the ledger: who did what, when, and what it cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline_kit.analysis import timescale
from pipeline_kit.analysis.duck import query
from pipeline_kit.analysis.load import RunLog

REMAINING = ("pending", "processing")  # states that still need a worker
ETA_WINDOW_HOURS = 6.0
QUEUE_POINTS = 5_000  # a longer queue series is thinned to the last state in as many time bins


def status_counts(log: RunLog) -> pd.DataFrame:
    """Tasks per status."""
    return query("SELECT status, count(*) AS tasks FROM t GROUP BY status ORDER BY status", t=log.tasks)


def completed_per_pc(log: RunLog) -> pd.DataFrame:
    """Completed attempts per worker and its share of all completions; every worker is named."""
    names = pd.DataFrame({"worker_id": pd.Series(log.worker_ids(), dtype="string")})
    return query(
        """
        WITH c AS (SELECT worker_id, count(*) AS n FROM a WHERE outcome = 'completed' GROUP BY 1)
        SELECT w.worker_id, coalesce(c.n, 0) AS completed,
               coalesce(c.n / nullif(sum(c.n) OVER (), 0), 0.0) AS share
        FROM w LEFT JOIN c USING (worker_id) ORDER BY w.worker_id
    """,
        w=names,
        a=log.attempts,
    )


def throughput(log: RunLog, bin_s: int | None = None) -> pd.DataFrame:
    """Completions per worker per time bin, zero-filled from the first bin to the last.

    Bins are `bin_s` seconds long (by default the round size fitted to the span of the
    completions, see timescale.bin_for) and aligned to the clock (5-minute bins start at :00,
    :05, ...); `bin_s` is a column too, so the CSV says what a row counts.
    """
    done = log.attempts[(log.attempts["outcome"] == "completed") & log.attempts["finished_at"].notna()]
    if bin_s is None:
        span = (done["finished_at"].max() - done["finished_at"].min()) if len(done) else None
        bin_s = timescale.bin_for(span.total_seconds() if span is not None else 0.0)
    return query(
        """
        WITH c AS (SELECT worker_id,
                          make_timestamp((epoch_us(finished_at) // ?) * ?) AS bin_start
                   FROM d),
             bins AS (SELECT unnest(generate_series(min(bin_start), max(bin_start),
                                                    to_seconds(?::DOUBLE))) AS bin_start FROM c),
             grid AS (SELECT bin_start, worker_id FROM bins, (SELECT DISTINCT worker_id FROM c))
        SELECT g.bin_start, ?::BIGINT AS bin_s, g.worker_id, count(c.bin_start) AS completed
        FROM grid g LEFT JOIN c ON c.bin_start = g.bin_start AND c.worker_id = g.worker_id
        GROUP BY ALL ORDER BY g.bin_start, g.worker_id
    """,
        [bin_s * 1_000_000, bin_s * 1_000_000, bin_s, bin_s],
        d=done,
    )


def durations(log: RunLog) -> pd.DataFrame:
    """Seconds of every completed attempt, with its task's lane and kind."""
    return query(
        """
        SELECT t.lane, t.kind, a.worker_id,
               date_diff('microsecond', a.claimed_at, a.finished_at) / 1e6 AS seconds
        FROM a JOIN t USING (task_id)
        WHERE a.outcome = 'completed' AND a.finished_at IS NOT NULL
        ORDER BY t.lane, t.kind, a.worker_id, seconds
    """,
        a=log.attempts,
        t=log.tasks,
    )


def duration_stats(log: RunLog) -> pd.DataFrame:
    """Distribution of completed-attempt seconds per lane and kind (count, mean, p50, p90, max)."""
    return query(
        """
        SELECT lane, kind, count(*) AS attempts, avg(seconds) AS mean_s, min(seconds) AS min_s,
               quantile_cont(seconds, 0.5) AS p50_s, quantile_cont(seconds, 0.9) AS p90_s,
               max(seconds) AS max_s
        FROM d GROUP BY lane, kind ORDER BY lane, kind
    """,
        d=durations(log),
    )


@dataclass(frozen=True, eq=False)
class Costs:
    """Spend summed over attempts (each attempt that reached the external call pays once)."""

    by_shot: pd.DataFrame
    by_pc: pd.DataFrame
    by_lane: pd.DataFrame
    by_provider: pd.DataFrame

    @property
    def total(self) -> float:
        return float(self.by_lane["cost"].sum())


def costs(log: RunLog) -> Costs:
    """Cost per shot, per worker and per lane, from the attempts' own cost column."""
    base = """SELECT coalesce(t.shot_id, '(none)') AS shot_id, t.lane, a.worker_id,
                     coalesce(a.cost, 0) AS cost FROM a JOIN t USING (task_id)"""

    def by(key: str) -> pd.DataFrame:
        return query(
            f"""SELECT {key}, count(*) AS attempts, sum(cost) AS cost FROM ({base})
                         GROUP BY {key} ORDER BY {key}""",
            a=log.attempts,
            t=log.tasks,
        )

    return Costs(by_shot=by("shot_id"), by_pc=by("worker_id"), by_lane=by("lane"), by_provider=cost_by_provider(log))


def cost_by_provider(log: RunLog) -> pd.DataFrame:
    """Spend per provider: the one an attempt's backend recorded, else its worker's backend(s),
    else "unknown" (the rule of engine/spend.py), costliest first."""
    return query(
        """SELECT coalesce(a.provider, w.backend, 'unknown') AS provider,
                           count(*) AS attempts, sum(coalesce(a.cost, 0)) AS cost
                    FROM a LEFT JOIN w USING (worker_id)
                    GROUP BY 1 ORDER BY cost DESC, provider""",
        a=log.attempts,
        w=log.workers,
    )


def queue_depth(log: RunLog, max_points: int = QUEUE_POINTS) -> pd.DataFrame:
    """Tasks queued, running, completed and failed after every change, as a step series.

    A task joins the queue when created (or when an operator retries or resets it), leaves it
    when claimed, and comes back when its attempt is retried or its lease is lost. Past
    `max_points` changes, the state at the end of each of `max_points` equal time bins is kept
    (changes are summed per bin before the running total, so a huge log stays cheap).
    """
    changes = len(log.tasks) + len(log.attempts) + int(log.attempts["finished_at"].notna().sum())
    binned = changes > max_points
    key = (
        """floor((epoch_us("at") - min(epoch_us("at")) OVER ()) * ?
                    / nullif(max(epoch_us("at")) OVER () - min(epoch_us("at")) OVER (), 0))"""
        if binned
        else '"at"'
    )
    return query(
        f"""
        WITH d("at", q, r, c, f) AS (
            SELECT created_at, 1, 0, 0, 0 FROM t
            UNION ALL SELECT "at", 1, 0, 0, 0 FROM e WHERE kind IN ('retry', 'reset')
            UNION ALL SELECT claimed_at, -1, 1, 0, 0 FROM a
            UNION ALL SELECT finished_at,
                   CASE WHEN outcome IN ('retried', 'lost') THEN 1 ELSE 0 END, -1,
                   CASE WHEN outcome = 'completed' THEN 1 ELSE 0 END,
                   CASE WHEN outcome = 'failed' THEN 1 ELSE 0 END
            FROM a WHERE finished_at IS NOT NULL),
        k AS (SELECT *, {key} AS k FROM d WHERE "at" IS NOT NULL),
        s AS (SELECT max("at") AS "at", sum(q) AS q, sum(r) AS r, sum(c) AS c, sum(f) AS f
              FROM k GROUP BY k)
        SELECT "at",
               (sum(q) OVER w)::BIGINT AS queued, (sum(r) OVER w)::BIGINT AS running,
               (sum(c) OVER w)::BIGINT AS completed, (sum(f) OVER w)::BIGINT AS failed
        FROM s WINDOW w AS (ORDER BY "at" ROWS UNBOUNDED PRECEDING) ORDER BY "at"
    """,
        [max_points - 1] if binned else [],
        t=log.tasks,
        a=log.attempts,
        e=log.events,
    )


@dataclass(frozen=True)
class Eta:
    """When the remaining tasks should be done at the fleet's recently observed rate."""

    remaining: int
    window_hours: float
    completed_in_window: int
    rate_per_hour: float
    hours_left: float | None  # None when nothing was completed in the window
    finish_at: pd.Timestamp | None


def eta(log: RunLog, window_hours: float = ETA_WINDOW_HOURS) -> Eta:
    """Remaining (pending + processing) tasks over completions per hour in the last window.

    The window is the last `window_hours` before the log's latest time, shortened to the span
    since the first claim when the run is younger than that.
    """
    remaining = int(log.tasks["status"].isin(REMAINING).sum())
    as_of = log.as_of
    done = log.attempts[log.attempts["outcome"] == "completed"]
    if as_of is None or log.attempts.empty:
        return Eta(remaining, 0.0, 0, 0.0, None, None)
    start = max(as_of - pd.Timedelta(hours=window_hours), log.attempts["claimed_at"].min())
    hours = (as_of - start).total_seconds() / 3600
    count = int((done["finished_at"] > start).sum())
    rate = count / hours if hours > 0 else 0.0
    if rate <= 0:
        return Eta(remaining, hours, count, 0.0, None, None)
    left = remaining / rate
    return Eta(remaining, hours, count, rate, left, as_of + pd.Timedelta(hours=left))
