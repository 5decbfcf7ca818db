"""The splitter interface, the rule-based splitter, and drafts turned into stored shots with prompts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pipeline_kit.text.cast import Bible, ChapterCast
from pipeline_kit.text.moments import Someone, action_line
from pipeline_kit.text.prompts import (
    NO_LOOKS,
    STYLE,
    Templates,
    caption,
    image_prompt,
    Named,
    moments,
    named_moments,
    named_subjects,
    place_prompt,
    sheet_prompt,
    shot_fields,
    talking,
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
    reading: ChapterCast | None = None,
) -> ChapterShots:
    """Give drafts their ids, source text and prompts; describe each character and place as the
    bible does (one the book never describes is said to be undescribed, never given a passage);
    the Characters line adds the unnamed people each shot stages (`reading`: the chapter as
    `cast_drafts` read it, read afresh when not given)."""
    shots: list[Shot] = []
    sheets: dict[str, str] = {}
    places: dict[str, str] = {}
    looks = descriptions(bible)
    settings = place_descriptions(bible)
    reading = reading or (ChapterCast.read(text, bible, drafts) if bible else None)
    for d in drafts:
        piece = text[d.span_start : d.span_end]
        cap = caption(piece, lang)
        staged, action_text = staging(piece, lang, d.characters, reading.shot(d) if reading else None)
        fields = shot_fields(
            title=title,
            scene=d.scene,
            seq=d.seq,
            location=d.location,
            time_of_day=d.time_of_day,
            characters=staged,
            caption_text=cap,
            action_text=action_text,
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
        if d.location in settings and d.location not in places and not a_kind_of_place(d.location, lang):
            places[d.location] = place_prompt(
                templates, title=title, name=d.location, description=settings[d.location], style=style or STYLE
            )
    return ChapterShots(tuple(shots), sheets, places)


def a_kind_of_place(name: str, lang: str) -> bool:
    """A bare one-character Chinese place word (山, 路, 家, 洞) says what kind of place a shot is
    in, not which: a journey passes many mountains, so one reference sheet for all would be wrong;
    the Setting line says it, no location sheet is drawn."""
    return lang == "zh" and len(name) == 1


def staging(text: str, lang: str, characters: Sequence[str], named: Named | None) -> tuple[list[str], str]:
    """(who the Characters line stages, the Action line) of a shot: its characters and the unnamed
    people it stages (by description, without a sheet of their own), and its moments, or them
    talking; `named`: its text as `named_subjects` read it (None: no bible)."""
    unnamed = [*named.unnamed, *(p for p in named.acted_on if isinstance(p, Someone))] if named else []
    staged = [*characters, *(p.described for p in unnamed)]
    shown = named_moments(named, lang) if named else moments(text, lang)
    return staged, action_line(shown, lang) or talking(staged)


def descriptions(bible: Bible | None) -> dict[str, str]:
    """Canonical name -> its description, for the characters the bible describes."""
    return {c.name: c.description for c in bible.characters if c.description} if bible else {}


def place_descriptions(bible: Bible | None) -> dict[str, str]:
    """Place name -> its description ("" when the book gives none), for the places in use."""
    return {p.name: p.description for p in bible.places if not p.dropped} if bible else {}


def reprompt(
    shot: Shot, *, title: str, lang: str, templates: Templates, bible: Bible | None = None, style: str | None = None
) -> tuple[str, str]:
    """(image prompt, video prompt) rendered afresh from the shot's current fields (its pronouns
    read with those it infers as the people named before it)."""
    named = named_subjects(shot.text, lang, bible.who, shot.inferred) if bible else None
    staged, action_text = staging(shot.text, lang, shot.characters, named)
    fields = shot_fields(
        title=title,
        scene=shot.scene,
        seq=shot.seq,
        location=shot.location,
        time_of_day=shot.time_of_day,
        characters=staged,
        caption_text=caption(shot.text, lang),
        action_text=action_text,
        duration_s=shot.duration_s,
        dialogue=shot.dialogue,
        descriptions=descriptions(bible),
        place_looks=place_descriptions(bible),
        style=style,
    )
    return image_prompt(templates, fields), video_prompt(templates, fields)
