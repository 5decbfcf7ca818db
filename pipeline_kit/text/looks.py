"""A character's looks as the text gives them: short phrases about that person's appearance.

A phrase counts only when it is about the person named just before it, with no other person
named in between, and it is built around a word for the body, clothing, build, age or what one
carries: `Alice, a tall girl with red hair` gives "a tall girl with red hair"; `her coat was
green` gives "coat was green"; `那老者头戴乌纱帽` gives "头戴乌纱帽". A sentence that merely holds such a
word (three short flashes of a light) gives nothing; an adjective of age or build just before
the name (`young Mara`), the person a name is given to (`a boy named John Pike`) and the next
sentence's clothing when it is about the same person by a pronoun that agrees with the person's
(`She wore a grey coat`, `He was a stout old man`, `她是个矮胖的老妇人，头发花白`, `他五十来岁，秃顶`) count
too, where that sentence names nobody else the pronoun could mean, and so do the clauses that go on
describing (`阿Ｑ是个瘦高的年轻人，脸上有一道疤，穿一件灰布衫`; `a broad woman of fifty, with red hands`).
An unnamed person the next sentence names (`一个穿长衫的胖子…。他就是场主赵德福`; `A boy waited, barefoot.
The boy, whose name was Eli,`) lends that name their looks. What someone does is no looks, though it
holds a word for clothing (`pulled on her boots`, `穿了草鞋跑出门去`, `手里接过一把伞`). A character the text
never describes gets no looks (and says so), for the director or a person to fill in.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from functools import cached_property

from pipeline_kit.text.cast_roles import EN_BARE, EN_ROLE_NOUNS, PERSON_NOUNS, ZH_KIN

MAX_PHRASES = 6
LOOK_MENTIONS = 80  # looks are sought among a character's first mentions (where a book describes)
PHRASE_CHARS = {"zh": 30, "en": 80}
WINDOW = {"zh": 100, "en": 320}  # the name's sentence and the next, where a pronoun opens it
ZH_CUE_GAP = 4  # a Chinese looks cue follows its name within this many characters (那老者头戴…)

_EN_BODY = (
    r"hair|face|eyes?|beard|moustache|mustache|whiskers|complexion|skin|brow|forehead|cheeks?|lips|teeth|nose|"
    r"chin|jaw|hands?|figure|frame|build|shoulders|head|neck|scar|freckles"
)
_EN_CLOTHES = (
    r"coat|overcoat|frock-coat|hat|cap|boots|shoes|dress|gown|skirt|cloak|veil|jacket|waistcoat|trousers|shirt|"
    r"collar|scarf|gloves|apron|uniform|suit|robe|shawl|bonnet|spectacles|glasses|jersey|sweater|oilskins?|"
    r"armour|armor|helmet|tunic|ulster|necktie|tie|sash|belt"
)
_EN_CARRY = r"stick|cane|umbrella|bag|satchel|basket|lantern|lamp|sword|staff|pipe|rifle|gun|book|case|bundle"
# A word for a person: an age-sex noun, or any role noun (a young fisherman, a stout landlord).
_EN_PERSON = "|".join(
    sorted(
        {
            *"man woman girl boy fellow lady gentleman child youth lad lass figure person creature widow maid".split(),
            *EN_ROLE_NOUNS,
        },
        key=len,
        reverse=True,
    )
)
_EN_BUILD = (
    r"tall|short|stout|thin|lean|slim|slender|plump|fat|broad|heavy|small|little|young|old|elderly|aged|grey|"
    r"gray|white-haired|bald|pale|dark|fair|handsome|pretty|beautiful|ugly|wiry|burly|gaunt|bent|frail|sturdy|"
    r"middle-aged|red-haired|one-eyed|bearded|clean-shaven"
)
_ADJ = r"(?:[\w’'-]+,? (?:and )?){0,3}"
# What one wears or carries, as a noun phrase: one determiner, then words that are no determiner or
# particle (a faded red coat, her grandfather's old cap; not "a rush pulled on her coat").
_EN_NOT_AN_ADJ = r"a|an|the|his|her|their|its|my|our|your|on|off|up|down|out|to|into|onto|from|at|by|then|as"
_EN_THING = (
    r"(?:(?:a|an|the|his|her|their|its|my|our|your|some|one|two|a pair of) )?"
    rf"(?:(?!(?:{_EN_NOT_AN_ADJ})\b)[\w’'-]+ (?:and )?){{0,5}}"
)
_ADJ1 = r"(?:[\w’'-]+,? (?:and )?){1,3}"  # at least one word before the noun
_EN_PATTERNS = tuple(
    re.compile(p, re.I)
    for p in (
        # apposition: ", a tall girl with red hair and a green coat"
        rf"^[^.;:!?”\"]{{0,40}}?, (?:now |then )?(?:an? |the )"
        rf"({_ADJ}(?:{_EN_PERSON})(?: (?:of|with|in) [^.;:!?”\",]{{3,60}})?)",
        # "was a stout man", "is tall and thin"
        rf"^ (?:was|is|looked|seemed) ((?:an? )?{_ADJ}(?:{_EN_BUILD})(?:,? (?:and )?(?:{_EN_BUILD}))*\b"
        rf"(?:,? {_ADJ}(?:{_EN_PERSON}))?"  # a small, brisk woman
        rf"(?: (?:of|with|in) [^.;:!?”\",]{{3,60}})?)",
        # "wore a grey coat", "was dressed in black", "carried a lantern": a state and what it is
        # of (pulled on her boots, took up the lamp is something done, no looks)
        rf"^,? (?:who )?((?:wore|wears|was wearing|is wearing|was dressed in|was clad in|in|carried|carrying|carries|"
        rf"held|holding) {_EN_THING}(?:{_EN_CLOTHES}|{_EN_CARRY}|black|white|grey|gray|rags|mourning)s?)\b",
        # "'s long grey beard", "with red hair"
        rf"^(?:’s|'s|,? with) ({_ADJ1}(?:{_EN_BODY}|{_EN_CLOTHES}))\b",
        # "aged sixty", "of about forty years"
        r"^,? ((?:aged|of about|about) (?:\w+-)?\w+(?: years(?: of age| old)?)?)(?=[,.;])",
    )
)
# What a pronoun's sentence says the person is, then what they look like: "She was the miller's
# widow, a broad woman of fifty" (an apposition to the subject's own predicate, not to another).
_EN_IS_THEN_A = re.compile(
    rf"^ (?:was|is) [^.;:!?”\",]{{1,40}}, (an? {_ADJ}(?:{_EN_PERSON})(?: (?:of|with|in) [^.;:!?”\",]{{3,60}})?)", re.I
)
# An adjective of age or build just before the name: "young Mara Quill", "old Hetty"; or the
# person the name is given to: "a boy named John Pike", "a thin woman called Ada".
# "In the dark Nell…" is no looks: an adjective after "the" is a noun.
_EN_BEFORE = re.compile(rf"\b(?:(?<!the )(?<!a )({_EN_BUILD})|(an? {_ADJ}(?:{_EN_PERSON})) (?:named|called))\s+$", re.I)
# The next sentence, about the same person by a pronoun: "She wore a grey coat", "He was a stout man".
_EN_NEXT = re.compile(r"^\s*(He|She)\b([^.;:!?”\"]*)")
# 他/她 opening a clause about them; not 她们, nor 她娘 or 他的女儿 (someone of theirs)
_ZH_THEIRS = "|".join(sorted({*ZH_KIN, *PERSON_NOUNS["zh"]}, key=len, reverse=True))
_ZH_HE = rf"([他她])(?!们|的?(?:{_ZH_THEIRS}))"
_ZH_NEXT = re.compile(rf"^\s*{_ZH_HE}(.*)")
# A verb of what someone wears or carries, as a description says it (wore a shawl: in a shawl).
_EN_LOOKS_FORM = {
    **dict.fromkeys(("wore", "wears", "was wearing", "is wearing"), "in"),
    **dict.fromkeys(("was dressed in", "was clad in"), "dressed in"),
    **dict.fromkeys(("carried", "carries"), "carrying"),
    "held": "holding",
}
_EN_AS_LOOKS = re.compile(rf"^({'|'.join(sorted(_EN_LOOKS_FORM, key=len, reverse=True))})\b")
_ZH_THEN_HE = re.compile(rf"[，,]{_ZH_HE}(.*)")
PRONOUNS = {"en": {"male": "He", "female": "She"}, "zh": {"male": "他", "female": "她"}}
_EN_HIS = re.compile(rf"\b(?:his|her) ({_ADJ}(?:{_EN_BODY}|{_EN_CLOTHES}) (?:was|were) [^.;:!?”\"]{{2,40}})", re.I)

_ZH_CUE = re.compile(
    r"(?:生得|长得|身穿|穿着|穿一|穿了(?=一?[件双身套条顶副])|头戴|戴着|戴一|头顶|脚踏|脚穿|腰系|腰束|身披|披着|手持|手执|拄着|"
    r"年方|年约|年近|年过|身长|身高|面如|脸如|眼如|眉如|须如|发如|面似|脸似|满头|一头|一脸|一身)"
    r"[^，。！？；：“”\n]{1,16}"
)
# Cues that also open other phrases (一头钻下水去, headlong): looks only with a word for hair, skin or dress.
_ZH_LOOSE_CUE = re.compile(r"^(?:一头|一脸|一身|满头)")
# "is a tall young man": 是个瘦高的年轻人 (a word of build or age, then a word for a person).
# "is a round-faced girl": 是个圆脸的姑娘, 是个黑瘦的老船夫 (a looks word, or a phrase ending in 的,
# then a word for a person: an age-sex noun or an occupation's head).
_ZH_IS_A = re.compile(
    r"^是(?:一)?个((?:[^，。！？；：“”\n]{0,6}?[高矮胖瘦老幼少年轻白黑俊丑美壮秀弱]|[^，。！？；：“”\n]{1,6}的)"
    r"[^，。！？；：“”\n]{0,6}?"
    rf"(?:{'|'.join(sorted(PERSON_NOUNS['zh'], key=len, reverse=True))}|老者|[夫匠翁叟妪婆]))"
)
# A clause that goes on describing: 脸上有一道疤, 头发花白.
_ZH_BODY_CLAUSE = re.compile(
    r"^(?:脸上|面上|脸|头上|头发|眼睛|双眼|眉毛|胡子|胡须|身上|手里|手中|腰间|背上|肩上|额上)[^，。！？；：“”\n]{1,10}"
)
# A clause that is looks by itself, in a run of them (他五十来岁，秃顶，腰里别着一杆旱烟袋): an age, a
# build, a feature of face or hair, what is worn, or what is carried at the body.
_ZH_LOOKS_CLAUSE = re.compile(
    r"^(?:也|还|已|都|才)?(?:"
    r"(?:年纪|今年)?[一二三四五六七八九十两几0-9]{1,3}(?:来|多)?岁(?:上下|左右|光景|出头)?了?"
    r"|[二三四五六七八九]十(?:出头|上下|开外|左右)"  # 二十出头: an age without 岁
    r"|(?:个子|个头|身材|身量|身子|块头)[^，。！？；：“”\n]{1,6}"
    r"|[高矮胖瘦壮黑白][高矮胖瘦壮黑白的]{1,4}(?:个子|身材|身子)?"
    r"|(?:秃顶|秃头|光头|驼背|罗锅|瘸腿|独眼|麻脸)"
    r"|(?:背|腰|腿|眼睛?|头发|胡子)(?:有些|有点|微微|已经|早已|都|全)?(?:驼|弯|瘸|瞎|白|花白|稀疏|斑白)了?"
    r"|[圆方长尖黑白红大小浓细高塌]{1,2}(?:脸|脸蛋|眼睛|眉毛|鼻子|嘴)"  # 圆脸，大眼睛
    r"|[^，。！？；：“”\n]{1,6}的(?:脸|脸膛|脸庞|面孔|面皮|头发|眼睛|眉毛|胡子|胡须|辫子|鼻子|皮肤|额头|个子)"
    r"|(?:穿|戴|披|套|系|扎|裹|围|蹬|趿|梳|留)着[^，。！？；：“”\n了]{1,14}"
    r"|(?:腰里|腰间|腰上|背上|肩上|肩膀上|头上|怀里|脖子上|胸前)?(?:背|挎|别|挂|搭|揣|拄|叼)着(?!手)[^，。！？；：“”\n了]{1,12}"
    r"|满(?:脸|头|身|嘴)(?:大?胡子|胡须|皱纹|麻子|白发|黑发|灰|泥|血|汗)[^，。！？；：“”\n]{0,4}"  # 满脸胡子
    r"|[一两几][条根把双对缕绺撮][^，。！？；：“”\n]{0,3}(?:辫子|胡子|胡须|眉毛|眼睛)[^，。！？；：“”\n]{0,8}"
    r")$"
)
# A clause whose verb is something done, after a word for the body it happens with: 手里接过一把伞,
# 身上脱下褂子, 穿上鞋 (taking, putting on or off, handing, throwing), not 手里提着灯笼 nor 穿一件褂子.
_ZH_DOING = re.compile(
    r"^(?:脸上|面上|头上|身上|手里|手中|腰间|肩上|额上)?"
    r"(?:[脱解摘卸扯撕扔丢抛甩换递接掏拔夺抢]|[穿戴披套拿提举抬取放挂扛拎捧抓][上下起出过开掉去来回])"
)
# What the person then does, run on after the looks: 拄着拐杖道, 手持拄杖而来 (speaking, coming).
_ZH_THEN_ACTS = re.compile(r"(?:而[来去行至出入]|[说笑叫问答喝]?道)$")
# Where a looks cue runs on into what the person does (拄着拐棍站在门槛上): the looks end there.
_ZH_THEN_DOES = re.compile(r"(?<=..)(?:站|坐|蹲|躺|靠|倚|走|跑|立)[在着了起到进出过].*$")
_ZH_LOOK_NOUN = re.compile(r"[发须髯眉毛鬓汗泥血衣甲袍裙衫巾帽冠靴鞋麻皮肉骨]")
# An English phrase about looks holds a word for build, age, body, dress or what one carries, or an age.
_EN_LOOKS_WORD = re.compile(
    rf"\b(?:{_EN_BUILD}|{_EN_BODY}|{_EN_CLOTHES}|{_EN_CARRY}|black|white|rags|mourning|aged|years|"
    r"barefoot|bare-headed|bareheaded|\d+|(?:twen|thir|for|fif|six|seven|eigh|nine)t(?:y|een)|ten|eleven|twelve)s?\b",
    re.I,
)
_ZH_AGE = re.compile(r"年[方约近过纪]?[一二三四五六七八九十百两0-9]+岁")
_EN_NAME_BREAK = re.compile(r"(?<!Mr)(?<!Mrs)(?<!Dr)[.!?]")
_ZH_BREAK = re.compile(r"[。！？\n]")
# A comma clause that goes on describing: ", with red hands and a grey shawl", ", barefoot".
_EN_TRAIL = re.compile(
    r", ((?:with|in|wearing|carrying) [^,.;:!?”\"]{3,60}|barefoot|bare-headed|bareheaded)(?=[,.;:!?”\"]|$)"
)
# Someone named as the unnamed person just told of: 他就是场主赵德福, 这人便是, 那人原来是.
_ZH_IDENTITY = re.compile(
    r"(?:^|(?<=[。！？\n”]))\s*(?:他|她|这人|那人|此人|这个人|那个人)(?:原来|就|便|正|乃|也)*是[^。！？，“”\n]{0,8}$"
)
# Someone held, not worn: 背着一个女人, 抱着个孩子 (what one does with another person).
_ZH_SOMEONE = re.compile(rf"[背抱扶搀拉领牵]着(?:一个|一位|个)?(?:{_ZH_THEIRS}|孩子)")
# A word for who someone is, described before it: 一个穿蓝布褂子的(小姑娘) (not 一个叫…的, a naming).
_ZH_DESCRIBED = re.compile(r"[一那这][个位]((?:(?![叫名姓])[^，。！？“”的\n]){2,12}的)$")
# …whose words are looks: dress, hair, face, build, age (not 卖卦的先生, 要宫女的先锋: what they do)
_ZH_LOOKS_WORD = re.compile(r"[穿戴披梳留拄扎衣褂袍衫裙帽鞋靴巾发髻辫须胡脸眉眼秃驼瘸胖瘦矮岁]|高个|年轻|白头|老不")
# An unnamed person with looks: 一个穿长衫的胖子(骑着…), 一个戴草帽的瘦高个子(背着…).
_ZH_UNNAMED = re.compile(
    r"[一那这]个((?:[^，。！？“”的]{1,10}的)?[^，。！？“”的]{1,4}?)(?=[\u4e00-\u9fff][着了]|[走来从坐站在跟进出朝向，。]|$)"
)
_ZH_SEXED = re.compile(r"[男女汉娘妇]|姑娘|丫头|后生|小伙")  # 一个汉子 says who, 一个人 nothing
# "The stranger was Daniel Crane", "The boy, whose name was Eli,".
_EN_IDENTITY = re.compile(
    rf"\b[Tt]he (?:[\w-]+ )?({_EN_PERSON})(?: (?:in|with) [^,.;:!?”\"]{{3,30}})?"
    r"(?:, whose name was| was| turned out to be| proved to be) $"
)
# An unnamed person in the sentence before: "a boy", "a man in a black hat".
_EN_UNNAMED = re.compile(
    rf"\b((?:[Aa]n?) (?:[\w-]+ ){{0,2}}?({_EN_PERSON})"
    rf"(?: (?:in|with) (?:(?:an?|the|his|her) )?(?:[\w’'-]+ ){{0,3}}?(?:{_EN_CLOTHES}|{_EN_BODY}|{_EN_CARRY})s?)?)\b"
)


def looks_of(
    texts: Sequence[str],
    lang: str,
    mentions: Sequence[Sequence[tuple[int, int, str]]],
    names: set[str],
    genders: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """Canonical name -> up to MAX_PHRASES looks phrases, from each chapter's (start, end, name)
    mentions (one list per text); only phrases about that person, in book order, each once.
    `genders` (name -> male/female, as the pronouns after it say) keeps a next sentence's "She
    was a tall woman" from a man's looks."""
    genders = genders or {}
    out: dict[str, list[str]] = {n: [] for n in names}
    seen: dict[str, int] = {}
    for text, found in zip(texts, mentions):
        sentences = Sentences(text, found, _ZH_BREAK if lang == "zh" else _EN_NAME_BREAK)
        for k, (start, stop, name) in enumerate(found):
            seen[name] = seen.get(name, 0) + 1
            if name not in out or len(out[name]) >= MAX_PHRASES or seen[name] > LOOK_MENTIONS:
                continue
            if possessor(text, stop, lang == "zh"):
                continue
            end = min(found[k + 1][0] if k + 1 < len(found) else len(text), stop + WINDOW[lang])
            before = _EN_BEFORE.search(text, max(0, start - 48), start) if lang != "zh" else None
            # a surname alone is a family's (a man named Oakshott; his wife is Mrs. Oakshott)
            given = (
                [before.group(1) or before.group(2)] if before and (before.group(1) or " " in text[start:stop]) else []
            )
            described = _ZH_DESCRIBED.search(text, max(0, start - 16), start) if lang == "zh" else None
            given = [g.lower() for g in given] + identified(text, start, lang)
            if described and not _ZH_LOOKS_WORD.search(described.group(1)):
                described = None
            if described and described.group(1)[:-1] not in out[name]:  # not 满脸胡子 again as 满脸胡子的汉子
                given.append(_cut(described.group(1) + text[start:stop], lang))
            pronoun = _next_pronoun(sentences, k, lang, genders)
            introduced = bool(described) or text.startswith("一", start)  # 一个汉子走进院子，满脸胡子
            for phrase in given + _phrases(text[stop:end], lang, pronoun, introduced):
                if phrase not in out[name] and len(out[name]) < MAX_PHRASES:
                    out[name].append(phrase)
    return out


