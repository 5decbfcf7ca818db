"""Clip lengths for assembly are read from the clips' own headers, all in one ffmpeg run."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline_kit.backends.assembly import _clip_probes
from pipeline_kit.errors import GenerationError
from pipeline_kit.film import ffmpeg

from .conftest import Clip


def test_one_run_reads_every_header_and_stops_at_an_unreadable_clip(clips: tuple[Clip, ...], tmp_path: Path) -> None:
    """probe_all gives each clip's real length (as probing it alone does); from a file it cannot
    read on, it gives None rather than a wrong answer."""
    paths = [c.path for c in clips]
    found = ffmpeg.probe_all(paths, timeout_s=30)
    assert [p.duration_s for p in found if p] == pytest.approx([c.seconds for c in clips], abs=0.01)
    assert found == [ffmpeg.probe(p, timeout_s=30) for p in paths]
    bad = tmp_path / "noise.mp4"
    bad.write_bytes(b"\x00not a video\xff" * 100)
    mixed = ffmpeg.probe_all([paths[0], bad, paths[1]], timeout_s=30)
    assert mixed[0] == found[0] and mixed[1:] == [None, None]


def test_clip_lengths_name_the_clip_that_cannot_be_read(clips: tuple[Clip, ...], tmp_path: Path) -> None:
    """Clips after a bad one are read alone; the bad one fails as corrupt_input naming its shot."""
    bad = tmp_path / "noise.mp4"
    bad.write_bytes(b"\x00not a video\xff" * 100)
    shots = [{"shot_id": c.shot_id} for c in clips[:3]]
    assert [p.duration_s for p in _clip_probes([c.path for c in clips[:3]], shots, 30)] == pytest.approx(
        [c.seconds for c in clips[:3]], abs=0.01
    )
    with pytest.raises(GenerationError, match=clips[1].shot_id) as info:
        _clip_probes([clips[0].path, bad, clips[2].path], shots, 30)
    assert info.value.error_kind == "corrupt_input"
