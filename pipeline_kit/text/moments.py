"""What a shot shows happening, as an image prompt can say it: who does what, one short clause per
moment, never the novel's paragraph.

A shot's sentences (its spoken words already out) are staged: a he/she (他/她) opening a sentence
or a clause becomes the person it refers to, the sentence's own subject of that gender (Mara
climbed, and she…) else the last one named before it with that gender (a person whose gender
the text never told fits either), so the picture's subject has a name; a person the text brings
in without a name (An old man in a blue coat…, 一个白头发的老妇人) is a referent too, named by
what they are (the old man). The sentences where someone acts are kept (all of them when nobody
does); each is cut to its head: the clauses before the first one with a person go (In the
morning, 天快黑的时候), so does a clause that only sets up the next (When he saw…, 正说着) and a
conjunction opening it (and, Then), an apposition after a name goes (Silas Ardent, her father,
was waiting), and what is left is clipped to a few words at a clause or phrase boundary."""

from __future__ import annotations

import re
from functools import lru_cache
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pipeline_kit.text.cast_roles import EN_BARE, EN_KIN_NOUNS, EN_SPEECH, PERSON_NOUNS, ZH_KIN
from pipeline_kit.text.names import _EN_TITLE

CONTEXT = 600  # a leading pronoun may mean a person named this many characters before the shot
MOMENTS = 3  # the Action line names at most this many moments: the first, the middle, the last
WORDS = 14  # an English moment is at most this many words ...
MIN_WORDS = 5  # ... and, where its clauses allow, no fewer than this
CHARS = 26  # a Chinese moment is at most this many characters ...
MIN_CHARS = 6  # ... and no fewer, where its clauses allow
_CLAUSE = {"en": re.compile(r"\s*(?:[,;:—]+|\s-\s)\s*"), "zh": re.compile(r"[，,；;：:、—]+")}
_JOIN = {"en": ", ", "zh": "，"}
_EN_NAMED_CLAUSE = re.compile(
    r"(?:whose name was|who was called|called|named) (?P<name>[A-Z][\w’'-]*(?: [A-Z][\w’'-]*)?)"
)
MOMENT_SEP = {"en": "; ", "zh": "；"}  # between an Action line's moments (no moment holds one)
_EN_PRONOUN = re.compile(r"^(?:(?P<lead>[A-Z][a-z]+) )?(?P<p>[Hh]e|[Ss]he)\b(?![’'])")
_ZH_PRONOUN = re.compile(r"^(?P<lead>)(?P<p>[他她])(?![们])")
# A clause's subject pronoun: he/she opening a sentence or a clause (after a comma, a conjunction
# or a subordinator: “…,” said Mara, and she kept climbing; When he saw…, he lifted…).
_OPENER = r"and|but|then|so|when|while|as|after|before|until|because|though|although|if|once|since"
_LEADING = {
    "en": re.compile(rf"(?:^\s*|[,;]\s+|\b(?i:{_OPENER})\s+)(?:(?P<lead>[A-Z][a-z]+) )?(?P<p>[Ss]?[Hh]e)\b(?![’'])"),
    "zh": re.compile(r"(?:^\s*|[，；：])(?P<lead>)(?P<p>[他她])(?![们])"),
}
# A plural subject: they (always a subject in English) doing something (They were admirable things
# is a state, mostly of things; they were sitting is done), 他们 opening a sentence or a clause
# (看了他们 is an object): the people there act together.
_PLURAL = {
    "en": re.compile(r"\b[Tt]hey\b(?!\s+(?:were|are)\s+(?!\w+ing\b))"),
    "zh": re.compile(r"(?:^\s*|[，；])[他她]们"),
}
# A clause that only sets up another (When he saw…, 正说着，…): no moment opens with it.
_SUBORDINATE = {
    "en": re.compile(r"^(?:when|while|as|after|before|until|because|though|although|if|once|since)\b", re.I),
    "zh": re.compile(r"(?:着|时|后|之后|以后|的时候|之前|以前)$"),
}
_CONJUNCTION = {"en": re.compile(r"^(?:and|but|then|so|and then)\s+", re.I), "zh": re.compile(r"^(?:然后|于是)")}
_EN_VERB = (  # the past tense a narration goes on in: regular, or one of the common irregular verbs
    r"(?:was|were|had|did|stood|sat|came|went|ran|lay|leant|leapt|knelt|crept|held|took|got|made|saw|knew|kept"
    r"|rose|fell|spoke|said|told|found|brought|left|gave|began|rode|drove|wore|bore|swore|shook|woke|wrote|hid"
    r"|hung|led|met|paid|read|sent|slept|struck|swung|thought|threw|won|stole|froze|drew|grew|flew|wept|felt"
    r"|heard|caught|bent|put|set|let|cut|shut|hit|sang|rang|drank|ate|sank|stuck|swept|[a-z]+ed)"
)
_NOUNS = {lang: "|".join(sorted(nouns, key=len, reverse=True)) for lang, nouns in PERSON_NOUNS.items()}
# What a described person's phrase never ends on (in a red headscarf: "red" is no verb of theirs).
_EN_NOT_AFTER_ARTICLE = "".join(f"(?<! {w})" for w in "a an the his her their its".split())
# A character of the phrase describing someone: up to a clause's end or its relative (…, who, which).
_EN_PHRASE_CHAR = r"(?:(?!\b(?:who|whom|whose|which|that)\b)[^,.;:!?“”\"])"
# The words after a person's noun that go on describing them: in a red coat, by the window, of ten.
_EN_WITH = r"(?:in|with|wearing|carrying|on|by|at|near|beside|behind|from|of|[a-z]{2,}ing)"  # …, mending nets
_EN_PERSON = (
    rf"(?P<adjs>(?:(?!(?:an?|the|his|her|their|its|of|and|or)\b)[a-z][\w-]* ){{0,3}}?)(?P<noun>{_NOUNS['en']})"
    rf"(?P<rest>(?: {_EN_WITH} {_EN_PHRASE_CHAR}{{1,40}}?{_EN_NOT_AFTER_ARTICLE})?)"
)
# Brought in as a clause's subject (An old man in a blue coat stood…, The squire rode…, Her father
# sat…), or as what someone finds or sees (Under the tree she found a girl asleep).
_EN_SOMEONE = re.compile(
    rf"\b(?P<det>[Aa]n?|[Tt]he|[Hh]is|[Hh]er|[Tt]heir|[A-Z][\w-]*[’']s) {_EN_PERSON}"
    rf"(?= (?:[a-z]+ly |only |just |still |then |also |never )?{_EN_VERB}\b)"  # The surveyor only lifted
)
_EN_OWNER = re.compile(r"(?:his|her|their|\w+[’']s)$")  # a possessive brings in kin and household only
_EN_DETERMINERS = frozenset("a an the his her their".split())
# A titled name alone (not Mr. Sherlock Holmes): a person the bible may hold too seldom to list.
_EN_TITLED_ONCE = re.compile(rf"\b(?:(?:old|young|little) )?({'|'.join(_EN_TITLE)})\.? ([A-Z][a-z]+)\b(?!\.? [A-Z])")
_EN_PREDICATE = re.compile(r"\b(?:was|were|is|are|be|been|as|like|than|of)\s+$", re.I)
# What someone is, said again after a comma: "She was the miller's widow, a broad woman of fifty".
_EN_APPOSED = re.compile(r"\b(?:was|were|is|are)\b[^.;:!?“”\"]*,\s+$")
_EN_MET = re.compile(
    r"\b(?:found|saw|noticed|spotted|met|discovered|passed|woke|[Tt]here (?:was|were)"
    r"|(?:[Tt]here )?(?:stood|sat|lay|came|walked|rode|ran|waited)"  # Behind the desk sat a fat old gentleman
    rf"|{EN_SPEECH}|called"  # "Here," said a boy at the end of the table
    # Among the passengers who came down the gangway was a tall girl (no subject before the was)
    r"|(?<![\w,] )(?:Among|Amongst|In|On|At|Beside|Behind|Near|Under|Inside|Outside|Across|Beyond|Before)"
    r" (?:(?!\b(?:he|she|it|they|I|we|you|this|that)\b)[^.;:!?“”\"]){3,80}? (?:was|were))"
    rf" (?P<det>an?) (?P<adjs>(?:[a-z][\w-]* ){{0,3}}?)"
    rf"(?P<noun>{_NOUNS['en']})(?:(?P<rest> {_EN_WITH} {_EN_PHRASE_CHAR}{{1,40}}?)"
    r"(?=[,.;:!?“”\"]|\s(?:and|but|who|which|that|as|when|while)\b|$)"
    r"|(?=[,.;:!?“”\"]|\s(?:and|but|who|which|that|as|when|while|asleep|awake|alone|[a-z]+ing)\b|$))"
)
# Brought in beside what they are among others, then acting: "The eldest of the children, a freckled
# boy in a torn jersey, climbed…" (not "She was his widow, a broad woman": _EN_APPOSED).
_EN_SET_BESIDE = re.compile(rf"(?<=, )(?P<det>an?) {_EN_PERSON}(?=, {_EN_VERB}\b)")
# Kin by whose they are, opening a clause and doing something (石头的娘躺在炕上; not 娘的病): the
# kinship word is found first (the owner before 的 is read back from it: a scan is fast only so).
_ZH_KIN_OF = re.compile(rf"的({'|'.join(sorted(ZH_KIN, key=len, reverse=True))})(?![的们])")
_EN_KIN_OF = re.compile(rf"(?:’s|'s) (?:[a-z]+ )?(?:{'|'.join(sorted(EN_KIN_NOUNS, key=len, reverse=True))})\b")


