"""`pipeline-kit work` as an operator meets it: its defaults, what it says when it stops, how it
logs, and how it stops during a database outage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from pipeline_kit import backends, engine
from pipeline_kit.backends.noop import make_noop
from pipeline_kit.chaos.proxy import Proxy
from pipeline_kit.cli import build_parser, main
from pipeline_kit.db import Database, create
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import TaskSpec
from pipeline_kit.errors import DatabaseUnavailable
from pipeline_kit.worker import Worker, WorkerConfig
from pipeline_kit.worker.heartbeat import Heartbeat
from pipeline_kit.worker.notebook import notebook_config
from pipeline_kit.worker.reconnect import Reconnect
from pipeline_kit.worker.runtime import DEFAULT_LANES

ROOT = Path(__file__).resolve().parents[2]
BUILT: list[str] = []


def make_counted(arg: str | None) -> backends.Backend:
    """The noop backend, counting how often a worker builds it."""
    BUILT.append(arg or "")
    return make_noop(arg)


def _put(db: Database, lane: str, n: int) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=f"{lane}-{i}", kind="noop", lane=lane) for i in range(n)])


def _work(url: str, *flags: str) -> list[str]:
    return ["--db", url, "work", "--worker-id", "w1", "--backend", "noop", "--until-empty", "--quiet", *flags]


def test_a_worker_that_runs_dry_names_the_lanes_still_holding_work(
    db_url: str, db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker whose lanes are empty while other lanes hold pending work says which lanes, how
    many tasks, and how to serve them; it does not stop with a bare `stopped: empty`."""
    _put(db, "image", 2)
    _put(db, "assembly", 3)
    assert main(_work(db_url, "--lanes", "image")) == 0
    out = capsys.readouterr().out
    assert "2 completed" in out and "stopped: empty" in out
    assert "assembly (3 tasks)" in out and "--lanes assembly" in out


