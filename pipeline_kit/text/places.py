"""The place bible: the book's places, named (Baker Street, 花果山) or not (the quay, 码头), and the
place of each shot.

Named places are what the chapters' mentions call places (a word for a place ends them, or a
preposition of place comes before them, or jieba's dictionary tags them `ns` with a place
ending, or someone goes or stays there: 来到柳树村). Unnamed settings are a word for a place after a
preposition of place or a move (`on the quay`, `into the lamp room`, 走进厨房, 来到码头). A shot's place
is the last place its own text names (not one someone comes from: the baker from Lantern Street),
else its setting, else the place of the shot before in the same scene for at most `CARRY` shots: a
place found once does not stick to a whole scene. A setting someone is in, at or goes to is a place
once it is named once (in the boiler room, to the harbour). A move
with a one-character place word (上山, 进城, 关门) is what someone does, never a place.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from pipeline_kit.text.names import _EN_PLACE_PHRASE, _EN_STOP, Mentions

MIN_PLACE_MENTIONS = 2  # a place is named (or a setting used) this often in the book
CARRY = 2  # shots after the last one naming a place that still stand there
_EN_SETTING_NOUNS = (
    "room bedroom kitchen parlour parlor study library hall hallway corridor passage staircase stairs cellar attic "
    "garret office shop inn tavern pub church chapel station platform train carriage cab coach boat ship ferry deck "
    "quay pier wharf dock docks harbour harbor jetty beach shore cliff island lighthouse street road lane alley "
    "square market garden yard courtyard field meadow farm forest wood woods hill mountain valley river bridge lake "
    "village town castle palace tower prison cell court camp tent cave cottage cabin barn stable mill gallery "
    "drawing-room sitting-room dining-room lamp-room lantern shed kitchen-garden churchyard graveyard landing rock"
).split()
_EN_SETTING = re.compile(
    r"\b(?i:in|into|on|onto|at|to|towards?|inside|aboard|across|along|through|beside|near|under|outside|within|upon|"
    r"reached|entered|left|crossed|climbed|boarded|boarding|reaching|entering) "
    r"(?:the|a|an|his|her|their|our|my|its) ((?:[a-z]+[ -])?(?:"
    + "|".join(sorted(_EN_SETTING_NOUNS, key=len, reverse=True))
    + r"))\b"
)
_ZH_SETTING_NOUNS = (
    "书房 厨房 卧房 客厅 大厅 花园 后院 院子 庭院 门口 码头 渡口 渡船 船头 船舱 船上 甲板 岸边 河边 江边 海边 湖边 "
    "山上 山下 山顶 山洞 洞口 桥上 桥头 街上 街头 巷口 集市 市场 店里 铺子 酒店 客店 茶馆 庙里 寺里 殿上 殿前 宫中 "
    "城门 城外 城里 村口 村里 田里 林中 树林 树下 屋里 房里 房中 屋中 堂上 楼上 楼下 亭中 营中 帐中 车站 站台 灯塔 "
    "教室 学校 医院 公司 办公室 车上 车厢 路上 路口"
).split()
_ZH_SETTING = re.compile(
    r"(?:在|到|进|入|上|出|回|往|向|至|进了|到了|来到|走进|走到|回到|坐在|站在|立在|躺在|来至)("
    + "|".join(sorted(_ZH_SETTING_NOUNS, key=len, reverse=True))
    + ")"
)
# A named place nobody's dictionary knows, where someone goes, stays or comes from: 来到柳树村, 住在赵家庄,
# 走进李家祠堂, 从黑石岛来, 去对岸的柳家庄 (once is enough: the grammar says it is a place).
_ZH_NAMED_SETTING = re.compile(
    r"(?:来到|来至|到了|回到|住在|走进|走出|进了|出了|去了|离开|离了|前往|从|到|去|(?=在[^，。！？]{2,10}[里上中内]))"
    r"(?:了)?(?:[^，。！？“”]{1,4}的)?"
    r"((?![一二三四五六七八九十两这那几每各此某本我你他她于])(?:(?![上下里中内外边面处在了着过的是有和与])[\u4e00-\u9fff]){1,3}"
    r"(?:[庄村府镇寨城寺庙宫殿岛港洞]|祠堂|客栈|码头))"
)
# An English place named once after a preposition of place or a move: at Gannet Point, to Port
# Ellery, in Dunmore (a bare name, no article before it, must not be a person's; a place word or
# Port/Mount says it is a place).
_EN_AT_NAMED = re.compile(
    r"\b((?i:in|at|into|from|near|reached|entered|reaching|entering|to|towards?|left|leaving)) (the )?"
    rf"(?:({_EN_PLACE_PHRASE.pattern})|([A-Z][a-z]+(?: [A-Z][a-z]+)?))(?![\w’'-])"
)
_EN_MOVES_TO = frozenset("to toward towards left leaving".split())  # went to Holmes: a person, unless a place word says
_NOT_A_PLACE = re.compile(r"[了着过的得地之么]")
# A move and a one-character place word is a verb phrase, not a place's name: 上城, 上山, 进城, 出门.
_ZH_MOVE_PHRASE = re.compile(r"[上下进出回到去来入登过关开][山城门宫殿关河海江湖寺庙楼台院村府]")


@dataclass(frozen=True)
class Place:
    """One place of the book: its name, other names, what it looks like, and a person's marks."""

    name: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    mentions: int = 0
    locked: bool = False  # fixed by a person: a rebuild keeps it as it is
    dropped: bool = False  # a person said it is no place: its names are never a shot's place

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