def kin_owner(text: str, end: int, lang: str) -> bool:
    """Is the name ending at `end` said only as whose kin comes next (罗三娘的儿子虎子, Ada's grandson)?
    Kin may come without the one they belong to."""
    return (_ZH_KIN_OF if lang == "zh" else _EN_KIN_OF).match(text, end) is not None


_ZH_OWNER = re.compile(r"(?:^|[，。！？；：”」\s])([\u4e00-\u9fff]{1,4})$")
_ZH_SOMEONE = re.compile(
    rf"(?P<det>一[个位名]|个)(?P<adjs>[^，。！？、；：“”]{{0,8}}?的)?"
    rf"(?P<sex>小?[男女]?)(?P<noun>{_NOUNS['zh']})"
)
_ZH_SEXES = {"男": "male", "女": "female"}  # 一个年轻的女先生: the word before the noun tells
# A pronoun whose verb gives the name (她叫沈静秋, he was called Tom): the name follows; no other.
ZH_CALLED = r"(?:的名字|名字)?(?:名叫|叫做?)"  # (她)叫沈静秋, (他的名字)叫…: the verb a name is given with
_NAMED_THEN = {"en": re.compile(r" (?:was|is) (?:called|named) "), "zh": re.compile(ZH_CALLED)}
_GENDER = {"he": "male", "she": "female", "him": "male", "her": "female", "他": "male", "她": "female"}
ZH_ACTS_ON = "把给让叫对向跟和同被替看见打问请拜教令扯拿救随将与望着了"  # 他/她 after one is acted on
# A pronoun a verb or preposition acts on: him; her before no noun of hers (at her for a while, gave
# her a coin; not her hand); 他/她 after 把, 给, 让 or a verb that takes a person.
_OBJECT = {
    "en": re.compile(
        r"(?<!above )(?<!behind )(?<!around )(?<!beside )(?<!below )(?<!beneath )(?<!about )(?<!round )"
        r"(?<!upon )(?<!over )(?<!under )(?<!within )"  # the beam above him: his own surroundings
        r"\b(him|her)\b(?=\s*(?:[.,;:!?—]|$)|\s+(?:for|to|with|at|in|on|into|and|again|away|back|up|down|out|as|by"
        r"|from|over|off|a|an|the|some|no)\b)",
        re.I,
    ),
    "zh": re.compile(rf"(?<=[{ZH_ACTS_ON}])([他她])(?!们)"),
}
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


