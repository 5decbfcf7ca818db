"""Worker processes against each real database: real files, kills, stops and fencing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import wave
from pathlib import Path

import imageio.v2 as imageio
import pytest
import sqlalchemy as sa
from PIL import Image

from pipeline_kit import engine, text
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, events, tasks
from pipeline_kit.engine import TaskSpec
from pipeline_kit.store import open_store
from pipeline_kit.worker.outputs import file_digest

ROOT = Path(__file__).resolve().parents[2]
SMALL_BOOK = """Chapter 1. The Harbour

Mara walked down to the harbour at dawn. The fishing boats were already out, and the gulls
screamed over the empty quay. Tobias waited by the lighthouse door with the lantern.

"You are late," Tobias said. "The tide will not wait for us."

Mara laughed and took the lantern from him. They climbed the stone steps together while the
fog rolled in from the sea.
"""


def work(url: str, worker_id: str, tmp: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `pipeline-kit work` as a separate process publishing under tmp/outputs."""
    cmd = [
        sys.executable,
        "-m",
        "pipeline_kit",
        "--db",
        url,
        "work",
        "--worker-id",
        worker_id,
        "--quiet",
        "--outputs",
        str(tmp / "outputs"),
        *extra,
    ]
    return subprocess.Popen(
        cmd,
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def finish(procs: list[subprocess.Popen[str]], timeout: float = 240) -> list[str]:
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, err[-2000:]
        assert "Traceback" not in err
        outs.append(out)
    return outs


def freeze(proc: subprocess.Popen[str], url: str) -> None:
    """SIGSTOP `proc` at a moment it holds no SQLite write lock: a process frozen inside a write
    transaction blocks every other writer of the file (a server's row locks do not: other rows
    stay free, and the frozen session times out)."""
    for _ in range(200):
        proc.send_signal(signal.SIGSTOP)
        if not url.startswith("sqlite:///"):
            return
        probe = sqlite3.connect(url.removeprefix("sqlite:///"), timeout=0.1, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            return
        except sqlite3.OperationalError:  # frozen mid-write: let it finish and try again
            proc.send_signal(signal.SIGCONT)
            time.sleep(0.02)
        finally:
            probe.close()
    raise AssertionError("the worker was always inside a write")


def claimed_by(db: Database, worker_id: str, timeout: float = 60) -> None:
    """Wait until `worker_id` has claimed a task."""
    deadline = time.monotonic() + timeout
    while count(db, sa.select(sa.func.count()).select_from(tasks).where(tasks.c.worker_id == worker_id)) == 0:
        assert time.monotonic() < deadline
        time.sleep(0.02)


def count(db: Database, query: sa.Select) -> int:  # type: ignore[type-arg]
    with db.engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def test_three_workers_make_every_file_once(db_url: str, db: Database, tmp_path: Path) -> None:
    """Three worker processes over a small book: every task completed exactly once, and each
    recorded output (frames, clips, the chapter's and the book's film), fetched through the store
    by its recorded name, is a real PNG or MP4 with its recorded checksum."""
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    total = count(db, sa.select(sa.func.count()).select_from(tasks))
    procs = [work(db_url, f"PC-{i}", tmp_path, "--until-empty", "--lease", "60") for i in range(1, 4)]
    finish(procs)
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(tasks)).mappings().all()
        completed_attempts = conn.execute(
            sa.select(attempts.c.task_id, sa.func.count())
            .where(attempts.c.outcome == "completed")
            .group_by(attempts.c.task_id)
        ).all()
    assert len(rows) == total and all(r["status"] == "completed" for r in rows)
    assert len(completed_attempts) == total and all(n == 1 for _, n in completed_attempts)
    assert len({r["worker_id"] for r in rows}) >= 2  # the work really was shared
    store = open_store(db, cache=tmp_path / "check-cache")
    for r in rows:
        path = store.fetch(r["output_path"], r["result"])
        size, digest = file_digest(path)
        assert (size, digest) == (r["result"]["bytes"], r["result"]["sha256"])
        if r["kind"] in ("video", "assemble_chapter", "assemble_book"):
            reader = imageio.get_reader(path)
            frames = reader.count_frames()
            assert frames >= 12 and reader.get_data(0).shape[:2] == (360, 640)
        elif r["kind"] == "voice":
            with wave.open(str(path), "rb") as speech:
                assert speech.getnframes() > speech.getframerate() // 2  # at least half a second said
        else:
            with Image.open(path) as img:
                assert img.format == "PNG" and img.size == (640, 360)
    leftovers = [p for p in (tmp_path / "outputs").rglob("*") if ".part" in p.name or ".ready" in p.name]
    assert leftovers == []


def _noop_tasks(db: Database, n: int) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"n{i:03d}", kind="noop", lane="default") for i in range(n)])


