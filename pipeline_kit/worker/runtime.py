"""The worker loop each PC runs all night: claim, generate, heartbeat, publish, complete.

It joins the engine and a backend. Per task: reuse a paid-for output an earlier attempt left,
else call the backend (stages and remote job ids go to the database as they happen), book the
cost, keep the file as `.ready`, renew the lease, move the file into place, then complete. A
fenced task's result is dropped. The database going away pauses the loop (reconnect with
backoff); a completion it cannot take waits in a local spool. With `inflight` above 1, tasks whose
backend waits on a remote service run that many at once, each on its own thread (inflight.py),
while the rest run one at a time. A call the provider never took (unreachable, or refused before
any work) costs its task no attempt: the task goes back to the queue and that provider is paused
for this worker, then for the fleet once enough workers agree (outages.py). The director is the
exception: an optional pass, its unreached calls count as attempts, so the book never waits on it.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline_kit import engine, fonts, kinds, thumbnail
from pipeline_kit.backends import Backend, Job, Output, get_backend
from pipeline_kit.backends.base import is_remote, provider, quote
from pipeline_kit.backends.classify import classify
from pipeline_kit.backends.direction import directed
from pipeline_kit.backends.routing import KINDS, Router, Routing
from pipeline_kit.db.connect import Database
from pipeline_kit.db.wake import Waiter
from pipeline_kit.engine import Ack, Completion, Lease
from pipeline_kit.engine.operator import was_canceled
from pipeline_kit.engine.outages import DEFAULT_QUORUM
from pipeline_kit.errors import DatabaseUnavailable, GenerationError, StoreUnavailable
from pipeline_kit.faults import fault
from pipeline_kit.store import Store, Stored, open_store
from pipeline_kit.worker.heartbeat import Heartbeat
from pipeline_kit.worker.inflight import InFlight
from pipeline_kit.worker.outages import Backoff, Outages
from pipeline_kit.worker.outputs import OutputPaths, file_digest, params_hash
from pipeline_kit.worker.progress import Progress, progress
from pipeline_kit.worker.reconnect import Reconnect
from pipeline_kit.worker.spool import Spool
from pipeline_kit.worker.windows import Window
from pipeline_kit.plural import plural

IDLE_CHECK_S = 10.0  # how often an idle worker re-reads what it waits for

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
    reconnect: Reconnect = field(default_factory=Reconnect)
    provider_backoff: Backoff = field(default_factory=Backoff)  # probes of a provider that turned calls away
    fleet_quorum: int = DEFAULT_QUORUM  # workers that must find a provider down to pause it fleet-wide


@dataclass
class Summary:
    worker_id: str
    counts: Counter[str] = field(default_factory=Counter)
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


class _Context:
    """The CallContext a backend gets: its stages, remote job ids and chat answers reach the
    database."""

    def __init__(self, worker: Worker, lease: Lease) -> None:
        self.timeout_s = worker.cfg.call_timeout_s
        self.uid = worker.cfg.uid
        self._worker, self._lease = worker, lease
        self._spent = 0.0  # the cost of the answers remembered during this call

    def stage(self, name: str) -> None:
        self._worker.heartbeat.set_stage(self._lease.task_id, name)

    def remember_remote_job(self, job_id: str) -> None:
        self._worker.db_call(
            lambda: engine.record_remote_job(self._worker.db, self._lease.task_id, self._lease.token, job_id),
            "remote job id",
        )

    def canceled(self) -> bool:
        """Whether an operator canceled the task: its lease was fenced and its status says so."""
        worker, lease = self._worker, self._lease
        return worker.heartbeat.is_fenced(lease.task_id, lease.token) and worker.db_call(
            lambda: was_canceled(worker.db, lease.task_id), "canceled?"
        )

    def recall(self, key: str) -> dict[str, Any] | None:
        return self._worker.db_call(lambda: engine.recall_answer(self._worker.db, key), "answer cache")

    def remember(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep the answer, and book what the task's calls have cost so far on the attempt, so a
        kill before the task returns leaves no paid call unbooked (its return books the total)."""
        db, lease = self._worker.db, self._lease
        self._worker.db_call(
            lambda: engine.remember_answer(db, key, dict(record), lease=(lease.task_id, lease.token)), "answer cache"
        )
        self._spent += float(record.get("cost") or 0.0)
        self._worker.db_call(
            lambda: engine.record_cost(db, lease.task_id, lease.token, self._spent, model=record.get("model")),
            "book cost",
        )


