"""One query an operator reads: what is queued, running, stuck, blocked and failed, per worker."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, events, lanes, task_deps, tasks, workers
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.engine.dependents import transitive_dependents
from pipeline_kit.engine.registry import FOLD_AFTER_S, Liveness, judge
from pipeline_kit.engine.spend import provider_spend
from pipeline_kit.engine.states import DEAD_ENDS, Status
from pipeline_kit.errors import NotFound

LISTED = 50  # at most this many stuck / blocked / failed tasks are listed
DECISIONS = 5  # the last review decisions shown


@dataclass(frozen=True)
class ReviewDecision:
    """One review decision: approve or reject (with its note), by whom and when."""

    at: datetime
    decision: str  # approve | reject
    task_id: str
    by: str | None
    note: str | None


@dataclass(frozen=True)
class Problem:
    task_id: str
    status: str
    lane: str
    worker_id: str | None
    detail: str
    next_action: str


@dataclass(frozen=True)
class Overview:
    counts: dict[str, int]
    lanes: dict[str, dict[str, Any]]
    workers: dict[str, dict[str, Any]]
    stuck: list[Problem] = field(default_factory=list)
    blocked: list[Problem] = field(default_factory=list)
    failed: list[Problem] = field(default_factory=list)
    db_time: datetime | None = None
    books: dict[str, dict[str, Any]] = field(default_factory=dict)  # bookcode -> title, counts
    folded_workers: int = 0  # not seen for a day, holding nothing: left out unless asked for
    awaiting_review: int = 0  # outputs waiting for a person's approval
    decisions: list[ReviewDecision] = field(default_factory=list)  # the last ones, newest first
    spend: dict[str, dict[str, Any]] = field(default_factory=dict)  # provider -> attempts, cost

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["total"] = self.total
        out["db_time"] = self.db_time.isoformat() if self.db_time else None
        for decision in out["decisions"]:
            decision["at"] = decision["at"].isoformat()
        return out


def overview(db: Database, bookcode: str | None = None, *, all_workers: bool = False) -> Overview:
    """Counts per status, per book, per lane and per worker, plus the tasks that need a person,
    with advice. An unknown bookcode is NotFound; `all_workers` also lists the folded workers."""
    scope = [tasks.c.bookcode == bookcode] if bookcode else []
    with db.engine.connect().execution_options(sqlite_begin="DEFERRED") as conn:
        now = conn.execute(sa.select(db_now())).scalar()
        books_seen = _books(conn, bookcode)
        if bookcode and bookcode not in books_seen:
            raise NotFound(f"no book {bookcode!r} in this database "
                           "(`pipeline-kit status` lists the books)")
        counts = {s.value: 0 for s in Status}
        per_lane: dict[str, dict[str, Any]] = {}
        for lane in conn.execute(sa.select(lanes)).mappings():
            per_lane[lane["lane"]] = {"max_running": lane["max_running"], "paused": bool(lane["paused"]),
                                      "counts": {}}
        for row in conn.execute(sa.select(tasks.c.lane, tasks.c.status, sa.func.count().label("n"))
                                .where(*scope).group_by(tasks.c.lane, tasks.c.status)):
            counts[row.status] = counts.get(row.status, 0) + row.n
            per_lane.setdefault(row.lane, {"counts": {}})["counts"][row.status] = row.n
        shown, folded = _workers(conn, now, scope, all_workers)
        stuck = [
            Problem(r.task_id, r.status, r.lane, r.worker_id,
                    f"lease expired {_age(now, r.lease_expires_at):.0f} s ago",
                    "run `pipeline-kit watchdog --once` (workers do it on their own within a minute)")
            for r in conn.execute(sa.select(tasks).where(tasks.c.status == Status.PROCESSING.value,
                                                         tasks.c.lease_expires_at < now, *scope)
                                  .order_by(tasks.c.lease_expires_at).limit(LISTED))
        ]
        failed = [
            Problem(r.task_id, r.status, r.lane, r.worker_id, r.last_error or "",
                    f"fix the cause, then `pipeline-kit retry {r.task_id}` (or cancel it)")
            for r in conn.execute(sa.select(tasks).where(tasks.c.status == Status.FAILED.value, *scope)
                                  .order_by(tasks.c.id).limit(LISTED))
        ]
        blocked = []
        dead = [s.value for s in DEAD_ENDS]
        for r in conn.execute(sa.select(tasks).where(tasks.c.status == Status.BLOCKED.value, *scope)
                              .order_by(tasks.c.id).limit(LISTED)):
            blockers = conn.execute(
                sa.select(tasks.c.task_id).join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
                .where(task_deps.c.task_id == r.task_id, tasks.c.status.in_(dead))
            ).scalars().all()
            blocked.append(Problem(r.task_id, r.status, r.lane, r.worker_id,
                                   f"waits on {', '.join(blockers) or 'a dependency that cannot finish'}",
                                   "retry the failed dependency; this task is released when it can run"))
        decisions = _decisions(conn, bookcode)
        spend = provider_spend(conn, bookcode)
    return Overview(counts=counts, lanes=per_lane, workers=shown, stuck=stuck, blocked=blocked,
                    failed=failed, db_time=now, books=books_seen, folded_workers=folded,
                    awaiting_review=counts.get(Status.AWAITING_REVIEW.value, 0),
                    decisions=decisions, spend=spend)


def last_decisions(db: Database, bookcode: str | None = None) -> list[ReviewDecision]:
    """The last review decisions (in one book, or in all), newest first."""
    with db.engine.connect().execution_options(sqlite_begin="DEFERRED") as conn:
        return _decisions(conn, bookcode)


def _decisions(conn: sa.Connection, bookcode: str | None) -> list[ReviewDecision]:
    """The last review decisions (in one book, or in all), newest first."""
    query = (sa.select(events.c.at, events.c.kind, events.c.task_id, events.c.worker_id,
                       events.c.detail)
             .where(events.c.kind.in_(["approve", "reject"]))
             .order_by(events.c.at.desc(), events.c.id.desc()).limit(DECISIONS))
    if bookcode:
        query = (query.join(tasks, tasks.c.task_id == events.c.task_id)
                 .where(tasks.c.bookcode == bookcode))
    try:
        with conn.begin_nested():  # a refused read undoes only itself
            rows = conn.execute(query).all()
    except sa.exc.DBAPIError as exc:
        if exc.connection_invalidated:
            raise
        return []  # a worker account may not read events (security.py): no decisions to show
    return [ReviewDecision(r.at, r.kind, r.task_id, r.worker_id, (r.detail or {}).get("note"))
            for r in rows]


def _books(conn: sa.Connection, bookcode: str | None) -> dict[str, dict[str, Any]]:
    """Each book (or the one asked for) with its title and its tasks per status; books not yet
    split and bookcodes that only tasks name are listed too."""
    found: dict[str, dict[str, Any]] = {}
    query = sa.select(books.c.bookcode, books.c.title)
    for row in conn.execute(query.where(books.c.bookcode == bookcode) if bookcode else query):
        found[row.bookcode] = {"title": row.title, "counts": {}}
    scope = [tasks.c.bookcode == bookcode] if bookcode else [tasks.c.bookcode.is_not(None)]
    for row in conn.execute(sa.select(tasks.c.bookcode, tasks.c.status, sa.func.count().label("n"))
                            .where(*scope)
                            .group_by(tasks.c.bookcode, tasks.c.status)):
        found.setdefault(row.bookcode, {"title": None, "counts": {}})["counts"][row.status] = row.n
    return found


def _workers(conn: sa.Connection, now: datetime | None, scope: list[Any],
             all_workers: bool) -> tuple[dict[str, dict[str, Any]], int]:
    """Each worker's counts, running tasks and liveness; workers not seen for a day and holding
    nothing are folded away unless `all_workers` (returns the shown ones and how many folded)."""
    per_worker: dict[str, dict[str, Any]] = defaultdict(lambda: {"counts": {}, "current": []})
    last_beat: dict[str, datetime | None] = {}
    for row in conn.execute(sa.select(tasks.c.worker_id, tasks.c.status, sa.func.count().label("n"),
                                      sa.func.max(tasks.c.heartbeat_at).label("beat"))
                            .where(tasks.c.worker_id.is_not(None), *scope)
                            .group_by(tasks.c.worker_id, tasks.c.status)):
        per_worker[row.worker_id]["counts"][row.status] = row.n
        last_beat[row.worker_id] = max(filter(None, (last_beat.get(row.worker_id), row.beat)),
                                       default=None)
    for row in conn.execute(sa.select(tasks.c.worker_id, tasks.c.task_id, tasks.c.stage,
                                      tasks.c.heartbeat_at, tasks.c.lease_expires_at)
                            .where(tasks.c.status == Status.PROCESSING.value, *scope)
                            .order_by(tasks.c.worker_id, tasks.c.id)):
        per_worker[row.worker_id]["current"].append(
            {"task_id": row.task_id, "stage": row.stage,
             "heartbeat_age_s": _age(now, row.heartbeat_at),
             "lease_left_s": -_age(now, row.lease_expires_at) if row.lease_expires_at else None})
    registered = {row["worker_id"]: row for row in conn.execute(sa.select(workers)).mappings()}
    shown: dict[str, dict[str, Any]] = {}
    folded = 0
    for worker_id in sorted(set(per_worker) | set(registered)):
        info, row = per_worker[worker_id], registered.get(worker_id)
        if row is not None:
            info.update(host=row["host"], uid=row["uid"], lanes=row["lanes"], state=row["state"],
                        lease_s=row["lease_s"], last_seen_age_s=_age(now, row["last_seen_at"]))
        else:  # an engine user that never registered: judged by its tasks alone
            info.update(host=None, uid=None, lanes=None, state=None, lease_s=None,
                        last_seen_age_s=_age(now, last_beat.get(worker_id)))
        live = (judge(info["state"], info["last_seen_age_s"], info["lease_s"])
                or _by_tasks(info["current"]))
        info["liveness"] = live.value if live else None
        age = info["last_seen_age_s"]
        if not all_workers and not info["current"] and (age is None or age > FOLD_AFTER_S):
            folded += 1
        else:
            shown[worker_id] = info
    return shown, folded


def _by_tasks(current: list[dict[str, Any]]) -> Liveness | None:
    """An unregistered worker: not responding if a lease it holds ran out, working if it holds
    one, unknown otherwise."""
    if any((t["lease_left_s"] or 0) < 0 for t in current):
        return Liveness.NOT_RESPONDING
    return Liveness.WORKING if current else None


def _age(now: datetime | None, then: datetime | None) -> float | None:
    if now is None or then is None:
        return None
    return round((now - then).total_seconds(), 1)


def open_work(db: Database, lanes_served: Sequence[str]) -> int:
    """Tasks in these lanes that are pending or running, leaving out those that wait (directly or
    not) on an output awaiting review: a worker `--until-empty` stops at 0, since only a person
    can release those."""
    with db.engine.connect().execution_options(sqlite_begin="DEFERRED") as conn:
        in_lanes = [tasks.c.lane.in_(list(lanes_served)),
                    tasks.c.status.in_([Status.PENDING.value, Status.PROCESSING.value])]
        count = int(conn.execute(sa.select(sa.func.count()).select_from(tasks).where(*in_lanes))
                    .scalar_one())
        if not count:
            return 0
        waiting = conn.execute(sa.select(tasks.c.task_id)
                               .where(tasks.c.status == Status.AWAITING_REVIEW.value)).scalars()
        held = transitive_dependents(conn, waiting)
        for i in range(0, len(held), 500):
            count -= int(conn.execute(
                sa.select(sa.func.count()).select_from(tasks)
                .where(tasks.c.task_id.in_(held[i : i + 500]), *in_lanes)).scalar_one())
        return count


def review_count(db: Database, bookcode: str | None = None) -> int:
    """How many outputs wait for a person's review (in one book, or in all)."""
    scope = [tasks.c.bookcode == bookcode] if bookcode else []
    with db.engine.connect().execution_options(sqlite_begin="DEFERRED") as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(tasks).where(
            tasks.c.status == Status.AWAITING_REVIEW.value, *scope)).scalar_one())


