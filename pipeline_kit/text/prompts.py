"""Prompts from editable templates: image and video prompts per shot, one per character sheet.

Templates are `string.Template` files (`$caption`, `$characters`, ...) in `text/templates/`; a
directory named by $PIPELINE_KIT_TEMPLATES, or passed in, overrides them file by file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template

from pipeline_kit.errors import BadInput
from pipeline_kit.ornaments import without_ornaments

TEMPLATE_ENV = "PIPELINE_KIT_TEMPLATES"
TEMPLATE_NAMES = ("image_prompt", "video_prompt", "character_sheet")
CAPTION_CHARS = {"zh": 160, "en": 400}
_BUILTIN = Path(__file__).with_name("templates")
# A sentence with the quotation closing it; English skips the dots of Mr., Mrs., Dr. and St.
_SENTENCE = {
    "zh": re.compile(r"[^。！？!?…]+(?:[。！？!?…]+[”」』’）)]*|$)"),
    "en": re.compile(r"(?:[^.!?]|(?<=\bMr)\.|(?<=\bMrs)\.|(?<=\bDr)\.|(?<=\bSt)\.)+(?:[.!?]+[”’\")\]]*|$)"),
}


@dataclass(frozen=True)
class Templates:
    """The three prompt templates in use."""

    image: Template
    video: Template
    sheet: Template

    @classmethod
    def load(cls, directory: str | Path | None = None) -> Templates:
        """Built-in templates, each replaced by `<directory>/<name>.txt` when that file exists."""
        texts = {name: load_template(name, directory) for name in TEMPLATE_NAMES}
        return cls(texts["image_prompt"], texts["video_prompt"], texts["character_sheet"])


def load_template(name: str, directory: str | Path | None = None) -> Template:
    """The template `<name>.txt` from `directory` (else $PIPELINE_KIT_TEMPLATES) when it has one,
    else the built-in one; a bad $placeholder is BadInput."""
    path = Path(directory or os.environ.get(TEMPLATE_ENV) or _BUILTIN) / f"{name}.txt"
    if not path.is_file():
        path = _BUILTIN / f"{name}.txt"
    template = Template(path.read_text(encoding="utf-8").strip())
    if not template.is_valid():
        raise BadInput(f"prompt template {name}.txt has a bad $placeholder")
    return template


def caption(text: str, lang: str) -> str:
    """The shot's text on one line, less scene-break ornaments, whitespace and italics marks
    squeezed, cut to a prompt's length."""
    flat = re.sub(r"\s+", "" if lang == "zh" else " ",
                  without_ornaments(text).replace("_", "")).strip()
    limit = CAPTION_CHARS.get(lang, 400)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def shot_size(characters: int, dialogue: bool) -> str:
    """How close the camera stands, from who is in the shot: the setting alone wide, one speaker
    close, one character at medium distance, two as a two-shot, a group wide enough to hold it."""
    if characters == 0:
        return "wide shot of the setting"
    if characters == 1:
        return "close-up" if dialogue else "medium shot"
    return "medium two-shot" if characters == 2 else "wide shot of the group"


def shot_fields(*, title: str, scene: int, seq: int, location: str | None, time_of_day: str | None,
                characters: list[str], caption_text: str, duration_s: float, dialogue: bool = False,
                descriptions: Mapping[str, str] | None = None) -> dict[str, str]:
    """The placeholders a shot's templates may use; `$cast` is each character with its bible
    description, `$shot_size` how close the camera stands."""
    looks = descriptions or {}
    return {
        "shot_size": shot_size(len(characters), dialogue),
        "title": title, "scene": str(scene), "seq": str(seq),
        "location": location or "unspecified place", "time_of_day": time_of_day or "unspecified time",
        "characters": ", ".join(characters) or "none named", "caption": caption_text,
        "cast": "; ".join(f"{n} ({looks[n]})" if looks.get(n) else n for n in characters) or "none named",
        "duration_s": f"{duration_s:g}",
    }


def image_prompt(templates: Templates, fields: dict[str, str]) -> str:
    return templates.image.safe_substitute(fields)


def frame_prompt(prompt: str, frame: str, text: str, lang: str) -> str:
    """A frame task's prompt: the shot's image prompt, pinned to its opening or closing moment by the
    action of the shot's first or last sentence (so the two frames differ by what happens)."""
    flat = re.sub(r"\s+", "" if lang == "zh" else " ", without_ornaments(text).replace("_", "")).strip()
    sentences = [m.group().strip() for m in _SENTENCE[lang].finditer(flat) if m.group().strip()]
    if frame == "first_frame":
        moment, action = "the moment the shot opens", sentences[0] if sentences else ""
    else:
        moment, action = "the moment the shot ends", sentences[-1] if sentences else ""
    return f"{prompt}\nFrame: {moment}" + (f": {caption(action, lang)}" if action else ".")


def video_prompt(templates: Templates, fields: dict[str, str]) -> str:
    return templates.video.safe_substitute(fields)


def sheet_prompt(templates: Templates, *, title: str, name: str, description: str) -> str:
    return templates.sheet.safe_substitute(title=title, name=name, description=description)