@dataclass(frozen=True)
class Someone:
    """A person the text brings in without a name (An old man in a blue coat stood…, 一个白头发的
    老妇人…): as a moment names them (the old man, 老妇人), as the Characters line describes them
    (an old man in a blue coat), and their gender when the noun tells it."""

    name: str
    described: str
    gender: str | None

    @property
    def words(self) -> str:
        """The name less its article: what a sentence about them holds (old man)."""
        return self.name.removeprefix("the ")


Referent = str | Someone  # a character's canonical name, or someone unnamed


@lru_cache(maxsize=256)  # a chapter's narration: its staging and the bible's namings read it alike
def someones(text: str, lang: str) -> list[tuple[int, Someone]]:
    """(offset, person) of each unnamed person `text` brings in: in English a noun phrase for a
    person followed by its verb (An old man in a blue coat stood…, At the hedge a man on a horse
    reined in, Her father sat; "the man" alone is anyone), what someone finds or sees (she found a
    girl asleep; there was a stranger on the quay), or a titled name (old Mr. Fong); in Chinese
    一个/一位 (or 来了个) and a noun for a person (船头坐着一个老汉), a bare 人 only with words
    describing it (一个白头发的人: 一个人在走 is alone, not someone), or kin by whose (石头的娘)."""
    out = []
    if lang == "zh":
        for m in _ZH_SOMEONE.finditer(text):
            noun, bare = m.group("noun"), m.group("det") == "个"
            if bare and text[m.start() - 1 : m.start()] not in ("来", "了", "有"):
                continue  # 来了个年轻人 brings someone in; 那个人, 是个好人 do not
            if noun != "人" or m.group("adjs"):
                described = "一" + m.group() if bare else m.group()
                sex = _ZH_SEXES.get(m.group("sex")[-1:]) or PERSON_NOUNS["zh"][noun]
                name = m.group("sex") + noun if len(noun) > 1 else "那人"
                out.append((m.start(), Someone(name, described, sex)))
        for m in _ZH_KIN_OF.finditer(text):
            owner = _ZH_OWNER.search(text, max(0, m.start() - 5), m.start())
            if owner:
                kin = text[owner.start(1) : m.end()]
                out.append((owner.start(1), Someone(kin, kin, ZH_KIN[m.group(1)])))
        return sorted(out, key=lambda found: found[0])
    for m in _EN_SOMEONE.finditer(text):
        if _EN_PREDICATE.search(text, max(0, m.start() - 8), m.start()) or _EN_APPOSED.search(
            text, max(0, m.start() - 80), m.start()
        ):
            continue  # she was a girl loved by all: what someone is, not someone else
        det, noun = m.group("det").lower(), m.group("noun")
        if det == "the" and noun in EN_BARE and not m.group("adjs"):
            continue  # "the man" alone is anyone: someone brought in before, if anybody
        if _EN_OWNER.match(det) and noun not in EN_KIN_NOUNS:
            continue  # her figure, his client: a possessive brings in kin and household only
        out.append((m.start(), _en_someone(m)))
    subjects = {o for o, _ in out}
    met = [*_EN_MET.finditer(text), *_EN_SET_BESIDE.finditer(text)]
    out += [(m.start("det"), _en_someone(m)) for m in met if m.start("det") not in subjects]
    for m in _EN_TITLED_ONCE.finditer(text):  # old Mr. Fong, met too seldom to be in the bible
        out.append((m.start(), Someone(m.group(2), m.group(), _EN_TITLE[m.group(1)])))
    return sorted(out, key=lambda found: found[0])