_EN_POSSESSIVE = re.compile(r"(?:’s|'s|’|')(?!\w)")


def possessor(text: str, end: int, zh: bool) -> bool:
    """Is the mention ending at `end` someone's possessor (孙先生的, Agnes's), not the one its
    sentence goes on about (孙先生的女儿秀英…。她二十来岁: the daughter's looks)?"""
    return text.startswith("的", end) if zh else bool(_EN_POSSESSIVE.match(text, end))


class Sentences:
    """A text's sentence ends (by `breaks`) and its (start, end, name) mentions, to tell whom else
    a mention's sentence names (possessors aside): from the last end in the 400 characters before
    it (else the text's start) to the first end after it."""

    def __init__(self, text: str, found: Sequence[tuple[int, int, str]], breaks: re.Pattern[str]) -> None:
        self.text, self.found = text, found
        self._starts = [s for s, _, _ in found]
        self._stops = [(m.start(), m.end()) for m in breaks.finditer(text)]
        self._stop_ends = [e for _, e in self._stops]

    def others(self, k: int) -> set[str]:
        """Who else the sentence of mention `k` names."""
        start, end, name = self.found[k]
        j = bisect.bisect_right(self._stop_ends, start) - 1
        opened = self._stop_ends[j] if j >= 0 and self._stops[j][0] >= start - 400 else 0
        j = bisect.bisect_left(self._stops, (end, -1))
        closed = self._stops[j][0] if j < len(self._stops) else len(self.text)
        lo, hi = bisect.bisect_left(self._starts, opened), bisect.bisect_left(self._starts, closed)
        return {self.found[i][2] for i in range(lo, hi) if not self._possessive[i]} - {name}

    @cached_property
    def _possessive(self) -> list[bool]:
        """Each mention: is it a possessor (孙先生的女儿秀英: the sentence names the daughter)?"""
        return [possessor(self.text, end, False) or self.text.startswith("的", end) for _, end, _ in self.found]


