"""Crash timelines: a worker SIGKILLed at each named fault point, then a second worker recovers.

Invariant protected (design invariants 2, 3, 4, 6, 7): whatever instant a worker dies, every
task ends completed exactly once, its output exists once in the store (a folder on SQLite, the
database elsewhere) under the recorded name with the recorded sha256, and the cost booked
equals what the provider billed — no paid call unrecorded, none recorded twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.chaos.invariants import check_all
from pipeline_kit.db import create
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, store_blobs, tasks
from pipeline_kit.engine.queries import named_checksums
from pipeline_kit.faults import POINTS
from pipeline_kit.worker import WorkerConfig, run_worker

from .conftest import PRICE
from .helpers import enqueue_frames, run, wait_leases_expired, work_cli

TASKS = 3
KILLED_AT = 2  # the pass that fires: one task went through normally before the cut


def _state(db: Database, task_id: str) -> tuple[sa.Row, sa.Row]:  # type: ignore[type-arg]
    with db.engine.connect() as conn:
        task = conn.execute(sa.select(tasks).where(tasks.c.task_id == task_id)).one()
        attempt = conn.execute(
            sa.select(attempts).where(attempts.c.task_id == task_id).order_by(attempts.c.attempt_no.desc())
        ).first()
    return task, attempt


def _stored(db: Database, task: sa.Row) -> bool:  # type: ignore[type-arg]
    """The database store: whether the blob the task's row names is stored; and, at any instant,
    no blob is stored that no completion names (a worker's publish stores nothing: the
    completion that names a blob keeps it, in its transaction)."""
    with db.engine.connect() as conn:
        blobs = set(conn.execute(sa.select(store_blobs.c.sha256)).scalars())
        assert blobs <= named_checksums(conn), "a blob stored without the completion that names it"
    return bool(task.result) and task.result.get("sha256") in blobs


def _made_in(db: Database, root: Path) -> Path:
    """Where a worker run in `root` makes its files: in the store's folder (beside the SQLite
    file, here `root`), else data/outputs of its own folder."""
    return root / "outputs" if db.dialect == "sqlite" else root / "data/outputs"


def _assert_cut(point: str, db: Database, task_id: str, root: Path, billed: int) -> None:
    """What the database (and the disk) knows at the instant of the cut."""
    task, attempt = _state(db, task_id)
    final = _made_in(db, root) / "hlm/hlm-001-0002/first_frame.png"
    ready = final.with_name("first_frame.ready.png")
    # a folder store (SQLite): staged under the lease's mark until the completion is accepted
    staged = list(final.parent.glob(f"{final.name}.staged-*")) if final.parent.is_dir() else []
    published = bool(staged) if db.dialect == "sqlite" else _stored(db, task)
    if point == "after_complete":
        assert (task.status, attempt.outcome, attempt.cost) == ("completed", "completed", PRICE)
        assert published and billed == 2
        return
    assert task.status == "processing" and attempt.outcome is None, "attempt must still be open"
    expected = {  # point -> (calls billed, cost booked, ready file, final file)
        "after_claim": (1, None, False, False),
        "after_call": (2, PRICE, False, False),  # booked before the call went out
        "after_cost": (2, PRICE, False, False),
        "after_temp_write": (2, PRICE, True, False),
        "after_publish": (2, PRICE, False, db.dialect == "sqlite"),  # the database store: with the completion
    }[point]
    assert (billed, attempt.cost, ready.is_file(), published) == expected


@pytest.mark.parametrize("point", POINTS)
def test_kill_at_point_then_recover(
    point: str, db_url: str, tmp_path: Path, worker_env: dict[str, str], openai_fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed at `point` leaves a state a second worker finishes exactly once, paid once per booking."""
    db = create(db_url)
    try:
        ids = enqueue_frames(db, TASKS)
        env = {**worker_env, "PIPELINE_KIT_FAULTS": f"{point}:kill:{KILLED_AT}"}
        killed = run(work_cli(db_url, "A"), tmp_path, env)
        assert killed.returncode == -9, killed.stderr[-2000:]
        _assert_cut(point, db, ids[KILLED_AT - 1], tmp_path, len(openai_fake.billing))

        wait_leases_expired(db)
        for key in ("PIPELINE_KIT_OPENAI_URL", "OPENAI_API_KEY", "PIPELINE_KIT_OPENAI_PRICE"):
            monkeypatch.setenv(key, worker_env[key])
        run_worker(
            db,
            WorkerConfig(
                worker_id="B",
                lanes=("image",),
                backend="openai",
                until_empty=True,
                lease_s=2,
                heartbeat_s=0.5,
                outputs=_made_in(db, tmp_path),
                spool=tmp_path / "data/spool",
                progress=False,
            ),
        )

        violations = check_all(db, root=tmp_path, billed_cost=PRICE * len(openai_fake.billing))
        assert violations == []
        leftovers = [
            p.name
            for p in _made_in(db, tmp_path).rglob("*")
            if p.is_file() and (".part" in p.name or ".ready" in p.name)
        ]
        assert leftovers == [], "no .part or .ready file may outlive the run"
        if db.dialect == "sqlite":
            assert len(list(_made_in(db, tmp_path).rglob("first_frame.png"))) == TASKS
        else:  # every blob is a task's output or its side file: the killed publish left no orphan
            with db.engine.connect() as conn:
                results = conn.execute(sa.select(tasks.c.result)).scalars().all()
                named = {r["sha256"] for r in results} | {s for r in results for s in (r.get("sides") or {}).values()}
                assert set(conn.execute(sa.select(store_blobs.c.sha256)).scalars()) == named
    finally:
        db.dispose()
