"""Canceling a clip in pipeline_kit cancels its Ark task while that is still queued.

Who sends the DELETE: the worker holding the lease, which has the key (keys live on worker PCs
only). The operator's `cancel` revokes the lease; the worker's heartbeat is fenced; the Ark
backend, polling the task, asks its context whether the task was canceled (fenced *and* its
status canceled, so a lease merely lost to another worker never deletes a task the next holder
will resume) and, if the remote task is still queued, cancels it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from servers.ark_fake import FakeArk

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.engine import TaskSpec
from pipeline_kit.worker.runtime import WorkerConfig, run_worker
from tests.conftest import first_value

from .conftest import FRAME

KEY = "ark-test-key"
CLIP = {
    "video_prompt": "she turns",
    "prompt": "she turns",
    "duration_s": 3,
    "fps": 8,
    "width": 640,
    "height": 360,
    "seed": 1,
}


def test_a_clip_canceled_while_queued_cancels_its_ark_task(
    db: Database, tmp_path: Path, ark_server: FakeArk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker makes both frames, creates the clip's Ark task (held queued), the operator
    cancels the clip: the worker sends DELETE for that task, the task stays canceled, nothing is
    created twice, and the worker runs out of work and stops."""
    monkeypatch.setenv("ARK_API_KEY", KEY)
    monkeypatch.setenv("PIPELINE_KIT_ARK_URL", f"{ark_server.url}/api/v3")
    monkeypatch.setenv("PIPELINE_KIT_ARK_POLL", "0.05")
    ark_server.queue.set()
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="f1", kind="first_frame", lane="image", params=FRAME),
                TaskSpec(task_id="f2", kind="last_frame", lane="image", params=FRAME),
                TaskSpec(task_id="clip", kind="video", lane="video", params=CLIP, depends_on=("f1", "f2")),
            ],
        )
    cfg = WorkerConfig(
        worker_id="pc",
        lanes=("image", "video"),
        until_empty=True,
        backend="first_frame=sketch,last_frame=sketch,video=ark",
        lease_s=5,
        heartbeat_s=0.2,
        poll_s=0.1,
        progress=False,
        outputs=tmp_path / "out",
        spool=tmp_path / "spool",
    )
    worker = threading.Thread(target=run_worker, args=(db, cfg), daemon=True)
    worker.start()
    remote = first_value(
        db,
        sa.select(attempts.c.remote_job_id).where(attempts.c.task_id == "clip", attempts.c.remote_job_id.is_not(None)),
        "the Ark task",
    )
    engine.cancel_task(db, "clip", by="test")
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert ark_server.cancelled == [remote] and ark_server.tasks[remote].status == "cancelled"
    assert [b["id"] for b in ark_server.billing if b["kind"] == "video"] == [remote]
    with db.engine.connect() as conn:
        assert conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == "clip")).scalar() == "canceled"
