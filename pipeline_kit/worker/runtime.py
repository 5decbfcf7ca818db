"""The worker loop each PC runs all night: claim, generate, heartbeat, publish, complete.

It joins the engine and a backend. Per task: reuse a paid-for output an earlier attempt left,
else call the backend (stages and remote job ids go to the database as they happen), book the
cost, keep the file as `.ready`, renew the lease, move the file into place, then complete. A
fenced task's result is dropped. The database going away pauses the loop (reconnect with
backoff); a completion it cannot take waits in a local spool.
"""

from __future__ import annotations

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

from tqdm import tqdm

from pipeline_kit import engine
from pipeline_kit.backends import Backend, Job, Output, get_backend
from pipeline_kit.backends.classify import classify
from pipeline_kit.db.connect import Database
from pipeline_kit.db.wake import Waiter
from pipeline_kit.engine import Ack, Completion, Lease
from pipeline_kit.errors import DatabaseUnavailable, GenerationError
from pipeline_kit.faults import fault
from pipeline_kit.worker.heartbeat import Heartbeat
from pipeline_kit.worker.outputs import OutputPaths, params_hash
from pipeline_kit.worker.reconnect import Reconnect
from pipeline_kit.worker.spool import Spool
from pipeline_kit.worker.windows import Window

IDLE_CHECK_S = 10.0  # how often an idle worker re-reads what it waits for

# Kinds any worker performs itself, whatever backend it runs: kind -> backend name.
LOCAL_KINDS = {"assemble_chapter": "assembly", "assemble_book": "assembly"}


@dataclass(frozen=True, kw_only=True)
class WorkerConfig:
    worker_id: str
    lanes: tuple[str, ...] = ("image", "video", "assembly")
    backend: str = "sketch"
    batch: int = 1
    until_empty: bool = False
    max_tasks: int | None = None
    max_minutes: float | None = None
    lease_s: float = 120.0
    heartbeat_s: float = 20.0
    uid: str | None = None
    hours: str | None = None  # availability window, e.g. "22-07"
    outputs: Path = Path("data/outputs")
    spool: Path = Path("data/spool")
    poll_s: float = 1.0
    watchdog_every_s: float = 15.0
    call_timeout_s: float = 300.0
    progress: bool = True
    reconnect: Reconnect = field(default_factory=Reconnect)


@dataclass
class Summary:
    worker_id: str
    counts: Counter[str] = field(default_factory=Counter)
    cost: float = 0.0
    reclaimed: int = 0
    seconds: float = 0.0
    stopped_by: str = ""
    awaiting_review: int = 0  # outputs left waiting for a person when the worker stopped

    def line(self) -> str:
        parts = ", ".join(f"{n} {k}" for k, n in sorted(self.counts.items()))
        review = (f"; {self.awaiting_review} frame(s) need your review (the rest waits on them)"
                  if self.awaiting_review else "")
        return (f"{self.worker_id}: {parts or 'no tasks'} in {self.seconds:.1f} s, cost {self.cost:.2f}, "
                f"reclaimed {self.reclaimed} expired lease(s); stopped: {self.stopped_by}{review}")


class _Context:
    """The CallContext a backend gets: its stages and remote job ids reach the database."""

    def __init__(self, worker: Worker, lease: Lease) -> None:
        self.timeout_s = worker.cfg.call_timeout_s
        self.uid = worker.cfg.uid
        self._worker, self._lease = worker, lease

    def stage(self, name: str) -> None:
        self._worker.heartbeat.set_stage(self._lease.task_id, name)

    def remember_remote_job(self, job_id: str) -> None:
        self._worker.db_call(lambda: engine.record_remote_job(self._worker.db, self._lease.task_id,
                                                              self._lease.token, job_id), "remote job id")


