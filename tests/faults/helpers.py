"""Shared steps of the fault tests: frame tasks, worker subprocesses, lease expiry, row counts."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from pipeline_kit import engine, security
from pipeline_kit.db import create
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import metadata, tasks
from pipeline_kit.db.sqltime import db_now

BOOK = "hlm"


def frame_params(n: int) -> dict[str, Any]:
    """The params contract of a first_frame task (small images: the test is about the engine)."""
    return {
        "bookcode": BOOK,
        "shot_id": shot_id(n),
        "chapter": 1,
        "seq": n,
        "scene": 1,
        "prompt": f"Lin Daiyu at the window, shot {n}",
        "caption": "林黛玉倚窗。",
        "characters": ["林黛玉"],
        "location": "潇湘馆",
        "time_of_day": "黄昏",
        "width": 64,
        "height": 48,
        "seed": n,
    }


def shot_id(n: int) -> str:
    return f"{BOOK}-001-{n:04d}"


def enqueue_frames(db: Database, count: int) -> list[str]:
    """Enqueue `count` first_frame tasks in lane image; returns their ids in claim order."""
    specs = [
        engine.TaskSpec(
            task_id=f"{shot_id(n)}/first_frame",
            kind="first_frame",
            lane="image",
            params=frame_params(n),
            bookcode=BOOK,
            shot_id=shot_id(n),
        )
        for n in range(1, count + 1)
    ]
    with db.engine.begin() as conn:
        engine.enqueue(conn, specs)
    return [s.task_id for s in specs]


def work_cli(url: str, worker_id: str, *extra: str) -> list[str]:
    """The `work` command line the fault tests run (lease 2 s, heartbeat 0.5 s)."""
    return [
        sys.executable,
        "-m",
        "pipeline_kit",
        "--db",
        url,
        "work",
        "--worker-id",
        worker_id,
        "--lanes",
        "image",
        "--backend",
        "openai",
        "--until-empty",
        "--quiet",
        "--lease",
        "2",
        "--heartbeat",
        "0.5",
        *extra,
    ]


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def wait_leases_expired(db: Database, timeout: float = 30) -> None:
    """Block until no processing task holds a lease that is still valid by the database clock."""
    deadline = time.monotonic() + timeout
    query = (
        sa.select(sa.func.count())
        .select_from(tasks)
        .where(tasks.c.status == "processing", tasks.c.lease_expires_at >= db_now())
    )
    while time.monotonic() < deadline:
        with db.engine.connect() as conn:
            if conn.execute(query).scalar_one() == 0:
                return
        time.sleep(0.2)
    raise AssertionError("leases did not expire")


def row_counts(db: Database) -> dict[str, int]:
    """Rows in every table: a command that refused its input must leave these unchanged."""
    with db.engine.connect() as conn:
        return {
            t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one() for t in metadata.sorted_tables
        }


def run_as_account(url: str, statements: Iterable[str]) -> list[str]:
    """Run each statement in its own transaction as the account behind `url`; the ones it was
    allowed to run (each refusal must be a missing privilege, not another error)."""
    account = create(url)
    allowed = []
    try:
        for sql in statements:
            try:
                with account.engine.begin() as conn:
                    conn.exec_driver_sql(sql)
            except sa.exc.DBAPIError as exc:
                assert security.permission_denied(exc), f"{sql}: refused for another reason: {exc.orig}"
            else:
                allowed.append(sql)
    finally:
        account.dispose()
    return allowed
