"""A book made offline speaks: `work --backend sketch` voices every shot (the voice lane is served
by default), and the chapter and book films carry one AAC track, audible where shots speak and
quiet elsewhere, whose cues are shown while their lines are said, and whose length is the sum
of its shots (each as long as its clip or its speech, whichever is longer). `export` writes the
films' OpenTimelineIO timelines beside them, which an editor opens as the film's parts."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import opentimelineio as otio
import pytest
import sqlalchemy as sa

from pipeline_kit.cli import main

from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.film import audio, book_task_id, chapter_task_id, srt
from pipeline_kit.film.timeline import TITLE_CARD_S, frames_for
from pipeline_kit.store import open_store
from pipeline_kit.text import ingest_file, split_book
from pipeline_kit.worker.runtime import WorkerConfig, run_worker
from tests.text.helpers import SAMPLE_TITLE, sample_chapter_files

from .test_sound_and_picture import integrated_lufs

RATE = 8000  # the film's sound is read back at this rate, mono


def fetch(db: Database, tmp_path: Path, task_id: str) -> tuple[Path, dict]:
    """The published output of a completed task, fetched through the store, and its result."""
    with db.engine.connect() as conn:
        row = conn.execute(sa.select(tasks.c.output_path, tasks.c.result).where(tasks.c.task_id == task_id)).one()
    store = open_store(db, cache=tmp_path / "cache")
    return store.fetch(row.output_path, row.result or {}), dict(row.result or {})


def streams(path: Path) -> tuple[list[str], float]:
    """The stream kinds `ffmpeg -i` lists for `path`, and its duration."""
    log = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(path)], capture_output=True, text=True
    ).stderr
    hours, minutes, seconds = re.search(r"Duration: (\d+):(\d+):([\d.]+)", log).groups()  # type: ignore[union-attr]
    return re.findall(r"Stream #\S+.*?: (\w+): (\w+)", log), int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def sound(path: Path) -> np.ndarray:
    """The film's sound decoded by ffmpeg to mono samples at RATE."""
    done = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-vn", "-ac", "1", "-ar", str(RATE)]
        + ["-f", "s16le", "-"],
        capture_output=True,
        check=True,
    )
    return np.frombuffer(done.stdout, dtype="<i2").astype(float)


def loudness(samples: np.ndarray, start_s: float, end_s: float) -> float:
    part = samples[int(start_s * RATE) : int(end_s * RATE)]
    return float(np.sqrt(np.mean(part**2))) if len(part) else 0.0


