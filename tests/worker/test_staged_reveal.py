"""A folder store's publish: staged under the lease's mark, revealed only once the completion was accepted.

Invariants: a late worker's publish never replaces (nor deletes) the output of the worker that
took its task over, with no lease renewal before it, and what it made is reused by that worker,
not made again; a worker killed between its completion and
the rename leaves an output every reader (the store's fetch and fetch_side, export) finds, with
the checksum the completion recorded; a stale staged file goes with the next accepted publish of
its name, never one of a lease that may still be accepted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import books, tasks
from pipeline_kit.engine import Ack, Completion, Lease, TaskSpec
from pipeline_kit.store import Stored
from pipeline_kit.store.cache import file_digest
from pipeline_kit.store.export import export_book
from pipeline_kit.store.folder import STAGED, FolderStore
from pipeline_kit.store.gc import stale_staged
from pipeline_kit.worker.runtime import WorkerConfig, run_worker

ROOT = Path(__file__).resolve().parents[2]
NAME = "outputs/bk/s1/first_frame.png"
THUMB = ".thumb.jpg"


def _made(folder: Path, who: str) -> tuple[Path, dict[str, Path]]:
    """An output and its thumbnail as worker `who` made them (their bytes name the worker)."""
    folder.mkdir(parents=True, exist_ok=True)
    main, thumb = folder / f"{who}.png", folder / f"{who}.thumb.jpg"
    main.write_bytes(f"frame by {who}".encode())
    thumb.write_bytes(f"thumb by {who}".encode())
    return main, {THUMB: thumb}


def _lease_then_takeover(db: Database) -> tuple[Lease, Lease]:
    """Task t1 claimed by `late`, its lease run out and reclaimed, then claimed by `taker`."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default")])
    (late,) = engine.claim(db, "late", ["default"], limit=1, lease_s=0.1)
    time.sleep(0.3)
    assert engine.reclaim_expired(db, by="watchdog")
    (taker,) = engine.claim(db, "taker", ["default"], limit=1)
    return late, taker


def _complete(db: Database, lease: Lease, stored: Stored) -> Ack:
    result = {"sha256": stored.sha256, "bytes": stored.size, "sides": stored.sides, "staged": stored.staged}
    return engine.complete(db, Completion(task_id=lease.task_id, token=lease.token, output_path=NAME, result=result))


def _store(tmp_path: Path) -> FolderStore:
    (tmp_path / "store").mkdir()
    return FolderStore(tmp_path / "store")


def _staged(store: FolderStore) -> list[str]:
    return sorted(p.name for p in store.locate(NAME).parent.iterdir() if STAGED in p.name)


def test_a_late_workers_publish_never_replaces_the_new_owners_file(sqlite_db: Database, tmp_path: Path) -> None:
    """Whichever way a late worker's publish interleaves with the publish of the worker that took
    its task over (before it, between its staging and its completion, after its reveal), the name
    ends holding the new owner's file and the late worker's files are gone."""
    store = _store(tmp_path)
    late, taker = _lease_then_takeover(sqlite_db)
    for order in ("late first", "late between", "late after"):
        late_stored = None
        if order == "late first":
            late_stored = store.publish(NAME, *_made(tmp_path / "late", "late"), lease=(late.task_id, late.token))
        taker_stored = store.publish(NAME, *_made(tmp_path / "taker", "taker"), lease=(taker.task_id, taker.token))
        if order == "late between":
            late_stored = store.publish(NAME, *_made(tmp_path / "late", "late"), lease=(late.task_id, late.token))
            store.conclude(late_stored, accepted=_complete(sqlite_db, late, late_stored) is not Ack.FENCED)
        assert _complete(sqlite_db, taker, taker_stored) in (Ack.ACCEPTED, Ack.DUPLICATE)
        store.conclude(taker_stored, accepted=True)
        if order == "late after":
            late_stored = store.publish(NAME, *_made(tmp_path / "late", "late"), lease=(late.task_id, late.token))
        assert late_stored is not None
        ack = _complete(sqlite_db, late, late_stored)
        assert ack is Ack.FENCED, order
        store.conclude(late_stored, accepted=False)
        assert store.locate(NAME).read_bytes() == b"frame by taker", order
        assert store.fetch_side(NAME, {"sides": taker_stored.sides}, THUMB).read_bytes() == b"thumb by taker"
        assert _staged(store) == [], order


