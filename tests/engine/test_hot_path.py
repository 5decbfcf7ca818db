"""The claim/complete hot path's shortcuts mean exactly what the plain code they replace meant."""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime

import pytest

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.claims import decoded
from pipeline_kit.engine import Completion, Lease, TaskSpec
from pipeline_kit.engine.claim import Plan


def claimed_row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": 7,
        "task_id": "t7",
        "lease_token": "tok",
        "kind": "image",
        "lane": "image",
        "attempts": 2,
        "generation": 1,
        "params": {"seed": 3},
        "bookcode": "b1",
        "shot_id": "s1",
        "priority": 5,
        "lease_expires_at": datetime(2026, 11, 30, 8, 0, 0),
    }
    row.update(changes)
    return row


def test_lease_from_row_is_the_frozen_dataclass_with_every_field() -> None:
    """from_row fills the instance directly (no __init__): it must set every field the class
    declares, give the same value as the constructor, and stay frozen."""
    lease = Lease.from_row(claimed_row(), "job-9")
    assert set(vars(lease)) == {f.name for f in dataclasses.fields(Lease)}
    assert lease == Lease(
        task_id="t7",
        token="tok",
        kind="image",
        lane="image",
        attempt_no=2,
        generation=1,
        params={"seed": 3},
        bookcode="b1",
        shot_id="s1",
        priority=5,
        expires_at=datetime(2026, 11, 30, 8, 0, 0),
        remote_job_id="job-9",
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        lease.token = "other"  # type: ignore[misc]
    assert Lease.from_row(claimed_row(params=None)).params == {}


def test_decoded_parses_each_row_and_returns_claim_order() -> None:
    """Rows as the driver returns them (JSON and times as text, in any order) come back decoded,
    highest priority first, then oldest; rows with different expiries keep their own."""
    rows = [
        claimed_row(id=3, priority=0, params='{"a": 1}', lease_expires_at="2026-11-30 08:00:00.250"),
        claimed_row(id=2, priority=0, params=None, lease_expires_at="2026-11-30 08:00:00.250"),
        claimed_row(id=9, priority=4, params='{"b": 2}', lease_expires_at="2026-11-30 08:00:01.000"),
    ]
    out = decoded(rows)
    assert [r["id"] for r in out] == [9, 2, 3]
    assert [r["params"] for r in out] == [{"b": 2}, None, {"a": 1}]
    assert [r["lease_expires_at"] for r in out] == [
        datetime(2026, 11, 30, 8, 0, 1),
        datetime(2026, 11, 30, 8, 0, 0, 250000),
        datetime(2026, 11, 30, 8, 0, 0, 250000),
    ]


def test_plan_sorts_limited_lanes_and_splits_unlimited_by_paid() -> None:
    """Limited lanes in one lock order whatever the caller's order; unlimited ones in one group
    per paid flag (unpaid first); paused and unknown lanes left out."""
    config = {
        "video": {"max_running": 1, "paused": False, "paid": 1},
        "brain": {"max_running": 1, "paused": False, "paid": 0},
        "image": {"max_running": None, "paused": False, "paid": 0},
        "api": {"max_running": None, "paused": False, "paid": 1},
        "text": {"max_running": None, "paused": False, "paid": 0},
        "held": {"max_running": None, "paused": True, "paid": 0},
    }
    plan = Plan.of(config, ["video", "api", "held", "image", "missing", "brain", "text"])
    assert plan == Plan(
        limited=(("brain", False), ("video", True)), free=((("image", "text"), False), (("api",), True)), paid=True
    )
    assert Plan.of(config, ["held", "missing"]) == Plan(limited=(), free=(), paid=False)


def test_cached_plan_follows_the_lanes_table_once_the_cache_expires(db: Database) -> None:
    """A claim's plan is kept only as long as the lane settings it came from: after a resume
    and the cache's ttl, the lane is claimed from again."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"t{i}", kind="noop", lane="image") for i in range(2)])
    cache = engine.LaneCache(ttl_s=0.2)
    engine.update_lane(db, "image", paused=True)
    assert engine.claim(db, "w", ["image"], limit=1, cache=cache) == []
    engine.update_lane(db, "image", paused=False)
    time.sleep(0.3)
    assert [x.task_id for x in engine.claim(db, "w", ["image"], limit=1, cache=cache)] == ["t0"]


def test_complete_many_answers_in_the_order_given(db: Database) -> None:
    """All accepted (the shortcut) or not, the answer lists the tasks in the caller's order."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"t{i}", kind="noop", lane="image") for i in range(4)])
    leases = engine.claim(db, "w", ["image"], limit=4)
    given = [Completion(task_id=x.task_id, token=x.token) for x in reversed(leases)]
    assert list(engine.complete_many(db, given)) == ["t3", "t2", "t1", "t0"]
    again = [*given[:2], Completion(task_id="t1", token="not-its-token")]
    acks = engine.complete_many(db, again)
    assert list(acks.items()) == [("t3", engine.Ack.DUPLICATE), ("t2", engine.Ack.DUPLICATE), ("t1", engine.Ack.FENCED)]
