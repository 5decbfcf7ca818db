"""Chapter assembly: clips in order, each for its real length (not its shot's estimate), after a
title card."""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import imageio.v2 as imageio
import numpy as np
import pytest
from PIL import Image

from pipeline_kit.backends import Job, LocalContext, Output, assembly, get_backend
from pipeline_kit.film import cards, srt
from pipeline_kit.film.names import CONTACT, SRT
from pipeline_kit.film.timeline import TITLE_CARD_S

from .conftest import Clip, MakeJob, shot_entry

FPS, SIZE = 12, (640, 360)
ASSEMBLY = get_backend("assembly")


def chapter_params(entries: list[dict[str, object]], **extra: object) -> dict[str, object]:
    return {
        "bookcode": "bk",
        "chapter": 1,
        "title": "The Arrival",
        "shots": entries,
        "width": SIZE[0],
        "height": SIZE[1],
        "fps": FPS,
        "title_card_s": TITLE_CARD_S,
        "publish_as": "films/bk/chapter-001.mp4",
        **extra,
    }


def inputs_of(clips: tuple[Clip, ...]) -> dict[str, Path]:
    return {f"{c.shot_id}/video": c.path for c in clips}


def read_video(path: Path, tmp: Path) -> tuple[int, tuple[int, ...], float, list[np.ndarray]]:
    """(frame count, size, fps, frames) of an MP4 as imageio's ffmpeg reader decodes it."""
    copy = tmp / f"{path.name}.read.mp4"  # the reader goes by the file name's suffix
    shutil.copy(path, copy)
    reader: Any = imageio.get_reader(copy, format="ffmpeg")
    with reader:
        meta = reader.get_meta_data()
        frames = [np.asarray(f) for f in reader]
    return len(frames), tuple(meta["size"]), float(meta["fps"]), frames


@dataclass(frozen=True)
class Assembled:
    """A chapter assembled once for several tests."""

    job: Job
    output: Output
    entries: list[dict[str, Any]]
    wanted: list[float]  # each shot's duration in the params (its estimate)
    real: list[float]  # each clip's real length, which the film uses
    folder: Path


