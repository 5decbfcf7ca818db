"""What a shot shows happening, as an image prompt can say it: who does what, one short clause per
moment, never the novel's paragraph.

A shot's sentences (its spoken words already out) are staged: a leading he/she (他/她) becomes
the person it refers to, the last one named before it with that gender (a person whose gender
the text never told fits either), so the picture's subject has a name; the sentences where
someone acts are kept (all of them when nobody does); each is cut to its head: the clauses
before the first one with a person go (In the morning, 天快黑的时候), an apposition after a
name goes (Silas Ardent, her father, was waiting), and what is left is clipped to a few words
at a clause or phrase boundary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

CONTEXT = 600  # a leading pronoun may mean a person named this many characters before the shot
MOMENTS = 3  # the Action line names at most this many moments: the first, the middle, the last
WORDS = 14  # an English moment is at most this many words ...
MIN_WORDS = 5  # ... and, where its clauses allow, no fewer than this
CHARS = 26  # a Chinese moment is at most this many characters ...
MIN_CHARS = 6  # ... and no fewer, where its clauses allow
_CLAUSE = {"en": re.compile(r"\s*(?:[,;:—]+|\s-\s)\s*"), "zh": re.compile(r"[，,；;：:、—]+")}
_JOIN = {"en": ", ", "zh": "，"}
MOMENT_SEP = {"en": "; ", "zh": "；"}  # between an Action line's moments (no moment holds one)
_EN_PRONOUN = re.compile(r"^(?:(?P<lead>[A-Z][a-z]+) )?(?P<p>[Hh]e|[Ss]he)\b(?![’'])")
_ZH_PRONOUN = re.compile(r"^(?P<lead>)(?P<p>[他她])(?![们])")
# A sentence's subject pronoun: He/She opening it, or he/she after a short opening clause.
_LEADING = {
    "en": re.compile(r"^\s*(?:[^,;.!?]{1,30}, )?(?:(?P<lead>[A-Z][a-z]+) )?(?P<p>[Ss]?[Hh]e)\b(?![’'])"),
    "zh": re.compile(r"^\s*(?:[^，。！？]{1,8}，)?(?P<lead>)(?P<p>[他她])(?![们])"),
}
_GENDER = {"he": "male", "she": "female", "他": "male", "她": "female"}
# Where a long English clause is cut: before a preposition or conjunction that starts a phrase.
_EN_CUT = frozenset("with and but while as in on at to from into onto by for of where when which who that".split())
_EN_NAME_ONLY = re.compile(r"^(?:(?:[Tt]he|[Oo]ld|[Yy]oung) )?(?:[A-Z][\w’'.-]*(?: |$))+$")


@dataclass(frozen=True)
class Who:
    """Where a text names a person, (offset, the name as written, the canonical name), and each
    person's gender (None: the text never told it), to tell whom a leading pronoun means (a
    split's `find` hands back the shot's mentions, found once for the chapter)."""

    find: Callable[[str], Sequence[tuple[int, str, str]]]
    genders: Mapping[str, str | None]


def staged(sentences: Sequence[str], lang: str, people: Collection[str] | None = None) -> list[str]:
    """The shot's moments: the sentences where someone acts (one naming any of `people`, as
    written, or opening with a pronoun; every sentence when none does or `people` is None, no
    cast known), each cut to its head (see the module's docstring)."""
    heads = [_head(sentence, lang, people) for sentence in sentences]
    kept = [h for h, person in heads if person or people is None] or [h for h, _ in heads]
    return [m for m in dict.fromkeys(_clipped(h, lang) for h in kept) if m]


def named_subject(
    sentence: str, lang: str, last: Mapping[str | None, str], people: Collection[str]
) -> tuple[str, str | None]:
    """The sentence with its leading he/she (他/她; after a short opening clause too: Inside, he
    sat) replaced by the last person named with that gender (else the last whose gender is
    unknown), and the name put in (None: none); `people`: names as the text writes them."""
    m = _LEADING[lang].match(sentence)
    if not m or not _subject(m, sentence, people):
        return sentence, None
    name = last.get(_GENDER[m.group("p").lower()]) or last.get(None)
    if name is None:
        return sentence, None
    return sentence[: m.start("p")] + name + sentence[m.end("p") :], name


def _subject(m: re.Match[str], sentence: str, people: Collection[str]) -> bool:
    """Is the pronoun `m` found the sentence's subject: not a lower-case he opening it (“…,” he
    said: a speech tag's), nor one after a name (Abel he…)?"""
    if m.group("p").islower() and not sentence[: m.start("p")].strip():
        return False
    return m.group("lead") not in people


def note(last: dict[str | None, str], names: Iterable[str], who: Who) -> None:
    """Note `names`, in order, as the last named of their genders."""
    for name in names:
        last[who.genders.get(name)] = name


def action_line(moments: Sequence[str], lang: str) -> str:
    """The moments an Action line names: the first, the middle and the last, at most MOMENTS."""
    if len(moments) > MOMENTS:
        moments = [moments[0], moments[len(moments) // 2], moments[-1]]
    return MOMENT_SEP[lang].join(moments)


def _head(sentence: str, lang: str, people: Collection[str] | None) -> tuple[str, bool]:
    """The sentence from its first clause with a person in it (a name or a leading pronoun), less
    an apposition right after a name, and whether it has a person; unchanged when it has none."""
    clauses = [c for c in _CLAUSE[lang].split(sentence.rstrip(" .。!！?？…")) if c]
    person = next((k for k, c in enumerate(clauses) if _has_person(c, lang, people)), None)
    clauses = clauses[person or 0 :]
    if lang == "en" and len(clauses) >= 3 and _EN_NAME_ONLY.match(clauses[0]) and clauses[1][:1].islower():
        clauses = [clauses[0] + " " + clauses[2], *clauses[3:]]  # Silas Ardent, her father, was waiting
    return _JOIN[lang].join(clauses), person is not None


def _has_person(clause: str, lang: str, people: Collection[str] | None) -> bool:
    pronoun = _ZH_PRONOUN if lang == "zh" else _EN_PRONOUN
    if lang == "zh":
        return bool(pronoun.match(clause)) or any(p in clause for p in people or ())
    return bool(pronoun.match(clause)) or any(re.search(rf"\b{re.escape(p)}\b", clause) for p in people or ())


def _clipped(head: str, lang: str) -> str:
    """The head's clauses while they fit the moment's length, the first (or a second, when the
    first is short) clipped to fit."""
    if lang == "zh":
        size, limit, least = len, CHARS, MIN_CHARS
    else:
        size, limit, least = (lambda s: len(s.split())), WORDS, MIN_WORDS
    out = ""
    for clause in _CLAUSE[lang].split(head):
        joined = f"{out}{_JOIN[lang]}{clause}" if out else clause
        if size(joined) <= limit:
            out = joined
        elif size(out) < least:
            out = _cut(joined, lang, limit)
            break
        else:
            break
    return out


def _cut(text: str, lang: str, limit: int) -> str:
    """`text` cut to `limit` characters (Chinese) or words, English before the last phrase that
    would pass the limit (…on the bottom step of the stair | with a chart)."""
    if lang == "zh":
        return text[:limit]
    words = text.split()
    cut = next((k for k in range(limit, MIN_WORDS - 1, -1) if words[k].lower() in _EN_CUT), limit)
    return " ".join(words[:cut]).rstrip(",;:")
