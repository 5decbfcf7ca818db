"""Liveness an operator can see, with real worker processes on each database: a killed or frozen
worker shows `not responding` once its lease has passed, a cleanly exited one `stopped`, and the
stage shown is the one the worker reported."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import TaskSpec

from .test_processes import work

LEASE = ("--lease", "2", "--heartbeat", "0.5")  # short, so a silence passes the lease quickly
ROOT = Path(__file__).resolve().parents[2]


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    """Poll until `check()` is truthy; fail naming `what` if it never is."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.1)


def worker_info(db: Database, worker_id: str) -> dict[str, Any]:
    return engine.overview(db).workers.get(worker_id, {})


def status_json(url: str, tmp: Path) -> dict[str, Any]:
    """`pipeline-kit status --json` as an operator runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", url, "status", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def silent_past_lease(db: Database, worker_id: str) -> bool:
    info = worker_info(db, worker_id)
    return bool(info) and info["last_seen_age_s"] > info["lease_s"]


def _one_task(db: Database) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="slow", kind="noop", lane="default")])


def _running(db: Database, worker_id: str) -> bool:
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks.c.status, tasks.c.worker_id).where(tasks.c.task_id == "slow")).one()
    return tuple(row) == ("processing", worker_id)


def test_killed_worker_shows_not_responding(db_url: str, db: Database, tmp_path: Path) -> None:
    """A worker SIGKILLed while it holds a task is `not responding` (in `status --json` too) as
    soon as its silence is longer than its lease, never `working`."""
    _one_task(db)
    proc = work(db_url, "victim", tmp_path, "--lanes", "default", "--backend", "sleep:600", *LEASE)
    try:
        wait_for(
            "the worker running its task, shown working",
            lambda: _running(db, "victim") and worker_info(db, "victim").get("liveness") == "working",
        )
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    wait_for("a silence longer than the lease", lambda: silent_past_lease(db, "victim"))
    assert worker_info(db, "victim")["liveness"] == "not responding"
    shown = status_json(db_url, tmp_path)["workers"]["victim"]
    assert shown["liveness"] == "not responding" and shown["lease_s"] == 2.0


def test_frozen_worker_is_not_responding_until_woken_and_stopped_after_a_clean_exit(
    db_url: str, db: Database, tmp_path: Path
) -> None:
    """SIGSTOP: `not responding` once the lease has passed; SIGCONT: answering again; SIGTERM:
    a clean exit shows `stopped`, and stays so long after its lease."""
    proc = work(db_url, "sleeper", tmp_path, "--lanes", "default", "--backend", "noop", *LEASE)
    try:
        wait_for("the idle worker beating", lambda: worker_info(db, "sleeper").get("liveness") == "idle")
        proc.send_signal(signal.SIGSTOP)
        wait_for("a silence longer than the lease", lambda: silent_past_lease(db, "sleeper"))
        assert worker_info(db, "sleeper")["liveness"] == "not responding"
        proc.send_signal(signal.SIGCONT)
        wait_for("the woken worker answering", lambda: worker_info(db, "sleeper")["liveness"] == "idle")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0 and "Traceback" not in err, err
    wait_for("a silence longer than the lease", lambda: silent_past_lease(db, "sleeper"))
    assert worker_info(db, "sleeper")["liveness"] == "stopped"
    assert status_json(db_url, tmp_path)["workers"]["sleeper"]["liveness"] == "stopped"


def test_stage_shown_is_the_one_the_worker_reported(db_url: str, db: Database, tmp_path: Path) -> None:
    """While the backend runs, status shows the stage it reported (`generating_image`), not
    `claimed`, long before the next lease renewal (here five minutes away) would carry it."""
    _one_task(db)
    proc = work(
        db_url,
        "painter",
        tmp_path,
        "--lanes",
        "default",
        "--backend",
        "sleep:600",
        "--lease",
        "600",
        "--heartbeat",
        "300",
    )
    try:
        wait_for("the worker running its task", lambda: _running(db, "painter"))

        def stage() -> str | None:
            current = worker_info(db, "painter").get("current") or [{}]
            return current[0].get("stage")

        wait_for("the reported stage", lambda: stage() == "generating_image")
        (shown,) = status_json(db_url, tmp_path)["workers"]["painter"]["current"]
        assert (shown["task_id"], shown["stage"]) == ("slow", "generating_image")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