def test_killed_worker_tasks_are_finished_by_others(db_url: str, db: Database, tmp_path: Path) -> None:
    """SIGKILL one worker mid-run: its leased task is reclaimed after the lease and finished by
    the others; every task ends completed once."""
    _noop_tasks(db, 40)
    args = ("--lanes", "default", "--backend", "sleep:0.1", "--until-empty", "--lease", "2", "--heartbeat", "0.5")
    victim = work(db_url, "victim", tmp_path, *args)
    deadline = time.monotonic() + 60
    while (
        count(
            db,
            sa.select(sa.func.count())
            .select_from(tasks)
            .where(tasks.c.worker_id == "victim", tasks.c.status == "processing"),
        )
        == 0
    ):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    others = [work(db_url, f"PC-{i}", tmp_path, *args) for i in (1, 2)]
    finish(others)
    assert count(db, sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status == "completed")) == 40
    assert count(db, sa.select(sa.func.count()).select_from(attempts).where(attempts.c.outcome == "completed")) == 40
    assert (
        count(
            db,
            sa.select(sa.func.count())
            .select_from(attempts)
            .where(attempts.c.worker_id == "victim", attempts.c.outcome == "lost"),
        )
        >= 1
    )
    assert count(db, sa.select(sa.func.count()).select_from(attempts).where(attempts.c.outcome.is_(None))) == 0


def test_stopped_worker_is_fenced_and_new_owner_file_kept(db_url: str, db: Database, tmp_path: Path) -> None:
    """A worker frozen (SIGSTOP) past its lease, then resumed (SIGCONT), cannot complete the task
    or replace the file of the worker that took it over."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="slow", kind="noop", lane="default")])
    sleeper = work(
        db_url,
        "sleeper",
        tmp_path,
        "--lanes",
        "default",
        "--backend",
        "sleep:2",
        "--max-tasks",
        "1",
        "--lease",
        "1",
        "--heartbeat",
        "0.3",
    )
    claimed_by(db, "sleeper")
    time.sleep(0.3)
    freeze(sleeper, db_url)
    try:
        time.sleep(1.5)  # the lease runs out while it is frozen
        taker = work(
            db_url, "taker", tmp_path, "--lanes", "default", "--backend", "noop", "--until-empty", "--lease", "30"
        )
        finish([taker])
    finally:
        sleeper.send_signal(signal.SIGCONT)
    finish([sleeper])
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks).where(tasks.c.task_id == "slow")).mappings().one()
        outcomes = dict(conn.execute(sa.select(attempts.c.worker_id, attempts.c.outcome)).all())
        stale = conn.execute(
            sa.select(events.c.detail).where(events.c.kind == "stale", events.c.worker_id == "sleeper")
        ).all()
    assert row["status"] == "completed" and row["worker_id"] == "taker"
    assert outcomes == {"sleeper": "lost", "taker": "completed"}
    assert stale  # the late heartbeat/renewal was recorded as rejected
    path = open_store(db, cache=tmp_path / "check-cache").fetch(row["output_path"], row["result"])
    assert file_digest(path)[1] == row["result"]["sha256"]
    assert json.loads(path.read_text())["task_id"] == "slow"


def test_woken_worker_finishes_the_task_it_claims_again(db_url: str, db: Database, tmp_path: Path) -> None:
    """A fence belongs to one lease, never to the task. One worker frozen past its lease, its task
    reclaimed by a watchdog, then woken: its old lease is refused, it claims the task again under a
    new lease and completes it; the task never ends failed for that old fence."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="wake", kind="noop", lane="default", max_attempts=3)])
    sleeper = work(
        db_url,
        "sleeper",
        tmp_path,
        "--lanes",
        "default",
        "--backend",
        "sleep:2",
        "--until-empty",
        "--lease",
        "1",
        "--heartbeat",
        "0.3",
        "--watchdog",
        "0.5",
    )
    claimed_by(db, "sleeper")
    time.sleep(0.3)
    freeze(sleeper, db_url)
    try:
        time.sleep(1.5)  # the lease runs out while it is frozen
        assert [r.task_id for r in engine.reclaim_expired(db, by="test-watchdog")] == ["wake"]
    finally:
        sleeper.send_signal(signal.SIGCONT)
    finish([sleeper])
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks).where(tasks.c.task_id == "wake")).mappings().one()
        outcomes = [o for (o,) in conn.execute(sa.select(attempts.c.outcome).order_by(attempts.c.attempt_no))]
    assert row["status"] == "completed" and row["worker_id"] == "sleeper"
    assert outcomes == ["lost", "completed"]


@pytest.mark.restarts_servers
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_workers_survive_a_postgresql_restart(db_url: str, db: Database, tmp_path: Path) -> None:
    """PostgreSQL restarts mid-run: workers reconnect with backoff and finish every task once."""
    _noop_tasks(db, 60)
    args = ("--lanes", "default", "--backend", "sleep:0.1", "--until-empty", "--lease", "30", "--heartbeat", "5")
    procs = [work(db_url, f"PC-{i}", tmp_path, *args) for i in (1, 2)]
    deadline = time.monotonic() + 60
    while count(db, sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status == "completed")) < 5:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    db.dispose()
    version = sorted(os.listdir("/etc/postgresql"))[0]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    outs = finish(procs, timeout=300)
    assert all("completed" in o for o in outs)
    assert count(db, sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status == "completed")) == 60
    assert count(db, sa.select(sa.func.count()).select_from(attempts).where(attempts.c.outcome == "completed")) == 60
