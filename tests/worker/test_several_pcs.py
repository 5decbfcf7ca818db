"""PCs that share only the database URL: outputs kept in the database (or S3) store reach every PC."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import imageio.v2 as imageio
import pytest
import sqlalchemy as sa

from pipeline_kit import engine, store, text
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, books, store_blobs, tasks
from pipeline_kit.engine import TaskSpec, enqueue
from pipeline_kit.errors import GenerationError, StoreUnavailable
from pipeline_kit.store.database import DatabaseStore
from pipeline_kit.store.gc import sweep
from pipeline_kit.store.export import export_book
from pipeline_kit.store.s3 import S3Store
from pipeline_kit.worker.outputs import file_digest

from .test_processes import ROOT, SMALL_BOOK, count, finish


def pc(url: str, worker_id: str, folder: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`pipeline-kit work` as a PC of its own: its own folder (outputs and cache under its
    data/), nothing shared with the others but the database URL."""
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pipeline_kit", "--db", url, "work", "--worker-id", worker_id, "--quiet", *extra]
    return subprocess.Popen(
        cmd,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def cli(url: str, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", url, *args],
        cwd=folder,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _database_store(db: Database) -> None:
    """PostgreSQL and MariaDB keep outputs in the database by default; SQLite is told to."""
    if db.dialect == "sqlite":
        store.set_url(db, "database")
    assert store.effective_url(db)[0] == store.DATABASE_URL


def test_three_pcs_sharing_only_the_url_make_the_film(db_url: str, db: Database, tmp_path: Path) -> None:
    """Three worker processes in three folders, sharing only the database URL, make the small
    book into a film (every task completed, none failed for a missing input on another PC); no
    recorded output names a PC's folder; `export` from a fourth folder writes the film, its
    subtitles, the chapter's contact sheet, frames and clips, each as the store holds it."""
    _database_store(db)
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    procs = [pc(db_url, f"PC-{i}", tmp_path / f"pc{i}", "--until-empty", "--lease", "60") for i in (1, 2, 3)]
    finish(procs)
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(tasks)).mappings().all()
    assert rows and {r["status"] for r in rows} == {"completed"}
    assert len({r["worker_id"] for r in rows}) >= 2
    assert all(not r["output_path"].startswith(("/", "data")) for r in rows)
    assert not list(tmp_path.glob("pc*/data/outputs/**/*.*"))  # nothing published on a PC's disk

    done = cli(db_url, tmp_path / "pc4", "export", book.bookcode, "out")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "pc4" / "out"
    by_kind = {r["kind"]: r for r in rows}
    film = out / "films" / book.bookcode / "film.mp4"
    assert file_digest(film)[1] == by_kind["assemble_book"]["result"]["sha256"]
    assert imageio.get_reader(film).count_frames() >= 12
    assert film.with_suffix(".srt").read_text(encoding="utf-8").startswith("1\n")
    assert list(out.glob(f"films/{book.bookcode}/chapter-*.contact.png"))
    for r in rows:
        assert file_digest(out / r["output_path"])[1] == r["result"]["sha256"]


def test_a_kill_between_blob_and_completion_leaves_one_output(db_url: str, db: Database, tmp_path: Path) -> None:
    """A worker killed after publishing its output but before its completion: the database store
    keeps a worker's blobs in its completion's transaction, so the killed worker left none; the
    task is finished by another PC, its row names that PC's output, export gives exactly that
    output, and a sweep finds nothing to take (the one blob is named)."""
    _database_store(db)
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title="Bk", lang="en", review=False))
        enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default", bookcode="bk")])
    args = ("--lanes", "default", "--until-empty", "--lease", "2", "--heartbeat", "0.5", "--watchdog", "0.5")
    killed = pc(
        db_url, "A", tmp_path / "a", *args, "--backend", "noop", env={"PIPELINE_KIT_FAULTS": "after_publish:kill:1"}
    )
    killed.communicate(timeout=120)
    assert killed.returncode == -9
    assert count(db, sa.select(sa.func.count()).select_from(store_blobs)) == 0  # nothing without its completion
    finish([pc(db_url, "B", tmp_path / "b", *args, "--backend", "sleep:0")])
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks).where(tasks.c.task_id == "t1")).mappings().one()
        blobs = set(conn.execute(sa.select(store_blobs.c.sha256)).scalars())
    assert row["status"] == "completed" and row["worker_id"] == "B"
    assert blobs == {row["result"]["sha256"]}
    done = cli(db_url, tmp_path / "c", "export", "bk", "out")
    assert done.returncode == 0, done.stderr
    exported = list((tmp_path / "c" / "out").rglob("*.json"))
    assert len(exported) == 1 and json.loads(exported[0].read_text())["backend"] == "sleep:0"
    assert not sweep(db, DatabaseStore(db, tmp_path), grace_s=0).unnamed
    with db.engine.connect() as conn:
        assert set(conn.execute(sa.select(store_blobs.c.sha256)).scalars()) == blobs


