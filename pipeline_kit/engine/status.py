"""One query an operator reads: what is queued, running, stuck, blocked and failed, per worker."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, books, events, lanes, task_deps, tasks, workers
from pipeline_kit.db.sqltime import db_now, now_plus
from pipeline_kit.engine.dependents import transitive_dependents
from pipeline_kit.engine.outages import DEFAULT_QUORUM, down
from pipeline_kit.engine.registry import FOLD_AFTER_S, Liveness, judge
from pipeline_kit.engine.spend import provider_spend
from pipeline_kit.engine.states import DEAD_ENDS, Outcome, Status
from pipeline_kit.errors import NotFound
from pipeline_kit.plural import plural

LISTED = 50  # at most this many stuck / blocked / failed tasks are listed
FALLBACK_ITEMS = {"direct_chapter": "shot", "direct_book": "character"}  # what a director's fallback lists
DECISIONS = 5  # the last review decisions shown
SHORT_S, LONG_S = 300.0, 3600.0  # completion rates over the last 5 and 60 minutes
STALL_AFTER_S = 600.0  # open work and no completion for this long: status warns

# A task's columns as status shows them: all but its lease token, which a worker account may not
# read (knowing another lease's token is what a lease-checked write asks for).
SHOWN = tuple(c for c in tasks.c if c.name != "lease_token")


@dataclass(frozen=True)
class Rate:
    """Tasks completed in the last `window_s` seconds of work, and per minute. The window is the
    part of the asked one that work covered: a run that began two minutes ago is divided by two
    minutes, not five."""

    completed: int
    window_s: float
    per_minute: float

    @classmethod
    def of(cls, completed: int, window_s: float) -> Rate:
        return cls(completed, round(window_s, 1), round(completed * 60 / max(window_s, 1.0), 2))


@dataclass(frozen=True)
class Pace:
    """How fast the work goes and when it ends: completion rates over the last 5 and 60 minutes,
    the open tasks (pending or running) and an ETA at the recent rate, and how long since the
    last completion, `stalled` once that passes `stall_after_s` while work is open."""

    last_5m: Rate
    last_60m: Rate
    open_tasks: int
    eta_s: float | None  # None: nothing completed lately, so no estimate
    eta_at: datetime | None
    idle_s: float | None  # since the last completion (or the first claim, before any); None: no work yet
    stalled: bool
    stall_after_s: float = STALL_AFTER_S


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
    pace: Pace | None = None  # rates, ETA and a stall warning (workers' own rates: their `pace`)
    went_ahead: list[str] = field(default_factory=list)  # optional dependencies gone, one line each
    providers_down: list[str] = field(default_factory=list)  # providers workers find down, one line each
    fell_back: list[str] = field(default_factory=list)  # director tasks that kept the rules for some items
    unserved: list[str] = field(default_factory=list)  # lanes with pending work no running worker serves

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["total"] = self.total
        out["db_time"] = self.db_time.isoformat() if self.db_time else None
        if self.pace and self.pace.eta_at:
            out["pace"]["eta_at"] = self.pace.eta_at.isoformat()
        for decision in out["decisions"]:
            decision["at"] = decision["at"].isoformat()
        for worker in out["workers"].values():
            if isinstance(worker.get("paused_since"), datetime):
                worker["paused_since"] = worker["paused_since"].isoformat()
        return out


def overview(
    db: Database, bookcode: str | None = None, *, all_workers: bool = False, stall_after_s: float = STALL_AFTER_S
) -> Overview:
    """Counts per status, per book, per lane and per worker, plus the tasks that need a person,
    with advice, and the pace (rates, ETA, stall warning after `stall_after_s`). An unknown
    bookcode is NotFound; `all_workers` also lists the folded workers."""
    scope = [tasks.c.bookcode == bookcode] if bookcode else []
    with db.reading() as conn:
        now = conn.execute(sa.select(db_now())).scalar()
        books_seen = _books(conn, bookcode)
        if bookcode and bookcode not in books_seen:
            raise NotFound(f"no book {bookcode!r} in this database (`pipeline-kit status` lists the books)")
        counts = {s.value: 0 for s in Status}
        per_lane: dict[str, dict[str, Any]] = {}
        for lane in conn.execute(sa.select(lanes)).mappings():
            per_lane[lane["lane"]] = {"max_running": lane["max_running"], "paused": bool(lane["paused"]), "counts": {}}
        for row in conn.execute(
            sa.select(tasks.c.lane, tasks.c.status, sa.func.count().label("n"))
            .where(*scope)
            .group_by(tasks.c.lane, tasks.c.status)
        ):
            counts[row.status] = counts.get(row.status, 0) + row.n
            per_lane.setdefault(row.lane, {"counts": {}})["counts"][row.status] = row.n
        shown, folded = _workers(conn, now, scope, all_workers)
        stuck = [
            Problem(
                r.task_id,
                r.status,
                r.lane,
                r.worker_id,
                f"lease expired {_age(now, r.lease_expires_at):.0f} s ago",
                "run `pipeline-kit watchdog --once` (workers do it on their own within a minute)",
            )
            for r in conn.execute(
                sa.select(*SHOWN)
                .where(tasks.c.status == Status.PROCESSING.value, tasks.c.lease_expires_at < now, *scope)
                .order_by(tasks.c.lease_expires_at)
                .limit(LISTED)
            )
        ]
        failed = [
            Problem(
                r.task_id,
                r.status,
                r.lane,
                r.worker_id,
                r.last_error or "",
                f"fix the cause, then `pipeline-kit retry {r.task_id}` (or cancel it)",
            )
            for r in conn.execute(
                sa.select(*SHOWN)
                .where(tasks.c.status == Status.FAILED.value, *scope)
                .order_by(tasks.c.id)
                .limit(LISTED)
            )
        ]
        blocked = []
        dead = [s.value for s in DEAD_ENDS]
        for r in conn.execute(
            sa.select(*SHOWN).where(tasks.c.status == Status.BLOCKED.value, *scope).order_by(tasks.c.id).limit(LISTED)
        ):
            blockers = (
                conn.execute(
                    sa.select(tasks.c.task_id)
                    .join(task_deps, task_deps.c.depends_on == tasks.c.task_id)
                    .where(task_deps.c.task_id == r.task_id, tasks.c.status.in_(dead))
                )
                .scalars()
                .all()
            )
            blocked.append(
                Problem(
                    r.task_id,
                    r.status,
                    r.lane,
                    r.worker_id,
                    f"waits on {', '.join(blockers) or 'a dependency that cannot finish'}",
                    "retry the failed dependency; this task is released when it can run",
                )
            )
        decisions = _decisions(conn, bookcode)
        spend = provider_spend(conn, bookcode)
        activity = _activity(conn, bookcode, SHORT_S, LONG_S)
        open_tasks = counts[Status.PENDING.value] + counts[Status.PROCESSING.value]
        pace = _pace(conn, activity, now, open_tasks, bookcode, stall_after_s) if now else None
        for worker_id, info in shown.items():
            mine = activity.get(worker_id, _Activity())
            info["pace"] = {"last_5m": asdict(mine.short(now, SHORT_S)), "last_60m": asdict(mine.long(now, LONG_S))}
        went_ahead = _went_ahead(conn, scope)
        providers_down = [
            f"{o.provider} unreachable for {plural(o.workers, 'worker')} since {_local_time(o.since)}"
            + (" (paused for the fleet)" if o.workers >= DEFAULT_QUORUM else "")
            + f": {o.reason}"
            for o in down(conn).values()
        ]
        fell_back = _fell_back(conn, scope)
        unserved = _unserved(conn, per_lane)
    return Overview(
        unserved=unserved,
        counts=counts,
        lanes=per_lane,
        workers=shown,
        stuck=stuck,
        blocked=blocked,
        failed=failed,
        db_time=now,
        books=books_seen,
        folded_workers=folded,
        awaiting_review=counts.get(Status.AWAITING_REVIEW.value, 0),
        decisions=decisions,
        spend=spend,
        pace=pace,
        went_ahead=went_ahead,
        providers_down=providers_down,
        fell_back=fell_back,
    )


def covered_window(db: Database, window_s: float, bookcode: str | None = None) -> float:
    """Seconds of the last `window_s` that work covered (see `Rate`): what a rate over that
    window divides by. At least a second, so a rate is always defined."""
    with db.reading() as conn:
        now = conn.execute(sa.select(db_now())).scalar()
        first = _Activity.total(_activity(conn, bookcode, window_s, window_s)).first_short
        return _covered(first, now, window_s)


@dataclass(frozen=True)
class _Activity:
    """One worker's attempts (or everyone's) in the two windows: completions in each, the first
    claim among the attempts open or closed within each, and the last completion."""

    done_short: int = 0
    done_long: int = 0
    first_short: datetime | None = None
    first_long: datetime | None = None
    last_done: datetime | None = None

    def short(self, now: datetime | None, window_s: float) -> Rate:
        return Rate.of(self.done_short, _covered(self.first_short, now, window_s))

    def long(self, now: datetime | None, window_s: float) -> Rate:
        return Rate.of(self.done_long, _covered(self.first_long, now, window_s))

    @staticmethod
    def total(by_worker: dict[str, _Activity]) -> _Activity:
        """Everyone's activity from each worker's."""
        rows = list(by_worker.values())
        return _Activity(
            sum(r.done_short for r in rows),
            sum(r.done_long for r in rows),
            min((r.first_short for r in rows if r.first_short), default=None),
            min((r.first_long for r in rows if r.first_long), default=None),
            max((r.last_done for r in rows if r.last_done), default=None),
        )


def _activity(conn: sa.Connection, bookcode: str | None, short_s: float, long_s: float) -> dict[str, _Activity]:
    """Per worker, in one grouped query: the attempts running now or closed within the last
    `long_s` seconds (in one book, or all), summed for both windows."""
    done = attempts.c.outcome == Outcome.COMPLETED.value
    recent = attempts.c.finished_at >= now_plus(-short_s)
    in_short = sa.or_(attempts.c.outcome.is_(None), recent)
    query = (
        sa.select(
            attempts.c.worker_id,
            sa.func.sum(sa.case((sa.and_(done, recent), 1), else_=0)).label("done_short"),
            sa.func.sum(sa.case((done, 1), else_=0)).label("done_long"),
            sa.func.min(sa.case((in_short, attempts.c.claimed_at))).label("first_short"),
            sa.func.min(attempts.c.claimed_at).label("first_long"),
            sa.func.max(sa.case((done, attempts.c.finished_at))).label("last_done"),
        )
        .where(sa.or_(attempts.c.outcome.is_(None), attempts.c.finished_at >= now_plus(-long_s)))
        .group_by(attempts.c.worker_id)
    )
    return {
        r.worker_id: _Activity(int(r.done_short or 0), int(r.done_long or 0), r.first_short, r.first_long, r.last_done)
        for r in conn.execute(_of_book(query, bookcode))
    }


def _covered(first: datetime | None, now: datetime | None, window_s: float) -> float:
    """The part of the last `window_s` seconds after `first` (the first claim in the window)."""
    if now is None or first is None:
        return window_s
    return max(min((now - first).total_seconds(), window_s), 1.0)


def _pace(
    conn: sa.Connection,
    activity: dict[str, _Activity],
    now: datetime,
    open_tasks: int,
    bookcode: str | None,
    stall_after_s: float,
) -> Pace:
    """Rates, the ETA at the recent rate (the hour's when the last 5 minutes saw none) and the
    time since the last completion."""
    every = _Activity.total(activity)
    short, long = every.short(now, SHORT_S), every.long(now, LONG_S)
    per_minute = short.per_minute or long.per_minute
    eta_s = round(open_tasks / per_minute * 60, 1) if per_minute and open_tasks else None
    since = every.last_done or _last_completion(conn, bookcode) or every.first_long
    idle_s = _age(now, since)
    return Pace(
        last_5m=short,
        last_60m=long,
        open_tasks=open_tasks,
        eta_s=eta_s,
        eta_at=now + timedelta(seconds=eta_s) if eta_s is not None else None,
        idle_s=idle_s,
        stalled=bool(open_tasks and idle_s is not None and idle_s > stall_after_s),
        stall_after_s=stall_after_s,
    )


def _last_completion(conn: sa.Connection, bookcode: str | None) -> datetime | None:
    """When a task (of the book) last completed, before the last hour's attempts."""
    query = sa.select(sa.func.max(attempts.c.finished_at)).where(attempts.c.outcome == Outcome.COMPLETED.value)
    return conn.execute(_of_book(query, bookcode)).scalar()


def _of_book(query: sa.Select[Any], bookcode: str | None) -> sa.Select[Any]:
    """A query on attempts narrowed to the attempts of one book's tasks (None: every book)."""
    if not bookcode:
        return query
    return query.where(attempts.c.task_id.in_(sa.select(tasks.c.task_id).where(tasks.c.bookcode == bookcode)))


def _went_ahead(conn: sa.Connection, scope: list[Any]) -> list[str]:
    """A line per optional dependency that can no longer finish and was gone without."""
    rows = conn.execute(
        sa.select(events.c.task_id, events.c.detail, tasks.c.status)
        .join(tasks, tasks.c.task_id == events.c.task_id)
        .where(events.c.kind == "went_ahead", tasks.c.status.in_([s.value for s in DEAD_ENDS]), *scope)
        .order_by(events.c.id)
        .limit(LISTED)
    ).all()
    latest = {r.task_id: r for r in rows}
    return [
        f"{plural(int((r.detail or {}).get('tasks', 0)), 'task')} went ahead without {r.task_id} ({r.status}): "
        "they use what they have without its output"
        for r in latest.values()
    ]


def _fell_back(conn: sa.Connection, scope: list[Any]) -> list[str]:
    """A line per completed task whose answer was not usable for some of its items, so the rules'
    prompts were kept for them (a director's `fallback`): completed, yet not directed."""
    rows = conn.execute(
        sa.select(
            tasks.c.task_id,
            tasks.c.kind,
            tasks.c.result["fallback"].label("fallback"),
            tasks.c.result["refused"].label("refused"),
            tasks.c.params["chapter"].label("chapter"),
        )
        .where(tasks.c.status == Status.COMPLETED.value, tasks.c.kind.in_(FALLBACK_ITEMS), *scope)
        .order_by(tasks.c.id)
    ).all()
    lines = []
    for r in rows:
        if not isinstance(r.fallback, list) or not r.fallback or len(lines) >= LISTED:
            continue
        what = f"chapter {r.chapter}" if r.kind == "direct_chapter" else "the cast"
        why = f": {str(r.refused[0])[:120]}" if isinstance(r.refused, list) and r.refused else ""
        lines.append(
            f"{what} fell back to the rules for {plural(len(r.fallback), FALLBACK_ITEMS[r.kind])} "
            f"({r.task_id} completed, its answer for them not usable){why}"
        )
    return lines


def last_decisions(db: Database, bookcode: str | None = None) -> list[ReviewDecision]:
    """The last review decisions (in one book, or in all), newest first."""
    with db.reading() as conn:
        return _decisions(conn, bookcode)


def _decisions(conn: sa.Connection, bookcode: str | None) -> list[ReviewDecision]:
    """The last review decisions (in one book, or in all), newest first."""
    query = (
        sa.select(events.c.at, events.c.kind, events.c.task_id, events.c.worker_id, events.c.detail)
        .where(events.c.kind.in_(["approve", "reject"]))
        .order_by(events.c.at.desc(), events.c.id.desc())
        .limit(DECISIONS)
    )
    if bookcode:
        query = query.join(tasks, tasks.c.task_id == events.c.task_id).where(tasks.c.bookcode == bookcode)
    try:
        with conn.begin_nested():  # a refused read undoes only itself
            rows = conn.execute(query).all()
    except sa.exc.DBAPIError as exc:
        if exc.connection_invalidated:
            raise
        return []  # a worker account may not read events (security.py): no decisions to show
    return [ReviewDecision(r.at, r.kind, r.task_id, r.worker_id, (r.detail or {}).get("note")) for r in rows]


def _books(conn: sa.Connection, bookcode: str | None) -> dict[str, dict[str, Any]]:
    """Each book (or the one asked for) with its title, its film profile as stored (None: the
    default) and its tasks per status; books not yet split and bookcodes that only tasks name are
    listed too."""
    found: dict[str, dict[str, Any]] = {}
    query = sa.select(books.c.bookcode, books.c.title, books.c.film_profile)
    for row in conn.execute(query.where(books.c.bookcode == bookcode) if bookcode else query):
        found[row.bookcode] = {"title": row.title, "film_profile": row.film_profile, "counts": {}}
    scope = [tasks.c.bookcode == bookcode] if bookcode else [tasks.c.bookcode.is_not(None)]
    for row in conn.execute(
        sa.select(tasks.c.bookcode, tasks.c.status, sa.func.count().label("n"))
        .where(*scope)
        .group_by(tasks.c.bookcode, tasks.c.status)
    ):
        found.setdefault(row.bookcode, {"title": None, "film_profile": None, "counts": {}})["counts"][row.status] = (
            row.n
        )
    return found


def _workers(
    conn: sa.Connection, now: datetime | None, scope: list[Any], all_workers: bool
) -> tuple[dict[str, dict[str, Any]], int]:
    """Each worker's counts, running tasks and liveness; workers not seen for a day and holding
    nothing are folded away unless `all_workers` (returns the shown ones and how many folded)."""
    per_worker: dict[str, dict[str, Any]] = defaultdict(lambda: {"counts": {}, "current": []})
    last_beat: dict[str, datetime | None] = {}
    for row in conn.execute(
        sa.select(
            tasks.c.worker_id,
            tasks.c.status,
            sa.func.count().label("n"),
            sa.func.max(tasks.c.heartbeat_at).label("beat"),
        )
        .where(tasks.c.worker_id.is_not(None), *scope)
        .group_by(tasks.c.worker_id, tasks.c.status)
    ):
        per_worker[row.worker_id]["counts"][row.status] = row.n
        last_beat[row.worker_id] = max(filter(None, (last_beat.get(row.worker_id), row.beat)), default=None)
    for row in conn.execute(
        sa.select(tasks.c.worker_id, tasks.c.task_id, tasks.c.stage, tasks.c.heartbeat_at, tasks.c.lease_expires_at)
        .where(tasks.c.status == Status.PROCESSING.value, *scope)
        .order_by(tasks.c.worker_id, tasks.c.id)
    ):
        per_worker[row.worker_id]["current"].append(
            {
                "task_id": row.task_id,
                "stage": row.stage,
                "heartbeat_age_s": _age(now, row.heartbeat_at),
                "lease_left_s": -_age(now, row.lease_expires_at) if row.lease_expires_at else None,
            }
        )
    registered = {row["worker_id"]: row for row in conn.execute(sa.select(workers)).mappings()}
    shown: dict[str, dict[str, Any]] = {}
    folded = 0
    for worker_id in sorted(set(per_worker) | set(registered)):
        info, row = per_worker[worker_id], registered.get(worker_id)
        if row is not None:
            info.update(
                host=row["host"],
                uid=row["uid"],
                lanes=row["lanes"],
                state=row["state"],
                lease_s=row["lease_s"],
                last_seen_age_s=_age(now, row["last_seen_at"]),
                paused_reason=row["paused_reason"],
                paused_since=row["paused_since"],
            )
        else:  # an engine user that never registered: judged by its tasks alone
            info.update(
                host=None,
                uid=None,
                lanes=None,
                state=None,
                lease_s=None,
                last_seen_age_s=_age(now, last_beat.get(worker_id)),
                paused_reason=None,
                paused_since=None,
            )
        live = judge(info["state"], info["last_seen_age_s"], info["lease_s"]) or _by_tasks(info["current"])
        info["liveness"] = live.value if live else None
        age = info["last_seen_age_s"]
        if not all_workers and not info["current"] and (age is None or age > FOLD_AFTER_S):
            folded += 1
        else:
            shown[worker_id] = info
    return shown, folded


def shown_state(info: Mapping[str, Any]) -> str | None:
    """A worker's state as status and the monitor show it: its liveness, and for a paused one
    why and since when ("paused: comfyui at 10.0.0.5:8188 unreachable since 01:23", local time)."""
    live = info.get("liveness") or info.get("state")
    if live != Liveness.PAUSED.value or not info.get("paused_reason"):
        return live
    since = info.get("paused_since")
    at = f" since {_local_time(since)}" if isinstance(since, datetime) else ""
    return f"paused: {info['paused_reason']}{at}"


def _local_time(at: datetime) -> str:
    """A database time (naive UTC) as this PC's clock shows it, HH:MM."""
    return f"{at.replace(tzinfo=timezone.utc).astimezone():%H:%M}"


LIVE = (Liveness.WORKING, Liveness.IDLE, Liveness.PAUSED)  # a worker that still claims


def _served_lanes(conn: sa.Connection) -> set[str]:
    """The lanes the live registered workers serve (by the lanes each said it serves)."""
    now = conn.execute(sa.select(db_now())).scalar()
    served: set[str] = set()
    for row in conn.execute(sa.select(workers.c.lanes, workers.c.state, workers.c.last_seen_at, workers.c.lease_s)):
        if row.lanes and judge(row.state, _age(now, row.last_seen_at), row.lease_s) in LIVE:
            served.update(row.lanes.split(","))
    return served


def _unserved(conn: sa.Connection, per_lane: Mapping[str, dict[str, Any]]) -> list[str]:
    """One line per lane holding pending tasks that none of the running workers serves, while
    some run: a fleet that left a lane out (a director's llm lane, say) waits on it forever."""
    served = _served_lanes(conn)
    return [
        f"lane {lane}: {plural(n, 'task')} pending, and no running worker serves it: "
        f"start one with `pipeline-kit work --lanes {lane}`"
        for lane, info in sorted(per_lane.items())
        if served and lane not in served and (n := info["counts"].get(Status.PENDING.value, 0))
    ]


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


@dataclass(frozen=True)
class OpenWork:
    """The open tasks (pending or running) of a worker's lanes that a worker can still move on:
    `left`, those held (directly or not) by an output awaiting review left out, since only a
    person can release them; of those, `stranded`: the ones that also wait on open tasks of the
    lanes no worker serves."""

    left: int
    stranded: int


def open_work(db: Database, lanes_served: Sequence[str]) -> int:
    """Tasks in these lanes that are pending or running, leaving out those that wait (directly or
    not) on an output awaiting review: a worker `--until-empty` stops at 0."""
    return open_and_stranded(db, lanes_served).left


def open_and_stranded(db: Database, lanes_served: Sequence[str], *, unserved: Sequence[str] = ()) -> OpenWork:
    """The open work of these lanes, and how much of it waits on the `unserved` lanes, in one
    read: an idle worker `--until-empty` looks once, to stop when none is left or name the lanes
    to serve once all that is left waits on them."""
    with db.reading() as conn:
        open_ = [Status.PENDING.value, Status.PROCESSING.value]
        in_lanes = [tasks.c.lane.in_(list(lanes_served)), tasks.c.status.in_(open_)]
        count = int(conn.execute(sa.select(sa.func.count()).select_from(tasks).where(*in_lanes)).scalar_one())
        if not count:
            return OpenWork(0, 0)
        review = sa.select(tasks.c.task_id).where(tasks.c.status == Status.AWAITING_REVIEW.value)
        by_review = transitive_dependents(conn, conn.execute(review).scalars())
        left = count - _open_among(conn, by_review, in_lanes)
        if not left or not unserved:
            return OpenWork(left, 0)
        held = sa.select(tasks.c.task_id).where(tasks.c.lane.in_(list(unserved)), tasks.c.status.in_(open_))
        reviewed = set(by_review)
        by_unserved = [t for t in transitive_dependents(conn, conn.execute(held).scalars()) if t not in reviewed]
        return OpenWork(left, _open_among(conn, by_unserved, in_lanes))


def _open_among(conn: sa.Connection, task_ids: Sequence[str], in_lanes: Sequence[Any]) -> int:
    """How many of `task_ids` (distinct) match `in_lanes`."""
    return sum(
        int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(tasks)
                .where(tasks.c.task_id.in_(task_ids[i : i + 500]), *in_lanes)
            ).scalar_one()
        )
        for i in range(0, len(task_ids), 500)
    )


