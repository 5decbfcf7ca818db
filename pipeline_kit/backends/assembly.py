"""The assembly backend: a chapter's clips become its film, the chapter films become the book's.

A film's picture is its book's film profile's (`film/profile.py`): a fixed size and rate, or
(`provider`) the size and rate its clips came at, the most common among them (a Seedance 720p
clip stays 1280x720 at 24 fps). Each shot's clip is normalised to that and lasts its real length
(probed, in whole frames), not the estimate it was planned with: a provider may return another
duration than asked, and the subtitles are timed from the same frames. A shot with a voice lasts
at least as long as its speech (the picture holds on its last frame), and each line's cues are
shown while it is said. A title card goes first; BATCH parts are encoded per ffmpeg run, PARALLEL
runs at once, and the runs' segments are joined by the concat demuxer without re-encoding. No
frame passes through Python. The sound track (speech, a clip's own sound when it has one, and the
book's music bed, ducked under them, when it has one) is mixed and loudness-normalised by one more
ffmpeg run, beside the encodes, and joined to the picture by copy.
Side files: an .srt per film (cues timed from the same frame counts) and, for a chapter, a
contact sheet of the shots' first frames, taken from the same ffmpeg runs. A clip that is
absent or unreadable fails the task as retryable, so it runs again once the clip is remade.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pipeline_kit import kinds
from pipeline_kit.backends import params
from pipeline_kit.backends.base import CallContext, Job, Output
from pipeline_kit.backends.classify import classified
from pipeline_kit.errors import BadInput, GenerationError
from pipeline_kit.film import audio, cards, ffmpeg, srt
from pipeline_kit.film.dialogue import cue_texts
from pipeline_kit.film.names import CHAPTER_KIND, CONTACT, SRT, side_path
from pipeline_kit.film.timeline import (
    TITLE_CARD_S,
    card_frames,
    frame_ms,
    frames_for,
    turn_spans,
)

KINDS = kinds.made_by("assembly")
PARALLEL = 2  # ffmpeg encodes at once: enough to keep two cores busy
PROCESSES = PARALLEL + 1  # ffmpeg runs at once at most: the encodes and, beside them, the sound's mix
BATCH = 8  # parts per ffmpeg run: fewer process and encoder starts; ~10 MB per part
T = TypeVar("T")
_NUMBERED = re.compile(r"\s*(chapter\b|ch\.|第)", re.IGNORECASE)


def missing_input(message: str) -> GenerationError:
    """An input clip is not there yet: retry once it has been (re)made."""
    return GenerationError(message, error_kind="missing_input", retryable=True)


def corrupt_input(message: str) -> GenerationError:
    """An input clip cannot be read: retry once it has been remade."""
    return GenerationError(message, error_kind="corrupt_input", retryable=True)


@dataclass(frozen=True)
class Frame:
    """The picture format of a film: size and constant frame rate."""

    width: int
    height: int
    fps: int

    @classmethod
    def of(cls, p: Mapping[str, Any], probes: Sequence[ffmpeg.Probe]) -> Frame:
        """The params' size and rate when the profile fixes them, else the most common among the
        `probes` (the first of them on a tie): the picture its provider delivered."""
        if p.get("width") or not probes:
            width, height = params.even_size(p)
            return cls(width, height, params.fps(p))
        pictures = [(probe.width, probe.height, max(1, round(probe.fps or params.DEFAULT_FPS))) for probe in probes]
        width, height, fps = max(pictures, key=lambda x: (pictures.count(x), -pictures.index(x)))
        return cls(max(2, width - width % 2), max(2, height - height % 2), fps)


class AssemblyBackend:
    """Assembles chapter and book films with the ffmpeg imageio-ffmpeg ships."""

    name = "assembly"
    draws_text = True  # its pictures carry the book's words: Chinese needs a CJK font

    def suffix(self, kind: str) -> str:
        """.mp4 for both kinds."""
        params.check_kind(kind, KINDS, self.name)
        return ".mp4"

    @classified
    def run(self, job: Job, ctx: CallContext) -> Output:
        """Write the film to `job.out_path` and its side files next to it."""
        params.check_kind(job.kind, KINDS, self.name)
        try:
            with tempfile.TemporaryDirectory(prefix=".assembly-", dir=job.out_path.parent) as tmp:
                if job.kind == CHAPTER_KIND:
                    result, extras = self._chapter(job, ctx, Path(tmp))
                else:
                    result, extras = self._book(job, ctx, Path(tmp))
        except BaseException:  # leave no half-written side file behind (the runtime drops .part)
            for suffix in (SRT, CONTACT):
                _side(job, suffix).unlink(missing_ok=True)
            raise
        return Output(
            path=job.out_path,
            model="ffmpeg",
            result=result,
            extras=extras,
            settings={"ffmpeg": ffmpeg.exe().rsplit("/", 1)[-1]},
        )

    # -- a chapter -------------------------------------------------------------------------
    def _chapter(self, job: Job, ctx: CallContext, tmp: Path) -> tuple[dict[str, Any], dict[str, Path]]:
        p = job.params
        shots = _shots(p)
        clips = [_clip(job, s) for s in shots]
        speech = [_speech(job, s) for s in shots]
        music = _music(job)
        burn = bool(p.get("burn_subtitles"))
        ctx.stage("generating_video")
        probes = _clip_probes(clips, shots, ctx.timeout_s)
        frame = Frame.of(p, probes)
        lead = card_frames(_card_s(p), frame.fps)
        shot_frames = [
            frames_for(max(probe.duration_s, said.seconds + audio.TAIL_S if said.seconds else 0.0), frame.fps)
            for probe, said in zip(probes, speech)
        ]
        planned = [frames_for(float(s["duration_s"]), frame.fps) for s in shots]
        lang = params.text(p, "lang", "en")
        shown = [_shot_cues(s, said, n, frame.fps, lang) for s, said, n in zip(shots, speech, shot_frames)]
        thumbs = [tmp / f"thumb-{i:05d}.png" for i in range(len(shots))]
        parts: list[tuple[ffmpeg.Part, str]] = []  # each with what it is, for error messages
        if lead:
            card = tmp / "card.png"
            title = params.text(p, "title")
            cards.title_card((frame.width, frame.height), _heading(p.get("chapter"), title), title).save(card)
            parts.append((ffmpeg.Part(card, lead, still=True), "the title card"))
        for i, (shot, clip, frames) in enumerate(zip(shots, clips, shot_frames)):
            overlays: list[tuple[Path, int, int]] = []
            for k, (line, first, end) in enumerate(shown[i]):
                if burn:  # each speaker's words only while theirs are shown
                    overlays.append((tmp / f"sub-{i:05d}-{k:02d}.png", first, end))
                    cards.subtitle_overlay((frame.width, frame.height), line).save(overlays[-1][0])
            parts.append(
                (
                    ffmpeg.Part(clip, frames, overlays=tuple(overlays), thumb=thumbs[i]),
                    f"the clip of shot {shot['shot_id']}",
                )
            )
        sounds = [ffmpeg.Sound(lead / frame.fps)] if lead else []
        sounds += [
            ffmpeg.Sound(n / frame.fps, tuple([said.path] if said.seconds else []) + ((clip,) if probe.audio else ()))
            for n, said, clip, probe in zip(shot_frames, speech, clips, probes)
        ]
        track = tmp / "sound.m4a"
        what = f"the sound of chapter {p.get('chapter')}"
        with ThreadPoolExecutor(max_workers=1) as aside:  # the sound is mixed while the picture is encoded
            mixed = aside.submit(ffmpeg.mix_audio, sounds, track, timeout_s=ctx.timeout_s, what=what, music=music)
            segments = _encode_batches(parts, tmp / "shots", frame, ctx.timeout_s)
            mixed.result()
        ctx.stage("finalizing")
        ffmpeg.concat(
            segments,
            job.out_path,
            list_path=tmp / "parts.txt",
            timeout_s=ctx.timeout_s,
            what=f"joining chapter {p.get('chapter')}",
            audio=track,
        )
        cues, start = [], lead
        for frames, lines in zip(shot_frames, shown):
            cues += [srt.Cue(frame_ms(start + a, frame.fps), frame_ms(start + b, frame.fps), t) for t, a, b in lines]
            start += frames
        extras = {SRT: _side(job, SRT), CONTACT: _side(job, CONTACT)}
        extras[SRT].write_text(srt.render(cues), encoding="utf-8")
        prefix = f"{params.text(p, 'bookcode')}-"  # shot ids repeat the bookcode: drop it
        cards.save_contact_sheet(
            [(s["shot_id"].removeprefix(prefix), t) for s, t in zip(shots, thumbs)],
            (frame.width, frame.height),
            extras[CONTACT],
        )
        total = lead + sum(shot_frames)
        return (
            {
                "profile": params.text(p, "profile", "fixed"),
                "width": frame.width,
                "height": frame.height,
                "fps": frame.fps,
                "frames": total,
                "duration_s": total / frame.fps,
                "shots": len(shots),
                "cues": len(cues),
                "title_frames": lead,
                "retimed_shots": sum(a != b for a, b in zip(shot_frames, planned)),
                "voiced_shots": sum(1 for said in speech if said.seconds),
                "speech_s": round(sum(said.seconds for said in speech), 3),
                "clip_sound_shots": sum(1 for probe in probes if probe.audio),
                "music": music is not None,
                # where each shot sits, for the timeline an editor opens (film/timelines.py)
                "parts": [
                    {
                        "shot_id": s["shot_id"],
                        "frames": n,
                        "clip_frames": min(n, frames_for(probe.duration_s, frame.fps)),
                        "clip_sound": probe.audio,
                        "speech_s": round(said.seconds, 3),
                    }
                    for s, n, probe, said in zip(shots, shot_frames, probes, speech)
                ],
            },
            extras,
        )

    # -- the book --------------------------------------------------------------------------
    def _book(self, job: Job, ctx: CallContext, tmp: Path) -> tuple[dict[str, Any], dict[str, Path]]:
        p = job.params
        entries = _entries(p)
        films = [_input(job, str(e["task"]), f"the film of chapter {e['chapter']}") for e in entries]
        subtitles = [side_path(f, SRT) for f in films]
        for entry, path in zip(entries, subtitles):
            if not path.is_file():
                raise missing_input(f"the subtitles of chapter {entry['chapter']} are missing at {path}")
        probes = [
            _by_picture(_probe(f, what, ctx.timeout_s), f, what, ctx.timeout_s)
            for f, what in zip(films, [f"the film of chapter {e['chapter']}" for e in entries])
        ]
        frame = Frame.of(p, probes)
        lead = card_frames(_card_s(p), frame.fps)
        ctx.stage("generating_video")
        parts: list[Path] = []
        if lead:
            card = tmp / "card.png"
            cards.title_card((frame.width, frame.height), "", params.text(p, "title")).save(card)
            parts += _encode_batches(
                [(ffmpeg.Part(card, lead, still=True), "the title card")], tmp / "card", frame, ctx.timeout_s
            )
        cues: list[srt.Cue] = []
        sounds = [ffmpeg.Sound(lead / frame.fps)] if lead else []
        start, lengths = lead, []
        for i, (entry, film, probe, subs) in enumerate(zip(entries, films, probes, subtitles)):
            frames = frames_for(probe.duration_s, frame.fps)
            lengths.append(frames)
            sounds.append(ffmpeg.Sound(frames / frame.fps, (film,) if probe.audio else ()))
            if _matches(probe, frame):
                parts.append(film)
            else:  # made at another size or rate: re-encode it to the book's
                parts += _encode_batches(
                    [(ffmpeg.Part(film, frames), f"the film of chapter {entry['chapter']}")],
                    tmp / f"chapter-{i:04d}",
                    frame,
                    ctx.timeout_s,
                )
            length_ms = frame_ms(frames, frame.fps)
            cues += srt.shifted(srt.clipped(_read_srt(subs), length_ms), frame_ms(start, frame.fps))
            start += frames
        track = tmp / "sound.m4a"
        # the chapters' sound is at -23 LUFS already: joined, so is the book's (silence is gated out)
        ffmpeg.mix_audio(sounds, track, timeout_s=ctx.timeout_s, what="the sound of the book", normalise=False)
        ctx.stage("finalizing")
        ffmpeg.concat(
            parts,
            job.out_path,
            list_path=tmp / "parts.txt",
            timeout_s=ctx.timeout_s,
            what="joining the chapters",
            audio=track,
        )
        extras = {SRT: _side(job, SRT)}
        extras[SRT].write_text(srt.render(cues), encoding="utf-8")
        return (
            {
                "profile": params.text(p, "profile", "fixed"),
                "width": frame.width,
                "height": frame.height,
                "fps": frame.fps,
                "frames": start,
                "duration_s": start / frame.fps,
                "chapters": len(entries),
                "cues": len(cues),
                "title_frames": lead,
                "chapter_frames": lengths,
            },
            extras,
        )


def _heading(chapter: object, title: str) -> str:
    """ "Chapter N" above the title, unless the title already says which chapter it is."""
    return "" if _NUMBERED.match(title) or chapter is None else f"Chapter {chapter}"


def _shots(p: Mapping[str, Any]) -> list[dict[str, Any]]:
    shots = params.require(p, "shots")
    if not isinstance(shots, list) or not all(isinstance(s, Mapping) for s in shots):
        raise params.permanent("bad_param", "params field 'shots' must be a list of objects")
    return [
        {
            "shot_id": str(params.require(s, "shot_id")),
            "video_task": str(params.require(s, "video_task")),
            "duration_s": params.duration_s(s),
            "subtitles": _subtitles(s),
            "voice_task": str(s["voice_task"]) if s.get("voice_task") else None,
        }
        for s in shots
    ]


@dataclass(frozen=True)
class Speech:
    """A shot's speech as its voice task made it: the WAV, its lines' timing, its length (none: 0)."""

    path: Path | None = None
    lines: tuple[audio.Said, ...] = ()
    seconds: float = 0.0


def _speech(job: Job, shot: Mapping[str, Any]) -> Speech:
    """The shot's speech, read from its voice task's output and the timing beside it."""
    if shot["voice_task"] is None:
        return Speech()
    what = f"the voice of shot {shot['shot_id']}"
    path = _input(job, shot["voice_task"], what)
    side = side_path(path, audio.LINES)
    if not side.is_file():
        raise missing_input(f"the timing of {what} is missing at {side}")
    try:
        lines, seconds = audio.read_lines(side)
    except ValueError as exc:
        raise corrupt_input(f"{what}: {exc}") from None
    return Speech(path, tuple(lines), seconds)


def _shot_cues(shot: Mapping[str, Any], speech: Speech, frames: int, fps: int, lang: str) -> list[tuple[str, int, int]]:
    """(text, first, end) frames of each cue of a shot: a voiced shot's lines while they are said,
    a long line in several cues (its time shared by their lengths); else the planned subtitles
    sharing the shot."""
    if speech.path is None:
        texts = shot["subtitles"]
        return [(t, a, b) for t, (a, b) in zip(texts, turn_spans(frames, texts)) if t.strip() and b > a]
    out = []
    for line in speech.lines:
        first = min(frames, round(line.start_s * fps))
        end = min(frames, max(first + 1, round(line.end_s * fps)))
        texts = cue_texts(line.text, lang)
        out += [(t, first + a, first + b) for t, (a, b) in zip(texts, turn_spans(end - first, texts)) if b > a]
    return out


def _subtitles(shot: Mapping[str, Any]) -> list[str]:
    """A shot's subtitle lines, one per cue (params planned before cues were split per speaker
    carry one line under 'subtitle')."""
    lines = shot.get("subtitles", [params.text(shot, "subtitle")])
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise params.permanent("bad_param", "params field 'subtitles' must be a list of strings")
    return [line for line in lines if line.strip()]


def _entries(p: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries = params.require(p, "chapters")
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) and e.get("task") for e in entries):
        raise params.permanent("bad_param", "params field 'chapters' must be a list of objects with a 'task'")
    return entries


def _card_s(p: Mapping[str, Any]) -> float:
    value = p.get("title_card_s", TITLE_CARD_S)
    if not isinstance(value, (int, float)) or not 0 <= value <= 60:
        raise params.permanent("bad_param", f"params field 'title_card_s' must be in [0, 60], got {value!r}")
    return float(value)


def _input(job: Job, task_id: str, what: str) -> Path:
    path = job.inputs.get(task_id)
    if path is None:
        raise missing_input(f"{what} (task {task_id}) is not among the inputs: not made yet")
    if not Path(path).is_file():
        raise missing_input(f"{what} (task {task_id}) is missing at {path}")
    if Path(path).stat().st_size == 0:
        raise corrupt_input(f"{what} (task {task_id}) is an empty file at {path}")
    return Path(path)


def _music(job: Job) -> Path | None:
    """The book's music bed, when its films have one and it was made (a bed that could not be
    made leaves the film without music rather than without a film)."""
    task = job.params.get("music_task")
    path = job.inputs.get(str(task)) if task else None
    return Path(path) if path is not None and Path(path).is_file() and Path(path).stat().st_size else None


def _clip(job: Job, shot: Mapping[str, Any]) -> Path:
    return _input(job, shot["video_task"], f"the clip of shot {shot['shot_id']}")


def _clip_probes(clips: Sequence[Path], shots: Sequence[Mapping[str, Any]], timeout_s: float) -> list[ffmpeg.Probe]:
    """Each clip's header (real length, whether it has sound), from one ffmpeg run; a clip it
    could not read is probed alone, which names what is wrong with it."""
    found = ffmpeg.probe_all(clips, timeout_s=timeout_s) if clips else []
    whats = [f"the clip of shot {shot['shot_id']}" for shot in shots]
    return [
        _by_picture(probe or _probe(clip, what, timeout_s), clip, what, timeout_s)
        for probe, clip, what in zip(found, clips, whats)
    ]


def _by_picture(probe: ffmpeg.Probe, path: Path, what: str, timeout_s: float) -> ffmpeg.Probe:
    """`probe` lasting as long as its picture. A header's duration is its longest stream's, and a
    file's AAC track ends up to a frame after its picture: a chapter film's so made each later
    chapter's sound and subtitles start after its picture in the book film, a provider clip's
    gave the timeline a frame more than the clip has. Files without sound keep the header's."""
    if not probe.audio or probe.fps <= 0:
        return probe
    return replace(probe, duration_s=ffmpeg.video_frames(path, timeout_s=timeout_s, what=what) / probe.fps)


