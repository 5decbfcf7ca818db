"""The worker loop each PC runs all night: claim, hand each task to its run, count how it ended, stop.

It joins the engine and the backends. Each claimed task is carried to its end by a `TaskRun`
(task_run.py: generate, publish, complete), which says how it ended (a `TaskEnd`); the loop
counts those in its `Summary`. The completions of quick tasks wait for the batch's end and go in
one transaction (grouped.py), so a batch of them costs two write transactions: its claim and its
completions. With `inflight` above 1, tasks whose backend waits on a remote
service run that many at once, each on its own thread (inflight.py), while the rest run one at a
time. The database going away pauses the loop (reconnect with backoff); the leases held are
renewed by the heartbeat thread; providers that turned calls away are left out of claims
(outages.py); a stop releases the batch's tasks not started yet.
"""

from __future__ import annotations

import functools
import os
import random
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline_kit import engine, fonts, kinds
from pipeline_kit.backends import Backend, get_backend
from pipeline_kit.backends.base import is_remote, provider
from pipeline_kit.backends.routing import KINDS, Router, Routing
from pipeline_kit.db.connect import Database
from pipeline_kit.db.wake import Waiter
from pipeline_kit.engine import Lease
from pipeline_kit.engine.outages import DEFAULT_QUORUM
from pipeline_kit.errors import DatabaseUnavailable, GenerationError
from pipeline_kit.faults import fault
from pipeline_kit.store import open_store
from pipeline_kit.worker.gateway import EngineGateway
from pipeline_kit.worker.heartbeat import Heartbeat
from pipeline_kit.worker.inflight import InFlight
from pipeline_kit.worker.outages import Backoff, Outages
from pipeline_kit.worker.progress import Progress, progress
from pipeline_kit.worker.reconnect import Reconnect, Reconnecting
from pipeline_kit.worker.spool import Spool
from pipeline_kit.worker.task_end import TaskEnd
from pipeline_kit.worker.grouped import QUICK_S, Grouped
from pipeline_kit.worker.task_run import Shared, TaskRun, spooled_answered
from pipeline_kit.worker.windows import Window
from pipeline_kit.plural import plural

IDLE_CHECK_S = 10.0  # how often an idle worker re-reads what it waits for
# A worker --until-empty whose open work all waits on lanes no live worker serves stops once it has
# had nothing to claim this long (the other PCs of a fleet started together register well within it).
STRANDED_AFTER_S = 60.0

# Kinds any worker performs itself, whatever backend it runs: kind -> backend name (a director
# task names its own chat protocol and model).
LOCAL_KINDS = kinds.local_makers()
# Where a worker makes its files when the store is not a folder of this PC (and --outputs is not given).
REMOTE_MADE = Path("data/outputs")

# The lanes a worker serves unless told otherwise (CLI and notebook alike): frames, clips, voices, films.
DEFAULT_LANES = ("image", "video", "voice", "assembly")


def default_heartbeat(lease_s: float) -> float:
    """Seconds between lease renewals when not given: a third of the lease, at most 20 s."""
    return min(20.0, lease_s / 3)


@dataclass(frozen=True, kw_only=True)
class WorkerConfig:
    worker_id: str
    lanes: tuple[str, ...] = DEFAULT_LANES
    backend: str = "sketch"
    batch: int = 1
    inflight: int = 1  # tasks of remote-job kinds held at once (local kinds: one at a time)
    until_empty: bool = False
    max_tasks: int | None = None
    max_minutes: float | None = None
    lease_s: float = 120.0
    heartbeat_s: float = 20.0
    uid: str | None = None
    hours: str | None = None  # availability window, e.g. "22-07"
    outputs: Path | None = None  # where outputs are made before publishing (default: in the store's
    # folder for a folder store, so publishing is a rename; data/outputs for a remote store)
    store: str | None = None  # this worker's store URL, over the database's setting
    cache: Path | None = None  # fetched inputs, by checksum (default: beside the outputs, data/cache)
    spool: Path = Path("data/spool")
    poll_s: float = 1.0
    watchdog_every_s: float = 15.0
    call_timeout_s: float = 300.0
    progress: bool = True
    quick_s: float = QUICK_S  # a task made faster than this may wait for its batch's end to complete (0: never)
    reconnect: Reconnect = field(default_factory=Reconnect)
    provider_backoff: Backoff = field(default_factory=Backoff)  # probes of a provider that turned calls away
    fleet_quorum: int = DEFAULT_QUORUM  # workers that must find a provider down to pause it fleet-wide