def _en_someone(m: re.Match[str]) -> Someone:
    """The person an English noun phrase brings in: "the old man", "her father", "Agnes's father",
    described as the text does (its determiner in lower case)."""
    det, noun = m.group("det"), m.group("noun")
    phrase = m.string[m.start("det") : m.end()].strip()
    if det.lower() in _EN_DETERMINERS:
        det = det.lower()
        phrase = det + phrase[len(det) :]
    name = f"{det} {m.group('adjs')}{noun}" if _EN_OWNER.match(det) else f"the {m.group('adjs')}{noun}"
    return Someone(name, phrase, PERSON_NOUNS["en"][noun])


_ZH_THAT = r"[^，。！？；：“”「」\s]{0,3}?[那这][个位]?(?:[^，。！？；：“”「」\s]{1,8}?的)?"  # 那, 那个…的


def mentioned(text: str, lang: str, known: Iterable[Someone]) -> list[tuple[int, Someone]]:
    """(offset, person) where `text` names someone brought in before by what they are: the old
    man (English, anywhere; the noun alone, the woman, where one person brought in is one),
    老妇人 opening a clause or pointed at, 那汉子 (Chinese: 秀兰是个圆脸的姑娘 is no mention)."""
    out = []
    people = list(dict.fromkeys(known))
    if lang == "zh":  # 老妇人 opening a clause, or pointed at: 那汉子, 白天那个满脸胡子的汉子
        for person in people:
            pattern = rf"(?:^|(?<=[，。！？；：”」\s]))(?:{_ZH_THAT})?(?P<at>{re.escape(person.name)})"
            out += [(m.start("at"), person) for m in re.finditer(pattern, text)]
    else:
        for person, found in zip(people, _each_met(text, people)):
            out += [(m.start(), person) for m in found]
    heads = Counter(p.words.split()[-1] for p in people) if lang == "en" else Counter()
    alone = {p.words.split()[-1]: p for p in people if heads[p.words.split()[-1]] == 1 and " " in p.words}
    if alone:  # a tall woman in a blue cloak … the woman said
        pattern = rf"\b[Tt]he ({'|'.join(map(re.escape, alone))})\b"
        out += [(m.start(), alone[m.group(1)]) for m in re.finditer(pattern, text)]
    return sorted(dict(out).items())


