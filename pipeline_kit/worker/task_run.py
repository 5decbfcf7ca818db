"""One claimed task carried to its end on a worker: generate, publish, complete; a `TaskEnd` out.

Per task: reuse a paid-for output an earlier attempt left, else call the backend (stages and
remote job ids go to the database as they happen), book the cost, keep the file as `.ready`,
publish the file through the store (a folder store stages it under the lease's mark: no lease
renewal first), then complete (`make` gives the completion to send, `send` sends a group of them
in one transaction), and only then does a folder store give an accepted output its name; a fenced
task's staged files go back to its `.ready` file, where a worker that took the task over on this PC
reuses them without a second call; a completion the database cannot take waits in the local spool. A call the provider
never took (unreachable, or refused before any work) costs its task no attempt: the task goes
back to the queue and that provider is paused for this worker, then for the fleet once enough
workers agree (outages.py). The director is the exception: an optional pass, its unreached calls
count as attempts, so the book never waits on it. The loop that claims and counts is runtime.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline_kit import kinds, thumbnail
from pipeline_kit.backends import Backend, Job, Output
from pipeline_kit.backends.base import provider, quote
from pipeline_kit.backends.classify import classify
from pipeline_kit.backends.direction import directed
from pipeline_kit.engine import Ack, Completion, Lease, Status
from pipeline_kit.errors import DatabaseUnavailable, GenerationError, LeaseLost, StoreUnavailable
from pipeline_kit.faults import fault
from pipeline_kit.store import Store, Stored
from pipeline_kit.worker.gateway import EngineGateway
from pipeline_kit.worker.heartbeat import Heartbeat
from pipeline_kit.worker.outages import Outages
from pipeline_kit.worker.outputs import OutputPaths, params_hash
from pipeline_kit.worker.reconnect import Reconnecting
from pipeline_kit.worker.spool import Spool
from pipeline_kit.worker.task_end import TaskEnd

if TYPE_CHECKING:  # the loop's settings; runtime.py imports this module
    from pipeline_kit.worker.runtime import WorkerConfig


@dataclass(frozen=True, kw_only=True)
class Shared:
    """What every task run of one worker shares: built by the worker once its store is open."""

    engine: EngineGateway  # the engine's calls, retried while the database is away
    cfg: WorkerConfig
    store: Store
    made_in: Path  # where outputs are made before publishing
    heartbeat: Heartbeat
    outages: Outages
    spool: Spool
    claiming: threading.Lock  # held by a claim; a turned-away call pauses its provider under it
    retry: Reconnecting  # a store call, retried while the store is away
    backend_for: Callable[[str], Backend]  # the backend that makes a kind on this worker
    add_cost: Callable[[float], None]  # adds to the worker's summary


@dataclass(frozen=True, kw_only=True)
class Made:
    """A task whose output is made and published, its completion not sent yet."""

    lease: Lease
    completion: Completion
    stored: Stored | None  # None: the task made no file
    paid: bool  # its call cost money: sent at once, so a crash never loses paid work
    ready: tuple[OutputPaths, dict[str, Any]] | None = None  # its ready file and meta: a fenced one goes back there


def send(shared: Shared, made: Sequence[Made]) -> list[TaskEnd]:
    """Send the completions of `made` in one transaction, then give each accepted output its
    name (a fenced one's staged files go); how each ended. A database that cannot take them puts
    each in the local spool, submitted with its token later."""
    if not made:
        return []
    try:
        acks = shared.engine.complete_many([m.completion for m in made])
    except DatabaseUnavailable:
        acks = {}
        for m in made:
            shared.spool.put(m.completion)
    ends = []
    for m in made:
        ack = acks.get(m.lease.task_id)
        fault("after_complete")
        if ack is not None and m.stored is not None:
            conclude(shared, m.stored, accepted=ack is not Ack.FENCED, ready=m.ready)
        shared.heartbeat.drop(m.lease.task_id)
        ends.append(TaskEnd.SPOOLED if ack is None else TaskEnd.FENCED if ack is Ack.FENCED else TaskEnd.COMPLETED)
    return ends


def spooled_answered(shared: Shared, completion: Completion, ack: Ack) -> None:
    """A spooled completion was answered: its output takes its name, or its staged files go."""
    if completion.output_path is not None and completion.result is not None:
        stored = Stored.recorded(completion.output_path, completion.result)
        conclude(shared, stored, accepted=ack is not Ack.FENCED)


def conclude(
    shared: Shared, stored: Stored, *, accepted: bool, ready: tuple[OutputPaths, dict[str, Any]] | None = None
) -> None:
    """Tell the store how a completion was answered; a fenced output goes back to its `ready`
    file (with its meta), for a worker taking the task over on this PC to reuse. A store away for
    good (or a stop while it is) leaves a folder store's reveal to the output's next reader (the
    completion records the mark) and a fenced one's staged files to the next publish of that name."""
    keep = None if accepted or ready is None else ready[0].ready_files(stored.sides)
    try:
        shared.retry("revealing", shared.store.conclude, stored, accepted=accepted, keep=keep)
    except DatabaseUnavailable:
        return
    if keep is not None:
        ready[0].restore_meta(ready[1])


class _Context:
    """The CallContext a backend gets: its stages, remote job ids and chat answers reach the
    database."""

    def __init__(self, shared: Shared, lease: Lease) -> None:
        self.timeout_s = shared.cfg.call_timeout_s
        self.uid = shared.cfg.uid
        self._shared, self._lease = shared, lease
        self._spent = 0.0  # the cost of the answers remembered during this call

    def stage(self, name: str) -> None:
        self._shared.heartbeat.set_stage(self._lease.task_id, name)

    def remember_remote_job(self, job_id: str) -> None:
        self._shared.engine.record_remote_job(self._lease, job_id)

    def canceled(self) -> bool:
        """Whether an operator canceled the task: its lease was fenced and its status says so."""
        shared, lease = self._shared, self._lease
        return shared.heartbeat.is_fenced(lease.task_id, lease.token) and shared.engine.was_canceled(lease.task_id)

    def recall(self, key: str) -> dict[str, Any] | None:
        return self._shared.engine.recall_answer(key)

    def remember(self, key: str, record: Mapping[str, Any]) -> None:
        """Keep the answer, and book what the task's calls have cost so far on the attempt, so a
        kill before the task returns leaves no paid call unbooked (its return books the total)."""
        gateway, lease = self._shared.engine, self._lease
        gateway.remember_answer(key, record, lease)
        self._spent += float(record.get("cost") or 0.0)
        gateway.record_cost(lease, self._spent, model=record.get("model"), booking=True)


class TaskRun:
    """One leased task on this worker, from its lease to its end (`run()`), on the caller's thread."""

    def __init__(self, shared: Shared, lease: Lease) -> None:
        self.shared, self.lease = shared, lease
        self.in_call = False  # inside backend.run: a failure there carries its call's real cost
        self.key = ""  # what the output is made from (params and generation): the `.ready` file must be of it

    def run(self) -> TaskEnd:
        """Carry the task to its end, its completion sent at once, and say which (a remote job in
        flight; the loop groups the completions of quick tasks, grouped.py)."""
        made = self.make()
        return made if isinstance(made, TaskEnd) else send(self.shared, [made])[0]

    def make(self) -> TaskEnd | Made:
        """Generate and publish: the completion to send, or the task's end if it ended on the way.
        A backend's error is an end (failed, retried, released...); the database gone for good
        rises, and so does a fault injected while finishing."""
        lease = self.lease
        paths: OutputPaths | None = None
        try:
            backend = self.shared.backend_for(lease.kind)
            paths = OutputPaths.for_task(
                self.shared.made_in,
                task_id=lease.task_id,
                kind=lease.kind,
                bookcode=lease.bookcode,
                shot_id=lease.shot_id,
                suffix=backend.suffix(lease.kind),
                token=lease.token,
                publish_as=lease.params.get("publish_as"),
            )
            params = self._directed()
            self.key = f"{params_hash(params)}-g{lease.generation}"
            out = self._generate(backend, paths, params, self.key)
        except GenerationError as exc:
            return self._failed(exc)
        except DatabaseUnavailable:  # the database, not the backend, failed: nothing to record
            raise
        except Exception as exc:  # anything else a backend raised: classified by the one table
            return self._failed(classify(exc))
        finally:
            if paths is not None:
                paths.part.unlink(missing_ok=True)
        return self._publish(paths, out)

    def _directed(self) -> dict[str, Any]:
        """The task's params, with its director's prompt in place of the rules' one once the
        director task it names (`params.director`) has completed with one for it."""
        shared, lease = self.shared, self.lease
        params = dict(lease.params)
        name = params.get("director")
        if not name:
            return params
        made = shared.engine.dependency_outputs(lease.task_id, reading="director")
        return directed(params, lease.kind, made[name].result) if name in made else params

    def _generate(self, backend: Backend, paths: OutputPaths, params: dict[str, Any], key: str) -> Output:
        shared, lease = self.shared, self.lease
        reused = paths.reusable(key)
        if reused is not None:  # an earlier attempt paid for this file: no second call
            return Output(
                path=paths.ready,
                cost=0.0,
                model=reused.get("model"),
                result={**reused.get("result", {}), "reused": True},
            )
        shared.retry("publishing", self._make_room, paths)
        job = Job(
            task_id=lease.task_id,
            kind=lease.kind,
            lane=lease.lane,
            params=params,
            inputs=self._inputs(),
            out_path=paths.part,
            remote_job_id=lease.remote_job_id,
        )
        shared.heartbeat.set_stage(lease.task_id, "generating")
        price = quote(backend, job)
        if price:  # booked before the call: a crash during it must not leave a paid call unbooked
            shared.engine.record_cost(lease, price, booking=True)
        self.in_call = True
        out = backend.run(job, _Context(shared, lease))
        self.in_call = False
        shared.outages.reached(provider(backend))
        fault("after_call")
        if out.cost or price:  # what the call really cost replaces the booking
            shared.engine.record_cost(lease, out.cost, model=out.model)
            shared.add_cost(out.cost)
        fault("after_cost")
        if out.path is not None:
            paths.mark_ready(
                {
                    "params_hash": key,
                    "model": out.model,
                    "cost": out.cost,
                    "result": dict(out.result),
                    "generation": lease.generation,
                },
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

    def _inputs(self) -> dict[str, Path]:
        """The dependencies' outputs as local paths, fetched through the store (cached by checksum)."""
        shared, store = self.shared, self.shared.store
        made = shared.engine.dependency_outputs(self.lease.task_id, reading="inputs")
        local: dict[str, Path] = {}
        for key, produced in made.items():
            if produced.output_path not in local:
                local[produced.output_path] = shared.retry(
                    f"fetching {key}", store.fetch, produced.output_path, produced.result
                )
        return {key: local[produced.output_path] for key, produced in made.items()}

    def _make_room(self, paths: OutputPaths) -> None:
        """The folder a call writes into. Made by default inside a folder store, so only while
        that folder is there: a NAS not mounted is never written on, the worker pauses as a
        publish would (an explicit --outputs folder is made as asked)."""
        root = self.shared.store.root
        if self.shared.cfg.outputs is None and root is not None and not root.is_dir():
            raise StoreUnavailable(f"store folder {root} is not there (not mounted?)")
        paths.part.parent.mkdir(parents=True, exist_ok=True)

    def _publish(self, paths: OutputPaths, out: Output) -> TaskEnd | Made:
        """Publish the output (a folder store stages it under the lease's mark: no renewal is
        needed, the completion fences it) and say what the completion records."""
        shared, lease = self.shared, self.lease
        shared.heartbeat.set_stage(lease.task_id, "finalizing")
        if shared.heartbeat.is_fenced(lease.task_id, lease.token):
            shared.heartbeat.drop(lease.task_id)
            return TaskEnd.FENCED
        meta = paths.reusable(self.key) if out.path is not None else None
        if out.path is not None and meta is None:  # never publish another's output
            return self._failed(
                GenerationError(
                    f"the ready file of {paths.name} now holds another generation's output",
                    error_kind="ready_replaced",
                    retryable=True,
                ),
            )
        stored: Stored | None = None
        if out.path is not None:
            store, sides, target = shared.store, paths.ready_sides(), paths.name
            owner = shared.engine.output_owner(target, lease.task_id)
            if owner is not None:  # never replace another task's file: say so and keep ours
                return self._failed(
                    GenerationError(
                        f"output {target} belongs to task {owner}; not replaced",
                        error_kind="output_taken",
                        retryable=False,
                    ),
                )
            try:
                stored = shared.retry(
                    "publishing",
                    store.publish,
                    paths.name,
                    paths.ready,
                    sides,
                    lease=(lease.task_id, lease.token),
                    first=lease.attempt_no == 1 and lease.generation == 0,  # no earlier lease staged a file
                )
            except (FileNotFoundError, LeaseLost):  # woke too late: taken over (its .ready file, or the lease)
                shared.heartbeat.drop(lease.task_id)
                return TaskEnd.FENCED
            store.settle(stored, paths.ready, sides)  # what stays local moves into the cache
            paths.tidy()
            fault("after_publish")
        checksums = (
            {}
            if stored is None
            else {
                "sha256": stored.sha256,
                "bytes": stored.size,
                **({"sides": stored.sides} if stored.sides else {}),
                **({"staged": stored.staged} if stored.staged else {}),
            }
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
            uploads=stored.uploads if stored else (),
        )
        ready = (paths, meta) if stored is not None and meta is not None else None
        return Made(lease=lease, completion=completion, stored=stored, paid=bool(out.cost), ready=ready)

    def _failed(self, exc: GenerationError) -> TaskEnd:
        shared, lease = self.shared, self.lease
        shared.heartbeat.drop(lease.task_id)
        if exc.error_kind == "quota_exhausted":
            return self._pause_lane(exc)
        if exc.turned_away and lease.kind not in kinds.optional():
            # An optional pass never holds the book: its unreached calls count as attempts, so once
            # they are spent its frames go ahead with the rules' prompts.
            return self._turned_away(exc)
        if self.in_call:  # the provider took the call: it answers
            shared.outages.reached(provider(shared.backend_for(lease.kind)))
        shared.add_cost(exc.cost)
        # A failed call's own cost (0 if the provider never billed it) replaces any booking; a
        # failure after the call returned keeps the cost already recorded.
        cost = exc.cost if self.in_call else None
        ack, status = shared.engine.fail(
            lease,
            error=str(exc),
            error_kind=exc.error_kind,
            retryable=exc.retryable,
            retry_after=exc.retry_after,
            cost=cost,
        )
        if ack is Ack.FENCED:
            return TaskEnd.FENCED
        return TaskEnd.RETRIED if status is Status.PENDING else TaskEnd.FAILED

    def _pause_lane(self, exc: GenerationError) -> TaskEnd:
        """The provider's quota is used up or its account unpaid: no task is at fault and every
        call would fail alike. Give the task back unspent, pause its lane fleet-wide, alert."""
        shared, lease = self.shared, self.lease
        if self.in_call:  # the refused call cost what the provider says (nothing), not the quote
            shared.engine.record_cost(lease, exc.cost)
        shared.engine.release([lease], why=str(exc))
        shared.engine.pause_lane(lease.lane, str(exc), task_id=lease.task_id)
        return TaskEnd.PAUSED

    def _turned_away(self, exc: GenerationError) -> TaskEnd:
        """The provider never took the call: give the task back without using an attempt or
        booking its quote, and pause that provider for this worker (a line and an alert the
        first time), voting for a fleet-wide pause."""
        shared, lease = self.shared, self.lease
        if self.in_call:
            shared.engine.record_cost(lease, exc.cost)
        who = provider(shared.backend_for(lease.kind))
        # Paused before the task is given back, and never while a claim is between reading the
        # paused kinds and taking rows: either way another in-flight slot claimed the task again
        # and was turned away twice before the pause held its kind.
        with shared.claiming:
            shared.outages.turned_away(who, exc, lease.task_id)
        shared.engine.release([lease], why=f"({who}: {exc})")
        return TaskEnd.RELEASED


def _with_thumbnail(kind: str, out: Output, paths: OutputPaths) -> dict[str, Path]:
    """The call's side files, plus a thumbnail beside an image (screens show it instead of
    fetching the whole frame); an image Pillow cannot read simply goes without one."""
    extras = dict(out.extras)
    if kind in kinds.names(media=kinds.Media.IMAGE) and out.path is not None and thumbnail.SUFFIX not in extras:
        small = paths.side_part(thumbnail.SUFFIX)
        if thumbnail.draw(out.path, small):
            extras[thumbnail.SUFFIX] = small
    return extras
