"""An optional splitter that asks a chat model (OpenAI-compatible or Ollama) to group sentences.

The model sees the chapter's units (whole sentences and quotations, numbered) and answers JSON:
`{"shots": [{"units": [0, 1], "scene": 1, "location": "...", "time_of_day": "...",
"characters": ["..."]}]}`. The answer must use every unit once, in order, with scenes numbered
from 1 without going back; otherwise (or if the call fails) the rule-based result is used. So a
model can only regroup whole units: coverage and "no cut inside a sentence" hold either way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline_kit.text.segment import Unit, units
from pipeline_kit.text.shots import ShotDraft, duration
from pipeline_kit.text.splitter import RuleSplitter

Chat = Callable[[list[dict[str, str]]], str]
_TIMES = frozenset({"dawn", "morning", "noon", "afternoon", "evening", "night"})
_SYSTEM = (
    "You split a novel's chapter into storyboard shots. Group the numbered sentences, in order, into "
    "shots of about {size}; start a new scene when the place or time changes. Answer only JSON: "
    '{{"shots": [{{"units": [0, 1], "scene": 1, "location": null, "time_of_day": null, "characters": []}}]}}. '
    "Use every sentence number exactly once, in order. time_of_day is one of dawn, morning, noon, "
    "afternoon, evening, night or null."
)


@dataclass(frozen=True)
class ModelSplitter:
    """Splits with `chat(messages) -> str`; falls back to the rule-based splitter on a bad answer."""

    chat: Chat
    fallback: RuleSplitter = field(default_factory=RuleSplitter)
    version: str = "model-1"
    fallbacks: list[str] = field(default_factory=list, compare=False)  # why each fallback happened

    def split(self, text: str, lang: str) -> list[ShotDraft]:
        found = units(text, lang)
        size = "90 Chinese characters" if lang == "zh" else "3 sentences"
        listing = "\n".join(f"[{k}] {' '.join(text[u.start : u.end].split())}" for k, u in enumerate(found))
        messages = [{"role": "system", "content": _SYSTEM.format(size=size)}, {"role": "user", "content": listing}]
        try:
            return parse_answer(self.chat(messages), found, lang)
        except Exception as exc:  # a model answer is untrusted input: any failure means the rules decide
            self.fallbacks.append(f"{type(exc).__name__}: {exc}"[:200])
            return self.fallback.split(text, lang)


def parse_answer(answer: str, found: list[Unit], lang: str) -> list[ShotDraft]:
    """Validate the model's JSON against the units; raise ValueError when it does not fit."""
    match = re.search(r"\{.*\}", answer, re.S)
    if not match:
        raise ValueError("no JSON object in the answer")
    data: Any = json.loads(match.group())
    items = data.get("shots") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError("no shots list")
    if not found:
        raise ValueError("empty chapter")
    expected = 0
    last_scene = 1
    drafts: list[ShotDraft] = []
    for seq, item in enumerate(items, start=1):
        idx = item.get("units") if isinstance(item, dict) else None
        if not isinstance(idx, list) or not idx or idx != list(range(expected, expected + len(idx))):
            raise ValueError(f"shot {seq} does not continue at unit {expected}")
        expected += len(idx)
        scene = item.get("scene", last_scene)
        if not isinstance(scene, int) or not last_scene <= scene <= last_scene + 1 or seq == 1 and scene != 1:
            raise ValueError(f"shot {seq} has scene {scene!r}")
        last_scene = scene
        names = item.get("characters") or []
        if not isinstance(names, list) or not all(isinstance(n, str) and 0 < len(n) <= 100 for n in names):
            raise ValueError(f"shot {seq} has bad characters")
        place, when = item.get("location"), item.get("time_of_day")
        if place is not None and (not isinstance(place, str) or len(place) > 200):
            raise ValueError(f"shot {seq} has a bad location")
        if when is not None and when not in _TIMES:
            raise ValueError(f"shot {seq} has time_of_day {when!r}")
        members = found[idx[0] : idx[-1] + 1]
        drafts.append(
            ShotDraft(
                seq=seq,
                scene=scene,
                span_start=members[0].start,
                span_end=members[-1].end,
                location=place or None,
                time_of_day=when,
                characters=tuple(dict.fromkeys(names)),
                dialogue=any(u.dialogue for u in members),
                duration_s=duration(members, lang),
            )
        )
    if expected != len(found):
        raise ValueError(f"the shots use {expected} of {len(found)} units")
    return drafts
