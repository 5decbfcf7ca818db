"""Prompts from editable templates: image and video prompts per shot, one per character sheet.

Templates are `string.Template` files (`$caption`, `$characters`, ...) in `text/templates/`; a
directory named by $PIPELINE_KIT_TEMPLATES, or passed in, overrides them file by file.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from string import Template
from typing import Any

from pipeline_kit.errors import BadInput
from pipeline_kit.ornaments import without_ornaments
from pipeline_kit.text.moments import (
    kin_owner,
    MOMENT_SEP,
    Referent,
    Someone,
    Who,
    mentioned,
    note,
    objects,
    plural_subject,
    referred_back,
    someones,
    staged,
    subjects,
)

TEMPLATE_ENV = "PIPELINE_KIT_TEMPLATES"
TEMPLATE_NAMES = ("image_prompt", "video_prompt", "character_sheet", "location_sheet")
CAPTION_CHARS = {"zh": 160, "en": 400}
_BUILTIN = Path(__file__).with_name("templates")
# A sentence with the quotation closing it; English skips the dots of Mr., Mrs., Dr. and St.
_SENTENCE = {
    "zh": re.compile(r"[^。！？!?…]+(?:[。！？!?…]+[”」』’）)]*|$)"),
    "en": re.compile(r"(?:[^.!?]|(?<=\bMr)\.|(?<=\bMrs)\.|(?<=\bDr)\.|(?<=\bSt)\.)+(?:[.!?]+[”’\")\]]*|$)"),
}


@dataclass(frozen=True)
class Templates:
    """The prompt templates in use."""

    image: Template
    video: Template
    sheet: Template
    place: Template

    @classmethod
    def load(cls, directory: str | Path | None = None) -> Templates:
        """Built-in templates, each replaced by `<directory>/<name>.txt` when that file exists."""
        texts = {name: load_template(name, directory) for name in TEMPLATE_NAMES}
        return cls(texts["image_prompt"], texts["video_prompt"], texts["character_sheet"], texts["location_sheet"])


class PromptTemplate(Template):
    """A `string.Template` cut at its placeholders once: a split fills 15,000 prompts, and
    `Template.safe_substitute`, which reads the whole text again for each, took three times as long."""

    @cached_property
    def _pieces(self) -> list[tuple[str, str | None, str]]:
        """(text before, placeholder name or None, the placeholder as written) up to each
        placeholder, then the text after the last; $$ and a stray $ as safe_substitute leaves them."""
        pieces, at = [], 0
        for m in self.pattern.finditer(self.template):
            before, named = self.template[at : m.start()], m.group("named") or m.group("braced")
            if named is None:
                before += self.delimiter if m.group("escaped") is not None else m.group()
            pieces.append((before, named, m.group()))
            at = m.end()
        return [*pieces, (self.template[at:], None, "")]

    def safe_substitute(self, mapping: Mapping[str, object] | None = None, /, **kws: object) -> str:
        """As `Template.safe_substitute`: each placeholder by its value, one without a value as written."""
        values = kws if mapping is None else {**mapping, **kws} if kws else mapping
        return "".join(
            [
                before if name is None else before + (str(values[name]) if name in values else as_written)
                for before, name, as_written in self._pieces
            ]
        )


def load_template(name: str, directory: str | Path | None = None) -> Template:
    """The template `<name>.txt` from `directory` (else $PIPELINE_KIT_TEMPLATES) when it has one,
    else the built-in one; a bad $placeholder is BadInput."""
    path = Path(directory or os.environ.get(TEMPLATE_ENV) or _BUILTIN) / f"{name}.txt"
    if not path.is_file():
        path = _BUILTIN / f"{name}.txt"
    template = PromptTemplate(path.read_text(encoding="utf-8").strip())
    if not template.is_valid():
        raise BadInput(f"prompt template {name}.txt has a bad $placeholder")
    return template


NO_LETTERING = "No text in the picture: no lettering, captions, subtitles or speech bubbles."
STYLE = "cinematic still, consistent character design, 16:9"
NO_LOOKS = "the book does not describe their looks: keep them plain and fitting the story's time and place"
# Spoken words in quotation marks (straight, curly, corner brackets), never put in an image prompt.
_QUOTED = re.compile(r"“[^”]*(?:”|$)|「[^」]*(?:」|$)|『[^』]*(?:』|$)|\"[^\"]*(?:\"|$)|‘[^’]{2,}’")
_VERBS = (
    r"said|says|cried|asked|answered|replied|whispered|shouted|added|called|murmured|exclaimed|remarked|observed"
    r"|continued|returned|repeated|muttered|interrupted|inquired|enquired|suggested|explained|protested|growled"
    r"|gasped|urged|insisted|responded|began|went on|broke in|put in"
)
_SPEAKER = (
    r"(?:(?:(?:Mr|Mrs|Dr|Miss|Ms)\.? )?[A-Z][\w’'-]*(?: [A-Z][\w’'-]*)?|he|she|they|I|we"
    r"|(?:the|my|our|his|her|their)(?: \w+){1,2}?)"
)
# How a tag after a quotation may end: a manner (gloomily, with deference, in his quiet way) up to
# the end of the sentence, before a comma or an "and" that goes on with what the speaker does.
_TAG_END = (
    r"(?: \w+ly)?(?:,? (?:with|in) [^.,;:!?“”\"]{1,40}(?=[.!?]?\s*$))?(?=[\s,.;:—-]*(?:$|[.!?,;—]| and\b| then\b))"
)
# A speech tag: right after a quotation (“…,” said Wren / Jory answered) or right before one
# (Wren said, “…” / 悟空道：“…”), a clause of its own (…for a while before he answered, “…” keeps
# its clause); only those go, the narration around them stays.
_TAG_AFTER = {
    "en": re.compile(rf"^[\s,.;:—-]*(?:(?:{_VERBS})\s+{_SPEAKER}|{_SPEAKER}\s+(?:{_VERBS})){_TAG_END}[\s,.;:—-]*"),
    "zh": re.compile(r"^[\s，,。]*"),
}
_CLOSES = {"”": "“", "」": "「", "』": "『"}
_OPENS = {opening: closing for closing, opening in _CLOSES.items()}
_MISPRINTED_OPEN = re.compile(r"([：:]\s*)”")
_MARKS = re.compile(f"[{''.join(_CLOSES)}{''.join(_OPENS)}]")
_ENDED = re.compile(r"[.。!！?？…]$")
_FULL_STOP = {"zh": "。", "en": "."}
_TAG_TAIL = 60  # a speech tag before a quotation is within this many characters of it
_TAG_BEFORE = {
    "en": re.compile(
        rf"(?:^|(?<=[.!?,;:—”\"]))[\s,;:—-]*\b(?:{_SPEAKER}\s+(?:{_VERBS})|(?:{_VERBS})\s+{_SPEAKER})[\s,.;:—-]*$", re.I
    ),
    "zh": re.compile(r"[^，。！？；：“”]{0,8}(?:笑道|说道|问道|答道|叫道|喝道|道|曰|说|问|答|叫)[：:，,]?\s*$"),
}


@lru_cache(maxsize=4096)
def unspoken(text: str, lang: str) -> str:
    """The text less its spoken words: quotations removed, a bare speech tag (he said, 悟空道)
    left as nothing, so an image prompt shows what happens, never what is said."""
    split = _QUOTED.split(_orphans_out(without_ornaments(text)))
    pieces = []
    for k, piece in enumerate(split):
        if k > 0:
            piece = _TAG_AFTER[lang].sub("", piece)
        if k < len(split) - 1:  # a tag ends the piece: only its tail is searched
            piece = piece[:-_TAG_TAIL] + _TAG_BEFORE[lang].sub("", piece[-_TAG_TAIL:])
        if piece := piece.strip(" ,，:：;；—-"):  # a quotation between two pieces ends a sentence
            pieces.append(piece if _ENDED.search(piece) else piece + _FULL_STOP.get(lang, "."))
    return re.sub(r"\s+", " " if lang != "zh" else "", " ".join(pieces)).strip(" ,，:：;；—-")


def _orphans_out(text: str) -> str:
    """The text less the speech a closing mark ends that no mark opened here (a quotation begun
    before the shot, or a book that left out its opening mark): from the colon that introduced
    it (吃惊的说：哙，亮起来了。”), else from where the text or the last quotation ended. A closing
    mark right after a colon (八戒道：”分开了…) is a misprinted opening one."""
    text = _MISPRINTED_OPEN.sub(r"\1“", text)
    depth = dict.fromkeys(_CLOSES, 0)
    out, start = [], 0
    for m in _MARKS.finditer(text):  # the quotation marks alone, not every character
        k, ch = m.start(), m.group()
        if ch in depth:
            if depth[ch]:
                depth[ch] -= 1
                continue
            colon = max(text.rfind("：", start, k), text.rfind(":", start, k))
            out.append(text[start:colon] if colon >= 0 else "")
            start = k + 1
        elif ch in _OPENS:
            depth[_OPENS[ch]] += 1
    return "".join(out) + text[start:]


def narration_only(text: str) -> str:
    """The text with its quotations blanked out (offsets kept): who is named outside speech."""
    return _QUOTED.sub(lambda m: " " * len(m.group()), text)


@lru_cache(maxsize=4096)
def caption(text: str, lang: str) -> str:
    """The shot's text on one line, less scene-break ornaments, whitespace and italics marks
    squeezed, cut to a prompt's length."""
    flat = re.sub(r"\s+", "" if lang == "zh" else " ", without_ornaments(text).replace("_", "")).strip()
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


