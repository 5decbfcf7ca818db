"""The rule-based splitter: a chapter's units grouped into scenes and shots, deterministically.

A shot closes once it reaches the target (82 Han characters or 2.5 English sentences, calibrated
so the corpus gets about 90 Han characters or 2 to 4 sentences a shot), or earlier at a paragraph
end when it is most of the way there, or when the next unit would make it far too long. An English
dialogue paragraph (a turn) is never split. A scene breaks at a section
ornament, and at a paragraph that opens with a change of time (次日, 却说, "next morning") or a
move to a named place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline_kit.text.names import Mentions, find_mentions
from pipeline_kit.text.prompts import narration_only
from pipeline_kit.text.segment import Unit, units

SPLITTER_VERSION = "rules-1"


@dataclass(frozen=True)
class Calibration:
    """Shot size in units' weight: Han characters (zh) or sentences (en)."""

    target: float
    para_close: float  # at a paragraph end, close once this share of the target is reached
    overflow: float  # close before a unit that would pass this multiple of the target ...
    overflow_min: float  # ... if the shot already holds this share of it
    seconds_per_weight: float


CALIBRATION = {
    "zh": Calibration(target=82, para_close=0.7, overflow=1.6, overflow_min=0.4, seconds_per_weight=0.11),
    "en": Calibration(target=2.5, para_close=0.7, overflow=1.6, overflow_min=0.4, seconds_per_weight=3.0),
}
MIN_SECONDS, MAX_SECONDS = 2.0, 12.0
_SCENE_MIN_SHOTS = 2

# Times of day as narration says them. Evening runs from sunset until people go to bed (dusk, after
# dark, by lamplight, 傍晚, 天黑, 晚上); night is the dark hours (midnight, 夜里, 半夜, 深夜, 三更).
TIMES = {
    "zh": [
        ("dawn", "黎明|天明|天亮|拂晓|五更|破晓|鸡叫|天[刚才快将]*蒙蒙亮|天[刚才快将]亮|东方发白"),
        ("morning", "清晨|早晨|次早|上午|平明|一早|早上|清早|早饭"),
        ("noon", "正午|午时|中午|晌午|午饭"),
        ("afternoon", "下午|午后"),
        ("evening", "傍晚|黄昏|日落|天晚|晚间|天快黑|天黑|天擦黑|掌灯|晚上|晚饭|今晚"),
        ("night", "夜里|半夜|深夜|三更|二更|月下|当晚|是夜|夜深|今夜|夜晚|午夜"),
    ],
    "en": [
        ("dawn", r"\b(?:dawn|daybreak|sunrise|first light|cock-?crow)\b"),
        ("morning", r"\bmorning\b"),
        ("noon", r"\b(?:noon|midday)\b"),
        ("afternoon", r"\bafternoon\b"),
        ("evening", r"\b(?:evening|dusk|sunset|sundown|nightfall|twilight|after dark|(?:lamp|candle)-?light)\b"),
        ("night", r"\b(?:night|midnight|small hours)\b"),
    ],
}
_TIME_RE = {lang: [(name, re.compile(p, re.I)) for name, p in pairs] for lang, pairs in TIMES.items()}
# A time of another day or of every day (明天一早, 昨晚, every night, last night) is not the shot's.
_OTHER_DAY = {
    "zh": re.compile(r"(?:明天|明日|明儿|昨天|昨日|昨儿|前天|后天|大后天|每天|天天|每日|每)$"),
    "en": re.compile(r"\b(?:tomorrow|yesterday|every|each|last)\s+$", re.I),
}
# A time said as a deadline (天黑前回来, back before sunset, until morning) is not the shot's either.
_DEADLINE = {
    "zh": (re.compile(r"直到$"), re.compile(r"[以之]?前")),
    "en": (re.compile(r"\b(?:before|until|till)\s+$", re.I), re.compile(r"(?!)")),
}
# Any of them, as one flat alternation (its words' first characters let the search skip the rest):
# most spans name no time of day, and one search says so.
_ANY_TIME = {lang: re.compile("|".join(p for _, p in pairs), re.I) for lang, pairs in TIMES.items()}
_TIME_SHIFT = {
    "zh": re.compile(r"^\s*(?:次日|明日|翌日|第二日|第二天|却说|话表|且说|话说|当晚|是夜|天明|不一日|不觉)"),
    "en": re.compile(
        r"^\W*(?:(?:the )?next (?:morning|day|evening)|that (?:evening|night|morning)|"
        r"the following (?:day|morning|evening)|(?:an|some|two|three) hours? later|"
        r"(?:a|some|two|three) days? later)\b",
        re.I,
    ),
}
# A scene that opens with one of these has moved on in time: its time of day is not the last one's.
_TIME_PASSES = {
    "zh": re.compile(
        r"次日|明日|翌日|第二|后来|过了|数日|几日|几天|多年|一年|半月|不一日|不觉|却说|话表|且说|话说|再说|那日|一日"
    ),
    "en": re.compile(r"\b(?:later|next|following|afterwards|meanwhile|weeks?|months?|years?|days?|since)\b", re.I),
}
_MOVE = {
    "zh": re.compile(r"来到|到了|来至|到得|进了|入了|回到|离了"),
    "en": re.compile(r"\b(?:arrived|reached|came to|went to|drove to|entered|returned to|set off for)\b", re.I),
}


@dataclass(frozen=True)
class ShotDraft:
    """One shot before it gets its id and prompts: a span of the chapter and what it shows."""

    seq: int
    scene: int
    span_start: int
    span_end: int
    location: str | None
    time_of_day: str | None
    characters: tuple[str, ...]
    dialogue: bool
    duration_s: float
    inferred: tuple[str, ...] = ()  # characters named from a pronoun (he/she, 他/她), not the text


