"""Remote jobs in flight: a worker's tasks of remote-job kinds, up to N at once, a thread each.

A remote backend spends a task's minutes waiting on a service (submit, poll, download), so N
threads poll N jobs together while the worker loop goes on claiming. Each thread carries its
task through exactly as the loop would (generate, publish, complete), so fencing, spooling and
resumption stay per task; the loop only collects how each task ended (its `TaskEnd`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from pipeline_kit.worker.task_end import TaskEnd

MAX_INFLIGHT = 64  # remote jobs one worker may hold at once (a lease and a thread each)


class InFlight:
    """Up to `limit` tasks running on threads; with a limit of 1 nothing runs on a thread."""

    def __init__(self, limit: int, name: str) -> None:
        self.limit = limit
        self._pool = ThreadPoolExecutor(max_workers=limit, thread_name_prefix=f"inflight-{name}") if limit > 1 else None
        self._running: set[Future[TaskEnd]] = set()

    def __len__(self) -> int:
        return len(self._running)

    @property
    def enabled(self) -> bool:
        """Whether tasks may run beside the loop at all (--inflight above 1)."""
        return self._pool is not None

    def free(self) -> int:
        """How many more tasks may start now."""
        return self.limit - len(self._running)

    def start(self, task: Callable[[], TaskEnd]) -> None:
        """Run `task` (which returns how the task ended) on a thread of its own."""
        if self._pool is None or not self.free():
            raise RuntimeError("no free slot: check free() before start()")
        self._running.add(self._pool.submit(task))

    def finished(self, timeout: float | None = 0.0) -> list[TaskEnd]:
        """How the tasks that ended did so, waiting up to `timeout` (None: for ever) for
        one when none has; an exception a task raised (the database gone for good) rises here."""
        if not self._running:
            return []
        done, pending = wait(self._running, timeout=timeout, return_when=FIRST_COMPLETED)
        self._running = pending
        return [future.result() for future in done]

    def drain(self) -> list[TaskEnd]:
        """Wait for every task in flight to end; how each ended."""
        ends: list[TaskEnd] = []
        while self._running:
            ends += self.finished(timeout=None)
        return ends

    def close(self) -> None:
        """Let the tasks still running end (their leases stay renewed meanwhile), then stop."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
