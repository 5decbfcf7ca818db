"""What went wrong and where time was lost: retries, reclaimed leases, heartbeat gaps, idle time.

Failures are attempts whose outcome is failed, retried or lost; a lost lease without an error
kind counts under `lease_lost`. Frames come back sorted on their keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline_kit.analysis.duck import query
from pipeline_kit.analysis.load import RunLog

LONG_GAP_FACTOR = 3.0  # a heartbeat gap this many times the worker's median is worth a look


def attempts_per_task(log: RunLog) -> pd.DataFrame:
    """How many tasks needed 0, 1, 2, ... attempts (attempt rows per task)."""
    return query(
        """
        WITH n AS (SELECT t.task_id, count(a.task_id) AS attempts
                   FROM t LEFT JOIN a USING (task_id) GROUP BY t.task_id)
        SELECT attempts, count(*) AS tasks FROM n GROUP BY attempts ORDER BY attempts
    """,
        t=log.tasks,
        a=log.attempts,
    )


def errors_by_kind(log: RunLog) -> pd.DataFrame:
    """Failed, retried and lost attempts per error kind, and how many tasks each touched."""
    return query(
        """
        SELECT coalesce(error_kind, CASE WHEN outcome = 'lost' THEN 'lease_lost'
                                         ELSE 'unknown' END) AS error_kind,
               count(*) AS attempts, count(DISTINCT task_id) AS tasks
        FROM a WHERE outcome IN ('failed', 'retried', 'lost')
        GROUP BY 1 ORDER BY attempts DESC, error_kind
    """,
        a=log.attempts,
    )


def outcomes_by_pc(log: RunLog) -> pd.DataFrame:
    """Attempts per worker split by outcome, and the share that did not complete."""
    return query(
        """
        SELECT worker_id, count(*) AS attempts,
               count(*) FILTER (outcome = 'completed') AS completed,
               count(*) FILTER (outcome = 'retried') AS retried,
               count(*) FILTER (outcome = 'failed') AS failed,
               count(*) FILTER (outcome = 'lost') AS lost,
               count(*) FILTER (outcome = 'canceled') AS canceled,
               count(*) FILTER (outcome IS NULL) AS running,
               count(*) FILTER (outcome IN ('failed', 'retried', 'lost')) / count(*)
                   AS failure_rate
        FROM a GROUP BY worker_id ORDER BY worker_id
    """,
        a=log.attempts,
    )


def reclaims(log: RunLog) -> pd.DataFrame:
    """Every lost lease: who lost which task when, who reclaimed it, who took it over.

    `lost_by` is the attempt's worker, `reclaimed_by` the watchdog named in the first reclaim
    event for that task and worker after the claim, `taken_over_by` the next attempt's worker.
    """
    return query(
        """
        WITH lost AS (SELECT task_id, attempt_no, worker_id, claimed_at, finished_at
                      FROM a WHERE outcome = 'lost'),
             r AS (SELECT task_id, worker_id, "at", "by" FROM e WHERE kind = 'reclaim'),
             withr AS (SELECT lost.*, r."at" AS reclaim_at, r."by" AS reclaimed_by
                       FROM lost ASOF LEFT JOIN r
                       ON lost.task_id = r.task_id AND lost.worker_id = r.worker_id
                          AND r."at" >= lost.claimed_at),
             nxt AS (SELECT task_id, attempt_no, worker_id, claimed_at FROM a)
        SELECT coalesce(w.reclaim_at, w.finished_at) AS "at", w.task_id, w.attempt_no,
               w.worker_id AS lost_by, w.claimed_at AS lost_claimed_at, w.reclaimed_by,
               n.worker_id AS taken_over_by, n.claimed_at AS taken_over_at
        FROM withr w ASOF LEFT JOIN nxt n
             ON w.task_id = n.task_id AND n.attempt_no > w.attempt_no
        ORDER BY "at", w.task_id, w.attempt_no
    """,
        a=log.attempts,
        e=log.events,
    )


@dataclass(frozen=True, eq=False)
class HeartbeatGaps:
    """Per-worker heartbeat regularity, and the gaps long enough to explain a lost lease."""

    per_worker: pd.DataFrame  # worker_id, beats, first_beat, last_beat, median_gap_s, ...
    long_gaps: pd.DataFrame  # worker_id, gap_from, gap_to, gap_s


def heartbeat_gaps(log: RunLog, factor: float = LONG_GAP_FACTOR) -> HeartbeatGaps:
    """Gaps between a worker's consecutive heartbeat events; long ones exceed factor x median."""
    gaps = query(
        """
        WITH h AS (SELECT worker_id, "at" FROM e
                   WHERE kind = 'heartbeat' AND worker_id IS NOT NULL),
             g AS (SELECT worker_id, "at" AS gap_to,
                          lag("at") OVER (PARTITION BY worker_id ORDER BY "at") AS gap_from FROM h)
        SELECT worker_id, gap_from, gap_to,
               date_diff('microsecond', gap_from, gap_to) / 1e6 AS gap_s
        FROM g WHERE gap_from IS NOT NULL
    """,
        e=log.events,
    )
    per_worker = query(
        """
        WITH m AS (SELECT worker_id, count(*) AS gaps, median(gap_s) AS median_gap_s,
                          max(gap_s) AS max_gap_s FROM g GROUP BY worker_id),
             b AS (SELECT worker_id, count(*) AS beats, min("at") AS first_beat,
                          max("at") AS last_beat FROM e
                   WHERE kind = 'heartbeat' AND worker_id IS NOT NULL GROUP BY worker_id)
        SELECT b.worker_id, b.beats, b.first_beat, b.last_beat, m.median_gap_s, m.max_gap_s,
               (SELECT count(*) FROM g WHERE g.worker_id = b.worker_id
                                         AND g.gap_s > ? * m.median_gap_s) AS long_gaps
        FROM b LEFT JOIN m USING (worker_id) ORDER BY b.worker_id
    """,
        [factor],
        g=gaps,
        e=log.events,
    )
    long_gaps = query(
        """
        SELECT g.* FROM g JOIN p USING (worker_id) WHERE g.gap_s > ? * p.median_gap_s
        ORDER BY g.gap_from, g.worker_id
    """,
        [factor],
        g=gaps,
        p=per_worker,
    )
    return HeartbeatGaps(per_worker=per_worker, long_gaps=long_gaps)


