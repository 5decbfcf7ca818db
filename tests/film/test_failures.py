"""A missing or unreadable input fails the assembly as retryable, naming what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline_kit.backends import LocalContext, get_backend
from pipeline_kit.errors import GenerationError

from .conftest import Clip, MakeJob, shot_entry
from .test_chapter import chapter_params, inputs_of

ASSEMBLY = get_backend("assembly")


def failure(make_job: MakeJob, clips: tuple[Clip, ...], inputs: dict[str, Path]) -> GenerationError:
    job = make_job("assemble_chapter", chapter_params([shot_entry(c, 1.0) for c in clips[:3]]), inputs)
    with pytest.raises(GenerationError) as info:
        ASSEMBLY.run(job, LocalContext())
    return info.value


def test_clip_not_among_inputs_is_missing_input(make_job: MakeJob, clips: tuple[Clip, ...]) -> None:
    """A shot whose video is not done yet: retryable missing_input naming the shot and task."""
    inputs = inputs_of(clips)
    del inputs[f"{clips[1].shot_id}/video"]
    error = failure(make_job, clips, inputs)
    assert (error.error_kind, error.retryable) == ("missing_input", True)
    assert clips[1].shot_id in str(error) and f"{clips[1].shot_id}/video" in str(error)


def test_clip_file_gone_is_missing_input(make_job: MakeJob, clips: tuple[Clip, ...], tmp_path: Path) -> None:
    """A recorded clip path with no file behind it: retryable missing_input naming the path."""
    inputs = {**inputs_of(clips), f"{clips[2].shot_id}/video": tmp_path / "gone.mp4"}
    error = failure(make_job, clips, inputs)
    assert (error.error_kind, error.retryable) == ("missing_input", True)
    assert "gone.mp4" in str(error) and clips[2].shot_id in str(error)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupt_clip_is_corrupt_input(make_job: MakeJob, clips: tuple[Clip, ...], tmp_path: Path, damage: str) -> None:
    """A clip ffmpeg cannot read (noise, cut short, empty): retryable corrupt_input naming the
    shot, so the assembly runs again after the clip is regenerated."""
    bad = tmp_path / f"{damage}.mp4"
    good = clips[0].path.read_bytes()
    bad.write_bytes(
        {"garbage": b"\x00not a video\xff" * 500, "truncated": good[: len(good) // 2], "empty": b""}[damage]
    )
    inputs = {**inputs_of(clips), f"{clips[0].shot_id}/video": bad}
    error = failure(make_job, clips, inputs)
    assert (error.error_kind, error.retryable) == ("corrupt_input", True)
    assert clips[0].shot_id in str(error) and "\n" not in str(error)


def test_bad_params_fail_permanently(make_job: MakeJob, clips: tuple[Clip, ...]) -> None:
    """Params no retry can fix (a shot without duration) fail at once, not retryable."""
    entry = {k: v for k, v in shot_entry(clips[0]).items() if k != "duration_s"}
    job = make_job("assemble_chapter", chapter_params([entry]), inputs_of(clips))
    with pytest.raises(GenerationError) as info:
        ASSEMBLY.run(job, LocalContext())
    assert (info.value.error_kind, info.value.retryable) == ("missing_field", False)
    assert "duration_s" in str(info.value)
