"""Batch approval (a page, a chapter, a cast at once) is one call to the review gate, on every
database: only outputs still awaiting review complete, each dependent is counted off once per
approved dependency, one `approve` event per output is kept, and two reviewers racing over the
same batch approve each output once."""

from __future__ import annotations

import threading

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import books, events, tasks
from pipeline_kit.engine import Completion, TaskSpec

FRAMES = 60


def _waiting_frames(db: Database, n: int) -> list[str]:
    """`n` images of a book under review, all completed into `awaiting_review`, and one clip that
    depends on every one of them."""
    ids = [f"bk/s{i:03d}/first_frame" for i in range(n)]
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title="Bk", lang="en", review=True))
        engine.enqueue(
            conn,
            [TaskSpec(task_id=t, kind="first_frame", lane="image", bookcode="bk") for t in ids]
            + [TaskSpec(task_id="bk/clip", kind="video", lane="video", bookcode="bk", depends_on=tuple(ids))],
        )
    leases = engine.claim(db, "w1", ["image"], limit=n, lease_s=60)
    assert len(leases) == n
    engine.complete_many(db, [Completion(task_id=lease.task_id, token=lease.token) for lease in leases])
    return ids


def _task(db: Database, task_id: str) -> sa.Row:  # type: ignore[type-arg]
    with db.engine.connect() as conn:
        return conn.execute(sa.select(tasks).where(tasks.c.task_id == task_id)).one()


def _approvals(db: Database) -> dict[str, int]:
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(events.c.task_id, sa.func.count()).where(events.c.kind == "approve").group_by(events.c.task_id)
        ).all()
    return {r[0]: int(r[1]) for r in rows}


def test_batch_approves_what_still_waits_and_counts_off_once(db: Database) -> None:
    """Approving a batch that holds an output approved already and an unknown id completes the
    others only; the clip's count of unfinished dependencies falls by one per approval; the same
    batch again approves nothing and changes nothing."""
    ids = _waiting_frames(db, 4)
    engine.approve(db, ids[0], by="ana")
    assert _task(db, "bk/clip").deps_remaining == 3

    approved = engine.approve_many(db, [ids[0], ids[1], ids[2], "bk/no-such-task", ids[1]], by="ben")
    assert sorted(approved) == sorted(ids[1:3])
    assert [_task(db, t).status for t in ids] == ["completed", "completed", "completed", "awaiting_review"]
    assert _task(db, "bk/clip").deps_remaining == 1
    assert _approvals(db) == {ids[0]: 1, ids[1]: 1, ids[2]: 1}
    assert {d.by for d in engine.last_decisions(db, "bk")} == {"ana", "ben"}

    assert engine.approve_many(db, ids[:3], by="ben") == []
    assert _task(db, "bk/clip").deps_remaining == 1 and _approvals(db) == {ids[0]: 1, ids[1]: 1, ids[2]: 1}
    assert engine.approve_many(db, [ids[3]]) == [ids[3]]
    assert _task(db, "bk/clip").deps_remaining == 0


def test_racing_reviewers_approve_each_output_once(db: Database) -> None:
    """Two reviewers approve the same page at the same moment: every output is approved by one
    of them, never both, and the clip waiting on all of them is counted off exactly to zero."""
    ids = _waiting_frames(db, FRAMES)
    start = threading.Barrier(2)
    results: dict[str, list[str]] = {}

    def review(by: str) -> None:
        start.wait()
        results[by] = engine.approve_many(db, ids, by=by)

    threads = [threading.Thread(target=review, args=(by,)) for by in ("ana", "ben")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results["ana"] + results["ben"]) == sorted(ids)
    assert set(results["ana"]).isdisjoint(results["ben"])
    assert _approvals(db) == {t: 1 for t in ids}
    clip = _task(db, "bk/clip")
    assert clip.deps_remaining == 0 and clip.status == "pending"
