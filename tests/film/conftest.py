"""Fixtures for film tests: small sketch clips of known length, size and rate, made once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipeline_kit.backends import Job, LocalContext, get_backend


@dataclass(frozen=True)
class Clip:
    """A clip made by the sketch backend, as a chapter assembly's input."""

    shot_id: str
    path: Path
    seconds: float
    size: tuple[int, int]
    fps: int


# shot id, clip seconds, size, fps: one clip differs in size and frame rate.
CLIPS = (
    ("bk-c001-s0001", 2.0, (640, 360), 12),
    ("bk-c001-s0002", 1.5, (320, 240), 24),
    ("bk-c001-s0003", 2.5, (640, 360), 12),
    ("bk-c001-s0004", 1.0, (640, 360), 12),
    ("bk-c001-s0005", 2.0, (640, 360), 12),
)


def make_clip(folder: Path, shot_id: str, seconds: float, size: tuple[int, int], fps: int) -> Clip:
    """Draw a shot's two frames and encode its clip, as the sketch backend does for a worker."""
    sketch = get_backend("sketch")
    frames = {}
    for kind in ("first_frame", "last_frame"):
        job = Job(
            task_id=f"{shot_id}/{kind}",
            kind=kind,
            lane="image",
            params={"shot_id": shot_id, "caption": shot_id, "width": size[0], "height": size[1]},
            inputs={},
            out_path=folder / f"{shot_id}-{kind}.png",
        )
        sketch.run(job, LocalContext())
        frames[kind] = job.out_path
    job = Job(
        task_id=f"{shot_id}/video",
        kind="video",
        lane="video",
        params={"duration_s": seconds, "fps": fps, "width": size[0], "height": size[1]},
        inputs=frames,
        out_path=folder / f"{shot_id}.mp4",
    )
    sketch.run(job, LocalContext())
    return Clip(shot_id, job.out_path, seconds, size, fps)


@pytest.fixture(scope="session")
def clips(tmp_path_factory: pytest.TempPathFactory) -> tuple[Clip, ...]:
    """The CLIPS, made once per test session."""
    folder = tmp_path_factory.mktemp("clips")
    return tuple(make_clip(folder, *spec) for spec in CLIPS)


def shot_entry(clip: Clip, seconds: float | None = None, subtitle: str | None = None) -> dict[str, Any]:
    """A shots[] entry of assemble_chapter params for `clip`."""
    return {
        "shot_id": clip.shot_id,
        "video_task": f"{clip.shot_id}/video",
        "duration_s": clip.seconds if seconds is None else seconds,
        "subtitles": [f"Line of {clip.shot_id}." if subtitle is None else subtitle],
    }


MakeJob = Callable[..., Job]


@pytest.fixture
def make_job(tmp_path: Path) -> MakeJob:
    """Build an assembly Job writing a fresh `.part` file under tmp_path."""
    counter = iter(range(1000))

    def build(kind: str, params: dict[str, Any], inputs: dict[str, Path]) -> Job:
        out = tmp_path / f"film{next(counter)}.mp4.tok.part"
        return Job(task_id=f"bk/film/{kind}", kind=kind, lane="assembly", params=params, inputs=inputs, out_path=out)

    return build
