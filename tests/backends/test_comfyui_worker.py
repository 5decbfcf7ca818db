"""A worker makes a shot on ComfyUI alone, with the shipped workflows: sheet, frames, clip.

Invariant protected (issue 16 item 4): with `PIPELINE_KIT_COMFYUI_WORKFLOWS`, a worker routed to
comfyui for every kind makes the whole shot: the sheet on the built-in graph, the first frame
with the user's workflow from that sheet (fetched through the store and uploaded), the clip with
the Wan workflow from both frames; each run paid once and put down to comfyui in the spend.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from servers.comfyui_fake import FakeComfyUI

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import TaskSpec
from pipeline_kit.worker.runtime import WorkerConfig, run_worker

from .conftest import FRAME

EXAMPLES = Path(__file__).resolve().parents[2] / "workflows"
SHEET = {"name": "Lin", "prompt": "Lin Daiyu, full figure", "width": 512, "height": 512}
CLIP = {**FRAME, "video_prompt": "she turns", "duration_s": 1.0, "fps": 8}


def test_a_shot_made_on_comfyui_with_the_shipped_workflows(
    db: Database, tmp_path: Path, comfy_server: FakeComfyUI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every task completes; the frame's LoadImage got the uploaded sheet, the clip's got both
    frames; the clip is the Wan workflow's MP4; spend shows four paid comfyui runs."""
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_URL", comfy_server.url)
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_WORKFLOWS", str(EXAMPLES))
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_IMAGE_PRICE", "0.01")
    monkeypatch.setenv("PIPELINE_KIT_COMFYUI_VIDEO_PRICE", "0.1")
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id="sheet", kind="character_sheet", lane="image", params=SHEET),
                TaskSpec(task_id="f1", kind="first_frame", lane="image", params=FRAME, depends_on=("sheet",)),
                TaskSpec(task_id="f2", kind="last_frame", lane="image", params=FRAME, depends_on=("sheet",)),
                TaskSpec(task_id="clip", kind="video", lane="video", params=CLIP, depends_on=("f1", "f2")),
            ],
        )
    cfg = WorkerConfig(
        worker_id="gpu-pc",
        lanes=("image", "video"),
        until_empty=True,
        backend="comfyui",
        lease_s=30,
        heartbeat_s=0.5,
        poll_s=0.1,
        progress=False,
        outputs=tmp_path / "out",
        spool=tmp_path / "spool",
    )
    summary = run_worker(db, cfg)
    assert summary.counts["completed"] == 4, summary.line()
    with db.engine.connect() as conn:
        done = dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.result)).all())
    by_class = [{n["class_type"]: n["inputs"] for n in bill["workflow"].values()} for bill in comfy_server.billing]
    assert len(by_class) == 4
    frame_runs = [w for w in by_class if "ReferenceLatent" in w]
    assert len(frame_runs) == 1 and frame_runs[0]["LoadImage"]["image"] == "pipeline_kit/f1_reference_1.png"
    [wan] = [w for w in by_class if "WanFirstLastFrameToVideo" in w]
    assert wan["WanFirstLastFrameToVideo"]["length"] == 9
    assert done["clip"]["frames"] == 9 and done["clip"]["file"].endswith(".mp4")
    assert sorted(comfy_server.uploads) == [
        "pipeline_kit/clip_first_frame.png",
        "pipeline_kit/clip_last_frame.png",
        "pipeline_kit/f1_reference_1.png",
    ]
    assert engine.overview(db).spend == {"comfyui": {"attempts": 4, "cost": 0.13}}
