"""Find the people and places a chapter mentions, with the offset of every mention.

Chinese: words that jieba's dictionary tags `nr*` (people) or `ns` (places if they end like
山/洞/宫, people if a speech verb follows as in 三藏道, else dropped), kept when frequent,
confirmed by jieba's cut and not a common role word; a short name ending exactly one longer
name merges into it (悟空 -> 孙悟空). English: capitalised words that are not sentence-initial,
frequent, and rarely written in lower case; a word mostly seen after in/at/to/from, or before
Street/Road/..., is a place, unless it speaks or laughs (said Venn: a letter from Venn is a
person's); a first name mostly followed by one surname merges into it (`Sherlock` -> `Holmes`).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, count
from operator import add

from pipeline_kit.text.zh_dictionary import cut, frequencies, lexicon, read_ahead

MIN_MENTIONS = 3  # a Chinese name recurs this often in a chapter (jieba confirms each)
EN_MIN_MENTIONS = 2  # an English name this often (the bible asks more of a long book)

_ZH_STOP = frozenset(
    "和尚 闻言 大王 小姐 宝贝 童子 言语 拜佛 马匹 二人 谢恩 师兄 师弟 师父 徒弟 文武 胡说 金光 长老 老儿 老和尚 众人 "
    "天王 大仙 仙人 娘娘 夫人 公主 太子 妖精 妖怪 妖魔 菩萨 真人 道人 行童 小的 老爷 哥哥 兄弟 圣僧 和平 "
    "明白 高兴 只见 却说 原来 正是 如何 不知 那里 这里 甚么 怎么 一时 心中 大喜 贫僧 老孙 弟子 满心 "
    "多谢 托生 招安 老叟 老僧 众僧 师公 老公公 唐人 松树 凤凰".split()
)
_ZH_SPEECH = frozenset("道问曰说笑叫喝答闻")
_ZH_PLACE_END = tuple("山洞宫殿城国寺庄河海江湖关岭州洲府县村岛院庙阁楼台门镇巷坊铺店渡")
_EN_STOP = frozenset(
    """i a an the and but or if so then there here this that these those it its he she they we you
    his her their our your my me him them who what when where why how which yes no not oh ah well
    now mr mrs miss ms dr sir madam lady lord colonel captain inspector doctor professor majesty
    god heaven street road square lane english french german american british monday tuesday
    wednesday thursday friday saturday sunday january february march april may june july august
    september october november december christmas chapter part book one two three four st saint city league
    however still yet perhaps indeed very good come look let pray do did does is was were be
    as at by for from in into of on to up with after before while ah ha hum""".split()
)
# Titles before a surname and the sex each says (Dr says none): Mrs Crane is a woman.
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
    "Dr": None,
}
_EN_TITLED = re.compile(rf"\b({'|'.join(_EN_TITLE)})\.? ([A-Z][a-z]+)\b")
_EN_TITLES = frozenset("mr mrs miss ms dr sir lady lord colonel captain inspector doctor professor".split())
_EN_PLACE_WORDS = "|".join(
    "Street Road Square Lane Place Terrace Avenue Hall House Court Bridge Park Station Hotel Inn Lighthouse "
    "Pier Quay Abbey Manor Castle Farm Woods? Forest River Harbour Harbor Market Tower Gate Hill Mill Lodge "
    "Yard Cottage Grange Temple Church Chapel Wharf Row Crescent Gardens Island Isle Bay Point Cove Lake Moor "
    "Heath Creek Valley Mountain".split()
)
# Words that open a place's name: Port Ellery, Mount Tabor, Cape Wrath.
_EN_PLACE_LEAD = "Port|Mount|Fort|Cape|Lake|Isle of"
_EN_NOT_A_PLACE = "The|A|An|In|At|To|From|Of|Our|My|His|Her|Their|This|That"  # words a place name never opens with
_EN_PLACE_PHRASE = re.compile(
    rf"\b(?!(?:{_EN_NOT_A_PLACE}) )(?:[A-Z][a-z’']+ )+(?:{_EN_PLACE_WORDS})\b|\b(?:{_EN_PLACE_LEAD}) [A-Z][a-z’']+\b"
)
_EN_WORD = re.compile(r"\b(?:Mc|Mac|O’|O'|D’|D')?[A-Z][a-z’']*[a-z]\b")
_EN_PLACE_BEFORE = frozenset("in at from near towards toward into through reached across within outside".split())
# "to" is a place's only after a move (went to Paris; wrote to Holmes is a person's); "of" only
# after a ruler or a word for a place (King of Bohemia, county of Surrey, the Roylotts of Stoke Moran).
_EN_MOVES = frozenset(
    """go goes went gone going come came coming drove driven travelled traveled back way journey
    returned sent moved sailed walked ran rode""".split()
)
_EN_PLACE_OF = frozenset(
    """king queen prince princess duke duchess earl count countess emperor kingdom county city town
    village coast capital heart streets part north south east west people men border borders angle
    side edge corner outskirts""".split()
)
# A region's name before a word for its parts: the Surrey side, Surrey lanes, the Kent coast.
_EN_PLACE_AFTER = frozenset("side lanes lane roads hills coast border borders county villages countryside".split())
_EN_SPEECH_AFTER = frozenset(
    "said cried asked answered replied remarked observed whispered shouted laughed smiled nodded sighed".split()
)
_INITIAL_BEFORE = set('.!?“"‘(—:')


@dataclass(frozen=True)
class Mentions:
    """People and places of one chapter: canonical names and every mention's offset."""

    people: tuple[str, ...]
    places: tuple[str, ...]
    offsets: tuple[int, ...]  # sorted mention offsets
    names: tuple[str, ...]  # canonical name of each mention, parallel to offsets
    is_place: tuple[bool, ...]

    def between(self, start: int, end: int) -> tuple[list[str], list[str]]:
        """(people, places) mentioned in [start, end), each once, in order of first mention."""
        lo = bisect.bisect_left(self.offsets, start)
        hi = bisect.bisect_left(self.offsets, end)
        people: dict[str, None] = {}
        places: dict[str, None] = {}
        for k in range(lo, hi):
            (places if self.is_place[k] else people).setdefault(self.names[k], None)
        return list(people), list(places)


