"""The admin screen's view-model: one snapshot of the fleet, and the operator's buttons.

A snapshot is the engine's `overview` reshaped into rows a screen can lay out, plus what the
overview does not hold: throughput over the last few minutes (closed attempts, by the database
clock, so a rate says how fast the fleet goes now, not an hour's average) and the running tasks
whose lease runs out soon. It names the database it watches, without user or password. Actions
call the engine's operator verbs. The outputs it shows (the latest frames and character sheets,
the films made) are fetched through the output store, so the screen shows them from any PC.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline_kit import engine, kinds
from pipeline_kit.db.connect import Database
from pipeline_kit.engine.queries import latest_outputs, open_in_lanes, outcome_counts
from pipeline_kit.engine.registry import Liveness
from pipeline_kit.engine.states import Outcome, Status
from pipeline_kit.engine.status import Problem, ReviewDecision
from pipeline_kit.store import Store
from pipeline_kit.ui.actions import ActionResult, attempt
from pipeline_kit.ui.film_view import FilmRow, made_films
from pipeline_kit.ui.session import screen_store
from pipeline_kit.ui.words import frames
from pipeline_kit.ui.media import local_copy
from pipeline_kit.plural import plural

HOUR_S = 3600.0
RATE_WINDOW_S = 300.0  # rates are over the last five minutes
OPEN = (Status.PENDING, Status.PROCESSING)
PICTURES = kinds.names(media=kinds.Media.IMAGE)  # the outputs shown as pictures
LATEST = 6  # pictures shown, newest first
RECENT = 2000  # pictures are sought among this many newest attempts (a refresh never scans them all)


@dataclass(frozen=True)
class LaneRow:
    lane: str
    paused: bool
    max_running: int | None
    counts: Mapping[str, int]  # status -> tasks in this lane


@dataclass(frozen=True)
class WorkerRow:
    worker_id: str
    host: str | None
    state: str | None  # working | idle | paused: why since when | stopped | not responding (None: never registered)
    task_id: str | None  # the first task it holds now
    running: int  # tasks it holds now
    stage: str | None
    heartbeat_age_s: float | None
    last_seen_age_s: float | None
    completed: int
    lanes: tuple[str, ...] = ()  # the lanes it serves


@dataclass(frozen=True)
class ExpiringRow:
    task_id: str
    worker_id: str
    lease_left_s: float  # negative: already expired, the watchdog will take it back


@dataclass(frozen=True)
class ProblemRow:
    task_id: str
    status: str
    lane: str
    detail: str  # the last error, or what a blocked task waits on
    next_action: str


@dataclass(frozen=True)
class Throughput:
    """Attempts closed in the last `window_s` seconds, by outcome (completed, retried, failed,
    lost, canceled), and the tasks completed in the last hour for scale."""

    outcomes: Mapping[str, int]
    completed_last_hour: int = 0
    window_s: float = RATE_WINDOW_S

    @property
    def completed(self) -> int:
        return self.outcomes.get(Outcome.COMPLETED.value, 0)

    @property
    def per_minute(self) -> float:
        """Completions a minute over the window (not over the hour)."""
        return round(self.completed / (self.window_s / 60), 2)


@dataclass(frozen=True)
class OutputRow:
    """A picture made lately: its task and a local copy fetched through the store."""

    task_id: str
    kind: str
    path: str | None

    @property
    def ready(self) -> bool:
        return self.path is not None and Path(self.path).is_file()


@dataclass(frozen=True)
class MonitorSnapshot:
    db_time: datetime | None
    counts: Mapping[str, int]  # status -> tasks, every status present
    lanes: tuple[LaneRow, ...]
    workers: tuple[WorkerRow, ...]
    expiring: tuple[ExpiringRow, ...]
    failed: tuple[ProblemRow, ...]
    blocked: tuple[ProblemRow, ...]
    throughput: Throughput
    database: str = ""  # which database is watched: kind, host and name, never a password
    folded_workers: int = 0  # workers not seen for a day, left out unless `show_all`
    awaiting_review: int = 0  # outputs waiting for a person's approval
    decisions: tuple[ReviewDecision, ...] = ()  # the last approvals and rejections, newest first
    latest: tuple[OutputRow, ...] = ()  # the last frames and character sheets made, newest first
    films: tuple[FilmRow, ...] = ()  # the last films made, newest first
    spend: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # provider -> cost
    providers_down: tuple[str, ...] = ()  # providers workers find down: who, how many, since when, why

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def open(self) -> int:
        """Tasks still pending or running: 0 means the fleet has nothing left to do."""
        return sum(self.counts.get(s, 0) for s in OPEN)


class MonitorModel:
    """Read the fleet's state and act on tasks and lanes, for one book or the whole database."""

    def __init__(
        self,
        db: Database,
        bookcode: str | None = None,
        *,
        expiring_within_s: float = 30.0,
        by: str = "monitor",
        show_all: bool = False,
        store: Store | None = None,
    ) -> None:
        self.db, self.bookcode, self.by = db, bookcode or None, by
        self._store = store
        self.expiring_within_s = expiring_within_s
        self.show_all = show_all  # also list workers not seen for a day

    def snapshot(self) -> MonitorSnapshot:
        """Everything the admin screen shows, read in a few short queries."""
        view = engine.overview(self.db, self.bookcode, all_workers=self.show_all)
        return MonitorSnapshot(
            db_time=view.db_time,
            counts=dict(view.counts),
            lanes=tuple(
                LaneRow(name, bool(info.get("paused", False)), info.get("max_running"), dict(info.get("counts", {})))
                for name, info in sorted(view.lanes.items())
            ),
            workers=self._waiting_for_review(_workers(view.workers)),
            expiring=_expiring(view.workers, self.expiring_within_s),
            failed=tuple(_problem(p) for p in view.failed),
            blocked=tuple(_problem(p) for p in view.blocked),
            throughput=self._throughput(),
            database=self.db.where,
            folded_workers=view.folded_workers,
            awaiting_review=view.awaiting_review,
            decisions=tuple(view.decisions),
            latest=self.latest(),
            films=made_films(self.db, self.store, self.bookcode),
            spend=view.spend,
            providers_down=tuple(view.providers_down),
        )

    @property
    def store(self) -> Store:
        """The output store in effect, opened on first use (the screen may start before it is set)."""
        if self._store is None:
            self._store = screen_store(self.db)
        return self._store

    def latest(self, limit: int = LATEST) -> tuple[OutputRow, ...]:
        """The frames and character sheets completed last (approved or waiting for review), newest
        first, each fetched through the store; sought among the newest attempts only (read back
        along the attempts' key, so a refresh never scans the task table)."""
        with self.db.reading() as conn:
            newest = latest_outputs(conn, PICTURES, bookcode=self.bookcode, limit=limit, among=RECENT)
        return tuple(OutputRow(r.task_id, r.kind, local_copy(self.store, r.output_path, r.result)) for r in newest)

    def _waiting_for_review(self, rows: tuple[WorkerRow, ...]) -> tuple[WorkerRow, ...]:
        """An idle worker whose lanes hold work that only a person's review can release, and no
        other, says so: 'waiting for review (3 frames)' (what waits in every book: a worker
        serves them all), as the worker itself says on its progress line."""
        idle = [r for r in rows if r.state == Liveness.IDLE.value and r.lanes]
        waiting = engine.review_count(self.db) if idle else 0
        if not waiting:
            return rows
        held: dict[tuple[str, ...], bool] = {}
        for r in idle:
            if r.lanes not in held:
                held[r.lanes] = bool(_open_in(self.db, r.lanes)) and engine.open_work(self.db, r.lanes) == 0
        said = f"waiting for review ({frames(waiting)})"
        return tuple(replace(r, state=said) if r in idle and held[r.lanes] else r for r in rows)

    def retry(self, task_id: str) -> ActionResult:
        return attempt(
            lambda: engine.retry_task(self.db, task_id, by=self.by),
            lambda freed: (
                f"{task_id} is pending again" + (f"; {plural(len(freed), 'dependent')} released" if freed else "")
            ),
        )

    def cancel(self, task_id: str) -> ActionResult:
        return attempt(
            lambda: engine.cancel_task(self.db, task_id, by=self.by),
            lambda blocked: (
                f"{task_id} canceled" + (f"; {plural(len(blocked), 'dependent')} blocked" if blocked else "")
            ),
        )

    def pause(self, lane: str) -> ActionResult:
        return attempt(
            lambda: engine.update_lane(self.db, lane, paused=True),
            lambda _: f"lane {lane} paused: running tasks finish, nothing new is claimed",
        )

    def resume(self, lane: str) -> ActionResult:
        return attempt(lambda: engine.update_lane(self.db, lane, paused=False), lambda _: f"lane {lane} resumed")

    def _throughput(self) -> Throughput:
        """Attempts closed within the rate window by outcome, and completions in the last hour;
        rates divide by the part of the window that work covered (a run that began two minutes
        ago by two minutes), rounded up to a tenth of a minute as the screen shows it."""
        with self.db.reading() as conn:
            rows = outcome_counts(conn, window_s=RATE_WINDOW_S, since_s=HOUR_S, bookcode=self.bookcode)
        covered = engine.covered_window(self.db, RATE_WINDOW_S, self.bookcode)
        return Throughput(
            outcomes={r.outcome.value: r.recent for r in rows if r.recent},
            completed_last_hour=sum(r.since for r in rows if r.outcome is Outcome.COMPLETED),
            window_s=min(math.ceil(covered / 6) * 6.0, RATE_WINDOW_S),
        )


