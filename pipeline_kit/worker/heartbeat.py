"""A background thread that renews every lease the worker holds, with each task's stage."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from pipeline_kit import engine
from pipeline_kit.db.connect import Database
from pipeline_kit.engine import Ack
from pipeline_kit.plural import plural

STAGE_GAP_S = 1.0  # a new stage is written this soon, not at the next renewal (coalesced)
ERROR_LINE_EVERY_S = 60.0  # at most one line per minute about failing beats, however many fail


class Heartbeat:
    """Renews held leases every `every_s` seconds; remembers which leases were fenced.

    A fence belongs to one lease, (task_id, token), never to the task: the same worker may
    claim the task again later under a new token and must be free to finish it. A stage the
    worker reports reaches the database within STAGE_GAP_S, so an operator never reads
    `claimed` for a task that has been generating for a whole heartbeat interval.
    """

    def __init__(
        self,
        db: Database,
        worker_id: str,
        *,
        lease_s: float,
        every_s: float,
        on_error: Callable[[BaseException], None] | None = None,
        paused: Callable[[], str | None] = lambda: None,
    ) -> None:
        """`paused` says what the worker waits for (a provider, the store), shown on its row."""
        self.db, self.worker_id, self.lease_s, self.every_s = db, worker_id, lease_s, every_s
        self._paused = paused
        self._held: dict[str, str] = {}
        self._stages: dict[str, str] = {}
        self._fenced: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._staged = threading.Event()  # a stage changed since the last beat
        self._on_error = on_error or self._log_error
        self._errors = 0  # failed beats not yet reported
        self._last_report = -ERROR_LINE_EVERY_S
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{worker_id}", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._staged.set()
        self._thread.join(timeout=self.every_s + 5)

    def hold(self, task_id: str, token: str) -> None:
        with self._lock:
            self._held[task_id] = token

    def drop(self, task_id: str) -> None:
        with self._lock:
            self._held.pop(task_id, None)
            self._stages.pop(task_id, None)
            self._fenced = {f for f in self._fenced if f[0] != task_id}

    def is_fenced(self, task_id: str, token: str) -> bool:
        """Whether a renewal of this very lease was refused (a newer lease is never affected)."""
        with self._lock:
            return (task_id, token) in self._fenced

    def set_stage(self, task_id: str, stage: str) -> None:
        with self._lock:
            changed = self._stages.get(task_id) != stage
            self._stages[task_id] = stage
        if changed:
            self._staged.set()

    def nudge(self) -> None:
        """Write the worker's row within STAGE_GAP_S, not at the next renewal (it was paused or resumed)."""
        self._staged.set()

    def beat(self) -> None:
        """Renew every lease held now, or touch the worker row when none is held."""
        with self._lock:
            held, stages = dict(self._held), dict(self._stages)
        if not held:
            engine.touch_worker(self.db, self.worker_id, "idle", paused=self._paused())
            return
        acks = engine.heartbeat_many(self.db, self.worker_id, held, lease_s=self.lease_s, stages=stages)
        with self._lock:
            for task_id, ack in acks.items():
                if ack is Ack.FENCED:
                    self._fenced.add((task_id, held[task_id]))
                    if self._held.get(task_id) == held[task_id]:  # stop renewing a lease we lost
                        del self._held[task_id]
        engine.touch_worker(self.db, self.worker_id, "working", paused=self._paused())

    def _run(self) -> None:
        last = time.monotonic()
        while True:
            if self._staged.wait(max(last + self.every_s - time.monotonic(), 0.0)):
                # a new stage: write it soon, but not more often than every STAGE_GAP_S
                self._stop.wait(max(last + min(STAGE_GAP_S, self.every_s) - time.monotonic(), 0.0))
            if self._stop.is_set():
                return
            self._staged.clear()
            last = time.monotonic()
            try:
                self.beat()
            except Exception as exc:  # the database may be away: the next beat tries again
                self._on_error(exc)

    def _log_error(self, exc: BaseException) -> None:
        """One line on stderr per minute at most, counting the failures it stands for."""
        self._errors += 1
        if time.monotonic() - self._last_report < ERROR_LINE_EVERY_S:
            return
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        sys.stderr.write(
            f"{self.worker_id}: {plural(self._errors, 'heartbeat')} failed since the last report; "
            f"last: {type(exc).__name__}: {first}\n"
        )
        self._errors, self._last_report = 0, time.monotonic()
