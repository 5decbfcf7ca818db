"""How many write transactions a worker takes on SQLite, where each one holds the whole file's
write lock and every other worker, screen and status query on the PC queues behind it.

Invariant: a batch of quick tasks on a folder or S3 store costs two write transactions, its
claim and its completions sent together (no renewal before a publish: a folder store stages the
output under the lease's mark and gives it its name once the completion was accepted; a blob
is named by the completion); reads (its inputs, whether another task owns its output name, the
store setting, a lane) take no write lock.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import event

from pipeline_kit.db import Database, create
from pipeline_kit.db.schema import tasks
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


@pytest.mark.parametrize("where", ["s3", "database"])
def test_a_batch_on_a_blob_store_writes_twice_and_each_blob_once(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A blob is never replaced and a completion is fenced, so a task names nothing before its
    upload (its completion names its blobs on its attempt; `store gc` spares what a running
    attempt may have stored by its age): a batch writes its claim and its completions, on S3
    and in the database store alike (there the completion's transaction keeps the blobs it
    names: its chunks or, found stored, its stamp). Each blob is stored."""
    from pipeline_kit.store import open_store, set_url

    db, begun = _counted(tmp_path / "p.db")
    try:
        if where == "s3":
            request.getfixturevalue("s3_store_env")
            set_url(db, f"s3://films/{tmp_path.name}")
        else:
            set_url(db, "database")
        begun.clear()
        beats = _drain(db, tmp_path)
        writes = begun["IMMEDIATE"]
        with db.engine.connect() as conn:
            made = [r.result for r in conn.execute(sa.select(tasks.c.output_path, tasks.c.result)) if r.output_path]
        store = open_store(db, cache=tmp_path / "reader")
        assert len(made) == TASKS and all(store.intact(r["sha256"]) for r in made)  # type: ignore[attr-defined]
    finally:
        db.dispose()
    assert writes <= 2 * math.ceil(TASKS / BATCH) + PER_RUN + 2 * beats, (begun, beats)


# The transaction that last wrote each row, as the server stamps it: PostgreSQL's `xmin`; on
# MariaDB, InnoDB's transaction id through a transaction-precise ROW START column, added for the
# test (system versioning) and taken away after it.
_LAST_WRITER = {"postgresql": "xmin::text", "mysql": "pk_trx"}
_VERSIONED = ("tasks", "attempts", "store_blobs", "store_chunks")
# The rows an output's completion writes: its task's, and the database store's blobs.
_MADE = (
    "SELECT {w} AS w FROM tasks{all} UNION ALL SELECT {w} FROM store_blobs{all} "
    "UNION ALL SELECT {w} FROM store_chunks{all}"
)


@contextmanager
def _stamped(db: Database) -> Iterator[None]:
    """While inside, each row of tasks, attempts and the database store's tables names the
    transaction that last wrote it."""
    if db.dialect != "mysql":  # PostgreSQL stamps every row (xmin)
        yield
        return
    with db.engine.begin() as conn:
        for table in _VERSIONED:
            conn.exec_driver_sql(
                f"ALTER TABLE {table} ADD COLUMN pk_trx BIGINT UNSIGNED GENERATED ALWAYS AS ROW START INVISIBLE, "
                "ADD COLUMN pk_trx_end BIGINT UNSIGNED GENERATED ALWAYS AS ROW END INVISIBLE, "
                "ADD PERIOD FOR SYSTEM_TIME (pk_trx, pk_trx_end), ADD SYSTEM VERSIONING"
            )
    try:
        yield
    finally:
        db.engine.dispose()  # no pooled connection holds the tables open
        with db.engine.begin() as conn:  # the columns, then the versioning (and its history) go
            conn.exec_driver_sql("SET SESSION system_versioning_alter_history = KEEP")
            for table in _VERSIONED:
                conn.exec_driver_sql(f"ALTER TABLE {table} DROP COLUMN pk_trx, DROP COLUMN pk_trx_end")
                conn.exec_driver_sql(f"ALTER TABLE {table} DROP SYSTEM VERSIONING")


@pytest.mark.parametrize("where", ["folder", "database"])
@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_a_batchs_completions_are_one_transaction_on_the_servers(
    db_url: str, db: Database, tmp_path: Path, where: str
) -> None:
    """The server stamps each row with the transaction that last wrote it: after quick tasks are
    drained, their rows, and the blobs of the database store, name one completing transaction
    per batch (a blob is kept by the completion that names it). MariaDB keeps every version a
    row had, so there each batch is counted whole: its claim and its completion."""
    batches = math.ceil(TASKS / BATCH)
    with _stamped(db):
        with db.engine.begin() as conn:
            enqueue(conn, [TaskSpec(task_id=f"t{i}", kind="noop", lane="default") for i in range(TASKS)])
        beats = _drain(db, tmp_path, store=str(tmp_path) if where == "folder" else "database")
        writer = _LAST_WRITER[db.dialect]
        with db.engine.connect() as conn:
            blobs = conn.execute(sa.text("SELECT count(*) FROM store_blobs")).scalar_one()
            writers = conn.execute(sa.text(f"SELECT count(DISTINCT w) FROM ({_MADE.format(w=writer, all='')}) AS m"))
            writers = writers.scalar_one()
            attempts = conn.execute(sa.text(f"SELECT count(DISTINCT {writer}) FROM attempts")).scalar_one()
            if db.dialect == "mysql":  # every transaction that wrote a row, the enqueue included
                ever = _MADE.format(w="pk_trx", all=" FOR SYSTEM_TIME ALL")
                made = conn.execute(sa.text(f"SELECT count(DISTINCT w) FROM ({ever}) AS m")).scalar_one()
                opened = conn.execute(
                    sa.text("SELECT count(DISTINCT pk_trx) FROM attempts FOR SYSTEM_TIME ALL")
                ).scalar_one()
                assert made <= 1 + 2 * batches + beats, (made, beats)  # a beat renews leases
                assert opened <= 2 * batches, opened  # opened by the claim, closed by the completion
    assert (blobs > 0) == (where == "database"), blobs
    assert writers <= batches, writers
    assert attempts <= batches, attempts  # each attempt closed with its task
