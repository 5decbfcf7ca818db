"""Which Chinese names are people, and which of them are one person (the rules behind the bible).

Candidates: the speakers before speech verbs (三藏道, 行者笑道: the verb is never part of the
name; names may mix Han with Latin letters, full-width or not: 阿Ｑ), the person words of jieba's
dictionary that speak, a Latin-letter name with the Han character it always comes with, and
titles (菩萨, 祖师, 真君): a title is no stop word but an appellation, folded below. Names are
joined by naming patterns (姓刘，名备，字玄德; 刘备字玄德; 我法名悟空 in a speaker's quotation;
与你起个混名，称为行者 for the one spoken to), by self-identification (a speaker saying 我乃…孙悟空
or 自今就叫做孙悟空), by epithet statements in the narration (X又名Y, X人称Y, X号称Y), by apposition
(齐天大圣孙悟空), by a surname with a title when one character holds that surname (孙大圣, 唐僧),
and by a short name ending the names of exactly one other person (悟空 -> 孙悟空). A short name
ending the names of several people (菩萨 of 观音菩萨 and 文殊菩萨) is shared: each mention goes to
the one of them the text last named (`cast.Bible.mentions`). Roles that speak or act (樵夫, a
石猴 counted as one) are names too (`cast_roles`), joined to a person only by the name the text
gives them (石猴…遂称美猴王, 渔翁，名唤张稍) or by a surname before the role (周掌柜 of 掌柜), in the
chapters holding most of their mentions.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from pipeline_kit.text.cast_roles import (
    counted_as_one,
    held,
    person_noun,
    zh_role,
    zh_role_names,
    zh_roles,
    zh_kin_named,
    zh_surnamed,
    zh_surnamed_roles,
)
from pipeline_kit.text.name_groups import NameGroups, NameSets
from pipeline_kit.text.namings import namings
from pipeline_kit.text.names import Mentions, zh_common_word
from pipeline_kit.text.zh_dictionary import frequencies
from pipeline_kit.text.zh_subjects import (
    after_a_person,
    built_like_a_name,
    clause_subjects,
    given_names,
    met_as_objects,
    SHORT_TEXT,
    name_shaped,
    speakers,
)

_HAN = "\u4e00-\u9fff"
_LATIN = "A-Za-zＡ-Ｚａ-ｚ"
_NAME_CHARS = _HAN + _LATIN  # a name is Han characters, Latin letters (full-width too) or both
_TRAILING_HAN = re.compile(rf"[{_NAME_CHARS}]*$")
_NAME_CHAR = re.compile(rf"[{_NAME_CHARS}]")
# One to three letters, none before (its first letter matched first: searched for letter by letter).
_LATIN_RUN = re.compile(rf"[{_LATIN}](?<![{_LATIN}][{_LATIN}])[{_LATIN}]{{0,2}}(?![{_LATIN}])")
MIN_SPEECHES = 3  # a speaker name must speak this often in the book ...
SHORT_SPEECHES = 2  # ... or this often in a short story (zh_subjects.SHORT_TEXT)
MIN_MENTIONS = 3  # a name found only by its letters must recur this often
COMMON_WORD = 1000  # jieba's frequency of a word too common to be a given name (大伙 706, 水生 629)
# A speech tag before a quotation: words that may lead the verb (又, 连忙, 大笑), the verb, a colon.
_SPEECH_LEADS = (
    *"又便也却才就即乃遂只方忙急因",
    *"连忙 慌忙 闻言 听说 听了 见了 看了 上前 近前 合掌 躬身 大笑 笑 冷笑 陪笑 欢喜 大喜 喜 大怒 怒".split(),
    *"大惊 惊 叹 哭 高叫 大叫 厉声 低头".split(),
)
_SPEECH_VERBS = "笑道 说道 问道 答道 叫道 喝道 骂道 道 曰 说 问 答 叫 喝 骂 云".split()


def _starts(*words: str) -> str:
    """A lookahead for the first characters of `words`, put before a pattern that opens with
    optional parts: the search skips every position none of them starts at, where the pattern
    would otherwise try its parts one by one (most of the time of scanning a whole book). It
    matches nothing the pattern does not."""
    return f"(?=[{''.join(sorted({w[0] for w in words}))}])"


_ZH_SPEECH = re.compile(
    rf"{_starts(*_SPEECH_LEADS, *_SPEECH_VERBS)}"
    rf"(?:{'|'.join(_SPEECH_LEADS)})*(?:{'|'.join(_SPEECH_VERBS)})[:：]\s*[“「]"
)
# Words that are never a name, by their grammar: pronouns and self-references, forms of address
# (said to someone, not of someone), kinship words, groups and counts, and common words that
# jieba's dictionary or the speaker rule would otherwise take for people. Titles (菩萨, 祖师) are
# not here: whether a title names one person is decided from the text (`_appellations`).
_ZH_STOP = frozenset(
    """我们 你们 他们 她们 咱们 自己 大家 别人 人家 此人 那人 这人 众人 二人 三人 两个
    一个 那个 这个 老夫 老孙 老猪 老沙 贫僧 贫道 小僧 小道 小弟 小人 小的 在下 晚生
    本官 本王 寡人 孤家 朕躬 妾身 奴家 老身 老汉 老拙 学生
    弟子 徒弟 师父 师兄 师弟 师傅 师公 老爷 大人 相公 官人 陛下 主公 殿下 万岁 大哥 贤弟 列位
    哥哥 兄弟 姐姐 妹妹 嫂嫂 父亲 母亲 孩儿 爹爹 妈妈 娘亲 儿子 女儿 丈夫 妻子 老婆 婆婆
    军士 众将 诸侯 诸将 令人 众官 众臣 百官 众僧 众妖 众怪 小妖 群妖 众猴 众神 多官 大众 众生
    呆子 猴子 猴头 泼猴 那厮 那怪 这厮 妖精 妖怪 妖魔 怪物 妖邪 魔头 唐人 闻言 原来 只见 却说
    正是 如何 不知 那里 这里 甚么 怎么 一时 心中 大喜 满心 多谢 胡说 明白 高兴 言语 谢恩 玉玺
    宝贝 金光 文武 宝剑 化斋 王道 施礼 马匹 拜佛 托生 招安 十分 口里 半空中 起身 出来 一声
    铁棒 洞里 将来 过来 上来 听得 有人 校尉""".split()
)
# Before a common noun, never before a title that names one person (一个老者, 那两个和尚).
_CLASSIFIED = re.compile(r"(?:[一两二三四五六七八九十几数每各众诸群]|这些|那些)[个位只名员群班伙对]?$")
_ZH_PLACE_END = tuple("山洞宫殿城国寺庄河海江湖关岭州洲府县村岛院庙阁楼台门")
# A surname plus one of these is a name held by whoever bears that surname (唐僧, 孙大圣, 关公).
_ZH_TITLES = (
    "大圣",
    "行者",
    "和尚",
    "长老",
    "师父",
    "先生",
    "将军",
    "丞相",
    "皇叔",
    "元帅",
    "太师",
    "大人",
    "老爷",
    "僧",
    "公",
)
_ZH_NAMING_FULL = re.compile(
    rf"姓([{_HAN}]{{1,2}}?)[，,、]?(?:名|讳|双名|单名|名唤)([{_HAN}]{{1,2}}?)(?:[，,、]?表?字([{_HAN}]{{2}}))?[，,。；;]"
)
_ZH_NAMING_STYLE = re.compile(rf"([{_HAN}]{{2,3}})[，,]?表?字([{_HAN}]{{2}})[，,。；;]")
_PARTICLE = "[也矣哩哉呀么了罢]?"  # 叫做猪悟能也。: the name ends before the particle
_CALLED = r"(?:叫做|唤做|唤为|称为|取为|叫|是|乃|为|曰)"
_NAME_WORD = (
    rf"(?:(?:法名|名字|名号|小名|乳名|混名|别名|诨名|绰号|道号|名唤)[，,]?(?:就|也)?{_CALLED}?"
    rf"|[名号字]{_CALLED})"
)
_ZH_NAMING_SELF = re.compile(
    rf"(?:我[今也原本已又是]*(?:俗家也?)?(?:姓([{_HAN}])[，,]?)?[我的今也原本已又有个]*|与我(?:起|取)了?个?)"
    rf"{_NAME_WORD}"
    rf"个?([{_HAN}]{{2,4}}?){_PARTICLE}[，,。！？!?”」]"
)
_ZH_NAMING_GIVEN = re.compile(
    rf"起(?:了|个)+(?:法名|别名|混名|名字|诨名|绰号|道号)[，,]?(?:就|也)?{_CALLED}个?"
    rf"([{_HAN}]{{2,4}}?){_PARTICLE}[，,。！？!?”」]"
)
_ZH_CALLED_SELF = re.compile(rf"[“「]我(?:就|名)?叫(?:做)?([{_HAN}]{{2,3}}?)(?=[。，,！!”」])")
_ZH_NAMING_OTHER = re.compile(
    rf"(?:与|替|给|和)你(?:起|取)[^”」]{{0,6}}?(?:名|号)[，,]?(?:就)?{_CALLED}个?([{_HAN}]{{2,4}}?){_PARTICLE}"
    r"[，,。！？!?”」]"
)


def zh_groups(texts: Sequence[str], found: Sequence[Mentions]) -> NameGroups:
    """Groups of names for one person each, and the names given formally (姓X名Y, 叫做孙悟空)."""
    speaks: Counter[str] = Counter()
    opens: Counter[str] = Counter()  # speeches where the name opens its clause (。”行者道)
    quotes: list[tuple[int, str, str]] = []  # (chapter, text before the speech verb, quotation)
    for k, text in enumerate(texts):
        for m in _ZH_SPEECH.finditer(text):
            before = text[max(0, m.start() - 5) : m.start()]
            han = len(_TRAILING_HAN.search(before).group())  # type: ignore[union-attr]
            for size in range(2, min(han, 4) + 1):
                tail = before[-size:]
                speaks[tail] += 1
                lead = before[-size - 1 : -size]
                opens[tail] += not lead or not _is_name_char(lead) or lead in "那这个"
            end = text.find("”", m.end())
            quotes.append((k, before, text[m.end() : end if end >= 0 else m.end() + 200]))
    longer: Counter[str] = Counter()  # the most speeches of one name one character longer
    for tail, n in speaks.items():
        if len(tail) >= 3:
            longer[tail[1:]] = max(longer[tail[1:]], n)
    # A speaker opens its clause at least half the time (verbs like 点头 follow a subject), is
    # no tail of a longer speaker (戒 of 八戒) and no speaker plus a verb (三藏下马).
    least = SHORT_SPEECHES if sum(map(len, texts)) < SHORT_TEXT else MIN_SPEECHES
    names = {s for s, n in speaks.items() if n >= least and _zh_name_ok(s) and opens[s] * 2 >= n and longer[s] * 2 < n}
    names -= {s for s in names if any(s[:k] in names for k in range(2, len(s)))}
    joined = "\n".join(texts)
    if len(joined) >= SHORT_TEXT:  # in a book, a speaker is met as an object too; 口中道, 倒身下拜道 never are
        names &= met_as_objects(joined, names)
    lexicon = {p for m in found for p in m.people}
    names |= {
        p for p in lexicon if _zh_name_ok(p) and (opens[p] >= 1 or any(p[k:] in names for k in range(1, len(p) - 1)))
    }  # 唐三藏, 齐天大圣
    sets = NameSets()
    formal: set[str] = set()
    names |= _latin_names(joined)
    subjects = {  # not 三藏下马 of 三藏
        n
        for n in clause_subjects(texts, zh_common_word, person_noun)
        if _zh_name_ok(n) and not any(n[:k] in names for k in range(2, len(n)))
    }
    names |= subjects
    placelike = {n for n in subjects if n.endswith(_ZH_PLACE_END) and built_like_a_name(n)}
    people_said = speakers(joined, placelike) | after_a_person(joined, placelike, person_noun)  # 周大山哼了一声：“
    given = {n for n in given_names(joined, names, _no_given_name, zh_kin_named(joined)) if _zh_name_ok(n)}
    told: set[str] = set()  # names given (她叫沈静秋, 我姓许，单名一个澄字): a person's, however seldom met
    if len(joined) < SHORT_TEXT:  # (a novel's 叫 mostly shouts or asks: 叫他开门)
        told = {n.name for text in texts for n in namings(text, "zh") if _zh_name_ok(n.name)}
        given |= told
    names |= given  # 桂芬喊道, “阿福，…”, 儿子小海: named where a story names people, whatever their ending
    names |= {n for n in zh_surnamed_roles(joined) if _zh_name_ok(n)}  # 林技术员 (技术员 never alone)
    named = _appellations(joined, names)
    heard = {s for s, n in speaks.items() if n >= 2 and opens[s] * 2 >= n and _zh_name_ok(s)}
    roles = {r for r in zh_roles(texts, speaks, opens, counted_as_one(joined, heard)) if _zh_name_ok(r)} - named
    names = named | roles
    role_words = roles | {n for n in named if zh_role(n)}  # 掌柜 too where it speaks like a title
    role_names = [(r, n) for r, n in zh_role_names(texts, role_words, named) if _zh_name_ok(n)]  # 渔翁，名唤张稍
    role_names += [(r, n) for r, n in zh_surnamed(texts, role_words) if _zh_name_ok(n)]  # 周掌柜 of 掌柜
    formal |= {n for _, n in role_names} - named  # a name given to a role is its formal name
    names |= {n for _, n in role_names}
    for m in _ZH_NAMING_FULL.finditer(joined):
        full = m.group(1) + m.group(2)
        if len(full) >= 2:
            formal.add(full)
            names.add(full)
            if m.group(3):
                sets.join(full, m.group(3), m.group(1) + m.group(3))
                names |= {m.group(3), m.group(1) + m.group(3)}
    for m in _ZH_NAMING_STYLE.finditer(joined):
        if m.group(1) in names or m.group(1)[-2:] in names:
            name = m.group(1) if m.group(1) in names else m.group(1)[-2:]
            formal.add(name)
            sets.join(name, m.group(2), name[0] + m.group(2))
            names |= {m.group(2), name[0] + m.group(2)}
    for _, _, quote in quotes:  # names given in quotations, whoever speaks: 法名悟空
        for m in _ZH_NAMING_SELF.finditer(quote):
            _add_given(names, formal, m.group(1) or "", m.group(2))
    for m in _ZH_NAMING_GIVEN.finditer(joined):  # and in the narration: 起个法名，就叫做猪悟能
        _add_given(names, formal, "", m.group(1))
    for m in _ZH_CALLED_SELF.finditer(joined):  # “我叫石头。”: a name of a common word, said as one's own
        if name_shaped(m.group(1)):
            _add_given(names, formal, "", m.group(1))
    # A speaker and a name he gives himself: one he is called by (叫做), or one that has not spoken
    # yet (saying 我乃X of an X who already spoke is a disguise or a lie).
    claims: list[tuple[str, str]] = []
    role_claims: list[list[tuple[str, str]]] = [[] for _ in texts]
    spoken: set[str] = set()
    for k, (chapter, before, quote) in enumerate(quotes):
        speaker = _speaker(before, names)
        if speaker is None:
            continue
        for m in _ZH_NAMING_SELF.finditer(quote):
            if m.group(2) in names:
                full = m.group(1) + m.group(2) if m.group(1) and len(m.group(2)) == 2 else m.group(2)
                sets.join(speaker, m.group(2), full)
        for m in _ZH_NAMING_OTHER.finditer(quote):
            addressee = _addressee(quotes, k, names, speaker)
            if addressee and _zh_name_ok(m.group(1)):
                names.add(m.group(1))
                sets.join(addressee, m.group(1))
        said = [(speaker, n) for n, naming in _self_named(quote, names) if naming or n not in spoken]  # 我乃…孙悟空
        if speaker in roles:  # 老者道：我号十八公, in its chapter only
            role_claims[chapter] += said
        else:
            claims += said
        spoken.add(speaker)
    role_names += held(texts, role_claims)
    for first, second in _epithets(joined, names - roles):  # 李四又名铁拐, 人称 (老者又叫掌灯 shouts)
        names |= {first, second}
        sets.join(first, second)
    # A name ending like a place (花果山, 赵家庄) is a place unless it is given or speaks: 周大山说.
    names = {
        n for n in names if not n.endswith(_ZH_PLACE_END) or n in formal or n in heard or n in given or n in people_said
    }
    counts, pairs = _zh_counts(joined, names)
    names = {n for n in names if counts[n] >= least or n in sets.parent or n in told}  # rare aliases stay
    partners = Counter(a for (a, _), n in pairs.items() if n >= 2)  # 龙王敖广, 龙王敖顺: a shared title
    titles = Counter(b for (_, b), n in pairs.items() if n >= 2)  # 文殊菩萨, 普贤菩萨: a shared title
    tails = {full[k:] for full in names for k in range(1, len(full) - 1)}  # 娘娘 of 王母娘娘: a title, no name
    for (
        a,
        b,
    ), n in pairs.items():  # apposition: 齐天大圣孙悟空, never reversed, the first with no other
        if (
            n >= 3
            and a in names
            and b in names
            and not pairs[(b, a)]
            and partners[a] == 1
            and titles[b] == 1
            and a not in _ZH_TITLES
            and b not in _ZH_TITLES
            and b not in tails  # 公主娘娘 is two titles, not the 娘娘 of 王母娘娘
        ):
            sets.join(a, b)
    for name in names:
        sets.add(name)
    _fold_titles(sets, names, counts)
    _fold_suffixes(sets, names)
    _fold_titles(sets, names, counts)
    _join_claims(sets, claims, _conversations(quotes, names))
    shared = _shared_suffixes(sets, names) | _join_roles(sets, [(r, n) for r, n in role_names if {r, n} <= names])
    groups = [g & names - set(shared) for g in sets.groups()]
    titled = frozenset(n for n in names if _is_titled(n))
    return NameGroups([g for g in groups if g], formal, counts, shared, titled, frozenset(role_words))


_SELF = re.compile(
    r"(?:^|[，,。！？!?；;：:])(?:(?:我|吾|俺|咱|老孙)[本原乃便就正也今已又即]{0,3}(?:乃是|就是|便是|正是|本是|原是|乃|是|叫做|唤做|名叫|名唤)"
    r"|(?:自今|从今|今后|以后|从此)(?:以后)?(?:就|便|只)?(?:叫做|唤做|称做|改名|名叫)"
    r"|(?:我|吾|俺)[^。！？!?“”你他她]{0,8}[，,](?:就|便|也)?(?:叫做|唤做|名叫|名唤|法名|名字叫))([^，,。！？!?；;“”]{1,16})"
)
_EPITHET_WORDS = "又名 又叫 又称 又号 一名 亦名 也叫 人称 号称 别号 绰号 外号 诨号 人唤 江湖人称".split()
_EPITHET = re.compile(rf"{_starts('，', ',', *_EPITHET_WORDS)}[，,]?(?:{'|'.join(_EPITHET_WORDS)})[作做为]?[：:]?")
_QUOTED = re.compile(rf"[‘“「『]([{_NAME_CHARS}]{{2,5}})[’”」』]")


def _self_named(quote: str, names: set[str]) -> list[tuple[str, bool]]:
    """Names a speaker gives himself in a quotation: the known name ending a clause that says
    "I am" or "(from now on I am) called" (我乃…孙悟空, 自今就叫做孙悟空也), and whether a naming
    verb said it (called, not merely "I am")."""
    out = []
    for m in _SELF.finditer(quote):
        clause = m.group(1).rstrip("也哩罢了呀么矣'’‘")
        name = next((clause[-k:] for k in (5, 4, 3, 2) if clause[-k:] in names), None)
        naming = bool(re.search(r"叫|唤|称|名", m.group()))
        # "I am the X of ..." describes; a bare two-character "I am X" is a role (土地, 洞主)
        if name and "的" not in clause and (naming or len(name) >= 3):
            out.append((name, naming))
    return out


def _join_roles(sets: NameSets, pairs: list[tuple[str, str]]) -> dict[str, set[str]]:
    """Join each role to the one person the text names it as (那樵夫名唤李定); a role named as several
    people is shared by them -> their names."""
    given: dict[str, set[str]] = defaultdict(set)
    for role, name in pairs:
        given[role].add(name)
    shared = {}
    for role, named in given.items():
        if len({sets.find(n) for n in named}) == 1:
            sets.join(next(iter(named)), role)
        else:
            shared[role] = named
    return shared


def _conversations(quotes: list[tuple[int, str, str]], names: set[str]) -> Counter[tuple[str, str]]:
    """How often two speakers answer each other (one quotation right after the other's, in a
    chapter): two people, however one of them may call himself."""
    talks: Counter[tuple[str, str]] = Counter()
    speakers = [_speaker(before, names) for _, before, _ in quotes]
    for k in range(1, len(quotes)):
        a, b = speakers[k - 1], speakers[k]
        if a and b and a != b and quotes[k - 1][0] == quotes[k][0]:
            talks[(a, b)] += 1
            talks[(b, a)] += 1
    return talks


def _join_claims(sets: NameSets, claims: list[tuple[str, str]], talks: Counter[tuple[str, str]]) -> None:
    """Join each speaker with the name he gives himself, unless the two talk to each other
    (then the claim is a disguise or a lie: 行者 saying he is the king he speaks with)."""
    between: Counter[tuple[str, str]] = Counter()
    for (a, b), n in talks.items():
        between[(sets.find(a), sets.find(b))] += n
    for speaker, name in claims:
        one, other = sets.find(speaker), sets.find(name)
        if one != other and between[(one, other)] < 2:
            sets.join(speaker, name)
            between = Counter({(sets.find(a), sets.find(b)): n for (a, b), n in between.items()})


def _epithets(text: str, names: set[str]) -> list[tuple[str, str]]:
    """(name, epithet) from the narration's naming statements: 李四又名铁拐, 王五，人称‘白面郎’.
    The name before is a known one, or one built like a name opening its clause when the epithet
    is known (张小梅人称梅姑); the epithet after is quoted, known, or runs to the clause end."""
    pairs = []
    for m in _EPITHET.finditer(text):
        before = text[max(0, m.start() - 5) : m.start()]
        first = next((before[-k:] for k in (5, 4, 3, 2) if before[-k:] in names), None)
        after = text[m.end() : m.end() + 8]
        quoted = _QUOTED.match(after)
        known = next((after[:k] for k in (5, 4, 3, 2) if after[:k] in names), None)
        if first is None and known:
            first = next(
                (
                    before[-k:]
                    for k in (4, 3, 2)
                    if built_like_a_name(before[-k:]) and not _is_name_char(before[-k - 1 : -k] or "，")
                ),
                None,
            )
        bare = re.match(rf"[{_NAME_CHARS}]{{2,4}}(?=[，,。！？!?；;、])", after)
        second = quoted.group(1) if quoted else known or (bare.group() if bare else None)
        if first and second and second != first and _zh_name_ok(second):
            pairs.append((first, second))
    return pairs


def _latin_names(text: str) -> set[str]:
    """Names written with Latin letters (阿Ｑ, 小Ｄ, Ｋ): each recurring run of one to three letters
    in Han text, with the Han character before it when it nearly always comes with it."""
    runs: Counter[str] = Counter()
    lead: dict[str, Counter[str]] = defaultdict(Counter)
    for m in _LATIN_RUN.finditer(text):
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        if not (_is_han(before) or _is_han(after)):
            continue  # a Latin word in Latin text, not a name in Han prose
        runs[m.group()] += 1
        lead[m.group()][before if _is_han(before) else ""] += 1
    out = set()
    for run, n in runs.items():
        if n >= MIN_MENTIONS:
            han, k = lead[run].most_common(1)[0]
            name = han + run if han and k * 5 >= n * 4 and han not in _ZH_LEAD else run
            if len(name) >= 2 or run.isupper():
                out.add(name)
    return out


def _appellations(text: str, names: set[str]) -> set[str]:
    """The names that are names, not common nouns: rarely counted (一个老者, 两个和尚 are anyone),
    so a title used without a count (菩萨, 祖师) names one person in its context. One pass."""
    if not names:
        return set()
    total: Counter[str] = Counter()
    counted: Counter[str] = Counter()
    body = "|".join(map(re.escape, sorted(names, key=lambda n: (-len(n), n))))
    for m in re.finditer(body, text):
        total[m.group()] += 1
        counted[m.group()] += bool(_CLASSIFIED.search(text, max(0, m.start() - 3), m.start()))
    return {n for n in names if counted[n] * 10 < max(total[n], 1)}


def _shared_suffixes(sets: NameSets, names: set[str]) -> dict[str, set[str]]:
    """A short name ending names of several groups (龙王 of 东海龙王 and 西海龙王) -> those names:
    each mention of it means the one the text named last."""
    ending: dict[str, set[str]] = defaultdict(set)
    for full in names:
        for k in range(1, len(full) - 1):
            ending[full[k:]].add(full)
    size = Counter(sets.find(n) for n in names)
    shared = {}
    for name in names:
        fulls = {f for f in ending.get(name, ()) if sets.find(f) != sets.find(name)}
        if len({sets.find(f) for f in fulls}) >= 2 and size[sets.find(name)] == 1:
            shared[name] = fulls
    return shared


def _is_name_char(ch: str) -> bool:
    return bool(_NAME_CHAR.fullmatch(ch))


def _is_han(ch: str) -> bool:
    return bool(ch) and "\u4e00" <= ch <= "\u9fff"


_ZH_LEAD = "假那这我你他她之的了是在对向与和同跟被把朝望见着令教请闻保递问叫拜扯拿打骂救随"


def _add_given(names: set[str], formal: set[str], surname: str, name: str) -> None:
    """A name someone is given (with the surname said with it) is formal; its last two characters,
    the given name alone (悟能 of 猪悟能), are a name too."""
    if _zh_name_ok(name) and not name.endswith(_ZH_PLACE_END):
        full = surname + name if surname and len(name) == 2 else name
        formal.add(full)
        names.update((name, full, full[-2:]))


def _no_given_name(word: str) -> bool:
    """Is `word`, tagging quotations, no given name: a noun for a person (孩子, 村长, 大嫂) or a word
    jieba's dictionary knows as common as COMMON_WORD (春桃 and 水生 are in it, rarely)?"""
    return person_noun(word) or zh_common_word(word) and frequencies().get(word, 0) >= COMMON_WORD