def test_a_book_made_offline_has_a_film_that_speaks(
    db: Database, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A short chapter (narrated shots, then three lines of dialogue) through a sketch worker
    with its default lanes: every shot's voice is made; the chapter film has a video and an AAC
    audio stream and lasts the title card plus each shot's max(clip, speech + tail) in frames;
    its sound is loud inside each line's time and near silent under the title card; every cue
    lies within a line's time; the book film has sound too, and both are at -23 LUFS. Exported,
    each film has a timeline with one clip per shot (at the clip's real length, pointing at the exported clip), the
    shots' speech on an audio track pointing at the exported voices, a marker per cue, and the
    film's length; the book's timeline has both title cards, every shot once and every track as
    long as the book film."""
    one = sample_chapter_files(tmp_path)[0]
    whole = one.read_text(encoding="utf-8")
    one.write_text(whole[: whole.index("row me across?”") + 15] + "\n", encoding="utf-8")  # narration and dialogue
    bookcode = ingest_file(db, one, SAMPLE_TITLE, chapter=1).bookcode
    split_book(db, bookcode)
    cfg = WorkerConfig(
        worker_id="pc-1",
        backend="sketch",
        until_empty=True,
        progress=False,
        outputs=tmp_path / "outputs",
        spool=tmp_path / "spool",
        poll_s=0.1,
    )
    run_worker(db, cfg)
    with db.engine.connect() as conn:
        film_params = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == chapter_task_id(bookcode, 1))
        ).scalar_one()
    film, result = fetch(db, tmp_path, chapter_task_id(bookcode, 1))
    fps = int(result["fps"])  # the clips' own rate (the default film profile)
    assert (result["profile"], result["width"], result["height"], fps) == ("provider", 640, 360, 12)
    start, spoken, clips = TITLE_CARD_S, [], []  # each line's (start, end) in the film, from the voices' timing
    for shot in film_params["shots"]:
        clip, made = fetch(db, tmp_path, shot["video_task"])
        clips.append(frames_for(float(made["duration_s"]), fps))
        voice, _ = fetch(db, tmp_path, shot["voice_task"])
        said, speech_s = audio.read_lines(voice.with_name(voice.stem + audio.LINES))
        assert speech_s == pytest.approx(audio.wav_seconds(voice), abs=0.01) and speech_s > 0.5
        spoken += [(start + s.start_s, start + s.end_s) for s in said]
        start += frames_for(max(float(made["duration_s"]), speech_s + audio.TAIL_S), fps) / fps

    kinds, seconds = streams(film)
    assert kinds == [("Video", "h264"), ("Audio", "aac")]
    assert seconds == pytest.approx(start, abs=0.1) and result["duration_s"] == pytest.approx(start, abs=0.01)
    samples = sound(film)
    assert len(samples) / RATE == pytest.approx(start, abs=0.15)
    assert loudness(samples, 0.1, TITLE_CARD_S - 0.1) < 30
    for first, end in spoken:
        assert loudness(samples, first, end) > 300, (first, end)
    cues = srt.parse(side_text(film))
    assert len(cues) >= len(spoken)
    for cue in cues:
        assert any(a - 0.1 <= cue.start_ms / 1000 and cue.end_ms / 1000 <= b + 0.1 for a, b in spoken), cue

    book, _ = fetch(db, tmp_path, book_task_id(bookcode))
    kinds, length = streams(book)
    assert kinds == [("Video", "h264"), ("Audio", "aac")]
    assert integrated_lufs(film) == pytest.approx(-23, abs=1.5)
    assert integrated_lufs(book) == pytest.approx(-23, abs=1.5), "joined at the chapters' level"
    assert length == pytest.approx(TITLE_CARD_S + seconds, abs=0.15)

    out = tmp_path / "export"
    here = ["--store", str(tmp_path)] if db.dialect == "sqlite" else []  # the worker's folder, as a store
    assert main(["--db", db_url, "export", bookcode, str(out), "--cache", str(tmp_path / "cache"), *here]) == 0
    assert "2 timelines written" in capsys.readouterr().out
    timeline = otio.adapters.read_from_file(str(out / "films" / bookcode / "chapter-001.otio"))
    picture, speech = timeline.tracks
    assert not [item for item in picture if isinstance(item, otio.schema.Gap)], "the picture never goes black"
    holds = [c for c in picture.find_clips() if "holds_last_frame_of" in c.metadata.get("pipeline_kit", {})]
    assert holds, "the narrated shots outlast their clips"
    shots = [c for c in picture.find_clips() if c.name != "title card" and c not in holds]
    assert [c.name for c in shots] == [s["shot_id"] for s in film_params["shots"]]
    assert [c.source_range.duration.to_frames(fps) for c in shots] == [
        min(a, b) for a, b in zip(clips, result_frames(result))
    ]
    for item in [*picture.find_clips(), *speech.find_clips()]:
        target = Path(item.media_reference.target_url.removeprefix("file://"))
        assert target.is_file() and out in target.parents, target
    assert [Path(c.media_reference.target_url).suffix for c in speech.find_clips()] == [".wav"] * len(shots)
    assert timeline.duration().to_frames(fps) == result["frames"] == picture.duration().to_frames(fps)
    assert speech.duration().to_frames(fps) == result["frames"]
    assert timeline.duration().rate == 24, "the animatic's 12 fps on a 24 fps timeline: FCP XML and EDL need timecode"
    assert timeline.duration().to_timecode().count(":") == 3  # raises at a rate SMPTE timecode lacks
    assert [m.name for m in timeline.tracks.markers] == [c.text for c in cues]
    for hold in holds:  # a range of the exported film showing the held clip's last frame
        held = next(c for c in shots if c.name == hold.metadata["pipeline_kit"]["holds_last_frame_of"])
        assert Path(hold.media_reference.target_url.removeprefix("file://")).name == film.name
        at = hold.source_range.start_time.to_frames(fps)
        assert picture.range_of_child(hold).start_time.to_frames(fps) == at, "the film's own frames at that time"
        last = held.source_range.duration.to_frames(fps) - 1
        shown = frame_at(Path(hold.media_reference.target_url.removeprefix("file://")), at, fps)
        clip_last = frame_at(Path(held.media_reference.target_url.removeprefix("file://")), last, fps)
        assert np.abs(shown - clip_last).mean() < 8, hold.name
    whole = otio.adapters.read_from_file(str(out / "films" / bookcode / "film.otio"))
    assert whole.duration().to_seconds() == pytest.approx(length, abs=0.15)
    assert len([c for c in whole.find_clips() if c.name in {s.name for s in shots}]) == len(shots)
    assert not [item for item in whole.tracks[0] if isinstance(item, otio.schema.Gap)]
    named = [c.name for c in whole.tracks[0].find_clips() if c.name not in {h.name for h in holds}]
    assert named == ["title card", "title card", *[c.name for c in shots]]
    for item in whole.find_clips():
        target = Path(item.media_reference.target_url.removeprefix("file://"))
        assert target.is_file() and out in target.parents, target
    assert {t.duration().to_frames() for t in whole.tracks} == {whole.duration().to_frames()}


def frame_at(path: Path, index: int, fps: int) -> np.ndarray:
    """Frame `index` of the video at `path` (at `fps`), as grey levels."""
    done = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-vf", f"fps={fps},select=eq(n\\,{index})"]
        + ["-frames:v", "1", "-s", "160x90", "-pix_fmt", "gray", "-f", "rawvideo", "-"],
        capture_output=True,
        check=True,
    )
    assert len(done.stdout) == 160 * 90, (path, index)
    return np.frombuffer(done.stdout, dtype=np.uint8).astype(float)


def result_frames(result: dict) -> list[int]:
    """Each shot's frames in the film, as the assembly recorded them."""
    return [int(part["frames"]) for part in result["parts"]]


def side_text(film: Path) -> str:
    return film.with_name(film.stem + ".srt").read_text(encoding="utf-8")