class Worker:
    def __init__(self, db: Database, cfg: WorkerConfig, backend: Backend | None = None) -> None:
        self.db, self.cfg = db, cfg
        self.backend = backend or get_backend(cfg.backend)
        self.window = Window.parse(cfg.hours) if cfg.hours else None
        self.stop_event = threading.Event()
        self.waiter = Waiter(db, self.stop_event)
        self.summary = Summary(cfg.worker_id)
        self.heartbeat = Heartbeat(db, cfg.worker_id, lease_s=cfg.lease_s, every_s=cfg.heartbeat_s)
        self.spool = Spool(cfg.spool, cfg.worker_id)
        self.lane_cache = engine.LaneCache()
        self._local: dict[str, Backend] = {}
        self._in_call = False  # a failure inside backend.run carries that call's real cost
        self._last_watchdog = -1e9
        self._idle_checked, self._idle_said = -1e9, ""  # when an idle worker last said so, and what

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> Summary:
        started = time.monotonic()
        engine.require_lanes(self.db, list(self.cfg.lanes))
        self.db_call(lambda: engine.register_worker(self.db, self.cfg.worker_id, lanes=list(self.cfg.lanes),
                                                    uid=self.cfg.uid, backend=self.cfg.backend,
                                                    lease_s=self.cfg.lease_s), "register")
        self._flush_spool()
        self.heartbeat.start()
        bar = tqdm(desc=self.cfg.worker_id, unit="task", disable=not self.cfg.progress, file=sys.stderr)
        try:
            self.summary.stopped_by = self._loop(started, bar)
        finally:
            bar.close()
            self.waiter.close()
            self.heartbeat.stop()
            try:
                engine.touch_worker(self.db, self.cfg.worker_id, "stopped")
            except Exception:  # the database may be away at exit; the row just ages
                pass
            self.summary.seconds = time.monotonic() - started
        return self.summary

    def _loop(self, started: float, bar: tqdm) -> str:  # type: ignore[type-arg]
        done = 0
        while True:
            if self.stop_event.is_set():
                return "signal"
            if self.cfg.max_minutes is not None and time.monotonic() - started >= self.cfg.max_minutes * 60:
                return "max-minutes"
            if self.cfg.max_tasks is not None and done >= self.cfg.max_tasks:
                return "max-tasks"
            if self.window and not self.window.is_open(datetime.now()):
                if self.cfg.until_empty:
                    return "window closed"
                self.stop_event.wait(30)
                continue
            self._maybe_watchdog()
            want = self.cfg.batch if self.cfg.max_tasks is None else min(self.cfg.batch, self.cfg.max_tasks - done)
            leases = self.db_call(lambda: engine.claim(self.db, self.cfg.worker_id, self.cfg.lanes, limit=want,
                                                       lease_s=self.cfg.lease_s, cache=self.lane_cache), "claim")
            if not leases:
                if self.cfg.until_empty and self.db_call(lambda: engine.open_work(self.db, self.cfg.lanes),
                                                         "open work") == 0:
                    self.summary.awaiting_review = self.db_call(
                        lambda: engine.review_count(self.db), "review count")
                    return "empty"
                self._say_idle(bar)
                self.waiter.wait(self.cfg.poll_s * random.uniform(0.8, 1.2))
                continue
            if self._idle_said:
                bar.set_postfix_str("")
                self._idle_said, self._idle_checked = "", -1e9
            fault("after_claim")
            for lease in leases:
                self.heartbeat.hold(lease.task_id, lease.token)
            for i, lease in enumerate(leases):
                if self.stop_event.is_set() or (self.window and not self.window.is_open(datetime.now())):
                    self._release(leases[i:])
                    break
                self.summary.counts[self._process(lease)] += 1
                done += 1
                bar.update(1)

    def _say_idle(self, bar: tqdm) -> None:  # type: ignore[type-arg]
        """An idle worker shown on a terminal says what it waits for, not just a still counter:
        when only review is left, "waiting: N frames need review" (checked every IDLE_CHECK_S)."""
        if bar.disable or time.monotonic() - self._idle_checked < IDLE_CHECK_S:
            return
        self._idle_checked = time.monotonic()
        waiting = self.db_call(lambda: engine.review_count(self.db), "review count")
        only_review = waiting and self.db_call(lambda: engine.open_work(self.db, self.cfg.lanes),
                                               "open work") == 0
        self._idle_said = (f"waiting: {waiting} frames need review" if only_review
                           else "waiting for work")
        bar.set_postfix_str(self._idle_said)

    # -- one task ---------------------------------------------------------------------------
    def _process(self, lease: Lease) -> str:
        backend = self._backend_for(lease.kind)
        paths: OutputPaths | None = None
        try:
            paths = OutputPaths.for_task(self.cfg.outputs, task_id=lease.task_id, kind=lease.kind,
                                         bookcode=lease.bookcode, shot_id=lease.shot_id,
                                         suffix=backend.suffix(lease.kind), token=lease.token,
                                         publish_as=lease.params.get("publish_as"))
            out = self._generate(backend, lease, paths, f"{params_hash(dict(lease.params))}-g{lease.generation}")
        except GenerationError as exc:
            return self._failed(lease, exc)
        except Exception as exc:  # anything else a backend raised: classified by the one table
            return self._failed(lease, classify(exc))
        finally:
            if paths is not None:
                paths.part.unlink(missing_ok=True)
        return self._finish(lease, paths, out)

    def _backend_for(self, kind: str) -> Backend:
        """The worker's backend, except for kinds every worker can do locally (film assembly)."""
        name = LOCAL_KINDS.get(kind)
        if name is None:
            return self.backend
        if name not in self._local:
            self._local[name] = get_backend(name)
        return self._local[name]

    def _generate(self, backend: Backend, lease: Lease, paths: OutputPaths, key: str) -> Output:
        reused = paths.reusable(key)
        if reused is not None:  # an earlier attempt paid for this file: no second call
            return Output(path=paths.ready, cost=0.0, model=reused.get("model"),
                          result={**reused.get("result", {}), "reused": True})
        paths.part.parent.mkdir(parents=True, exist_ok=True)
        inputs = self.db_call(lambda: engine.dependency_outputs(self.db, lease.task_id), "inputs")
        job = Job(task_id=lease.task_id, kind=lease.kind, lane=lease.lane, params=lease.params,
                  inputs={k: Path(v) for k, v in inputs.items()}, out_path=paths.part,
                  remote_job_id=lease.remote_job_id)
        self.heartbeat.set_stage(lease.task_id, "generating")
        price = float(getattr(backend, "price", 0.0) or 0.0)
        if price:  # booked before the call: a crash during it must not leave a paid call unbooked
            self.db_call(lambda: engine.record_cost(self.db, lease.task_id, lease.token, price), "book cost")
        self._in_call = True
        out = backend.run(job, _Context(self, lease))
        self._in_call = False
        fault("after_call")
        if out.cost or price:  # what the call really cost replaces the booking
            self.db_call(lambda: engine.record_cost(self.db, lease.task_id, lease.token, out.cost,
                                                    model=out.model), "record cost")
            self.summary.cost += out.cost
        fault("after_cost")
        if out.path is not None:
            paths.mark_ready({"params_hash": key, "model": out.model, "cost": out.cost,
                              "result": dict(out.result)}, extras=out.extras)
            fault("after_temp_write")
            return Output(path=paths.ready, cost=out.cost, model=out.model, settings=out.settings,
                          remote_job_id=out.remote_job_id, result=out.result)
        return out

    def _finish(self, lease: Lease, paths: OutputPaths, out: Output) -> str:
        self.heartbeat.set_stage(lease.task_id, "finalizing")
        still_ours = self.db_call(lambda: engine.heartbeat(self.db, lease.task_id, lease.token,
                                                           lease_s=self.cfg.lease_s, stage="finalizing",
                                                           worker_id=self.cfg.worker_id), "renew")
        if still_ours is not Ack.ACCEPTED or self.heartbeat.is_fenced(lease.task_id, lease.token):
            self.heartbeat.drop(lease.task_id)
            return "fenced"
        size, digest, final = None, None, None
        if out.path is not None:
            try:
                size, digest = paths.publish()
            except FileNotFoundError:  # woke too late: the new owner already took the .ready file
                self.heartbeat.drop(lease.task_id)
                return "fenced"
            final = str(paths.final)
            fault("after_publish")
        completion = Completion(task_id=lease.task_id, token=lease.token, output_path=final,
                                result={**dict(out.result), "sha256": digest, "bytes": size},
                                cost=out.cost if out.cost else None, output_bytes=size, model=out.model,
                                settings=dict(out.settings) or None)
        ack = self._complete(completion)
        fault("after_complete")
        self.heartbeat.drop(lease.task_id)
        return "completed" if ack in (Ack.ACCEPTED, Ack.DUPLICATE) else ack.value

    def _complete(self, completion: Completion) -> Ack | str:
        try:
            return self.db_call(lambda: engine.complete(self.db, completion, worker_id=self.cfg.worker_id),
                                "complete")
        except DatabaseUnavailable:
            self.spool.put(completion)
            return "spooled"

    def _failed(self, lease: Lease, exc: GenerationError) -> str:
        self.heartbeat.drop(lease.task_id)
        self.summary.cost += exc.cost
        # A failed call's own cost (0 if the provider never billed it) replaces any booking; a
        # failure after the call returned keeps the cost already recorded.
        cost = exc.cost if self._in_call else None
        self._in_call = False
        ack, status = self.db_call(lambda: engine.fail(self.db, lease.task_id, lease.token, error=str(exc),
                                                       error_kind=exc.error_kind, retryable=exc.retryable,
                                                       retry_after=exc.retry_after, cost=cost,
                                                       worker_id=self.cfg.worker_id), "fail")
        if ack is Ack.FENCED:
            return "fenced"
        return "retried" if status is engine.Status.PENDING else "failed"

    # -- housekeeping -----------------------------------------------------------------------
    def _release(self, leases: list[Lease]) -> None:
        for lease in leases:
            self.heartbeat.drop(lease.task_id)
        released = self.db_call(lambda: engine.release_many(self.db, {l.task_id: l.token for l in leases},
                                                            worker_id=self.cfg.worker_id), "release")
        self.summary.counts["released"] += len(released)

    def _maybe_watchdog(self) -> None:
        if time.monotonic() - self._last_watchdog < self.cfg.watchdog_every_s:
            return
        self._last_watchdog = time.monotonic()
        reclaimed = self.db_call(lambda: engine.reclaim_expired(self.db, by=self.cfg.worker_id), "watchdog")
        self.summary.reclaimed += len(reclaimed)

    def _flush_spool(self) -> None:
        if self.spool.pending():
            acks = self.db_call(lambda: self.spool.flush(self.db, self.cfg.worker_id), "spool")
            self.summary.counts.update(f"spooled-{a.value}" for a in acks.values())

    def db_call(self, fn: Any, what: str) -> Any:
        return self.cfg.reconnect.call(fn, what=what, stop=None)

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT: finish the current call, release the rest, exit cleanly."""
        def _stop(signum: int, _frame: Any) -> None:
            sys.stderr.write(f"{self.cfg.worker_id}: {signal.Signals(signum).name} received; finishing the "
                             "current task and releasing the rest\n")
            self.stop_event.set()
        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)


def run_worker(db: Database, cfg: WorkerConfig, *, handle_signals: bool = False) -> Summary:
    """Run one worker until its stop condition; returns the summary."""
    worker = Worker(db, cfg)
    if handle_signals and threading.current_thread() is threading.main_thread():
        worker.install_signal_handlers()
    return worker.run()


def default_worker_id() -> str:
    return f"{os.uname().nodename}-{os.getpid()}"
