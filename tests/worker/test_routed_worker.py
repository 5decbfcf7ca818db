"""One worker, every kind: a routing sends each kind to its own backend."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, tasks
from pipeline_kit.worker import WorkerConfig, run_worker

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.ark_fake import FakeArk

KEY = "ark-routing-key"
SHOT = "hlm-001-0001"
SIZE = {"width": 640, "height": 360}


def shot_graph() -> list[engine.TaskSpec]:
    """A character sheet, a shot's two frames after it, and the shot's video after both."""
    sheet = engine.TaskSpec(
        task_id="hlm/char/lin",
        kind="character_sheet",
        lane="image",
        bookcode="hlm",
        params={"name": "林黛玉", "prompt": "sheet", **SIZE},
    )
    frames = [
        engine.TaskSpec(
            task_id=f"{SHOT}/{k}",
            kind=k,
            lane="image",
            bookcode="hlm",
            shot_id=SHOT,
            depends_on=(sheet.task_id,),
            params={"shot_id": SHOT, "prompt": f"{k} of Lin", "caption": "林黛玉", "characters": ["林黛玉"], **SIZE},
        )
        for k in ("first_frame", "last_frame")
    ]
    video = engine.TaskSpec(
        task_id=f"{SHOT}/video",
        kind="video",
        lane="video",
        bookcode="hlm",
        shot_id=SHOT,
        depends_on=tuple(f.task_id for f in frames),
        params={"shot_id": SHOT, "video_prompt": "she turns", "duration_s": 2.6, **SIZE},
    )
    return [sheet, *frames, video]


def test_routed_worker_makes_each_kind_with_its_backend(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant (issue 16 item 1): with `character_sheet=ark,first_frame=sketch,
    last_frame=sketch,video=ark` one worker finishes the whole shot; Ark is paid for the sheet
    and the clip only, and the clip is made from the two sketched frames."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, shot_graph())
    with FakeArk(api_key=KEY) as ark:
        for key, value in {
            "PIPELINE_KIT_ARK_URL": f"{ark.url}/api/v3",
            "ARK_API_KEY": KEY,
            "PIPELINE_KIT_ARK_POLL": "0.02",
        }.items():
            monkeypatch.setenv(key, value)
        summary = run_worker(
            db,
            WorkerConfig(
                worker_id="R",
                lanes=("image", "video"),
                until_empty=True,
                progress=False,
                backend="character_sheet=ark,first_frame=sketch,last_frame=sketch,video=ark",
                outputs=tmp_path / "out",
                spool=tmp_path / "spool",
                poll_s=0.05,
            ),
        )
    assert summary.counts == {"completed": 4}
    assert [b["kind"] for b in ark.billing] == ["image", "video"]
    assert ark.billing[1]["frames"] == {"first_frame": (640, 360), "last_frame": (640, 360)}
    with db.engine.connect() as conn:
        models = dict(conn.execute(sa.select(tasks.c.kind, tasks.c.result)).all())
    assert "task_id" in models["video"] and "references" in models["character_sheet"]


def test_a_backend_that_cannot_make_a_waiting_kind_is_refused_at_start(
    db_url: str, db: Database, tmp_path: Path
) -> None:
    """Invariant (issue 16 item 1): `--backend comfyui` (no video workflow) on lanes that hold a
    video task is refused before it claims anything, in one line naming the kind and the lane and
    exit 2, instead of failing every video as it comes: no attempt is made, no status changes."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, shot_graph())
        before = dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())
    env = {
        **os.environ,
        "PIPELINE_KIT_COMFYUI_URL": "http://127.0.0.1:9",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline_kit",
            "--db",
            db_url,
            "work",
            "--backend",
            "comfyui",
            "--lanes",
            "image,video",
            "--worker-id",
            "c1",
            "--until-empty",
            "--quiet",
            "--outputs",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "'video'" in refused.stderr and "--lanes" in refused.stderr
    with db.engine.connect() as conn:
        after = dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())
        tried = conn.execute(sa.select(sa.func.count()).select_from(attempts)).scalar_one()
    assert tried == 0 and after == before
