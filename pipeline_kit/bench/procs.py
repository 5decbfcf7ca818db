"""Run one loop in N real worker processes, started together, and time them from outside.

Each process builds its own connections, warms up, then waits at a barrier; the clock runs
from the first process leaving the barrier to the last one finding the queue empty
(CLOCK_MONOTONIC is shared by all processes on Linux).
"""

from __future__ import annotations

import multiprocessing as mp
import queue as queue_mod
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pipeline_kit.bench.errors import BenchFailed

BARRIER_TIMEOUT_S = 120.0


class Worker(Protocol):
    """A benchmark loop: connect and warm up in prepare(), drain the queue in run()."""

    def prepare(self) -> None: ...

    def run(self) -> int: ...  # tasks it completed

    def close(self) -> None: ...


@dataclass(frozen=True)
class Timed:
    """What N processes did together."""

    done: int
    seconds: float  # first start to last finish
    cpu_s: float  # CPU time of the worker processes while they ran (the database server's not included)
    per_worker: tuple[int, ...]


def run_workers(make: Callable[[int], Worker], count: int, *, timeout_s: float) -> Timed:
    """Fork `count` processes, each running `make(index)`; returns their combined result.

    The caller must hold no open database connection (a forked child would share its socket).
    """
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(count + 1)
    results: Any = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(make, i, barrier, results), daemon=True) for i in range(count)]
    for proc in procs:
        proc.start()
    try:
        try:
            barrier.wait(timeout=BARRIER_TIMEOUT_S)
        except Exception:  # a child failed to start (it reports why below) or hung
            pass
        got = _collect(results, count, time.monotonic() + timeout_s)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
            proc.join(timeout=10)
    errors = [g[5] for g in got if g[5]]
    if errors:
        raise BenchFailed(f"benchmark worker failed: {errors[0]}")
    starts, ends = [g[2] for g in got], [g[3] for g in got]
    per = tuple(g[1] for g in sorted(got))
    return Timed(done=sum(per), seconds=max(ends) - min(starts), cpu_s=sum(g[4] for g in got), per_worker=per)


_Result = tuple[int, int, float, float, float, str]  # index, done, start, end, cpu seconds, error


def _collect(results: Any, count: int, deadline: float) -> list[_Result]:
    got: list[_Result] = []
    while len(got) < count:
        try:
            got.append(results.get(timeout=max(0.1, deadline - time.monotonic())))
        except queue_mod.Empty:
            raise BenchFailed(f"benchmark run timed out: {len(got)} of {count} workers finished") from None
    return got


def _child(make: Callable[[int], Worker], index: int, barrier: Any, results: Any) -> None:
    worker: Worker | None = None
    try:
        worker = make(index)
        worker.prepare()
        barrier.wait(timeout=BARRIER_TIMEOUT_S)
        start, cpu = time.monotonic(), time.process_time()
        done = worker.run()
        results.put((index, done, start, time.monotonic(), time.process_time() - cpu, ""))
    except BaseException as exc:  # report anything, so the parent never waits for nothing
        barrier.abort()
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        results.put((index, 0, 0.0, 0.0, 0.0, f"{type(exc).__name__}: {text}"[:500]))
    finally:
        if worker is not None:
            worker.close()
