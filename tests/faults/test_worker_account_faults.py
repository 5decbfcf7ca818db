"""Worker processes running as a `grant-worker` account through a kill, a freeze and reclaims.

Invariant protected: least privilege costs no robustness. A fleet of worker accounts loses no
worker and no task when a PC dies (SIGKILL) or sleeps past its lease (SIGSTOP/SIGCONT): the
survivor reclaims the leases with its own watchdog, the woken worker is told its leases were
fenced and carries on, every task (a limited lane's and a dependent's included) completes, and
no worker prints a traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, events, tasks
from pipeline_kit.engine import TaskSpec

from .helpers import wait_leases_expired

ROOT = Path(__file__).resolve().parents[2]


def work(url: str, worker_id: str, tmp: Path, *args: str) -> subprocess.Popen[str]:
    """`pipeline-kit work` as a separate process; the URL (with the account's password) goes
    through the environment, as on a worker PC, not the command line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIPELINE_KIT_")}
    env.update(PIPELINE_KIT_DB=url, PYTHONPATH=str(ROOT))
    cmd = [
        sys.executable,
        "-m",
        "pipeline_kit",
        "work",
        "--worker-id",
        worker_id,
        "--quiet",
        "--lanes",
        "default,llm",
        "--outputs",
        str(tmp / "outputs"),
        *args,
    ]
    return subprocess.Popen(cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def holding(db: Database, worker_id: str) -> int:
    with db.engine.connect() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(tasks)
                .where(tasks.c.worker_id == worker_id, tasks.c.status == "processing")
            ).scalar_one()
        )


def wait_holding(db: Database, worker_id: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while holding(db, worker_id) == 0:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, f"{worker_id} never claimed"
        time.sleep(0.02)


@pytest.mark.parametrize("db_url", ["postgresql", "mariadb"], indirect=True)
def test_worker_accounts_survive_a_kill_a_freeze_and_reclaims(db: Database, worker_url: str, tmp_path: Path) -> None:
    """A worker account SIGKILLed holding a task, another frozen past its lease, a third that
    reclaims the frozen one's lease with its own watchdog (the killed one's by whichever worker
    runs its watchdog first): every task completes, both lost leases are closed as
    lost, the woken worker's late renewal is recorded as stale, and neither survivor prints a
    traceback."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [TaskSpec(task_id=f"n{i:02d}", kind="noop", lane="default") for i in range(12)]
            + [TaskSpec(task_id=f"brain-{i}", kind="llm", lane="llm") for i in range(3)]
            + [TaskSpec(task_id="after-n00", kind="noop", lane="default", depends_on=("n00",))],
        )
    total = 16
    short = ("--lease", "1", "--heartbeat", "0.3", "--watchdog", "0.5")
    victim = work(worker_url, "victim", tmp_path, "--backend", "sleep:0.3", "--until-empty", *short)
    wait_holding(db, "victim", victim)
    victim.send_signal(signal.SIGKILL)
    victim.communicate()

    sleeper = work(worker_url, "sleeper", tmp_path, "--backend", "sleep:1.5", "--until-empty", *short)
    wait_holding(db, "sleeper", sleeper)
    time.sleep(0.3)
    sleeper.send_signal(signal.SIGSTOP)
    try:
        wait_leases_expired(db)  # both lost leases are now past their expiry
        taker = work(
            worker_url,
            "taker",
            tmp_path,
            "--backend",
            "sleep:0.05",
            "--until-empty",
            "--lease",
            "30",
            "--heartbeat",
            "0.5",
            "--watchdog",
            "0.5",
        )
        _, taker_err = taker.communicate(timeout=180)
    finally:
        sleeper.send_signal(signal.SIGCONT)
    _, sleeper_err = sleeper.communicate(timeout=180)

    assert taker.returncode == 0 and "Traceback" not in taker_err, taker_err[-3000:]
    assert sleeper.returncode == 0 and "Traceback" not in sleeper_err, sleeper_err[-3000:]
    with db.engine.connect() as conn:
        status = dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())
        lost = {w for (w,) in conn.execute(sa.select(attempts.c.worker_id).where(attempts.c.outcome == "lost"))}
        reclaims = [
            (e.worker_id, e.detail["by"]) for e in conn.execute(sa.select(events).where(events.c.kind == "reclaim"))
        ]
        stale = conn.execute(
            sa.select(sa.func.count())
            .select_from(events)
            .where(events.c.kind == "stale", events.c.worker_id == "sleeper")
        ).scalar_one()
        open_attempts = conn.execute(
            sa.select(sa.func.count()).select_from(attempts).where(attempts.c.outcome.is_(None))
        ).scalar_one()
    assert list(status.values()).count("completed") == total, status
    assert lost == {"victim", "sleeper"}
    assert len(reclaims) == 2 and ("sleeper", "taker") in reclaims  # by the workers' own watchdogs
    assert {by for _, by in reclaims} <= {"sleeper", "taker"}
    assert stale >= 1 and open_attempts == 0
