"""The worker's small parts, without processes: windows, reconnect, the engine gateway, spool, output paths."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import OperationalError, ProgrammingError

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.engine import Ack, Completion, TaskSpec
from pipeline_kit.errors import BadInput, DatabaseUnavailable
from pipeline_kit.store.folder import FolderStore
from pipeline_kit.worker import gateway
from pipeline_kit.worker.gateway import EngineGateway
from pipeline_kit.worker.outputs import OutputPaths, params_hash
from pipeline_kit.worker.reconnect import Reconnect, Reconnecting
from pipeline_kit.worker.spool import Spool
from pipeline_kit.worker.windows import Window


def test_availability_window_wraps_midnight() -> None:
    """A night window 22-07 is open at 23:30 and 06:59, closed at 07:00 and noon; bad specs are refused."""
    night = Window.parse("22-07")
    assert night.is_open(datetime(2026, 1, 1, 23, 30)) and night.is_open(datetime(2026, 1, 2, 6, 59))
    assert not night.is_open(datetime(2026, 1, 2, 7, 0)) and not night.is_open(datetime(2026, 1, 2, 12))
    day = Window.parse("9:30-17:00")
    assert day.is_open(datetime(2026, 1, 2, 9, 30)) and not day.is_open(datetime(2026, 1, 2, 9, 29))
    for bad in ("22", "25-07", "7-7", "ab-cd"):
        with pytest.raises(BadInput):
            Window.parse(bad)


def _lost() -> OperationalError:
    return OperationalError("SELECT 1", {}, Exception("connection refused: server closed the connection"))


def test_reconnect_waits_through_an_outage_then_gives_up() -> None:
    """A lost connection is retried on the schedule and succeeds when the server returns; a
    longer outage ends in DatabaseUnavailable; an error in the SQL is not retried at all."""
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise _lost()
        return "ok"

    fast = Reconnect(schedule=(0.01, 0.02), jitter=0.0, max_outage_s=5)
    assert fast.call(flaky, what="test") == "ok" and len(calls) == 3
    with pytest.raises(DatabaseUnavailable):
        Reconnect(schedule=(0.01,), jitter=0.0, max_outage_s=0.05).call(
            lambda: (_ for _ in ()).throw(_lost()), what="test"
        )
    bad_sql = ProgrammingError("SELEC", {}, Exception("syntax error"))
    with pytest.raises(ProgrammingError):
        fast.call(lambda: (_ for _ in ()).throw(bad_sql), what="test")


def test_the_engine_gateway_retries_each_call_under_its_own_label(
    sqlite_db: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every engine call a worker makes goes through its reconnect loop: a database that refuses
    each call once is asked again, the call answers, and the line says which call waited (the
    label an operator reads, "database unreachable during claim"), booking and recording a cost
    alike."""
    with sqlite_db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="a", kind="noop", lane="default")])

    def refuse_first_try(namespace: object, name: str) -> None:
        real: Callable[..., object] = getattr(namespace, name)
        tries = []

        def flaky(*args: object, **kwargs: object) -> object:
            tries.append(1)
            if len(tries) % 2:
                raise _lost()
            return real(*args, **kwargs)

        monkeypatch.setattr(namespace, name, flaky)

    for name in ("claim", "record_cost", "complete_many", "review_count"):
        refuse_first_try(engine, name)
    for name in ("vote_down", "fleet_down"):
        refuse_first_try(gateway, name)
    retry = Reconnecting(Reconnect(schedule=(0.01,), jitter=0.0), threading.Event(), lambda why: None)
    gate = EngineGateway(sqlite_db, "w", retry)
    [lease] = gate.claim(["default"], limit=1, lease_s=60, cache=engine.LaneCache(), skip_kinds=())
    gate.record_cost(lease, 0.5, booking=True)
    gate.record_cost(lease, 0.25)
    assert gate.complete_many([Completion(task_id="a", token=lease.token)]) == {"a": Ack.ACCEPTED}
    assert gate.review_count() == 0
    gate.vote_down("comfyui", "refused", hold_s=60, quorum=1, task_id="a", new=True)
    assert list(gate.fleet_down(1)) == ["comfyui"]
    waited = [line.split(";")[0] for line in capsys.readouterr().err.splitlines()]
    labels = ("claim", "book cost", "record cost", "complete", "review count", "provider outage", "provider outages")
    assert waited == [f"database unreachable during {label}" for label in labels]