def _next_pronoun(sentences: Sentences, k: int, lang: str, genders: Mapping[str, str]) -> str | None:
    """The pronoun (他/她, He/She) whose next sentence may be about mention `k`'s person: theirs,
    where their sentence names nobody else that pronoun could mean (Mara took a letter from Tobias.
    She…: neither is sure); None where no next sentence is theirs."""
    name = sentences.found[k][2]
    others = sentences.others(k)
    own = genders.get(name)
    fits = [g for g in ("male", "female") if own in (None, g) and all(genders.get(o, g) != g for o in others)]
    return PRONOUNS["zh" if lang == "zh" else "en"][fits[0]] if len(fits) == 1 else ("" if not fits else None)


def identified(text: str, start: int, lang: str) -> list[str]:
    """The looks of an unnamed person the sentence naming someone says is them: 一个穿长衫的胖子骑着毛驴
    来了。他就是场主赵德福 gives 赵德福 穿长衫的胖子; A boy waited, barefoot. The boy, whose name was
    Eli, … gives Eli "a boy", "barefoot"."""
    if lang == "zh":
        said = _ZH_IDENTITY.search(text, max(0, start - 16), start)
        if not said:
            return []
        prior = text[max(0, said.start() - 120) : said.start()]
        sentence = re.split(r"[。！？\n]", prior.rstrip("。！？\n"))[-1]
        person = _ZH_UNNAMED.search(sentence)
        if not person:
            return []
        looks = [m.group() for p in re.split(r"[，,；]", sentence[person.end() :])[1:] if (m := _zh_looks_clause(p))]
        told = "的" in person.group(1) or _ZH_SEXED.search(person.group(1))  # 一个汉子走来，穿一件破棉袄
        return [_cut(p, lang) for p in ([person.group(1)] if told or looks else []) + looks if not _ZH_DOING.match(p)]
    said = _EN_IDENTITY.search(text, max(0, start - 60), start)
    if not said:
        return []
    prior = _EN_NAME_BREAK.split(text[max(0, said.start() - 300) : said.start()].rstrip(" .!?\n"))
    noun = said.group(1).lower()
    for sentence in reversed(prior[-2:]):
        people = [m for m in _EN_UNNAMED.finditer(sentence) if noun not in EN_BARE or m.group(2).lower() == noun]
        if people:
            m = people[-1]
            clauses = sentence[m.end() :]  # A boy waited on the landing, barefoot, in a coat…
            return [_cut(m.group(1)[0].lower() + m.group(1)[1:], lang)] + _en_trailing(clauses[clauses.find(",") :])
    return []