def test_a_worker_with_nothing_left_anywhere_says_nothing_more(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The hint appears only when some other lane really holds pending work."""
    assert main(_work(db_url, "--lanes", "image")) == 0
    assert "pending work waits" not in capsys.readouterr().out


def test_every_worker_entry_serves_the_same_default_lanes() -> None:
    """The CLI, the worker notebook's parameters, notebook_config and the night launcher default
    to the same lanes, and they include assembly (else the films are never made)."""
    assert "assembly" in DEFAULT_LANES
    assert build_parser().parse_args(["work"]).lanes == ",".join(DEFAULT_LANES)
    cells = json.loads((ROOT / "notebooks" / "worker.ipynb").read_text(encoding="utf-8"))["cells"]
    parameters = next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    names: dict[str, object] = {}
    exec("".join(parameters["source"]), names)  # the cell is literals only
    assert names["lanes"] == ",".join(DEFAULT_LANES)
    config = notebook_config(worker_id="PC-1", backend="noop", batch=1, until_empty=True, max_tasks=0, max_minutes=0)
    assert config.lanes == DEFAULT_LANES
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--lanes image,video " not in readme and "--lanes image,video`" not in readme


def test_a_short_lease_alone_is_accepted(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--lease 5` without `--heartbeat`: the renewal period follows the lease instead of the
    fixed 20 s default that made it bad input."""
    assert main(_work(db_url, "--lanes", "image", "--lease", "5")) == 0, capsys.readouterr().err
    cfg = notebook_config(
        worker_id="PC-1", backend="noop", batch=1, until_empty=True, max_tasks=0, max_minutes=0, lease_s=5
    )
    assert 0 < cfg.heartbeat_s < 5


def test_the_backend_is_built_once_per_worker(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI checks the backend name by building it, and the worker runs that same instance."""
    monkeypatch.setitem(backends.REGISTRY, "counted", f"{__name__}:make_counted")
    BUILT.clear()
    assert (
        main(
            [
                "--db",
                db_url,
                "work",
                "--worker-id",
                "w1",
                "--backend",
                "counted",
                "--lanes",
                "image",
                "--until-empty",
                "--quiet",
            ]
        )
        == 0
    )
    assert BUILT == [""]


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_progress_in_a_log_file_is_plain_lines(db_url: str, db: Database, tmp_path: Path) -> None:
    """With stderr redirected to a file the progress is whole lines, not a bar redrawn with
    carriage returns into one endless line."""
    _put(db, "image", 3)
    log = tmp_path / "worker.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("w") as err:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pipeline_kit",
                "--db",
                db_url,
                "work",
                "--worker-id",
                "w1",
                "--backend",
                "noop",
                "--lanes",
                "image",
                "--until-empty",
            ],
            stderr=err,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    text = log.read_text()
    assert done.returncode == 0, text
    assert "\r" not in text
    assert any(line.startswith("20") and "w1: 3 tasks in" in line for line in text.splitlines()), text


def _lost() -> OperationalError:
    return OperationalError("SELECT 1", {}, Exception("connection refused: server closed the connection"))


def _raise_lost() -> None:
    raise _lost()


def test_a_stop_ends_the_wait_for_a_database_that_is_away(sqlite_db: Database, tmp_path: Path) -> None:
    """SIGTERM sets the worker's stop event; a database call waiting out an outage must give up
    at once instead of retrying for up to 15 minutes."""
    cfg = WorkerConfig(
        worker_id="w1",
        backend="noop",
        spool=tmp_path / "spool",
        reconnect=Reconnect(schedule=(30.0,), jitter=0.0, max_outage_s=900.0),
    )
    worker = Worker(sqlite_db, cfg)
    raised: list[BaseException] = []

    def call() -> None:
        try:
            worker.retry("claim", _raise_lost)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            raised.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    worker.stop_event.set()
    thread.join(timeout=20)
    assert not thread.is_alive(), "the reconnect loop ignored the stop"
    assert len(raised) == 1 and isinstance(raised[0], DatabaseUnavailable)


@pytest.mark.db
def test_heartbeat_errors_are_logged_once_a_minute(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A heartbeat that keeps failing says so on stderr (one line, not one per beat), instead
    of leases silently running out."""
    broken = create(f"sqlite:///{tmp_path / 'no-schema.db'}")  # no tables: every beat fails
    beat = Heartbeat(broken, "w1", lease_s=10, every_s=0.02).start()
    beat.hold("t1", "token")
    err = ""
    deadline = time.monotonic() + 20
    while not err and time.monotonic() < deadline:
        time.sleep(0.05)
        err += capsys.readouterr().err
    time.sleep(0.5)  # some 25 more failed beats
    beat.stop()
    broken.dispose()
    lines = [line for line in (err + capsys.readouterr().err).splitlines() if line.strip()]
    assert len(lines) == 1 and "heartbeat" in lines[0] and "w1" in lines[0], lines


@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_sigterm_during_an_outage_stops_the_worker(db_url: str, db: Database, tmp_path: Path) -> None:
    """A worker retrying a database that went away stops on SIGTERM, saying why, instead of
    waiting out its 15-minute outage budget."""
    _put(db, "default", 1)
    proxy = Proxy(("127.0.0.1", make_url(db_url).port or 0)).start()
    url = make_url(db_url).set(port=proxy.port).render_as_string(hide_password=False)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipeline_kit",
            "--db",
            url,
            "work",
            "--worker-id",
            "w1",
            "--backend",
            "sleep:2",
            "--lanes",
            "default",
            "--until-empty",
            "--quiet",
            "--outputs",
            str(tmp_path / "outputs"),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while engine.open_work(db, ["default"]) and not _claimed(db):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proxy.target = ("127.0.0.1", 9)  # the server is gone for this worker: nothing answers
        proxy.cut()
        assert proc.stderr is not None
        line = ""  # the heartbeat thread may report the lost connection first; the loop's line follows
        for _ in range(10):
            line += proc.stderr.readline()  # blocks until the worker reports the outage
            if "database unreachable" in line:
                break
        assert "database unreachable" in line, line
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proxy.close()
    assert proc.returncode == 0, err
    assert "stopped: signal, while the database was unreachable" in out and "Traceback" not in err, line + err


# A worker that installed its signal handlers gets SIGTERM while its main thread holds the stop
# event's lock, as it does for a moment entering and leaving every `stop.wait` of an outage's
# retry (threading.Event keeps that lock in `_cond`).
_SIGNAL_UNDER_THE_LOCK = """
import os, signal, sys
from pipeline_kit.db import create
from pipeline_kit.worker.runtime import Worker, WorkerConfig

worker = Worker(create(sys.argv[1]), WorkerConfig(worker_id="w1", backend="noop", progress=False))
worker.install_signal_handlers()
with worker.stop_event._cond:
    os.kill(os.getpid(), signal.SIGTERM)  # its Python handler runs at the next bytecode, in here
    sum(range(1000))
print("stopping" if worker.stop_event.wait(10) else "running")
"""


def test_a_signal_while_the_worker_holds_its_stop_events_lock_stops_it(sqlite_db: Database) -> None:
    """A signal handler runs in the main thread between any two bytecodes, also while that thread
    holds the stop event's lock: the worker still hears SIGTERM and stops, where a handler setting
    the event itself waited for that lock forever (the race that once hung
    test_sigterm_during_an_outage_stops_the_worker)."""
    done = subprocess.run(
        [sys.executable, "-c", _SIGNAL_UNDER_THE_LOCK, str(sqlite_db.engine.url)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.strip() == "stopping", done.stderr
    assert "w1: SIGTERM received" in done.stderr


def _claimed(db: Database) -> bool:
    with db.engine.connect() as conn:
        return bool(
            conn.execute(sa.select(sa.func.count()).select_from(tasks).where(tasks.c.status == "processing")).scalar()
        )
