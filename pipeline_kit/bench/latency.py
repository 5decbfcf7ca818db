"""Single-client claim latency against a small and a large backlog (and a large history).

The backlog is bulk-inserted by SQL, statistics are refreshed, then one client times each
claim of one task (the whole engine.claim call: lane cache, claim statement, attempt row,
commit); the raw loop's claim (the same SQL, attempt row included) + commit is timed after it
on the same rows.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable

from pipeline_kit.bench.errors import BenchFailed
from pipeline_kit.bench.raw import LEASE_S, RawWorker
from pipeline_kit.bench.results import LatencyRow
from pipeline_kit.bench.scratch import reset, settle
from pipeline_kit.bench.workload import LANE, seed_rows
from pipeline_kit.db import create
from pipeline_kit.engine import LaneCache, claim

WARMUP = 20  # claims before timing: connections open, statements prepared


def measure(database: str, url: str, *, pending: int, completed: int, claims: int) -> LatencyRow:
    """Seed the backlog, then time `claims` engine claims and as many raw ones."""
    reset(url)
    db = create(url, pool_size=1)
    try:
        seed_s = seed_rows(db, pending=pending, completed=completed)
        settle(db)
        cache = LaneCache()
        engine_ms = _timed(lambda: claim(db, "latency", [LANE], limit=1, lease_s=LEASE_S, cache=cache), claims)
    finally:
        db.dispose()
    raw = RawWorker(url, 1)
    raw.prepare()
    try:
        raw_ms = _timed(lambda: raw.claim(uuid.uuid4().hex), claims)
    finally:
        raw.close()
    return LatencyRow(
        database=database,
        pending=pending,
        completed=completed,
        claims=claims,
        p50_ms=statistics.median(engine_ms),
        p95_ms=_p95(engine_ms),
        raw_p50_ms=statistics.median(raw_ms),
        raw_p95_ms=_p95(raw_ms),
        seed_s=seed_s,
    )


def _timed(call: Callable[[], object], count: int) -> list[float]:
    for _ in range(WARMUP):
        if not call():
            raise BenchFailed("the backlog ran out during warm-up")
    times: list[float] = []
    for _ in range(count):
        start = time.perf_counter()
        got = call()
        times.append((time.perf_counter() - start) * 1000)
        if not got:
            raise BenchFailed("the backlog ran out while timing claims")
    return times


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]
