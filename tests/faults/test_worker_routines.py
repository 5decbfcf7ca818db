"""A worker account writes only through the owner's lease-checked routines.

Invariant protected (invariant 9): a stolen worker password can change only the task and
attempt its lease names. Every forged write the issue found possible with column grants (a
queued task marked completed or failed, dependencies waived, a task pushed to 2099, a completed
task put back to pending, a result or output rewritten, other workers' attempts rewritten, a
worker marked stopped, a lease token stolen or read, blob and answer rows planted or
back-dated) is refused and changes no row; the routines themselves do nothing for a token the caller does not
hold (a publish for such a task is refused; a blob whose chunks do not hash to its checksum is
refused); and a worker under the account still makes a small book from start to finish.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine, security
from pipeline_kit.db import create, routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import store_blobs, tasks, workers
from pipeline_kit.db.blobs import Upload
from pipeline_kit.engine import Completion, TaskSpec
from pipeline_kit.store import Stored
from pipeline_kit.store.database import DatabaseStore
from pipeline_kit.text.ingest import ingest_text
from pipeline_kit.text.split import split_book
from pipeline_kit.worker import WorkerConfig, run_worker

from .helpers import run_as_account
from .test_grant_worker import BOOK_TEXT, contents

SERVERS = pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)

# The list of what one stolen worker password could do with column grants.
FORGED = (
    "UPDATE tasks SET status = 'completed' WHERE status = 'pending'",
    "UPDATE tasks SET status = 'failed', last_error = 'forged' WHERE status = 'pending'",
    "UPDATE tasks SET deps_remaining = 0",
    "UPDATE tasks SET run_after = '2099-01-01 00:00:00'",
    "UPDATE tasks SET status = 'pending' WHERE status = 'completed'",
    "UPDATE tasks SET output_path = 'outputs/evil.png', result = NULL WHERE status = 'completed'",
    "UPDATE attempts SET outcome = 'failed', error = 'forged', cost = 99",
    "UPDATE workers SET state = 'stopped'",
    "UPDATE tasks SET lease_token = 'stolen', worker_id = 'thief'",
    "SELECT lease_token FROM tasks WHERE status = 'processing'",  # reading one is stealing it
    "SELECT lease_token FROM attempts",
    "SELECT lease_token FROM events",
    "SELECT * FROM tasks",
    "INSERT INTO attempts (task_id, attempt_no, worker_id, lease_token, claimed_at) "
    "VALUES ('t-queued', 9, 'thief', 'stolen', '2000-01-01 00:00:00')",
    "INSERT INTO events (at, kind) VALUES ('2000-01-01 00:00:00', 'forged')",
    "INSERT INTO store_blobs (sha256, size, chunks, stored_at) VALUES ('" + "e" * 64 + "', 1, 1, '2000-01-01')",
    "UPDATE store_blobs SET stored_at = '2000-01-01 00:00:00'",
    "INSERT INTO store_chunks (sha256, seq, data) VALUES ('" + "e" * 64 + "', 0, 'x')",
    "INSERT INTO llm_answers (model, answer, cost, created_at) VALUES ('m', 'forged', 0, '2000-01-01 00:00:00')",
    "UPDATE provider_outages SET until = '2099-01-01 00:00:00'",
    "INSERT INTO workers (worker_id, state) VALUES ('ghost', 'working')",
    "DELETE FROM store_blobs",
)


def _fill(db: Database, owner_tmp: Path) -> dict[str, engine.Lease]:
    """Queued, running (held by another worker), completed tasks and a stored blob, as the owner."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="t-done", kind="noop", lane="default"),
                TaskSpec(task_id="t-run", kind="noop", lane="default"),
                TaskSpec(task_id="t-queued", kind="noop", lane="default", depends_on=("t-run",)),
            ],
        )
    engine.register_worker(db, "pc-other", lanes=["default"])
    with db.engine.begin() as conn:  # as if another PC's account had registered it
        conn.execute(sa.update(workers).values(account="pk_w_another_pc"))
    (done,) = engine.claim(db, "pc-other", ["default"], limit=1, lease_s=600)
    assert (
        engine.complete(db, Completion(task_id=done.task_id, token=done.token, result={"ok": 1})) is engine.Ack.ACCEPTED
    )
    (run,) = engine.claim(db, "pc-other", ["default"], limit=1, lease_s=600)
    blob = owner_tmp / "blob.bin"
    blob.write_bytes(b"a frame")
    sha = hashlib.sha256(b"a frame").hexdigest()
    assert DatabaseStore(db, owner_tmp / "cache").publish("outputs/planted.bin", blob, {}).sha256 == sha
    return {"done": done, "run": run}


