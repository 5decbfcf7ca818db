"""The reads other layers make of the task table and its attempts, as frozen rows.

Screens, the film's status, the output store and export ask here instead of writing SQL on
`tasks`, `attempts` and `task_deps`, which the engine owns. Each function runs on the caller's
connection (`db.reading()` for a look that takes no write lock, or the caller's transaction), so
a screen that reads several things reads them in one go.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa

from pipeline_kit.db.driver import rows_named
from pipeline_kit.db.schema import attempts, books, events, task_deps, tasks
from pipeline_kit.db.sqltime import now_plus
from pipeline_kit.engine.states import Outcome, Status

MADE = (Status.COMPLETED, Status.AWAITING_REVIEW)  # statuses whose output is there, approved or not
CHUNK = 500  # ids per IN (...) lookup


@dataclass(frozen=True, kw_only=True)
class TaskState:
    """A task as a list shows it: what it is, where it stands, and whether it still waits."""

    task_id: str
    kind: str
    status: Status
    bookcode: str | None
    shot_id: str | None
    deps_remaining: int  # dependencies not finished yet: above 0, the task still waits on them
    attempts: int  # attempts made so far
    last_error: str | None


@dataclass(frozen=True, kw_only=True)
class TaskOutput(TaskState):
    """A task with its recorded output: the store name and what it holds (checksums, side files)."""

    output_path: str | None
    result: Mapping[str, Any] | None


@dataclass(frozen=True, kw_only=True)
class Dependent:
    """A task waiting on `depends_on`, with its shot and status."""

    depends_on: str
    task_id: str
    shot_id: str | None
    status: Status


@dataclass(frozen=True, kw_only=True)
class OutcomeCount:
    """Attempts that closed with `outcome`: within the recent window, and within the longer one."""

    outcome: Outcome
    recent: int
    since: int


_STATE = (
    tasks.c.task_id,
    tasks.c.kind,
    tasks.c.status,
    tasks.c.bookcode,
    tasks.c.shot_id,
    tasks.c.deps_remaining,
    tasks.c.attempts,
    tasks.c.last_error,
)
_OUTPUT = (*_STATE, tasks.c.output_path, tasks.c.result)


_STATUS = {s.value: s for s in Status}
_T = TypeVar("_T")


def _rows(cls: type[_T], result: sa.CursorResult[Any]) -> list[_T]:
    """Frozen rows of `cls`, filled in directly from a result whose columns are its fields (a
    book's listing builds thousands: the frozen __init__, an object.__setattr__ per field, and
    a mapping per row took most of the read)."""
    keys = list(result.keys())
    made = []
    for values in result:
        row = object.__new__(cls)
        fields = dict(zip(keys, values))
        fields["status"] = _STATUS[fields["status"]]
        row.__dict__.update(fields)
        made.append(row)
    return made


def chunks(ids: Collection[str]) -> Iterator[list[str]]:
    """`ids` in lists of at most CHUNK, for IN (...) lookups every database takes."""
    listed = list(ids)
    for i in range(0, len(listed), CHUNK):
        yield listed[i : i + CHUNK]


def tasks_by_id(conn: sa.Connection, task_ids: Collection[str]) -> list[TaskOutput]:
    """The tasks among `task_ids` that exist, with their outputs (in no particular order)."""
    return [
        r
        for ids in chunks(task_ids)
        for r in _rows(TaskOutput, conn.execute(sa.select(*_OUTPUT).where(tasks.c.task_id.in_(ids))))
    ]


def find_tasks(
    conn: sa.Connection,
    *,
    bookcode: str | None = None,
    kinds: Collection[str] | None = None,
    statuses: Collection[Status] | None = None,
    made: bool = False,
) -> list[TaskOutput]:
    """The tasks of a book (None: of every book, and those of none) of these kinds and statuses,
    only those that recorded an output when `made`, in the order they were enqueued."""
    query = sa.select(*_OUTPUT).order_by(tasks.c.id)
    if bookcode is not None:
        query = query.where(tasks.c.bookcode == bookcode)
    if kinds is not None:
        query = query.where(tasks.c.kind.in_(sorted(kinds)))
    if statuses is not None:
        query = query.where(tasks.c.status.in_(sorted(s.value for s in statuses)))
    if made:
        query = query.where(tasks.c.output_path.is_not(None))
    return _rows(TaskOutput, conn.execute(query))


def shot_states(conn: sa.Connection, bookcode: str) -> list[TaskState]:
    """The states of a book's shot tasks (frames, clips, voices), without their outputs: the
    storyboard lists every shot's at once."""
    query = sa.select(*_STATE).where(tasks.c.bookcode == bookcode, tasks.c.shot_id.is_not(None))
    return _rows(TaskState, conn.execute(query))