@dataclass
class Summary:
    worker_id: str
    counts: Counter[TaskEnd] = field(default_factory=Counter)
    cost: float = 0.0
    reclaimed: int = 0
    seconds: float = 0.0
    stopped_by: str = ""
    waiting: dict[str, int] = field(default_factory=dict)  # pending tasks in lanes not served
    awaiting_review: int = 0  # outputs left waiting for a person when the worker stopped

    def line(self) -> str:
        parts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        review = (
            f"; {plural(self.awaiting_review, 'frame')} {'needs' if self.awaiting_review == 1 else 'need'} "
            "your review (the rest waits on them)"
            if self.awaiting_review
            else ""
        )
        line = (
            f"{self.worker_id}: {parts or 'no tasks'} in {self.seconds:.1f} s, cost {self.cost:.2f}, "
            f"reclaimed {plural(self.reclaimed, 'expired lease')}; stopped: {self.stopped_by}{review}"
        )
        if self.waiting:
            lanes = ",".join(self.waiting)
            line += (
                "\npending work waits in lanes this worker does not serve: "
                + ", ".join(f"{lane} ({n} tasks)" for lane, n in self.waiting.items())
                + f"; serve them with `pipeline-kit work --lanes {lanes}` (or add them to --lanes)"
            )
        return line