def shot_fields(
    *,
    title: str,
    scene: int,
    seq: int,
    location: str | None,
    time_of_day: str | None,
    characters: list[str],
    caption_text: str,
    duration_s: float,
    dialogue: bool = False,
    descriptions: Mapping[str, str] | None = None,
    action_text: str | None = None,
    place_looks: Mapping[str, str] | None = None,
    style: str | None = None,
) -> dict[str, str]:
    """The placeholders a shot's templates may use; `$cast` is each character with its bible
    description, `$shot_size` how close the camera stands, `$action` what happens (the shot's
    moments, `splitter.staging`: never its words), `$style` the book's look."""
    looks = descriptions or {}
    return {
        "shot_size": shot_size(len(characters), dialogue),
        "title": title,
        "scene": str(scene),
        "seq": str(seq),
        "location": (
            f"{location} ({place_looks[location]})" if location and (place_looks or {}).get(location) else location
        )
        or "unspecified place",
        "time_of_day": time_of_day or "unspecified time",
        "characters": ", ".join(characters) or "none named",
        "caption": caption_text,
        "cast": "; ".join(f"{n} ({looks[n]})" if looks.get(n) else n for n in characters) or "none named",
        "action": action_text if action_text is not None else caption_text,
        "style": style or STYLE,
        "duration_s": f"{duration_s:g}",
    }