def dependents(conn: sa.Connection, task_ids: Collection[str], status: Status | None = None) -> list[Dependent]:
    """The tasks that wait on any of `task_ids` (directly), only those in `status` when given."""
    query = sa.select(task_deps.c.depends_on, tasks.c.task_id, tasks.c.shot_id, tasks.c.status).select_from(
        task_deps.join(tasks, tasks.c.task_id == task_deps.c.task_id)
    )
    if status is not None:
        query = query.where(tasks.c.status == status.value)
    return [
        r
        for ids in chunks(task_ids)
        for r in _rows(Dependent, conn.execute(query.where(task_deps.c.depends_on.in_(ids))))
    ]


def held_shots(conn: sa.Connection, task_ids: Collection[str]) -> int:
    """How many shots have a task waiting on one of `task_ids` (a book's sheets: one IN list)."""
    query = (
        sa.select(sa.func.count(sa.distinct(tasks.c.shot_id)))
        .select_from(task_deps.join(tasks, tasks.c.task_id == task_deps.c.task_id))
        .where(task_deps.c.depends_on.in_(list(task_ids)))
    )
    return int(conn.execute(query).scalar() or 0) if task_ids else 0


def dependent_shots(
    conn: sa.Connection, task_ids: Collection[str], status: Status | None = None
) -> set[tuple[str, str]]:
    """(task, shot) for each shot with a task waiting on one of `task_ids` (only those in
    `status` when given): the shots a sheet holds, each once."""
    query = (
        sa.select(task_deps.c.depends_on, tasks.c.shot_id)
        .distinct()
        .select_from(task_deps.join(tasks, tasks.c.task_id == task_deps.c.task_id))
        .where(tasks.c.shot_id.is_not(None))
    )
    if status is not None:
        query = query.where(tasks.c.status == status.value)
    return {
        (r.depends_on, r.shot_id)
        for ids in chunks(task_ids)
        for r in conn.execute(query.where(task_deps.c.depends_on.in_(ids)))
    }


def latest_outputs(
    conn: sa.Connection, kinds: Collection[str], *, bookcode: str | None = None, limit: int, among: int
) -> list[TaskOutput]:
    """The outputs of these kinds made last (approved or waiting for review), newest first, sought
    among the `among` newest completed attempts only (read along the attempts' key, so a screen's
    refresh never scans the task table)."""
    recent = list(
        dict.fromkeys(
            conn.execute(
                sa.select(attempts.c.task_id)
                .where(attempts.c.outcome == Outcome.COMPLETED.value)
                .order_by(attempts.c.id.desc())
                .limit(among)
            ).scalars()
        )
    )
    if not recent:
        return []
    query = sa.select(*_OUTPUT).where(tasks.c.task_id.in_(recent), tasks.c.kind.in_(sorted(kinds)))
    # status and book are checked here, not in SQL: a filter on them would lead SQLite's planner
    # to walk every completed task by the status index instead of these keys
    found = {
        r.task_id: r
        for r in _rows(TaskOutput, conn.execute(query))
        if r.status in MADE and r.output_path and bookcode in (None, r.bookcode)
    }
    return [found[t] for t in recent if t in found][:limit]