def identity_pronoun(text: str, start: int, lang: str) -> str | None:
    """ "male" or "female" where the sentence naming someone at `start` says 他就是/她就是 of them."""
    said = _ZH_IDENTITY.search(text, max(0, start - 16), start) if lang == "zh" else None
    lead = said.group().strip()[:1] if said else ""
    return {"他": "male", "她": "female"}.get(lead)


def _en_trailing(rest: str) -> list[str]:
    """The comma clauses that go on describing right where `rest` begins: ", with red hands",
    ", barefoot" (the chain ends at the first clause that does not: ", while the other was…")."""
    out, at = [], 0
    while (m := _EN_TRAIL.match(rest, at)) and _EN_LOOKS_WORD.search(m.group(1)):
        out.append(_cut(m.group(1), "en"))
        at = m.end()
    return out


def _phrases(after: str, lang: str, pronoun: str | None = "", described: bool = False) -> list[str]:
    """Looks phrases in the text just after a name, up to the next person named, and in the next
    sentence when `pronoun` opens it (None: either pronoun; "": none is the person's);
    `described`: the name came with looks before it, which the clauses after may go on with."""
    if lang == "zh":
        clause, *rest = re.split(r"[。！？\n]", after, maxsplit=2)
        found = _zh_phrases(clause, described)
        then = _ZH_THEN_HE.search(clause)  # 周大山蹲在船头补网，他六十来岁，…: his, in his own sentence
        if then and pronoun in (None, then.group(1)):
            found += _zh_phrases(then.group(2))
        following = _ZH_NEXT.match(rest[0]) if rest else None
        if following and pronoun in (None, following.group(1)):
            found += _zh_phrases(following.group(2))
        return [
            _cut(_ZH_THEN_ACTS.sub("", _ZH_THEN_DOES.sub("", p)), lang)
            for p in found
            if not _ZH_DOING.match(p) and not _ZH_SOMEONE.search(p)
        ]
    sentence, *rest = _EN_NAME_BREAK.split(after, maxsplit=1)
    found = _en_phrases(sentence, _EN_PATTERNS)
    following = _EN_NEXT.match(rest[0]) if rest else None
    if following and pronoun in (None, following.group(1)):
        found += _en_phrases(following.group(2), (*_EN_PATTERNS[1:3], _EN_IS_THEN_A))
    return [_cut(p.strip(" ,"), lang) for p in found if _EN_LOOKS_WORD.search(p)]  # not "man of the world"


