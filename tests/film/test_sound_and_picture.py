"""A chapter film's sound and picture as ffmpeg reads them back.

Invariants (issue 26): the mix holds each shot's speech where it is said, a clip's own sound where
that clip plays, and the book's music bed under the whole film, lower while anyone speaks
(ducked) than between the lines, and the whole loudness-normalised to EBU R128 (-23 LUFS); a film
without a bed has no music. The film's picture is its profile's: `provider` keeps the size and
frame rate the clips came at (a Seedance 720p clip, 1280x720 at 24 fps, stays so), `animatic`
makes 640x360 at 12 fps whatever the clips were. The timeline an editor opens has each of those
sounds on a track of its own, every track as long as the film.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import imageio_ffmpeg
import numpy as np
import opentimelineio as otio
import pytest

from pipeline_kit.backends import Job, LocalContext, get_backend
from pipeline_kit.backends.music import MusicBed, file_sha256
from pipeline_kit.film import audio, ffmpeg
from pipeline_kit.film.names import side_path
from pipeline_kit.film.timelines import Made, chapter_timeline

from .conftest import Clip, make_clip

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.ark_fake import mp4_bytes  # noqa: E402

RATE = 16000  # the film's sound is read back at this rate, mono
SPEECH_HZ, MUSIC_HZ, CLIP_HZ = 440, 1000, 3000
CARD_S = 1.0


def tone(path: Path, hz: int, seconds: float, *, extra: list[str] | None = None) -> Path:
    """A sine tone of `seconds` at `hz` written by ffmpeg (the format from the suffix)."""
    source = f"sine=frequency={hz}:sample_rate=44100:duration={seconds}"
    run([*(extra or []), "-f", "lavfi", "-i", source, str(path)])
    return path


def run(args: list[str]) -> None:
    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-y", *args], check=True, capture_output=True)


def with_sound(clip: Clip, folder: Path) -> Path:
    """The clip with a CLIP_HZ tone of its length muxed in: a provider's clip with its own sound."""
    out = folder / f"{clip.shot_id}-sound.mp4"
    run(["-i", str(clip.path), "-f", "lavfi", "-i", f"sine=frequency={CLIP_HZ}:duration={clip.seconds}"]
        + ["-c:v", "copy", "-c:a", "aac", "-shortest", str(out)])  # fmt: skip
    return out


def speech(folder: Path, name: str, seconds: float) -> Path:
    """A voice task's output: a SPEECH_HZ tone as the shot's one line, with its timing beside it."""
    samples = (8000 * np.sin(2 * np.pi * SPEECH_HZ * np.arange(int(seconds * 24000)) / 24000)).astype("<i2")
    wav = folder / f"{name}.wav"
    line = {"text": "Who goes there?", "speaker": "Mara"}
    audio.write_speech(wav, side_path(wav, audio.LINES), [(line, samples.tobytes())], 24000)
    return wav


def decoded(film: Path) -> np.ndarray:
    done = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(film), "-vn", "-ac", "1", "-ar", str(RATE)]
        + ["-f", "s16le", "-"],
        capture_output=True,
        check=True,
    )
    return np.frombuffer(done.stdout, dtype="<i2").astype(float)


def band_db(samples: np.ndarray, start_s: float, end_s: float, hz: int) -> float:
    """The power (dB) of the window's spectrum within 40 Hz of `hz`."""
    part = samples[int(start_s * RATE) : int(end_s * RATE)]
    spectrum = np.abs(np.fft.rfft(part * np.hanning(len(part)))) ** 2
    freqs = np.fft.rfftfreq(len(part), 1 / RATE)
    return float(10 * np.log10(spectrum[np.abs(freqs - hz) <= 40].sum() / len(part) + 1e-9))


def integrated_lufs(film: Path) -> float:
    log = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-i", str(film), "-af", "ebur128", "-f", "null", "-"],
        capture_output=True,
        text=True,
    ).stderr
    return float(re.findall(r"I:\s+(-?[\d.]+) LUFS", log)[-1])


