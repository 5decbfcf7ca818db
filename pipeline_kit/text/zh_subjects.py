"""Chinese names that open clauses: the people of modern prose, where speech tags stand apart.

Modern fiction seldom writes 某某道：“…” (七斤嫂有些着急，赶忙的问), so the speaker rule finds few
of its people, and jieba's dictionary knows none of them. A person is the subject of clause after
clause, though: a run of two to four characters that often opens a clause, is no longer run's
start (the text cuts it there), is no dictionary word but a name, and is built like a name: a
common surname and a given name (陈士成, 王胡), 老/小/阿 and one character (老栓), or a word for a
person at its end (单四嫂子, 赵太爷, 华大妈, 举人老爷); a given name alone (闰土) when it speaks
(闰土说). Unless a word for a person ends it, a name is also met as an object (见了闰土, 对吴妈说),
as a noun is, or opens a sentence that ends in its speech (赵德福下了驴，问道：“…”): classical
phrases that open clauses (莫怕, 何曾, 方敢) do neither.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from pipeline_kit.text.zh_dictionary import frequencies

MIN_OPENINGS = 3  # a name opens this many clauses in the book (one fewer if it speaks in them)
_OBJECT_AFTER = "了的与和对把被叫向见跟同给请问拜随着"
# A quotation's tag after it in modern prose: “…”秀英说， “…”孩子小声问。 (the run, then the verb)
_TAG_AFTER = re.compile(r"(?<=[”」])([\u4e00-\u9fff]{2,7}?)(?:说|问|答|喊|嚷|叫)道?[，,。：:！!？?]")
_TAG_BEFORE = re.compile(
    r"(?:^|(?<=[，,。！？\n”」]))([\u4e00-\u9fff]{2,3})[^。！？“”「」\n]{0,16}?(?:说|问|答|喊|嚷|叫|骂)道?[：:]\s*[“「]",
    re.M,
)
_CALLED = re.compile(r"[“「]([\u4e00-\u9fff]{2,3})[，,！!]")  # “阿福，吃饭了！”: the one called
SHORT_TEXT = 40_000  # characters: a short story
SHORT_TAGS = 1  # a given name tagging this many quotations in one
_CLAUSE_RUN = re.compile(r"(?:^|(?<=[，。！？；：、”“「」『』\n\u3000 ]))([\u4e00-\u9fffＡ-Ｚａ-ｚ]{2,5})", re.M)
# The hundred most common surnames (a fact of the language, not of any book).
SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹彭曾萧田董潘袁蔡蒋余于杜叶程魏苏吕丁任"
    "沈姚卢姜崔钟谭陆汪范金石廖贾夏韦傅方邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_NUMERALS = "一二两几"  # 戴一顶, 王两个: a verb and its count, never a given name's start
_LOCATIVE = "上下里外边中内前后"  # 车上, 地里: where, not who
GIVEN_COMMON = 1_000  # a word jieba met less often can be a given name (铁柱 19, 大山 635; 有些 15,584)
_PET = "老小阿"  # 老栓, 小栓, 阿毛: a familiar name
_PERSON_END = re.compile(
    r"(?:嫂子?|[太老]?爷|大?妈|[大老]?叔|[大老]?伯|婶子?|[奶太]奶|太太|老太|[大]?娘|婆婆?|姑娘|先生|老爷|相公|掌柜|少爷|小姐|哥|姐)$"
)
SPEECH = "说道问答叫喊笑骂"  # the verbs that tag a Chinese quotation (秀英说, 行者笑道)
_GIVEN_TOO = "有来"  # common first characters of given names (有福, 来顺) that are verbs too
_NOT_A_NAME = re.compile(
    r"[我你他她家们的了着过是在有不也就都又便却还只把被给和与说道问笑看听想走来去到呀啊呢吗吧么哩罢]"
)


def clause_subjects(
    texts: Sequence[str], common: Callable[[str], bool], person: Callable[[str], bool] = lambda _: False
) -> set[str]:
    """The names that open clauses often enough (see the module docstring); `common` tells the
    dictionary's words that are no names (母亲 or 忽然 is never taken), `person` the words for a
    person a name may stand after (铁匠王老三)."""
    joined = "\n".join(texts)
    runs = _CLAUSE_RUN.findall(joined)
    opens: Counter[str] = Counter(runs)  # each run's openings, then those of its shorter prefixes
    for size in range(2, max(map(len, runs), default=0)):
        opens.update([run[:size] for run in runs if len(run) > size])
    ahead: Counter[str] = Counter()  # the most openings of a run one character longer
    for run, n in opens.items():
        if n >= 2 and len(run) >= 3 and n > ahead[run[:-1]]:  # one opening never outweighs a name's three
            ahead[run[:-1]] = n
    said: Counter[str] = Counter()  # each run's openings with a speech verb right after it (闰土说)
    for run, n in opens.items():
        if run[-1] in SPEECH:
            said[run[:-1]] += n
    found = {
        run
        for run, n in opens.items()
        if n >= MIN_OPENINGS - 1
        and len(run) <= 4
        and ahead[run] * 5 < n * 3  # 七斤嫂 goes on as 七斤嫂说, 七斤嫂道, 七斤嫂有: she ends here
        and (built_like_a_name(run) or len(run) <= 3 and said[run] >= 2 and name_shaped(run))
        and not common(run)  # last: it looks the run up in the dictionary
    }
    found = {run for run in found if not any(run[:k] in found for k in range(2, len(run)))}  # not 阿Ｑ很 of 阿Ｑ
    named = {run for run in found if _PERSON_END.search(run) and len(run) > 2}
    objects = met_as_objects(joined, found - named)
    talking = speakers(joined, {run for run in found - named - objects if built_like_a_name(run)})
    apposed = after_a_person(joined, found - named - talking, person)  # 扳道工大刘 … 塞给大刘 too
    # a short story's full name (a surname and a given name: not 马有些) opening clause after
    # clause: 吴桂兰, 孙铁柱
    short = len(joined) < SHORT_TEXT
    full = {r for r in found if short and len(r) == 3 and r[0] in SURNAMES and _given_name(r[1:], common)}
    return {run for run in named | objects | full if opens[run] >= MIN_OPENINGS} | talking | apposed


def _given_name(given: str, common: Callable[[str], bool]) -> bool:
    """Can `given` follow a surname as a given name? No word, or a word too rare to be a common
    one (铁柱, 春生, 大山 are names jieba knows; 有些 and 车上 are not) and no place word (地里)."""
    if given[0] in _NUMERALS or given[-1] in _LOCATIVE:
        return False
    return not common(given) or frequencies().get(given, 0) < GIVEN_COMMON


def after_a_person(text: str, names: Iterable[str], person: Callable[[str], bool]) -> set[str]:
    """In a short story, the `names` built like a name (a surname and a given name, 老冯, 大刘) that
    stand right after a word for who they are (铁匠王老三, 老渔夫周大山, 扳道工大刘): the text says they are a
    person. (A novel names its people often enough for the other rules; there 老者戴一顶… is a verb.)"""
    if len(text) >= SHORT_TEXT:
        return set()
    out = set()
    for name in names:
        if (
            len(name) == 3
            and name[0] in SURNAMES
            and name[1] not in _NUMERALS
            or len(name) == 2
            and built_like_a_name(name)
        ):
            at = [m.start() for m in re.finditer(re.escape(name), text)]
            if any(person(text[max(0, o - k) : o]) for o in at for k in (3, 2)):
                out.add(name)
    return out


def given_names(text: str, known: set[str], common: Callable[[str], bool], kin: Iterable[str] = ()) -> set[str]:
    """In a short story, given names with no surname (秀英, 阿福, 小海) where a story names its people,
    whatever their names: tagging a quotation after it (“…”秀英说，) or before it (桂芬喊道：“),
    called by it (“阿福，吃饭了！”) or set after a kinship word (`kin`: 儿子小海), at least SHORT_TAGS
    times, and recurring MIN_OPENINGS times, or only twice where both name someone so (`common`: the
    words met there that are no name, 孩子
    or 大嫂). A novel names its people often enough for the rules above, and its classical 道 after
    a quotation is seldom a tag."""
    if len(text) >= SHORT_TEXT:
        return set()
    runs = [*_TAG_AFTER.findall(text), *_TAG_BEFORE.findall(text), *_CALLED.findall(text), *kin]
    tags = Counter(
        run[:size]
        for run in runs
        for size in (3, 2)
        if len(run) >= size and name_shaped(run[:size]) and not any(run[:k] in known for k in (2, 3))
    )
    # the longest run that recurs is the name (孙先生 of 孙先生问, not 孙先; 桂芬 of 桂芬喊道, not 桂芬喊)
    # … and recurs; twice is enough where each time names someone (媳妇秋菊…, “…”秋菊说)
    named = {r for r, n in tags.items() if n >= SHORT_TAGS and text.count(r) >= MIN_OPENINGS or n >= 2 == text.count(r)}
    named -= {r for r in named if any(len(o) > len(r) and o.startswith(r) for o in named)}
    return {r for r in named if not common(r)}


def met_as_objects(text: str, names: Iterable[str]) -> set[str]:
    """The `names` met at least once right after a verb or preposition that takes a noun (one
    pass over the text, longest names first; a name's prefixes that are names count with it)."""
    wanted = set(names)
    if not wanted:
        return set()
    body = "|".join(map(re.escape, sorted(wanted, key=lambda n: (-len(n), n))))
    seen = set(re.findall(rf"(?<=[{_OBJECT_AFTER}])(?:{body})", text))
    return {n for n in wanted if n in seen or any(m.startswith(n) for m in seen if len(m) > len(n))}


def speakers(text: str, names: Iterable[str]) -> set[str]:
    """The `names` that open a sentence whose speech tag is theirs (赵德福下了驴，问道：“…; 周大山
    哼了一声：“…: the colon before the quotation tags it, whatever the verb), or that
    follow a quotation as its tag (“…”孙小梅问。): a person of a short story may never be met as an
    object, but is the one who speaks."""
    wanted = sorted(set(names), key=lambda n: (-len(n), n))
    if not wanted:
        return set()
    body = "|".join(map(re.escape, wanted))
    # The mark before a sentence (a line break: the text is read after one) or a quotation is
    # matched, not looked behind for: a pattern that opens with a mark is searched for mark by
    # mark, not tried at every character. No match can end on one (each ends with “ or 。，).
    tag_before = rf"[。！？”\n\u3000 ]({body})[^。！？“”\n]{{0,30}}[：:，,]“"  # 周大山哼了一声：“…, 把信折好，“…
    tag_after = rf"”({body})[^。！？“”\n]{{0,6}}?[{SPEECH}]道?[。，]"  # “…”孙小梅问。
    return set(re.findall(tag_before, "\n" + text)) | set(re.findall(tag_after, text))


def name_shaped(run: str) -> bool:
    """Does `run` hold no character a name never holds (pronouns, particles, common verbs)?"""
    return not _NOT_A_NAME.search(run)


def built_like_a_name(run: str) -> bool:
    """A common surname and a given name, 老/小/阿 and one character, 大 and a surname, or a word for
    a person at the end."""
    given = run[1:]
    if len(run) == 3 and run[0] in SURNAMES and run[1] in _GIVEN_TOO:  # 钱有福, 李来顺: the word is a name's
        given = run[2]
    if _NOT_A_NAME.search(given) or _NOT_A_NAME.match(run):
        return False
    if _PERSON_END.search(run) and len(run) > 2:
        return True
    return (
        len(run) <= 3
        and run[0] in SURNAMES
        or len(run) == 2
        and (run[0] in _PET or run[0] == "大" and run[1] in SURNAMES and not frequencies().get(run))  # 大刘, not 大王
    )