def image_prompt(templates: Templates, fields: dict[str, str]) -> str:
    return templates.image.safe_substitute(fields)


def frame_prompt(prompt: str, frame: str, text: str, lang: str, characters: Sequence[str] = ()) -> str:
    """A frame task's prompt: the shot's image prompt pinned to one moment, the first (or last)
    of the moments its Action line names (the ones `splitter.staging` found there, or a person's edit of
    them), else of what its text shows someone doing (`moments`); a shot that is all talk shows
    its people talking. The last frame continues the first one (drawn from it where the provider
    takes a reference). Every frame asks for a picture without lettering."""
    found = _action_moments(prompt, lang) or moments(text, lang) or [talking(characters)]
    if frame == "first_frame":
        moment, action = "the moment the shot opens", found[0]
    else:
        moment = "the moment the shot ends, a continuation of the first frame (same place, light and people)"
        action = found[-1]
    return f"{prompt}\nFrame: {moment}: {action}\n{NO_LETTERING}"


_ACTION_LINE = re.compile(r"^Action: *(.+)$", re.M)


def _action_moments(prompt: str, lang: str) -> list[str]:
    """The moments an image prompt's Action line names (see `action_line`), if it has one."""
    m = _ACTION_LINE.search(prompt)
    return [p for p in m.group(1).strip().split(MOMENT_SEP[lang]) if p] if m else []


def moments(
    text: str, lang: str, who: Who | None = None, before: Sequence[Referent] = (), present: Sequence[str] = ()
) -> list[str]:
    """What the shot shows someone doing, one short clause per moment (`staged`), from its
    sentences less speech and less the ones that only describe someone, each subject pronoun
    named (`named_subjects`)."""
    if who is None:
        return staged(_happenings(text, lang), lang)
    return named_moments(named_subjects(text, lang, who, before, present), lang)


def named_moments(named: Named, lang: str) -> list[str]:
    """The moments of a text whose subject pronouns are named (see `moments`)."""
    return staged(_happenings(named.text, lang), lang, named.written)


@dataclass(frozen=True)
class Named:
    """A shot's text with its subject pronouns named, and whom the shot stages: the characters
    its narration names, speaks to by name or means by a pronoun (he, they; her of "looked at her"),
    and unnamed people."""

    text: str
    written: frozenset[str]  # the people as the text now writes them: a sentence with one has a person
    people: tuple[str, ...]  # the characters staged, canonical names
    inferred: tuple[str, ...]  # those of them only a pronoun names
    unnamed: tuple[Someone, ...]  # people without a name it stages
    acted_on: tuple[Referent, ...] = ()  # whom an object pronoun means (looked at her): in the picture too


