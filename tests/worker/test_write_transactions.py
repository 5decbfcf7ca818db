"""How many write transactions a worker takes on SQLite, where each one holds the whole file's
write lock and every other worker, screen and status query on the PC queues behind it.

Invariant: a batch of quick tasks on a folder store costs two write transactions, its claim and
its completions sent together (no renewal before a publish: a folder store stages the output
under the lease's mark and gives it its name once the completion was accepted); reads (its
inputs, whether another task owns its output name, the store setting, a lane) take no write lock.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from pipeline_kit.db import Database, create
from pipeline_kit.engine import TaskSpec, enqueue, seed_default_lanes
from pipeline_kit.db.migrate import init
from pipeline_kit.worker.heartbeat import Heartbeat
from pipeline_kit.worker.runtime import Worker, WorkerConfig

pytestmark = pytest.mark.db

TASKS, BATCH = 30, 10
# Once per run, whatever the tasks: register the worker, the watchdog's reclaim, the claim's
# first read of the lanes' settings (then cached), the claim that finds the queue empty, the
# worker's last touch.
PER_RUN = 5


def _counted(path: Path) -> tuple[Database, Counter[str]]:
    """A fresh SQLite database whose connections count how each transaction begins."""
    db = create(f"sqlite:///{path}")
    init(db)
    seed_default_lanes(db)
    begun: Counter[str] = Counter()
    lock = threading.Lock()

    def trace(statement: str) -> None:
        if statement.startswith("BEGIN"):
            with lock:
                begun[statement.split()[1] if " " in statement else "DEFERRED"] += 1

    event.listen(db.engine, "connect", lambda dbapi, _record: dbapi.set_trace_callback(trace))
    db.engine.dispose()  # connections made from now on are traced
    with db.engine.begin() as conn:
        enqueue(conn, [TaskSpec(task_id=f"t{i}", kind="noop", lane="default") for i in range(TASKS)])
    begun.clear()
    return db, begun


def _drain(db: Database, tmp_path: Path, store: str | None = None) -> int:
    """Drain the queue with one worker; how many times its heartbeat thread beat (each beat, by
    time rather than by task, renews the held leases with their stages and touches the worker's
    row: two write transactions)."""
    beats = []
    real_beat = Heartbeat.beat

    def counted_beat(self: Heartbeat) -> None:
        beats.append(1)
        real_beat(self)

    cfg = WorkerConfig(
        store=store,
        quick_s=5.0,  # every noop task counts as quick, however loaded the machine is
        worker_id="w",
        backend="noop",
        lanes=("default",),
        batch=BATCH,
        until_empty=True,
        spool=tmp_path / "spool",
        progress=False,
        heartbeat_s=60,
        lease_s=300,
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Heartbeat, "beat", counted_beat)
        summary = Worker(db, cfg).run()
    assert sum(summary.counts.values()) == TASKS, summary.line()
    return len(beats)


def test_a_batch_of_quick_tasks_on_a_folder_store_writes_twice(tmp_path: Path) -> None:
    db, begun = _counted(tmp_path / "p.db")
    try:
        beats = _drain(db, tmp_path)
    finally:
        db.dispose()
    batches = math.ceil(TASKS / BATCH)
    assert begun["IMMEDIATE"] <= 2 * batches + PER_RUN + 2 * beats, (begun, beats)
    assert begun["DEFERRED"] >= TASKS  # each task's read of its inputs took no write lock


def test_a_blob_store_task_takes_no_renewal_before_its_publish(tmp_path: Path) -> None:
    """A blob is never replaced and a completion is fenced, so no renewal is needed: a task
    names its blob on its attempt (one transaction) and finds it stored or stores it (two here);
    the completions of a batch go together, in one transaction."""
    from pipeline_kit.store import set_url

    db, begun = _counted(tmp_path / "p.db")
    try:
        set_url(db, "database")
        begun.clear()
        beats = _drain(db, tmp_path)
    finally:
        db.dispose()
    batches = math.ceil(TASKS / BATCH)
    assert begun["IMMEDIATE"] <= 2 * batches + 3 * TASKS + PER_RUN + 2 * beats, (begun, beats)


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_batchs_completions_are_one_transaction_on_postgresql(db_url: str, db: Database, tmp_path: Path) -> None:
    """PostgreSQL stamps each row with the transaction that last wrote it (`xmin`): after a folder
    store's quick tasks are drained, their rows name one completing transaction per batch."""
    with db.engine.begin() as conn:
        enqueue(conn, [TaskSpec(task_id=f"t{i}", kind="noop", lane="default") for i in range(TASKS)])
    _drain(db, tmp_path, store=str(tmp_path))
    with db.engine.connect() as conn:
        writers = conn.execute(sa.text("SELECT count(DISTINCT xmin::text) FROM tasks")).scalar_one()
        attempts = conn.execute(sa.text("SELECT count(DISTINCT xmin::text) FROM attempts")).scalar_one()
    assert writers <= math.ceil(TASKS / BATCH), writers
    assert attempts <= math.ceil(TASKS / BATCH), attempts  # each attempt closed with its task
