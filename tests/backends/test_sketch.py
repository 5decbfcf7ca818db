"""The offline sketch backend: real PNGs and MP4s, deterministic, fast, Chinese-safe."""

from __future__ import annotations

from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest
from PIL import Image

from pipeline_kit import fonts
from pipeline_kit.backends import LocalContext, get_backend

from .conftest import FRAME
from .helpers import MakeJob, assert_permanent

SKETCH = get_backend("sketch")


def frame_pair(make_job: MakeJob, **params: object) -> tuple[Path, Path]:
    """A first and a last frame of the same shot, as the video task's inputs."""
    paths = []
    for kind in ("first_frame", "last_frame"):
        job = make_job(kind, {**FRAME, **params}, task_id=f"hlm-003-0012-{kind}")
        SKETCH.run(job, LocalContext())
        paths.append(job.out_path)
    return paths[0], paths[1]


def read_mp4(path: Path) -> list[np.ndarray]:
    """Every frame of an MP4, decoded by imageio's ffmpeg reader."""
    return [np.asarray(frame) for frame in imageio.mimread(path, format="ffmpeg", memtest=False)]


def test_frame_is_a_real_png_of_the_requested_size(make_job: MakeJob) -> None:
    """A storyboard frame opens in Pillow as a PNG of exactly width x height."""
    job = make_job("first_frame", {**FRAME, "width": 512, "height": 288})
    output = SKETCH.run(job, LocalContext())
    with Image.open(job.out_path) as image:
        assert (image.format, image.size) == ("PNG", (512, 288))
    assert output.cost == 0 and output.result == {"width": 512, "height": 288}


def test_same_params_give_byte_identical_png(make_job: MakeJob) -> None:
    """Re-running a task rewrites the very same bytes (outputs are deterministic)."""
    first = make_job("first_frame", FRAME, task_id="a")
    again = make_job("first_frame", FRAME, task_id="a")
    SKETCH.run(first, LocalContext())
    SKETCH.run(again, LocalContext())
    assert first.out_path.read_bytes() == again.out_path.read_bytes()


def test_first_and_last_frames_differ(make_job: MakeJob) -> None:
    """The last frame moves the figures, so the clip between them shows motion."""
    first, last = frame_pair(make_job)
    assert first.read_bytes() != last.read_bytes()


@pytest.mark.parametrize(
    "fields",
    [
        {"characters": ["林黛玉", "贾宝玉", "王熙凤", "薛宝钗", "史湘云", "妙玉", "晴雯"]},
        {"characters": [], "location": None, "time_of_day": None, "caption": ""},
        {"location": "mountain road", "time_of_day": "night", "caption": "word " * 400},
        {"caption": "□□ ◆ missing-glyph noise \u0000 ☃ 😀 " + "长" * 500},
    ],
)
def test_odd_shots_still_draw(make_job: MakeJob, fields: dict[str, object]) -> None:
    """Chinese names, many or no characters, long or noisy captions all render without error."""
    job = make_job("last_frame", {**FRAME, **fields})
    SKETCH.run(job, LocalContext())
    with Image.open(job.out_path) as image:
        assert image.size == (640, 360)


def test_character_sheet(make_job: MakeJob) -> None:
    """A character sheet is a PNG of the requested size, named by its character."""
    job = make_job(
        "character_sheet",
        {
            "bookcode": "hlm",
            "name": "林黛玉",
            "prompt": "清瘦的少女，着淡青色衣裳",
            "width": 768,
            "height": 512,
            "seed": 3,
        },
    )
    SKETCH.run(job, LocalContext())
    with Image.open(job.out_path) as image:
        assert image.size == (768, 512)


