"""The character bible: a book's people, each under one canonical name, found offline by rules.

Which names are people and which are one person is decided in `cast_names`. Here: the bible
(characters with aliases, description, gender, locked and dropped flags), the matching of its
names in a chapter, pronouns (他/她, he/she) in a shot naming nobody resolved to the last named
character of that gender (marked as inferred), and descriptions from the sentences about looks
near a character's first mentions.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from pipeline_kit.text.cast_names import people
from pipeline_kit.text.names import Mentions, find_mentions
from pipeline_kit.text.shots import ShotDraft

MIN_MENTIONS = 5  # a character is named this often in the book
DESCRIPTION_CHARS = {"zh": 160, "en": 400}
_LOOK_MENTIONS = 30  # appearance sentences are sought among a character's first mentions

_ZH_FEMALE = re.compile(r"[女娘妃婆母姐妹嫂姑妇姬娥]|夫人|小姐|公主|仙子")
_ZH_LOOKS = re.compile(
    r"生得|长得|身穿|穿着|穿一|头戴|戴着|戴一|头顶|脚踏|脚穿|腰系|腰束|腰间|身披|披着|披一|模样|相貌|容貌|"
    r"身长|身高|[面脸眼眉须发]如|[一二三四五六七八九十]+岁|毛脸|尖嘴|长嘴|大耳|黑脸|白面|直裰|袈裟|"
    r"[衣袍甲裙衫铠袄](?:[，。！？]|$)|[冠巾帽盔]"
)
_ZH_SENTENCE = re.compile(r"[^。！？\n]*[。！？]?")
_EN_TITLE = {
    "Mr": "male",
    "Mrs": "female",
    "Miss": "female",
    "Ms": "female",
    "Sir": "male",
    "Lady": "female",
    "Lord": "male",
    "Colonel": "male",
    "Captain": "male",
}
_EN_TITLED = re.compile(rf"\b({'|'.join(_EN_TITLE)})\.? ([A-Z][a-z]+)\b")
_EN_HE = re.compile(r"\b(?:he|him|his|himself)\b", re.I)
_EN_SHE = re.compile(r"\b(?:she|her|hers|herself)\b", re.I)
_EN_LOOKS = re.compile(
    r"\b(?:tall|short|stout|thin|lean|slim|figure|face|features|complexion|hair|"
    r"beard|moustache|whiskers|eyes|dressed|wore|wearing|clad|coat|hat|cap|boots|"
    r"cloak|gown|veil|years of age|aged|elderly|young)\b",
    re.I,
)
_EN_SENTENCE = re.compile(r"[^.!?]*[.!?]+[”’\"]?")


@dataclass(frozen=True)
class Character:
    """One person of the book: the canonical name, the other names it goes by, and its looks."""

    name: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    gender: str | None = None  # "male", "female" or unknown
    mentions: int = 0
    locked: bool = False  # fixed by a person: a rebuild keeps it as it is
    dropped: bool = False  # a person said it is no character: its names are never cast

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class Bible:
    """A book's characters, and the matching of their names in a chapter's text."""

    lang: str
    characters: tuple[Character, ...]

    @cached_property
    def canonical(self) -> dict[str, str]:
        """Every name and alias of a character that is cast -> its canonical name."""
        return {alias: c.name for c in self.characters if not c.dropped for alias in c.names}

    @cached_property
    def by_name(self) -> dict[str, Character]:
        return {c.name: c for c in self.characters}

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        names = sorted(self.canonical, key=lambda n: (-len(n), n))
        if not names:
            return None
        body = "|".join(map(re.escape, names))
        return re.compile(rf"\b(?:{body})\b" if self.lang != "zh" else body)

    def mentions(self, text: str) -> list[tuple[int, str]]:
        """(offset, canonical name) of each mention of a character in `text`, longest first."""
        if self._pattern is None:
            return []
        return [(m.start(), self.canonical[m.group()]) for m in self._pattern.finditer(text)]


def build_bible(
    texts: Sequence[str],
    lang: str,
    fixed: Iterable[Character] = (),
    mentions: Sequence[Mentions] | None = None,
) -> Bible:
    """The bible of a book's chapters; `fixed` (locked or dropped) entries are kept as they are.

    `mentions` are the chapters' `find_mentions` results when the caller has them already.
    """
    found = mentions if mentions is not None else [find_mentions(t, lang) for t in texts]
    fixed = list(fixed)
    claimed = {alias: c.name for c in fixed for alias in c.names}
    draft = Bible(
        lang,
        tuple(
            Character(name, tuple(sorted(members - {name})))
            for name, members in people(texts, lang, found).items()
        ),
    )
    counts = Counter(name for text in texts for _, name in draft.mentions(text))
    joined = {c.name: set(c.names) for c in fixed}
    found_chars: list[Character] = []
    for c in draft.characters:
        owner = next((claimed[a] for a in c.names if a in claimed), None)
        if owner is not None:  # a group touching a fixed character's name adds its names to it
            joined[owner] |= set(c.names)
        elif counts[c.name] >= MIN_MENTIONS:
            found_chars.append(replace(c, mentions=counts[c.name]))
    kept = [
        replace(c, aliases=tuple(sorted(joined[c.name] - {c.name})))
        if not c.locked and not c.dropped
        else c
        for c in fixed
    ]
    cast = Bible(lang, tuple(sorted(kept + found_chars, key=lambda c: (-c.mentions, c.name))))
    return _describe(cast, texts)


def cast_drafts(text: str, drafts: Sequence[ShotDraft], bible: Bible) -> list[ShotDraft]:
    """Drafts naming characters as the bible does; pronouns resolved where nobody is named.

    A draft's own names (a model splitter's) count when they are a character's name or alias.
    """
    found = bible.mentions(text)
    offsets = [o for o, _ in found]
    out: list[ShotDraft] = []
    for d in drafts:
        lo, hi = bisect.bisect_left(offsets, d.span_start), bisect.bisect_left(offsets, d.span_end)
        named = dict.fromkeys(name for _, name in found[lo:hi])
        named.update(
            dict.fromkeys(bible.canonical[n] for n in d.characters if n in bible.canonical)
        )
        inferred: tuple[str, ...] = ()
        if not named:
            who = _pronoun_referent(text[d.span_start : d.span_end], found[:lo], bible)
            inferred = (who,) if who else ()
        out.append(replace(d, characters=tuple(named) + inferred, inferred=inferred))
    return out


def _pronoun_referent(span: str, before: list[tuple[int, str]], bible: Bible) -> str | None:
    """The last character named before the span with the gender of the span's first pronoun."""
    gender = _first_pronoun(span, bible.lang)
    if gender is None:
        return None
    for _, name in reversed(before):
        if bible.by_name[name].gender == gender:
            return name
    return None


