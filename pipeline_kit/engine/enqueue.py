"""Bulk enqueue in one transaction, deduplicated by business key, with dependencies."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from graphlib import CycleError, TopologicalSorter
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.connect import json_text
from pipeline_kit.db import dialects
from pipeline_kit.db.driver import within
from pipeline_kit.db.schema import lanes
from pipeline_kit.engine.models import EnqueueResult, TaskSpec
from pipeline_kit.engine.queries import chunks
from pipeline_kit.engine.states import DEAD_ENDS, Status
from pipeline_kit.errors import BadInput

DEFAULT_MAX_ATTEMPTS = 3
MAX_KEY_LENGTH = 255


def enqueue(conn: sa.Connection, specs: Iterable[TaskSpec]) -> EnqueueResult:
    """Insert the tasks whose keys are new; existing keys are left untouched (a no-op).

    Runs in the caller's transaction, so a split can write its shots and tasks atomically.
    A dependency may name a task in the same call or one already stored.
    """
    batch = _validated(list(specs))
    if not batch:
        return EnqueueResult(0, 0)
    lane_rows = {r.lane: r for r in conn.execute(sa.select(lanes).where(lanes.c.lane.in_({s.lane for s in batch})))}
    unknown = sorted({s.lane for s in batch} - lane_rows.keys())
    if unknown:
        raise BadInput(f"unknown lane {unknown[0]!r}: add it with `pipeline-kit lane add {unknown[0]}`")

    existing = _statuses(conn, [s.task_id for s in batch])
    new = [s for s in batch if s.task_id not in existing]
    new_keys = {s.task_id for s in new}
    outside = {d for s in new for d in s.depends_on if d not in new_keys}
    dep_status = _statuses(conn, sorted(outside))
    missing = sorted(outside - dep_status.keys())
    if missing:
        raise BadInput(f"unknown dependency {missing[0]!r}")

    rows: list[dict[str, Any]] = []
    dead_ends = {s.value for s in DEAD_ENDS}
    completed, blocked, pending = Status.COMPLETED.value, Status.BLOCKED.value, Status.PENDING.value
    settled = {*dead_ends, completed}  # a dependency in one of these is not simply waited for
    for spec in _in_dependency_order(new):
        known = [dep_status.get(d) for d in spec.depends_on]
        if settled.isdisjoint(known):  # every dependency still to run: a split's tasks, all of them
            status, remaining = pending, len(known)
        else:
            waived = {d for d in spec.optional if dep_status.get(d) in dead_ends}  # gone for good: not waited for
            not_done = [d for d in spec.depends_on if dep_status.get(d) != completed and d not in waived]
            dead = any(dep_status.get(d) in dead_ends for d in spec.depends_on if d not in spec.optional)
            status, remaining = blocked if dead else pending, len(not_done)
        dep_status[spec.task_id] = status
        params = spec.params
        rows.append(
            {
                "task_id": spec.task_id,
                "kind": spec.kind,
                "lane": spec.lane,
                "status": status,
                "priority": spec.priority,
                "params": None if params is None else json_text(params if type(params) is dict else dict(params)),
                "max_attempts": spec.max_attempts or lane_rows[spec.lane].max_attempts or DEFAULT_MAX_ATTEMPTS,
                "deps_remaining": remaining,
                "bookcode": spec.bookcode,
                "shot_id": spec.shot_id,
            }
        )
    if rows:  # through the driver: SQLAlchemy's handling of each row cost more than the insert
        name = conn.dialect.name
        dialect = dialects.of(name)
        now = dialect.now
        deps = [{"task_id": s.task_id, "depends_on": d, "optional": d in s.optional} for s in new for d in s.depends_on]
        # What every new task starts with is written in the statement, not bound for each row.
        fresh = {"attempts": "0", "retry_base": "0", "generation": "0", "cost": "0.0"}
        fresh |= {"run_after": now, "created_at": now}
        with within(conn, name) as tx:
            tx.many(dialect.insert_ignoring_duplicates("tasks", list(rows[0]), fresh), rows)
            if deps:
                tx.many(dialect.insert_ignoring_duplicates("task_deps", list(deps[0])), deps)
    return EnqueueResult(created=len(rows), existing=len(batch) - len(rows))


def _validated(batch: Sequence[TaskSpec]) -> list[TaskSpec]:
    seen: dict[str, TaskSpec] = {}
    for spec in batch:
        if not spec.task_id or len(spec.task_id) > MAX_KEY_LENGTH:
            raise BadInput(f"task key must be 1 to {MAX_KEY_LENGTH} characters: {spec.task_id[:40]!r}")
        if spec.optional and not set(spec.optional) <= set(spec.depends_on):
            raise BadInput(f"task {spec.task_id!r}: an optional dependency must be one of its dependencies")
        if not spec.kind or not spec.lane:
            raise BadInput(f"task {spec.task_id!r} needs a kind and a lane")
        if spec.max_attempts is not None and not 1 <= spec.max_attempts <= 1000:
            raise BadInput(f"max_attempts must be from 1 to 1000, got {spec.max_attempts}")
        if spec.task_id in spec.depends_on:
            raise BadInput(f"task {spec.task_id!r} depends on itself")
        seen.setdefault(spec.task_id, spec)  # the first spec of a repeated key wins, like a stored one
    return list(seen.values())


def _in_dependency_order(specs: list[TaskSpec]) -> list[TaskSpec]:
    """The specs in the order graphlib's `static_order` gives (ids, and so FIFO claims, follow
    it): in waves, each the tasks whose dependencies in the batch all came in the waves before, in
    the order they were first named. Worked out here because graphlib first searches the whole
    graph for a cycle (a third of the enqueue of a book's 25,000 tasks): a cycle is what no wave
    reaches, and only then does graphlib name it."""
    by_key = {s.task_id: s for s in specs}
    left: dict[str, int] = {}  # key -> its dependencies in the batch not placed yet, in the order first named
    after: dict[str, list[str]] = {}  # key -> the tasks in the batch waiting for it
    for spec in specs:
        key = spec.task_id
        inside = [d for d in spec.depends_on if d in by_key]
        left[key] = left.get(key, 0) + len(inside)
        for d in inside:
            left.setdefault(d, 0)
            if d in after:
                after[d].append(key)
            else:
                after[d] = [key]
    order: list[str] = []
    wave = [key for key, n in left.items() if not n]
    while wave:
        order += wave
        ready: list[str] = []
        for key in wave:
            for dependent in after.get(key, ()):
                left[dependent] -= 1
                if not left[dependent]:
                    ready.append(dependent)
        wave = ready
    if len(order) < len(left):
        graph = {s.task_id: [d for d in s.depends_on if d in by_key] for s in specs}
        try:
            TopologicalSorter(graph).prepare()
        except CycleError as exc:
            raise BadInput(f"dependency cycle among tasks: {' -> '.join(map(str, exc.args[1]))}") from None
    return [by_key[k] for k in order]


def _statuses(conn: sa.Connection, keys: Sequence[str]) -> dict[str, str]:
    with within(conn, conn.dialect.name) as tx:
        return {
            r["task_id"]: r["status"]
            for ids in chunks(keys)
            for r in tx.rows("SELECT task_id, status FROM tasks WHERE task_id IN :ids", {"ids": ids})
        }