# A name in speech that the speaker says to its holder: opening the quotation or after a comma,
# with a title before it at most (“Hetty, what…”, “Let them go, Pike.”, “周掌柜，你外甥来了”).
_ADDRESS_BEFORE = {
    "en": re.compile(r"(?:^|,\s*)(?:(?:[A-Z][\w.]*|dear|my)\s+)?$"),
    "zh": re.compile(r"(?:^|[，,])[^，。！？“”\s]{0,2}$"),
}
_ADDRESS_AFTER = {"en": re.compile(r"^\s*[,.!?]"), "zh": re.compile(r"^[，,！!？?。]")}
_ECHO = re.compile(r"^\s*[?？]\s*[”」\"]?$")  # "Crake?": the name asked about, not called


def _offset(found: tuple[int, Any]) -> int:
    return found[0]


def named_subjects(
    text: str, lang: str, who: Who, before: Sequence[Referent] = (), present: Sequence[str] = ()
) -> Named:
    """The text with each he/she (他/她) opening a sentence or clause of its narration replaced by
    the person it means (`subjects`: never by someone named only in a quotation; `before`: the
    people named before the text, characters and unnamed, in order), and whom it stages: who
    its narration names or brings in (An old man in a blue coat…), who is spoken to by name,
    who a pronoun means, and for a they (他们) the characters `present` (there before it)."""
    found = who.find(text)
    quotes = [(q.start(), q.end()) for q in _QUOTED.finditer(text)]
    ends = [end for _, end in quotes]

    def quote_of(offset: int) -> tuple[int, int] | None:
        k = bisect.bisect_right(ends, offset)
        return quotes[k] if k < len(quotes) and quotes[k][0] <= offset else None

    narrated = [(o, w, n) for o, w, n in found if quote_of(o) is None]
    spoken_to = [n for o, w, n in found if (q := quote_of(o)) and _addressed(text, q, o, w, lang)]
    plain = narration_only(text)
    earlier = [r for r in before if isinstance(r, Someone)]
    brought = brought_in(plain, lang, [(o, o + len(w)) for o, w, _ in narrated], earlier)
    known = earlier + [p for _, p in brought]
    back = referred_back(plain, lang, [(-1, p) for p in earlier] + brought)  # 那人, the stranger
    refs = sorted([(o, n) for o, _, n in narrated] + brought + mentioned(plain, lang, known) + back, key=lambda r: r[0])
    written = {w for _, w, _ in narrated} | {p.words for _, p in refs if isinstance(p, Someone)}
    last: dict[str | None, Referent] = {}
    note(last, before, who.genders)
    history = list(before)  # everyone named or meant so far, in order: whom an object pronoun means
    out, at, resolved, acted, plural = [], 0, [], [], False
    for quote in [*quotes, None]:
        end = quote[0] if quote else len(text)
        for s in _SENTENCE[lang].finditer(text, at, end):
            (start, stop), said = s.span(), s.group()
            here = [(o - start, r) for o, r in refs if start <= o < stop]
            sentence, meant = subjects(said, lang, here, last, who.genders, written)
            out += [text[at:start], sentence]
            plural = plural or plural_subject(said, lang)
            both = [*here, *meant]
            mentioned_here = [r for _, r in sorted(both, key=_offset)] if both else []
            resolved += [r for _, r in meant]
            acted += objects(said, lang, history, mentioned_here, who.genders)
            history += mentioned_here
            if both:
                note(last, [r for _, r in sorted(both, key=_offset, reverse=True)], who.genders)
            at = stop
        out.append(text[at:end])
        if quote:
            out.append(text[quote[0] : quote[1]])
            at = quote[1]
    names = [n for o, w, n in narrated if not kin_owner(text, o + len(w), lang)] + spoken_to
    staged_people = dict.fromkeys([*names, *(r for r in resolved if isinstance(r, str))])
    if plural:
        staged_people.update(dict.fromkeys(present))
    unnamed = [p for _, p in refs if isinstance(p, Someone)] + [r for r in resolved if isinstance(r, Someone)]
    return Named(
        "".join(out),
        frozenset(written | {r if isinstance(r, str) else r.words for r in resolved}),
        tuple(staged_people),
        tuple(n for n in staged_people if n not in names),
        tuple(dict.fromkeys(unnamed)),
        tuple(r for r in dict.fromkeys(acted) if r not in staged_people and r not in unnamed),
    )


_OPENING = 80  # characters of the next sentence read to see it describe someone (<name> was a…)


