"""The place bible: the book's places, named (Baker Street, 花果山) or not (the quay, 码头), and the
place of each shot.

Named places are what the chapters' mentions call places (a word for a place ends them, or a
preposition of place comes before them, or jieba's dictionary tags them `ns` with a place
ending, or someone goes or stays there: 来到柳树村, reached Kessler's Well). Unnamed settings are
a word for a place after a preposition of place or a move, perhaps with an owner (`by the well`,
`into the lamp room`, `to the trader's tent`), with the word before it when that word says which
room it is (the lamp room, the back room) rather than what it looks like (the old chapel is a
chapel), and the place such a one is part of (the kitchen of the farmhouse); in Chinese, the
object of a move or a stay that ends in a character making place words (走到盐场, 蹲在盐池边, 回到
家里, 在一家药铺门口), found by the grammar rather than a list, and a family's or a town's place
wherever it is said (王家的院子 is 王家院子). A setting
someone is in, at or goes to is a place once it is named once (in the boiler room, to the
harbour). A move with a one-character place word (上山, 进城, 关门) is what someone does, never a place.

A shot's place is where its people are (`shot_places`): the last place its narration puts a person
in (Mara sat on the quay, 阿Ｋ站在码头上, showed them into a cold office, In the carriage the lamps
were dim: a setting opening its sentence holds the people after it, 夜里趴在窗口: at home, unless
they stayed elsewhere for the night), out into the snow being the outdoor place around (the
weather is never a place), a vehicle holding its people until they get out, not one only seen,
spoken of, meant (想在镇上开诊所), left or said of a thing (eyes on the tower, the tower, which
stood on its rock); else the place the scene's people are
still in (however long they talk there); else a place the narration describes with nobody in it
(boats knocked at the quay). A word for a kind of place is the place of that kind the scene named
lately (山 of 花果山, the bridge of Cobham Bridge).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pipeline_kit.text.names import _EN_PLACE_PHRASE, _EN_STOP, _EN_TITLED, Mentions
from pipeline_kit.text.shots import TIMES

MIN_PLACE_MENTIONS = 2  # a place is named (or a setting used) this often in the book
HOLD = 12  # shots a place holds after the text last puts someone there, talk not counted
# A shot whose narration is no longer than a speech tag (said Holmes, rising; 行者笑道) is talk.
TAG_SIZE = {"en": 6, "zh": 8}  # words, characters
QUOTE_BLANKS = 4  # the shortest quotation blanked out, its marks included: “Hi”
# Words for a place someone can be in, at or on: rooms, buildings, works, ways, waters, land and
# what people travel or camp in (a wagon, a tent); furniture (bed, chair, table) and things are not settings.
# Rooms and parts of a house: a room said with its article opening a sentence after someone went
# somewhere is a room of that place (walked to the inn. The taproom was full: they are in it).
_EN_ROOMS = (
    "room bedroom kitchen parlour parlor study library hall hallway corridor passage staircase stairs cellar attic "
    "garret landing nursery pantry scullery bathroom ballroom drawing-room sitting-room dining-room lamp-room "
    "sickroom dressing-room schoolroom classroom lobby foyer vestibule porch veranda verandah balcony terrace roof "
    "rooftop loft hayloft doorway gateway gate threshold conservatory"
).split()
# Ways, and the towns they run through: a named place said before one of these is in it (the Plough
# in the village, the bakery on Mill Hill).
_EN_WAYS = (
    "street road lane alley avenue boulevard highway crossroads junction causeway embankment tunnel bridge "
    "trail track path footpath towpath ford pass village town"
).split()
# What people travel in: a vehicle that leaves a place takes its people with it (the train left the
# station: they are still in the carriage).
_EN_VEHICLES = (
    "train carriage compartment cab coach omnibus bus tram cart wagon waggon caravan gig chaise landau brougham "
    "phaeton hansom sleigh sledge van lorry truck car taxi boat ship ferry deck "
    "quarterdeck forecastle wheelhouse cockpit galley hold steamer yacht schooner barge raft canoe lifeboat dinghy "
    "rowboat skiff punt"
).split()
# Every other place: dwellings, buildings, public places, forts; then waters and land (outdoors).
_EN_BUILDINGS = (
    # dwellings and buildings
    "home house mansion manor lodge villa cottage cabin hut hovel shack tenement flat apartment bungalow farmhouse "
    "homestead vicarage rectory parsonage manse "
    "ranch croft farm barn stable stables byre cowshed pigsty kennel kennels henhouse dovecote "
    "granary silo shed outhouse greenhouse hothouse summerhouse boathouse bathhouse washhouse gatehouse guardhouse "
    "coach-house storeroom storehouse warehouse depot store shop bakery smithy forge workshop studio factory "
    "foundry works mill sawmill brewery distillery tannery laundry dairy creamery piggery mine quarry pit "
    "office counting-house boardroom bank "
    # public places
    "inn tavern pub alehouse saloon hotel motel hostel hostelry restaurant cafe café teahouse tearoom coffee-house "
    "canteen refectory "
    "church chapel cathedral abbey priory monastery convent cloister temple mosque synagogue shrine vestry crypt "
    "tomb vault mausoleum cemetery school schoolhouse playground college "
    "university academy laboratory hospital ward infirmary clinic surgery sanatorium asylum workhouse almshouse "
    "orphanage prison jail gaol dungeon cell court courthouse courtroom police-station post-office station platform "
    "museum gallery theatre theater stage circus arena stadium fairground market marketplace market-place bazaar "
    "stall booth kiosk pavilion bandstand park square "
    # forts, camps and ruins
    "castle palace tower fort fortress citadel barracks garrison camp campsite tent trench ruins ruin "
    "lighthouse"
).split()
_EN_WATERS_AND_LAND = (
    # waters and shores
    "well fountain pool pond stream brook creek canal weir dam waterfall falls river riverbank bank lake bay cove "
    "inlet estuary lagoon sea ocean coast shore beach sands dunes seafront promenade waterfront quay pier wharf "
    "dock docks harbour harbor marina jetty slipway quayside riverside waterside seashore foreshore cliff cliffs "
    "island rock "
    # land
    "field meadow pasture paddock orchard garden kitchen-garden yard lawn grounds estate sheepfold fold "
    "woodland farmland grassland moorland wasteland shrubbery allotment plantation spinney coppice grove "
    "thicket clearing glade copse wood woods forest jungle moor heath marsh "
    "swamp bog fen desert oasis plain prairie steppe hill hillside mountain mountainside valley ridge ravine gorge "
    "canyon gully gulch crag summit peak slope"
).split()
_EN_SETTING_NOUNS = _EN_ROOMS + _EN_WAYS + _EN_VEHICLES + _EN_BUILDINGS + _EN_WATERS_AND_LAND
# Out of doors: the ways, waters and land, a yard or a field of any kind, and the open places of a town.
_EN_OUTDOORS = frozenset(
    _EN_WAYS + _EN_WATERS_AND_LAND + "square park market marketplace market-place fairground playground".split()
)
# …and a word made with one of the words for a room, a house, a shop, a yard or a field (the workroom,
# the taproom, the pumphouse, the bookshop, the barnyard, the vineyard, the cornfield).
_EN_SETTING_NOUN = (
    r"(?:[a-z]+[ -])?(?:[a-z]+(?:room|house|shop|yard|field)|"
    + "|".join(sorted(_EN_SETTING_NOUNS, key=len, reverse=True))
    + r")"
)
# A preposition of place or a move, a determiner or an owner (the trader's, Mrs Dace's, the Reed
# farmhouse), perhaps a
# word saying which one, and a word for a place: in the lamp room, by the well, to the trader's tent
# (not one saying what kind a thing is: upon the deep-sea fishes, under the church bells).
_EN_INTO = (
    r"(?i:in|into|on|onto|at|to|towards?|inside|aboard|across|along|through|beside|by|behind|near|under|beneath|"
    r"below|over|around|round|outside|within|upon|down|up|reached|entered|left|crossed|climbed|boarded|boarding|"
    r"reaching|entering)"
)
_EN_SETTING = re.compile(
    rf"\b{_EN_INTO} "
    r"(?:the|a|an|his|her|their|our|my|its|this|that|(?:(?:the|his|her|their|our|my|its) )?"
    r"((?:(?:Mrs?|Dr|St)\.? )?[A-Za-z]+['’]s|(?<=the )[A-Z][a-z]+)) "
    r"(" + _EN_SETTING_NOUN + r")(?:(?<! yard)e?s)?(?![\w’'-])(?! (?!(?:was|has|his|this|is|as|us|its)\b)[a-z]+s\b)"
)
# The place a setting is part of: in the kitchen of the farmhouse (she is in the kitchen; the
# farmhouse is a place too).
_EN_SETTING_OF = re.compile(
    r" of (?:the|a|an|his|her|their|our|my|its|this|that) (" + _EN_SETTING_NOUN + r")(?![\w’'-])"
)
# Going out into the weather is going outdoors (no place is named after the weather): they hurried
# out into the snow, 跑到雨里, 走进风雪中; the outdoor place said next is where they are (The street
# was white), else the outdoor place they were in last (see `shot_places`).
_OUT_INTO = {
    "en": re.compile(
        r"out(?<!\wout) (?:into|in|onto) the (snow|sleet|hail|rain|drizzle|downpour|fog|mist|frost|cold|wind|gale|"
        r"storm|blizzard|sun|sunshine|sunlight|moonlight|dark|darkness|night)\b"
    ),
    "zh": re.compile(r"[跑走冲奔钻站立][到进入在](大?(?:风雪|雨雪|[雨雪风雾])(?:地|天)?[里中])"),
}
_EN_OUTDOOR_THE = re.compile(
    r"\b[Tt]he ((?:[a-z]+[ -])?(?:[a-z]+(?:yard|field)|"
    + "|".join(sorted(_EN_OUTDOORS, key=len, reverse=True))
    + r"))(?![\w’'-])"
)
# A building given by its street: the house in Mill Lane, the cottage on Quay Street (a room's
# address is its building's: the room at Baker Street names no place of its own).
_EN_STREET_ADDRESS = re.compile(
    r" ((?:in|on|at) (?:[A-Z][a-z]+ )+(?:"
    + "|".join(w.capitalize() for w in _EN_WAYS if w not in ("village", "town"))
    + r"|Row|Square|Terrace|Crescent|Place|Court|Gardens|Hill|Walk|Green|Close|Parade))(?![\w’'-])"
)
# A move someone makes to a place: walked down to, went into, walked up from the slipway to.
_EN_WENT_TO = (
    r"\b(?:walked|went|came|ran|hurried|rode|drove|strolled|wandered|stepped|returned|headed|crept|limped)"
    r"(?: (?:down|up|over|back|round|across|along|out|on|off|in))?(?: from the [a-z]+)? (?:to|into)"
)
_EN_WENT_TO_RE = re.compile(_EN_WENT_TO)
# …and the place it goes to, named with its article or by a name: the room opening the next sentence
# is its room (walked down to the Swan. The taproom was full: the Swan's taproom; rode over to Fenwick
# Hall. The kitchen was hot: Fenwick Hall's kitchen).
_EN_BUILDING_AFTER = re.compile(r" (?:the )?([A-Z][a-z]+(?: [A-Z][a-z]+)?)(?![\w’'-]|\s+[A-Z]|\s+of\b)")
# A building named with its article and no word for a place (the Plough, the George), where someone
# goes to it or stays in it: walked down to the Plough, drank at the George (not the King of
# Bohemia, nor the Times someone reads).
# Found from "the" and its name, the verb read back (a scan that starts at the verbs is slow).
_EN_THE_NAME = re.compile(r"the ([A-Z][a-z]+)(?![\w’'-]|\s+[A-Z]|\s+of\b)")
_EN_BUILDING_MOVE = re.compile(
    rf"(?:{_EN_WENT_TO}|\b(?:sat|stood|drank|dined|ate|slept|stayed|lodged|waited|met|lived)(?: [a-z]+)? (?:in|at)) $"
)
# A room said with its article as a sentence's subject: the taproom was full (see `_EN_ROOMS`;
# `_moved_to` says it opens one; the literal comes first, so the scan skips to each "The").
_EN_ROOM_OPENS = re.compile(
    r"The(?<!\wThe) (" + "|".join(sorted([r"[a-z]+room", *_EN_ROOMS], key=len, reverse=True)) + r")(?![\w’'-])"
)
_ZH_SETTING_NOUNS = (
    "书房 厨房 卧房 客厅 大厅 花园 后院 院子 庭院 门口 码头 渡口 渡船 船头 船舱 船上 甲板 岸边 河边 江边 海边 湖边 "
    "山上 山下 山顶 山洞 洞口 桥上 桥头 街上 街头 巷口 集市 市场 店里 铺子 酒店 客店 茶馆 庙里 寺里 殿上 殿前 宫中 "
    "城门 城外 城里 村口 村里 田里 林中 树林 树下 屋里 房里 房中 屋中 堂上 楼上 楼下 亭中 营中 帐中 车站 站台 灯塔 "
    "教室 学校 医院 公司 办公室 车上 车厢 路上 路口 镇上 镇里 城中 村中 院中 院里 洞中 洞里"
).split()
_ZH_SETTING = re.compile(
    r"(?<![不没])(?:在|到|进|入|上|出|回|往|向|至|进了|到了|来到|走进|走到|回到|坐在|站在|立在|躺在|来至)("
    + "|".join(sorted(_ZH_SETTING_NOUNS, key=len, reverse=True))
    + ")"
)
# Any other place someone is in or goes to, by the grammar: a move or a stay (走到, 来到, 回到, 走进,
# 坐在, 蹲在, 住在) or a bare locative (在, 到, 进, 去), perhaps a measure (一家, 那座), a noun of up to
# four characters ending in a character that makes words for places (盐场, 药铺, 祠堂, 马车; 家
# alone is home) and perhaps a localiser (盐池边 is the 盐池, 家里 is 家; 药铺门口 keeps its 门口).
# Body parts, furniture and things (心里, 手里, 身上, 炕上, 石头上) end in no such character, so they
# are no places; the noun holds no function word, pronoun, number, time or common verb (看路, 走路).
_ZH_PLACE_ENDS = (
    "场池家铺店房屋室院庄村镇城寺庙宫殿庵岛港洞山河江湖海溪潭泉井桥街巷路田园林坡岸滩"
    "楼台亭阁堂厅馆棚营帐岭峰崖寨府衙厂坊窑厩圃坟墓塔船车渡"
    "栈站驿肆局校舍寓宅邸苑廊库仓堡市区沟湾洲塘涧窟泽漠坪堤坝"
)
_ZH_LOCALISERS = "边上里中内外前后旁"
# A character of a place's noun: no localiser, function word, pronoun, number, time or common verb.
_ZH_NOUN_CHAR = (
    rf"(?![{_ZH_LOCALISERS}下头的了着过是有和与把被给对向往从于至自在到也都就又还不没很太便却只才正已曾再亦乃即则且若如似无"
    r"这那哪此本吾彼敝寒贵他她我你它谁一二三四五六七八九十两百千万几第半年月日夜晚早时午更刻钟点候今明昨"
    r"走来去看见听说道问找拿做请拜归转返进出回叫让要想会能可])[\u4e00-\u9fff]"
)
# 站 ends a place (车站, 驿站) unless it is the verb: 走进屋站了一会, 回到家站在门口.
_ZH_PLACE_NOUN = rf"(?:{_ZH_NOUN_CHAR}){{0,3}}(?:(?!站[在了着起住到上下])[{_ZH_PLACE_ENDS}])子?"
# At a new time of the evening or night, someone at a window or in bed with no place named is at
# home: 夜里，小梅趴在窗口往外看 (a new scene, wherever the day's last one was).
_ZH_HOME_THINGS = "窗口|窗前|窗边|窗下|窗台|床上|床边|床头|炕上|炕头|被窝里"
_ZH_AT_HOME = re.compile(rf"[趴坐躺靠倚站睡][在到]({_ZH_HOME_THINGS})")
_ZH_NIGHT_OPENS = re.compile("|".join(p for t, p in TIMES["zh"] if t in ("evening", "night")))
# Where a place is, said before it with 的: 河边的旅店, 城南的公寓, 镇上的王家茶馆 (not a place itself:
# 驿站的大通铺 is a part of the 驿站, a bed in it).
_ZH_WHERE_OF = rf"[^，。！？；：“”\s的]{{0,3}}[^，。！？；：“”\s的{_ZH_PLACE_ENDS}]的"
_ZH_FAMILY_WORDS = "大家|人家|自家|国家|专家|作家|行家|东家|冤家|亲家|老人家"  # 家 in words that name no family
_ZH_OPEN_SETTING = re.compile(
    r"([来走跑奔赶爬跳搬逃冲飞游回坐站蹲躺住睡跪立趴靠停藏躲][在到进入]|[走爬跳登坐站]上|(?<![现实好自所存不没])在|"
    r"(?<![看爱想马赶追跟迎遇碰])上了|"
    r"(?<![看想听说直得受遇感找做见提等不没])到|进|(?<![失过下上死出回离除])去)了?"
    rf"(?:[一这那][个家座间条块片所户处]|{_ZH_WHERE_OF})?"
    rf"((?!{_ZH_FAMILY_WORDS}){_ZH_PLACE_NOUN})(门口|[{_ZH_LOCALISERS}])?"
)
# A family's or a town's place, wherever it is said: 王家的院子, 走到赵家的米铺门口, 青石镇的药铺 (the
# Wangs' yard: 王家院子; at its door is at 赵家米铺); the owner opens a word (after a mark, a move
# or a locative), so 国王家 is no family 王家. Found from 的 and its place noun, the owner read back
# from there (a scan that starts at an owner's first character would try every character).
_ZH_OWNED_PLACE = re.compile(rf"的({_ZH_PLACE_NOUN})")
_ZH_PLACE_OWNER = re.compile(rf"(?!{_ZH_FAMILY_WORDS}){_ZH_NOUN_CHAR}家|(?:{_ZH_NOUN_CHAR}){{1,3}}[镇村庄寨]")
_ZH_OWNER_AFTER = "在到进入回往向去了是老从"  # where an owner starts, besides a clause's start
_ZH_BOUNDARY = "，。！？；：、”\n去来了"  # where a noun after a bare locative plainly ends: 到盐场去, 回到家。
# A named place nobody's dictionary knows, where someone goes, stays or comes from: 来到柳树村, 住在赵家庄,
# 走进李家祠堂, 从黑石岛来, 去对岸的柳家庄 (once is enough: the grammar says it is a place).
_ZH_NAMED_SETTING = re.compile(
    r"(?:来到|来至|到了|回到|住在|走进|走出|进了|出了|去了|离开|离了|前往|从|到|去|(?=在[^，。！？]{2,10}[里上中内]))"
    r"(?:了)?(?:[^，。！？“”]{1,4}的)?"
    r"((?![一二三四五六七八九十两这那几每各此某本我你他她于])(?:(?![上下里中内外边面处在了着过的是有和与])[\u4e00-\u9fff]){1,3}"
    r"(?:[庄村府镇寨城寺庙宫殿岛港洞渡]|祠堂|客栈|码头))"
)
# A town or village the sentence is about, as its subject or owner: 青石镇的药铺, 柳湾镇在大河的南岸.
_ZH_TOWN_SUBJECT = re.compile(
    r"(?:^|(?<=[，。！？；：\n]))((?![一二三四五六七八九十两这那几每各此某本我你他她于])"
    r"(?:(?![上下里中内外边面处在了着过的是有和与])[\u4e00-\u9fff]){1,3}[镇村庄寨府城县州岛港])(?=[的在是])",
    re.M,
)
# A place named by its owner: Kessler's Well, St. Mary's (a name's own word after it, or a saint's).
_EN_OWNED_NAME = r"((?:St\.? )[A-Z][a-z]+['’]s|[A-Z][a-z]+['’]s [A-Z][a-z]+)"
# An English place named once after a preposition of place or a move: at Gannet Point, to Port
# Ellery, in Dunmore, aboard the Kestrel (a bare name, no article before it, must not be a person's; a place word or
# Port/Mount says it is a place).
_EN_AT_NAMED = re.compile(
    r"\b((?i:in|at|into|from|near|reached|entered|reaching|entering|to|towards?|left|leaving|aboard)) (the )?"
    rf"(?:({_EN_PLACE_PHRASE.pattern})|{_EN_OWNED_NAME}|([A-Z][a-z]+(?: [A-Z][a-z]+)?))(?![\w’'-])"
)
_EN_TITLE_HEAD = re.compile(r"\b(?:[Tt]he|[Aa]n?) [A-Z][a-z]+ $")  # the Study in Scarlet: a title, no place
# Looked at Otto Brandt: a name someone looks or smiles at is a person's, not a place's.
_EN_LOOKED = re.compile(r"\b(?:look|stare|gaze|glance|smile|laugh|frown|shout|wink)(?:s|d|ed)?\s*$", re.I)
_EN_MOVES_TO = frozenset("to toward towards left leaving".split())  # went to Holmes: a person, unless a place word says
# …unless what goes there is a journey or the weather: the frost came early to Wexley, we travelled to Leeds.
_EN_ARRIVES = re.compile(
    r"\b(?:came|comes|come|returned|travelled|traveled|sailed|rode|drove|moved)"
    r"(?: (?:early|late|back|down|up|over|again|north|south|east|west|home))? $",
    re.I,
)
# Words that say what a place looks like, not which it is: the old chapel is a chapel.
_EN_DESCRIBING = frozenset(
    "old new ancient young great little small big large huge tiny vast long short high low tall deep narrow wide "
    "broad distant far dark bright light pale black white grey gray red blue green brown yellow golden cold warm hot "
    "wet dry quiet silent empty dirty same whole very other open poor rich fine good bad strange own first last right "
    "wrong gentle".split()
)
_EN_DESCRIBING_ENDING = re.compile(r"(?:[^r]y|ed|ful|ous|less)$")  # dusty, crowded, lonely (not laundry)
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


@lru_cache(maxsize=128)  # a book's chapters, as long as it has no more
def settings(text: str, lang: str) -> list[tuple[int, str]]:
    """(offset, setting) of each unnamed place a preposition or a move puts someone in, and of the
    place that one is part of (in the kitchen of the farmhouse), a building with its street (the
    house in Mill Lane), the outdoor place said after someone goes out into the weather (out into
    the snow. The lane was white) and a room opening the sentence after a move (walked down to the
    Plough. The taproom was full: the Plough's taproom); a room keeps the word that says which it is
    (lamp room), not one that says what it looks like. Read once a chapter (the bible and the
    split's shots ask alike; the answer is shared: never changed in place)."""
    if lang == "zh":
        return _zh_settings(text)
    found: list[tuple[int, str | None, str]] = []
    for m in _EN_SETTING.finditer(text):
        street = _EN_STREET_ADDRESS.match(text, m.end()) if not m.group(1) and m.group(2) in _EN_BUILDINGS else None
        noun = m.group(2).lower() + (" " + street.group(1) if street else "")  # the house in Mill Lane
        found.append((m.start(1 if m.group(1) else 2), m.group(1), noun))
        if whole := _EN_SETTING_OF.match(text, m.end()):
            found.append((whole.start(1), None, whole.group(1).lower()))
    for m in _OUT_INTO["en"].finditer(text):
        nearby = _EN_OUTDOOR_THE.search(text, m.end(), _sentence(text, "en", _sentence(text, "en", m.end())[1])[1])
        if nearby:
            found.append((m.start(1), None, nearby.group(1)))  # out into the snow. The street was white
    for m in _EN_ROOM_OPENS.finditer(text):
        if (move := _moved_to(text, m.start())) is not None:
            building = _EN_BUILDING_AFTER.match(text, move.end())
            found.append((m.start(1), building.group(1) + "'s" if building else None, m.group(1)))
    pairs = Counter(name for _, _, name in found if " " in name or "-" in name)
    out = []
    for offset, owner, name in found:
        name = name if pairs[name] >= 2 or _which_one(name) else re.split(r"[ -]", name)[-1]
        out.append((offset, f"{owner if owner[0].isupper() else owner.lower()} {name}" if owner else name))
    return sorted(out)


def _moved_to(text: str, offset: int) -> re.Match[str] | None:
    """The move of the sentence before one starting at `offset` that moves someone to a place
    (walked down to the Plough, went into the house), if a sentence starts there."""
    before = text[max(0, offset - 3) : offset].rstrip(" ")
    opens = not before or before[-1] in '.!?"”\n'
    return _EN_WENT_TO_RE.search(text, _sentence(text, "en", max(0, offset - 2))[0], offset) if opens else None


def _zh_settings(text: str) -> list[tuple[int, str]]:
    """Chinese settings: a family's place (王家的院子 is 王家院子), a word from the list (码头, 船上)
    where one follows a move or a stay, else the open rule's noun (`_ZH_OPEN_SETTING`); a
    one-character noun needs a localiser (走到山上; 进城, 上山 are what someone does), except home
    (回到家。); a raised thing (台) is a place only when someone is on it (站在戏台上, 登上高台),
    not beside it (站在柜台后面, 在灶台前: furniture in the room); after a bare locative (在, 到)
    the noun must end plainly, at a localiser or a clause's end (在盐场干活 might be 盐场干); at a
    window or in bed at a new time of the evening or night, with no place named, is home (家)."""
    found = [(start, m.end(1), text[start : m.start()] + m.group(1)) for m, start in _owned(text)]
    found += [(m.start(1), m.end(1), m.group(1)) for m in _ZH_SETTING.finditer(text)]
    taken = {k for start, end, _ in found for k in range(start, end)}
    for m in _ZH_OPEN_SETTING.finditer(text):
        verb, noun, localiser = m.group(1), m.group(2), m.group(3)
        ends_plainly = bool(localiser) or text[m.end(2) : m.end(2) + 1] in _ZH_BOUNDARY
        if m.start(2) in taken or len(noun) == 1 and not localiser and noun != "家":
            continue
        if noun.endswith("台") and localiser != "上" and verb[0] not in "上登":
            continue  # 站在柜台后面, 在灶台前: beside a counter or a stove, in the room it stands in
        if not ends_plainly and (len(verb) == 1 or len(noun) == 1):
            continue
        found.append((m.start(2), m.end(2), noun + (localiser if localiser == "门口" else "")))
    found += [(m.start(1), m.end(1), "家") for m in _ZH_AT_HOME.finditer(text) if _at_night_at_home(text, m.start())]
    return [(start, name) for start, _, name in sorted(found)]


def _at_night_at_home(text: str, offset: int) -> bool:
    """Does the sentence of the window or bed at `offset` open with a time of the evening or night
    (夜里，小梅趴在窗口) and name no place before it (夜里，他躺在酒店的床上: the tavern's bed)?"""
    start = _sentence(text, "zh", offset)[0]
    while start < offset and text[start].isspace():
        start += 1
    before = text[start:offset]
    return (
        len(before) <= 16
        and bool(_ZH_NIGHT_OPENS.match(before))
        and not (_ZH_SETTING.search(before) or _ZH_OPEN_SETTING.search(before) or _ZH_OWNED_PLACE.search(before))
    )


def _owned(text: str) -> list[tuple[re.Match[str], int]]:
    """(的 and its place noun, where its owner starts) of each family's or town's place in `text`:
    the longest owner that starts a clause or follows 在, 到, 去… (王家的院子, 去孙家的铺子)."""
    out = []
    for m in _ZH_OWNED_PLACE.finditer(text):
        for start in range(max(0, m.start() - 4), m.start() - 1):
            before = text[start - 1 : start]
            if (not before or not "\u4e00" <= before <= "\u9fff" or before in _ZH_OWNER_AFTER) and (
                _ZH_PLACE_OWNER.fullmatch(text, start, m.start())
            ):
                out.append((m, start))
                break
    return out


def _which_one(setting: str) -> bool:
    """Does the word before the place word name a kind (lamp room, drawing-room, back room) rather
    than describe it (old chapel, dusty room, crowded inn)? A one-word setting: yes."""
    if "-" in setting or " " not in setting:
        return True
    modifier = setting.split()[0]
    return modifier not in _EN_DESCRIBING and not _EN_DESCRIBING_ENDING.search(modifier)


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
    return tuple(sorted([*fixed, *_folded(places, texts, lang)], key=lambda p: (-p.mentions, p.name)))


# Words saying where a part of a building lies: the back room is not the room, 后院 is no 院子.
_EN_POSITIONS = frozenset(
    "back front inner outer upper lower top middle side next far near east west north south".split()
)
_ZH_POSITIONS = _ZH_LOCALISERS + "东西南北正偏侧"


def _folded(places: list[Place], texts: Sequence[str], lang: str) -> list[Place]:
    """One place under each of its names: the same owner's place under two words for its kind
    (孙家茶馆, 孙家馆子: one owner's one teahouse), and a bare word for a kind of place (the
    bakery, 馆子) where the book has exactly one place of that kind named by which one it is (the
    corner bakery, 孙家茶馆) and every chapter saying the word named that place before (a definite word
    refers back), are aliases of it; a place named by its position (the back room, 后院), a book
    with several of that kind (sitting-room, bedroom for `room`), or a chapter saying the word
    before or without the place keeps the word apart."""
    by_name = {p.name: p for p in places}
    into: dict[str, str] = {}
    if lang == "zh":
        owned: dict[tuple[str, str], list[str]] = {}
        for name in by_name:
            if (m := _ZH_PLACE_OWNER.match(name)) and (rest := name[m.end() :].removesuffix("子")):
                owned.setdefault((m.group(), rest[-1]), []).append(name)
        for names in owned.values():
            main = max(names, key=lambda n: (len(n.removesuffix("子")), by_name[n].mentions, n))
            into.update({n: main for n in names if n != main})
    said_again = {re.split(r"[ -]", n)[-1] for n in by_name if lang == "en" and _which_kind(n)} - by_name.keys()
    for word in [*by_name, *sorted(said_again)]:  # the bakery of the corner bakery, after in or at or not
        kinds = [p for p in by_name if p != word and p not in into and _of_kind(p, word, lang)]
        if len(kinds) == 1 and not _by_position(kinds[0], word, lang):
            main = into.get(kinds[0], kinds[0])
            if _refers_back(word, [n for n in by_name if into.get(n, n) == main], texts, lang):
                into.setdefault(word, main)
    out = []
    for p in places:
        if p.name in into:
            continue
        joined = [by_name[n] for n, main in into.items() if main == p.name and n in by_name]
        names = sorted({n for n, main in into.items() if main == p.name} | {n for q in joined for n in q.names})
        out.append(Place(p.name, tuple(names), mentions=p.mentions + sum(q.mentions for q in joined)))
    return out


def _refers_back(word: str, names: list[str], texts: Sequence[str], lang: str) -> bool:
    """Does each text that says `word` name the place (one of `names`) first?"""
    said = re.compile(re.escape(word) if lang == "zh" else rf"\b{re.escape(word)}\b")
    for text in texts:
        if (m := said.search(text)) is not None:
            if not any(text.find(n, 0, m.start() + len(n)) >= 0 for n in names):  # a name begun by then
                return False
    return True


def _of_kind(name: str, word: str, lang: str) -> bool:
    """Is `name` a place of the kind the bare `word` says (the corner bakery is a bakery, the
    sitting-room and the bedroom are rooms, 茶馆 and 馆子 are 馆), `word` being a bare kind?"""
    if name == word:
        return False
    if lang == "zh":
        kind = word.removesuffix("子")  # home (家) is whoever's home is spoken of (see `_kind_of`)
        named = name.removesuffix("子")
        return kind != "家" and len(kind) == 1 and kind in _ZH_PLACE_ENDS and len(named) > 1 and named.endswith(kind)
    kind = re.split(r" (?:in|on|at) (?=[A-Z])", name)[0]  # the house in Mill Lane is a house
    return word.isalpha() and word.islower() and kind.lower().endswith(word)


def _by_position(name: str, word: str, lang: str) -> bool:
    """Is `name` the `word` kind of place named by where it lies (the back room, 后院)?"""
    if lang == "zh":
        return name.removesuffix("子")[-2:-1] in _ZH_POSITIONS
    return name.lower().split()[0] in _EN_POSITIONS


def _evidenced(text: str, lang: str, people: Collection[str]) -> set[str]:
    """Names the grammar puts someone in, at, into or from, or a town a sentence is about, once
    being enough (来到柳树村, 从黑石岛来, 青石镇的药铺; to Port Ellery, at Gannet Point, in Dunmore,
    came early to Wexley), a building named with its article someone goes to or stays in (walked
    down to the Plough), none a person's name or a part of one, nor the end of a title (the
    Study in Scarlet), nor a bare name someone looks at (looked at Otto Brandt), nor one ending in
    a surname the text gives someone (Miss Alder: a letter from Jonah Alder)."""
    if lang == "zh":
        return {m.group(1) for r in (_ZH_NAMED_SETTING, _ZH_TOWN_SUBJECT) for m in r.finditer(text)}
    parts = {w for p in people for w in p.split()}
    surnames = {m.group(2) for m in _EN_TITLED.finditer(text)}  # Miss Alder: a bare Jonah Alder is her kin, no place
    owned = {m.group(4) for m in _EN_AT_NAMED.finditer(text) if m.group(4)}  # the owner says it: Kessler's Well
    buildings = {  # walked down to the Plough
        m.group(1)
        for m in _EN_THE_NAME.finditer(text)
        if _EN_BUILDING_MOVE.search(text, max(0, m.start() - 48), m.start())
    }
    return (
        owned
        | {b for b in buildings if b not in people and b not in parts and b.lower() not in _EN_STOP}
        | {
            name
            for m in _EN_AT_NAMED.finditer(text)
            if (name := m.group(3) or ("" if _titled(m) or not _bare_name_there(text, m) else m.group(5)))
            and name not in people
            and not any(w in parts or w.lower() in _EN_STOP for w in name.split())
            and not _EN_TITLE_HEAD.search(text, max(0, m.start() - 24), m.start())
            and not (m.group(5) and _EN_LOOKED.search(text, max(0, m.start() - 12), m.start()))
            and not (m.group(5) and name.split()[-1] in surnames)
        }
    )


def _titled(m: re.Match[str]) -> bool:
    """Is the name after the preposition of `m` a title (in the Study in Scarlet), a name with its
    article? Aboard one it is a vessel's (aboard the Kestrel)."""
    return bool(m.group(2)) and m.group(1).lower() != "aboard"


def _bare_name_there(text: str, m: re.Match[str]) -> bool:
    """Does the preposition of `m` put someone at a bare name: in, at, from Dunmore; to or towards
    it only after a journey's verb (came early to Wexley; wrote to Venn is a person's), the whole
    name (came to Stoke, a line's end, Moran: no place Stoke)?"""
    if m.group(1).lower() not in _EN_MOVES_TO:
        return True
    whole = not re.match(r"\s+[A-Z]", text[m.end() : m.end() + 3])
    return whole and bool(_EN_ARRIVES.search(text, max(0, m.start() - 30), m.start()))


def shot_places(
    narration: str,
    lang: str,
    spans: Sequence[tuple[int, int, int]],
    found: Iterable[tuple[int, str]],
    people: Collection[int],
) -> list[str | None]:
    """The place of each shot (start, end, scene) of a chapter whose quotations are blanked out
    (`narration`), from the places `found` in it and the offsets of its `people`'s names: the last
    place the shot puts a person in; else the place its scene's people are still in, held until
    they leave with no place named, the scene ends, or HOLD shots pass with no word of it; else the
    last place it describes with nobody in it (which a later description replaces, as nobody was
    put in it). Out into the weather is the outdoor place held or named last, else nowhere; getting
    out of a vehicle (got down, 下了车) is being where the journey was bound (drove to Kelby), else
    nowhere, or, with no vehicle held, where the shot last saw one stop (a coach rolled into the
    square); in bed at night with no place named (`_BED`) is where someone stayed for the night
    (住进客栈, 留在当铺里) or the lodging held, else home. A word for a kind of place is the place
    of that kind the scene named last, within HOLD shots and not left since (at the ford of
    Harlan's Ford, 山中 of 花果山, 洞 after 水帘洞)."""
    marks = _marks(narration, lang, found, people)
    out: list[str | None] = []
    held: str | None = None
    scene = None
    age = 0
    someone_put = False  # the place held is one the text put a person in, not one only described
    recent: dict[str, int] = {}  # the scene's places named lately -> the shot that last named them
    bound: str | None = None  # where the scene's journey heads (drove to Kelby): a vehicle's people get out there
    night: str | None = None  # the last place someone was put in for the night (住进客栈, 留在当铺里), any scene
    for k, (start, end, shot_scene) in enumerate(spans):
        if shot_scene != scene:
            held, scene, recent, bound = None, shot_scene, {}, None
        stay = someone_put and _only_talk(narration[start:end], lang)  # talk moves nobody put there
        here, age = (held, age + (not stay)) if held is not None and age < HOLD else (None, 0)
        stays = True
        seen: str | None = None  # the place the shot last described with nobody put in it
        for offset, kind, name in (m for m in marks if start <= m[0] < end):
            if kind == _BOUND:
                bound = _named(name, here, recent, k, lang)
                continue
            if kind == _ALIGHT:
                if here is not None and _vehicle(here, lang):  # got down, 下了车: at the journey's end, if named
                    here, age, someone_put, stays = bound, 0, bound is not None, bound is not None
                elif seen is not None:  # a carriage stopped in the yard. A man got out: in the yard
                    here, age, someone_put, stays = seen, 0, True, True
                continue
            if kind == _OUTDOORS:  # out into the snow: outdoors where they are, or were last
                name = here if here is not None and _outdoor(here, lang) else _last_outdoor(recent, k, lang)
                if name is None:
                    here, stays = None, False
                    continue
                kind = _PUT
            if kind == _BED:  # in bed at night: where they stayed for the night, or sleep, else home
                if night is None and here is not None and (here.rstrip(_ZH_LOCALISERS) or here)[-1] in _ZH_SLEEP_ENDS:
                    continue
                name, kind = night or name, _PUT
            if (
                kind == _DESCRIBED
                and here is not None
                and _vehicle(here, lang)
                and _carried(narration, lang, offset, here)
            ):
                kind = _PUT  # the cart stopped at the inn, 马车在酒店门前停下: its people are there
            if kind == _GONE:
                stays = False
                gone = _named(name, here, recent, k, lang) if name else None
                recent = {n: s for n, s in recent.items() if gone and n != gone}
                if narration[_sentence(narration, lang, offset)[1] : end].strip():
                    here = None  # the shot goes on after they left: they are no longer there
                continue
            name = _named(name, here, recent, k, lang)
            recent[name] = k
            seen = name if kind == _DESCRIBED else None
            if kind == _PUT and _TOWARD[lang].search(narration, max(0, offset - 16), offset):
                bound = name  # drove to Kelby
            if kind == _PUT and lang == "zh":
                night = name if _ZH_STAYS.search(narration, _sentence_start_near(narration, offset), offset) else None
            if kind == _PUT or here == name or here is None or not someone_put:  # a place described gives way
                someone_put = kind == _PUT or here == name and someone_put
                here, age, stays = name, 0, True
        out.append(here)
        held = here if stays else None
    return out


def _outdoor(name: str, lang: str) -> bool:
    """Is the place out of doors: a way, a water, open land (the street, the orchard, Mill Lane,
    the barnyard, 街上, 码头, 果园), where the weather is?"""
    if lang == "zh":
        kind = name.rstrip(_ZH_LOCALISERS).removesuffix("子") or name
        yard = kind == "院"  # 院里, 院子: the yard (医院, 书院 are buildings)
        return (
            yard or name.endswith(_ZH_OUTDOOR_WORDS) or kind.endswith(_ZH_OUTDOOR_WORDS) or kind[-1] in _ZH_OUTDOOR_ENDS
        )
    word = re.split(r"[ -]", name)[-1].lower()
    return word in _EN_OUTDOORS or word.endswith(("yard", "field"))


def _vehicle(name: str, lang: str) -> bool:
    """Is the place something people travel in (the dog-cart, the gig, 马车, 船上)?"""
    if lang == "zh":
        return (name.rstrip(_ZH_LOCALISERS).removesuffix("子") or name)[-1] in "船车轿" or name.endswith(
            ("船舱", "车厢")
        )
    return re.split(r"[ -]", name)[-1].lower() in _EN_VEHICLES


def _sentence_start_near(text: str, offset: int, reach: int = 12) -> int:
    """Where the Chinese sentence around `offset` starts, looking back `reach` characters at most
    (a stay says its place soon after it: 住进了河边的旅店)."""
    lo = max(0, offset - reach)
    return max(lo, *(text.rfind(c, lo, offset) + 1 for c in _SENTENCE_ENDS["zh"][:3]))


def _carried(text: str, lang: str, offset: int, vehicle: str) -> bool:
    """Is the vehicle held the subject of the clause that names the place at `offset` (the cart
    stopped at the inn, 马车在酒店门前停下), so that its people are there?"""
    word = vehicle.rstrip(_ZH_LOCALISERS) if lang == "zh" else re.split(r"[ -]", vehicle)[-1]
    clause = text[_clause(text, lang, offset)[0] : offset]
    return (word in clause) if lang == "zh" else bool(re.search(rf"\b{re.escape(word)}\b", clause, re.I))


def _last_outdoor(recent: dict[str, int], shot: int, lang: str) -> str | None:
    """The outdoor place the scene named last within HOLD shots, if any."""
    outdoors = [(s, n) for n, s in recent.items() if shot - s <= HOLD and _outdoor(n, lang)]
    return max(outdoors)[1] if outdoors else None


def _only_talk(narration: str, lang: str) -> bool:
    """Is a shot talk, which moves nobody: a quotation (blanked out in `narration`, so a run of
    blanks no word spacing makes) with no more narration than a speech tag (said Holmes; 行者笑道)?"""
    words = narration.split()
    size = len(words) if lang == "en" else len("".join(words))
    blanks = narration.count(" ") - (len(words) - 1 if lang == "en" else 0)
    return size <= TAG_SIZE[lang] and blanks >= QUOTE_BLANKS


def _named(name: str, here: str | None, recent: dict[str, int], shot: int, lang: str) -> str:
    """The place a word for a kind of place means: the place held when it is of that kind, else the
    one of that kind named last within HOLD shots (`recent`), else the word itself."""
    if here is not None and _kind_of(here, name, lang):
        return here
    of_kind = [(s, n) for n, s in recent.items() if shot - s <= HOLD and _kind_of(n, name, lang)]
    return max(of_kind)[1] if of_kind else name


def _kind_of(held: str, setting: str, lang: str) -> bool:
    """Is `setting` the word for the kind of place `held` is, so the same place: at the ford of
    Harlan's Ford, 山中 or 山上 of 花果山, 洞里 of 水帘洞, the mountain of Mount Tabor? Home (家,
    回到家) is whoever's home is spoken of, never the last family's house named (王家)."""
    if lang == "zh":
        kind = setting.rstrip(_ZH_LOCALISERS) or setting
        return kind != "家" and len(kind) < len(held) and held.endswith(kind)
    lead = held.split()[0]
    return held.lower().endswith(" " + setting.lower()) or setting.lower() in _EN_LEAD_KINDS.get(lead, ())


# The kind of place a name's first word says: Mount Tabor is a mountain, Port Ellery a harbour.
_EN_LEAD_KINDS = {
    "Mount": ("mountain", "mount", "hill"),
    "Port": ("port", "harbour", "harbor", "town"),
    "Fort": ("fort", "fortress"),
    "Lake": ("lake",),
    "Isle": ("island", "isle"),
    "Cape": ("cape", "headland"),
}


_PUT, _DESCRIBED, _GONE = "put", "described", "gone"
_BED = "bed"  # in bed or at a window at night, no place named: home, unless they stay where they are
_OUTDOORS = "outdoors"  # out into the weather, no place named: the outdoor place they are in or were in last
_BOUND = "bound"  # where a thing or a journey heads (the trap rattled on to Leatherhead): no one is there yet
_ALIGHT = "alight"  # getting out of a vehicle, or its arrival: its people are at the place it was bound for
# Getting out of a vehicle or arriving in it: they got down, the cab drew up, 下了车, 上了岸.
_ALIGHTS = {
    "en": re.compile(
        r"\b(?:got|climbed|jumped|stepped|clambered|scrambled) (?:down|out|off)\b|\b(?:alighted|arrived)\b|"
        r"\b(?:drew|pulled) up\b"
    ),
    "zh": re.compile(r"下了?[车船轿马]|[上靠]了?岸"),
}
# A night's stay: 住进客栈, 留在当铺里, 在驿站过夜 — the place holds someone in bed that night.
_ZH_STAYS = re.compile(r"住[在进下了]|留[在下]|歇|宿|过夜")
# Places people sleep in: lodgings, dwellings, temples, camps, boats (a bed there is no home).
_ZH_SLEEP_ENDS = "店栈驿舍寓宅邸房屋室府庄寺庙庵营帐船"
# Where one does not sleep: the ways, waters and open land (a vehicle or a shop will do for a night).
_ZH_OUTDOOR_ENDS = "街巷路桥田园林坡岸滩山河江湖海溪潭泉井场岭峰崖沟湾塘涧泽漠坪渡堤坝"
_ZH_OUTDOOR_WORDS = ("门口", "村口", "路口", "码头", "渡口", "船头", "甲板", "庭院", "后院", "前院", "天井")
_EN_PERSON = re.compile(  # …or a number of them: the three of them (not in front of us)
    r"\b(?:[Hh]e|[Ss]he|[Tt]hey|[Ww]e|I|(?:all|both|each|some|two|three|four|five|six|several|most) of (?:them|us))\b"
)
# Someone a verb moves, its object or a passive's subject: showed them into a cold office, led her
# up to the attic, the passengers were shown into a low parlour.
_EN_MOVED = re.compile(
    r"\b(?:him|her|them|us|me|(?:was|were|been) (?:shown|led|taken|ushered|brought|driven|helped))\s+"
    r"(?:(?:back|up|down|out|in|over|across|along|round|away)\s+)?"
    r"(?:into|to|onto|inside|through|across)\s+(?:(?:the|a|an|his|her|their|our|my|its)\s+)?(?:[\w’'-]+\s+)?$",
    re.I,
)
# A setting that opens its sentence is where the narration that follows stands: In the carriage the
# lamps were dim (and the people of the next sentence are in it).
_EN_FRONTED = re.compile(r"\s*(?:In|Inside|Within|On|Aboard|On board)\s+(?:the|a|an|his|her|their|our|my|its)\s+")
_EN_OF = re.compile(r"\bof\s+(?:the\s+)?$", re.I)
# The shop, our sitting-room with no preposition or move before it: the place is spoken of (she
# unlocked the shop, the room was dark), nobody is put in it.
_EN_ARTICLE = r"(?i:the|our|my|his|her|their|this|that)\s+$"
_EN_ONLY_THE, _EN_INTO_THE = re.compile(rf"\b{_EN_ARTICLE}"), re.compile(rf"\b{_EN_INTO}\s+{_EN_ARTICLE}")
# A clause with a subject of its own that is a thing: …, and the trap rattled on to Leatherhead.
_EN_OWN_SUBJECT = re.compile(
    r"\s*(?:(?:and|but|while|as|when|so|then)\s+)?(?:the|a|an|its|this|that|these|those)\s", re.I
)
# A place after another in its clause, joined by one of these, says where the first is.
_EN_LANDMARK = re.compile(
    r"\b(?:behind|beside|near|by|next to|opposite|beyond|below|above|beneath|under|past|outside|in front of)\s+"
    r"(?:the|a|an|his|her|their|its|this|that)\s+$",
    re.I,
)
# A place and its address: the corner bakery on Mill Hill, Mrs Dace's cottage in Wexley (they are in
# the shop; the street says where it stands). A bare word (the room at Baker Street) names no place
# of its own: the address does.
_EN_ADDRESS = re.compile(r"[\w’'-]+(?: [\w’'-]+){0,2} (?:on|in|at|off) (?:the )?")
_OF_A_THING = re.compile(r"\s*which\b")  # the tower, which stood on its rock: where the tower is
_ZH_COUNTS = "一二三四五六七八九十两半满"  # 一路, 两家, 满山: a count or all of it
_ZH_HANDLES = re.compile("[把将]")  # 把网撒了出去: what is handled moves
_ZH_PERSON = re.compile(r"[他她我你]|[一两三几众]个?人|大家")
_SENTENCE_ENDS = {"en": (".", "!", "?", "\n\n"), "zh": ("。", "！", "？", "\n\n")}  # lines may wrap
# A clause ends at a mark, not at a title's full stop (Mrs. Reed gave them bread).
_CLAUSE_END = {
    "en": re.compile(r"(?<!\bMr)(?<!\bMrs)(?<!\bDr)[.!?;:,—]|\n\n"),
    "zh": re.compile(r"[，。！？；：、]|\n\n"),
}
# Seen, heard, spoken of or only meant: Mara kept her eyes on the tower, looking out toward Gannet
# Point, 望见花果山, 想在镇上开一家诊所;
# in English the verb must govern the place's phrase: no other verb joined by and, but or then, nor
# a move, stands between them (as he spoke the door opened and a lady entered the room: she is in it).
_EN_NEW_VERB = re.compile(
    r"\b(?:and|but|then|entered|went|came|walked|ran|stepped|sat|stood|climbed|reached|returned|found)\b", re.I
)
_SEEN = {
    "en": re.compile(
        r"\b(?:s[ae]w|sees?|seen|seeing|look(?:s|ed|ing)?|watch(?:es|ed|ing)?|star(?:es|ed|ing)|gaz(?:es|ed|ing)|"
        r"glanc(?:es|ed|ing)|eyes|point(?:s|ed|ing)|hears?|heard|hearing|thought|thinks?|dream(?:s|ed|t)?|"
        r"remember(?:s|ed)?|spoke|speaks?|talk(?:s|ed)?|wrote|writes?|told|listen(?:s|ed|ing)?)\b",
        re.I,
    ),
    "zh": re.compile(r"看见|看到|看着|望见|望着|瞧见|远远|想起|想着|梦见|说起|提起|听说|听见|想在|想去|打算|准备在"),
}
# Where someone comes out of or down from is where they no longer are: left the room, out of the inn,
# 走出客栈, 径下灵山, 从茶馆出来.
_LEFT_FROM = {
    "en": re.compile(r"\b(?:left|leaving|out of|from)\s+(?:(?:the|a|an|his|her|their|our|my|its)\s+)?$", re.I),
    "zh": re.compile(r"(?:出|下|离开|离了)了?$|从$"),
}
# A vehicle leaving a place: the train had left the station, the coach pulled out of the yard.
_EN_VEHICLE_LEFT = re.compile(
    r"\b(?:the|our|their|his|her|a) (?:" + "|".join(_EN_VEHICLES) + r")\s+(?:had\s+|has\s+)?"
    r"(?:left|pulled out of|drew out of|steamed out of|sailed from|cleared)\s+(?:the|a|an)\s+$",
    re.I,
)
# Where a thing goes is no place anything is yet: the trap rattled back on its way to Leatherhead.
_TOWARD = {"en": re.compile(r"\b(?:to|towards?|for)\s+(?:the\s+)?$", re.I), "zh": re.compile(r"[往向]$")}
# Leaving with no place named: ran off, went out, left. 走了。出去了。
_GONE_AWAY = {
    "en": re.compile(
        r"\b(?:went|ran|hurried|walked|rushed|rode|drove|slipped|stormed|stole|marched|strode|rowed)\s+"
        r"(?:out|off|away)\b|\b(?:left|departed|vanished|disappeared)(?=\s*[.,;!?])",
        re.I,
    ),
    "zh": re.compile(r"(?:走|去|出去|回去|跑|逃|离开|走开)了?(?=[。！？；])|走出|出了?门"),
}
# A Chinese move or stay with its place, perhaps a measure or where it is (站在码头上, 来到清水镇, 去了菜园,
# 走进一家饭馆, 住进了河边的旅店): someone does these, subject or not; a bare 在/到/上 puts a person
# there when the clause names one (老陈正在船上).
_ZH_PUTS = re.compile(
    r"(?:(?:[来走回坐站立躺蹲跪住跑奔跳爬睡藏进到入趴靠倚])[在到进入上至]了?|(?:进|到|上|去)了)"
    rf"(?:[一这那][个家座间条块片所户处]|{_ZH_WHERE_OF})?$"
)
_ZH_AT = re.compile(rf"[在到进入上回至往于](?:{_ZH_WHERE_OF})?$")


def _marks(
    text: str, lang: str, found: Iterable[tuple[int, str]], people: Collection[int]
) -> list[tuple[int, str, str]]:
    """(offset, kind, place) in `text` order: a place someone is put in (_PUT), one described with
    nobody in it (_DESCRIBED, not one a thing only heads for), a leaving (_GONE); places only seen,
    spoken of (by a verb governing the place: looked at the tower, not as he spoke, she entered
    the room) or said of a thing (the tower, which stood on its rock), saying where the place
    before them in the clause is (the cemetery behind the chapel, the bakery on Mill Hill), naming
    a thing (a library-chair), said with their article alone (she swept the shop) before the
    text put anyone there, or a one-character word counted (一路, 两家: all the way, both
    sides), are left out; a thing sent off (把网撒了出去) is no one leaving."""
    marks: list[tuple[int, str, str]] = []
    previous, previous_name = -1, ""
    for offset, name in sorted(dict(found).items()):
        lo, hi = _clause(text, lang, offset)
        before = text[lo:offset] if lang == "zh" else _EN_NEW_VERB.split(text[lo:offset])[-1]
        landmark = (
            lang == "en"
            and lo <= previous
            and bool(
                (m := _EN_LANDMARK.search(text, max(lo, offset - 24), offset))
                and not text[previous + len(previous_name) : m.start()].strip(" ,\n")  # the wagon halted by the well
                or (_which_kind(previous_name) or previous_name[:1].isupper() and name in _EN_WAYS)
                and _EN_ADDRESS.fullmatch(text, previous, offset)
            )
        )
        inside = offset < previous + len(previous_name) and text.startswith(previous_name, previous)
        if inside:
            continue  # the house in Mill Lane: the street is part of the house's name
        previous, previous_name = offset, name
        if landmark:
            continue  # the cemetery behind the chapel: the chapel says where the cemetery is
        if text.startswith(name + "-", offset):
            continue  # in my library-chair: a thing named after a place
        if lang == "zh" and len(name) == 1 and text[offset - 1 : offset] in _ZH_COUNTS:
            continue  # 一路丢开, 这一场, 两家: all the way, a bout, both sides, no place
        if (
            lang == "en"
            and _EN_ROOM_OPENS.match(text, offset - 4)
            and _moved_to(text, offset - 4) is not None
            and _room_of_last(text, offset, marks)
        ):
            marks.append((offset, _PUT, name))  # walked down to the Plough. The taproom was full: in it
            continue
        if lang == "en" and _only_the(text, offset) and name not in {m[2] for m in marks}:
            continue  # the roof was caved in: a place said with its article alone refers back, or is none
        if lang == "en" and _EN_VEHICLE_LEFT.search(text, max(0, offset - 40), offset):
            continue  # the train had left the station: its people are still aboard
        if _LEFT_FROM[lang].search(text, max(0, offset - 24), offset):
            marks.append((offset, _GONE, name))
        elif not _SEEN[lang].search(before) and not _OF_A_THING.match(text, lo):
            if _puts_someone(text, lang, offset, lo, hi, people):
                in_bed = lang == "zh" and not text.startswith(name[:1], offset)  # home read from a bed
                marks.append((offset, _BED if in_bed else _PUT, name))
            elif _TOWARD[lang].search(text, max(0, offset - 16), offset):
                marks.append((offset, _BOUND, name))
            else:
                marks.append((offset, _DESCRIBED, name))
    named = {o for o, _ in found}
    for m in _OUT_INTO[lang].finditer(text):
        if m.start(1) not in named and _puts_someone(text, lang, m.start(1), *_clause(text, lang, m.start(1)), people):
            marks.append((m.start(1), _OUTDOORS, ""))  # out into the snow, nowhere named
    marks += [(m.start(), _ALIGHT, "") for m in _ALIGHTS[lang].finditer(text)]
    put_clauses = {_clause(text, lang, o) for o, kind, _ in marks if kind in (_PUT, _OUTDOORS)}
    for m in _GONE_AWAY[lang].finditer(text):
        clause = _clause(text, lang, m.start())
        if lang == "zh" and _ZH_HANDLES.search(text, clause[0], m.start()):
            continue  # 把网撒了出去: what 把 takes goes out, not the person
        if clause not in put_clauses:  # 到后院去了: gone to a place named
            marks.append((m.start(), _GONE, ""))
    return sorted(marks)


def _room_of_last(text: str, offset: int, marks: list[tuple[int, str, str]]) -> bool:
    """Is the room opening the sentence at `offset` a room of the place the sentence before put
    someone in (walked down to the Plough in the village. The taproom was full)?"""
    start = _sentence(text, "en", max(0, offset - 6))[0]
    return bool(marks) and marks[-1][1] == _PUT and marks[-1][0] >= start


def _puts_someone(text: str, lang: str, offset: int, lo: int, hi: int, people: Collection[int]) -> bool:
    """Is someone in the place named at `offset` in the clause (lo, hi): a person named or he/she/they
    (他/她) in its sentence up to the clause's end (She took the key, and ran to the harbour), or in
    its clause alone when that has a subject of its own (…, and the trap rattled on to Leatherhead),
    or in the next clause when the place opens the sentence (In the lamp room, they found…); in
    Chinese a move or stay says so with no subject (走进庄子). A place a name is `of` (Bradstreet, of
    Scotland Yard; the top of the tower) is where someone belongs, or a part of it, and one only
    named with its article (she swept the shop): no."""
    if lang == "zh":
        if _ZH_PUTS.search(text, max(0, offset - 8), offset):
            return True
        if not _ZH_AT.search(text, max(0, offset - 6), offset):
            return False
    elif _EN_OF.search(text, max(0, offset - 12), offset) or _only_the(text, offset):
        return False
    start = _sentence(text, lang, offset)[0]
    if lang == "en" and _EN_MOVED.search(text, max(lo, offset - 40), offset):
        return True  # showed them into a cold office
    if lang == "en" and _EN_FRONTED.fullmatch(text, start, offset):
        hi = _sentence(text, lang, _sentence(text, lang, offset)[1])[
            1
        ]  # In the carriage the lamps were dim. Davey slept.
    elif text[hi : hi + 1] in ",，" and not text[start:lo].strip():
        hi = _clause(text, lang, hi + 1)[1]
    elif lang == "en" and _EN_OWN_SUBJECT.match(text, lo):
        start = lo
    person = _EN_PERSON if lang == "en" else _ZH_PERSON
    return any(start <= p < hi for p in people) or bool(person.search(text, start, hi))


def _which_kind(name: str) -> bool:
    """Is `name` a kind of place said with which one it is (corner bakery, keeper's cottage), not a
    bare kind (room) nor a name (Bloomsbury, Alpha Inn)?"""
    words = re.split(r"[ -]", name)
    return len(words) > 1 and words[-1].islower()


def _only_the(text: str, offset: int) -> bool:
    """Is the English place at `offset` named with its article alone, no preposition or move?"""
    lo = max(0, offset - 30)
    return bool(_EN_ONLY_THE.search(text, lo, offset)) and not _EN_INTO_THE.search(text, lo, offset)


def _sentence(text: str, lang: str, offset: int) -> tuple[int, int]:
    """(start, end) of the sentence around `offset`, its closing mark included."""
    ends = _SENTENCE_ENDS[lang]
    start = max([0, *(k + len(c) for c in ends if (k := text.rfind(c, 0, offset)) >= 0)])
    end = min([len(text), *(k + len(c) for c in ends if (k := text.find(c, offset)) >= 0)])
    return start, end


def _clause(text: str, lang: str, offset: int) -> tuple[int, int]:
    """(start, end) of the clause around `offset`: between punctuation marks."""
    ends = _CLAUSE_END[lang]
    lo = offset
    while lo > 0 and not ends.match(text, lo - 1):
        lo -= 1
    m = ends.search(text, offset)
    return lo, m.start() if m else len(text)