class Worker:
    """The loop: claim, hand each task to its `TaskRun`, count how it ended, stop (task_run.py
    carries one task; this class holds what the runs share and the worker's own housekeeping)."""

    def __init__(
        self, db: Database, cfg: WorkerConfig, backend: Backend | None = None, router: Router | None = None
    ) -> None:
        """`router` is one the caller already built and checked (each backend is built once)."""
        self.db, self.cfg = db, cfg
        if router is None:
            router = Router.single(backend) if backend else Router(Routing.parse(cfg.backend))
            router.check()
        self.router = router
        self.window = Window.parse(cfg.hours) if cfg.hours else None
        self.stop_event = threading.Event()
        self.waiter = Waiter(db, self.stop_event)
        self.summary = Summary(cfg.worker_id)
        # every database and store call waits out an outage, until a stop
        self.retry = Reconnecting(cfg.reconnect, self.stop_event, self._store_paused)
        self.engine = EngineGateway(db, cfg.worker_id, self.retry)
        self.outages = Outages(
            self.engine,
            cfg.worker_id,
            backoff=cfg.provider_backoff,
            quorum=cfg.fleet_quorum,
            backends=self._backends,
            nudge=lambda: self.heartbeat.nudge(),
        )
        self._store_note: str | None = None  # why a store call waits, while it does
        self.heartbeat = Heartbeat(
            db, cfg.worker_id, lease_s=cfg.lease_s, every_s=cfg.heartbeat_s, paused=self._paused_note
        )
        self.spool = Spool(cfg.spool, cfg.worker_id)
        self.lane_cache = engine.LaneCache()
        self._local: dict[str, Backend] = {}
        self._spent = threading.Lock()  # summary.cost is added to from every task's thread
        # Held from reading the paused kinds to holding the claimed rows, and by a turned-away call
        # while it pauses: a task given back after its pause is never claimed by a claim that read
        # the kinds before it.
        self._claiming = threading.Lock()
        self.flight = InFlight(cfg.inflight, cfg.worker_id)
        self._last_watchdog = -1e9
        self._idle_checked, self._idle_said = -1e9, ""  # when an idle worker last said so, and what
        self._dry_since: float | None = None  # since when nothing was claimable (see _unserved)
        self._stranded_checked = -1e9

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> Summary:
        started = time.monotonic()
        engine.require_lanes(self.db, list(self.cfg.lanes))
        waiting = self.engine.open_kinds(self.cfg.lanes)
        self.router.check({k: lane for k, lane in waiting.items() if k not in LOCAL_KINDS})
        store = self.retry(
            "store",
            open_store,
            self.db,
            override=self.cfg.store,
            cache=self.cfg.cache or (self.cfg.outputs or REMOTE_MADE).parent / "cache",
        )
        shared = Shared(
            engine=self.engine,
            cfg=self.cfg,
            store=store,
            made_in=self.cfg.outputs or (store.root / "outputs" if store.root else REMOTE_MADE),
            heartbeat=self.heartbeat,
            outages=self.outages,
            spool=self.spool,
            claiming=self._claiming,
            retry=self.retry,
            backend_for=self._backend_for,
            add_cost=self._add_cost,
        )
        self.engine.register(
            self.cfg.lanes, uid=self.cfg.uid, backend=self.router.routing.names()[:64], lease_s=self.cfg.lease_s
        )
        self._warn_missing_font()
        self._flush_spool(shared)
        self.heartbeat.start()
        bar = progress(self.cfg.worker_id, enabled=self.cfg.progress)
        try:
            self.summary.stopped_by = self._loop(started, bar, shared)
        except DatabaseUnavailable:
            if not self.stop_event.is_set():
                raise
            self.summary.stopped_by = "signal, while the database was unreachable"
        finally:
            self.flight.close()  # tasks still in flight end while their leases are renewed
            bar.close()
            self.waiter.close()
            self.heartbeat.stop()
            try:
                engine.touch_worker(self.db, self.cfg.worker_id, "stopped")
            except Exception:  # the database may be away at exit; the row just ages
                pass
            self.summary.seconds = time.monotonic() - started
        return self.summary

    def _loop(self, started: float, bar: Progress, shared: Shared) -> str:
        done = 0
        grouped = Grouped(shared)

        def tally(ends: list[TaskEnd]) -> None:
            nonlocal done
            for end in ends:
                self.summary.counts[end] += 1
                done += 1
                bar.update(1)

        while True:
            tally(self.flight.finished())
            stop = self._stop_reason(started, done + len(self.flight))
            if stop:
                tally(self.flight.drain())  # jobs in flight are finished, like the current task
                return stop
            if self.window and not self.window.is_open(datetime.now()):
                if self.cfg.until_empty:
                    tally(self.flight.drain())
                    return "window closed"
                self.stop_event.wait(30)
                continue
            self._maybe_watchdog()
            self.outages.probe()
            want = self.cfg.batch if not self.flight.enabled else min(self.cfg.batch, self.flight.free())
            if self.cfg.max_tasks is not None:
                want = min(want, self.cfg.max_tasks - done - len(self.flight))
            if want <= 0:  # every slot holds a remote job: wait for one to end
                tally(self.flight.finished(timeout=self.cfg.poll_s))
                continue
            with self._claiming:
                leases = self.engine.claim(
                    self.cfg.lanes,
                    limit=want,
                    lease_s=self.cfg.lease_s,
                    cache=self.lane_cache,
                    skip_kinds=self._held_kinds(),
                )
            if not leases:
                if len(self.flight):  # nothing to claim yet: look again when a job ends, or soon
                    tally(self.flight.finished(timeout=self.cfg.poll_s * random.uniform(0.8, 1.2)))
                    continue
                left = None
                if self.cfg.until_empty:  # one look at the open work a pass
                    unserved = self._unserved()
                    work = self.engine.open_work(self.cfg.lanes, unserved=list(unserved))
                    if not work.left:
                        self.summary.waiting = self.engine.pending_elsewhere(self.cfg.lanes)
                        self.summary.awaiting_review = self.engine.review_count()
                        return "empty"
                    if unserved and work.stranded == work.left:
                        self.summary.waiting = unserved
                        self.summary.awaiting_review = self.engine.review_count()
                        return "what is left waits on lanes no worker serves"
                    left = work.left
                self._say_idle(bar, left)
                self.waiter.wait(self.cfg.poll_s * random.uniform(0.8, 1.2))
                continue
            self._dry_since = None
            if self._idle_said:
                bar.set_postfix_str("")
                self._idle_said, self._idle_checked = "", -1e9
            fault("after_claim")
            for lease in leases:
                self.heartbeat.hold(lease.task_id, lease.token)
            try:
                for i, lease in enumerate(leases):
                    if self.stop_event.is_set() or (self.window and not self.window.is_open(datetime.now())):
                        tally(grouped.send())
                        self._release(leases[i:])
                        break
                    run = TaskRun(shared, lease)
                    if self.flight.enabled and self._remote(lease.kind):
                        self.flight.start(run.run)
                    else:
                        tally(grouped.run(run))
            finally:  # before the next claim, or on the way out: no completion is left unsent
                tally(grouped.send())

    def _stop_reason(self, started: float, taken: int) -> str:
        """Why the loop stops now ('' to go on), `taken` counting the tasks done and in flight."""
        if self.stop_event.is_set():
            return "signal"
        if self.cfg.max_minutes is not None and time.monotonic() - started >= self.cfg.max_minutes * 60:
            return "max-minutes"
        if self.cfg.max_tasks is not None and taken >= self.cfg.max_tasks:
            return "max-tasks"
        return ""

    def _remote(self, kind: str) -> bool:
        """Whether `kind` is made by a backend that waits on a remote service (may run in flight)."""
        if kind in LOCAL_KINDS:
            return False
        try:
            return is_remote(self.router.backend_for(kind))
        except GenerationError:  # routed nowhere: failed in the loop, like any other task
            return False

    def _unserved(self) -> dict[str, int]:
        """With --until-empty, once nothing was claimable for STRANDED_AFTER_S (looked up every
        IDLE_CHECK_S): the lanes no live worker serves that hold pending work, with how much,
        for the loop to stop if every open task of this worker's lanes waits on them (a
        director's llm lane nobody runs, say); else nothing, and the worker waits on."""
        now = time.monotonic()
        if self._dry_since is None:
            self._dry_since = now
        if now - self._dry_since < STRANDED_AFTER_S or now - self._stranded_checked < IDLE_CHECK_S:
            return {}
        self._stranded_checked = now
        return self.engine.unserved_lanes(self.cfg.lanes)

    def _say_idle(self, bar: Progress, left: int | None) -> None:
        """An idle worker says what it waits for (on the bar, or a line in a log), not just a still counter:
        when only review is left, "waiting: N frames need review" (checked every IDLE_CHECK_S);
        `left`: the open work this pass already counted (None: not counted)."""
        if bar.disable or time.monotonic() - self._idle_checked < IDLE_CHECK_S:
            return
        self._idle_checked = time.monotonic()
        waiting = self.engine.review_count()
        if waiting and left is None:
            left = self.engine.open_work(self.cfg.lanes).left
        only_review = waiting and left == 0
        paused = self._paused_note()
        self._idle_said = (
            f"waiting: {waiting} frames need review"
            if only_review
            else f"paused: {paused}"
            if paused
            else "waiting for work"
        )
        bar.set_postfix_str(self._idle_said)

    def _backend_for(self, kind: str) -> Backend:
        """The backend routed to `kind`, except for kinds every worker does locally (assembly)."""
        name = LOCAL_KINDS.get(kind)
        if name is None:
            return self.router.backend_for(kind)
        if name not in self._local:
            self._local[name] = get_backend(name)
        return self._local[name]

    def _backends(self) -> dict[str, Backend]:
        """This worker's backends built so far, by provider."""
        return {provider(b): b for b in [*self.router.built(), *self._local.values()]}

    def _held_kinds(self) -> list[str]:
        """The kinds made by providers paused here or for the fleet: not claimed now."""
        held = self.outages.held()
        if not held:
            return []
        kinds = []
        for kind in sorted({*KINDS, *LOCAL_KINDS}):
            try:
                if kind in LOCAL_KINDS and LOCAL_KINDS[kind] not in self._local:
                    continue  # never run here yet: nothing of it can be paused
                if provider(self._backend_for(kind)) in held:
                    kinds.append(kind)
            except GenerationError:  # routed nowhere
                continue
        return kinds

    def _paused_note(self) -> str | None:
        """Why the worker waits, for its row and its progress line (None: it does not)."""
        return "; ".join(n for n in (self._store_note, self.outages.note()) if n) or None

    def _store_paused(self, why: str | None) -> None:
        if why != self._store_note:
            self._store_note = why
            self.heartbeat.nudge()

    def _add_cost(self, cost: float) -> None:
        with self._spent:
            self.summary.cost += cost

    # -- housekeeping -----------------------------------------------------------------------
    def _release(self, leases: list[Lease]) -> None:
        for lease in leases:
            self.heartbeat.drop(lease.task_id)
        released = self.engine.release(leases, why="on shutdown")
        self.summary.counts[TaskEnd.RELEASED] += len(released)

    def _maybe_watchdog(self) -> None:
        if time.monotonic() - self._last_watchdog < self.cfg.watchdog_every_s:
            return
        self._last_watchdog = time.monotonic()
        reclaimed = self.engine.reclaim_expired()
        self.summary.reclaimed += len(reclaimed)

    def _warn_missing_font(self) -> None:
        """Say once, at start, when waiting books' Chinese or Japanese text would draw as boxes."""
        if any(getattr(b, "draws_text", False) for b in self.router.built()):
            fonts.warn_missing(self.engine.open_book_langs())

    def _flush_spool(self, shared: Shared) -> None:
        if self.spool.pending():
            acks = self.engine.flush_spool(self.spool, functools.partial(spooled_answered, shared))
            self.summary.counts.update(TaskEnd.of_spooled(a) for a in acks.values())

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT: finish the current call, release the rest, exit cleanly.

        The handler only writes the signal's number to a pipe; a thread reads it, says so and
        sets the stop event. A handler runs in the main thread between any two bytecodes, also
        while that thread holds the stop event's lock (entering or leaving a `stop.wait`, as an
        outage's retry does), where setting the event itself would wait for that lock forever."""
        heard, tell = os.pipe()

        def _stopping() -> None:
            while number := os.read(heard, 1):
                sys.stderr.write(
                    f"{self.cfg.worker_id}: {signal.Signals(number[0]).name} received; finishing the "
                    "current task and releasing the rest\n"
                )
                self.stop_event.set()

        threading.Thread(target=_stopping, name=f"signals-{self.cfg.worker_id}", daemon=True).start()

        def _heard(signum: int, _frame: Any) -> None:
            os.write(tell, bytes([signum]))

        signal.signal(signal.SIGTERM, _heard)
        signal.signal(signal.SIGINT, _heard)


def run_worker(
    db: Database,
    cfg: WorkerConfig,
    *,
    backend: Backend | None = None,
    router: Router | None = None,
    handle_signals: bool = False,
) -> Summary:
    """Run one worker until its stop condition (with the `backend` or `router` its caller built
    already, so each backend is built once); returns the summary."""
    worker = Worker(db, cfg, backend, router=router)
    if handle_signals and threading.current_thread() is threading.main_thread():
        worker.install_signal_handlers()
    return worker.run()


def default_worker_id() -> str:
    return f"{os.uname().nodename}-{os.getpid()}"