def test_a_stale_staged_file_goes_with_the_next_accepted_publish_never_a_live_one(tmp_path: Path) -> None:
    """Files staged by a lease that never completed are deleted once a later publish of the name
    was accepted; a publish that is fenced deletes only its own, so a live lease's staged files
    stay to be revealed."""
    store = _store(tmp_path)
    dead = store.publish(NAME, *_made(tmp_path / "dead", "dead"), lease=("t1", "dead-token"))
    live = store.publish(NAME, *_made(tmp_path / "live", "live"), lease=("t1", "live-token"))
    assert dead.staged in live.stale
    late = store.publish(NAME, *_made(tmp_path / "late", "late"), lease=("t1", "late-token"))
    store.conclude(late, accepted=False)  # the late one was fenced: the live files are untouched
    assert len(_staged(store)) == 4  # dead's and live's, main and thumbnail
    store.conclude(live, accepted=True)
    assert _staged(store) == [] and store.locate(NAME).read_bytes() == b"frame by live"
    store.conclude(live, accepted=True)  # again: nothing changes
    assert store.locate(NAME).read_bytes() == b"frame by live"


def _book_task(db: Database) -> None:
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title="Bk", lang="en", review=False))
        engine.enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default", bookcode="bk")])


def test_a_kill_between_completion_and_rename_leaves_an_output_every_reader_finds(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """A worker SIGKILLed right after its completion was accepted (`after_complete`), before the
    rename: the task is completed, its file still staged; the store's fetch finishes the rename,
    export finds it, and each holds the checksum the completion recorded."""
    _book_task(sqlite_db)
    url = str(sqlite_db.engine.url)
    with (tmp_path / "stderr").open("w") as err:  # a file, not a pipe: the killed worker closes none
        killed = subprocess.run(
            [sys.executable, "-m", "pipeline_kit", "--db", url, "work", "--worker-id", "A", "--quiet"]
            + ["--lanes", "default", "--backend", "noop", "--until-empty"],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PIPELINE_KIT_FAULTS": "after_complete:kill:1"},
            stdout=subprocess.DEVNULL,
            stderr=err,
            timeout=120,
        )
    assert killed.returncode == -9, (tmp_path / "stderr").read_text()
    with sqlite_db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks).where(tasks.c.task_id == "t1")).mappings().one()
    assert row["status"] == "completed" and row["result"]["staged"]
    store = FolderStore(Path(sqlite_db.engine.url.database).parent)
    final = store.locate(row["output_path"])
    assert not final.exists() and _staged_beside(final)  # cut between the completion and the rename
    exported = export_book(sqlite_db, store, "bk", tmp_path / "export")
    assert exported.failed == [] and len(exported.written) == 1
    assert file_digest(exported.written[0])[1] == row["result"]["sha256"]
    assert file_digest(store.fetch(row["output_path"], row["result"]))[1] == row["result"]["sha256"]
    assert not _staged_beside(final)


def test_a_reader_finishes_a_reveal_side_files_too(tmp_path: Path) -> None:
    """Cut after the completion (nothing renamed): a side file asked for alone (a screen's
    thumbnail) is revealed from the result's mark, then the main file, each as recorded."""
    store = _store(tmp_path)
    stored = store.publish(NAME, *_made(tmp_path / "w", "w"), lease=("t1", "token"))
    result = {"sha256": stored.sha256, "bytes": stored.size, "sides": stored.sides, "staged": stored.staged}
    side = store.fetch_side(NAME, result, THUMB)
    assert side is not None and file_digest(side)[1] == stored.sides[THUMB]
    assert file_digest(store.fetch(NAME, result))[1] == stored.sha256
    assert _staged(store) == []


def _staged_beside(final: Path) -> list[Path]:
    return [p for p in final.parent.iterdir() if p.name.startswith(final.name + STAGED)]