def _each_met(text: str, people: Sequence[Someone]) -> list[list[re.Match[str]]]:
    """Each person's English mentions in `text` ("the" and their words), exactly as a search for
    that person alone finds them, from one pass of one pattern: a chapter brings in dozens of
    people, and a pass for each was 7% of the English split."""
    # (\b[Tt] written so that the search looks for a T first, not tries every place)
    lead, tail = r"[Tt](?<=\b[Tt])he ", r"\b"
    own = [p.words for p in people]
    patterns = [re.compile(lead + re.escape(words) + tail) for words in own]
    by_first: dict[str, list[int]] = {}
    for k, words in enumerate(own):
        by_first.setdefault(words[:1], []).append(k)
    key = len("the ")  # where a mention's own words start
    found: list[list[re.Match[str]]] = [[] for _ in people]
    ends = [0] * len(people)  # a person's next mention starts after its last one, as a search goes on
    anyone = re.compile(f"{lead}(?=(?:{'|'.join(map(re.escape, own))}){tail})") if own else None
    for m in anyone.finditer(text) if anyone else ():
        at = m.start()
        for k in by_first.get(text[at + key : at + key + 1], ()):
            if at >= ends[k] and (hit := patterns[k].match(text, at)):
                found[k].append(hit)
                ends[k] = hit.end()
    return found


# Words that refer back to the one brought in last, whatever they were (那人笑着伸出手 after 一个穿
# 中山装的中年人; "looked up at the visitor" after the stranger at the door).
_BACK = {
    "zh": re.compile(r"(?:^|(?<=[，。！？；：”」\s]))(?:那人|这人|此人|来人|[这那]个陌生人)"),
    "en": re.compile(r"\b[Tt]he (?:stranger|newcomer|visitor)\b"),
}


def refers_back(person: Someone, lang: str) -> bool:
    """Is `person` no more than a word for anyone new (the stranger, 那人)?"""
    return _BACK[lang].fullmatch(person.name) is not None


def referred_back(text: str, lang: str, brought: Sequence[tuple[int, Someone]]) -> list[tuple[int, Someone]]:
    """(offset, person) where `text` refers back to someone unnamed by a word for anyone new (那人,
    the stranger): the one `brought` in last before it (offset -1: before the text)."""
    out = []
    for m in _BACK[lang].finditer(text):
        before = [p for o, p in brought if o < m.start()]
        if before and not any(o == m.start() for o, _ in brought):
            out.append((m.start(), before[-1]))
    return out


def gender_of(referent: Referent, genders: Mapping[str, str | None]) -> str | None:
    return referent.gender if isinstance(referent, Someone) else genders.get(referent)


def subjects(
    sentence: str,
    lang: str,
    here: Sequence[tuple[int, Referent]],
    last: Mapping[str | None, Referent],
    genders: Mapping[str, str | None],
    people: Collection[str],
) -> tuple[str, list[tuple[int, Referent]]]:
    """The sentence with each he/she (他/她) opening it or one of its clauses replaced by the person
    it means, and those persons: the first of its gender the sentence named before it (its
    subject: Mara climbed, and she…; `here`: (offset, person) named in it), else the last before of
    that gender or unknown (`_latest`), each with its offset; `people`: names as written."""
    seen = list(here)
    out, at, found = [], 0, []
    for m in _LEADING[lang].finditer(sentence):
        if m.group("lead") in people:  # Abel he…: not a subject pronoun
            continue
        gender = _GENDER[m.group("p").lower()]
        earlier = [(o, r) for o, r in seen if o < m.start("p") and gender_of(r, genders) == gender]
        referent = min(earlier, key=lambda e: e[0])[1] if earlier else _latest(last, gender)
        if referent is None:
            continue
        name = referent.name if isinstance(referent, Someone) else referent
        then = _NAMED_THEN[lang].match(sentence, m.end("p"))
        if then and sentence.startswith(name.split()[0], then.end()):  # 她叫沈静秋: the sentence names her
            continue
        out += [sentence[at : m.start("p")], name]
        at = m.end("p")
        seen.append((m.start("p"), referent))
        found.append((m.start("p"), referent))
    return "".join(out) + sentence[at:], found