def unserved_lanes(db: Database, lanes_served: Sequence[str]) -> dict[str, int]:
    """Lanes outside `lanes_served` whose pending tasks no live worker serves (by the lanes each
    registered worker said it serves), with how many wait there: work a fleet leaves undone."""
    with db.reading() as conn:
        served = _served_lanes(conn)
    return pending_elsewhere(db, sorted(served.union(lanes_served)))


def review_count(db: Database, bookcode: str | None = None) -> int:
    """How many outputs wait for a person's review (in one book, or in all)."""
    scope = [tasks.c.bookcode == bookcode] if bookcode else []
    with db.reading() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(tasks)
                .where(tasks.c.status == Status.AWAITING_REVIEW.value, *scope)
            ).scalar_one()
        )


def pending_elsewhere(db: Database, lanes_served: Sequence[str]) -> dict[str, int]:
    """Pending tasks per lane outside `lanes_served`: what a worker that ran dry leaves undone."""
    with db.reading() as conn:
        rows = conn.execute(
            sa.select(tasks.c.lane, sa.func.count())
            .select_from(tasks)
            .where(tasks.c.lane.not_in(list(lanes_served)), tasks.c.status == Status.PENDING.value)
            .group_by(tasks.c.lane)
            .order_by(tasks.c.lane)
        )
        return {lane: int(n) for lane, n in rows}


def open_kinds(db: Database, lanes_served: Sequence[str]) -> dict[str, str]:
    """Kind -> its lane, for the kinds of the tasks in these lanes still to be made (pending,
    running or blocked): what a worker starting on them must be able to make."""
    with db.reading() as conn:
        rows = conn.execute(
            sa.select(tasks.c.kind, tasks.c.lane)
            .distinct()
            .where(
                tasks.c.lane.in_(list(lanes_served)),
                tasks.c.status.in_((Status.PENDING.value, Status.PROCESSING.value, Status.BLOCKED.value)),
            )
        )
        return {kind: lane for kind, lane in rows}


def open_book_langs(db: Database) -> set[str]:
    """The languages of the books that still have tasks waiting or running."""
    waiting = (  # EXISTS (SELECT task_id ...): `SELECT *` would need every column, the token's too
        sa.select(tasks.c.task_id)
        .where(
            tasks.c.bookcode == books.c.bookcode, tasks.c.status.in_((Status.PENDING.value, Status.PROCESSING.value))
        )
        .exists()
    )
    with db.reading() as conn:
        return set(conn.execute(sa.select(books.c.lang).distinct().where(waiting)).scalars())