@lru_cache(maxsize=256)
def find_mentions(text: str, lang: str) -> Mentions:
    """Mentions of frequent people and places in one chapter's text.

    Cached per text, so the character bible and the splitter share one scan of each chapter.
    """
    raw = _zh_raw(text) if lang == "zh" else _en_raw(text)
    return _build(raw)


def book_mentions(texts: Sequence[str], lang: str) -> list[Mentions]:
    """Each chapter's mentions (`find_mentions`), and in English the people a chapter names too
    seldom for it alone, who are names over the whole book: Mr. Tolley, named once in each of two
    chapters, is someone as much as one named twice in one. (Chinese names are the dictionary's.)"""
    found = [find_mentions(t, lang) for t in texts]
    if lang == "zh" or len(texts) < 2:
        return found
    known = {n for m in found for n in m.names}
    starts = [0]
    for t in texts[:-1]:
        starts.append(starts[-1] + len(t) + len(_CHAPTER_GAP))
    more: list[list[tuple[int, str, bool]]] = [[] for _ in texts]
    for offset, name, is_place in _en_raw(_CHAPTER_GAP.join(texts)):
        if not is_place and name not in known:
            k = bisect.bisect_right(starts, offset) - 1
            more[k].append((offset - starts[k], name, False))
    return [_build([*zip(m.offsets, m.names, m.is_place), *extra]) if extra else m for m, extra in zip(found, more)]


_CHAPTER_GAP = "\n\n"  # between chapters read as one text: a sentence ends there


def _build(raw: list[tuple[int, str, bool]]) -> Mentions:
    raw.sort()
    people = tuple(dict.fromkeys(n for _, n, p in raw if not p))
    places = tuple(dict.fromkeys(n for _, n, p in raw if p))
    return Mentions(
        people, places, tuple(o for o, _, _ in raw), tuple(n for _, n, _ in raw), tuple(p for _, _, p in raw)
    )


def zh_common_word(word: str) -> bool:
    """Is `word` in jieba's dictionary as anything but a person's name (母亲, 忽然; not 孔乙己)?"""
    tagged, _ = lexicon()
    return frequencies().get(word, 0) > 0 and not (word in tagged and not tagged[word])


def _zh_raw(text: str) -> list[tuple[int, str, bool]]:
    """Longest-match scan for tagged dictionary words, then jieba confirms each frequent one.

    Scanning is ~10x faster than cutting the whole text; jieba then cuts a few short contexts
    per candidate and keeps the name only if it comes out as a word there (`王道` in `大王道` does not).
    """
    tagged, prefixes = lexicon()
    found: list[tuple[int, str, bool]] = []
    free = 0  # the scan goes on here after a word (no word starts inside one)
    for i in _word_starts(text, prefixes):
        if i < free:
            continue
        for size in (4, 3, 2):
            word = text[i : i + size]
            if word in tagged:
                lead = 1 if word[0] in "那这" and size >= 3 else 0  # 那长老 is 那 + 长老
                name = word[lead:]
                if name[-1] in _ZH_SPEECH and name[:-1] in tagged:  # 太宗闻 is 太宗 + 闻
                    name = name[:-1]
                if name not in _ZH_STOP:
                    found.append((i + lead, name, name.endswith(_ZH_PLACE_END)))
                free = i + size
                break
    speaks: Counter[str] = Counter(
        name for o, name, _ in found if text[o + len(name) : o + len(name) + 1] in _ZH_SPEECH
    )
    # An `ns` word without a place ending is a person if it speaks (三藏道), else it is dropped.
    found = [f for f in found if f[2] or not tagged.get(f[1], False) or speaks[f[1]] >= 2]
    where: dict[str, list[int]] = defaultdict(list)
    for o, name, _ in found:
        where[name].append(o)
    frequent = {name: offs for name, offs in where.items() if len(offs) >= MIN_MENTIONS}
    read_ahead(_context(text, name, offs[0]) for name, offs in frequent.items())  # what _confirmed cuts first
    keep = {name for name, offs in frequent.items() if _confirmed(text, name, offs)}
    canonical = {name: name for name in keep}
    for name in keep:  # 悟空 -> 孙悟空, 大圣 -> 齐天大圣: a short name ending the one longer name
        longer = [full for full in keep if len(full) > len(name) and full.endswith(name)]
        if len(longer) == 1:
            canonical[name] = longer[0]
    return [(o, canonical[n], p) for o, n, p in found if n in keep]