@SERVERS
def test_forged_writes_are_refused_and_change_no_row(db: Database, worker_url: str, tmp_path: Path) -> None:
    """Each statement from the issue's list is refused as a missing privilege; nothing changes."""
    _fill(db, tmp_path)
    before = contents(db)
    assert run_as_account(worker_url, FORGED) == []
    assert contents(db) == before


@SERVERS
def test_routines_do_nothing_for_a_lease_the_caller_does_not_hold(
    db: Database, worker_url: str, tmp_path: Path
) -> None:
    """Called with another worker's task and a guessed (or its expired) token, every routine
    changes no row: no completion, failure, release, heartbeat or attempt note of a task the
    caller does not hold; no chat answer or blob without a held lease; a reclaim takes nothing
    that has not expired; another account's worker row is neither marked stopped, nor taken over,
    nor made to vote that a provider is down; no operator's event is forged; quotes in a task id
    or token stay data (MariaDB writes lists into the statement it prepares)."""
    leases = _fill(db, tmp_path)
    run, done = leases["run"], leases["done"]
    before = contents(db)
    worker = create(worker_url)
    refused = []
    none = {"cost": None, "model": None, "remote_job_id": None, "keep_cost": False}
    calls = {
        "pk_finish": dict(
            ids=["t-run", "t-queued", "x') OR ('1' = '1"],
            token="guess' OR '1' = '1",
            result=None,
            path="evil",
            cost=1.0,
            bytes=1,
        )
        | dict(model=None, settings=None, blobs="e" * 64),
        "pk_fail": dict(task_id="t-run", token="guess", worker_id="thief", retry=False, delay_s=0.0)
        | dict(error_kind="x", error="forged", last_error="x: forged", cost=None, alert='{"message": "forged"}'),
        "pk_release": dict(task_id="t-run", token=done.token, error="forged"),
        "pk_heartbeat": dict(worker_id="thief", ids=["t-run"], tokens=["guess"], stages=["evil"], progress=0.5)
        | dict(lease_s=86_400.0),
        "pk_note_attempt": {**none, "task_id": "t-run", "token": "guess", "cost": 99.0, "model": "forged"},
        "pk_reclaim": dict(by="thief", limit=100),
        "pk_remember_answer": dict(task_id="t-run", token="guess", key="f" * 64, model="m", answer="forged")
        | dict(tokens_in=None, tokens_out=None, cost=0.0),
        "pk_put_chunk": dict(task_id="t-run", token="guess", sha256="e" * 64, seq=0, data=b"x"),
        "pk_put_blob": dict(task_id="t-run", token="guess", sha256="e" * 64, size=1, chunks=1),
        "pk_blob_seen": dict(task_id="t-done", token=done.token, sha256=hashlib.sha256(b"a frame").hexdigest()),
        "pk_touch_worker": dict(worker_id="pc-other", state="stopped", paused=None),
        "pk_register_worker": dict(worker_id="pc-other", uid=None, host="thief", version="0", lanes="default")
        | dict(backend=None, lease_s=1.0),
        "pk_vote": dict(provider="comfyui", worker_id="pc-other", reason="forged", hold_s=86_400.0),
        "pk_event": dict(kind="cancel", task_id="t-run", worker_id="owner", token=None, detail='{"reason": "x"}'),
    }
    try:
        for name, params in calls.items():
            try:
                with worker.engine.begin() as conn:
                    rows = routines.call(conn, name, **params)
                    assert not [r for r in rows if r[0]], f"{name} did something: {rows}"
            except sa.exc.DBAPIError as exc:
                assert security.permission_denied(exc), f"{name}: refused for another reason: {exc.orig}"
                refused.append(name)
    finally:
        worker.dispose()
    assert set(refused) == {
        "pk_remember_answer",
        "pk_put_chunk",
        "pk_put_blob",
        "pk_blob_seen",
        "pk_register_worker",
        "pk_vote",
        "pk_event",
    }
    assert contents(db) == before
    assert run.task_id == "t-run"