def objects(
    sentence: str,
    lang: str,
    history: Sequence[Referent],
    here: Sequence[Referent],
    genders: Mapping[str, str | None],
) -> list[Referent]:
    """Whom the sentence's object pronouns mean (Agnes looked at her, 孙先生把她扶起来): for each,
    the last one before of that gender (or of none told) who is not named or meant in the sentence
    itself, so that the one acted on is in the picture too."""
    out: list[Referent] = []
    for m in _OBJECT[lang].finditer(sentence):
        gender = _GENDER[m.group(1).lower()]
        found = next((r for r in reversed(history) if r not in here and gender_of(r, genders) in (gender, None)), None)
        if found is not None and found not in out:
            out.append(found)
    return out


def object_genders(text: str, lang: str) -> set[str]:
    """The genders of the pronouns `text` acts on (walked to meet him: male)."""
    return {_GENDER[m.group(1).lower()] for m in _OBJECT[lang].finditer(text)}


def plural_subject(sentence: str, lang: str) -> bool:
    """Has the sentence a plural subject (they, 他们): the people there act together?"""
    return bool(_PLURAL[lang].search(sentence))


def note(last: dict[str | None, Referent], referents: Iterable[Referent], genders: Mapping[str, str | None]) -> None:
    """Note `referents`, in order, as the last named of their genders (the dict's order is the
    order they were last named in)."""
    for referent in referents:
        gender = gender_of(referent, genders)
        last.pop(gender, None)
        last[gender] = referent


def _latest(last: Mapping[str | None, Referent], gender: str) -> Referent | None:
    """The one a he or she means: the last of that gender, unless someone unnamed of no told
    gender was brought in since (a stranger stood on the quay. He was young: the stranger, not the
    uncle before); a named person whose gender the text never told is less sure than one it did
    (Ruth watched Owen. She laughed: Ruth)."""
    fits = [key for key in last if key in (gender, None)]
    if not fits:
        return None
    newest = last[fits[-1]]
    return newest if isinstance(newest, Someone) or gender not in last else last[gender]


def action_line(moments: Sequence[str], lang: str) -> str:
    """The moments an Action line names: the first, the middle and the last, at most MOMENTS."""
    if len(moments) > MOMENTS:
        moments = [moments[0], moments[len(moments) // 2], moments[-1]]
    return MOMENT_SEP[lang].join(moments)


def _head(sentence: str, lang: str, people: Collection[str] | None) -> tuple[str, bool]:
    """The sentence from its first clause with a person in it (a name or a leading pronoun), less
    a clause that only sets up the next (When…, 正说着), a conjunction opening it (and, then) and
    an apposition right after a name (one giving the name stands for who it names: The boy, whose
    name was Eli, sat → Eli sat), and whether it has a person; unchanged when it has none."""
    clauses = [c for c in _CLAUSE[lang].split(sentence.rstrip(" .。!！?？…")) if c]
    for k in range(1, len(clauses) - 1):  # The boy, whose name was Eli, sat: Eli sat
        if lang == "en" and (named := _EN_NAMED_CLAUSE.fullmatch(clauses[k])):
            clauses[k - 1 : k + 2] = [f"{named['name']} {clauses[k + 1]}"]
            break
    person = next((k for k, c in enumerate(clauses) if _has_person(c, lang, people)), None)
    clauses = clauses[person or 0 :]
    while len(clauses) > 1 and _SUBORDINATE[lang].search(clauses[0]) and _has_person(clauses[1], lang, people):
        clauses = clauses[1:]  # When he saw the beam, he waved: the moment is the main clause
    if clauses:
        clauses[0] = _CONJUNCTION[lang].sub("", clauses[0])
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
