"""The character bible: a book's people, each under one canonical name, found offline by rules.

Which names are people and which are one person is decided in `cast_names`. Here: the bible
(characters with aliases, description, gender, locked and dropped flags), the matching of its
names in a chapter, each shot's cast as its Action line stages it (`prompts.named_subjects`: who
its narration names or speaks to, and whom its pronouns mean, marked as inferred), and
descriptions from the sentences about looks near a character's first mentions.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

from pipeline_kit.text.cast_address import addressed_genders
from pipeline_kit.text.cast_names import people
from pipeline_kit.text.cast_roles import EN_SPEECH, kin_genders, role_gender, told_sex
from pipeline_kit.text.looks import Sentences, identity_pronoun, looks_of, possessor
from pipeline_kit.text.moments import CONTEXT, ZH_ACTS_ON, Referent, Who, object_genders
from pipeline_kit.text.namings import named_unnamed, namings
from pipeline_kit.text.names import _EN_PLACE_WORDS, _EN_TITLE, _EN_TITLED, Mentions, book_mentions, find_mentions
from pipeline_kit.text.narration import FIRST_PERSON, NARRATOR, narrator_name, narrator_offsets
from pipeline_kit.text.places import Place, find_places, settings, shot_places
from pipeline_kit.text.zh_subjects import SPEECH
from pipeline_kit.text.prompts import Named, named_subjects, narration_only, unnamed_in
from pipeline_kit.text.shots import ShotDraft

# A character is named this often in the book: twice in a short story, five times in a novel.
MENTION_STEPS = {"zh": ((40_000, 2), (200_000, 3)), "en": ((120_000, 2), (400_000, 3))}
MIN_MENTIONS = 5
DESCRIPTION_CHARS = {"zh": 160, "en": 400}
TALKERS = 2  # a line of talk no tag names is between the last this many people its scene's talk staged
TITLE_WEIGHT = 2  # Miss Stoner says she is a woman as surely as two pronouns after her name
SUBORDINATE_WEIGHT = 0.5  # a he/she opening a subordinate clause (until he was gone) is often another's

_ZH_FEMALE = re.compile(r"[女娘妃婆母姐妹嫂姑妇姬娥婶妈]|夫人|小姐|公主|仙子|太太|奶奶|老太")
_EN_HE = re.compile(r"\b(?:he|him|his|himself)\b", re.I)
_EN_SHE = re.compile(r"\b(?:she|her|hers|herself)\b", re.I)
_QUOTES = re.compile(r"“[^”]*(?:”|$)|「[^」]*(?:」|$)|\"[^\"]*(?:\"|$)")
_QUOTED_MARK = "\x00"  # what a quotation becomes in a mention's window: a sentence holding one is a speech tag
_EN_WHERE = re.compile(r" (?:by|at|near|beside|behind|from) .*$")  # a woman by the window: where, not looks
_ZH_ONE = re.compile(r"^(?:一[个位名]|个)")  # 一个拄着拐杖的老头: the looks are what follows
_SENTENCE_END = {"zh": re.compile(r"[。！？!?]"), "en": re.compile(r"(?<!Mr)(?<!Mrs)(?<!Dr)[.!?;]")}
_SPEECH_BEFORE = {"en": re.compile(rf"(?:[”\"’]|\b(?:{EN_SPEECH}))$"), "zh": re.compile(r"[”」]$")}
_SPEECH_AFTER = {"en": re.compile(rf"\s*(?:{EN_SPEECH})\b"), "zh": re.compile(rf"\s*[^，。！？]{{0,4}}?[{SPEECH}]")}
_EN_SUBJECT = re.compile(r"\b(?:he|she|himself|herself)\b", re.I)
# A word that opens a subordinate clause: the he or she after it is often someone else's doing.
_EN_SUBORDINATE = re.compile(
    r"\b(?:until|till|when|whenever|while|as|after|before|because|if|unless|though|although|since|once|where)\s+$",
    re.I,
)
# 他/她 is someone else the clause acts on after 把, 给, 让 or a verb that takes a person (孙先生把他抱进店里).
_ZH_SUBJECT = re.compile(rf"(?<![{ZH_ACTS_ON}])([他她])(?!们)")
# A verb (and its particle) right after a name, then his/her and a noun: what they do with their own
# (Agnes put down her basket, Holmes rubbed his hands; not "looked at her", "gave her a coin").
_EN_OWN = re.compile(
    r"^\s+(?:\w+ly )?[a-z]+(?: (?:up|down|on|off|out|back|away|over|in))? (his|her) (?!(?:a|an|the|to|for|at|and|"
    r"of|in|on|with|by|from|as|that|this)\b)[a-z]"
)


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
    """A book's characters and places, and the matching of their names in a chapter's text.

    An alias several characters hold (a title, a shared first name) is shared: each of its
    mentions goes to the one of them the text named last (else next), so 菩萨 after 观音菩萨 is
    观音菩萨 and John after John Clay is John Clay. Place names are matched with the people's,
    longest first, so the John of St. John's Wood is nobody.
    """

    lang: str
    characters: tuple[Character, ...]
    places: tuple[Place, ...] = ()
    # the book's chapter texts, in order, when built from them: a naming may name someone a
    # chapter before brought in (stored bibles, read for an edit, read each text alone)
    chapters: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @cached_property
    def holders(self) -> dict[str, tuple[str, ...]]:
        """Every name and alias of a character that is cast -> the characters going by it."""
        out: dict[str, list[str]] = defaultdict(list)
        for c in self.characters:
            if not c.dropped:
                for alias in c.names:
                    out[alias].append(c.name)
        return {alias: tuple(names) for alias, names in out.items()}

    @cached_property
    def canonical(self) -> dict[str, str]:
        """Every name and alias only one cast character goes by -> its canonical name."""
        return {alias: names[0] for alias, names in self.holders.items() if len(names) == 1}

    @cached_property
    def by_name(self) -> dict[str, Character]:
        return {c.name: c for c in self.characters}

    @cached_property
    def place_names(self) -> dict[str, str]:
        """Every name and alias of a place in use -> the place's name."""
        return {alias: p.name for p in self.places if not p.dropped for alias in p.names}

    @cached_property
    def narrator(self) -> str | None:
        """The character who says I in the narration (its alias is the pronoun), if any."""
        holders = self.holders.get(FIRST_PERSON.get(self.lang, ""), ())
        return holders[0] if holders else None

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        pronoun = FIRST_PERSON.get(self.lang)  # matched in the narration alone, never in speech
        names = sorted({*self.holders, *self.place_names} - {pronoun}, key=lambda n: (-len(n), n))
        if not names:
            return None
        # The first letters, looked at before the names: most places in a text open none of them;
        # the names by their first letter (longest first still), so a place tries a few, not all.
        firsts = "".join(sorted({re.escape(n[0]) for n in names}))
        rests: dict[str, list[str]] = defaultdict(list)
        for n in names:
            rests[n[0]].append(re.escape(n[1:]))
        groups = "|".join(f"{re.escape(c)}(?:{'|'.join(r)})" for c, r in rests.items())
        body = f"(?=[{firsts}])(?:{groups})"
        return re.compile(rf"\b{body}\b" if self.lang != "zh" else body)

    def _matches(self, text: str) -> list[tuple[int, str]]:
        """(offset, matched name) of every name of a character or place in `text`, longest first."""
        return _matches(self._pattern, self.lang if self.narrator is not None else None, text)

    def mentions(self, text: str) -> list[tuple[int, str]]:
        """(offset, canonical name) of each mention of a character in `text` (see `spans`)."""
        return [(start, name) for start, _, name in self.spans(text)]

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, canonical name) of each mention of a character in `text`; a shared alias
        goes to the holder named last before it, else first after it, else the most mentioned
        (worked out once per text: the split, its cast and its prompts ask for a chapter's)."""
        return self._once("spans", text, lambda t: sorted(self._own(t) + self.unnamed_spans(t)))

    def _own(self, text: str) -> list[tuple[int, int, str]]:
        """The mentions of characters by their own names (see `spans`), once per text."""
        return self._once("own", text, self._names_resolved)

    def _once(
        self, what: str, text: str, read: Callable[[str], list[tuple[int, int, str]]]
    ) -> list[tuple[int, int, str]]:
        """`read(text)`, worked out once per text for each `what` (spans, own, unnamed)."""
        if (what, text) not in self._read:
            self._read[what, text] = read(text)
        return self._read[what, text]

    @cached_property
    def _read(self) -> dict[tuple[str, str], list[tuple[int, int, str]]]:
        return {}

    def _names_resolved(self, text: str) -> list[tuple[int, int, str]]:
        found = [(o, m) for o, m in self._matches(text) if m in self.holders]
        names: list[str] = []
        last: dict[str, int] = {}
        pending: list[int] = []  # shared mentions no holder came before
        for offset, alias in found:
            holders = self.holders[alias]
            if len(holders) == 1:
                last[holders[0]] = offset
                for k in [k for k in pending if not names[k] and holders[0] in self.holders[found[k][1]]]:
                    names[k] = holders[0]
                names.append(holders[0])
                continue
            seen = [h for h in holders if h in last]
            names.append(max(seen, key=lambda h: last[h]) if seen else "")
            if not seen:
                pending.append(len(names) - 1)
        for k in pending:
            if not names[k]:
                names[k] = max(self.holders[found[k][1]], key=lambda h: (self.by_name[h].mentions, h))
        return [(o, o + len(alias), name) for (o, alias), name in zip(found, names)]

    def unnamed_spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, canonical name) of the mentions of unnamed people the text or a later
        chapter names (the stranger, then "My name is Edmund Crake": his mentions before and after
        are Crake's); a chapter of the book is read with the others, once."""
        if not self.characters:
            return []
        if ("unnamed", text) not in self._read:
            texts = self.chapters if text in self.chapters else (text,)
            found = named_unnamed(texts, self.lang, [self._own(t) for t in texts], self.canonical)
            self._read.update({("unnamed", t): spans for t, spans in zip(texts, found)})
        return self._read["unnamed", text]

    @cached_property
    def who(self) -> Who:
        """The cast as a prompt's moments name it: who a sentence names, and their genders."""
        genders = {c.name: c.gender for c in self.characters}
        if self.narrator is not None:
            genders[self.narrator] = "first person"  # I is never the he or she a pronoun means
        return Who(self.named, genders)

    def named(self, text: str) -> list[tuple[int, str, str]]:
        """(offset, name as written, canonical name) of each character a shot's text names; a
        name several hold is left out (read afresh: a chapter's matches stay cached)."""
        found = self._pattern.finditer(text) if self._pattern else ()
        return [(m.start(), m.group(), self.canonical[m.group()]) for m in found if m.group() in self.canonical]

    def place_mentions(self, text: str) -> list[tuple[int, str]]:
        """(offset, place name) of each mention of a place in `text`."""
        return [(o, self.place_names[m]) for o, m in self._matches(text) if m in self.place_names]


@lru_cache(maxsize=128)  # a book's chapters, as long as it has no more
def _matches(pattern: re.Pattern[str] | None, narrated: str | None, text: str) -> list[tuple[int, str]]:
    """A bible's matches in one chapter (`narrated`: the language whose I is the narrator's), read
    once for every bible naming the same people and places: people, places and looks read each
    chapter, and a book's bible is drafted, then described, then split with."""
    found = [(m.start(), m.group()) for m in pattern.finditer(text)] if pattern else []
    if narrated is not None:
        found = sorted(found + [(o, FIRST_PERSON[narrated]) for o in narrator_offsets(text, narrated)])
    return found


def min_mentions(texts: Sequence[str], lang: str) -> int:
    """How often a name must recur to be a character: less in a short story than in a novel."""
    size = sum(map(len, texts))
    return next((n for limit, n in MENTION_STEPS.get(lang, ()) if size < limit), MIN_MENTIONS)


def build_bible(
    texts: Sequence[str],
    lang: str,
    fixed: Iterable[Character] = (),
    mentions: Sequence[Mentions] | None = None,
    fixed_places: Iterable[Place] = (),
) -> Bible:
    """The bible of a book's chapters, people and places; `fixed` and `fixed_places` (locked or
    dropped) entries are kept as they are.

    `mentions` are the chapters' `book_mentions` when the caller has them already.
    """
    found = mentions if mentions is not None else book_mentions(texts, lang)
    fixed = list(fixed)
    group = people(texts, lang, found)
    claimed = {alias: c.name for c in fixed for alias in c.names if alias not in group.shared}
    names = {n for members in group.members.values() for n in members}
    places = find_places(texts, lang, found, names, fixed_places)
    draft = Bible(
        lang,
        tuple(Character(name, tuple(sorted(members - {name}))) for name, members in group.members.items()),
        places,
        tuple(texts),
    )
    counts = Counter(name for text in texts for _, name in draft.mentions(text))
    joined = {c.name: set(c.names) for c in fixed}
    found_chars: list[Character] = []
    least = min_mentions(texts, lang)
    for c in draft.characters:
        owner = next((claimed[a] for a in c.names if a in claimed), None)
        if owner is not None:  # a group touching a fixed character's name adds its names to it
            joined[owner] |= set(c.names)
        elif counts[c.name] >= least:
            found_chars.append(replace(c, mentions=counts[c.name]))
    kept = [
        replace(c, aliases=tuple(sorted(joined[c.name] - {c.name}))) if not c.locked and not c.dropped else c
        for c in fixed
    ]
    cast = Bible(lang, tuple(sorted(kept + found_chars, key=lambda c: (-c.mentions, c.name))), places, tuple(texts))
    titles = Counter(  # (name as titled, the sex its title says): Mrs. Crane; read once for every use
        (m.group(2), _EN_TITLE[m.group(1)]) for t in ([] if lang == "zh" else texts) for m in _EN_TITLED.finditer(t)
    )
    described = _describe(_with_narrator(cast, texts, least), texts, titles)
    return described if lang == "zh" else _titled_surnames_joined(described, titles)


def _titled_surnames_joined(bible: Bible, titled: Counter[tuple[str, str | None]]) -> Bible:
    """A surname the text titles (Miss Marsh) is the one character whose full name ends in it (Ellen
    Marsh), when its titles say that character's sex; Mr. Brand is not Lucy Brand, his
    niece, and a surname two full names end in (Arthur and Alexander Holder) joins neither."""
    titles: dict[str, set[str | None]] = defaultdict(set)
    for word, sex in titled:
        titles[word].add(sex)
    by_surname: dict[str, list[Character]] = defaultdict(list)
    for c in bible.characters:
        for surname in {n.split()[-1] for n in c.names if " " in n}:
            by_surname[surname].append(c)
    into: dict[str, Character] = {}
    for c in bible.characters:
        owners = by_surname.get(c.name, [])
        if " " not in c.name and not c.locked and len(owners) == 1 and owners[0] is not c:
            owner = owners[0]
            if owner.gender is not None and titles.get(c.name) == {owner.gender} and not owner.locked:
                into[c.name] = owner
    if not into:
        return bible
    merged = {o.name: o for o in into.values()}
    for surname, owner in into.items():
        taken = next(c for c in bible.characters if c.name == surname)
        now = merged[owner.name]
        aliases = tuple(sorted({*now.aliases, *taken.names} - {now.name}))
        merged[owner.name] = replace(now, aliases=aliases, mentions=now.mentions + taken.mentions)
    people = [merged.get(c.name, c) for c in bible.characters if c.name not in into]
    return Bible(bible.lang, tuple(sorted(people, key=lambda c: (-c.mentions, c.name))), bible.places, bible.chapters)


def _with_narrator(bible: Bible, texts: Sequence[str], least: int) -> Bible:
    """The bible with the narrator's I (我) as an alias of the character the text says it is, or
    of `the narrator`, when chapters told in the first person say it `least` times; unchanged
    when a character already holds it (a person's choice stays)."""
    pronoun = FIRST_PERSON.get(bible.lang)
    said = sum(len(narrator_offsets(t, bible.lang)) for t in texts)
    if pronoun is None or said < least or bible.narrator is not None:
        return bible
    who = narrator_name(texts, bible.lang, bible.spans)
    chars = list(bible.characters)
    at = next((k for k, c in enumerate(chars) if c.name == who and not (c.locked or c.dropped)), None)
    if at is None:
        chars.append(Character(NARRATOR[bible.lang], (pronoun,), mentions=said))
    else:
        c = chars[at]
        chars[at] = replace(c, aliases=tuple(sorted({*c.aliases, pronoun})), mentions=c.mentions + said)
    return Bible(bible.lang, tuple(sorted(chars, key=lambda c: (-c.mentions, c.name))), bible.places, bible.chapters)


def cast_drafts(
    text: str, drafts: Sequence[ShotDraft], bible: Bible, reading: ChapterCast | None = None
) -> list[ShotDraft]:
    """Drafts naming the characters each stages as its Action line does (`named_subjects`: named
    in its narration, spoken to, or meant by a pronoun, marked inferred), and the bible's places.

    A draft's own names (a model splitter's) count only as its narration names them (a surname
    inside a full name is no one else; one only spoken of is not there). Talk whose narration names
    nobody (a speech running on over paragraphs, an untagged reply) stages the people of its
    scene's last talk that did name them, as inferred. `reading`: the chapter read
    already (its prompts are written from the same reading).
    """
    reading = reading or ChapterCast.read(text, bible, drafts)
    out: list[ShotDraft] = []
    where = _places_of(reading, drafts)
    scene_wide = set(find_mentions(text, bible.lang).places)  # the rule splitter's: a scene's first place
    talk: dict[int, tuple[str, ...]] = {}  # scene -> the last TALKERS people its talk staged
    for d, place in zip(drafts, where):
        location = d.location
        if bible.places:  # the bible's place of this very shot; a model splitter's own place stays
            location = place or (d.location if d.location not in scene_wide else None)
        named = reading.shot(d)  # its span and scene: not its place
        staged = dict.fromkeys(named.people)
        inferred = tuple(n for n in named.inferred if n in staged)
        if d.dialogue and staged:
            talk[d.scene] = tuple(dict.fromkeys([*staged, *talk.get(d.scene, ())]))[:TALKERS]
        elif d.dialogue and not named.unnamed and talk.get(d.scene):  # talk no tag names goes on between them
            staged = dict.fromkeys(talk[d.scene])
            inferred = talk[d.scene]
        acted_on = [r for r in named.acted_on if isinstance(r, str) and r not in staged]  # looked at her
        staged.update(dict.fromkeys(acted_on))
        inferred = (*inferred, *acted_on)
        out.append(replace(d, location=location, characters=tuple(staged), inferred=inferred))
    return out


@dataclass(frozen=True)
class ChapterCast:
    """A chapter read once for whom its shots stage: everyone its narration names or brings in
    without a name (`refs`, in order: whom a pronoun may mean, never someone named only in a
    quotation), the bible's name spans, where each scene starts (a they means the people there
    since then), and the chapter's narration (its quotations blanked out)."""

    text: str
    plain: str
    bible: Bible
    refs: list[tuple[int, Referent]]
    spans: list[tuple[int, int, str]]
    scenes: dict[int, int]
    _read: dict[tuple[int, int], Named] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def read(cls, text: str, bible: Bible, drafts: Sequence[ShotDraft]) -> ChapterCast:
        plain = narration_only(text)
        spans = bible.spans(text)
        named = [(o, n) for o, _, n in spans if plain[o] != " "]
        unnamed = unnamed_in(plain, bible.lang, [(o, e) for o, e, _ in spans if plain[o] != " "])
        scenes: dict[int, int] = {}
        for d in drafts:
            scenes.setdefault(d.scene, d.span_start)
        return cls(text, plain, bible, sorted([*named, *unnamed], key=lambda r: r[0]), spans, scenes)

    @cached_property
    def _ref_offsets(self) -> list[int]:
        return [o for o, _ in self.refs]

    @cached_property
    def _span_starts(self) -> list[int]:
        return [o for o, _, _ in self.spans]

    def shot(self, d: ShotDraft) -> Named:
        """The draft's text with its pronouns named and whom it stages (`named_subjects`), read
        with who was named in the CONTEXT characters before it (read once: the cast and the
        prompts ask alike)."""
        start, end = d.span_start, d.span_end
        if (start, end) in self._read:
            return self._read[start, end]
        offsets = self._ref_offsets
        window = self.refs[bisect.bisect_left(offsets, start - CONTEXT) : bisect.bisect_left(offsets, start)]
        present = dict.fromkeys(r for o, r in window if isinstance(r, str) and o >= self.scenes[d.scene])
        lo, hi = (bisect.bisect_left(self._span_starts, o) for o in (start, end))
        found = [(o - start, self.text[o:e], n) for o, e, n in self.spans[lo:hi]]
        who = Who(lambda _: found, self.bible.who.genders)
        named = named_subjects(self.text[start:end], self.bible.lang, who, [r for _, r in window], list(present))
        self._read[start, end] = named
        return named


def _places_of(reading: ChapterCast, drafts: Sequence[ShotDraft]) -> list[str | None]:
    """Each draft's place from the bible's places, where its narration puts its people (a place
    someone speaks of, 我从黑石岛来, is not where the shot stands; see `shot_places`)."""
    text, plain, bible = reading.text, reading.plain, reading.bible
    known = bible.place_names  # a setting said by another of its names (the bakery) is its place (the corner bakery)
    named = [(o, n) for o, n in bible.place_mentions(text) if plain[o] != " " and _puts_there(text, o, n, bible.lang)]
    unnamed = [(o, known[n]) for o, n in settings(text, bible.lang) if n in known and plain[o] != " "]
    people = [o for o, _ in bible.mentions(text) if plain[o] != " "]
    spans = [(d.span_start, d.span_end, d.scene) for d in drafts]
    return shot_places(plain, bible.lang, spans, unnamed + named, people)


_EN_THERE = re.compile(
    r"\b(?:in|at|into|inside|on|onto|to|reached|entered|near|within|across|through|around|outside|towards?|aboard)"
    r"\s+(?:(?:the|a|an|his|her|their|our|my|its)\s+)?$",
    re.I,
)
_EN_FROM = re.compile(r"\bfrom\s+(?:the\s+)?$", re.I)
_EN_DEFINITE = re.compile(r"\b(?:the|our|my|his|her|their)\s+$", re.I)  # the shop, our sitting-room
_EN_PLACE_NAMED = re.compile(rf"\b[A-Z][\w’'-]* (?:[A-Z][\w’'-]* )*(?:{_EN_PLACE_WORDS})$")


def _puts_there(text: str, offset: int, name: str, lang: str) -> bool:
    """Does the place named at `offset` set the scene: a name ending in a word for a place (Baker
    Street, Briony Lodge), or one someone is in, at or goes to (in London, into the room; not the
    King of Bohemia, nor no room for doubt), or a setting of the book said again with its article
    (she swept the shop: the shot shows it; `shot_places` puts nobody there for it)? Chinese
    place names end in a word for a place: always."""
    if lang == "zh":
        return True
    if _EN_FROM.search(text, max(0, offset - 12), offset):  # the baker from Lantern Street: not where she is
        return False
    return bool(
        _EN_PLACE_NAMED.search(name)
        or _EN_THERE.search(text, max(0, offset - 20), offset)
        or name.islower()
        and _EN_DEFINITE.search(text, max(0, offset - 8), offset)
    )


def _first_pronoun(text: str, lang: str, subject: bool = False) -> str | None:
    """ "male" or "female" by the first of he/she (他/她) in `text`, or None when it has neither
    (`subject`: only he and she count, not his, him or her, which may be someone else's; 他/她 not
    after 把, 给 or a verb)."""
    if lang == "zh":
        if subject:
            m = _ZH_SUBJECT.search(text)
            return None if m is None else "female" if m.group(1) == "她" else "male"
        he, she = text.find("他"), text.find("她")
    elif subject:  # a main clause's he or she (until he was gone, then she went back: she)
        m = next((m for m in _EN_SUBJECT.finditer(text) if not _EN_SUBORDINATE.search(text, 0, m.start())), None)
        return _en_sex(m)
    else:
        m_he, m_she = _EN_HE.search(text), _EN_SHE.search(text)
        he, she = (m_he.start() if m_he else -1), (m_she.start() if m_she else -1)
    if he < 0 and she < 0:
        return None
    return "female" if she >= 0 and (he < 0 or she < he) else "male"


def _describe(bible: Bible, texts: Sequence[str], titles: Counter[tuple[str, str | None]]) -> Bible:
    """Fill descriptions (unless locked) with the looks phrases about each character, and genders
    from its role word, the kinship words set beside it or said to it (`cast_address`), its looks,
    else the pronouns that follow its mentions before anyone else is named."""
    zh = bible.lang == "zh"
    short = min_mentions(texts, bible.lang) <= 2  # a short story: its few pronouns are its evidence
    pronoun = FIRST_PERSON.get(bible.lang)  # what follows I says nothing of the narrator's gender or looks
    spans = [[s for s in bible.spans(text) if text[s[0] : s[1]] != pronoun] for text in texts]
    he: Counter[str] = Counter()  # weighed evidence: a subordinate clause's pronoun counts SUBORDINATE_WEIGHT
    she: Counter[str] = Counter()
    ends = _SENTENCE_END[bible.lang]
    shared_next: list[tuple[str, set[str], str | None]] = []  # a next sentence this one names others before
    for text, found in zip(texts, spans):
        sentences = Sentences(text, found, ends)
        for k, (start, end, name) in enumerate(found):
            if possessor(text, end, zh):  # 孙先生的女儿秀英…。她: the pronouns after it are the daughter's
                continue
            stop = min(found[k + 1][0] if k + 1 < len(found) else len(text), end + (40 if zh else 160))
            window = _QUOTES.sub(lambda m: _QUOTED_MARK * len(m.group()), text[end:stop])  # speech: others'
            own, *rest = ends.split(window, maxsplit=2)
            pronoun = (
                _first_pronoun(own, bible.lang, subject=True)
                or _own_thing(own, zh)
                or identity_pronoun(text, start, bible.lang)
            )
            # the next sentence is theirs where this one names nobody else (Mara took a letter from
            # Tobias. She laughed: she is not surely Tobias), and acts on no one it could mean (Agnes
            # walked to meet him. "Miss Hale," he said: the him, who speaks)
            others = sentences.others(k)
            following = _first_pronoun(rest[0], bible.lang, subject=True) if rest and not pronoun else None
            if following and (
                following in object_genders(own, bible.lang)  # Ruth ran to him. He was white: him
                or _QUOTED_MARK in rest[0]
                and _tags_speech(text, start, own, bible.lang)
            ):
                following = None  # "What is it?" Lucy asked. "A compass," he said: the other one answers
            weight = 1.0
            if others:
                shared_next.append((name, others, following))
            else:
                pronoun = pronoun or following
                if pronoun is None and not zh:  # since she was nine; until he was gone: theirs, less surely
                    pronoun, weight = _subordinate_pronoun(own), SUBORDINATE_WEIGHT
            he[name] += weight * (pronoun == "male")
            she[name] += weight * (pronoun == "female")
    told_by_pronouns = _by_pronouns(he, she)
    known = {  # the sexes known before this pass: role words, 夫人 in a name, the pronouns so far
        c.name: role_gender(c.names, bible.lang) or ("female" if zh and _ZH_FEMALE.search(c.name) else None)
        for c in bible.characters
    }
    known = {n: g or told_by_pronouns.get(n) for n, g in known.items()}
    for name, others, following in shared_next:  # theirs where the others are known to be of the other sex
        if following and all(known.get(o) not in (None, following) for o in others):
            he[name] += following == "male"
            she[name] += following == "female"
    told_by_pronouns = _by_pronouns(he, she)
    phrases = looks_of(texts, bible.lang, spans, {c.name for c in bible.characters if not c.locked}, told_by_pronouns)
    for name, phrase in _unnamed_looks(bible, texts):  # the fat old gentleman with white whiskers: Pollard's
        if phrase not in phrases.setdefault(name, []):
            phrases[name].insert(0, phrase)
    titled: Counter[tuple[str, str]] = Counter({(w, sex): n for (w, sex), n in titles.items() if sex})
    shared = {alias for alias, holders in bible.holders.items() if len(holders) > 1}
    me = FIRST_PERSON.get(bible.lang)
    kin = kin_genders(texts, bible.lang, {a: n for a, n in bible.canonical.items() if a != me})
    addressed = addressed_genders(texts, bible.lang, spans)  # “爹，…” answered by 老陈道
    given = _given_sexes(bible, texts, titled)  # 她叫沈静秋; "I'm Sam," of the young soldier
    out = []
    for c in bible.characters:
        if c.locked or c.dropped:
            out.append(c)
            continue
        looks = phrases.get(c.name, [])
        told = told_sex(" ".join(looks), bible.lang)  # a tall girl; 一个女子
        text = ("，" if zh else "; ").join(looks)
        limit = DESCRIPTION_CHARS[bible.lang]
        text = text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
        gender = (
            role_gender(c.names, bible.lang)
            or kin.get(c.name)
            or addressed.get(c.name)
            or given.get(c.name)
            or told
            or _gender(c, he[c.name], she[c.name], bible.lang, titled, shared, short)
        )
        out.append(replace(c, description=text, gender=gender))
    described = Bible(bible.lang, tuple(out), bible.places, bible.chapters)
    described._read.update(bible._read)  # the same names and mentions: the same spans
    return described


def _unnamed_looks(bible: Bible, texts: Sequence[str]) -> list[tuple[str, str]]:
    """(name, phrase) of each unnamed person the text then names, as it brought them in when it
    described them (a boy of about ten, 一个拄着拐杖的老头), not merely "the stranger"."""
    out = []
    for text in texts:
        for start, end, name in bible.unnamed_spans(text):
            phrase = _EN_WHERE.sub("", text[start:end])  # a woman by the window: where she is, not her looks
            if bible.lang == "zh" and "的" in phrase:
                out.append((name, _ZH_ONE.sub("", phrase)))
            elif bible.lang != "zh" and len(phrase.split()) > 2 and phrase.split()[0].lower() in ("a", "an"):
                out.append((name, phrase[0].lower() + phrase[1:]))
    return out


def _given_sexes(bible: Bible, texts: Sequence[str], titles: Counter[tuple[str, str]]) -> dict[str, str]:
    """Name -> the sex its namings tell (她叫沈静秋, a boy named Davey), where they agree with each
    other and with the `titles` before the name ((name as titled, sex); a man named Crane, then
    Mrs. Crane: a family's surname tells nothing)."""
    told: dict[str, set[str]] = defaultdict(set)
    titled: dict[str, set[str]] = defaultdict(set)
    for word, sex in titles:
        if holder := bible.canonical.get(word):
            titled[holder].add(sex)
    for text in texts:
        for naming in namings(text, bible.lang):
            holder = bible.canonical.get(naming.name)
            if holder and naming.sex and not naming.called:  # "Miss Roylott, …" is said to his stepdaughter
                told[holder].add(naming.sex)
        for start, end, name in bible.unnamed_spans(text):  # a woman by the window, then "They call me Bess"
            if sex := told_sex(text[start:end], bible.lang):
                told[name].add(sex)
    return {name: next(iter(sexes)) for name, sexes in told.items() if len(sexes) == 1 and titled[name] <= sexes}


def _subordinate_pronoun(own: str) -> str | None:
    """ "male" or "female" by the he or she opening a subordinate clause of the mention's sentence
    (Lucy had crossed every morning since she was nine), else None."""
    return _en_sex(next((m for m in _EN_SUBJECT.finditer(own) if _EN_SUBORDINATE.search(own, 0, m.start())), None))


def _en_sex(m: re.Match[str] | None) -> str | None:
    return None if m is None else "female" if m.group().lower() in ("she", "herself") else "male"


def _own_thing(own: str, zh: bool) -> str | None:
    """ "male" or "female" where the mention's verb takes his or her own thing (Agnes put down her
    basket), else None."""
    m = None if zh else _EN_OWN.match(own)
    return None if m is None else "female" if m.group(1) == "her" else "male"


def _tags_speech(text: str, start: int, own: str, lang: str) -> bool:
    """Does the mention at `start` (its sentence's rest `own`) tag a quotation ("It is," said Lucy;
    Lucy asked; “…”秀英说)? Then the tag after the next quotation is the other speaker's."""
    before = text[max(0, start - 12) : start].rstrip(" ,")
    return bool(_SPEECH_BEFORE[lang].search(before) or _SPEECH_AFTER[lang].match(own))


def _by_pronouns(he: Counter[str], she: Counter[str]) -> dict[str, str]:
    """Name -> the sex the pronouns after it say more often."""
    return {n: "male" if he[n] > she[n] else "female" for n in he.keys() | she.keys() if he[n] != she[n]}


def _gender(
    c: Character,
    he: int,
    she: int,
    lang: str,
    titled: Counter[tuple[str, str]],
    shared: Collection[str] = (),
    short: bool = False,
) -> str | None:
    """From the name (女, 夫人); else from titles (Mr., Miss) and the pronouns after its mentions,
    a title weighing as much as TITLE_WEIGHT pronouns (Mrs. Roylott once is his wife, not he). In a
    novel 他 may be anyone's, so a man needs two; in a short story (`short`) one uncontradicted will do."""
    if lang == "zh":
        if _ZH_FEMALE.search(c.name) or she > he:
            return "female"
        return "male" if he >= 2 or short and he > she else None
    # Mr. Bennet is not his daughter Lydia Bennet: a surname several characters share tells nobody's gender.
    own = [n for n in c.names if n not in shared]
    he += TITLE_WEIGHT * sum(titled[(n, "male")] for n in own)
    she += TITLE_WEIGHT * sum(titled[(n, "female")] for n in own)
    if he >= 2 * she and he > 0:  # one pronoun and no other is enough; against another, twice as many
        return "male"
    if she >= 2 * he and she > 0:
        return "female"
    return None
