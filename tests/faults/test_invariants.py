"""The invariant queries find what they are meant to find.

Invariant protected: a chaos run or crash test that reports "all hold" has really looked — each
query returns a row for a planted violation (lost task, double completion, completion by a stale
lease, open attempt, cost mismatches, missing or altered file) and nothing on a clean state.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.chaos.invariants import check_all
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, store_chunks, tasks
from pipeline_kit.store import open_store

from .helpers import enqueue_frames


def _complete(db: Database, task_id: str, path: Path, data: bytes) -> str:
    """Complete `task_id` with `data` published into the store in effect as outputs/NAME."""
    (lease,) = engine.claim(db, "w", ["image"], lease_s=60)
    assert lease.task_id == task_id
    path.write_bytes(data)
    stored = open_store(db, cache=path.parent / "cache").publish(f"outputs/{path.name}", path, {})
    engine.complete(
        db,
        engine.Completion(
            task_id=task_id,
            token=lease.token,
            output_path=stored.output_path,
            cost=0.5,
            result={"sha256": stored.sha256},
        ),
    )
    return lease.token


def _alter(db: Database, root: Path, name: str, data: bytes) -> None:
    """Change a stored output's bytes behind its row's back (the folder's file, or the blob)."""
    if db.dialect == "sqlite":
        (root / name).write_bytes(data)
        return
    with db.engine.begin() as conn:
        conn.execute(sa.update(store_chunks).where(store_chunks.c.sha256 == _sha(b"image 6")).values(data=data))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_each_planted_violation_is_found(db: Database, tmp_path: Path) -> None:
    """Clean state: no rows. Each planted fault: its check names the task."""
    ids = enqueue_frames(db, 6)
    for n, task_id in enumerate(ids, 1):
        _complete(db, task_id, tmp_path / f"{n}.png", f"image {n}".encode())
    assert check_all(db, root=tmp_path, billed_cost=3.0) == []

    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).where(tasks.c.task_id == ids[0]).values(status="pending"))
        conn.execute(
            sa.insert(attempts).values(
                task_id=ids[1],
                attempt_no=9,
                worker_id="x",
                lease_token="t2",
                claimed_at=sa.func.now(),
                outcome="completed",
            )
        )
        conn.execute(sa.update(tasks).where(tasks.c.task_id == ids[2]).values(lease_token="newer"))
        conn.execute(
            sa.insert(attempts).values(
                task_id=ids[3], attempt_no=9, worker_id="x", lease_token="t4", claimed_at=sa.func.now()
            )
        )
        conn.execute(sa.update(tasks).where(tasks.c.task_id == ids[4]).values(cost=9.0))
    _alter(db, tmp_path, "outputs/6.png", b"altered")
    shutil.rmtree(tmp_path / "data" / "check-cache", ignore_errors=True)  # a checker that fetches afresh

    found = {(v.check, v.task_id) for v in check_all(db, root=tmp_path, billed_cost=2.5)}
    assert found == {
        ("lost", ids[0]),
        ("completed_twice", ids[1]),
        ("not_current_lease", ids[1]),
        ("not_current_lease", ids[2]),
        ("open_attempt", ids[3]),
        ("task_cost", ids[4]),
        ("cost_vs_billing", None),
        ("bad_file", ids[5]),
    }