def split_chapter(text: str, lang: str) -> list[ShotDraft]:
    """Shots of one chapter, tiling its text in order (the rule-based splitter)."""
    found = units(text, lang)
    return describe(text, lang, group(found, lang, text), find_mentions(text, lang))


def group(found: list[Unit], lang: str, text: str) -> list[tuple[list[Unit], bool]]:
    """Units grouped into shots; the flag says the shot opens a new scene."""
    cal = CALIBRATION[lang]
    turn = _dialogue_paragraphs(found) if lang == "en" else [False] * len(found)
    shots: list[tuple[list[Unit], bool]] = []
    current: list[Unit] = []
    weight = 0.0
    opens_scene = True
    shots_in_scene = 0
    for k, unit in enumerate(found):
        new_scene = unit.ornament or (
            unit.para_start and shots_in_scene >= _SCENE_MIN_SHOTS and _scene_cue(text, unit, lang)
        )
        close = bool(current) and (
            new_scene
            or (not turn[k] or unit.para_start)
            and (
                weight >= cal.target
                or unit.para_start
                and weight >= cal.para_close * cal.target
                or weight + unit.weight > cal.overflow * cal.target
                and weight >= cal.overflow_min * cal.target
            )
        )
        if close and current[-1].ornament and not new_scene:
            close = False  # an ornament always opens the shot after it
        if close:
            shots.append((current, opens_scene))
            shots_in_scene += 1
            current, weight, opens_scene = [], 0.0, False
        if new_scene and shots:  # the shot just closed, so this unit opens the new scene
            opens_scene, shots_in_scene = True, 0
        current.append(unit)
        weight += unit.weight
    if current:
        shots.append((current, opens_scene))
    return shots


def describe(text: str, lang: str, grouped: list[tuple[list[Unit], bool]], mentions: Mentions) -> list[ShotDraft]:
    """Number scenes and shots and attach characters, place, time of day and duration. The time of
    day is the last one the narration names (else one the talk names, while none is known), kept
    across a scene break that does not move on in time (a ruled-off crossing the same evening), not
    across one that does (next morning, 次日)."""
    drafts: list[ShotDraft] = []
    narration = narration_only(text)  # talk of "at night" on a morning tells no time of day
    scene = 0
    place: str | None = None
    when: str | None = None
    for seq, (members, opens) in enumerate(grouped, start=1):
        start, end = members[0].start, members[-1].end
        if opens:
            scene += 1
            place = _first_place(mentions, start, text, grouped, seq)
            when = None if seq == 1 or _TIME_PASSES[lang].search(_first_sentence(narration[start:end])) else when
        people, places = mentions.between(start, end)
        place = places[-1] if places else place
        when = _time_of_day(narration[start:end], lang) or when or _time_of_day(text[start:end], lang, talk=True)
        drafts.append(
            ShotDraft(
                seq=seq,
                scene=scene,
                span_start=start,
                span_end=end,
                location=place,
                time_of_day=when,
                characters=tuple(people),
                dialogue=any(u.dialogue for u in members),
                duration_s=duration(members, lang),
            )
        )
    return drafts


def duration(members: list[Unit], lang: str) -> float:
    """Estimated seconds on screen, from the shot's weight, clamped and rounded to half seconds."""
    seconds = sum(u.weight for u in members) * CALIBRATION[lang].seconds_per_weight
    return round(min(MAX_SECONDS, max(MIN_SECONDS, seconds)) * 2) / 2


def _dialogue_paragraphs(found: list[Unit]) -> list[bool]:
    """For each unit: does it belong to a paragraph holding a quotation (a dialogue turn)?"""
    flags = [False] * len(found)
    k = 0
    while k < len(found):
        j = k + 1
        while j < len(found) and not found[j].para_start:
            j += 1
        turn = any(u.dialogue for u in found[k:j])
        flags[k:j] = [turn] * (j - k)
        k = j
    return flags


def _scene_cue(text: str, unit: Unit, lang: str) -> bool:
    head = text[unit.start : unit.end]
    return bool(_TIME_SHIFT[lang].search(head) or _MOVE[lang].search(head[:60]))


def _time_of_day(span: str, lang: str, talk: bool = False) -> str | None:
    """The time of day the span names last (下午…傍晚: evening), None if it names none; a time of
    another day or of every day (让她明天一早送去, every night) is none, and in `talk` a deadline
    too (说天黑前回来, "be back before sunset"; the narration's "an hour before sunset" is then)."""
    if not _ANY_TIME[lang].search(span):
        return None
    found = [
        (m.start(), name)
        for name, pattern in _TIME_RE[lang]
        for m in pattern.finditer(span)
        if not _OTHER_DAY[lang].search(span, max(0, m.start() - 12), m.start())
        and not (talk and _DEADLINE[lang][0].search(span, max(0, m.start() - 8), m.start()))
        and not (talk and _DEADLINE[lang][1].match(span, m.end()))
    ]
    return max(found)[1] if found else None


def _first_sentence(span: str) -> str:
    """The span's first sentence (a scene's opening: The crossing took half an hour.)."""
    return re.split(r"(?<=[.!?。！？])", span.strip(), maxsplit=1)[0]


def _first_place(
    mentions: Mentions, start: int, text: str, grouped: list[tuple[list[Unit], bool]], seq: int
) -> str | None:
    """The first place named in the scene that opens at shot `seq` (scenes without one: None)."""
    end = len(text)
    for members, opens in grouped[seq:]:
        if opens:
            end = members[0].start
            break
    _, places = mentions.between(start, end)
    return places[0] if places else None
