"""Which names in a book are people, and which of them are one person: the rules behind the bible.

Chinese: the speakers before speech verbs (三藏道, 行者笑道: the verb is never part of the name)
and the person words of jieba's dictionary that speak, minus stop words (pronouns, forms of
address, groups, objects). Names are joined by naming patterns (姓刘，名备，字玄德; 刘备字玄德;
我法名悟空 in a speaker's quotation; 与你起个混名，称为行者 for the one spoken to), apposition
(齐天大圣孙悟空), a surname with a title when one character holds that surname (孙大圣, 唐僧),
and a short name ending the names of exactly one other person (悟空 -> 孙悟空, 大圣 -> 齐天大圣).
English: capitalised words the chapters' mentions call people, minus places, sentence-initial
words, contractions and stop words; a surname or first name of exactly one full name joins it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from pipeline_kit.text.names import _EN_PLACE_WORDS, Mentions

MIN_SPEECHES = 3  # a speaker name must speak this often in the book

_HAN = "\u4e00-\u9fff"
_TRAILING_HAN = re.compile(rf"[{_HAN}]*$")
_ZH_SPEECH = re.compile(
    r"(?:[又便也却才就即乃遂只方忙急因]|连忙|慌忙|闻言|听说|听了|见了|看了|上前|近前|合掌|躬身|"
    r"大?笑|冷笑|陪笑|欢喜|大?喜|大?怒|大?惊|叹|哭|高叫|大叫|厉声|低头)*"
    r"(?:笑道|说道|问道|答道|叫道|喝道|骂道|道|曰|说|问|答|叫|喝|骂|云)[:：]\s*[“「]"
)
# Pronouns, forms of address, groups, roles many people hold, objects and common words that
# jieba's dictionary or the speaker rule would otherwise take for people.
_ZH_STOP = frozenset(
    """我们 你们 他们 她们 咱们 自己 大家 别人 人家 此人 那人 这人 众人 二人 三人 两个
    一个 那个 这个 老夫 老孙 老猪 老沙 贫僧 贫道 小僧 小道 小弟 小人 小的 在下 晚生
    本官 本王 寡人 孤家 朕躬 妾身 奴家
    弟子 徒弟 师父 师兄 师弟 师傅 师公 长老 老爷 大人 相公 官人 陛下 主公 殿下 万岁 娘娘 夫人 小姐
    公主 太子 大王 国王 皇帝 丞相 将军 元帅 先锋 军士 军师 众将 诸侯 诸将 令人 众官 众臣 百官 众僧
    众妖 众怪 小妖 妖精 妖怪 妖魔 怪物 妖王 魔王 菩萨 神仙 仙人 真人 道人 道士 和尚 僧人 老僧 老者
    老儿 老汉 老叟 老翁 老婆 婆婆 妇人 女子 童子 行童 哥哥 兄弟 姐姐 妹妹 嫂嫂 父亲 母亲 孩儿
    呆子 猴子 猴头 泼猴 那厮 那怪 这厮 众猴 众神 天王 大仙 圣僧 唐人 闻言 原来 只见 却说
    正是 如何 不知 那里 这里 甚么 怎么 一时 心中 大喜 满心 多谢 胡说 明白 高兴 言语 谢恩 玉玺
    宝贝 金光 文武 宝剑 化斋 王道 施礼 马匹 拜佛 托生 招安 十分 口里 半空中 多官 群妖 妖邪 老妖 老魔
    老怪 魔头 先生 公公 员外 星官 判官 真君 祖师 起身 出来 一声 铁棒 洞里 将来 过来 上来 听得 有人
    太监 校尉 土地 山神 罗汉 金刚 驸马 小龙 老龙""".split()
)
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
_ZH_NAMING_OTHER = re.compile(
    rf"(?:与|替|给|和)你(?:起|取)[^”」]{{0,6}}?(?:名|号)[，,]?(?:就)?{_CALLED}个?([{_HAN}]{{2,4}}?){_PARTICLE}"
    r"[，,。！？!?”」]"
)

_EN_FULL = re.compile(r"\b(?=([A-Z][a-z]+) ([A-Z][a-z]+)\b)")  # overlapping: "Then Alice Brown"
_EN_SPEECH = (
    "said",
    "cried",
    "asked",
    "answered",
    "replied",
    "remarked",
    "observed",
    "whispered",
    "shouted",
    "continued",
    "exclaimed",
    "murmured",
    "added",
)
_EN_SPOKE = re.compile(
    rf"\b(?:{'|'.join(_EN_SPEECH)}) ([A-Z][a-z]+)\b|\b([A-Z][a-z]+) (?:{'|'.join(_EN_SPEECH)})\b"
)
# Pronouns, sentence-initial words, contractions' stems and forms of address.
_EN_STOP = frozenset(
    """i a an the and but or if so then there here this that these those it its he she they we you
    his her their our your my me him them who what when where why how which yes no not oh ah well
    now mr mrs miss ms dr sir madam lady lord colonel captain inspector doctor professor majesty
    god heaven street road square lane english french german american british monday tuesday
    wednesday thursday friday saturday sunday january february march april may june july august
    september october november december christmas chapter part book one two three four st saint
    city league however still yet perhaps indeed very good come look let pray do did does is was
    were be as at by for from in into of on to up with after before while ha hum said cried asked
    answered replied remarked exclaimed yours sincerely dear father mother mister king queen emperor
    prince princess duke count baron""".split()
)
_EN_AT_PLACE = re.compile(
    r"\b(?:in|at|to|from|near|into|through|towards?|reached)\s+([A-Z][a-z]+)\b"
)
_EN_PLACE_END = re.compile(rf"(?:^| )(?:{_EN_PLACE_WORDS}|Valley)$")
_EN_CONTRACTION = re.compile(r"[’'](?:m|ve|ll|d|re|t|s)$")


def people(texts: Sequence[str], lang: str, found: Sequence[Mentions]) -> dict[str, set[str]]:
    """Canonical name -> every name of that person, for the book's chapter texts."""
    groups, formal, freq = (_zh_groups if lang == "zh" else _en_groups)(texts, found)
    return {_canonical(g, formal, lang, freq): g for g in groups}