def _probe(path: Path, what: str, timeout_s: float) -> ffmpeg.Probe:
    try:
        return ffmpeg.probe(path, timeout_s=timeout_s)
    except ValueError as exc:
        raise corrupt_input(f"{what} is not a readable video ({path}): {exc}") from None


def _matches(probe: ffmpeg.Probe, frame: Frame) -> bool:
    return (
        probe.codec == "h264"
        and (probe.width, probe.height) == (frame.width, frame.height)
        and abs(probe.fps - frame.fps) < 0.01
    )


def _read_srt(path: Path) -> list[srt.Cue]:
    try:
        return srt.parse(path.read_text(encoding="utf-8"))
    except (BadInput, UnicodeDecodeError) as exc:
        raise corrupt_input(f"unreadable subtitles at {path}: {exc}") from None


def _encode_batches(parts: Sequence[tuple[ffmpeg.Part, str]], stem: Path, frame: Frame, timeout_s: float) -> list[Path]:
    """Encode the parts BATCH at a time, PARALLEL runs at once; the segments (stem-NNNN.mp4).

    A failed run is blamed on the first of its inputs ffmpeg cannot read (corrupt_input, naming
    it); if every input reads, the failure is ffmpeg's own and stays as it was raised.
    """
    batches = [list(parts[i : i + BATCH]) for i in range(0, len(parts), BATCH)]
    segments = [stem.with_name(f"{stem.name}-{k:04d}.mp4") for k in range(len(batches))]

    def encode(k: int) -> None:
        batch = batches[k]
        try:
            ffmpeg.encode(
                [part for part, _ in batch],
                segments[k],
                width=frame.width,
                height=frame.height,
                fps=frame.fps,
                thumb_width=cards.THUMB_WIDTH,
                timeout_s=timeout_s,
                what=f"{batch[0][1]} to {batch[-1][1]}",
            )
        except GenerationError as exc:
            if exc.error_kind == "timeout":
                raise
            for part, what in batch:
                if not part.still:
                    _probe(part.source, what, timeout_s)
            raise

    _parallel(encode, range(len(batches)))
    return segments


def _side(job: Job, suffix: str) -> Path:
    """A temporary side file next to the film being written; the runtime publishes it."""
    return job.out_path.with_name(job.out_path.name + suffix)


def _parallel(fn: Callable[[int], T], items: Sequence[int] | range) -> list[T]:
    """`fn` over `items`, PARALLEL at a time; the first failure is raised."""
    pool = ThreadPoolExecutor(max_workers=PARALLEL)
    try:
        return list(pool.map(fn, items))
    finally:  # on failure, start no more runs; wait only for those already running
        pool.shutdown(wait=True, cancel_futures=True)


def make(arg: str | None) -> AssemblyBackend:
    """Registry factory for `assembly` (takes no argument)."""
    if arg is not None:
        raise BadInput(f"backend 'assembly' takes no argument, got 'assembly:{arg}'")
    return AssemblyBackend()
