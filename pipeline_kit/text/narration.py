"""A narrator who says "I": a character of a book told in the first person.

A chapter is told in the first person when its narration (the text outside quotations) says I
(我, not 我们) often: at least FIRST_PERSON_RATE times per thousand words (Han characters), where a
book told in the third person says it almost never. The narrator is then a character whose
mentions are that pronoun in the narration of such chapters, never in anyone's speech. Who it is
comes from the text where it tells: the person others address in their speech (“You see,
Watson,”) whom the narration itself hardly ever names (the narrator calls himself I). Else the
character is `the narrator` (叙述者).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache

FIRST_PERSON = {"en": "I", "zh": "我"}  # the narrator's alias: matched in the narration only
NARRATOR = {"en": "the narrator", "zh": "叙述者"}
FIRST_PERSON_RATE = 5.0  # per thousand words (Han characters): measured 9 to 48 told in the first person, under 2.1 not
MIN_ADDRESSED = 3  # the narrator is addressed this often
NAMED_IN_NARRATION = 0.25  # and at most this share of the mentions of the narrator's name are in the narration
_QUOTATION = re.compile(r"“[^”]*(?:”|$)|「[^」]*(?:」|$)|『[^』]*(?:』|$)|\"[^\"\n]*(?:\"|$)", re.M)
_PRONOUN = {"en": re.compile(r"\bI\b"), "zh": re.compile(r"我(?!们|等|辈)")}
_EN_ADDRESS = re.compile(r"(?:[,“]\s*|\bdear\s+|\bmy\s+)$")
_EN_ADDRESS_END = re.compile(r"^\s*[,!?.”]")
_ZH_ADDRESS = re.compile(r"(?:[，“「：]|^)$")
_ZH_ADDRESS_END = re.compile(r"^[，！？。”」]")


def quotations(text: str) -> list[tuple[int, int]]:
    """(start, end) of each quotation in `text`: what someone says."""
    return [(m.start(), m.end()) for m in _QUOTATION.finditer(text)]


def _narration(text: str) -> str:
    return _QUOTATION.sub(" ", text)


@lru_cache(maxsize=512)
def narrator_offsets(text: str, lang: str) -> tuple[int, ...]:
    """Offsets of the narrator's I (我) in the chapter's narration, none unless it is told in the
    first person."""
    pronoun = _PRONOUN.get(lang)
    if pronoun is None or not first_person(text, lang):
        return ()
    spoken = quotations(text)
    out, k = [], 0
    for m in pronoun.finditer(text):
        while k < len(spoken) and spoken[k][1] <= m.start():
            k += 1
        if k >= len(spoken) or m.start() < spoken[k][0]:
            out.append(m.start())
    return tuple(out)


def first_person(text: str, lang: str) -> bool:
    """Is the chapter told in the first person (see the module docstring)?"""
    narration = _narration(text)
    pronoun = _PRONOUN.get(lang)
    if pronoun is None:
        return False
    size = len(re.sub(r"\s", "", narration)) if lang == "zh" else len(narration.split())
    return len(pronoun.findall(narration)) * 1000 >= FIRST_PERSON_RATE * max(size, 1)


def narrator_name(texts: Sequence[str], lang: str, spans: Callable[[str], list[tuple[int, int, str]]]) -> str | None:
    """The character the chapters told in the first person address in speech yet hardly name in
    their narration (`spans(text)`: the characters' (start, end, name) mentions); None if none."""
    addressed: Counter[str] = Counter()
    inside: Counter[str] = Counter()
    outside: Counter[str] = Counter()
    before_re, after_re = (_ZH_ADDRESS, _ZH_ADDRESS_END) if lang == "zh" else (_EN_ADDRESS, _EN_ADDRESS_END)
    for text in texts:
        if not narrator_offsets(text, lang):
            continue
        spoken = quotations(text)
        opens = [a for a, _ in spoken]
        for start, end, name in spans(text):
            k = bisect.bisect_right(opens, start) - 1
            quote = spoken[k] if k >= 0 and start < spoken[k][1] else None
            if quote is None:
                outside[name] += 1
                continue
            inside[name] += 1
            before = text[max(quote[0], start - 6) : start]
            addressed[name] += bool(before_re.search(before) and after_re.match(text[end : end + 2]))
    fits = [
        n
        for n, k in addressed.items()
        if k >= MIN_ADDRESSED and outside[n] <= NAMED_IN_NARRATION * (inside[n] + outside[n])
    ]
    return max(fits, key=lambda n: (addressed[n], n)) if fits else None
