"""OpenTimelineIO timelines of a book's films, written beside an export so an editor (DaVinci
Resolve, Kdenlive; OTIO's adapters for FCPXML and the rest) opens the film as its parts.

One `.otio` per chapter film and one for the book: a video track with the title card (a range of
the exported film, where it is drawn) and every shot's clip at its real length, followed, where
the film holds the clip's last frame under longer speech, by that hold as a range of the exported
film (no gap: an editor shows the held frame the viewer sees); audio tracks with each shot's
speech where it is said, the clips' own sound (when a provider's clip has some) and the book's
music bed (the exported bed, repeated to the film's length); the subtitles as markers. Media
references are the exported files' absolute file URLs. Lengths come from what the assembly
recorded (`result.parts`), so a timeline lasts as long as its film, frame for frame.

A timeline counts time at a rate SMPTE timecode has (24, 25, 30, 48, 50, 60): the film's own, or
else the smallest such whole multiple of it (the animatic's 12 fps on a 24 fps timeline, each
frame held for two, as animation "on twos" is cut). OTIO's FCP XML and EDL adapters write
timecode and refuse any other rate, so an animatic's timeline converts for Premiere or Final Cut
like a provider's 24 fps one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import opentimelineio as otio  # type: ignore[import-untyped]
import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books
from pipeline_kit.engine.planned import task_params
from pipeline_kit.engine.queries import MADE, find_tasks
from pipeline_kit.film import srt
from pipeline_kit.film.names import BOOK_KIND, CHAPTER_KIND, SRT, side_path


@dataclass(frozen=True)
class Made:
    """A completed task's output as exported: where the file is, and what its task recorded."""

    path: Path
    params: Mapping[str, Any]
    result: Mapping[str, Any]


def write_timelines(db: Database, bookcode: str, exported: Callable[[str], Path]) -> list[Path]:
    """Write the .otio of each assembled chapter film and of the book film beside the exported
    films (`exported(output_path)`: where export put a task's output); returns the files written.
    A film export could not write (gone from the store) gets no timeline, nor does a book film
    whose chapter films lack one: it would open with its picture missing."""
    with db.reading() as conn:
        title = conn.execute(sa.select(books.c.title).where(books.c.bookcode == bookcode)).scalar() or bookcode
        rows = find_tasks(conn, bookcode=bookcode, statuses=MADE, made=True)
        params = task_params(conn, [r.task_id for r in rows])
    made = {r.task_id: Made(exported(str(r.output_path)), params[r.task_id], r.result or {}) for r in rows}
    kinds = {r.task_id: r.kind for r in rows}
    written: list[Path] = []
    chapters: dict[str, otio.schema.Timeline] = {}
    for task_id, film in made.items():
        if kinds[task_id] == CHAPTER_KIND and film.result.get("parts") is not None and film.path.is_file():
            name = f"{title}: {film.params.get('title') or 'chapter ' + str(film.params.get('chapter'))}"
            chapters[task_id] = chapter_timeline(name, film, made)
            written.append(_write(chapters[task_id], film.path))
    for task_id, film in made.items():
        entries = film.params.get("chapters") or []
        exported_all = entries and film.path.is_file() and all(e.get("task") in chapters for e in entries)
        if kinds[task_id] == BOOK_KIND and exported_all:
            timeline = book_timeline(title, film, [(made[e["task"]], chapters[e["task"]]) for e in entries])
            written.append(_write(timeline, film.path))
    return written


SPEECH, CLIP_SOUND, MUSIC = "speech", "clip sound", "music"  # the audio tracks, in this order


def chapter_timeline(name: str, film: Made, made: Mapping[str, Made]) -> otio.schema.Timeline:
    """The chapter film as a timeline: its title card, each shot's clip, speech and own sound,
    the music bed under it all, its cues."""
    fps = float(film.result["fps"])
    total = int(film.result["frames"])
    video = otio.schema.Track(name="picture", kind=otio.schema.TrackKind.Video)
    sound = {n: otio.schema.Track(name=n, kind=otio.schema.TrackKind.Audio) for n in (SPEECH, CLIP_SOUND)}
    lead = int(film.result.get("title_frames") or 0)
    if lead:
        video.append(_clip("title card", film.path, 0, lead, fps, total))
        for track in sound.values():
            track.append(_gap(lead, fps))
    by_shot = {s["shot_id"]: s for s in film.params.get("shots") or []}
    at = lead  # where the shot starts in the film
    for part in film.result["parts"]:
        shot = by_shot[part["shot_id"]]
        frames, shown = int(part["frames"]), int(part["clip_frames"])
        clip = made.get(shot["video_task"])
        if clip is not None:
            video.append(_clip(part["shot_id"], clip.path, 0, shown, fps, shown))
        else:  # not exported (re-opened since the film was made): the film's own frames of the shot
            shown = 0
        if frames > shown:  # the film holds the clip's last frame while the speech goes on
            held = _from_film(part["shot_id"], film.path, at + shown, frames - shown, fps, total, clip is not None)
            video.append(held)
        at += frames
        voice = made.get(shot.get("voice_task") or "")
        said = min(frames, round(float(part["speech_s"]) * fps))
        _fill(sound[SPEECH], voice.path if voice and said > 0 else None, f"{part['shot_id']} speech", said, frames, fps)
        heard = shown if clip is not None and part.get("clip_sound") else 0
        _fill(sound[CLIP_SOUND], clip.path if heard else None, f"{part['shot_id']} sound", heard, frames, fps)
    tracks = [video, sound[SPEECH]] + ([sound[CLIP_SOUND]] if film.result.get("clip_sound_shots") else [])
    bed = made.get(str(film.params.get("music_task") or ""))
    if film.result.get("music") and bed is not None:
        tracks.append(_music(bed, total, fps))
    timeline = otio.schema.Timeline(name=name, global_start_time=_time(0, fps))
    timeline.tracks.extend(tracks)
    _cues(timeline, side_path(film.path, SRT), fps)
    timeline.metadata["pipeline_kit"] = {"film": film.path.name, "frames": total, "fps": fps}
    return timeline