def _word_starts(text: str, prefixes: frozenset[str]) -> Iterator[int]:
    """The offsets whose two characters begin a dictionary word, in order: every pair of the
    text is looked up in C loops (a Python loop over each character cost 0.15 s of 西游记)."""
    return compress(count(), map(prefixes.__contains__, map(add, text, text[1:])))


def _confirmed(text: str, name: str, offsets: list[int], tries: int = 3) -> bool:
    """Does jieba cut `name` out as a word in at least one of its first few contexts?"""
    for o in offsets[:tries]:
        words = cut(_context(text, name, o))
        if any(w == name or len(w) > len(name) and w.endswith(name) and w[0] in "那这" for w in words):
            return True
    return False


def _context(text: str, name: str, offset: int) -> str:
    """The mention of `name` at `offset` with the six characters on either side, cut to confirm it."""
    return text[max(0, offset - 6) : offset + len(name) + 6]


def _en_raw(text: str) -> list[tuple[int, str, bool]]:
    words = [(m.start(), m.group()) for m in _EN_WORD.finditer(text)]
    lower_counts = Counter(map(str.lower, re.findall(r"\b[a-z][a-z’']*\b", text)))
    total: Counter[str] = Counter()
    inner: Counter[str] = Counter()
    place_ctx: Counter[str] = Counter()
    person_ctx: Counter[str] = Counter()
    follows: dict[str, Counter[str]] = defaultdict(Counter)
    for k, (off, word) in enumerate(words):
        total[word] += 1
        before = text[max(0, off - 20) : off].rstrip(" _\n\t")
        before_words = before.split()
        prev = before_words[-1].rstrip(".").lower() if before_words else ""
        if before and (before[-1] not in _INITIAL_BEFORE or prev in _EN_TITLES):  # Mr. Tolley: no sentence ends
            inner[word] += 1
        after = text[off + len(word) : off + len(word) + 14].lstrip(",’” ").split()
        nxt = after[0].lower().strip(".,;!?") if after else ""
        raw2 = before_words[-2] if len(before_words) >= 2 else ""
        prev2 = raw2.lower()
        if (
            prev in _EN_PLACE_BEFORE
            or prev == "to"
            and prev2 in _EN_MOVES
            or prev == "of"
            and (prev2 in _EN_PLACE_OF or raw2.endswith("s") and raw2[:1].isupper())
        ):
            place_ctx[word] += 1
        elif nxt in _EN_PLACE_AFTER and text[off + len(word) : off + len(word) + 1] == " ":
            place_ctx[word] += 1
        if prev in _EN_TITLES or prev in _EN_SPEECH_AFTER or nxt in _EN_SPEECH_AFTER:
            person_ctx[word] += 1
        if k + 1 < len(words) and words[k + 1][0] == off + len(word) + 1:
            follows[word][words[k + 1][1]] += 1
    keep = {
        w
        for w, n in total.items()
        if n >= EN_MIN_MENTIONS
        and (inner[w] >= 1 or follows[w])  # met inside a sentence, or before a surname (Martha Quayle opened)
        and w.lower() not in _EN_STOP
        and lower_counts[w.lower()] * 4 < n
    }
    canonical = {w: w for w in keep}
    for w in keep:  # Sherlock -> Holmes: a first name nearly always followed by one surname
        if follows[w]:
            nxt, n = follows[w].most_common(1)[0]
            if nxt in keep and nxt != w and n * 5 >= total[w] * 3:
                canonical[w] = nxt
    matches = list(_EN_PLACE_PHRASE.finditer(text))
    found = [(m.start(), m.group(), True) for m in matches]  # a word for a place ends it: Gull Point Light
    covered = [(m.start(), m.end()) for m in matches]
    starts = [off for off, _ in words]
    in_phrase = {
        starts[k] for a, b in covered for k in range(bisect.bisect_left(starts, a), bisect.bisect_left(starts, b))
    }
    found += [
        (off, canonical[w], place_ctx[canonical[w]] >= 2 and not person_ctx[canonical[w]])  # said Venn: a person
        for off, w in words
        if w in keep and off not in in_phrase
    ]
    return found