def test_spool_submits_later_and_drops_what_was_fenced(sqlite_db: Database, tmp_path: Path) -> None:
    """A spooled completion is accepted once the database takes it; one whose lease was lost
    meanwhile is fenced and dropped; either way the spool ends empty."""
    with sqlite_db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=t, kind="noop", lane="default") for t in ("a", "b")])
    leases = {lease.task_id: lease for lease in engine.claim(sqlite_db, "w", ["default"], limit=2)}
    spool = Spool(tmp_path, "w")
    for lease in leases.values():
        spool.put(Completion(task_id=lease.task_id, token=lease.token, result={"x": 1}))
    with sqlite_db.engine.begin() as conn:
        engine.reset_tasks(conn, ["b"], reason="edited while the worker was offline")
    assert spool.flush(sqlite_db, "w") == {"a": Ack.ACCEPTED, "b": Ack.FENCED}
    assert spool.pending() == []


def test_a_spooled_completion_keeps_its_blob_when_submitted(sqlite_db: Database, tmp_path: Path) -> None:
    """The database store's blob travels with its completion: spooled while the database was
    away, it is stored when the completion is accepted, and not for a fenced one."""
    from pipeline_kit.db.schema import store_blobs
    from pipeline_kit.store.database import DatabaseStore

    with sqlite_db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=t, kind="noop", lane="default") for t in ("kept", "late")])
    spool, store = Spool(tmp_path, "w"), DatabaseStore(sqlite_db, tmp_path / "cache")
    shas = {}
    for lease in engine.claim(sqlite_db, "w", ["default"], limit=2):
        made = tmp_path / f"{lease.task_id}.wav"
        made.write_bytes(f"the voice of {lease.task_id}".encode() * 100)
        stored = store.publish(f"outputs/{made.name}", made, {}, lease=(lease.task_id, lease.token))
        store.settle(stored, made, {})  # the file moves into the cache, where the completion reads it
        shas[lease.task_id] = stored.sha256
        result = {"sha256": stored.sha256, "bytes": stored.size}
        spool.put(Completion(task_id=lease.task_id, token=lease.token, result=result, uploads=list(stored.uploads)))
    with sqlite_db.engine.begin() as conn:
        engine.reset_tasks(conn, ["late"], reason="edited while the worker was offline")
    assert spool.flush(sqlite_db, "w") == {"kept": Ack.ACCEPTED, "late": Ack.FENCED}
    with sqlite_db.engine.connect() as conn:
        assert set(conn.execute(sa.select(store_blobs.c.sha256)).scalars()) == {shas["kept"]}
    assert DatabaseStore(sqlite_db, tmp_path / "elsewhere").intact(shas["kept"])


def test_spooling_a_completion_again_after_a_restart_keeps_one_entry(tmp_path: Path) -> None:
    """A worker restarted with the same unsent result spools it again: the entry's name must not
    depend on the process (Python's hash() is seeded per process), or the spool would hold it twice."""
    script = (
        "import sys; from pathlib import Path; from pipeline_kit.engine import Completion; "
        "from pipeline_kit.worker.spool import Spool; "
        "Spool(Path(sys.argv[1]), 'w').put(Completion(task_id='bk-c001-s0001/image', token='t' * 32))"
    )
    for seed in ("1", "2"):
        subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)], check=True, env={**os.environ, "PYTHONHASHSEED": seed}
        )
    assert len(Spool(tmp_path, "w").pending()) == 1