def test_store_gc_deletes_only_staged_files_no_lease_can_have_accepted(sqlite_db: Database, tmp_path: Path) -> None:
    """`store gc` on a folder store: files staged by a lease that was taken over go; those of the
    running lease, and those a completion recorded (for the next reader to reveal), stay."""
    store = _store(tmp_path)
    late, taker = _lease_then_takeover(sqlite_db)
    dead = store.publish(NAME, *_made(tmp_path / "late", "late"), lease=(late.task_id, late.token))
    live = store.publish(NAME, *_made(tmp_path / "taker", "taker"), lease=(taker.task_id, taker.token))
    other = "outputs/bk/s2/first_frame.png"  # a completed task whose reveal a crash cut short
    with sqlite_db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="t2", kind="noop", lane="default")])
    (done,) = engine.claim(sqlite_db, "w", ["default"], limit=1)
    recorded = store.publish(other, *_made(tmp_path / "done", "done"), lease=(done.task_id, done.token))
    result = {"sha256": recorded.sha256, "bytes": recorded.size, "sides": recorded.sides, "staged": recorded.staged}
    assert engine.complete(sqlite_db, Completion(task_id="t2", token=done.token, output_path=other, result=result))
    assert sorted(stale_staged(sqlite_db, store, dry_run=True)) == sorted(_files(store, NAME, dead.staged))
    assert len(_files(store, NAME, dead.staged)) == 2  # a dry run deletes nothing
    assert len(stale_staged(sqlite_db, store)) == 2
    assert _files(store, NAME, dead.staged) == []
    assert len(_files(store, NAME, live.staged)) == 2 and len(_files(store, other, recorded.staged)) == 2
    assert file_digest(store.fetch(other, result))[1] == recorded.sha256


def _files(store: FolderStore, name: str, mark: str | None) -> list[Path]:
    return [p for p in store.locate(name).parent.iterdir() if p.name.endswith(f"{STAGED}{mark}")]


def _stopped(pid: int, timeout: float = 60) -> None:
    """Wait until process `pid` has stopped itself (a `stop` fault point)."""
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        assert time.monotonic() < deadline, "the worker never reached its fault point"
        time.sleep(0.05)


def test_a_fenced_workers_output_is_reused_by_the_worker_that_takes_the_task_over(sqlite_db: Database) -> None:
    """A worker stopped between its publish and its completion loses its lease to the watchdog;
    when it wakes its completion is fenced, and its staged file goes back to its ready file
    instead of being deleted: the task ends completed once, from that file, with no second call."""
    _book_task(sqlite_db)
    url = str(sqlite_db.engine.url)
    folder = Path(sqlite_db.engine.url.database).parent
    cmd = [sys.executable, "-m", "pipeline_kit", "--db", url, "work", "--worker-id", "A", "--quiet"]
    cmd += ["--lanes", "default", "--backend", "noop", "--max-tasks", "1", "--lease", "1", "--heartbeat", "0.3"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PIPELINE_KIT_FAULTS": "after_publish:stop:1"}
    with (folder / "stderr").open("w") as err:
        late = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            _stopped(late.pid)
            time.sleep(1.5)  # its lease runs out while it is stopped
            assert engine.reclaim_expired(sqlite_db, by="watchdog")
            late.send_signal(signal.SIGCONT)
            assert late.wait(timeout=60) == 0, (folder / "stderr").read_text()
        finally:
            late.kill()
    ready = list(folder.rglob("*.ready.json"))
    assert len(ready) == 1 and not list(folder.rglob(f"*{STAGED}*")), "given back, not deleted nor left staged"
    summary = run_worker(
        sqlite_db,
        WorkerConfig(worker_id="B", lanes=("default",), backend="noop", until_empty=True, progress=False),
    )
    assert summary.counts["completed"] == 1
    with sqlite_db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks).where(tasks.c.task_id == "t1")).mappings().one()
    assert row["status"] == "completed" and row["result"]["reused"] is True, row["result"]
    assert file_digest(FolderStore(folder).fetch(row["output_path"], row["result"]))[1] == row["result"]["sha256"]
    assert not list(folder.rglob("*.ready*")), "published: the ready file and its meta are cleared"