def settings(text: str, lang: str) -> list[tuple[int, str]]:
    """(offset, setting) of each unnamed place a preposition or a move puts someone in."""
    if lang == "zh":
        return [(m.start(1), m.group(1)) for m in _ZH_SETTING.finditer(text)]
    found = [(m.start(1), m.group(1).lower()) for m in _EN_SETTING.finditer(text)]
    pairs = Counter(name for _, name in found if " " in name or "-" in name)
    return [(o, name if pairs[name] >= 2 or "-" in name else re.split(r"[ -]", name)[-1]) for o, name in found]


def find_places(
    texts: Sequence[str],
    lang: str,
    found: Sequence[Mentions],
    people: Iterable[str] = (),
    fixed: Iterable[Place] = (),
) -> tuple[Place, ...]:
    """The book's places: named ones and settings used at least MIN_PLACE_MENTIONS times, or once
    where the grammar says so (`_evidenced`), none a person's name; `fixed` (locked or dropped)
    entries are kept as they are."""
    fixed = list(fixed)
    people = set(people)
    taken = {n for p in fixed for n in p.names} | people
    counts: Counter[str] = Counter()
    for mentions in found:
        counts.update(n for n, is_place in zip(mentions.names, mentions.is_place) if is_place)
    used: set[str] = set()  # a setting is found where someone is in, at or goes to it: once is enough
    for text in texts:
        found_here = [name for _, name in settings(text, lang)]
        counts.update(found_here)
        used.update(found_here)
    joined = "\n".join(texts)
    evidenced = _evidenced(joined, lang, people) | used
    for name in evidenced - counts.keys():
        counts[name] = joined.count(name)
    if lang == "zh":  # 大山 of 周大山: the mentions inside a person's name are the person's
        names_of_people = "\n".join(people)
        for name in [n for n in counts if n in names_of_people]:
            holders = [p for p in people if len(p) > len(name) and name in p]
            if holders:
                counts[name] = joined.count(name) - sum(joined.count(p) for p in holders)
    places = [
        Place(name, mentions=n)
        for name, n in counts.items()
        if (n >= MIN_PLACE_MENTIONS or name in evidenced and n >= 1)
        and name not in taken
        and not _NOT_A_PLACE.search(name)
        and not (lang == "zh" and _ZH_MOVE_PHRASE.fullmatch(name))
        and not (lang == "zh" and any(name.endswith(p) for p in people))  # 去找石小庄: a person, not 找石小庄
    ]
    return tuple(sorted([*fixed, *places], key=lambda p: (-p.mentions, p.name)))


def _evidenced(text: str, lang: str, people: Collection[str]) -> set[str]:
    """Names the grammar puts someone in, at, into or from, once being enough (来到柳树村,
    从黑石岛来; to Port Ellery, at Gannet Point, in Dunmore), none a person's name or a part of one."""
    if lang == "zh":
        return {m.group(1) for m in _ZH_NAMED_SETTING.finditer(text)}
    parts = {w for p in people for w in p.split()}
    return {
        name
        for m in _EN_AT_NAMED.finditer(text)
        if (name := m.group(3) or ("" if m.group(2) or m.group(1).lower() in _EN_MOVES_TO else m.group(4)))
        and name not in people
        and not any(w in parts or w.lower() in _EN_STOP for w in name.split())
    }


def shot_places(
    spans: Sequence[tuple[int, int, int]],
    named: Sequence[tuple[int, str]],
    unnamed: Sequence[tuple[int, str]],
) -> list[str | None]:
    """The place of each shot (start, end, scene): the last place its text names, else its last
    setting, else the place of the shot before in the same scene, for at most CARRY shots."""
    out: list[str | None] = []
    held: str | None = None
    age = 0
    scene = None
    for start, end, shot_scene in spans:
        own = [n for o, n in named if start <= o < end] or [n for o, n in unnamed if start <= o < end]
        if shot_scene != scene:
            held, scene = None, shot_scene
        if own:
            held, age = own[-1], 0
        else:
            age += 1
            if age > CARRY:
                held = None
        out.append(held)
    return out
