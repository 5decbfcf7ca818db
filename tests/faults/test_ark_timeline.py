"""Crash timeline on Ark: a worker killed after it created a video task, before that task ended.

Invariant protected (design invariants 4 and 7, issue 16): a takeover resumes the remote task
whose id the killed attempt recorded, so the provider's log shows one paid create per clip,
the task completes once, and the cost booked equals what the provider billed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from servers.ark_fake import FakeArk

from pipeline_kit import engine
from pipeline_kit.chaos.invariants import check_all
from pipeline_kit.db import create
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.worker import WorkerConfig, run_worker
from tests.conftest import first_value

from .helpers import BOOK, frame_params, shot_id, wait_leases_expired

KEY, IMAGE_PRICE, VIDEO_PRICE = "ark-timeline-key", 0.03, 0.1
SHOT = shot_id(1)


@pytest.fixture
def ark_fake() -> Iterator[FakeArk]:
    with FakeArk(api_key=KEY) as server:
        yield server


def ark_env(server: FakeArk) -> dict[str, str]:
    return {
        "PIPELINE_KIT_ARK_URL": f"{server.url}/api/v3",
        "ARK_API_KEY": KEY,
        "PIPELINE_KIT_ARK_IMAGE_PRICE": str(IMAGE_PRICE),
        "PIPELINE_KIT_ARK_VIDEO_PRICE": str(VIDEO_PRICE),
        "PIPELINE_KIT_ARK_POLL": "0.05",
    }


def enqueue_shot(db: Database) -> str:
    """A shot's two frames and its video (after both frames); returns the video's task id."""
    frames = [
        engine.TaskSpec(
            task_id=f"{SHOT}/{kind}",
            kind=kind,
            lane="image",
            params={**frame_params(1), "width": 640, "height": 360},
            bookcode=BOOK,
            shot_id=SHOT,
        )
        for kind in ("first_frame", "last_frame")
    ]
    video = engine.TaskSpec(
        task_id=f"{SHOT}/video",
        kind="video",
        lane="video",
        bookcode=BOOK,
        shot_id=SHOT,
        depends_on=tuple(f.task_id for f in frames),
        params={
            "bookcode": BOOK,
            "shot_id": SHOT,
            "video_prompt": "she turns",
            "duration_s": 3.2,
            "width": 640,
            "height": 360,
            "seed": 5,
        },
    )
    with db.engine.begin() as conn:
        engine.enqueue(conn, [*frames, video])
    return video.task_id


def wait_remote_job(db: Database, task_id: str, timeout: float = 60) -> str:
    """Block until an attempt of `task_id` has recorded its remote job id."""
    query = sa.select(attempts.c.remote_job_id).where(
        attempts.c.task_id == task_id, attempts.c.remote_job_id.is_not(None)
    )
    return first_value(db, query, "the worker record a remote job id", timeout=timeout)


def test_killed_after_create_the_takeover_resumes_the_same_task(
    db_url: str, tmp_path: Path, ark_fake: FakeArk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A is SIGKILLed while its video task runs on Ark; B takes the task over, re-polls the
    same remote task and finishes it: one paid video create, cost booked = cost billed."""
    db = create(db_url)
    try:
        video_id = enqueue_shot(db)
        ark_fake.hold.set()  # video tasks stay running until A is gone
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIPELINE_KIT_")}, **ark_env(ark_fake)}
        worker_a = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pipeline_kit",
                "--db",
                db_url,
                "work",
                "--worker-id",
                "A",
                "--lanes",
                "image,video",
                "--backend",
                "ark",
                "--until-empty",
                "--quiet",
                "--lease",
                "2",
                "--heartbeat",
                "0.5",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            remote = wait_remote_job(db, video_id)
        finally:
            worker_a.kill()
            worker_a.wait(timeout=30)
        assert [b["id"] for b in ark_fake.billing if b["kind"] == "video"] == [remote]
        with db.engine.connect() as conn:
            status = conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == video_id)).scalar_one()
        assert status == "processing", "A died holding the video task"

        ark_fake.hold.clear()
        wait_leases_expired(db)
        for key, value in ark_env(ark_fake).items():
            monkeypatch.setenv(key, value)
        summary = run_worker(
            db,
            WorkerConfig(
                worker_id="B",
                lanes=("image", "video"),
                backend="ark",
                until_empty=True,
                lease_s=2,
                heartbeat_s=0.5,
                outputs=tmp_path / "data/outputs",
                spool=tmp_path / "data/spool",
                progress=False,
            ),
        )
        assert summary.counts["completed"] == 1

        videos = [b for b in ark_fake.billing if b["kind"] == "video"]
        assert [b["id"] for b in videos] == [remote], "one paid create for the clip"
        with db.engine.connect() as conn:
            rows = conn.execute(
                sa.select(attempts.c.worker_id, attempts.c.outcome)
                .where(attempts.c.task_id == video_id)
                .order_by(attempts.c.attempt_no)
            ).all()
            result = conn.execute(sa.select(tasks.c.result).where(tasks.c.task_id == video_id)).scalar_one()
        assert [(r.worker_id, r.outcome) for r in rows] == [("A", "lost"), ("B", "completed")]
        assert (result["task_id"], result["resumed"]) == (remote, True)
        billed = IMAGE_PRICE * 2 + VIDEO_PRICE * videos[0]["seconds"]
        assert check_all(db, root=tmp_path, billed_cost=billed) == []
        assert ark_fake.leaks == []
    finally:
        db.dispose()
