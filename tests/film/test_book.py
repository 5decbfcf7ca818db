"""Book assembly: the chapter films joined after a book title card, their subtitles merged."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path
from typing import Any

import imageio_ffmpeg
import pytest

from pipeline_kit.backends import Job, LocalContext, get_backend
from pipeline_kit.errors import GenerationError
from pipeline_kit.film import ffmpeg, side_path, srt
from pipeline_kit.film.names import SRT
from pipeline_kit.film.timeline import TITLE_CARD_S

from .conftest import Clip, shot_entry
from .test_chapter import FPS, SIZE, chapter_params, inputs_of, read_video

ASSEMBLY = get_backend("assembly")


def publish(job: Job, extras: dict[str, Path], final: Path) -> Path:
    """Do what the runtime does: move the film and its side files to their published places."""
    final.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(job.out_path, final)
    for suffix, path in extras.items():
        shutil.move(path, side_path(final, suffix))
    return final


@pytest.fixture(scope="module")
def chapters(clips: tuple[Clip, ...], tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Two published chapter films; the second made at another size and frame rate."""
    folder = tmp_path_factory.mktemp("book")
    made = []
    for number, (picked, extra) in enumerate(
        [(clips[:2], {}), (clips[2:4], {"width": 320, "height": 240, "fps": 24})], start=1
    ):
        params = {**chapter_params([shot_entry(c) for c in picked], **extra), "chapter": number}
        job = Job(
            task_id=f"bk/film/chapter-{number:03d}",
            kind="assemble_chapter",
            lane="assembly",
            params=params,
            inputs=inputs_of(clips),
            out_path=folder / f"c{number}.mp4.tok.part",
        )
        output = ASSEMBLY.run(job, LocalContext())
        final = publish(job, dict(output.extras), folder / "films" / f"chapter-{number:03d}.mp4")
        made.append(
            {
                "chapter": number,
                "task": job.task_id,
                "path": final,
                "seconds": TITLE_CARD_S + sum(c.seconds for c in picked),
                "cues": srt.parse(side_path(final, SRT).read_text(encoding="utf-8")),
            }
        )
    return made


def book_job(chapters: list[dict[str, Any]], folder: Path, **inputs: Path) -> Job:
    params = {
        "bookcode": "bk",
        "title": "The Book",
        "width": SIZE[0],
        "height": SIZE[1],
        "fps": FPS,
        "title_card_s": TITLE_CARD_S,
        "publish_as": "films/bk/film.mp4",
        "chapters": [
            {"chapter": c["chapter"], "title": "", "task": c["task"], "duration_s": c["seconds"]} for c in chapters
        ],
    }
    return Job(
        task_id="bk/film/book",
        kind="assemble_book",
        lane="assembly",
        params=params,
        inputs={c["task"]: c["path"] for c in chapters} | inputs,
        out_path=folder / "film.mp4.tok.part",
    )


def test_book_joins_chapters_and_shifts_their_subtitles(chapters: list[dict[str, Any]], tmp_path: Path) -> None:
    """The book lasts its card plus every chapter film (normalised to one size and rate); its
    .srt holds every chapter's cues, each moved by the chapter's start, in order, inside."""
    job = book_job(chapters, tmp_path)
    output = ASSEMBLY.run(job, LocalContext())
    count, size, fps, _ = read_video(job.out_path, tmp_path)
    expected = round((TITLE_CARD_S + sum(c["seconds"] for c in chapters)) * FPS)
    assert abs(count - expected) <= 2 and count == output.result["frames"]
    assert (size, fps) == (SIZE, FPS)
    cues = srt.parse(output.extras[SRT].read_text(encoding="utf-8"))
    offset, expected_cues = TITLE_CARD_S, []
    for chapter in chapters:
        expected_cues += srt.shifted(chapter["cues"], round(offset * 1000))
        offset += chapter["seconds"]
    assert [(c.start_ms, c.text) for c in cues] == [(c.start_ms, c.text) for c in expected_cues]
    assert all(a.end_ms <= b.start_ms for a, b in itertools.pairwise(cues))
    assert all(0 <= c.start_ms < c.end_ms <= round(count * 1000 / FPS) for c in cues)


def test_book_without_a_chapter_film_is_missing_input(chapters: list[dict[str, Any]], tmp_path: Path) -> None:
    """A chapter film not yet made (or its subtitles gone) fails the book, retryably."""
    job = book_job(chapters, tmp_path)
    no_film = Job(**{**job.__dict__, "inputs": {chapters[0]["task"]: chapters[0]["path"]}})
    lost_srt = book_job(chapters, tmp_path)
    srt_path = side_path(chapters[1]["path"], SRT)
    kept = srt_path.read_bytes()
    for bad, needle in ((no_film, chapters[1]["task"]), (lost_srt, "subtitles of chapter 2")):
        if bad is lost_srt:
            srt_path.unlink()
        try:
            with pytest.raises(GenerationError) as info:
                ASSEMBLY.run(bad, LocalContext())
        finally:
            srt_path.write_bytes(kept)
        assert (info.value.error_kind, info.value.retryable) == ("missing_input", True)
        assert needle in str(info.value)


def test_a_chapter_whose_sound_outlasts_its_picture_is_as_long_as_its_picture(tmp_path: Path) -> None:
    """A chapter film's header lasts as long as its longest stream, and its AAC track may end a
    frame or more after its picture. The book counts each chapter by its picture: its length and
    every later chapter's cues and sound start where that chapter's picture starts, not later by
    the overhang (which, summed over a book's chapters, pushed sound and subtitles after the
    picture)."""
    made = []
    for number in (1, 2):
        path = tmp_path / "films" / f"chapter-{number:03d}.mp4"
        path.parent.mkdir(exist_ok=True)
        subprocess.run(  # 24 frames of picture (2 s), 2.5 s of sound
            [
                imageio_ffmpeg.get_ffmpeg_exe(),
                "-v",
                "error",
                "-f",
                "lavfi",
                "-i",
                f"testsrc=size=640x360:rate={FPS}:d=2",
            ]
            + ["-f", "lavfi", "-i", "sine=frequency=440:duration=2.5", "-c:v", "libx264"]
            + ["-pix_fmt", "yuv420p", "-c:a", "aac", "-ar", "48000", "-ac", "2", str(path)],
            check=True,
        )
        side_path(path, SRT).write_text(srt.render([srt.Cue(500, 1500, f"chapter {number}")]), encoding="utf-8")
        made.append({"chapter": number, "task": f"bk/film/chapter-{number:03d}", "path": path, "seconds": 2.0})
    assert ffmpeg.probe(made[0]["path"], timeout_s=30).duration_s >= 2.4, "the header says the sound's length"
    job = book_job(made, tmp_path)
    output = ASSEMBLY.run(job, LocalContext())
    lead = round(TITLE_CARD_S * FPS)
    assert output.result["chapter_frames"] == [24, 24]
    assert output.result["frames"] == lead + 48 == ffmpeg.video_frames(job.out_path, timeout_s=30, what="the book")
    cues = srt.parse(output.extras[SRT].read_text(encoding="utf-8"))
    assert [c.start_ms for c in cues] == [round((lead / FPS + 0.5) * 1000), round(((lead + 24) / FPS + 0.5) * 1000)]
