"""The director's answers put to use: the prompts a shot's tasks get from them, and the cast's
looks from the book's pass in each chapter's request.

Kept apart from the director backend (no HTTP, no schema library) because every worker applies
them to the frames, videos and sheets it makes, whatever backend it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def frame_prompts(item: Mapping[str, Any], style: str, closing: str = "") -> dict[str, str]:
    """The prompts of a shot's first frame, last frame and video from the director's answer;
    `closing` (the request for a picture without lettering) ends both frames' prompts."""
    staging = f"{item['shot_size']} shot, {item['camera']}. In frame: {item['in_frame']}."
    tail = f"\n{closing}" if closing else ""
    return {
        "first_frame": f"{item['first_frame']}\n{staging}\n{item['visual']}\nStyle: {style}{tail}",
        "last_frame": f"{item['last_frame']}\n{staging}\n{item['visual']}\nStyle: {style}{tail}",
        "video": f"{item['motion']}\nCamera: {item['camera']}. Shot size: {item['shot_size']}.",
    }


def recast(message: str, looks: Mapping[str, str]) -> str:
    """A chapter request with the cast lines of its header (`- NAME: looks`, before the first
    blank line) describing each character as `looks` says, where it says anything."""
    header, sep, rest = message.partition("\n\n")
    lines = []
    for line in header.split("\n"):
        name = line[2:].split(": ", 1)[0] if line.startswith("- ") else None
        lines.append(f"- {name}: {looks[name]}" if name in looks else line)
    return "\n".join(lines) + sep + rest


def directed(task_params: Mapping[str, Any], kind: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """A frame's, video's or sheet's params with the director's prompt in place of the rules' one,
    when the director's `result` has one for it; a chapter director's requests with the looks the
    book's pass wrote; the params unchanged otherwise."""
    out = dict(task_params)
    if kind == "direct_chapter":
        looks = result.get("characters") or {}
        out["chunks"] = [
            {
                **chunk,
                "messages": [
                    *chunk["messages"][:-1],
                    {**chunk["messages"][-1], "content": recast(chunk["messages"][-1]["content"], looks)},
                ],
            }
            for chunk in task_params.get("chunks") or []
        ]
        return out
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