def pending_elsewhere(db: Database, lanes_served: Sequence[str]) -> dict[str, int]:
    """Pending tasks per lane outside `lanes_served`: what a worker that ran dry leaves undone."""
    with db.engine.connect().execution_options(sqlite_begin="DEFERRED") as conn:
        rows = conn.execute(
            sa.select(tasks.c.lane, sa.func.count()).select_from(tasks)
            .where(tasks.c.lane.not_in(list(lanes_served)), tasks.c.status == Status.PENDING.value)
            .group_by(tasks.c.lane).order_by(tasks.c.lane))
        return {lane: int(n) for lane, n in rows}


def open_kinds(db: Database, lanes_served: Sequence[str]) -> dict[str, str]:
    """Kind -> its lane, for the kinds of the tasks in these lanes still to be made (pending,
    running or blocked): what a worker starting on them must be able to make."""
    with db.engine.connect().execution_options(sqlite_begin="DEFERRED") as conn:
        rows = conn.execute(
            sa.select(tasks.c.kind, tasks.c.lane).distinct()
            .where(tasks.c.lane.in_(list(lanes_served)),
                   tasks.c.status.in_((Status.PENDING.value, Status.PROCESSING.value, Status.BLOCKED.value))))
        return {kind: lane for kind, lane in rows}


def open_book_langs(db: Database) -> set[str]:
    """The languages of the books that still have tasks waiting or running."""
    waiting = sa.exists().where(tasks.c.bookcode == books.c.bookcode,
                                tasks.c.status.in_((Status.PENDING.value, Status.PROCESSING.value)))
    with db.engine.connect() as conn:
        return set(conn.execute(sa.select(books.c.lang).distinct().where(waiting)).scalars())