def _first_pronoun(text: str, lang: str) -> str | None:
    """"male" or "female" by the first of he/she (他/她) in `text`, or None when it has neither."""
    if lang == "zh":
        he, she = text.find("他"), text.find("她")
    else:
        m_he, m_she = _EN_HE.search(text), _EN_SHE.search(text)
        he, she = (m_he.start() if m_he else -1), (m_she.start() if m_she else -1)
    if he < 0 and she < 0:
        return None
    return "female" if she >= 0 and (he < 0 or she < he) else "male"


def _describe(bible: Bible, texts: Sequence[str]) -> Bible:
    """Fill descriptions (unless locked) from looks sentences near first mentions, and genders."""
    zh = bible.lang == "zh"
    looks, splitter = (_ZH_LOOKS, _ZH_SENTENCE) if zh else (_EN_LOOKS, _EN_SENTENCE)
    seen: Counter[str] = Counter()
    found: dict[str, list[str]] = defaultdict(list)
    he: Counter[str] = Counter()
    she: Counter[str] = Counter()
    for text in texts:
        for off, name in bible.mentions(text):
            pronoun = _first_pronoun(text[off : off + (40 if zh else 160)], bible.lang)
            he[name] += pronoun == "male"
            she[name] += pronoun == "female"
            seen[name] += 1
            if seen[name] > _LOOK_MENTIONS or len(found[name]) >= 3:
                continue
            start = max(text.rfind(c, 0, off) for c in ("。！？\n" if zh else ".!?")) + 1
            sentence = splitter.match(text, start)
            piece = " ".join(sentence.group().split()).lstrip("”」』’\"，, ") if sentence else ""
            if piece and looks.search(piece) and piece not in found[name]:
                found[name].append(piece)
    titled = Counter(
        (m.group(2), _EN_TITLE[m.group(1)])
        for t in ([] if zh else texts)
        for m in _EN_TITLED.finditer(t)
        if _EN_TITLE[m.group(1)]
    )
    out = []
    for c in bible.characters:
        if c.locked or c.dropped:
            out.append(c)
            continue
        limit = DESCRIPTION_CHARS[bible.lang]
        text = ("" if zh else " ").join(found[c.name])
        text = text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
        out.append(
            replace(
                c, description=text, gender=_gender(c, he[c.name], she[c.name], bible.lang, titled)
            )
        )
    return Bible(bible.lang, tuple(out))


def _gender(
    c: Character, he: int, she: int, lang: str, titled: Counter[tuple[str, str]]
) -> str | None:
    """From the name (女, 夫人) or a title (Mr., Miss), else from pronouns after its mentions."""
    if lang == "zh":
        if _ZH_FEMALE.search(c.name) or she > he:
            return "female"
        return "male" if he >= 2 else None
    titles = Counter(
        {g: titled[(n, g)] for n in c.names for g in ("male", "female") if titled[(n, g)]}
    )
    if titles:
        return titles.most_common(1)[0][0]
    if he >= 2 * max(1, she):
        return "male"
    if she >= 2 * max(1, he):
        return "female"
    return None
