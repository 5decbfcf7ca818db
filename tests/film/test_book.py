"""Book assembly: the chapter films joined after a book title card, their subtitles merged."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline_kit.backends import Job, LocalContext, get_backend
from pipeline_kit.errors import GenerationError
from pipeline_kit.film import side_path, srt
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
