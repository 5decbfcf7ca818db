"""The completions of a batch's quick tasks sent together: one write transaction, not one each.

A task made in under the worker's `quick_s` (QUICK_S by default) that booked no paid call hands
its completion to the group instead of sending it; the group is sent (task_run.py `send`: one
`complete_many`) at the end of the batch, before the next claim, on a stop, and before a task of
a kind that has not been quick on this worker runs, so a completion never waits behind a slow
task. A slow or paid task is sent at once, with the group (a crash never loses paid work). Each
task's reveal in the store and its count in the summary follow its group's send; until then the
heartbeat keeps its lease.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pipeline_kit.worker.task_end import TaskEnd
from pipeline_kit.worker.task_run import Made, Shared, TaskRun, send

QUICK_S = 0.05  # by default, a task made this fast may wait for its batch's end to be completed


class Grouped:
    """The loop's completions held back, and which kinds have been quick on this worker."""

    def __init__(self, shared: Shared, clock: Callable[[], float] = time.monotonic) -> None:
        self.shared, self._clock = shared, clock
        self._quick: dict[str, bool] = {}  # kind -> whether its last task here was quick
        self._held: list[Made] = []

    def run(self, run: TaskRun) -> list[TaskEnd]:
        """Run one task (after sending the group if its kind has not been quick here): how the
        tasks whose completions were sent meanwhile ended (none while its own is held)."""
        ends = [] if self._quick.get(run.lease.kind) else self.send()
        started = self._clock()
        made = run.make()
        quick = self._quick[run.lease.kind] = self._clock() - started < self.shared.cfg.quick_s
        if isinstance(made, TaskEnd):
            return [*ends, made]
        self._held.append(made)
        return ends if quick and not made.paid else [*ends, *self.send()]

    def send(self) -> list[TaskEnd]:
        """Send every completion held, in one transaction: how each task ended."""
        held, self._held = self._held, []
        return send(self.shared, held)
