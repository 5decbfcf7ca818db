"""Claim-to-complete throughput through the real engine API, with the raw ceilings side by side.

Each configuration (database, workers, batch) runs `runs` times; every run starts from a reset
scratch database, bulk-enqueues the tasks with engine.enqueue (timed), then forks the worker
processes. Engine, raw and minimal runs take turns, so machine noise hits all three alike.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from functools import partial

from pipeline_kit.bench.config import BenchConfig
from pipeline_kit.bench.procs import Worker, run_workers
from pipeline_kit.bench.raw import LEASE_S, MinimalWorker, RawWorker
from pipeline_kit.bench.results import EnqueueRow, Sample, ThroughputRow
from pipeline_kit.bench.scratch import redo_if_interrupted, reset, settle
from pipeline_kit.bench.workload import LANE, check, enqueue_tasks
from pipeline_kit.db import create
from pipeline_kit.engine import Ack, Completion, LaneCache, claim, complete_many

Progress = Callable[[str], None]


class EngineWorker:
    """What a no-op worker does: claim a batch, complete it in one complete_many, repeat."""

    def __init__(self, url: str, batch: int, index: int = 0) -> None:
        self.url, self.batch, self.worker_id = url, batch, f"bench-{index}"

    def prepare(self) -> None:
        self._db = create(self.url, pool_size=1)
        with self._db.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")
        self._cache = LaneCache()

    def run(self) -> int:
        total = 0
        while True:
            leases = claim(self._db, self.worker_id, [LANE], limit=self.batch, lease_s=LEASE_S, cache=self._cache)
            if not leases:
                return total
            acks = complete_many(
                self._db, [Completion(task_id=x.task_id, token=x.token) for x in leases], worker_id=self.worker_id
            )
            total += list(acks.values()).count(Ack.ACCEPTED)

    def close(self) -> None:
        self._db.dispose()


# The modes of a configuration, run in this order each round: what each forked worker runs.
WORKERS: dict[str, type[EngineWorker] | type[RawWorker]] = {
    "engine": EngineWorker,
    "raw": RawWorker,
    "minimal": MinimalWorker,
}


def one_run(
    url: str, mode: str, *, workers: int, batch: int, tasks: int, timeout_s: float, worker_url: str | None = None
) -> Sample:
    """Reset, enqueue, settle, drain with `workers` processes, check; one Sample. `worker_url`:
    the workers log in as another account (a worker account) than the one that sets up."""
    reset(url)
    db = create(url)
    try:
        enqueue_s = enqueue_tasks(db, tasks)
        settle(db)
    finally:
        db.dispose()  # no connection may cross the fork
    make: Callable[[int], Worker] = partial(WORKERS[mode], worker_url or url, batch)
    timed = run_workers(make, workers, timeout_s=timeout_s)
    db = create(url)
    try:
        found = check(db, timed.done)
    finally:
        db.dispose()
    return Sample(
        mode=mode,
        tasks=tasks,
        tasks_per_s=tasks / timed.seconds,
        enqueue_per_s=tasks / enqueue_s,
        cpu_ms_per_task=timed.cpu_s * 1000 / tasks,
        exactly_once=found.exactly_once(expect_attempt_rows=mode != "minimal"),
        per_worker=timed.per_worker,
    )


def throughput(
    database: str, url: str, config: BenchConfig, progress: Progress
) -> Iterator[tuple[ThroughputRow, list[Sample]]]:
    """Every (batch, workers) configuration of one database, engine, raw and minimal in turn."""
    for batch in config.batches:
        tasks = config.tasks_for(batch)
        for workers in config.workers:
            samples: list[Sample] = []
            for run in range(config.runs):
                for mode in WORKERS:
                    sample = redo_if_interrupted(
                        partial(
                            one_run,
                            url,
                            mode,
                            workers=workers,
                            batch=batch,
                            tasks=tasks,
                            timeout_s=config.run_timeout_s,
                        ),
                        url,
                        f"{database} workers={workers} batch={batch} {mode}",
                        progress,
                    )
                    samples.append(sample)
                    progress(
                        f"{database} workers={workers} batch={batch} run {run + 1}/{config.runs} "
                        f"{mode}: {sample.tasks_per_s:,.0f} tasks/s"
                        f"{'' if sample.exactly_once else ' EXACTLY-ONCE VIOLATED'}"
                    )
            yield _row(database, workers, batch, tasks, config.runs, samples), samples


def enqueue_rows(database: str, samples: list[Sample]) -> list[EnqueueRow]:
    """Median bulk-enqueue rate over every run of a database (each run enqueues once), per task count."""
    rows = []
    for tasks in sorted({s.tasks for s in samples}):
        rates = [s.enqueue_per_s for s in samples if s.tasks == tasks]
        rows.append(
            EnqueueRow(
                database=database,
                tasks=tasks,
                runs=len(rates),
                tasks_per_s=statistics.median(rates),
                tasks_per_s_min=min(rates),
                tasks_per_s_max=max(rates),
            )
        )
    return rows


def _row(database: str, workers: int, batch: int, tasks: int, runs: int, samples: list[Sample]) -> ThroughputRow:
    rates = {mode: [s.tasks_per_s for s in samples if s.mode == mode] for mode in WORKERS}
    cpu = {mode: statistics.median(s.cpu_ms_per_task for s in samples if s.mode == mode) for mode in WORKERS}
    eng, raw, low = rates["engine"], rates["raw"], rates["minimal"]
    shares = [min(s.per_worker) * workers / max(1, sum(s.per_worker)) for s in samples if s.mode == "engine"]
    return ThroughputRow(
        database=database,
        workers=workers,
        batch=batch,
        tasks=tasks,
        runs=runs,
        tasks_per_s=statistics.median(eng),
        tasks_per_s_min=min(eng),
        tasks_per_s_max=max(eng),
        raw_tasks_per_s=statistics.median(raw),
        raw_tasks_per_s_min=min(raw),
        raw_tasks_per_s_max=max(raw),
        ratio=statistics.median(eng) / statistics.median(raw),
        minimal_tasks_per_s=statistics.median(low),
        minimal_tasks_per_s_min=min(low),
        minimal_tasks_per_s_max=max(low),
        minimal_ratio=statistics.median(eng) / statistics.median(low),
        cpu_ms_per_task=cpu["engine"],
        raw_cpu_ms_per_task=cpu["raw"],
        exactly_once=all(s.exactly_once for s in samples),
        fairness=statistics.median(shares),
    )