@pytest.fixture(scope="module")
def assembled(clips: tuple[Clip, ...], tmp_path_factory: pytest.TempPathFactory) -> Assembled:
    """One chapter of five shots: shot 1's clip shorter than its estimate, shot 3's longer (as a
    provider may return); encoded two parts per ffmpeg run so the joins between runs are
    covered too."""
    wanted = [3.0, 1.5, 1.0, 1.0, 2.0]  # clip lengths are 2.0, 1.5, 2.5, 1.0, 2.0
    entries = [shot_entry(c, s) for c, s in zip(clips, wanted)]
    entries[3]["subtitles"] = []  # a silent shot: no cue
    folder = tmp_path_factory.mktemp("chapter")
    job = Job(
        task_id="bk/film/chapter-001",
        kind="assemble_chapter",
        lane="assembly",
        params=chapter_params(entries),
        inputs=inputs_of(clips),
        out_path=folder / "chapter-001.mp4.tok.part",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(assembly, "BATCH", 2)  # three ffmpeg runs, joined by the concat demuxer
        output = ASSEMBLY.run(job, LocalContext())
    return Assembled(job, output, entries, wanted, [c.seconds for c in clips], folder)


def test_duration_is_title_card_plus_every_clip(assembled: Assembled) -> None:
    """The chapter lasts its title card plus each clip's real length (never cut to, or held
    for, the shot's estimate), at the chapter's size and rate, even when a clip has another
    size and frame rate; the result says how many shots were retimed."""
    job, output, wanted = assembled.job, assembled.output, assembled.real
    count, size, fps, _ = read_video(job.out_path, assembled.folder)
    expected = round(TITLE_CARD_S * FPS) + sum(round(s * FPS) for s in wanted)
    assert abs(count - expected) <= 2 * len(wanted)
    assert count == output.result["frames"] == expected  # exact: every part is whole frames
    assert (size, fps) == (SIZE, FPS)
    assert output.path == job.out_path and output.result["duration_s"] == expected / FPS
    assert output.result["retimed_shots"] == 2


def test_shots_appear_in_order_after_the_title_card(assembled: Assembled, clips: tuple[Clip, ...]) -> None:
    """Each shot's segment starts with its clip's first picture, in shot order; the card is dark."""
    wanted, folder = assembled.real, assembled.folder
    _, _, _, frames = read_video(assembled.job.out_path, folder)
    assert frames[0].mean() < 40  # the title card's dark background
    start = round(TITLE_CARD_S * FPS)
    for clip, seconds in zip(clips, wanted):
        if clip.size == SIZE:  # a same-size clip's first frame is its segment's first frame
            _, _, _, own = read_video(clip.path, folder)
            diff = np.abs(frames[start].astype(int) - own[0].astype(int)).mean()
            assert diff < 6, f"{clip.shot_id} not at frame {start}"
        start += round(seconds * FPS)


def test_srt_cues_are_in_order_and_inside_the_video(assembled: Assembled) -> None:
    """The side-car .srt parses; one cue per shot with text, at its shot's start in the film
    (after the real lengths of the clips before it), in order, and none runs past the end."""
    output, entries, wanted = assembled.output, assembled.entries, assembled.real
    cues = srt.parse(output.extras[SRT].read_text(encoding="utf-8"))
    spoken = [e for e in entries if e["subtitles"]]
    assert [c.text for c in cues] == [e["subtitles"][0] for e in spoken]
    total_ms = round(output.result["frames"] * 1000 / FPS)
    starts = [TITLE_CARD_S]
    for seconds in wanted[:-1]:
        starts.append(starts[-1] + seconds)
    expected = [round(t * 1000) for t, e in zip(starts, entries) if e["subtitles"]]
    assert [c.start_ms for c in cues] == expected
    assert all(a.end_ms <= b.start_ms for a, b in itertools.pairwise(cues))
    assert all(0 <= c.start_ms < c.end_ms <= total_ms for c in cues)


def test_contact_sheet_has_one_labelled_cell_per_shot(assembled: Assembled) -> None:
    """The contact sheet is a grid with one filled cell per shot, in order; spare cells stay
    empty."""
    output, entries = assembled.output, assembled.entries
    layout = cards.grid_for(len(entries), SIZE)
    assert (layout.columns, layout.rows) == (3, 2)
    with Image.open(output.extras[CONTACT]) as sheet:
        assert sheet.format == "PNG" and sheet.size == layout.size
        pixels = np.asarray(sheet.convert("RGB")).astype(int)
    cell_w, cell_h = layout.cell
    for index in range(layout.columns * layout.rows):
        left, top = (index % layout.columns) * cell_w, (index // layout.columns) * cell_h
        picture = pixels[top : top + cell_h - cards.LABEL_HEIGHT, left : left + cell_w]
        filled = np.abs(picture - np.array(cards.BACKGROUND)).mean() > 20
        assert filled == (index < len(entries)), f"cell {index}"


def test_contact_sheet_reads_at_full_size(assembled: Assembled) -> None:
    """A contact sheet is legible at 100%: thumbnails half a frame wide (320 px for 640), at
    most four to a row, and each shot id written at least 11 px tall."""
    with Image.open(assembled.output.extras[CONTACT]) as sheet:
        pixels = np.asarray(sheet.convert("L")).astype(int)
    layout = cards.grid_for(len(assembled.entries), SIZE)
    cell_w, cell_h = layout.cell
    assert cell_w >= SIZE[0] // 2 and layout.columns <= 4
    strip = pixels[cell_h - cards.LABEL_HEIGHT : cell_h, :cell_w]
    inked = np.nonzero((strip > 128).any(axis=1))[0]
    assert inked.size and inked[-1] - inked[0] + 1 >= 11


def test_side_files_sit_next_to_the_film(assembled: Assembled) -> None:
    """Side files are temporary files beside the one being written, for the runtime to publish."""
    job, output = assembled.job, assembled.output
    assert set(output.extras) == {SRT, CONTACT}
    for path in output.extras.values():
        assert path.parent == job.out_path.parent and path.is_file()
    assert not [p for p in job.out_path.parent.iterdir() if p.name.startswith(".assembly-")]


def test_burned_subtitles_change_only_the_picture(clips: tuple[Clip, ...], make_job: MakeJob, tmp_path: Path) -> None:
    """Burning subtitles in draws them on the frames and leaves the timing alone (the clip's
    2 s, though its shot was planned at 1 s)."""
    entries = [shot_entry(clips[0], 1.0, "Burned words")]
    plain = make_job("assemble_chapter", chapter_params(entries, title_card_s=0), inputs_of(clips))
    burned = make_job(
        "assemble_chapter", chapter_params(entries, title_card_s=0, burn_subtitles=True), inputs_of(clips)
    )
    for job in (plain, burned):
        ASSEMBLY.run(job, LocalContext())
    n_plain, _, _, a = read_video(plain.out_path, tmp_path)
    n_burned, _, _, b = read_video(burned.out_path, tmp_path)
    assert n_plain == n_burned == 2 * FPS
    band = slice(int(SIZE[1] * 0.75), SIZE[1])
    assert np.abs(a[0][band].astype(int) - b[0][band].astype(int)).mean() > 2


def test_two_speakers_in_one_shot_never_share_a_cue(clips: tuple[Clip, ...], make_job: MakeJob, tmp_path: Path) -> None:
    """A shot with two speakers gets one cue each, splitting its time; burned in, the first
    speaker's words leave the picture when the second's come (one subtitle on screen at a time).
    Params planned before (one 'subtitle' line) still give one cue."""
    entries = [shot_entry(clips[0], 2.0), shot_entry(clips[3], 1.0)]
    entries[0]["subtitles"] = [
        "The lamp is out. Didn't you see it?",
        "I saw it. Old Hetty will say it is the ghost again.",
    ]
    entries[1] = {k: v for k, v in entries[1].items() if k != "subtitles"} | {"subtitle": "Old."}
    plain = make_job("assemble_chapter", chapter_params(entries, title_card_s=0), inputs_of(clips))
    burned = make_job(
        "assemble_chapter", chapter_params(entries, title_card_s=0, burn_subtitles=True), inputs_of(clips)
    )
    outputs = [ASSEMBLY.run(job, LocalContext()) for job in (plain, burned)]
    cues = srt.parse(outputs[0].extras[SRT].read_text(encoding="utf-8"))
    assert [c.text for c in cues] == [*entries[0]["subtitles"], "Old."]
    assert cues[0].start_ms == 0 and cues[0].end_ms == cues[1].start_ms < cues[1].end_ms == 2000
    _, _, _, a = read_video(plain.out_path, tmp_path)
    _, _, _, b = read_video(burned.out_path, tmp_path)
    band = slice(int(SIZE[1] * 0.75), SIZE[1])
    first_words = b[0][band].astype(int) - a[0][band].astype(int)
    second_words = b[2 * FPS - 1][band].astype(int) - a[2 * FPS - 1][band].astype(int)
    assert np.abs(first_words).mean() > 2 and np.abs(second_words).mean() > 2
    assert np.abs(b[0][band].astype(int) - b[2 * FPS - 1][band].astype(int)).mean() > 2


@pytest.mark.parametrize("size", [(640, 360), (1280, 720), (720, 1280), (1080, 1920), (1024, 1024)])
@pytest.mark.parametrize(
    "text",
    [
        "On the first evening of winter, the lamp at the top of Saltmarsh Lighthouse went dark",
        "林黛玉走进荣国府，贾宝玉在厅上等候。林黛玉走进荣国府，贾宝玉在厅上等候。",
    ],
)
def test_a_burned_cue_fits_its_lines_on_any_frame_shape_never_cut(size: tuple[int, int], text: str) -> None:
    """A cue as long as a cue may be (SUBTITLE_CHARS), burnt into a landscape, portrait or square
    frame: every word drawn, no ellipsis, in at most MAX_SUBTITLE_LINES lines (a portrait frame's
    larger type is made smaller to fit), at the frame's usual size where it fits already."""
    face, lines = cards.subtitle_lines(size, text)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "") and "…" not in "".join(lines)
    assert len(lines) <= cards.MAX_SUBTITLE_LINES
    if size[0] > size[1]:
        assert face.size == size[1] // 20