def idle_time(log: RunLog) -> pd.DataFrame:
    """Per worker: its working span (first claim to last finish), time holding at least one
    attempt (the union of attempt intervals, so batch claims are not counted twice), and the rest
    as idle. A running attempt counts up to the log's latest time.
    """
    as_of = log.as_of
    return query(
        """
        WITH iv AS (SELECT worker_id, claimed_at AS s, coalesce(finished_at, ?::TIMESTAMP) AS e
                    FROM a WHERE claimed_at IS NOT NULL),
             o AS (SELECT *, max(e) OVER (PARTITION BY worker_id ORDER BY s, e
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end FROM iv),
             g AS (SELECT *, sum(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END)
                          OVER (PARTITION BY worker_id ORDER BY s, e ROWS UNBOUNDED PRECEDING)
                          AS grp FROM o),
             u AS (SELECT worker_id, grp, min(s) AS s, max(e) AS e FROM g GROUP BY worker_id, grp),
             w AS (SELECT worker_id, min(s) AS first_claim, max(e) AS last_finish,
                          sum(date_diff('microsecond', s, e)) / 1e6 AS busy_s FROM u
                   GROUP BY worker_id)
        SELECT worker_id, first_claim, last_finish,
               date_diff('microsecond', first_claim, last_finish) / 1e6 AS span_s, busy_s,
               date_diff('microsecond', first_claim, last_finish) / 1e6 - busy_s AS idle_s,
               coalesce((date_diff('microsecond', first_claim, last_finish) / 1e6 - busy_s)
                        / nullif(date_diff('microsecond', first_claim, last_finish) / 1e6, 0), 0)
                   AS idle_share
        FROM w ORDER BY worker_id
    """,
        [None if as_of is None else as_of.to_pydatetime()],
        a=log.attempts,
    )