@pytest.mark.parametrize("db_url", ["mariadb"], indirect=True)
def test_a_clip_larger_than_a_packet_round_trips(db_url: str, db: Database, tmp_path: Path) -> None:
    """A file larger than MariaDB's max_allowed_packet is stored in chunks and fetched whole."""
    with db.engine.connect() as conn:
        packet = int(conn.exec_driver_sql("SELECT @@max_allowed_packet").scalar_one())
    big = tmp_path / "clip.mp4"
    big.write_bytes(os.urandom(packet + (3 << 20)))
    stored = DatabaseStore(db, tmp_path / "cache-a").publish("outputs/bk/clip.mp4", big, {})
    fetched = DatabaseStore(db, tmp_path / "cache-b").fetch(stored.output_path, {"sha256": stored.sha256})
    assert fetched.read_bytes() == big.read_bytes()


def test_three_pcs_share_an_s3_store(db_url: str, db: Database, tmp_path: Path, s3_store_env: dict[str, str]) -> None:
    """With the store in S3-compatible storage (a real SeaweedFS on loopback), three PCs in
    three folders make the small book into a film and `export` elsewhere gives every output as
    the task rows name it."""
    url = f"s3://films/{tmp_path.name}"  # a prefix of its own per test
    store.set_url(db, url)
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    procs = [
        pc(db_url, f"PC-{i}", tmp_path / f"pc{i}", "--until-empty", "--lease", "60", env=s3_store_env)
        for i in (1, 2, 3)
    ]
    finish(procs)
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(tasks)).mappings().all()
    assert rows and {r["status"] for r in rows} == {"completed"}
    assert not list(tmp_path.glob("pc*/data/outputs/**/*.*"))
    s3 = S3Store(url, tmp_path / "check-cache")
    assert all(s3.has(r["result"]["sha256"]) for r in rows)
    out = tmp_path / "export"
    done = export_book(db, store.open_store(db, cache=tmp_path / "export-cache"), book.bookcode, out)
    assert (out / "films" / book.bookcode / "film.srt") in done.written and not done.failed
    for r in rows:
        assert file_digest(out / r["output_path"])[1] == r["result"]["sha256"]


