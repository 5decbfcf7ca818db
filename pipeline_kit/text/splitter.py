"""The splitter interface, the rule-based splitter, and drafts turned into stored shots with prompts."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Protocol

from pipeline_kit.text.cast import Bible
from pipeline_kit.text.moments import CONTEXT, Who
from pipeline_kit.text.prompts import (
    NO_LOOKS,
    action,
    STYLE,
    Templates,
    caption,
    image_prompt,
    narration_only,
    place_prompt,
    sheet_prompt,
    shot_fields,
    video_prompt,
)
from pipeline_kit.text.records import Shot, shot_id
from pipeline_kit.text.shots import SPLITTER_VERSION, ShotDraft, split_chapter


class Splitter(Protocol):
    """Turns one chapter's text into shot drafts that tile it; `version` is recorded per chapter."""

    version: str

    def split(self, text: str, lang: str) -> list[ShotDraft]: ...


@dataclass(frozen=True)
class RuleSplitter:
    """The deterministic, offline splitter (see `pipeline_kit.text.shots`)."""

    version: str = SPLITTER_VERSION

    def split(self, text: str, lang: str) -> list[ShotDraft]:
        return split_chapter(text, lang)


@dataclass(frozen=True)
class ChapterShots:
    """A chapter's shots plus a sheet prompt for each character named and each bible place used in it."""

    shots: tuple[Shot, ...]
    sheet_prompts: dict[str, str]
    place_prompts: dict[str, str] = field(default_factory=dict)


def build_shots(
    *,
    bookcode: str,
    title: str,
    lang: str,
    chapter: int,
    text: str,
    drafts: list[ShotDraft],
    templates: Templates,
    bible: Bible | None = None,
    style: str | None = None,
) -> ChapterShots:
    """Give drafts their ids, source text and prompts; describe each character and place as the
    bible does (one the book never describes is said to be undescribed, never given a passage)."""
    shots: list[Shot] = []
    sheets: dict[str, str] = {}
    places: dict[str, str] = {}
    looks = descriptions(bible)
    settings = place_descriptions(bible)
    plain = narration_only(text)  # people named in a quotation are not the ones a pronoun means
    spans = [s for s in bible.spans(text) if plain[s[0]] != " "] if bible else []
    starts = [s for s, _, _ in spans]
    for d in drafts:
        piece = text[d.span_start : d.span_end]
        cap = caption(piece, lang)
        lo, at, hi = (bisect.bisect_left(starts, o) for o in (d.span_start - CONTEXT, d.span_start, d.span_end))
        before = [n for _, _, n in spans[lo:at]] + list(d.inferred)
        found = [(o - d.span_start, text[o:end], n) for o, end, n in spans[at:hi]]
        who = Who(lambda _, found=found: found, bible.who.genders) if bible else None
        fields = shot_fields(
            title=title,
            scene=d.scene,
            seq=d.seq,
            location=d.location,
            time_of_day=d.time_of_day,
            characters=list(d.characters),
            caption_text=cap,
            action_text=action(piece, lang, d.characters, who, before),
            duration_s=d.duration_s,
            dialogue=d.dialogue,
            descriptions=looks,
            place_looks=settings,
            style=style,
        )
        shots.append(
            Shot(
                shot_id=shot_id(bookcode, chapter, d.seq),
                bookcode=bookcode,
                chapter=chapter,
                seq=d.seq,
                scene=d.scene,
                location=d.location,
                time_of_day=d.time_of_day,
                characters=d.characters,
                text=piece,
                span_start=d.span_start,
                span_end=d.span_end,
                dialogue=d.dialogue,
                duration_s=d.duration_s,
                prompt=image_prompt(templates, fields),
                video_prompt=video_prompt(templates, fields),
                inferred=d.inferred,
            )
        )
        for name in d.characters:
            if name not in sheets:
                known = bible.by_name.get(name) if bible else None
                sheets[name] = sheet_prompt(
                    templates,
                    title=title,
                    name=name,
                    description=known.description if known and known.description else NO_LOOKS,
                )
        if d.location in settings and d.location not in places:
            places[d.location] = place_prompt(
                templates, title=title, name=d.location, description=settings[d.location], style=style or STYLE
            )
    return ChapterShots(tuple(shots), sheets, places)


def descriptions(bible: Bible | None) -> dict[str, str]:
    """Canonical name -> its description, for the characters the bible describes."""
    return {c.name: c.description for c in bible.characters if c.description} if bible else {}


def place_descriptions(bible: Bible | None) -> dict[str, str]:
    """Place name -> its description ("" when the book gives none), for the places in use."""
    return {p.name: p.description for p in bible.places if not p.dropped} if bible else {}


def reprompt(
    shot: Shot, *, title: str, lang: str, templates: Templates, bible: Bible | None = None, style: str | None = None
) -> tuple[str, str]:
    """(image prompt, video prompt) rendered afresh from the shot's current fields."""
    fields = shot_fields(
        title=title,
        scene=shot.scene,
        seq=shot.seq,
        location=shot.location,
        time_of_day=shot.time_of_day,
        characters=list(shot.characters),
        caption_text=caption(shot.text, lang),
        action_text=action(shot.text, lang, shot.characters, bible.who if bible else None, shot.inferred),
        duration_s=shot.duration_s,
        dialogue=shot.dialogue,
        descriptions=descriptions(bible),
        place_looks=place_descriptions(bible),
        style=style,
    )
    return image_prompt(templates, fields), video_prompt(templates, fields)
