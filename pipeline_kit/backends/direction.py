"""The director's answers put to use: the prompts a shot's tasks get from them.

Kept apart from the director backend (no HTTP, no schema library) because every worker applies
them to the frames, videos and sheets it makes, whatever backend it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def frame_prompts(item: Mapping[str, Any], style: str) -> dict[str, str]:
    """The prompts of a shot's first frame, last frame and video from the director's answer."""
    staging = f"{item['shot_size']} shot, {item['camera']}. In frame: {item['in_frame']}."
    return {
        "first_frame": f"{item['first_frame']}\n{staging}\n{item['visual']}\nStyle: {style}",
        "last_frame": f"{item['last_frame']}\n{staging}\n{item['visual']}\nStyle: {style}",
        "video": f"{item['motion']}\nCamera: {item['camera']}. Shot size: {item['shot_size']}.",
    }


def directed(task_params: Mapping[str, Any], kind: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """A frame's, video's or sheet's params with the director's prompt in place of the rules' one,
    when the director's `result` has one for it; the params unchanged otherwise."""
    out = dict(task_params)
    if kind == "character_sheet":
        looks = (result.get("characters") or {}).get(str(task_params.get("name")))
        if looks:
            out["prompt"] = f"{task_params.get('prompt', '')}\nLooks: {looks}"
            out["directed"] = True
        return out
    item = (result.get("shots") or {}).get(str(task_params.get("seq")))
    if not item:
        return out
    prompts = item["prompts"]
    if kind == "video":
        out["video_prompt"] = prompts["video"]
    elif kind in prompts:
        out["prompt"] = prompts[kind]
    out["directed"] = True
    return out
