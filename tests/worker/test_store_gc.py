"""`store gc` can lose nothing, and a stored blob is trusted only once it matches its checksum."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import store
from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, books, store_blobs, store_chunks, tasks
from pipeline_kit.db.blobs import Upload
from pipeline_kit.engine import Completion, TaskSpec, enqueue
from pipeline_kit.store.database import DatabaseStore
from pipeline_kit.store.gc import sweep
from pipeline_kit.store.s3 import S3Store
from pipeline_kit.worker.outputs import file_digest
from pipeline_kit.worker.runtime import WorkerConfig, run_worker

LONG_AGO = dt.datetime(2000, 1, 1)


def _made(db: Database, tmp_path: Path, *task_ids: str) -> dict[str, dict]:
    """Tasks made by a worker into the database store; their rows by id."""
    store.set_url(db, store.DATABASE_URL)
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title="Bk", lang="en", review=False))
        enqueue(conn, [TaskSpec(task_id=t, kind="noop", lane="default", bookcode="bk") for t in task_ids])
    cfg = WorkerConfig(
        worker_id="w",
        lanes=("default",),
        backend="noop",
        until_empty=True,
        outputs=tmp_path / "made",
        spool=tmp_path / "spool",
        progress=False,
    )
    run_worker(db, cfg)
    with db.engine.connect() as conn:
        return {r["task_id"]: dict(r) for r in conn.execute(sa.select(tasks)).mappings()}


def _blobs(db: Database) -> set[str]:
    with db.engine.connect() as conn:
        return set(conn.execute(sa.select(store_blobs.c.sha256)).scalars())


def _plant(db: Database, sha: str, data: bytes) -> None:
    """A blob row and chunk under `sha` holding `data`, stored long ago (what a tamperer or a
    killed publish leaves)."""
    with db.engine.begin() as conn:
        conn.execute(sa.insert(store_chunks).values(sha256=sha, seq=0, data=data))
        conn.execute(sa.insert(store_blobs).values(sha256=sha, size=len(data), chunks=1, stored_at=LONG_AGO))


def test_gc_keeps_a_frame_whose_task_row_was_rewritten(db: Database, tmp_path: Path) -> None:
    """A task's result rewritten to name another blob and its real blob back-dated: gc keeps the
    real blob (the completed attempt names it), deletes only the old blob nothing names, and
    `--dry-run` lists that one and deletes nothing."""
    rows = _made(db, tmp_path, "t1", "t2")
    real = rows["t1"]["result"]["sha256"]
    assert real != rows["t2"]["result"]["sha256"]  # t2's blob does not keep t1's alive
    junk = hashlib.sha256(b"junk nobody names").hexdigest()
    _plant(db, junk, b"junk nobody names")
    _plant(db, "f" * 64, b"")  # damaged: an empty blob under a checksum it does not have
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).where(tasks.c.task_id == "t1").values(result={"sha256": "f" * 64}))
        conn.execute(sa.update(store_blobs).values(stored_at=LONG_AGO))
    url = db.engine.url.render_as_string(hide_password=False)
    assert main(["--db", url, "store", "gc", "--grace-hours", "0", "--dry-run"]) == 0
    assert _blobs(db) == {real, rows["t2"]["result"]["sha256"], junk, "f" * 64}  # nothing deleted
    swept = sweep(db, DatabaseStore(db, tmp_path), grace_s=0)
    assert set(swept.unnamed) == {junk} and set(swept.damaged) == {"f" * 64}
    assert _blobs(db) == {real, rows["t2"]["result"]["sha256"]}
    assert file_digest(DatabaseStore(db, tmp_path / "c").fetch("x.json", {"sha256": real}))[1] == real


def test_gc_dry_run_says_what_it_would_delete(
    sqlite_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`store gc --dry-run` names each blob it would delete (and why) and deletes none; the real
    run then deletes exactly those."""
    junk = hashlib.sha256(b"junk").hexdigest()
    _plant(sqlite_db, junk, b"junk")
    url = sqlite_db.engine.url.render_as_string(hide_password=False)
    assert main(["--db", url, "store", "gc", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"unnamed blob {junk} (4 bytes) would be deleted" in out and "nothing deleted" in out
    assert _blobs(sqlite_db) == {junk}
    assert main(["--db", url, "store", "gc"]) == 0
    assert "1 unnamed blob and 0 damaged blobs deleted" in capsys.readouterr().out
    assert _blobs(sqlite_db) == set()


def test_a_publish_under_way_is_never_swept(db: Database, tmp_path: Path) -> None:
    """A blob stored while an attempt runs is kept by gc, past the grace period and before any
    row names it, however long the attempt has run (it names its blobs only when it completes);
    an unnamed blob stored before the oldest running attempt began goes."""
    store.set_url(db, store.DATABASE_URL)
    with db.engine.begin() as conn:
        enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default")])
    from pipeline_kit import engine

    engine.claim(db, "w", ["default"])
    junk = hashlib.sha256(b"an orphan from before").hexdigest()
    _plant(db, junk, b"an orphan from before")
    made = tmp_path / "frame.png"
    made.write_bytes(b"a frame being published")
    sha = file_digest(made)[1]
    DatabaseStore(db, tmp_path / "c").publish("outputs/t1.png", made, {})
    with db.engine.begin() as conn:  # a call of a year: claimed, then stored, long ago
        conn.execute(sa.update(attempts).values(claimed_at=LONG_AGO + dt.timedelta(days=1)))
        conn.execute(
            sa.update(store_blobs).where(store_blobs.c.sha256 == sha).values(stored_at=LONG_AGO + dt.timedelta(days=2))
        )
    assert set(sweep(db, DatabaseStore(db, tmp_path), grace_s=0).unnamed) == {junk}
    assert _blobs(db) == {sha}


def test_a_planted_blob_row_does_not_make_the_publisher_skip_its_upload(db: Database, tmp_path: Path) -> None:
    """A blob row planted under the checksum a deterministic output will have (junk, or
    nothing, in its chunks) is not trusted: publishing replaces it, and the file fetched
    elsewhere is the real one."""
    made = tmp_path / "film.mp4"
    made.write_bytes(os.urandom(3000))
    sha = file_digest(made)[1]
    _plant(db, sha, b"not the film")
    stored = DatabaseStore(db, tmp_path / "a").publish("films/bk/film.mp4", made, {})
    assert stored.sha256 == sha
    fetched = DatabaseStore(db, tmp_path / "b").fetch(stored.output_path, {"sha256": sha})
    assert fetched.read_bytes() == made.read_bytes()


def test_a_planted_s3_object_is_replaced_by_the_publisher(tmp_path: Path, s3_store_env: dict[str, str]) -> None:
    """The same for S3: an object planted at a blob's key with other bytes is overwritten by the
    publish, not reused."""
    s3 = S3Store(f"s3://films/{tmp_path.name}", tmp_path / "a")
    made = tmp_path / "frame.png"
    made.write_bytes(os.urandom(2000))
    sha = file_digest(made)[1]
    s3.client.put_object(Bucket="films", Key=s3.key(sha), Body=b"planted")
    s3.publish("outputs/bk/frame.png", made, {})
    fetched = S3Store(s3.url, tmp_path / "b").fetch("outputs/bk/frame.png", {"sha256": sha})
    assert fetched.read_bytes() == made.read_bytes()


def _reusing(db: Database, tmp_path: Path, data: bytes) -> tuple[Completion, str]:
    """A running task whose output is `data`, already stored as an old orphan: its publish
    (under its lease) and the completion it would send."""
    from pipeline_kit import engine

    store.set_url(db, store.DATABASE_URL)
    with db.engine.begin() as conn:
        enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default")])
    (lease,) = engine.claim(db, "w", ["default"])
    sha = hashlib.sha256(data).hexdigest()
    _plant(db, sha, data)
    made = tmp_path / "clip.mp4"
    made.write_bytes(data)
    stored = DatabaseStore(db, tmp_path / "c").publish("outputs/t1.mp4", made, {}, lease=(lease.task_id, lease.token))
    uploads = [Upload(u.sha256, u.size, str(made)) for u in stored.uploads]  # settle not run: the file is here
    result = {"sha256": stored.sha256, "bytes": stored.size}
    completion = Completion(task_id="t1", token=lease.token, output_path=stored.output_path, result=result)
    completion.uploads = uploads
    return completion, sha


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_an_old_orphan_a_completion_reuses_is_not_swept_under_it(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A completion naming a blob found stored as an old orphan stamps it in its own transaction:
    a gc that listed it as old and read the names just before the completion was accepted does not
    delete it, and the blob the accepted completion names is there, whole."""
    from pipeline_kit import engine
    from pipeline_kit.store import gc

    completion, sha = _reusing(db, tmp_path, b"a clip drawn twice" * 1000)
    running_for = gc.running_for

    def completed_meanwhile(conn: sa.Connection) -> float | None:
        age = running_for(conn)  # the task's attempt began long after the orphan was stored
        assert engine.complete(db, completion) is engine.Ack.ACCEPTED
        return age

    monkeypatch.setattr(gc, "running_for", completed_meanwhile)
    assert not sweep(db, DatabaseStore(db, tmp_path), grace_s=0).unnamed
    assert _blobs(db) == {sha} and DatabaseStore(db, tmp_path / "r").intact(sha)


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_a_blob_swept_between_publish_and_completion_is_stored_again(db: Database, tmp_path: Path) -> None:
    """A publish found its blob stored (an old orphan) and stored nothing; gc swept it before the
    completion: the accepted completion stores it again, so what it names is there."""
    from pipeline_kit import engine

    completion, sha = _reusing(db, tmp_path, os.urandom(3 << 20))  # several chunks
    with db.engine.begin() as conn:  # the attempt began after the orphan was stored
        conn.execute(sa.update(attempts).values(claimed_at=LONG_AGO + dt.timedelta(days=1)))
    assert set(sweep(db, DatabaseStore(db, tmp_path), grace_s=0).unnamed) == {sha} and not _blobs(db)
    assert engine.complete(db, completion) is engine.Ack.ACCEPTED
    assert _blobs(db) == {sha} and DatabaseStore(db, tmp_path / "r").intact(sha)
