"""The engine as one worker sees it: each operation it uses, typed, and retried while the database is away.

The loop, a task's run and the provider outages reach the engine only here: every method runs its
engine function through the worker's `Reconnecting` (reconnect.py), under the label its lines say
("database unreachable during claim"), with the worker's database and id filled in. (The heartbeat
thread keeps its own once-a-minute error line instead, and the lane check at start and the last
row write at exit are not waited for.) The store's calls go through the
same `Reconnecting` where they are made (runtime.py opens the store, task_run.py uses it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pipeline_kit import engine
from pipeline_kit.db.connect import Database
from pipeline_kit.engine import Ack, Completion, LaneCache, Lease, Reclaimed, Status
from pipeline_kit.engine.lease import Produced
from pipeline_kit.engine.operator import was_canceled
from pipeline_kit.engine.outages import Outage, alert_paused, fleet_down, vote_down, vote_up
from pipeline_kit.worker.reconnect import Reconnecting
from pipeline_kit.worker.spool import Spool


class EngineGateway:
    """The engine operations of worker `worker_id` on `db`, each through `retry`."""

    def __init__(self, db: Database, worker_id: str, retry: Reconnecting) -> None:
        self.db, self.worker_id, self._retry = db, worker_id, retry

    # -- the loop ---------------------------------------------------------------------------
    def register(self, lanes: Sequence[str], *, uid: str | None, backend: str, lease_s: float) -> None:
        self._retry(
            "register",
            engine.register_worker,
            self.db,
            self.worker_id,
            lanes=list(lanes),
            uid=uid,
            backend=backend,
            lease_s=lease_s,
        )

    def open_kinds(self, lanes: Sequence[str]) -> dict[str, str]:
        return self._retry("kinds waiting", engine.open_kinds, self.db, lanes)

    def open_book_langs(self) -> set[str]:
        return self._retry("book languages", engine.open_book_langs, self.db)

    def claim(
        self, lanes: Sequence[str], *, limit: int, lease_s: float, cache: LaneCache, skip_kinds: Sequence[str]
    ) -> list[Lease]:
        return self._retry(
            "claim",
            engine.claim,
            self.db,
            self.worker_id,
            lanes,
            limit=limit,
            lease_s=lease_s,
            cache=cache,
            skip_kinds=skip_kinds,
        )

    def open_work(self, lanes: Sequence[str], *, unserved: Sequence[str] = ()) -> engine.OpenWork:
        """The open work of `lanes` (and how much of it waits on the `unserved` lanes), in one read."""
        return self._retry("open work", engine.open_and_stranded, self.db, lanes, unserved=unserved)

    def unserved_lanes(self, lanes: Sequence[str]) -> dict[str, int]:
        return self._retry("unserved lanes", engine.unserved_lanes, self.db, lanes)

    def pending_elsewhere(self, lanes: Sequence[str]) -> dict[str, int]:
        return self._retry("other lanes", engine.pending_elsewhere, self.db, lanes)

    def review_count(self) -> int:
        return self._retry("review count", engine.review_count, self.db)

    def release(self, leases: Sequence[Lease], *, why: str) -> list[str]:
        """Give `leases` back unspent; the ids given back."""
        held = {lease.task_id: lease.token for lease in leases}
        return self._retry("release", engine.release_many, self.db, held, worker_id=self.worker_id, why=why)

    def reclaim_expired(self) -> list[Reclaimed]:
        return self._retry("watchdog", engine.reclaim_expired, self.db, by=self.worker_id)

    def flush_spool(self, spool: Spool, answered: Callable[[Completion, Ack], None]) -> dict[str, Ack]:
        """Submit the completions `spool` kept while the database was away (`answered` hears each)."""
        return self._retry("spool", spool.flush, self.db, self.worker_id, answered)

    # -- one task ---------------------------------------------------------------------------
    def dependency_outputs(self, task_id: str, *, reading: Literal["director", "inputs"]) -> dict[str, Produced]:
        """The task's finished dependencies' outputs, `reading` them for its director or as inputs."""
        return self._retry(reading, engine.dependency_outputs, self.db, task_id)

    def record_remote_job(self, lease: Lease, job_id: str) -> None:
        self._retry("remote job id", engine.record_remote_job, self.db, lease.task_id, lease.token, job_id)

    def record_cost(self, lease: Lease, cost: float, *, model: str | None = None, booking: bool = False) -> None:
        """Record what the call really cost, in place of any booking; `booking`: what calls cost so
        far, booked before the task's own call returns (a crash leaves it booked)."""
        label = "book cost" if booking else "record cost"
        self._retry(label, engine.record_cost, self.db, lease.task_id, lease.token, cost, model=model)

    def was_canceled(self, task_id: str) -> bool:
        return self._retry("canceled?", was_canceled, self.db, task_id)

    def recall_answer(self, key: str) -> dict[str, Any] | None:
        return self._retry("answer cache", engine.recall_answer, self.db, key)

    def remember_answer(self, key: str, record: Mapping[str, Any], lease: Lease) -> None:
        self._retry(
            "answer cache", engine.remember_answer, self.db, key, dict(record), lease=(lease.task_id, lease.token)
        )

    def output_owner(self, output_path: str, task_id: str) -> str | None:
        return self._retry("output owner", engine.output_owner, self.db, output_path, task_id)

    def complete_many(self, completions: Sequence[Completion]) -> dict[str, Ack]:
        """Send `completions` in one transaction: each ACCEPTED, DUPLICATE or FENCED, by task id."""
        return self._retry("complete", engine.complete_many, self.db, completions, worker_id=self.worker_id)

    def fail(
        self,
        lease: Lease,
        *,
        error: str,
        error_kind: str,
        retryable: bool,
        retry_after: float | None,
        cost: float | None,
    ) -> tuple[Ack, Status | None]:
        return self._retry(
            "fail",
            engine.fail,
            self.db,
            lease.task_id,
            lease.token,
            error=error,
            error_kind=error_kind,
            retryable=retryable,
            retry_after=retry_after,
            cost=cost,
            worker_id=self.worker_id,
        )

    def pause_lane(self, lane: str, message: str, *, task_id: str) -> None:
        """Pause `lane` for the fleet and alert (a provider's quota is used up)."""
        self._retry(
            "pause lane", engine.pause_with_alert, self.db, lane, message, task_id=task_id, worker_id=self.worker_id
        )

    # -- providers down (outages.py) --------------------------------------------------------
    def fleet_down(self, quorum: int) -> dict[str, Outage]:
        return self._retry("provider outages", fleet_down, self.db, quorum)

    def vote_down(
        self, provider: str, reason: str, *, hold_s: float, quorum: int, task_id: str | None, new: bool
    ) -> None:
        self._retry(
            "provider outage",
            vote_down,
            self.db,
            provider,
            self.worker_id,
            reason,
            hold_s=hold_s,
            quorum=quorum,
            task_id=task_id,
            new=new,
        )

    def vote_up(self, provider: str, *, away_s: float) -> None:
        self._retry("provider back", vote_up, self.db, provider, self.worker_id, away_s=away_s)

    def alert_paused(self, provider: str, reason: str, *, task_id: str | None) -> None:
        self._retry("alert", alert_paused, self.db, provider, self.worker_id, reason, task_id=task_id)