def test_ready_output_is_reused_only_for_the_same_params_and_generation(tmp_path: Path) -> None:
    """A finished, unpublished output is offered to a takeover only if made from the same params
    and task generation; publishing moves it (and its side files) onto the final path."""
    paths = OutputPaths.for_task(
        tmp_path / "outputs",
        task_id="bk-c001-s0001/video",
        kind="video",
        bookcode="bk",
        shot_id="bk-c001-s0001",
        suffix=".mp4",
        token="t" * 32,
    )
    assert paths.final == tmp_path / "outputs" / "bk" / "bk-c001-s0001" / "video.mp4"
    assert paths.part.name.endswith(".part.mp4")  # the real suffix last, for ffmpeg
    paths.part.parent.mkdir(parents=True)
    paths.part.write_bytes(b"clip")
    side = paths.final.with_name("side.tmp")
    side.write_text("1\n00:00:00,000 --> 00:00:01,000\nhi\n")
    key = f"{params_hash({'a': 1})}-g0"
    paths.mark_ready({"params_hash": key, "cost": 0.04}, extras={".srt": side})
    assert paths.reusable(key) is not None
    assert paths.reusable(f"{params_hash({'a': 2})}-g0") is None
    assert paths.reusable(f"{params_hash({'a': 1})}-g1") is None
    stored = FolderStore(tmp_path).publish(paths.name, paths.ready, paths.ready_sides())
    paths.tidy()
    assert stored.size == 4 and paths.final.read_bytes() == b"clip" and paths.side(".srt").exists()
    assert stored.output_path == paths.name == "outputs/bk/bk-c001-s0001/video.mp4"  # a name, not a path
    assert set(stored.sides) == {".srt"}
    assert sorted(p.name for p in paths.final.parent.iterdir()) == ["video.mp4", "video.srt"]
    escaped = OutputPaths.for_task(
        tmp_path / "outputs",
        task_id="x",
        kind="assemble_book",
        bookcode="bk",
        shot_id=None,
        suffix=".mp4",
        token="t" * 32,
        publish_as="../../films/bk/film.mp4",
    )
    assert escaped.final == tmp_path / "films" / "bk" / "film.mp4"  # no climbing out of the data folder


def test_a_side_file_of_an_attempt_that_died_is_tidied_away(tmp_path: Path) -> None:
    """A side file written before the ready mark (a frame's thumbnail) is named like the attempt's
    temp file, so when that attempt dies before keeping it, the next publish tidies it away with
    the temp file; the kept side of the attempt that finished stays."""
    dead = OutputPaths.for_task(
        tmp_path / "outputs",
        task_id="bk-c001-s0001/first_frame",
        kind="first_frame",
        bookcode="bk",
        shot_id="bk-c001-s0001",
        suffix=".png",
        token="d" * 32,
    )
    live = OutputPaths.for_task(
        tmp_path / "outputs",
        task_id="bk-c001-s0001/first_frame",
        kind="first_frame",
        bookcode="bk",
        shot_id="bk-c001-s0001",
        suffix=".png",
        token="l" * 32,
    )
    dead.part.parent.mkdir(parents=True)
    for attempt in (dead, live):
        attempt.part.write_bytes(b"png")
        attempt.side_part(".thumb.jpg").write_bytes(b"jpg")
    assert dead.side_part(".thumb.jpg") != live.side_part(".thumb.jpg")
    live.mark_ready({"params_hash": "k"}, extras={".thumb.jpg": live.side_part(".thumb.jpg")})
    FolderStore(tmp_path).publish(live.name, live.ready, live.ready_sides())
    live.tidy()
    assert sorted(p.name for p in live.final.parent.iterdir()) == ["first_frame.png", "first_frame.thumb.jpg"]


def test_a_late_attempt_never_replaces_a_later_generations_ready_file(tmp_path: Path) -> None:
    """A task reset while an attempt ran: the newer lease's ready file (a later generation) stays
    when the late attempt's call returns, so only the newer output can be published for it."""

    def attempt(token: str) -> OutputPaths:
        paths = OutputPaths.for_task(
            tmp_path / "outputs",
            task_id="bk-s1/video",
            kind="video",
            bookcode="bk",
            shot_id="bk-s1",
            suffix=".mp4",
            token=token,
        )
        paths.part.parent.mkdir(parents=True, exist_ok=True)
        paths.part.write_bytes(token.encode())
        return paths

    newer, late = attempt("n" * 32), attempt("l" * 32)
    newer.mark_ready({"params_hash": "p-g1", "generation": 1})
    late.mark_ready({"params_hash": "p-g0", "generation": 0})
    assert newer.ready.read_bytes() == b"n" * 32
    assert late.reusable("p-g0") is None and newer.reusable("p-g1") is not None
    again = attempt("a" * 32)  # a takeover of the newer generation may replace it (same output)
    again.mark_ready({"params_hash": "p-g1", "generation": 1})
    assert again.ready.read_bytes() == b"a" * 32