@SERVERS
def test_a_blob_is_stored_only_by_the_completion_that_names_it(db: Database, worker_url: str, tmp_path: Path) -> None:
    """A worker account's publish writes nothing; its blob is stored by the accepted completion
    that names it, whole and verified. A completion for a task it does not hold stores nothing,
    chunks that do not hash to the checksum are refused with the whole completion, and a blob
    routine called outside such a completion, even for a held task, is refused."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=t, kind="noop", lane="default") for t in ("mine", "theirs")])
    worker = create(worker_url)

    def blob_rows() -> int:
        with db.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(store_blobs)).scalar_one())

    def completion(lease: engine.Lease, stored: Stored) -> Completion:
        result = {"sha256": stored.sha256, "bytes": stored.size}
        return Completion(task_id=lease.task_id, token=lease.token, output_path=stored.output_path, result=result)

    try:
        (mine,) = engine.claim(worker, "pc2", ["default"], limit=1, lease_s=600)
        (theirs,) = engine.claim(db, "pc-other", ["default"], limit=1, lease_s=600)
        frame, wrong = tmp_path / "frame.png", tmp_path / "wrong.png"
        frame.write_bytes(b"frame bytes" * 300_000)  # several chunks
        wrong.write_bytes(b"other bytes")
        store = DatabaseStore(worker, tmp_path / "cache")
        stored = store.publish("outputs/x.png", frame, {}, lease=(mine.task_id, mine.token))
        assert blob_rows() == 0 and [u.sha256 for u in stored.uploads] == [stored.sha256]
        late = replace(
            completion(theirs, stored), token=mine.token, uploads=[Upload(stored.sha256, stored.size, str(frame))]
        )
        assert engine.complete(worker, late) is engine.Ack.FENCED and blob_rows() == 0
        with worker.engine.begin() as conn, pytest.raises(sa.exc.DBAPIError) as refused:
            routines.call(
                conn, "pk_put_chunk", task_id="mine", token=mine.token, sha256=stored.sha256, seq=0, data=b"x"
            )
        assert security.permission_denied(refused.value)
        forged = replace(completion(mine, stored), uploads=[Upload(stored.sha256, stored.size, str(wrong))])
        with pytest.raises(sa.exc.DBAPIError):  # held and named, but its bytes are not the checksum's
            engine.complete(worker, forged)
        with db.engine.connect() as conn:
            status = conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == "mine")).scalar_one()
        assert blob_rows() == 0 and status == "processing"
        done = replace(completion(mine, stored), uploads=[Upload(stored.sha256, stored.size, str(frame))])
        assert engine.complete(worker, done) is engine.Ack.ACCEPTED
        assert blob_rows() == 1 and DatabaseStore(db, tmp_path / "check").intact(stored.sha256)
        assert engine.complete(worker, done) is engine.Ack.DUPLICATE and blob_rows() == 1  # again
    finally:
        worker.dispose()


@SERVERS
def test_a_worker_account_makes_a_small_book(db: Database, worker_url: str, tmp_path: Path) -> None:
    """The owner ingests and splits a small book; one worker under the account makes every task
    of it (outputs kept in the database store), through the routines only."""
    bookcode = ingest_text(db, BOOK_TEXT, "Harbour", lang="en").bookcode
    split_book(db, bookcode)
    worker = create(worker_url)
    try:
        assert routines.enabled(worker) and not routines.enabled(db)
        run_worker(
            worker,
            WorkerConfig(
                worker_id="pc2",
                backend="sketch",
                until_empty=True,
                progress=False,
                outputs=tmp_path / "outputs",
                spool=tmp_path / "spool",
                poll_s=0.1,
            ),
        )
    finally:
        worker.dispose()
    with db.engine.connect() as conn:
        states = dict(
            conn.execute(
                sa.select(tasks.c.status, sa.func.count()).where(tasks.c.bookcode == bookcode).group_by(tasks.c.status)
            ).all()
        )
        blobs = conn.execute(sa.select(sa.func.count()).select_from(store_blobs)).scalar()
    assert set(states) == {"completed"} and states["completed"] >= 5, states
    assert blobs > 0
