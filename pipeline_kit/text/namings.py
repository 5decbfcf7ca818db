"""Where a text gives someone's name, and whom it names: "My name is Edmund Crake", "They call
me Bess", "Davey," answering "What's your name?", "who introduced himself as Mr. Pollard", "his
name, it turned out, was Amos Reed", a boy named Davey, a name read out and owned ("Mr. Owen
Lark." - "That's me,"), 她叫沈静秋, 大家都叫他七爷, 那个光头男孩叫狗蛋, 我姓许，单名一个澄字, and a
name called to a newcomer ("Come down, Arthur!" to the boy in the tree).

A name so given is a person's, whatever its shape and however seldom the text repeats it. The
one it names is the unnamed person the text brought in last before it, of the sex the naming
tells (her, a boy, 她), or of the noun it names (那个光头男孩): the stranger who knocked at the
door is Edmund Crake from the first shot he is in, so he keeps one face, his looks and his he.
That person may have come in a chapter or two before and be met again by what they are (the
fisherman, 那个满脸胡子的汉子); in a long book only someone more than "the man" or 那人 is carried
so. A naming is news only: a name the narration gave before, in any chapter, is its holder's own;
and whoever calls or reads a name out is not the one it names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pipeline_kit.text.cast_roles import EN_BARE, EN_SPEECH, PERSON_NOUNS, ZH_BARE
from pipeline_kit.text.moments import CONTEXT, ZH_CALLED, Someone, mentioned, referred_back, refers_back, someones
from pipeline_kit.text.prompts import narration_only, unnamed_in
from pipeline_kit.text.zh_dictionary import frequencies
from pipeline_kit.text.zh_subjects import SHORT_TEXT, name_shaped

_HAN = r"\u4e00-\u9fff"
_CAP = r"(?!I[’']\w)[A-Z][a-z’']+"  # not I'm
# Ranks and titles before a name given: Private Sam Okafor is Sam Okafor; a title's sex is told.
_EN_RANKS = {
    **dict.fromkeys(
        "Private Corporal Sergeant Lieutenant Captain Major Colonel Sir Lord Father Brother Mr Master".split(), "male"
    ),
    **dict.fromkeys("Mrs Miss Ms Lady Sister Mother".split(), "female"),
    **dict.fromkeys("Dr Doctor Professor Inspector Constable Nurse".split()),
}
_EN_NAME = rf"(?:(?P<rank>{'|'.join(_EN_RANKS)})\.? )?(?!(?:{'|'.join(_EN_RANKS)})\b)(?P<name>{_CAP}(?: {_CAP})?)"
_EN_NAME_END = r"(?=[,.!?;:—”\"]|\s(?:and|but|from|of|ma’am|ma'am|sir)\b)"
# In a quotation: one's own name said (My name is …, I'm …, They call me …).
_EN_SELF = re.compile(
    r"\b(?:[Mm]y name(?:’s|'s| is)|I[’']m|I am|(?:[Tt]hey|[Ee]veryone|[Pp]eople|[Ff]olk) calls? me|[Cc]all me"
    rf"|[Tt]he name(?:’s|'s| is)) {_EN_NAME}{_EN_NAME_END}"
)
# In the narration: who introduced himself as Mr. Pollard, gave her name as …, a boy named Davey.
_EN_GIVEN = re.compile(
    rf"\b(?:introduced (?P<self>himself|herself) as|gave (?P<own>his|her) name as"
    rf"|(?P<whose>[Hh]is|[Hh]er) name,?(?: it (?:turned out|seemed|proved|appeared),)? was"
    rf"|(?:an?|the) (?:[a-z]+ ){{0,2}}(?P<noun>{'|'.join(sorted(PERSON_NOUNS['en'], key=len, reverse=True))})"
    rf",? (?:named|called)) {_EN_NAME}{_EN_NAME_END}"
)
# A quotation that asks a name, and the one after that opens with the name alone ("Davey," said the boy).
_EN_ASKS = re.compile(r"\bname\b|\bwho are you\b|\bcall you\b|\bcalled\?", re.I)
_EN_QUOTE = re.compile(r"“([^”]*)”|\"([^\"]*)\"")
_EN_ANSWER = re.compile(rf"^\s*{_EN_NAME}(?=[.!]|,?\s*$)")  # "Davey," / "Pen. Pen Marlow." (not "Miss Roylott, you…")
_EN_NAME_ALONE = re.compile(rf"\s*{_EN_NAME}[.!]?\s*")  # "Tom Hale." read out: a quotation that is a name
# Owning a name just read out or called for: "That's me," "It is I."
_EN_ME = re.compile(
    r"\s*(?:(?:Yes|Aye|Why),? )?"
    r"(?:[Tt]hat[’']s me|[Tt]hat is me|[Tt]hat[’']s my name|[Ii]t[’']s me|[Ii]t is I|[Hh]ere)\b"
)
# A name called to someone in a quotation ("Come down, Arthur!", "Kit, hold the lamp"): whom it is
# said to, the unnamed person just brought in, where the narration has not named them before.
_EN_CALLED = re.compile(rf"(?:^|[,;] ){_EN_NAME}(?=[!.,])")  # not "Crake?": asked about
_ZH_NAME = rf"(?P<name>[{_HAN}]{{2,3}}?)(?=[，。！？；、”」])"
_ZH_CALL = re.compile("[叫姓]")
_ZH_NOUNS = "|".join(sorted(PERSON_NOUNS["zh"], key=len, reverse=True))
_ZH_GIVEN = re.compile(
    # 她叫沈静秋 / 我叫石头 / 他名叫… / 我姓孙，叫孙铁柱 / 俺叫…: the pronoun is called
    rf"(?P<who>[他她我俺])(?:姓[{_HAN}]{{1,2}}，?)?{ZH_CALLED}{_ZH_NAME}"
    # 大家都叫他七爷 / 叫我老何: called so by others
    rf"|叫(?P<obj>[他她我俺])做?{_ZH_NAME.replace('name', 'name2')}"
    # 那个光头男孩叫狗蛋 / 这个女人名叫…: an unnamed person called so
    rf"|(?P<noun>{_ZH_NOUNS}){ZH_CALLED}{_ZH_NAME.replace('name', 'name3')}"
    # 我姓许，单名一个澄字 / 在下姓陆名青: a surname and a given name, said apart
    rf"|(?P<me>我|俺|在下|小人|小生|晚生)姓(?P<surname>[{_HAN}]{{1,2}}?)[，,]?(?:单名一个|单名|名叫|名)"
    rf"(?P<given>[{_HAN}]{{1,2}}?)(?=字|[，。！？；、”」])"
)
_ZH_SEX = {"他": "male", "她": "female"}
_ZH_SELF = ("我", "俺", "在下", "小人", "小生", "晚生")  # I, as a speaker says it
_ZH_ASKS = re.compile(r"甚|什么|谁|哪|啥|怎")
ZH_COMMON = 50  # a word jieba met this often is no name given (老何 12, 狗蛋 3; 小名 76, 父王 152)


@dataclass(frozen=True)
class Naming:
    """A name given at `at` (the end of the paragraph for a name said in speech: its speaker may be
    tagged after it), written at `start`, the sex it tells of its holder, and the noun naming them
    (boy, 男孩), if any."""

    at: int
    start: int
    name: str
    sex: str | None = None
    noun: str | None = None
    called: bool = False  # said to them: theirs only where the narration has not named them before


@lru_cache(maxsize=256)
def namings(text: str, lang: str) -> tuple[Naming, ...]:
    """Every name `text` gives someone (see the module docstring), in order."""
    return tuple(sorted(_zh_namings(text) if lang == "zh" else _en_namings(text), key=lambda n: n.at))


def _en_namings(text: str) -> list[Naming]:
    plain = narration_only(text)
    out = []
    for m in _EN_SELF.finditer(text):  # one's own name, said in a quotation
        if plain[m.start()] == " ":
            rank = _EN_RANKS.get(m.group("rank") or "")
            out.append(Naming(_paragraph_end(text, m.end()), m.start("name"), m.group("name"), rank))
    for m in _EN_ASKS.finditer(text):  # "What's your name?" … "Kit," said the boy
        if plain[m.start()] != " ":
            continue
        q = _EN_QUOTE.search(text, text.find("\n", m.end()) + 1 or len(text), m.end() + CONTEXT // 2)
        answer = _EN_ANSWER.match(q.group(1) if q.group(1) is not None else q.group(2)) if q else None
        if q and answer and not _EN_SELF.match(text, q.start() + 1):
            rank = _EN_RANKS.get(answer.group("rank") or "")
            out.append(
                Naming(_paragraph_end(text, q.end()), q.start() + 1 + answer.start("name"), answer.group("name"), rank)
            )
    for q in _EN_QUOTE.finditer(text):  # "Mr. Owen Lark." read out, then "That's me," he said
        said = q.group(1) if q.group(1) is not None else q.group(2)
        name = _EN_ANSWER.match(said)
        reply = _EN_QUOTE.search(text, q.end(), q.end() + CONTEXT // 2) if name else None
        if name and reply and _EN_ME.match(reply.group(1) if reply.group(1) is not None else reply.group(2)):
            rank = _EN_RANKS.get(name.group("rank") or "")
            at = q.start() + 1 + name.start("name")  # called out: the one who answers to it
            out.append(Naming(_paragraph_end(text, reply.end()), at, name.group("name"), rank, called=True))
    for q in _EN_QUOTE.finditer(text):  # "Come down, Arthur!" to the boy in the tree
        said = q.group(1) if q.group(1) is not None else q.group(2)
        if _EN_NAME_ALONE.fullmatch(said):
            continue  # "Tom Hale." alone is called for, to whoever answers to it, not said to anyone
        for m in _EN_CALLED.finditer(said):
            rank = _EN_RANKS.get(m.group("rank") or "")
            out.append(Naming(q.start(), q.start() + 1 + m.start("name"), m.group("name"), rank, called=True))
    for m in _EN_GIVEN.finditer(plain):  # who introduced himself as …, a boy named …
        told = (m.group("self") or m.group("own") or m.group("whose") or "").lower()
        sex = {"himself": "male", "his": "male", "herself": "female", "her": "female"}.get(told)
        noun = m.group("noun")
        sex = sex or _EN_RANKS.get(m.group("rank") or "") or (PERSON_NOUNS["en"][noun] if noun else None)
        out.append(Naming(m.end(), m.start("name"), m.group("name"), sex, noun))
    return list({n.start: n for n in sorted(out, key=lambda n: n.called, reverse=True)}.values())


# The tag after a quotation: ", said the stranger", " asked the old man".
_EN_TAG_AFTER = re.compile(rf"[”\"],?\s+(?:{EN_SPEECH}|called)\s+(?P<who>the (?:[a-z-]+ ){{0,2}}[a-z-]+)\b")


def role_namings(texts: Sequence[str], roles: dict[str, set[str]], names: Collection[str]) -> list[tuple[str, str]]:
    """(role, name) where a role character gives its own name ('"Hale," said the stranger. "Tom
    Hale."'): in a short story the role is that person, whose name the text was keeping back (a
    novel's role words are many people)."""
    if sum(map(len, texts)) >= SHORT_TEXT:
        return []
    role_of = {form.lower(): role for role, forms in roles.items() for form in forms}
    out = []
    for text in texts:
        for naming in namings(text, "en"):
            ends = [at for at in (text.find("”", naming.start), text.find('"', naming.start)) if at >= 0]
            tag = _EN_TAG_AFTER.match(text, min(ends)) if ends and not naming.called else None
            role = role_of.get(tag.group("who").lower()) if tag else None
            held = [w for w in (naming.name, *reversed(naming.name.split())) if w in names]
            if role and held:
                out.append((role, held[0]))
    return out


def _zh_namings(text: str) -> list[Naming]:
    out = []
    found = {}  # each naming holds a 叫 or a 姓: read a few characters around each, not the whole text
    for at in (m.start() for m in _ZH_CALL.finditer(text)):
        for m in _ZH_GIVEN.finditer(text, max(0, at - 6), at + 12):
            if m.start() <= at < m.end():
                found.setdefault(m.start(), m)
    for m in found.values():
        key = next(k for k in ("name", "name2", "name3", "surname") if m.group(k))
        name = m.group(key) + (m.group("given") if key == "surname" else "")
        if not name_shaped(name) or _ZH_ASKS.search(name) or frequencies().get(name, 0) >= ZH_COMMON:
            continue  # 叫甚名字 asks; 待我叫开门, 他叫父王: 叫 shouts or addresses, the word is no name
        who = m.group("who") or m.group("obj") or m.group("me")
        noun = m.group("noun")
        said = bool(who) and who in _ZH_SELF  # in speech: the speaker, tagged before or after in the paragraph
        at = _paragraph_end(text, m.end()) if said else m.end()
        sex = _ZH_SEX.get(who or "") or (PERSON_NOUNS["zh"][noun] if noun else None)
        out.append(Naming(at, m.start(key), name, sex, noun))
    return out


def _paragraph_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


LOOKBACK = 2  # chapters: someone left unnamed this few chapters back may be named now


def named_unnamed(
    texts: Sequence[str], lang: str, owns: Sequence[list[tuple[int, int, str]]], canonical: dict[str, str]
) -> list[list[tuple[int, int, str]]]:
    """Per chapter of `texts` (a book's, in order): (start, end, canonical name) of each mention of
    an unnamed person whom a naming names, in that chapter or up to LOOKBACK chapters on (the
    stranger, then "My name is Edmund Crake"; 一个挑着担子的汉子, then a chapter on 那个满脸胡子的
    汉子 says 我姓孙，叫孙铁柱): the character of that name, from the person's first mention on.
    `owns`: each chapter's mentions of characters; `canonical`: each name and alias of a character
    -> its canonical name (a name the bible lacks names nobody)."""
    read: dict[int, _Chapter] = {}
    told: dict[int, set[str]] = {}  # each chapter's characters named in its narration

    def chapter(k: int, carried: Sequence[tuple[int, Someone]] = ()) -> _Chapter:
        if carried or k not in read:
            read[k] = _Chapter.read(k, texts[k], lang, owns[k], carried)
        return read[k]

    def told_before(k: int) -> Callable[[str], bool]:
        def named_in(j: int) -> set[str]:
            if j not in told:
                plain = read[j].plain if j in read else narration_only(texts[j])
                told[j] = {n for o, _, n in owns[j] if plain[o] != " "}
            return told[j]

        return lambda name: any(name in named_in(j) for j in range(k))

    whose: dict[tuple[int, Someone], str] = {}  # (chapter brought in, person) -> the name given
    short = sum(map(len, texts)) < SHORT_TEXT  # a story in chapters: "the girl" is the one before
    for k, text in enumerate(texts):
        given = [n for n in namings(text, lang) if _holder(n.name, canonical)]
        if not given:
            continue
        found, unfound = _whose(given, chapter(k), canonical, told_before(k))
        vague = any(home == k and refers_back(p, lang) for home, p in found)  # "the stranger" of here
        if (unfound or vague) and k > 0:  # someone named here may have come in a chapter before
            carried = [
                (j, p)
                for j in range(max(0, k - LOOKBACK), k)
                for _, home, p in chapter(j).seen
                if home == j and (short or not _bare(p, lang))
            ]
            left = list(dict.fromkeys(c for c in carried if c not in whose))
            if left:
                found, _ = _whose(given, chapter(k, left), canonical, told_before(k))
        found |= {
            (j, p): name
            for (home, person), name in found.items()
            if home == k and _definite(person) and (short or not _bare(person, lang))
            for j in range(max(0, k - LOOKBACK), k)  # "the fisherman" came in: the one of a chapter before
            for _, h, p in chapter(j).seen
            if h == j and p.name == person.name and (j, p) not in whose
        }
        for person, name in found.items():
            whose.setdefault(person, name)
    return [read[k].spans_of(whose, lang) if k in read else [] for k in range(len(texts))]


@dataclass
class _Chapter:
    """A chapter's narration as the namings read it: its characters' mentions there and the
    unnamed people it brings in, meets again or carries from chapters before, by offset."""

    plain: str
    spans: list[tuple[int, int, str]]
    seen: list[tuple[int, int, Someone]]  # (offset, chapter brought in, person)

    @classmethod
    def read(
        cls, k: int, text: str, lang: str, own: list[tuple[int, int, str]], carried: Sequence[tuple[int, Someone]] = ()
    ) -> _Chapter:
        """Chapter `k`'s reading; `carried`: (chapter, person) of the people left unnamed before."""
        plain = narration_only(text)
        spans = [s for s in own if plain[s[0]] != " "]  # named in the narration (a name said is no one there)
        found = [(o, k, p) for o, p in unnamed_in(plain, lang, [(o, e) for o, e, _ in spans])]
        # one of a chapter before, met again by what they are before anyone of that name comes in here
        first = {p.name: o for o, _, p in sorted(found, key=lambda f: f[0], reverse=True)}
        met: list[tuple[int, int, Someone]] = []
        for j, person in carried:
            again = mentioned(plain, lang, [person])
            met += [(o, j, person) for o, _ in again if o < first.get(person.name, len(plain))]
        met.sort(key=lambda f: f[0])
        came_in = {p: j for _, j, p in met}
        back = referred_back(plain, lang, [(o, p) for o, _, p in met])  # then "said the stranger"
        names = {p.name for _, p in carried}
        found = [  # "The stranger smiled" after one of a chapter before was met again: that one
            next(((o, j, q) for m, j, q in reversed(met) if m < o), (o, h, p))
            if h == k and refers_back(p, lang) and p.name not in names
            else (o, h, p)
            for o, h, p in found
        ]
        found += met + [(o, came_in[p], p) for o, p in back]
        by_offset: dict[int, tuple[int, Someone]] = {}
        for o, home, p in found:  # one brought in there is not met again there
            by_offset.setdefault(o, (home, p))
        return cls(plain, spans, [(o, home, p) for o, (home, p) in sorted(by_offset.items())])

    def spans_of(self, whose: dict[tuple[int, Someone], str], lang: str) -> list[tuple[int, int, str]]:
        """(start, end, name) of each mention here of someone `whose` names."""
        raw = dict(someones(self.plain, lang))  # as each was written where it was brought in (a boy of about ten)
        out = []
        for offset, home, person in self.seen:
            if name := whose.get((home, person)):
                written = raw[offset].described if offset in raw else _written(self.plain, offset, person, lang)
                out.append((offset, offset + len(written), name))
        return out


def _holder(name: str, canonical: dict[str, str]) -> str | None:
    """The character going by `name` (Edmund Crake, or Crake of it)."""
    return canonical.get(name) or next((canonical[w] for w in reversed(name.split()) if w in canonical), None)


def _whose(
    given: Sequence[Naming], chapter: _Chapter, canonical: dict[str, str], told_before: Callable[[str], bool]
) -> tuple[dict[tuple[int, Someone], str], bool]:
    """(chapter brought in, person) -> the name each naming of `given` gives them in `chapter`,
    and whether a naming that is news found no one. A name the narration of a chapter before gave
    is its holder's own, no news."""
    out: dict[tuple[int, Someone], str] = {}
    unfound = False
    for naming in given:
        name = _holder(naming.name, canonical)
        if name is None or told_before(name):
            continue
        person = _named(naming, chapter, name)
        if person is None:
            unfound = True
        elif person not in out:
            out[person] = name
    return out, unfound


def _named(naming: Naming, chapter: _Chapter, name: str) -> tuple[int, Someone] | None:
    """(chapter brought in, person) of the unnamed person `naming` names: the last brought in or met
    again before it within CONTEXT, of its sex and noun where it tells them; none when the
    narration named that character before (Nell, then "I'm Nell Ardent": her own name, no one
    else's)."""
    seen, spans = chapter.seen, chapter.spans
    for offset, home, person in reversed(seen):
        if offset >= naming.at:
            continue
        if naming.at - offset > CONTEXT:
            return None
        if naming.sex and person.gender != naming.sex and (naming.called or person.gender is not None):
            continue  # a titled name called to someone: to one of the sex its title says (Miss Hunter: a young lady)
        if naming.noun and not person.words.endswith(naming.noun):
            continue
        if naming.called and _speaks(chapter.plain, offset, person):
            continue  # "the farmer read out the names: 'Tom Hale.'": the one calling is not the one called
        if any(o < naming.start and n == name for o, _, n in spans):
            return None  # named in the narration before: the naming is no news ("I'm Anna," said Anna)
        return home, person
    return None


_EN_SPEAKS = rf"\s+(?:\w+ly\s+)?(?:{EN_SPEECH}|says|called|read|began)\b"  # the farmer read out


def _speaks(plain: str, offset: int, person: Someone) -> bool:
    """Does `person`, met at `offset`, speak there (the farmer read out, the woman said)?"""
    head = re.escape(person.words.split()[-1])
    return re.compile(rf"(?:\S+ ){{0,4}}?{head}{_EN_SPEAKS}").match(plain, offset) is not None


def _definite(person: Someone) -> bool:
    """Was `person` brought in as someone known already (the fisherman, 那个汉子), not as new (a
    fisherman, 一个汉子)?"""
    return not person.described.startswith(("一", "a ", "an ", "A ", "An "))


def _bare(person: Someone, lang: str) -> bool:
    """Is `person` no more than a man or a woman (the man, the young lady, 那人, the stranger)? In a
    book of many chapters, one such is seldom the one of a chapter before."""
    if refers_back(person, lang):
        return True
    return person.words.split()[-1] in EN_BARE if lang == "en" else person.name in ZH_BARE


def _written(plain: str, offset: int, person: Someone, lang: str) -> str:
    """How a person met again at `offset` is written: 老妇人, the old man, the woman (as `mentioned`
    finds them)."""
    if lang == "zh":
        return person.name
    head = re.escape(person.words.split()[-1])
    again = re.compile(rf"[Tt]he (?:{re.escape(person.words)}|{head})\b").match(plain, offset)
    return again.group() if again else f"the {person.words}"