def _en_phrases(sentence: str, patterns: Sequence[re.Pattern[str]]) -> list[str]:
    """The looks `patterns` and his/her phrases find in a sentence, and the describing clauses
    that follow the last of them (a broad woman of fifty, with red hands)."""
    found = [m for p in patterns for m in [p.search(sentence)] if m] + list(_EN_HIS.finditer(sentence))
    if not found:
        return []
    return [m.group(1) for m in found] + _en_trailing(sentence[max(m.end() for m in found) :])


def _zh_phrases(clause: str, described: bool = False) -> list[str]:
    """Looks in a Chinese clause right after its person: cues near its start (头戴…, 是个瘦高的年轻人),
    then each comma clause that goes on describing (脸上有一道疤; after the first when the person
    was `described` before: 一个穿蓝布褂子的小姑娘提着篮子走来，两条辫子…), and an age."""
    is_a = _ZH_IS_A.match(clause)
    cues = [
        m
        for m in _ZH_CUE.finditer(clause)
        if m.start() <= ZH_CUE_GAP and (not _ZH_LOOSE_CUE.match(m.group()) or _ZH_LOOK_NOUN.search(m.group()))
    ]
    found = [is_a.group(1)] if is_a else []
    found += [m.group() for m in cues]
    said = max(m.end() for m in [is_a, *cues] if m) if found else 0
    parts = re.split(r"[，,；]", clause[said:])
    lead = 1 if not found and not parts[0] and len(parts) > 1 else 0  # 她叫沈静秋，二十出头: said of her
    if not found and _ZH_LOOKS_CLAUSE.match(parts[lead]):  # 五十来岁: the clause is looks
        found.append(parts[lead])
    for part in parts[lead + 1 :] if found or described else ():  # not 年方十六 of another subject
        more = _zh_looks_clause(part)
        if not more:
            break
        found.append(more.group())
    ages = [m.group() for m in _ZH_AGE.finditer(clause) if not _ZH_CUE.match(clause, m.start())]
    found += [age for age in ages[:1] if not any(age in f for f in found)]
    return found


def _zh_looks_clause(part: str) -> re.Match[str] | None:
    """The looks a Chinese comma clause opens with or is: 头戴…, 脸上有一道疤, 五十来岁, 穿一件灰布衫."""
    return _ZH_CUE.match(part) or _ZH_BODY_CLAUSE.match(part) or _ZH_LOOKS_CLAUSE.match(part)


def _cut(phrase: str, lang: str) -> str:
    limit = PHRASE_CHARS[lang]
    phrase = " ".join(phrase.split())
    if lang != "zh":  # "wore a green shawl" describes as "in a green shawl", beside "a tall woman"
        phrase = _EN_AS_LOOKS.sub(lambda m: _EN_LOOKS_FORM[m.group(1)], phrase)
    return phrase if len(phrase) <= limit else phrase[: limit - 1].rstrip() + "…"