class Worker:
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
        self.outages = Outages(
            db,
            cfg.worker_id,
            backoff=cfg.provider_backoff,
            quorum=cfg.fleet_quorum,
            call=self.db_call,
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
        self._in_call: set[str] = set()  # tasks inside backend.run: a failure there carries its real cost
        self._spent = threading.Lock()  # summary.cost is added to from every task's thread
        # Held from reading the paused kinds to holding the claimed rows, and by a turned-away call
        # while it pauses: a task given back after its pause is never claimed by a claim that read
        # the kinds before it.
        self._claiming = threading.Lock()
        self.flight = InFlight(cfg.inflight, cfg.worker_id)
        self._last_watchdog = -1e9
        self.store: Store | None = None  # opened by run(), when the database answers
        self.made_in = self.cfg.outputs or REMOTE_MADE  # where outputs are made: set by run() with the store
        self._idle_checked, self._idle_said = -1e9, ""  # when an idle worker last said so, and what

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> Summary:
        started = time.monotonic()
        engine.require_lanes(self.db, list(self.cfg.lanes))
        waiting = self.db_call(lambda: engine.open_kinds(self.db, self.cfg.lanes), "kinds waiting")
        self.router.check({k: lane for k, lane in waiting.items() if k not in LOCAL_KINDS})
        self.store = self.db_call(
            lambda: open_store(
                self.db,
                override=self.cfg.store,
                cache=self.cfg.cache or (self.cfg.outputs or REMOTE_MADE).parent / "cache",
            ),
            "store",
        )
        store_root = self.store.root
        self.made_in = self.cfg.outputs or (store_root / "outputs" if store_root else REMOTE_MADE)
        self.db_call(
            lambda: engine.register_worker(
                self.db,
                self.cfg.worker_id,
                lanes=list(self.cfg.lanes),
                uid=self.cfg.uid,
                backend=self.router.routing.names()[:64],
                lease_s=self.cfg.lease_s,
            ),
            "register",
        )
        self._warn_missing_font()
        self._flush_spool()
        self.heartbeat.start()
        bar = progress(self.cfg.worker_id, enabled=self.cfg.progress)
        try:
            self.summary.stopped_by = self._loop(started, bar)
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

    def _loop(self, started: float, bar: Progress) -> str:
        done = 0

        def tally(outcomes: list[str]) -> None:
            nonlocal done
            for outcome in outcomes:
                self.summary.counts[outcome] += 1
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
                leases = self.db_call(
                    lambda: engine.claim(
                        self.db,
                        self.cfg.worker_id,
                        self.cfg.lanes,
                        limit=want,
                        lease_s=self.cfg.lease_s,
                        cache=self.lane_cache,
                        skip_kinds=self._held_kinds(),
                    ),
                    "claim",
                )
            if not leases:
                if len(self.flight):  # nothing to claim yet: look again when a job ends, or soon
                    tally(self.flight.finished(timeout=self.cfg.poll_s * random.uniform(0.8, 1.2)))
                    continue
                if (
                    self.cfg.until_empty
                    and self.db_call(lambda: engine.open_work(self.db, self.cfg.lanes), "open work") == 0
                ):
                    self.summary.waiting = self.db_call(
                        lambda: engine.pending_elsewhere(self.db, self.cfg.lanes), "other lanes"
                    )
                    self.summary.awaiting_review = self.db_call(lambda: engine.review_count(self.db), "review count")
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
                if self.flight.enabled and self._remote(lease.kind):
                    self.flight.start(lambda lease=lease: self._process(lease))
                else:
                    tally([self._process(lease)])

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

    def _say_idle(self, bar: Progress) -> None:
        """An idle worker says what it waits for (on the bar, or a line in a log), not just a still counter:
        when only review is left, "waiting: N frames need review" (checked every IDLE_CHECK_S)."""
        if bar.disable or time.monotonic() - self._idle_checked < IDLE_CHECK_S:
            return
        self._idle_checked = time.monotonic()
        waiting = self.db_call(lambda: engine.review_count(self.db), "review count")
        only_review = waiting and self.db_call(lambda: engine.open_work(self.db, self.cfg.lanes), "open work") == 0
        paused = self._paused_note()
        self._idle_said = (
            f"waiting: {waiting} frames need review"
            if only_review
            else f"paused: {paused}"
            if paused
            else "waiting for work"
        )
        bar.set_postfix_str(self._idle_said)

    # -- one task ---------------------------------------------------------------------------
    def _process(self, lease: Lease) -> str:
        paths: OutputPaths | None = None
        try:
            backend = self._backend_for(lease.kind)
            paths = OutputPaths.for_task(
                self.made_in,
                task_id=lease.task_id,
                kind=lease.kind,
                bookcode=lease.bookcode,
                shot_id=lease.shot_id,
                suffix=backend.suffix(lease.kind),
                token=lease.token,
                publish_as=lease.params.get("publish_as"),
            )
            params = self._directed(lease)
            out = self._generate(backend, lease, paths, params, f"{params_hash(params)}-g{lease.generation}")
        except GenerationError as exc:
            return self._failed(lease, exc)
        except DatabaseUnavailable:  # the database, not the backend, failed: nothing to record
            raise
        except Exception as exc:  # anything else a backend raised: classified by the one table
            return self._failed(lease, classify(exc))
        finally:
            if paths is not None:
                paths.part.unlink(missing_ok=True)
        return self._finish(lease, paths, out)

    def _backend_for(self, kind: str) -> Backend:
        """The backend routed to `kind`, except for kinds every worker does locally (assembly)."""
        name = LOCAL_KINDS.get(kind)
        if name is None:
            return self.router.backend_for(kind)
        if name not in self._local:
            self._local[name] = get_backend(name)
        return self._local[name]

    def _directed(self, lease: Lease) -> dict[str, Any]:
        """The task's params, with its director's prompt in place of the rules' one once the
        director task it names (`params.director`) has completed with one for it."""
        params = dict(lease.params)
        name = params.get("director")
        if not name:
            return params
        made = self.db_call(lambda: engine.dependency_outputs(self.db, lease.task_id), "director")
        return directed(params, lease.kind, made[name].result) if name in made else params

    def _generate(self, backend: Backend, lease: Lease, paths: OutputPaths, params: dict[str, Any], key: str) -> Output:
        reused = paths.reusable(key)
        if reused is not None:  # an earlier attempt paid for this file: no second call
            return Output(
                path=paths.ready,
                cost=0.0,
                model=reused.get("model"),
                result={**reused.get("result", {}), "reused": True},
            )
        self.db_call(lambda: self._make_room(paths), "publishing")
        job = Job(
            task_id=lease.task_id,
            kind=lease.kind,
            lane=lease.lane,
            params=params,
            inputs=self._inputs(lease.task_id),
            out_path=paths.part,
            remote_job_id=lease.remote_job_id,
        )
        self.heartbeat.set_stage(lease.task_id, "generating")
        price = quote(backend, job)
        if price:  # booked before the call: a crash during it must not leave a paid call unbooked
            self.db_call(lambda: engine.record_cost(self.db, lease.task_id, lease.token, price), "book cost")
        self._in_call.add(lease.task_id)
        out = backend.run(job, _Context(self, lease))
        self._in_call.discard(lease.task_id)
        self.outages.reached(provider(backend))
        fault("after_call")
        if out.cost or price:  # what the call really cost replaces the booking
            self.db_call(
                lambda: engine.record_cost(self.db, lease.task_id, lease.token, out.cost, model=out.model),
                "record cost",
            )
            self._add_cost(out.cost)
        fault("after_cost")
        if out.path is not None:
            paths.mark_ready(
                {"params_hash": key, "model": out.model, "cost": out.cost, "result": dict(out.result)},
                extras=_with_thumbnail(lease.kind, out, paths),
            )
            fault("after_temp_write")
            return Output(
                path=paths.ready,
                cost=out.cost,
                model=out.model,
                settings=out.settings,
                remote_job_id=out.remote_job_id,
                result=out.result,
            )
        return out

    def _inputs(self, task_id: str) -> dict[str, Path]:
        """The dependencies' outputs as local paths, fetched through the store (cached by checksum)."""
        store = self._store()
        made = self.db_call(lambda: engine.dependency_outputs(self.db, task_id), "inputs")
        local: dict[str, Path] = {}
        for key, produced in made.items():
            if produced.output_path not in local:
                local[produced.output_path] = self.db_call(
                    lambda p=produced: store.fetch(p.output_path, p.result), f"fetching {key}"
                )
        return {key: local[produced.output_path] for key, produced in made.items()}

    def _make_room(self, paths: OutputPaths) -> None:
        """The folder a call writes into. Made by default inside a folder store, so only while
        that folder is there: a NAS not mounted is never written on, the worker pauses as a
        publish would (an explicit --outputs folder is made as asked)."""
        root = self._store().root
        if self.cfg.outputs is None and root is not None and not root.is_dir():
            raise StoreUnavailable(f"store folder {root} is not there (not mounted?)")
        paths.part.parent.mkdir(parents=True, exist_ok=True)

    def _store(self) -> Store:
        if self.store is None:
            raise RuntimeError("the worker's store is opened by run()")
        return self.store

    def _finish(self, lease: Lease, paths: OutputPaths, out: Output) -> str:
        self.heartbeat.set_stage(lease.task_id, "finalizing")
        still_ours = self.db_call(
            lambda: engine.heartbeat(
                self.db,
                lease.task_id,
                lease.token,
                lease_s=self.cfg.lease_s,
                stage="finalizing",
                worker_id=self.cfg.worker_id,
            ),
            "renew",
        )
        if still_ours is not Ack.ACCEPTED or self.heartbeat.is_fenced(lease.task_id, lease.token):
            self.heartbeat.drop(lease.task_id)
            return "fenced"
        stored: Stored | None = None
        if out.path is not None:
            store, sides, target = self._store(), paths.ready_sides(), paths.name
            owner = self.db_call(lambda: engine.output_owner(self.db, target, lease.task_id), "output owner")
            if owner is not None:  # never replace another task's file: say so and keep ours
                return self._failed(
                    lease,
                    GenerationError(
                        f"output {target} belongs to task {owner}; not replaced",
                        error_kind="output_taken",
                        retryable=False,
                    ),
                )
            shas = [file_digest(p)[1] for p in (paths.ready, *sides.values()) if p.is_file()]
            self.db_call(lambda: engine.name_blobs(self.db, lease.task_id, lease.token, shas), "naming blobs")
            try:
                stored = self.db_call(
                    lambda: store.publish(paths.name, paths.ready, sides, lease=(lease.task_id, lease.token)),
                    "publishing",
                )
            except FileNotFoundError:  # woke too late: the new owner already took the .ready file
                self.heartbeat.drop(lease.task_id)
                return "fenced"
            store.settle(stored, paths.ready, sides)  # what stays local moves into the cache
            paths.tidy()
            fault("after_publish")
        checksums = (
            {}
            if stored is None
            else {"sha256": stored.sha256, "bytes": stored.size, **({"sides": stored.sides} if stored.sides else {})}
        )
        completion = Completion(
            task_id=lease.task_id,
            token=lease.token,
            output_path=stored.output_path if stored else None,
            result={**dict(out.result), "sha256": None, "bytes": None, **checksums},
            cost=out.cost if out.cost else None,
            output_bytes=stored.size if stored else None,
            model=out.model,
            settings=dict(out.settings) or None,
        )
        ack = self._complete(completion)
        fault("after_complete")
        self.heartbeat.drop(lease.task_id)
        if ack == "spooled":  # the database could not take it: submitted later from the spool
            return ack
        return "completed" if ack in (Ack.ACCEPTED, Ack.DUPLICATE) else ack.value

    def _complete(self, completion: Completion) -> Ack | str:
        try:
            return self.db_call(lambda: engine.complete(self.db, completion, worker_id=self.cfg.worker_id), "complete")
        except DatabaseUnavailable:
            self.spool.put(completion)
            return "spooled"

    def _failed(self, lease: Lease, exc: GenerationError) -> str:
        self.heartbeat.drop(lease.task_id)
        if exc.error_kind == "quota_exhausted":
            return self._pause_lane(lease, exc)
        if exc.turned_away and lease.kind not in kinds.optional():
            # An optional pass never holds the book: its unreached calls count as attempts, so once
            # they are spent its frames go ahead with the rules' prompts.
            return self._turned_away(lease, exc)
        if lease.task_id in self._in_call:  # the provider took the call: it answers
            self.outages.reached(provider(self._backend_for(lease.kind)))
        self._add_cost(exc.cost)
        # A failed call's own cost (0 if the provider never billed it) replaces any booking; a
        # failure after the call returned keeps the cost already recorded.
        cost = exc.cost if self._left_call(lease) else None
        ack, status = self.db_call(
            lambda: engine.fail(
                self.db,
                lease.task_id,
                lease.token,
                error=str(exc),
                error_kind=exc.error_kind,
                retryable=exc.retryable,
                retry_after=exc.retry_after,
                cost=cost,
                worker_id=self.cfg.worker_id,
            ),
            "fail",
        )
        if ack is Ack.FENCED:
            return "fenced"
        return "retried" if status is engine.Status.PENDING else "failed"

    def _pause_lane(self, lease: Lease, exc: GenerationError) -> str:
        """The provider's quota is used up or its account unpaid: no task is at fault and every
        call would fail alike. Give the task back unspent, pause its lane fleet-wide, alert."""
        if self._left_call(lease):  # the refused call cost what the provider says (nothing), not the quote
            self.db_call(lambda: engine.record_cost(self.db, lease.task_id, lease.token, exc.cost), "record cost")
        self.db_call(
            lambda: engine.release_many(
                self.db, {lease.task_id: lease.token}, worker_id=self.cfg.worker_id, why=str(exc)
            ),
            "release",
        )
        self.db_call(
            lambda: engine.pause_with_alert(
                self.db, lease.lane, str(exc), task_id=lease.task_id, worker_id=self.cfg.worker_id
            ),
            "pause lane",
        )
        return "paused"

    def _turned_away(self, lease: Lease, exc: GenerationError) -> str:
        """The provider never took the call: give the task back without using an attempt or
        booking its quote, and pause that provider for this worker (a line and an alert the
        first time), voting for a fleet-wide pause."""
        if self._left_call(lease):
            self.db_call(lambda: engine.record_cost(self.db, lease.task_id, lease.token, exc.cost), "record cost")
        who = provider(self._backend_for(lease.kind))
        # Paused before the task is given back, and never while a claim is between reading the
        # paused kinds and taking rows: either way another in-flight slot claimed the task again
        # and was turned away twice before the pause held its kind.
        with self._claiming:
            self.outages.turned_away(who, exc, lease.task_id)
        self.db_call(
            lambda: engine.release_many(
                self.db, {lease.task_id: lease.token}, worker_id=self.cfg.worker_id, why=f"({who}: {exc})"
            ),
            "release",
        )
        return "released"

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

    def _left_call(self, lease: Lease) -> bool:
        """Whether the task failed inside backend.run (its call's cost is the error's); forgets it."""
        inside = lease.task_id in self._in_call
        self._in_call.discard(lease.task_id)
        return inside

    def _add_cost(self, cost: float) -> None:
        with self._spent:
            self.summary.cost += cost

    # -- housekeeping -----------------------------------------------------------------------
    def _release(self, leases: list[Lease]) -> None:
        for lease in leases:
            self.heartbeat.drop(lease.task_id)
        released = self.db_call(
            lambda: engine.release_many(
                self.db, {held.task_id: held.token for held in leases}, worker_id=self.cfg.worker_id
            ),
            "release",
        )
        self.summary.counts["released"] += len(released)

    def _maybe_watchdog(self) -> None:
        if time.monotonic() - self._last_watchdog < self.cfg.watchdog_every_s:
            return
        self._last_watchdog = time.monotonic()
        reclaimed = self.db_call(lambda: engine.reclaim_expired(self.db, by=self.cfg.worker_id), "watchdog")
        self.summary.reclaimed += len(reclaimed)

    def _warn_missing_font(self) -> None:
        """Say once, at start, when waiting books' Chinese or Japanese text would draw as boxes."""
        if any(getattr(b, "draws_text", False) for b in self.router.built()):
            fonts.warn_missing(self.db_call(lambda: engine.open_book_langs(self.db), "book languages"))

    def _flush_spool(self) -> None:
        if self.spool.pending():
            acks = self.db_call(lambda: self.spool.flush(self.db, self.cfg.worker_id), "spool")
            self.summary.counts.update(f"spooled-{a.value}" for a in acks.values())

    def db_call(self, fn: Any, what: str) -> Any:
        return self.cfg.reconnect.call(fn, what=what, stop=self.stop_event, paused=self._store_paused)

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT: finish the current call, release the rest, exit cleanly."""

        def _stop(signum: int, _frame: Any) -> None:
            sys.stderr.write(
                f"{self.cfg.worker_id}: {signal.Signals(signum).name} received; finishing the "
                "current task and releasing the rest\n"
            )
            self.stop_event.set()

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)


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


def _with_thumbnail(kind: str, out: Output, paths: OutputPaths) -> dict[str, Path]:
    """The call's side files, plus a thumbnail beside an image (screens show it instead of
    fetching the whole frame); an image Pillow cannot read simply goes without one."""
    extras = dict(out.extras)
    if kind in kinds.names(media=kinds.Media.IMAGE) and out.path is not None and thumbnail.SUFFIX not in extras:
        small = paths.side_part(thumbnail.SUFFIX)
        if thumbnail.draw(out.path, small):
            extras[thumbnail.SUFFIX] = small
    return extras