def book_timeline(title: str, film: Made, chapters: list[tuple[Made, otio.schema.Timeline]]) -> otio.schema.Timeline:
    """The book film as a timeline: its title card, then every chapter timeline's items in turn
    (a chapter without one of the audio tracks leaves a gap of its length there)."""
    fps = float(film.result["fps"])
    names = [n for n in (SPEECH, CLIP_SOUND, MUSIC) if any(t.name == n for _, c in chapters for t in c.tracks)]
    video = otio.schema.Track(name="picture", kind=otio.schema.TrackKind.Video)
    sound = {n: otio.schema.Track(name=n, kind=otio.schema.TrackKind.Audio) for n in names}
    lead = int(film.result.get("title_frames") or 0)
    if lead:
        video.append(_clip("title card", film.path, 0, lead, fps, int(film.result["frames"])))
        for track in sound.values():
            track.append(_gap(lead, fps))
    for _, chapter in chapters:
        by_name = {t.name: t for t in chapter.tracks}
        length = chapter.tracks[0].duration()
        for into in (video, *sound.values()):
            track = by_name.get(into.name)
            if track is None:
                into.append(otio.schema.Gap(duration=length))
            for item in track or []:
                into.append(item.deepcopy())
    timeline = otio.schema.Timeline(name=title, global_start_time=_time(0, fps))
    timeline.tracks.extend([video, *sound.values()])
    _cues(timeline, side_path(film.path, SRT), fps)
    timeline.metadata["pipeline_kit"] = {"film": film.path.name, "frames": int(film.result["frames"]), "fps": fps}
    return timeline


def _fill(track: otio.schema.Track, path: Path | None, name: str, heard: int, frames: int, fps: float) -> None:
    """A shot's span on an audio track: `heard` frames of `path` from its start, then silence."""
    if path is not None and heard > 0:
        track.append(_clip(name, path, 0, heard, fps, heard))
    if frames > (heard if path is not None else 0):
        track.append(_gap(frames - (heard if path is not None else 0), fps))


def _music(bed: Made, total: int, fps: float) -> otio.schema.Track:
    """The music track: the exported bed from its start, again and again, to the film's length
    (as the assembly loops it)."""
    track = otio.schema.Track(name=MUSIC, kind=otio.schema.TrackKind.Audio)
    length = max(1, int(float(bed.result.get("duration_s") or 0) * fps))
    at = 0
    while at < total:
        part = min(length, total - at)
        track.append(_clip("music", bed.path, 0, part, fps, length))
        at += part
    return track


def _clip(name: str, path: Path, start: int, frames: int, fps: float, available: int) -> otio.schema.Clip:
    """A clip of `frames` frames from frame `start` of the file at `path`, which lasts `available`."""
    reference = otio.schema.ExternalReference(
        target_url=path.resolve().as_uri(), available_range=_range(0, available, fps)
    )
    return otio.schema.Clip(name=name, media_reference=reference, source_range=_range(start, frames, fps))


def _from_film(shot: str, film: Path, start: int, frames: int, fps: float, total: int, hold: bool) -> otio.schema.Clip:
    """Frames of the shot that no clip file has, as a range of the exported film, which has them:
    the clip's last frame held under longer speech (`hold`), or the whole shot when its clip was
    not exported. The picture track thus has no gap: an editor shows what the film shows."""
    clip = _clip(f"{shot} hold" if hold else shot, film, start, frames, fps, total)
    clip.metadata["pipeline_kit"] = {"holds_last_frame_of" if hold else "shot_from_film": shot}
    return clip


def _gap(frames: int, fps: float) -> otio.schema.Gap:
    return otio.schema.Gap(source_range=_range(0, frames, fps))


def _range(start: int, frames: int, fps: float) -> otio.opentime.TimeRange:
    """`frames` film frames from film frame `start`, at the timeline's rate."""
    return otio.opentime.TimeRange(_time(start, fps), _time(frames, fps))


def _time(frames: int, fps: float) -> otio.opentime.RationalTime:
    """`frames` frames of a film at `fps`, counted at its timeline's rate (`edit_rate`)."""
    rate = edit_rate(fps)
    return otio.opentime.RationalTime(frames * (rate // max(1, round(fps))), rate)


def edit_rate(fps: float) -> int:
    """The timeline's rate for a film at `fps` (a whole rate, as every film is made): the film's
    when SMPTE timecode has it, else its smallest whole multiple that timecode has, else its own."""
    rate = max(1, round(fps))
    return next((r for r in range(rate, 61, rate) if otio.opentime.RationalTime.is_valid_timecode_rate(r)), rate)


def _cues(timeline: otio.schema.Timeline, subtitles: Path, fps: float) -> None:
    """The film's subtitles as markers on the timeline, one per cue, at the cue's frames."""
    if not subtitles.is_file():
        return
    for cue in srt.parse(subtitles.read_text(encoding="utf-8")):
        first = round(cue.start_ms * fps / 1000)
        end = max(first + 1, round(cue.end_ms * fps / 1000))
        marker = otio.schema.Marker(name=cue.text, marked_range=_range(first, end - first, fps))
        marker.metadata["pipeline_kit"] = {"subtitle": cue.text}
        timeline.tracks.markers.append(marker)


def _write(timeline: otio.schema.Timeline, film: Path) -> Path:
    target = film.with_suffix(".otio")
    otio.adapters.write_to_file(timeline, str(target))
    return target