# --- Chinese -------------------------------------------------------------------------------


def _zh_groups(
    texts: Sequence[str], found: Sequence[Mentions]
) -> tuple[list[set[str]], set[str], Counter[str]]:
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
                opens[tail] += not lead or not "\u4e00" <= lead <= "\u9fff" or lead in "那这个"
            end = text.find("”", m.end())
            quotes.append((k, before, text[m.end() : end if end >= 0 else m.end() + 200]))
    longer: Counter[str] = Counter()  # the most speeches of one name one character longer
    for tail, n in speaks.items():
        if len(tail) >= 3:
            longer[tail[1:]] = max(longer[tail[1:]], n)
    # A speaker opens its clause at least half the time (verbs like 点头 follow a subject), is
    # no tail of a longer speaker (戒 of 八戒) and no speaker plus a verb (三藏下马).
    names = {
        s
        for s, n in speaks.items()
        if n >= MIN_SPEECHES
        and _zh_name_ok(s)
        and opens[s] * 2 >= n
        and longer[s] * 2 < n
    }
    names -= {s for s in names if any(s[:k] in names for k in range(2, len(s)))}
    lexicon = {p for m in found for p in m.people}
    names |= {
        p
        for p in lexicon
        if _zh_name_ok(p) and (opens[p] >= 1 or any(p[k:] in names for k in range(1, len(p) - 1)))
    }  # 唐三藏, 齐天大圣
    sets = NameSets()
    formal: set[str] = set()
    joined = "\n".join(texts)
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
    for k, (chapter, before, quote) in enumerate(quotes):
        speaker = _speaker(before, names)
        if speaker is None:
            continue
        for m in _ZH_NAMING_SELF.finditer(quote):
            if m.group(2) in names:
                full = (
                    m.group(1) + m.group(2) if m.group(1) and len(m.group(2)) == 2 else m.group(2)
                )
                sets.join(speaker, m.group(2), full)
        for m in _ZH_NAMING_OTHER.finditer(quote):
            addressee = _addressee(quotes, k, names, speaker)
            if addressee and _zh_name_ok(m.group(1)):
                names.add(m.group(1))
                sets.join(addressee, m.group(1))
    names = {n for n in names if not n.endswith(_ZH_PLACE_END) or n in formal}
    counts, pairs = _zh_counts(joined, names)
    names = {n for n in names if counts[n] >= MIN_SPEECHES or n in sets.parent}  # rare aliases stay
    partners = Counter(
        a for (a, _), n in pairs.items() if n >= 2
    )  # 龙王敖广, 龙王敖顺: a shared title
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
            and a not in _ZH_TITLES
            and b not in _ZH_TITLES
        ):
            sets.join(a, b)
    for name in names:
        sets.add(name)
    _fold_titles(sets, names, counts)
    _fold_suffixes(sets, names)
    _fold_titles(sets, names, counts)
    return [g & names for g in sets.groups() if g & names], formal, counts