def chapter(
    folder: Path, clips: list[tuple[str, Path, float]], voices: dict[str, Path], **extra: Any
) -> tuple[Path, dict[str, Any]]:
    """Assemble a chapter of (shot id, clip, seconds) with the voices given; returns film and result."""
    shots = [
        {"shot_id": s, "video_task": f"{s}/video", "duration_s": sec, "subtitles": ["..."]}
        | ({"voice_task": f"{s}/voice"} if s in voices else {})
        for s, _, sec in clips
    ]
    inputs = {f"{s}/video": path for s, path, _ in clips} | {f"{s}/voice": wav for s, wav in voices.items()}
    if "music" in extra:
        inputs["bk/music"] = extra.pop("music")
        extra["music_task"] = "bk/music"
    job = Job(
        task_id="bk/film/chapter-001",
        kind="assemble_chapter",
        lane="assembly",
        params={"bookcode": "bk", "chapter": 1, "title": "One", "shots": shots, "title_card_s": CARD_S, **extra},
        inputs=inputs,
        out_path=folder / f"chapter-{len(list(folder.glob('chapter-*.mp4')))}.mp4",
    )
    output = get_backend("assembly").run(job, LocalContext(timeout_s=300))
    return job.out_path, dict(output.result)


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Three shots at 640x360, 12 fps: a spoken one (2 s of speech over a 1.5 s clip), a silent
    one, and one whose clip has its own sound; and a music bed made from a 1000 Hz file."""
    folder = tmp_path_factory.mktemp("sound")
    one = make_clip(folder, "bk-c001-s0001", 1.5, (640, 360), 12)
    two = make_clip(folder, "bk-c001-s0002", 2.0, (640, 360), 12)
    three = make_clip(folder, "bk-c001-s0003", 2.0, (640, 360), 12)
    clips = [
        (one.shot_id, one.path, 1.5),
        (two.shot_id, two.path, 2.0),
        (three.shot_id, with_sound(three, folder), 2.0),
    ]
    voices = {one.shot_id: speech(folder, "voice-1", 2.0)}
    source = tone(folder / "bed.mp3", MUSIC_HZ, 3.0)  # shorter than the film: it loops
    bed_job = Job(
        task_id="bk/music",
        kind="music",
        lane="music",
        params={"sha256": file_sha256(source), "name": source.name},
        inputs={},
        out_path=folder / "music.m4a",
    )
    MusicBed(source).run(bed_job, LocalContext())
    return {"folder": folder, "clips": clips, "voices": voices, "bed": bed_job.out_path}


def test_speech_clip_sound_and_a_ducked_music_bed_are_all_heard(scene: dict[str, Any]) -> None:
    """Shot 1 (after the 1 s card) speaks for 2 s: its speech tone is loud there and the music
    is at least 6 dB lower there than under the silent shot 2; shot 3's clip tone is heard in
    shot 3 only; the music plays under the title card too; the whole is at -23 LUFS (+-2)."""
    film, result = chapter(scene["folder"], scene["clips"], scene["voices"], music=scene["bed"], profile="provider")
    kinds = ffmpeg.probe(film, timeout_s=30)
    assert kinds.audio and (result["music"], result["clip_sound_shots"], result["voiced_shots"]) == (True, 1, 1)
    samples = decoded(film)
    fps = result["fps"]
    starts = np.cumsum([CARD_S] + [p["frames"] / fps for p in result["parts"]])
    (s1, e1), (s2, e2), (s3, e3) = zip(starts[:-1], starts[1:])
    assert e1 - s1 == pytest.approx(2.0 + audio.TAIL_S, abs=0.1), "the shot lasts as long as its speech"
    said, quiet, clip_part = (s1 + 0.2, s1 + 1.8), (s2 + 0.7, e2 - 0.2), (s3 + 0.3, e3 - 0.3)
    assert band_db(samples, *said, SPEECH_HZ) > band_db(samples, *quiet, SPEECH_HZ) + 30
    music_between, music_under = band_db(samples, *quiet, MUSIC_HZ), band_db(samples, *said, MUSIC_HZ)
    assert music_between > band_db(samples, *quiet, CLIP_HZ) + 20, "the music is heard between the lines"
    assert music_under < music_between - 6, (music_under, music_between)
    assert band_db(samples, 0.2, CARD_S - 0.2, MUSIC_HZ) > band_db(samples, 0.2, CARD_S - 0.2, SPEECH_HZ) + 20
    assert band_db(samples, *clip_part, CLIP_HZ) > band_db(samples, *quiet, CLIP_HZ) + 30, "the clip's own sound"
    assert integrated_lufs(film) == pytest.approx(-23, abs=2)


def test_without_a_bed_there_is_no_music(scene: dict[str, Any]) -> None:
    """The same chapter without music: speech and the clip's sound, and nothing at the bed's pitch."""
    film, result = chapter(scene["folder"], scene["clips"], scene["voices"], profile="provider")
    samples, fps = decoded(film), result["fps"]
    second = CARD_S + result["parts"][0]["frames"] / fps
    assert result["music"] is False
    assert (
        band_db(samples, second + 0.5, second + 1.5, MUSIC_HZ)
        < band_db(samples, CARD_S + 0.2, CARD_S + 1.5, SPEECH_HZ) - 30
    )


def test_a_clip_whose_sound_outlasts_its_picture_lasts_as_long_as_its_picture(scene: dict[str, Any]) -> None:
    """A provider's clip whose sound runs 0.3 s past its 2 s picture (its header says 2.3 s): the
    shot and the clip on the timeline are its picture's 24 frames, not the header's 28 (the
    timeline's clip would claim frames the file does not have)."""
    folder, (shot, path, _) = scene["folder"], scene["clips"][1]
    longer = folder / "sound-outlasts.mp4"
    run(["-i", str(path), "-f", "lavfi", "-i", f"sine=frequency={CLIP_HZ}:duration=2.3"]
        + ["-c:v", "copy", "-c:a", "aac", str(longer)])  # fmt: skip
    assert ffmpeg.probe(longer, timeout_s=30).duration_s >= 2.25
    _, result = chapter(folder, [(shot, longer, 2.0)], {}, profile="provider")
    assert [(p["frames"], p["clip_frames"], p["clip_sound"]) for p in result["parts"]] == [(24, 24, True)]


def provider_clip(folder: Path, name: str, seconds: int) -> Path:
    """A clip as the Ark stand-in delivers Seedance 720p: 1280x720 at 24 fps."""
    path = folder / f"{name}.mp4"
    path.write_bytes(mp4_bytes(seconds, (1280, 720)))
    return path


def test_a_provider_clip_keeps_its_size_and_rate_unless_the_profile_says_otherwise(scene: dict[str, Any]) -> None:
    """Two 1280x720 24 fps clips and one 640x360 12 fps clip: under `provider` the chapter film
    is 1280x720 at 24 fps (the most common picture, read back from the file); under `animatic`
    it is 640x360 at 12 fps; under 960x540@25, that."""
    folder = scene["folder"]
    clips = [
        ("bk-c001-s0001", provider_clip(folder, "hd-1", 2), 2.0),
        ("bk-c001-s0002", scene["clips"][1][1], 2.0),
        ("bk-c001-s0003", provider_clip(folder, "hd-2", 2), 2.0),
    ]
    for profile, extra, wanted in (
        ("provider", {}, (1280, 720, 24.0)),
        ("animatic", {"width": 640, "height": 360, "fps": 12}, (640, 360, 12.0)),
        ("960x540@25", {"width": 960, "height": 540, "fps": 25}, (960, 540, 25.0)),
    ):
        film, result = chapter(folder, clips, {}, profile=profile, **extra)
        probe = ffmpeg.probe(film, timeout_s=30)
        assert (probe.width, probe.height, probe.fps) == wanted, profile
        assert (result["profile"], result["width"], result["height"], result["fps"]) == (profile, *wanted)
        assert result["frames"] == round(CARD_S * wanted[2]) + 3 * round(2.0 * wanted[2])


def test_the_timeline_has_the_speech_the_clip_sound_and_the_music_on_tracks_of_their_own(
    scene: dict[str, Any], tmp_path: Path
) -> None:
    """The chapter with speech, a clip with sound and a bed, as an editor opens it (written to
    .otio and read back): one clip a shot on the picture track, where speech outlasts a clip the
    held frame as a range of the film (no gap), the speech where it is said, the
    clip's own sound under its shot, the bed repeated to the film's length; every clip points at
    its file and every track lasts as long as the film."""
    film, result = chapter(scene["folder"], scene["clips"], scene["voices"], music=scene["bed"], profile="provider")
    shots = [{"shot_id": s, "video_task": f"{s}/video"} for s, _, _ in scene["clips"]]
    shots[0]["voice_task"] = f"{shots[0]['shot_id']}/voice"
    made = {f"{s}/video": Made(path, {}, {}) for s, path, _ in scene["clips"]}
    made[shots[0]["voice_task"]] = Made(scene["voices"][shots[0]["shot_id"]], {}, {})
    made["bk/music"] = Made(scene["bed"], {}, {"duration_s": ffmpeg.audio_seconds(scene["bed"], timeout_s=30)})
    timeline = chapter_timeline("One", Made(film, {"shots": shots, "music_task": "bk/music"}, result), made)
    otio.adapters.write_to_file(timeline, str(tmp_path / "chapter.otio"))
    read = otio.adapters.read_from_file(str(tmp_path / "chapter.otio"))
    assert [t.name for t in read.tracks] == ["picture", "speech", "clip sound", "music"]
    picture, speech, sound, music = read.tracks
    one, two, three = (s["shot_id"] for s in shots)  # shot 1's 2 s of speech outlast its 1.5 s clip
    assert [c.name for c in picture.find_clips()] == ["title card", one, f"{one} hold", two, three]
    hold = list(picture.find_clips())[2]
    assert hold.media_reference.target_url == film.resolve().as_uri(), "the film's own held frame"
    assert hold.source_range.start_time.to_frames() == picture.range_of_child(hold).start_time.to_frames()
    assert not [item for item in picture if isinstance(item, otio.schema.Gap)]
    assert [c.name for c in speech.find_clips()] == [f"{shots[0]['shot_id']} speech"]
    assert [c.name for c in sound.find_clips()] == [f"{shots[2]['shot_id']} sound"]
    assert len(music.find_clips()) >= 2, "a 3 s bed repeats under a longer film"
    for clip in read.find_clips():
        assert Path(clip.media_reference.target_url.removeprefix("file://")).is_file()
    assert {t.duration().to_frames(result["fps"]) for t in read.tracks} == {result["frames"]}
