"""Shots to tasks: character and location sheets first, then each shot's first frame, its last
frame (drawn from the first), then its video; and beside them its voice (what it says aloud).

Task ids are business keys (`<shot_id>/first_frame`, `<bookcode>/char/<slug>`,
`<bookcode>/place/<slug>`), so enqueueing a book's graph again adds nothing. A frame names what
each of its reference pictures is (`references`), so a prompt can say which image is whom. The
params below are the contract the generation backends build to.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pipeline_kit import kinds
from pipeline_kit.engine.models import TaskSpec
from pipeline_kit.film.dialogue import Speakers, spoken_lines
from pipeline_kit.text.prompts import caption, frame_prompt
from pipeline_kit.text.records import Shot

WIDTH, HEIGHT, FPS = 640, 360, 12
FRAMES = kinds.names(kinds.Role.FRAME)  # first, then last


@dataclass(frozen=True)
class Voices:
    """Who speaks a book: each character's (gender, chosen voice or None), the narrator's voice
    (None: the voice backend's default for the language), whether narration is spoken, and the
    names the text calls the cast by and the chapters' texts (to find who says a line)."""

    cast: Mapping[str, tuple[str | None, str | None]] = field(default_factory=dict)
    narrator: str | None = None
    narration: bool = True
    speakers: Speakers = field(default_factory=Speakers)
    chapters: Mapping[int, str] = field(default_factory=dict)  # texts: what comes before a shot


def seed_for(task_id: str) -> int:
    """A stable 31-bit seed from the task id: a re-run draws the same picture."""
    return int.from_bytes(hashlib.sha256(task_id.encode()).digest()[:4], "big") & 0x7FFFFFFF


@lru_cache(maxsize=4096)
def char_slug(name: str) -> str:
    """A key-safe form of a character name (Han characters kept, `/` and spaces become `-`)."""
    slug = re.sub(r"[^\w]+", "-", name.casefold()).strip("-")
    return slug or hashlib.sha256(name.encode()).hexdigest()[:8]


def sheet_task_id(bookcode: str, name: str) -> str:
    return f"{bookcode}/char/{char_slug(name)}"


def place_task_id(bookcode: str, name: str) -> str:
    """The location sheet of a place of the book."""
    return f"{bookcode}/place/{char_slug(name)}"


def shot_task_ids(shot_id: str) -> dict[str, str]:
    """kind -> task id for the four tasks of a shot."""
    return {kind: shot_task_id(shot_id, kind) for kind in kinds.per_shot()}


def shot_task_id(shot_id: str, kind: str) -> str:
    """The task id of one of a shot's tasks (`kind` one of `kinds.per_shot()`)."""
    return f"{shot_id}/{kind}"


def sheet_spec(bookcode: str, name: str, prompt: str, kind: str = "character_sheet") -> TaskSpec:
    """A character sheet, or (`kind` location_sheet) a place's reference sheet."""
    task_id = (sheet_task_id if kind == "character_sheet" else place_task_id)(bookcode, name)
    params = {
        "bookcode": bookcode,
        "name": name,
        "prompt": prompt,
        "width": WIDTH,
        "height": HEIGHT,
        "seed": seed_for(task_id),
    }
    return TaskSpec(task_id=task_id, kind=kind, lane=kinds.BY_NAME[kind].lane, params=params, bookcode=bookcode)


def shot_params(
    shot: Shot, lang: str, place_sheet: bool = False, voices: Voices | None = None
) -> dict[str, dict[str, Any]]:
    """kind -> params of the shot's four tasks (`place_sheet`: its place has a location sheet)."""
    ids = shot_task_ids(shot.shot_id)
    text = caption(shot.text, lang)
    params: dict[str, dict[str, Any]] = {}
    for kind in FRAMES:
        params[kind] = {
            "bookcode": shot.bookcode,
            "shot_id": shot.shot_id,
            "chapter": shot.chapter,
            "seq": shot.seq,
            "scene": shot.scene,
            "prompt": frame_prompt(shot.prompt, kind, shot.text, lang, shot.characters),
            "references": reference_labels(shot, kind, place_sheet),
            "caption": text,
            "characters": list(shot.characters),
            "location": shot.location,
            "time_of_day": shot.time_of_day,
            "width": WIDTH,
            "height": HEIGHT,
            "seed": seed_for(ids[kind]),
        }
    params["video"] = {
        "bookcode": shot.bookcode,
        "shot_id": shot.shot_id,
        "video_prompt": shot.video_prompt,
        "caption": text,
        "duration_s": shot.duration_s,
        "fps": FPS,
        "width": WIDTH,
        "height": HEIGHT,
        "seed": seed_for(ids["video"]),
    }
    params["voice"] = voice_params(shot, lang, voices or Voices())
    return params


def voice_params(shot: Shot, lang: str, voices: Voices) -> dict[str, Any]:
    """The shot's voice task: each line to say, with its speaker's gender and voice (None: the
    backend's default for them), narration in the narrator's voice unless the book turned it off."""
    lines = []
    said = spoken_lines(
        shot.text,
        dialogue=shot.dialogue,
        lang=lang,
        characters=shot.characters,
        speakers=voices.speakers,
        before=voices.chapters.get(shot.chapter, "")[: shot.span_start],
    )
    for line in said:
        if line.narration and not voices.narration:
            continue
        gender, voice = (None, voices.narrator) if line.narration else voices.cast.get(line.speaker or "", (None, None))
        lines.append(
            {"speaker": line.speaker, "narration": line.narration, "text": line.text, "gender": gender, "voice": voice}
        )
    return {"bookcode": shot.bookcode, "shot_id": shot.shot_id, "lang": lang, "lines": lines}


def reference_labels(shot: Shot, kind: str, place_sheet: bool = False) -> dict[str, str]:
    """Task id -> what its picture is, for the references a frame is drawn from, so the prompt can
    say which image is whom: the shot's first frame (for its last frame), each character's sheet,
    then its place's location sheet."""
    labels = {}
    if kind == "last_frame":
        labels[shot_task_id(shot.shot_id, "first_frame")] = "the first frame of this shot"
    labels.update({sheet_task_id(shot.bookcode, n): f"the character sheet of {n}" for n in shot.characters})
    if place_sheet and shot.location:
        labels[place_task_id(shot.bookcode, shot.location)] = f"the location sheet of {shot.location}"
    return labels


def frame_dependencies(shot: Shot, kind: str, place_sheet: bool = False) -> list[str]:
    """What a frame waits for: the pictures it is drawn from (see `reference_labels`)."""
    return list(reference_labels(shot, kind, place_sheet))


def shot_specs(shot: Shot, lang: str, place_sheet: bool = False, voices: Voices | None = None) -> list[TaskSpec]:
    """The shot's frame tasks (after its characters' and place's sheets; the last frame also after
    the first, which it is drawn from), its video (after both frames) and its voice (after nothing)."""
    ids = shot_task_ids(shot.shot_id)
    params = shot_params(shot, lang, place_sheet, voices)
    specs = [
        TaskSpec(
            task_id=ids[kind],
            kind=kind,
            lane=kinds.BY_NAME[kind].lane,
            params=params[kind],
            depends_on=tuple(params[kind]["references"]),  # its frame_dependencies
            bookcode=shot.bookcode,
            shot_id=shot.shot_id,
        )
        for kind in FRAMES
    ]
    specs.append(
        TaskSpec(
            task_id=ids["video"],
            kind="video",
            lane=kinds.BY_NAME["video"].lane,
            params=params["video"],
            depends_on=tuple(ids[k] for k in FRAMES),
            bookcode=shot.bookcode,
            shot_id=shot.shot_id,
        )
    )
    specs.append(
        TaskSpec(
            task_id=ids["voice"],
            kind="voice",
            lane=kinds.BY_NAME["voice"].lane,
            params=params["voice"],
            bookcode=shot.bookcode,
            shot_id=shot.shot_id,
        )
    )
    return specs