_ZH_LEAD = "假那这我你他她之的了是在对向与和同跟被把朝望见着令教请闻保递问叫拜扯拿打骂救随"


def _add_given(names: set[str], formal: set[str], surname: str, name: str) -> None:
    """A name someone is given (with the surname said with it) is formal; its last two characters,
    the given name alone (悟能 of 猪悟能), are a name too."""
    if _zh_name_ok(name) and not name.endswith(_ZH_PLACE_END):
        full = surname + name if surname and len(name) == 2 else name
        formal.add(full)
        names.update((name, full, full[-2:]))


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


def _addressee(
    quotes: list[tuple[int, str, str]], k: int, names: set[str], speaker: str
) -> str | None:
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


# --- English -------------------------------------------------------------------------------


def _en_groups(
    texts: Sequence[str], found: Sequence[Mentions]
) -> tuple[list[set[str]], set[str], Counter[str]]:
    """People: words the chapters' mentions call people and that are no stop word or contraction."""
    joined = "\n".join(texts)
    people: Counter[str] = Counter()
    for m in found:
        for name, is_place in zip(m.names, m.is_place):
            if not is_place:
                people[name] += 1
    for m in _EN_SPOKE.finditer(joined):
        people[m.group(1) or m.group(2)] += 0  # a speaker counts as a person even if rarely named
    before_place = Counter(m.group(1) for m in _EN_AT_PLACE.finditer(joined))
    singles = {
        w
        for w in people
        if _en_name_ok(w) and before_place[w] * 4 < joined.count(w) and not _EN_PLACE_END.search(w)
    }
    sets = NameSets()
    fulls: Counter[str] = Counter(
        f"{m.group(1)} {m.group(2)}"
        for m in _EN_FULL.finditer(joined)
        if _en_name_ok(m.group(1))
        and _en_name_ok(m.group(2))
        and (m.group(1) in singles or m.group(2) in singles)
    )
    full_names = {f for f, n in fulls.items() if n >= 2 and not _EN_PLACE_END.search(f)}
    for name in singles:
        sets.add(name)
    for (
        surname
    ) in singles:  # Sherlock Holmes and Holmes; Sherlock if it only ever comes before Holmes
        owners = [f for f in full_names if f.endswith(" " + surname)]
        if len(owners) == 1:
            sets.join(owners[0], surname)
    for first in {f.split()[0] for f in full_names}:
        owners = [f for f in full_names if f.startswith(first + " ")]
        if len(owners) == 1 and _en_name_ok(first):
            sets.join(owners[0], first)
    names = singles | full_names
    freq = Counter({n: c for n, c in people.items() if n in names}) + fulls
    return [g for g in sets.groups() if g & names], full_names, freq


def _en_name_ok(word: str) -> bool:
    return word.lower() not in _EN_STOP and not _EN_CONTRACTION.search(word)


def _canonical(members: set[str], formal: set[str], lang: str, freq: Counter[str]) -> str:
    """The name a group goes by: its formal full name, else its longest, most common one."""
    pool = [m for m in members if m in formal] or sorted(members)
    if lang == "zh":
        pool = [m for m in pool if len(m) >= 3 and not _is_titled(m)] or pool
    return max(pool, key=lambda m: (len(m.split()) if lang != "zh" else 0, freq[m], m))


class NameSets:
    """Names joined into groups, one per person (union-find)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def add(self, name: str) -> None:
        self.parent.setdefault(name, name)

    def find(self, name: str) -> str:
        self.add(name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, first: str, *others: str) -> None:
        root = self.find(first)
        for other in others:
            self.parent[self.find(other)] = root

    def groups(self) -> list[set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for name in list(self.parent):
            out[self.find(name)].add(name)
        return sorted(out.values(), key=lambda g: sorted(g))
