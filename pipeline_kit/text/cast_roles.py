"""Unnamed people as characters: a role word that speaks or acts (樵夫道, 童子道; "said the
inspector", "the old woman rose") is a character named by the role, with the gender the word says.

A role word is a common noun for a person, told by the language's morphology and common nouns
(an occupation, a kinship or an age-sex noun; no name of any book): 樵夫 ends in 夫, 老妇 is 老 and
a word for a woman; "the old woman" is an age-sex noun with an adjective, "the inspector" an
occupation; a Chinese speaker the text counts as one being (一个石猴, 一名石猴), never as several,
is a common noun too. A role mentioned in passing is none: it must speak twice, or open clauses
(be the subject of actions) three times in one chapter. The text may join a role to a named
person (那樵夫名唤李定, 石猴…遂称美猴王, 周掌柜 the 掌柜 named 周; "the inspector, Lestrade,", "John Pike, the
landlord,", a role then met only once): then the role is that person's alias, shared when the
text joins it to several (each mention goes to the one named last), provided the chapters saying
so hold most of the role's mentions (老者 all over a book is many old men: it stays a character of
its own).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache

from pipeline_kit.text.zh_subjects import SURNAMES

MIN_SPEECHES = 2  # a role speaking this often in the book is somebody
MIN_ACTIONS = 3  # ... or opening this many clauses in one chapter

# Chinese: a person noun's head (樵夫, 铁匠, 渔翁, 童子, 妇人, 道士, 掌柜), or 老/小/少 and a word for
# an age or sex (老者, 老妇, 小童); one or two characters may come before the head (打鱼的渔翁 is 渔翁).
_ZH_HEAD = (
    "夫|匠|郎|翁|叟|妪|童子?|童儿|妇人?|婆子?|汉子?|女子|男子|娘子|丫鬟|侍女|宫女|使女|书童|小厮|家童|仙童|道童|"
    "道士|道人|秀才|书生|公子|掌柜|伙计|店家|店主|船家|艄公|梢公|稍公|郎中|使者|差人|公差|衙役|狱卒|军士|兵士|"
    "后生|少年|猎户|猎人|牧童|主人|客人|客商|商人|老板|"
    "工人|医生|护士|司机|老师|师傅|厨子|厨师|会计|保姆|[木瓦泥铁电钳焊车长短杂矿]工|扳道工|搬运工|装卸工|清洁工"
)
# Heads of office by morphology: the head of a unit (村长, 保长, 镇长), its master (场主, 庄主, 店主) or a
# member of its staff (技术员, 售货员).
_ZH_OFFICE = "[村镇乡县保甲族队厂船班组里寨站局所矿]长|[场庄店地财寨窑船坛洞牧]主|[\u4e00-\u9fff]{1,2}员"
_ZH_ROLE = re.compile(rf"^(?:[\u4e00-\u9fff]{{0,2}}(?:{_ZH_HEAD}|{_ZH_OFFICE})|[老小少][者翁叟妪妇汉婆童])$")
SURNAMED_TIMES = 2  # a surname and a role met this often is somebody (周保长)
_ZH_SURNAMED_ROLE = re.compile(rf"[{''.join(sorted(SURNAMES))}](?:[\u4e00-\u9fff]{{0,2}}(?:{_ZH_HEAD}|{_ZH_OFFICE}))")
_ZH_COUNTING = "一二两三四五六七八九十几数个只名位众诸群各每"  # 群猴, 个心: a count, no noun
_ZH_FEMALE = re.compile(r"[女妇婆娘妪姑姐妹嫂母妻]|丫鬟")
_ZH_MALE = re.compile(r"[夫翁叟汉童男僧]|公子|书生|秀才|老者|少年|后生")
# A role the narration names: 那樵夫名唤李定, 石猴…遂称美猴王 (in one sentence, nobody else between).
_ZH_NAMED = r"[^。！？!?]{0,24}?(?:名唤|名叫|唤做|叫做|称为|称做|遂称|自称|号为|尊为|号称|姓[\u4e00-\u9fff]名)"

# English: occupations, kinship and age-sex nouns (an age-sex noun alone, "the man", is anyone:
# it needs an adjective, "the old man"); the determiner is "the" or "our" ("our visitor").
_EN_MALE = frozenset(
    """boy lad gentleman fellow youth husband father son brother uncle nephew butler footman groom coachman
    cabman waiter landlord policeman constable sailor monk priest clergyman woodcutter fisherman farmer
    huntsman shepherd boatman ferryman watchman shopman salesman miller blacksmith ploughman horseman
    squire parson vicar curate rector friar gamekeeper highwayman drover carter carrier""".split()
)
_EN_FEMALE = frozenset(
    """woman lady girl lass wife mother daughter sister aunt niece maid housekeeper landlady governess
    widow waitress hostess nun milkmaid dairymaid seamstress laundress washerwoman midwife postmistress
    schoolmistress""".split()
)
_EN_ANY = frozenset(
    """inspector clerk sergeant officer detective doctor servant driver porter manager banker lawyer
    solicitor magistrate judge captain cook stranger visitor lodger tenant client guard warder jailer
    gaoler keeper gardener soldier colonel major agent secretary messenger child official guide traveller
    pilot host owner proprietor attendant coroner surgeon professor teacher student nurse innkeeper
    stationmaster engineer vet peddler pedlar hawker tinker baker butcher smith carpenter mason weaver
    tailor cobbler shoemaker potter grocer shopkeeper merchant trader beggar thief robber poacher miner
    labourer laborer fiddler piper musician surveyor postman schoolmaster""".split()
)
EN_ROLE_NOUNS = _EN_MALE | _EN_FEMALE | _EN_ANY  # words for a person by occupation, kin, age or sex
# Every noun for a person, with the sex it says (None: either): what an unnamed person is called
# (`moments`: an old man in a blue coat, 一个穿皮袄的胖子) and what looks say outright (a tall girl).
PERSON_NOUNS: dict[str, dict[str, str | None]] = {
    "en": {
        **dict.fromkeys(_EN_ANY | {"figure", "rider", "traveler", "smith", "baker", "tailor", "merchant", "trader"}),
        **dict.fromkeys(_EN_MALE | {"man", "king", "prince", "squire", "vicar", "parson", "miller"}, "male"),
        **dict.fromkeys(_EN_FEMALE | {"queen", "princess"}, "female"),
    },
    "zh": {
        **dict.fromkeys(
            "老人 孩子 小孩 娃娃 客人 人 胖子 瘦子 矮子 主人 伙计 郎中 大夫 大伙 小伙 年轻人 青年 中年人 陌生人 "
            "先生".split()
        ),
        **dict.fromkeys(
            "老汉 老头 老头子 老翁 汉子 大汉 男人 男子 少年 小伙子 后生 和尚 道士 书生 男孩".split(), "male"
        ),
        **dict.fromkeys(
            "老妇人 妇人 老太太 老太婆 老婆婆 婆婆 姑娘 小姑娘 女人 女子 丫头 尼姑 大嫂 女孩".split(), "female"
        ),
    },
}
_ZH_NOUNS_LONGEST = sorted(PERSON_NOUNS["zh"].items(), key=lambda item: -len(item[0]))  # 老头子 before 老头
# Age-sex nouns: "the man" alone is anyone (a role needs an adjective: the old man).
EN_BARE = frozenset("man woman boy girl gentleman lady fellow lad lass child youth person".split())
ZH_BARE = frozenset("那人 男人 女人 汉子 妇人 女子 孩子 老人 年轻人 男子 小孩".split())  # anyone of an age or sex
_EN_ADJ = "old|young|little|elderly|tall|short|stout|fat|thin|small|big|pale|strange|new|other"
_EN_NOUN = "|".join(sorted(_EN_MALE | _EN_FEMALE | _EN_ANY | {"man"}))
_EN_NOUN_CASED = "|".join(
    sorted({f(n) for n in _EN_MALE | _EN_FEMALE | _EN_ANY | {"man"} for f in (str, str.capitalize)})
)
# The noun in any case: a title written as one (said the Colonel, the Inspector rose), but not
# a title before a name (the Colonel Ross is Ross's).
_EN_PHRASE = rf"(?:(?:{_EN_ADJ}) )?(?:{_EN_NOUN_CASED})(?! [A-Z])"
# The verbs that tag an English quotation (said the inspector; "It is," Lucy said).
EN_SPEECH = "said|cried|asked|answered|replied|remarked|observed|whispered|shouted|continued|exclaimed|murmured|added"
_EN_SPOKE = re.compile(
    rf"\b(?:{EN_SPEECH}) ([Tt]he|[Oo]ur) ({_EN_PHRASE})\b(?! of\b)|\b([Tt]he|[Oo]ur) ({_EN_PHRASE}) (?:{EN_SPEECH})\b"
)
_EN_ACTS = re.compile(
    rf"(?:^|(?<=[.!?;”\"] )|(?<=\n))([Tt]he|[Oo]ur) ({_EN_PHRASE}) (?:[a-z]+ed|was|had|took|came|went|rose|sat|stood|"
    r"looked|turned|gave|made|shook|ran|fell|saw|knew|held|began|led|put|threw|drew|struck|spoke|got|left)\b",
    re.M,
)
_EN_APPOSITION = r",? ((?:(?:Mr|Mrs|Miss|Dr)\.? )?[A-Z][\w’']+(?: [A-Z][\w’']+)?)[,.;]"
_EN_APPOSED_NAME = r"((?:(?:Mr|Mrs|Miss|Dr)\.? )?[A-Z][\w’']+(?: [A-Z][\w’']+)?)"
# A name, then the role that is that person: "John Pike, the landlord, wiped the bar", "Mrs Dace,
# the landlady of the Gull Inn," (not a list: "Holmes, the inspector, and I").
_EN_APPOSED_END = r"(?:,(?! (?:and|or|nor|the|a|an|our)\b)|[.;])"  # a list goes on: "X, the inspector, the doctor"
_EN_NAME_THEN_ROLE = re.compile(
    rf"\b{_EN_APPOSED_NAME}, ([Tt]he|[Oo]ur) ({_EN_PHRASE})"
    rf"(?: (?:of|at|from|in) [^,.;:!?“”\"]{{1,40}})?{_EN_APPOSED_END}"
)
# A role the text gives a name: "a landlord named John Pike", "the old woman called Ada".
_EN_ROLE_NAMED = re.compile(rf"\b(?:[Aa]n?|[Tt]he) ({_EN_PHRASE}) (?:named|called) {_EN_APPOSED_NAME}\b")
# A role the text then says is a named person: "The stranger was Josiah Marsh", "the visitor, whose name was Ada Fenn".
_EN_ROLE_WAS = re.compile(
    rf"(?:^|(?<=[.!?”\"] )|(?<=\n))[Tt]he ({_EN_PHRASE})(?:,? whose name was| was| turned out to be| proved to be) "
    rf"{_EN_APPOSED_NAME}[,.;]",
    re.M,
)


def zh_role(word: str) -> bool:
    """Is `word` a Chinese common noun for a person (an occupation, an age or a sex)?"""
    return bool(_ZH_ROLE.match(word))


def person_noun(word: str) -> bool:
    """Is the Chinese `word` a common noun for a person: an unnamed one's (孩子, 大嫂), a role's (村长,
    樵夫) or a kinship word (女儿)?"""
    return word in PERSON_NOUNS["zh"] or word in ZH_KIN or zh_role(word)


def role_gender(names: Sequence[str], lang: str) -> str | None:
    """The gender the first role word among a character's `names` says (童子 and 樵夫 are male, 老妇
    and the old woman female; 张稍, whom the text calls 渔翁, a man), else None."""
    return next((g for g in (_word_gender(n, lang) for n in names) if g), None)


def _word_gender(name: str, lang: str) -> str | None:
    if lang == "zh":
        return told_sex(name, lang) if zh_role(name) else None
    noun = name.split()[-1].lower() if name.startswith(("the ", "our ")) else ""
    return PERSON_NOUNS["en"].get(noun)


def told_sex(words: str, lang: str) -> str | None:
    """The sex `words` say outright by their nouns for people (樵夫, 老妇; a tall girl), else None."""
    if lang == "zh":
        ending = next((sex for noun, sex in _ZH_NOUNS_LONGEST if words.endswith(noun)), None)  # 一个老头
        female = bool(_ZH_FEMALE.search(words)) or ending == "female"
        male = bool(_ZH_MALE.search(words)) or ending == "male"
    else:
        said = {PERSON_NOUNS["en"].get(w) for w in re.findall(r"[a-z]+", words.lower())}
        female, male = "female" in said, "male" in said
    return "female" if female and not male else "male" if male and not female else None


def zh_roles(texts: Sequence[str], speaks: Counter[str], opens: Counter[str], counted: Collection[str]) -> set[str]:
    """Chinese roles that are somebody: role words, or speakers the text counts as common nouns
    (`counted`: 一个石猴), speaking MIN_SPEECHES times opening their clause (那樵夫道, not 扯住樵夫道),
    or role words opening MIN_ACTIONS clauses of one chapter after 那/这 (那樵夫…, a particular one)."""
    found = {w for w, n in speaks.items() if n >= MIN_SPEECHES and opens[w] * 2 >= n and (zh_role(w) or w in counted)}
    for text in texts:
        starts = Counter(
            run[:size]
            for run in re.findall(r"(?:^|(?<=[，。！？；：”」\n]))(?:那|这)([\u4e00-\u9fff]{2,3})", text, re.M)
            for size in (2, 3)
        )
        found |= {w for w, n in starts.items() if n >= MIN_ACTIONS and zh_role(w)}
    found = {w for w in found if w[0] not in _ZH_COUNTING}
    return {w for w in found if not any(w[k:] in found for k in range(1, len(w) - 1))}  # 樵夫 of 老樵夫


def counted_as_one(text: str, words: Collection[str]) -> set[str]:
    """The `words` the text counts as one twice (一个石猴, 一名石猴: a common noun for one being) and never
    as several (四健将, 众猴: a group); a reduplicated syllable (呵呵) is no noun."""
    words = {w for w in words if len(set(w)) > 1 and w[0] not in _ZH_COUNTING}
    if not words:
        return set()
    body = "|".join(map(re.escape, sorted(words, key=lambda w: (-len(w), w))))
    one, many = Counter(), Counter()
    counts = r"一[个只名位]|[两二三四五六七八九十几数][个只名位]?|[众诸群各每]|这些|那些"
    for m in re.finditer(rf"({counts})({body})", text):
        (one if m.group(1).startswith("一") else many)[m.group(2)] += 1
    return {w for w, n in one.items() if n >= 2 and not many[w]}


def zh_role_names(texts: Sequence[str], roles: Collection[str], names: Collection[str]) -> list[tuple[str, str]]:
    """(role, name) where the narration gives a role a name (see `_zh_given`), in chapters that
    hold at least half the role's mentions: a role met all over a book (老者) is many people."""
    return held(texts, [_zh_given(text, roles, names) for text in texts])