def _open_in(db: Database, lanes: tuple[str, ...]) -> int:
    """Tasks pending or running in these lanes, those held by review included."""
    with db.reading() as conn:
        return open_in_lanes(conn, lanes)


def _workers(raw: Mapping[str, Mapping[str, Any]]) -> tuple[WorkerRow, ...]:
    rows = []
    for worker_id, info in raw.items():
        current = list(info.get("current", []))
        first = current[0] if current else {}
        rows.append(
            WorkerRow(
                worker_id=worker_id,
                host=info.get("host"),
                state=engine.shown_state(info),
                task_id=first.get("task_id"),
                running=len(current),
                stage=first.get("stage"),
                heartbeat_age_s=first.get("heartbeat_age_s"),
                last_seen_age_s=info.get("last_seen_age_s"),
                completed=int(info.get("counts", {}).get(Status.COMPLETED.value, 0)),
                lanes=tuple(x for x in (info.get("lanes") or "").split(",") if x),
            )
        )
    # Busy workers first, then the most recently seen.
    return tuple(
        sorted(rows, key=lambda w: (w.running == 0, w.last_seen_age_s is None, w.last_seen_age_s or 0.0, w.worker_id))
    )


def _expiring(raw: Mapping[str, Mapping[str, Any]], within_s: float) -> tuple[ExpiringRow, ...]:
    rows = [
        ExpiringRow(t["task_id"], worker_id, float(t["lease_left_s"]))
        for worker_id, info in raw.items()
        for t in info.get("current", [])
        if t.get("lease_left_s") is not None and t["lease_left_s"] <= within_s
    ]
    return tuple(sorted(rows, key=lambda r: r.lease_left_s))


def _problem(p: Problem) -> ProblemRow:
    return ProblemRow(p.task_id, p.status, p.lane, p.detail, p.next_action)
