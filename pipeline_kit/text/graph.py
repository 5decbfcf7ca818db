"""Shots to tasks: character sheets first, then each shot's first and last frames, then its video.

Task ids are business keys (`<shot_id>/first_frame`, `<bookcode>/char/<slug>`), so enqueueing a
book's graph again adds nothing. The params below are the contract the generation backends
build to.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from pipeline_kit.engine.models import TaskSpec
from pipeline_kit.text.prompts import caption, frame_prompt
from pipeline_kit.text.records import Shot

WIDTH, HEIGHT, FPS = 640, 360, 12
FRAMES = ("first_frame", "last_frame")
IMAGE_LANE, VIDEO_LANE = "image", "video"


def seed_for(task_id: str) -> int:
    """A stable 31-bit seed from the task id: a re-run draws the same picture."""
    return int.from_bytes(hashlib.sha256(task_id.encode()).digest()[:4], "big") & 0x7FFFFFFF


def char_slug(name: str) -> str:
    """A key-safe form of a character name (Han characters kept, `/` and spaces become `-`)."""
    slug = re.sub(r"[^\w]+", "-", name.casefold()).strip("-")
    return slug or hashlib.sha256(name.encode()).hexdigest()[:8]


def sheet_task_id(bookcode: str, name: str) -> str:
    return f"{bookcode}/char/{char_slug(name)}"


def shot_task_ids(shot_id: str) -> dict[str, str]:
    """kind -> task id for the three tasks of a shot."""
    return {kind: f"{shot_id}/{kind}" for kind in (*FRAMES, "video")}


def sheet_spec(bookcode: str, name: str, prompt: str) -> TaskSpec:
    task_id = sheet_task_id(bookcode, name)
    params = {"bookcode": bookcode, "name": name, "prompt": prompt, "width": WIDTH, "height": HEIGHT,
              "seed": seed_for(task_id)}
    return TaskSpec(task_id=task_id, kind="character_sheet", lane=IMAGE_LANE, params=params, bookcode=bookcode)


def shot_params(shot: Shot, lang: str) -> dict[str, dict[str, Any]]:
    """kind -> params of the shot's three tasks."""
    ids = shot_task_ids(shot.shot_id)
    text = caption(shot.text, lang)
    params: dict[str, dict[str, Any]] = {}
    for kind in FRAMES:
        params[kind] = {
            "bookcode": shot.bookcode, "shot_id": shot.shot_id, "chapter": shot.chapter, "seq": shot.seq,
            "scene": shot.scene, "prompt": frame_prompt(shot.prompt, kind, shot.text, lang), "caption": text,
            "characters": list(shot.characters), "location": shot.location, "time_of_day": shot.time_of_day,
            "width": WIDTH, "height": HEIGHT, "seed": seed_for(ids[kind]),
        }
    params["video"] = {
        "bookcode": shot.bookcode, "shot_id": shot.shot_id, "video_prompt": shot.video_prompt, "caption": text,
        "duration_s": shot.duration_s, "fps": FPS, "width": WIDTH, "height": HEIGHT, "seed": seed_for(ids["video"]),
    }
    return params


def shot_specs(shot: Shot, lang: str) -> list[TaskSpec]:
    """The shot's frame tasks (after its characters' sheets) and its video (after both frames)."""
    ids = shot_task_ids(shot.shot_id)
    params = shot_params(shot, lang)
    sheets = tuple(sheet_task_id(shot.bookcode, name) for name in shot.characters)
    specs = [
        TaskSpec(task_id=ids[kind], kind=kind, lane=IMAGE_LANE, params=params[kind], depends_on=sheets,
                 bookcode=shot.bookcode, shot_id=shot.shot_id)
        for kind in FRAMES
    ]
    specs.append(TaskSpec(task_id=ids["video"], kind="video", lane=VIDEO_LANE, params=params["video"],
                          depends_on=tuple(ids[k] for k in FRAMES), bookcode=shot.bookcode, shot_id=shot.shot_id))
    return specs


def book_specs(shots: Iterable[Shot], lang: str, sheet_prompts: dict[str, str]) -> list[TaskSpec]:
    """Sheets for every named character (prompts given per name), then every shot's tasks."""
    shots = list(shots)
    bookcode = shots[0].bookcode if shots else ""
    specs = [sheet_spec(bookcode, name, prompt) for name, prompt in sheet_prompts.items()]
    for shot in shots:
        specs.extend(shot_specs(shot, lang))
    return specs