def test_chinese_font_is_used_when_the_machine_has_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """$PIPELINE_KIT_FONT wins when it is a font; a broken one falls back, never fails."""
    broken = tmp_path / "not-a-font.ttf"
    broken.write_text("nope")
    monkeypatch.setenv("PIPELINE_KIT_FONT", str(broken))
    fonts.cjk_font_path.cache_clear()
    try:
        assert fonts.cjk_font_path() != str(broken)
    finally:
        fonts.cjk_font_path.cache_clear()
    face = fonts.font(20)
    assert face.getbbox("林黛玉")[2] > 0


def test_missing_fields_are_permanent_and_named(make_job: MakeJob) -> None:
    """A frame without its shot id or a sheet without a name fails at once, naming the field."""
    params = {k: v for k, v in FRAME.items() if k != "shot_id"}
    assert_permanent(lambda: SKETCH.run(make_job("first_frame", params), LocalContext()), "missing_field", "shot_id")
    assert_permanent(lambda: SKETCH.run(make_job("character_sheet", {}), LocalContext()), "missing_field", "name")
    assert_permanent(lambda: SKETCH.run(make_job("painting", FRAME), LocalContext()), "invalid_kind")


def test_clip_is_a_real_mp4_from_first_to_last(make_job: MakeJob) -> None:
    """A video is H.264 with duration*fps frames of the frame size, starting on the first
    frame and ending nearer the last one."""
    first, last = frame_pair(make_job)
    job = make_job(
        "video",
        {
            "bookcode": "hlm",
            "shot_id": "hlm-003-0012",
            "video_prompt": "",
            "caption": "",
            "duration_s": 2.5,
            "fps": 12,
            "width": 640,
            "height": 360,
        },
        inputs={"first_frame": first, "last_frame": last},
        suffix=".mp4",
    )
    output = SKETCH.run(job, LocalContext())
    frames = read_mp4(job.out_path)
    assert len(frames) == 30 == output.result["frames"]
    assert frames[0].shape == (360, 640, 3)
    first_px = np.asarray(Image.open(first).convert("RGB"), dtype=float)
    last_px = np.asarray(Image.open(last).convert("RGB"), dtype=float)
    assert np.abs(frames[0] - first_px).mean() < 6
    assert np.abs(frames[-1] - last_px).mean() < np.abs(frames[-1] - first_px).mean()


def test_clip_makes_odd_sizes_even_and_is_deterministic(make_job: MakeJob) -> None:
    """yuv420p needs even sides: 641x361 becomes 640x360; the same clip has the same bytes."""
    first, last = frame_pair(make_job)
    params = {"shot_id": "s", "duration_s": 1.0, "fps": 8, "width": 641, "height": 361}
    paths = []
    for _ in range(2):
        job = make_job("video", params, inputs={"first_frame": first, "last_frame": last}, suffix=".mp4")
        SKETCH.run(job, LocalContext())
        paths.append(job.out_path)
    frames = read_mp4(paths[0])
    assert len(frames) == 8 and frames[0].shape == (360, 640, 3)
    assert paths[0].read_bytes() == paths[1].read_bytes()


def test_clip_without_inputs_is_permanent(make_job: MakeJob, tmp_path: Path) -> None:
    """A video task whose frames are missing or unreadable cannot succeed by retrying."""
    params = {"shot_id": "s", "duration_s": 1.0}
    assert_permanent(lambda: SKETCH.run(make_job("video", params), LocalContext()), "missing_input", "first_frame")
    junk = tmp_path / "junk.png"
    junk.write_text("not a png")
    job = make_job("video", params, inputs={"first_frame": junk, "last_frame": junk})
    assert_permanent(lambda: SKETCH.run(job, LocalContext()), "bad_input")
    assert_permanent(
        lambda: SKETCH.run(make_job("video", {"shot_id": "s"}), LocalContext()), "missing_field", "duration_s"
    )


FIRST_BADGE, LAST_BADGE = (30, 110, 60), (150, 30, 30)


