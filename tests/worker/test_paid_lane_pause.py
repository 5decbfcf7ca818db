"""A provider saying the account is out of money pauses the paid lane instead of failing tasks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, events, tasks
from pipeline_kit.worker import WorkerConfig, run_worker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.ark_fake import FakeArk

KEY = "ark-quota-key"


def test_quota_exhausted_pauses_the_lane_alerts_and_spends_no_retry(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant (issue 16): an unpaid Ark account does not burn every task's retries. The task
    that met it goes back to pending without using an attempt or booking its quote, its lane is
    paused for the fleet, an alert names the provider's code, and no other task is tried."""
    specs = [
        engine.TaskSpec(
            task_id=f"hlm/char/{n}",
            kind="character_sheet",
            lane="image",
            params={"name": f"c{n}", "prompt": "a sheet", "width": 640, "height": 360},
            bookcode="hlm",
        )
        for n in range(3)
    ]
    with db.engine.begin() as conn:
        engine.enqueue(conn, specs)
    with FakeArk(api_key=KEY) as ark:
        ark.script("quota:AccountOverdueError")
        for key, value in {
            "PIPELINE_KIT_ARK_URL": f"{ark.url}/api/v3",
            "ARK_API_KEY": KEY,
            "PIPELINE_KIT_ARK_IMAGE_PRICE": "0.03",
        }.items():
            monkeypatch.setenv(key, value)
        summary = run_worker(
            db,
            WorkerConfig(
                worker_id="W",
                lanes=("image",),
                backend="ark",
                max_minutes=0.05,
                lease_s=5,
                heartbeat_s=1,
                poll_s=0.05,
                outputs=tmp_path / "out",
                spool=tmp_path / "spool",
                progress=False,
            ),
        )
        assert ark.billing == [] and len(ark.request_times) == 1, "one refused call, no more"
    assert summary.counts == {"paused": 1}
    assert engine.get_lane(db, "image").paused
    with db.engine.connect() as conn:
        states = conn.execute(
            sa.select(tasks.c.status, tasks.c.attempts, tasks.c.retry_base).order_by(tasks.c.id)
        ).all()
        attempt = conn.execute(sa.select(attempts)).one()
        alerts = conn.execute(sa.select(events.c.detail).where(events.c.kind == "alert")).scalars()
        alerts = [a["message"] for a in alerts]
    assert [s.status for s in states] == ["pending"] * 3
    assert states[0].attempts - states[0].retry_base == 0, "no retry used up"
    assert (attempt.outcome, attempt.cost or 0) == ("canceled", 0)
    assert any("AccountOverdueError" in a and "lane image paused" in a for a in alerts)