def held(texts: Sequence[str], found: Sequence[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """The (role, name) pairs `found` in each chapter, kept when the chapters giving the role that
    name hold at least half of the role's mentions in the book."""
    where: dict[tuple[str, str], set[int]] = defaultdict(set)
    for k, pairs in enumerate(found):
        for pair in pairs:
            where[pair].add(k)
    out = []
    for (role, name), chapters in where.items():
        counts = [text.count(role) for text in texts]
        if 2 * sum(counts[k] for k in chapters) >= sum(counts):
            out.append((role, name))
    return out


def zh_surnamed(texts: Sequence[str], roles: Collection[str]) -> list[tuple[str, str]]:
    """(role, surname + role) where the text calls a role by a common surname and the role (周掌柜
    of 掌柜: the 掌柜 named 周), in the chapters holding most of the role's mentions (`held`); two
    surnames with one role (王掌柜, 周掌柜) are two people sharing it."""
    if not roles:
        return []
    body = "|".join(map(re.escape, sorted(roles, key=lambda r: (-len(r), r))))
    found = re.compile(rf"(?<![{_ZH_COUNTING}老小大阿])[{''.join(sorted(SURNAMES))}](?:{body})")
    return held(texts, [[(m.group()[1:], m.group()) for m in found.finditer(text)] for text in texts])


def zh_kin_named(text: str) -> list[str]:
    """The runs right after a kinship word (儿子小海才六岁 gives 小海才: the name is a prefix that
    recurs; 罗三娘的儿子虎子 gives 虎子凑), where a story names its people."""
    return _ZH_AFTER_KIN.findall(text)


def zh_surnamed_roles(text: str) -> set[str]:
    """People a story calls only by a surname and a role (林技术员, 周保长: the role word never alone),
    met SURNAMED_TIMES times, at least once opening a clause."""
    counts = Counter(_ZH_SURNAMED_ROLE.findall(text))
    opening = set(re.findall(rf"(?:^|(?<=[，。！？；：”」\n]))({_ZH_SURNAMED_ROLE.pattern})", text, re.M))
    return {run for run, n in counts.items() if n >= SURNAMED_TIMES and run in opening and zh_role(run[1:])}


def _zh_given(text: str, roles: Collection[str], names: Collection[str]) -> list[tuple[str, str]]:
    """(role, name) where the narration gives a role a name: a known one in the sentence the role
    opens (石猴…遂称美猴王, nobody else named between) or set beside it (渔翁张稍), or any name
    after 名唤/名叫/唤做/叫做 (一个是渔翁，名唤张稍)."""
    if not roles:
        return []
    role_body = "|".join(map(re.escape, sorted(roles, key=lambda r: (-len(r), r))))
    name_body = "|".join(map(re.escape, sorted(names, key=lambda n: (-len(n), n)))) or "(?!)"
    out = []
    for m in re.finditer(rf"({role_body})(?:{_ZH_NAMED})?({name_body})", text):
        between = m.group()[len(m.group(1)) : -len(m.group(2))]
        if not (between and (re.search(name_body, between) or re.search(role_body, between))):
            out.append((m.group(1), m.group(2)))  # else someone else is named in between: 石猴…众猴…称
    given = rf"({role_body})[^。！？!?“”]{{0,6}}?(?:名唤|名叫|唤做|叫做)([\u4e00-\u9fff]{{2,3}}?)(?=[，,。；;！？!?、])"
    return out + [(m.group(1), m.group(2)) for m in re.finditer(given, text)]


def en_roles(texts: Sequence[str]) -> dict[str, set[str]]:
    """English roles that are somebody -> the forms the text writes them in (the inspector, The
    inspector): speaking MIN_SPEECHES times in the book or acting MIN_ACTIONS times in a chapter."""
    spoke: Counter[str] = Counter()
    forms: dict[str, set[str]] = defaultdict(set)
    written: dict[str, Counter[str]] = defaultdict(Counter)  # the Colonel, the colonel: one role
    acted: set[str] = set()
    for text in texts:
        for m in _EN_SPOKE.finditer(text):
            det, noun = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            spoke[noun.lower()] += 1
            forms[noun.lower()].add(det.lower())
            written[noun.lower()][noun] += 1
        acts: Counter[str] = Counter()
        for m in _EN_ACTS.finditer(text):
            acts[m.group(2).lower()] += 1
            forms[m.group(2).lower()].add(m.group(1).lower())
            written[m.group(2).lower()][m.group(2)] += 1
        acted |= {noun for noun, n in acts.items() if n >= MIN_ACTIONS}
    out = {}
    for noun in {n for n, k in spoke.items() if k >= MIN_SPEECHES} | acted:
        if noun in EN_BARE:
            continue  # "the man" is anyone
        name = f"{'the' if 'the' in forms[noun] else min(forms[noun])} {written[noun].most_common(1)[0][0]}"
        out[name] = {f"{d} {w}" for det in forms[noun] for d in (det, det.capitalize()) for w in written[noun]}
    return out


def en_apposed_roles(texts: Sequence[str]) -> dict[str, set[str]]:
    """English roles the text says are a named person ("John Pike, the landlord,", "a landlord named
    John Pike") -> their
    forms, as `en_roles` gives them: somebody, however seldom they speak, when the name is one."""
    forms: dict[str, set[str]] = defaultdict(set)
    for text in texts:
        for _, det, noun in _en_apposed(text):
            if noun.lower() not in EN_BARE:  # "the man" is anyone
                forms[noun.lower()] |= {f"{d} {noun}" for d in (det.lower(), det.capitalize())}
    return {f"the {noun}": found for noun, found in forms.items()}


@lru_cache(maxsize=128)  # a book's chapters: the roles and the names set beside them both read them
def _en_apposed(text: str) -> list[tuple[str, str, str]]:
    """(name, determiner, role) the text says are one person: "John Pike, the landlord,", "a
    landlord named John Pike" (then "the landlord"), "The stranger was Josiah Marsh"."""
    found = [(m.group(1), m.group(2), m.group(3)) for m in _EN_NAME_THEN_ROLE.finditer(text)]
    named = [*_EN_ROLE_NAMED.finditer(text), *_EN_ROLE_WAS.finditer(text)]
    return found + [(m.group(2), "the", m.group(1)) for m in named]


def en_role_names(texts: Sequence[str], roles: dict[str, set[str]], names: Collection[str]) -> list[tuple[str, str]]:
    """(role, name) where the text sets a known name beside a role ("the inspector, Lestrade,";
    "John Pike, the landlord,"; "a landlord named John Pike"), in chapters holding at least half the
    role's mentions (`held`)."""
    found: list[list[tuple[str, str]]] = [[] for _ in texts]
    for k, text in enumerate(texts):
        apposed = [(name, f"{det} {noun}") for name, det, noun in _en_apposed(text)]
        for role, forms in roles.items():
            body = "|".join(map(re.escape, sorted(forms)))
            after = [m.group(1) for m in re.finditer(rf"\b(?:{body}){_EN_APPOSITION}", text)]
            for written in after + [name for name, form in apposed if form in forms]:
                name = re.sub(r"^(?:Mr|Mrs|Miss|Dr)\.? ", "", written)
                if name in names:
                    found[k].append((role, name))
    return held(texts, found)


# Kinship words that say a sex: 女儿秀兰, 老陈，她的父亲; "Silas Ardent, her father", "his daughter Nell".
ZH_KIN = {
    **dict.fromkeys(
        "父亲 爹爹 爸爸 爹 爸 儿子 哥哥 弟弟 叔叔 伯伯 舅舅 爷爷 丈夫 外甥 侄儿 孙子 女婿 姐夫 妹夫 外孙".split(),
        "male",
    ),
    **dict.fromkeys(
        "母亲 妈妈 娘亲 娘 妈 女儿 姐姐 妹妹 婶婶 姑姑 舅妈 奶奶 妻子 老婆 媳妇 侄女 孙女 闺女 儿媳 嫂子 "
        "外孙女".split(),
        "female",
    ),
}
_EN_KIN = {
    **dict.fromkeys("father brother uncle son husband nephew grandfather".split(), "male"),
    **dict.fromkeys("mother sister aunt daughter wife niece grandmother".split(), "female"),
}
# Whose someone a possessive says (Her father sat…, their mother): kin and a household's people.
EN_KIN_NOUNS = frozenset(_EN_KIN) | {"grandson", "granddaughter", "maid", "servant", "nurse", "master", "mistress"}
_ZH_KIN_BODY = "|".join(sorted(ZH_KIN, key=len, reverse=True))
_ZH_KIN_WORD = re.compile(_ZH_KIN_BODY)  # found first: rarer than the names around it
# read at every character (a lookahead): 娘 of 罗三娘 must not swallow the 儿子 of 罗三娘的儿子虎子
_ZH_AFTER_KIN = re.compile(rf"(?=(?:{_ZH_KIN_BODY})(?!的)([\u4e00-\u9fff]{{2,3}}))")
_ZH_RUN = "[\u4e00-\u9fffA-Za-zＡ-Ｚａ-ｚ]{1,4}"
_ZH_NAME_AFTER = re.compile(_ZH_RUN)  # 女儿秀兰
_ZH_NAME_BEFORE = re.compile(rf"({_ZH_RUN})(?:[，,]|是)(?:[他她我你]的)?$")  # 老陈，她的父亲 / 秀兰是他的女儿
_ZH_KIN_END = re.compile("[，,。！？；、]")
_EN_NAME = r"((?:Mr\.? |Mrs\.? |Miss )?[A-Z][\w’'-]+(?: [A-Z][\w’'-]+){0,2})"
_EN_KIN_WORD = "|".join(_EN_KIN)
# found first: it is rare
_EN_KIN_PHRASE = re.compile(rf"\b(?:[Hh]is|[Hh]er|[Mm]y|[Tt]heir|[Oo]ur|[Yy]our) ({_EN_KIN_WORD})\b")
_EN_NAME_BEFORE = re.compile(rf"{_EN_NAME}, $")
_EN_NAME_AFTER = re.compile(rf",? {_EN_NAME}")


def kin_genders(texts: Sequence[str], lang: str, names: Mapping[str, str]) -> dict[str, str]:
    """Character -> the sex the kinship words set beside its names say (`names`: every name and
    alias -> its character), where they all say one."""
    said: dict[str, set[str]] = defaultdict(set)
    for text in texts:
        for kin, name in _kin_pairs(text, lang, names):
            said[names[name]].add((ZH_KIN if lang == "zh" else _EN_KIN)[kin])
    return {name: next(iter(sexes)) for name, sexes in said.items() if len(sexes) == 1}


def _kin_pairs(text: str, lang: str, names: Mapping[str, str]) -> list[tuple[str, str]]:
    """(kinship word, name) set beside each other in `text`, the name being one of `names`."""
    if lang != "zh":
        pairs = []
        for m in _EN_KIN_PHRASE.finditer(text):  # Silas Ardent, her father / his sister, Mara Quill
            before = _EN_NAME_BEFORE.search(text, max(0, m.start() - 48), m.start())
            after = _EN_NAME_AFTER.match(text, m.end())
            pairs += [(m.group(1), found.group(1)) for found in (before, after) if found]
        found = [(kin, _known_words(name, names)) for kin, name in pairs]
        return [(kin, name) for kin, name in found if name]
    out = []
    for m in _ZH_KIN_WORD.finditer(text):
        after = _ZH_NAME_AFTER.match(text, m.end())  # 女儿秀兰: the longest name opening the run
        name = _known(after.group(), names, tail=False) if after else None
        if name:
            out.append((m.group(), name))
        if _ZH_KIN_END.match(text, m.end()):  # 老陈，她的父亲: the longest name ending the run
            before = _ZH_NAME_BEFORE.search(text, max(0, m.start() - 8), m.start())
            name = _known(before.group(1), names, tail=True) if before else None
            if name:
                out.append((m.group(), name))
    return out


def _known_words(run: str, names: Mapping[str, str]) -> str | None:
    """The longest of `names` that ends the English `run` (Mrs. Crane: Crane), if any."""
    words = run.split()
    return next((tail for k in range(len(words)) if (tail := " ".join(words[k:])) in names), None)


def _known(run: str, names: Mapping[str, str], tail: bool) -> str | None:
    """The longest of `names` that ends (`tail`) or opens the Chinese `run`, if any."""
    cuts = [run[k:] if tail else run[: len(run) - k] for k in range(len(run))]
    return next((c for c in cuts if c in names), None)