def make_clip(make_job: MakeJob, first: Path, last: Path, seconds: float = 3.0) -> list[np.ndarray]:
    """The decoded frames of a 640x360 clip between `first` and `last`."""
    job = make_job(
        "video",
        {"shot_id": "hlm-003-0012", "duration_s": seconds, "fps": 12, "width": 640, "height": 360},
        inputs={"first_frame": first, "last_frame": last},
        suffix=".mp4",
    )
    SKETCH.run(job, LocalContext())
    return read_mp4(job.out_path)


def test_clip_never_blends_two_frames_and_keeps_its_labels_still(make_job: MakeJob) -> None:
    """Every clip frame shows one badge (FIRST, then LAST; never a mix of both, as a cross-fade
    gives) and the header where the frames have it (no zoom crops it); the figures move."""
    first, last = frame_pair(make_job, characters=["林黛玉", "贾宝玉", "Old Hetty Longname"])
    frames = make_clip(make_job, first, last)
    first_px = np.asarray(Image.open(first).convert("RGB"), dtype=float)
    badges = []
    for frame in frames:
        badge = np.median(frame[8:20, 600:628].reshape(-1, 3), axis=0)
        near = [np.abs(badge - colour).max() < 30 for colour in (FIRST_BADGE, LAST_BADGE)]
        assert any(near), f"badge colour {badge} is neither FIRST's nor LAST's"
        badges.append("FIRST" if near[0] else "LAST")
        assert np.abs(frame[0:40, 0:200] - first_px[0:40, 0:200]).mean() < 6  # header still
    assert badges == sorted(badges, key=("FIRST", "LAST").index)  # one switch, at most
    middle = frames[len(frames) // 2].astype(float)
    last_px = np.asarray(Image.open(last).convert("RGB"), dtype=float)
    assert np.abs(middle - first_px).mean() > 1 and np.abs(middle - last_px).mean() > 1


def test_clip_of_frames_it_did_not_draw_is_a_hard_cut(make_job: MakeJob, tmp_path: Path) -> None:
    """Frames from another backend (no sketch record) give a hard cut: every clip frame is one
    of the two pictures, none a blend of them."""
    first, last = frame_pair(make_job)
    plain = []
    for path in (first, last):
        copy = tmp_path / f"plain-{path.name}"
        Image.open(path).convert("RGB").save(copy)  # the same picture, without its PNG text
        plain.append(copy)
    frames = make_clip(make_job, *plain, seconds=2.0)
    pictures = [np.asarray(Image.open(p).convert("RGB"), dtype=float) for p in plain]
    for index, frame in enumerate(frames):
        errors = [np.abs(frame - picture).mean() for picture in pictures]
        assert min(errors) < 4, f"frame {index} is a mix of the two pictures"


def test_name_labels_stay_inside_the_frame(make_job: MakeJob) -> None:
    """A long name under a figure near the right edge is moved in, not cut off by the edge."""
    names = ["A", "B", "Old Hetty Longname the Third"]
    job = make_job("last_frame", {**FRAME, "characters": names})
    SKETCH.run(job, LocalContext())
    pixels = np.asarray(Image.open(job.out_path).convert("RGB"), dtype=int)
    label_box = np.abs(pixels - np.array((20, 20, 28))).max(axis=2) == 0
    rows = np.nonzero(label_box[:, 560:].any(axis=1))[0]
    assert rows.size, "the name's label box is drawn"
    assert not label_box[:, -3:].any() and not label_box[:, :3].any()


def test_chinese_caption_is_drawn_with_real_glyphs(make_job: MakeJob) -> None:
    """With the `cjk` extra installed (the test extra pulls it in), different Han characters
    draw differently in a frame's caption; empty boxes ("tofu") would all look alike."""
    bands = []
    for caption in ("国国国国", "林林林林"):
        job = make_job("first_frame", {**FRAME, "caption": caption})
        SKETCH.run(job, LocalContext())
        bands.append(np.asarray(Image.open(job.out_path).convert("L"))[270:, :200].astype(int))
    assert np.abs(bands[0] - bands[1]).mean() > 2