def made_outputs(
    conn: sa.Connection, kinds: Collection[str], *, bookcode: str | None = None, limit: int
) -> list[TaskOutput]:
    """The book-level outputs of these kinds (no shot: films) completed last, in one book or in
    all, newest first."""
    codes = [bookcode] if bookcode else list(conn.execute(sa.select(books.c.bookcode)).scalars())
    query = (
        sa.select(*_OUTPUT)
        .where(
            tasks.c.bookcode.in_(codes),
            tasks.c.shot_id.is_(None),  # by ix_tasks_book, not a scan
            tasks.c.kind.in_(sorted(kinds)),
            tasks.c.status == Status.COMPLETED.value,
            tasks.c.output_path.is_not(None),
        )
        .order_by(tasks.c.finished_at.desc(), tasks.c.id.desc())
        .limit(limit)
    )
    return _rows(TaskOutput, conn.execute(query))


def open_in_lanes(conn: sa.Connection, lanes: Collection[str]) -> int:
    """Tasks pending or running in these lanes, those held by review included."""
    query = (
        sa.select(sa.func.count())
        .select_from(tasks)
        .where(tasks.c.lane.in_(list(lanes)), tasks.c.status.in_((Status.PENDING.value, Status.PROCESSING.value)))
    )
    return int(conn.execute(query).scalar_one())


def outcome_counts(
    conn: sa.Connection, *, window_s: float, since_s: float, bookcode: str | None = None
) -> list[OutcomeCount]:
    """Attempts closed in the last `window_s` and in the last `since_s` seconds (by the database
    clock), by outcome; only the book's tasks' when `bookcode` is given."""
    in_window = attempts.c.finished_at >= now_plus(-window_s)
    recent = sa.func.sum(sa.case((in_window, 1), else_=0)).label("recent")
    query = (
        sa.select(attempts.c.outcome, sa.func.count().label("since"), recent)
        .where(attempts.c.finished_at >= now_plus(-since_s), attempts.c.outcome.is_not(None))
        .group_by(attempts.c.outcome)
    )
    if bookcode:
        query = query.where(attempts.c.task_id.in_(sa.select(tasks.c.task_id).where(tasks.c.bookcode == bookcode)))
    return [
        OutcomeCount(outcome=Outcome(r.outcome), recent=int(r.recent or 0), since=int(r.since))
        for r in conn.execute(query)
    ]


def reopened(conn: sa.Connection, task_ids: Collection[str]) -> dict[str, str]:
    """task id -> why, for the tasks among `task_ids` that completed once and were reset since
    (the last reset's reason, else 're-opened')."""
    if not task_ids:
        return {}
    made = set(
        conn.execute(
            sa.select(attempts.c.task_id)
            .where(attempts.c.task_id.in_(list(task_ids)), attempts.c.outcome == Outcome.COMPLETED.value)
            .distinct()
        ).scalars()
    )
    why: dict[str, str] = {}
    for row in conn.execute(
        sa.select(events.c.task_id, events.c.detail)
        .where(events.c.task_id.in_(sorted(made)), events.c.kind == "reset")
        .order_by(events.c.id)
    ):
        why[row.task_id] = str((row.detail or {}).get("reason") or "re-opened")
    return {t: why.get(t, "re-opened") for t in made}


def live_tokens(conn: sa.Connection) -> set[str]:
    """The lease tokens of running tasks: what a store keeps staged for them may still be accepted."""
    query = sa.select(tasks.c.lease_token).where(tasks.c.status == Status.PROCESSING.value)
    return {token for (token,) in conn.execute(query) if token}


def named_checksums(conn: sa.Connection) -> set[str]:
    """Every checksum a made task's row names (its output and side files), or each task's latest
    completed attempt (its output, even if the task row was since rewritten); lost and failed
    attempts name nothing. Read in SQL from those rows only (`named_checksums` in db/sql/)."""
    return {sha for row in rows_named(conn, "named_checksums") for sha in str(row["names"]).split()}


def running_for(conn: sa.Connection) -> float | None:
    """How many seconds (by the database's clock) the oldest attempt still running has run; None
    if none runs. What it publishes, it stores or finds stored since."""
    age = rows_named(conn, "running_for")[0]["age_s"]
    return None if age is None else float(age)


def recorded_marks(conn: sa.Connection, marks: Collection[str]) -> set[str]:
    """Which of `marks` (a folder store's staged marks) a made task's completion records: its
    files may still wait for their reveal."""
    return {str(row["mark"]) for some in chunks(marks) for row in rows_named(conn, "recorded_marks", marks=some)}
