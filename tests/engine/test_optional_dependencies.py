"""Optional dependencies (a director pass): a dependency that fails for good, is canceled or is
blocked lets its dependent go ahead without it, once, and says so; one that is revived is waited
for again by dependents that have not run; required dependencies still block. All three databases."""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import events, tasks
from pipeline_kit.engine import Completion, TaskSpec


def _task(db: Database, task_id: str) -> sa.RowMapping:
    with db.engine.connect() as conn:
        return conn.execute(sa.select(tasks).where(tasks.c.task_id == task_id)).mappings().one()


def _enqueue(db: Database) -> None:
    """sheet <- director(optional) ; frame waits on sheet (required) and director (optional);
    clip waits on frame (required)."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="director", kind="direct_chapter", lane="default", max_attempts=1),
                TaskSpec(task_id="sheet", kind="x", lane="default", depends_on=("director",), optional=("director",)),
                TaskSpec(
                    task_id="frame",
                    kind="x",
                    lane="default",
                    depends_on=("sheet", "director"),
                    optional=("director",),
                ),
                TaskSpec(task_id="clip", kind="x", lane="default", depends_on=("frame",)),
            ],
        )


def _run(db: Database, expected: str) -> None:
    (lease,) = engine.claim(db, "w", ["default"], limit=5)
    assert lease.task_id == expected
    engine.complete(db, Completion(task_id=lease.task_id, token=lease.token))


def test_a_failed_optional_dependency_lets_dependents_go_ahead_once(db: Database) -> None:
    """The director failing for good blocks nothing: sheet, frame and clip run in order, each
    frame counts the dead director off exactly once, and one event says who went ahead without it."""
    _enqueue(db)
    (lease,) = engine.claim(db, "w", ["default"], limit=5)
    engine.fail(db, "director", lease.token, error="connection refused", retryable=False)
    assert _task(db, "sheet")["status"] == "pending" and _task(db, "sheet")["deps_remaining"] == 0
    assert _task(db, "frame")["deps_remaining"] == 1  # still waits for its sheet
    _run(db, "sheet")
    _run(db, "frame")
    _run(db, "clip")
    with db.engine.connect() as conn:
        went = conn.execute(sa.select(events.c.detail).where(events.c.kind == "went_ahead")).scalars().all()
    assert len(went) == 1 and went[0]["without"] == "director" and went[0]["tasks"] == 2


def test_required_dependencies_still_block_and_a_revived_optional_one_is_waited_for(db: Database) -> None:
    """Canceling the sheet blocks the frame and the clip (required); the director canceled and
    then retried is waited for again by the sheet that had not run, and releases it on completion."""
    _enqueue(db)
    with db.engine.begin() as conn:
        engine.cancel_tasks(conn, ["director"], reason="no chat server")
    assert _task(db, "sheet")["deps_remaining"] == 0
    engine.retry_task(db, "director")
    assert _task(db, "sheet")["deps_remaining"] == 1 and _task(db, "frame")["deps_remaining"] == 2
    _run(db, "director")
    assert _task(db, "sheet")["deps_remaining"] == 0 and _task(db, "frame")["deps_remaining"] == 1
    with db.engine.begin() as conn:
        engine.cancel_tasks(conn, ["sheet"], reason="dropped")
    assert _task(db, "frame")["status"] == "blocked" and _task(db, "clip")["status"] == "blocked"


def test_enqueueing_after_an_optional_dependency_died_does_not_wait_for_it(db: Database) -> None:
    """A task enqueued on an already failed optional dependency is pending and not counting it;
    on a failed required one it is blocked."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="d", kind="x", lane="default", max_attempts=1)])
    (lease,) = engine.claim(db, "w", ["default"])
    engine.fail(db, "d", lease.token, error="refused", retryable=False)
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="soft", kind="x", lane="default", depends_on=("d",), optional=("d",)),
                TaskSpec(task_id="hard", kind="x", lane="default", depends_on=("d",)),
            ],
        )
    assert _task(db, "soft")["status"] == "pending" and _task(db, "soft")["deps_remaining"] == 0
    assert _task(db, "hard")["status"] == "blocked"