def test_s3_store_fetches_once_and_pauses_when_unreachable(
    tmp_path: Path, s3_store_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An S3 blob is stored once per checksum and fetched once per PC (then served from the
    cache); a blob no one stored is a missing input; a server that does not answer is
    StoreUnavailable (the worker pauses), never a task failure."""
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(os.urandom(5 << 20))
    url = f"s3://films/{tmp_path.name}"
    one = S3Store(url, tmp_path / "cache-1").publish("outputs/bk/clip.mp4", clip, {})
    assert S3Store(url, tmp_path / "cache-1").has(one.sha256)
    fetched = S3Store(url, tmp_path / "cache-2").fetch(one.output_path, {"sha256": one.sha256})
    assert fetched.read_bytes() == clip.read_bytes()
    fetched.chmod(0o444)  # a second fetch must not write it again
    assert S3Store(url, tmp_path / "cache-2").fetch(one.output_path, {"sha256": one.sha256}) == fetched
    with pytest.raises(GenerationError) as missing:
        S3Store(url, tmp_path / "cache-3").fetch("outputs/x.png", {"sha256": "0" * 64})
    assert missing.value.error_kind == "missing_input" and missing.value.retryable
    monkeypatch.setenv("PIPELINE_KIT_S3_ENDPOINT", "http://127.0.0.1:9")  # nothing listens
    with pytest.raises(StoreUnavailable):
        S3Store(url, tmp_path / "cache-4").fetch(one.output_path, {"sha256": one.sha256})


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_an_unreachable_store_pauses_the_worker_without_using_attempts(
    db_url: str, db: Database, tmp_path: Path
) -> None:
    """A store folder that is not there (a NAS not mounted) pauses the worker with one line per
    retry, and status shows it `paused: store unreachable ...`, not `working`; once it is back
    the task completes on its first attempt, none burned, and the pause is gone from its row."""
    mount = tmp_path / "nas"
    with db.engine.begin() as conn:
        enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default")])
    proc = pc(
        db_url, "w", tmp_path / "pc", "--lanes", "default", "--backend", "noop", "--until-empty", "--store", str(mount)
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith("store unreachable during publishing") and "not mounted" in line
    assert _shown_state(db, "w", lambda state: state != "working").startswith(
        "paused: store unreachable during publishing since "
    )
    mount.mkdir()
    finish([proc])
    assert engine.overview(db).workers["w"]["paused_reason"] is None
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks).where(tasks.c.task_id == "t1")).mappings().one()
    assert (row["status"], row["attempts"]) == ("completed", 1)
    assert (mount / row["output_path"]).is_file()  # the row holds the store name


def _shown_state(db: Database, worker_id: str, done: Callable[[str], bool], timeout: float = 30) -> str:
    """The worker's state as status shows it, once `done` says it is the one awaited."""
    deadline = time.monotonic() + timeout
    while True:
        state = engine.shown_state(engine.overview(db).workers.get(worker_id, {})) or ""
        if done(state) or time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def _stopped(proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Wait until `proc` has stopped itself (state T in /proc)."""
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        assert proc.poll() is None and time.monotonic() < deadline, "the worker never froze"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("db_url", "where"),
    [("postgresql", "database"), ("mariadb", "database"), ("postgresql", "s3")],
    indirect=["db_url"],
)
def test_a_pc_killed_mid_clip_and_a_pc_frozen_past_its_lease_change_nothing(
    db_url: str, where: str, db: Database, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The small book made into a film by PCs in their own folders while one PC is killed in the
    middle of a clip and another freezes in the middle of one past its lease: another PC takes
    both clips over, every task completes with exactly one completed attempt, the frozen PC, woken
    after the film is made, changes no task row (its late output is fenced, never recorded), and
    `export` from another folder gives the film and every output as the rows name them."""
    env: dict[str, str] = {}
    if where == "s3":
        env = request.getfixturevalue("s3_store_env")
        store.set_url(db, f"s3://films/{tmp_path.name}")
    else:
        _database_store(db)
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    fast = ("--until-empty", "--lease", "3", "--heartbeat", "0.5", "--watchdog", "0.5")
    drawer = pc(db_url, "PC-draw", tmp_path / "draw", "--lanes", "image,assembly", *fast, env=env)
    killed = pc(
        db_url,
        "PC-killed",
        tmp_path / "killed",
        "--lanes",
        "video",
        *fast,
        env={**env, "PIPELINE_KIT_FAULTS": "after_call:kill:1"},
    )
    frozen = pc(
        db_url,
        "PC-frozen",
        tmp_path / "frozen",
        "--lanes",
        "video",
        *fast,
        env={**env, "PIPELINE_KIT_FAULTS": "after_call:stop:1"},
    )
    try:
        killed.communicate(timeout=120)
        assert killed.returncode == -9
        _stopped(frozen)
        taker = pc(db_url, "PC-taker", tmp_path / "taker", *fast, env=env)
        finish([drawer, taker])
        with db.engine.connect() as conn:
            before = [dict(r) for r in conn.execute(sa.select(tasks).order_by(tasks.c.task_id)).mappings()]
    finally:
        frozen.send_signal(signal.SIGCONT)
    finish([frozen])
    with db.engine.connect() as conn:
        after = [dict(r) for r in conn.execute(sa.select(tasks).order_by(tasks.c.task_id)).mappings()]
        outcomes = conn.execute(sa.select(attempts.c.task_id, attempts.c.worker_id, attempts.c.outcome)).all()
    assert after == before  # the woken PC changed nothing
    assert {r["status"] for r in after} == {"completed"}
    completed = [t for t, _, o in outcomes if o == "completed"]
    assert sorted(completed) == sorted(r["task_id"] for r in after)  # once each
    lost = {(w, o) for _, w, o in outcomes if w in ("PC-killed", "PC-frozen")}
    assert lost == {("PC-killed", "lost"), ("PC-frozen", "lost")}
    clips = {r["task_id"]: r["worker_id"] for r in after if r["kind"] == "video"}
    assert "PC-taker" in clips.values() and not {"PC-killed", "PC-frozen"} & set(clips.values())

    done = cli(db_url, tmp_path / "viewer", "export", book.bookcode, "out")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "viewer" / "out"
    for r in after:
        assert file_digest(out / r["output_path"])[1] == r["result"]["sha256"]
    assert imageio.get_reader(out / "films" / book.bookcode / "film.mp4").count_frames() >= 12