def unnamed_in(plain: str, lang: str, named: Sequence[tuple[int, int]]) -> list[tuple[int, Someone]]:
    """(offset, person) of everyone the narration `plain` brings in unnamed (`brought_in`, first),
    then meets again by what they are (the old man) or by a word for anyone new (那人, the stranger)."""
    brought = brought_in(plain, lang, named)
    own = {o for o, _ in named}  # 那妇人 where 妇人 is a character: hers
    again = [(o, p) for o, p in mentioned(plain, lang, [p for _, p in brought]) if o not in own]
    return brought + again + referred_back(plain, lang, brought)


def brought_in(
    plain: str, lang: str, named: Sequence[tuple[int, int]], known: Sequence[Someone] = ()
) -> list[tuple[int, Someone]]:
    """(offset, person) of the unnamed people the narration `plain` brings in (`someones`), less
    the ones its next sentence names by describing (船头坐着一个老汉。老陈是个黑瘦的老船夫: 老陈) and
    the characters' own mentions; `named`: (start, end) of each character's mention; one brought
    in again (an old man…, the old man said) is the first of that name, or of `known` before."""
    opening = {o for o, _ in named}
    bounds = opening | {e for _, e in named}
    first: dict[str, Someone] = {p.name: p for p in reversed(known)}
    out = []
    for o, person in someones(plain, lang):
        if o + len(person.described) in bounds:
            continue  # a character's own mention (the inspector, 一个…妇人) or one named (女儿秀英)
        end = _SENTENCE[lang].match(plain, o)
        after = end.end() if end else len(plain)
        gap = plain[after : after + _OPENING]
        after += len(gap) - len(gap.lstrip())
        if not (after in opening and _STATE[lang].match(plain[after : after + _OPENING])):
            out.append((o, first.setdefault(person.name, person)))  # the old man again is the one before
    return out


def _addressed(text: str, quote: tuple[int, int], offset: int, written: str, lang: str) -> bool:
    """Is the name at `offset` inside `quote` said to its holder (see _ADDRESS_BEFORE)? A quotation
    that is the name and a question mark alone ("Crake?" she asked) asks about them."""
    after = text[offset + len(written) : quote[1]]
    return bool(
        _ADDRESS_BEFORE[lang].search(text[quote[0] + 1 : offset])
        and _ADDRESS_AFTER[lang].match(after)
        and not (_ECHO.match(after) and not text[quote[0] + 1 : offset].strip())
    )


def talking(characters: Sequence[str]) -> str:
    """What a shot that is all talk shows."""
    return f"{' and '.join(characters[:3])} talking" if characters else "the speaker mid-sentence"


@lru_cache(maxsize=1024)
def _unspoken_sentences(text: str, lang: str) -> list[str]:
    """The sentences of what the text shows happening (a shot's two frames ask for the same)."""
    flat = re.sub(r"\s+", "" if lang == "zh" else " ", unspoken(text, lang).replace("_", "")).strip()
    return [a for m in _SENTENCE[lang].finditer(flat) if (a := m.group().strip(" ,，:：;；—-"))]


# A sentence that tells what someone is like or who they are, not what happens (the Characters
# line carries looks): "Mr. Marsh was a thin man in a black coat", "She was Ada Vell",
# "她是个矮胖的老妇人", "他五十来岁，秃顶", "他就是场主赵德福".
_STATE = {
    "zh": re.compile(
        r"^[^，。]{0,6}?(?:是个|是一个|生得|长得|(?:就|便|正|乃|原来)是|[一二三四五六七八九十几两]+来?岁)"
    ),
    "en": re.compile(
        r"^[^,;]{0,40}? (?:was|is|seemed|looked like) "
        r"(?:an? |of (?:about |some )?\w+ years|[A-Z][\w’'-]+(?: [A-Z][\w’'-]+)?\W*$)"
    ),
}


def _happenings(text: str, lang: str) -> list[str]:
    """The sentences a frame can show: what the shot shows happening, less the ones that only
    describe someone (unless that is all it has)."""
    sentences = _unspoken_sentences(text, lang)
    return [s for s in sentences if not _STATE[lang].match(s)] or sentences


def video_prompt(templates: Templates, fields: dict[str, str]) -> str:
    return templates.video.safe_substitute(fields)


def sheet_prompt(templates: Templates, *, title: str, name: str, description: str) -> str:
    """A character sheet's prompt: the person as the book describes them, with no lettering (a
    sheet's views invite labels)."""
    return templates.sheet.safe_substitute(title=title, name=name, description=description, no_lettering=NO_LETTERING)


def place_prompt(templates: Templates, *, title: str, name: str, description: str, style: str = STYLE) -> str:
    """A location sheet's prompt: the place alone, as the book describes it, in the book's style."""
    return templates.place.safe_substitute(
        title=title, name=name, description=description or name, style=style, no_lettering=NO_LETTERING
    )