def _zh_name_ok(name: str) -> bool:
    return (
        name not in _ZH_STOP
        and name[0] not in _ZH_LEAD
        and name[-1] not in "的了着过们暗"
        and not any(name.endswith(s) for s in ("笑", "道", "说", "问"))
    )


def _speaker(before: str, names: set[str]) -> str | None:
    """The longest known name ending the text just before a speech verb."""
    for size in (4, 3, 2):
        if before[-size:] in names:
            return before[-size:]
    return None


def _addressee(quotes: list[tuple[int, str, str]], k: int, names: set[str], speaker: str) -> str | None:
    """Who quotation k speaks to: the named speaker just before it, else just after it."""
    for j in (k - 1, k + 1):
        if 0 <= j < len(quotes) and quotes[j][0] == quotes[k][0]:
            who = _speaker(quotes[j][1], names)
            if who is not None and who != speaker:
                return who
    return None


def _zh_counts(text: str, names: set[str]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """Non-overlapping mentions of each name (longest first), and of each two names side by side."""
    counts: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    if not names:
        return counts, pairs
    body = "|".join(map(re.escape, sorted(names, key=lambda n: (-len(n), n))))
    last_end, last = -1, ""
    for m in re.finditer(body, text):
        counts[m.group()] += 1
        if m.start() == last_end:
            pairs[(last, m.group())] += 1
        last_end, last = m.end(), m.group()
    return counts, pairs


def _fold_titles(sets: NameSets, names: set[str], counts: Counter[str]) -> None:
    """孙大圣, 唐僧: a surname and a title join the group holding >= 80% of that surname."""
    totals: Counter[str] = Counter()
    for name in names:
        totals[sets.find(name)] += counts[name]
    holders: dict[str, dict[str, int]] = defaultdict(dict)
    for name in names:
        if len(name) >= 3 and not _is_titled(name):
            root = sets.find(name)
            holders[name[0]][root] = totals[root]
    for name in names:
        if _is_titled(name) and holders.get(name[0]):
            top = max(holders[name[0]], key=lambda r: (holders[name[0]][r], r))
            if holders[name[0]][top] * 5 >= sum(holders[name[0]].values()) * 4:
                sets.join(top, name)


def _is_titled(name: str) -> bool:
    return name[1:] in _ZH_TITLES


def _fold_suffixes(sets: NameSets, names: set[str]) -> None:
    """悟空 -> 孙悟空, 大圣 -> 齐天大圣: a short name ending names of exactly one other group."""
    ending: dict[str, list[str]] = defaultdict(list)
    for full in names:
        for k in range(1, len(full) - 1):
            ending[full[k:]].append(full)
    for name in sorted(names, key=len):
        owners = {sets.find(full) for full in ending[name]}
        if len(owners) == 1:
            sets.join(owners.pop(), name)
