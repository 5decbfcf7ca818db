"""Places of weather, vehicles, beds and addresses, on short made-up texts: the weather is never a
place (out in it is the outdoor place around); a vehicle holds its people until they get out; a
bed at night is home only where nothing says they stay elsewhere; a building said by its street
and a room of a named building are places; outdoor work places and Chinese lodgings are places."""

from __future__ import annotations

import pytest

from pipeline_kit.text.cast import build_bible
from tests.text.test_shot_places import places_of

# More of the same book: the bible learns its people from it.
_WHO = (
    "Greta Moll, Jory Penn, Ulla Krantz and Bram Oakes worked together. Greta dug, Jory mended, Ulla "
    "baked and Bram drove. Greta, Jory, Ulla and Bram were cousins."
)


@pytest.mark.parametrize(
    ("shots", "lang", "book", "want"),
    [
        (  # the way said next is where they are
            ["Jory sat in the barn. Jory whistled.", "At last Jory stepped out into the fog. The towpath was empty."],
            "en",
            _WHO,
            ["barn", "towpath"],
        ),
        (  # nothing said next: the outdoor place they were in before keeps them
            ["Greta dug in the paddock. Greta sang.", "Then Greta went into the shed.", "She ran out into the sleet."],
            "en",
            _WHO,
            ["paddock", "shed", "paddock"],
        ),
        (
            ["阿福蹲在菜园里拔草。阿福累了。", "阿福走进柴房。", "阿福又跑到大雨里，喊了一声。"],
            "zh",
            "",
            ["菜园", "柴房", "菜园"],
        ),
        (
            ["阿贵站在院子里。阿贵咳嗽。", "阿贵走进风雪中，喊了一声。"],
            "zh",
            "",
            ["院子", "院子"],
        ),  # a yard is outdoors
    ],
)
def test_out_in_the_weather_is_the_outdoor_place_around_never_the_weather(
    shots: list[str], lang: str, book: str, want: list[str | None]
) -> None:
    """Going out into fog, sleet or rain puts people outdoors: at the outdoor place said next (The
    towpath was empty) or the one they were in last; no place is named after the weather."""
    assert places_of(shots, lang, book=book) == want
    assert not {"fog", "sleet", "雨", "大雨"} & set(build_bible(["\n\n".join(shots), book], lang).place_names)


def test_a_vehicle_holds_its_people_until_they_get_out() -> None:
    """Climbed into the wagon, talk in it, then "they got down": they are where the journey was
    bound for (rattled off towards Harwick), not in the wagon for the rest of the scene."""
    shots = [
        "Bram and Ulla climbed into the wagon outside the mill.",
        "The pony rattled off towards Harwick. Ulla hummed.",
        "Ulla said nothing more for a mile.",
        "When they arrived, they got down and Bram paid the boy.",
        "Bram counted his coins.",
    ]
    book = _WHO + " Harwick was a market town. Ulla lived near Harwick."
    assert places_of(shots, "en", book=book) == ["wagon", "wagon", "wagon", "Harwick", "Harwick"]
    zh = ["老吴和阿秀坐上驴车，往镇上去。", "驴车摇摇晃晃，阿秀睡着了。", "阿秀下了车，揉了揉眼睛。"]
    assert places_of(zh, "zh")[:2] == ["驴车", "驴车"] and places_of(zh, "zh")[2] != "驴车"


def test_a_vehicle_that_stops_at_a_place_brings_its_people_there() -> None:
    """ "the wagon halted by the well": the wagon is the clause's subject, so the people held in it
    are at the well; a well only described while they sit in a wagon that is not its subject (the
    road ran past a well) leaves them in the wagon."""
    halted = ["Greta and Jory sat in the wagon. Jory dozed.", "At dusk the wagon halted by the well."]
    assert places_of(halted, "en", book=_WHO) == ["wagon", "well"]
    passed = ["Greta and Jory sat in the wagon. Jory dozed.", "At dusk the road ran down beside a well."]
    assert places_of(passed, "en", book=_WHO) == ["wagon", "wagon"]
    zh = ["阿秀和老吴坐在牛车上，慢慢往前走。", "天黑时，牛车在祠堂门口停了下来。"]
    assert places_of(zh, "zh") == ["牛车", "祠堂门口"]


def test_people_getting_out_of_a_vehicle_are_where_it_stopped() -> None:
    """ "A coach rolled into the square. Two soldiers climbed down": nobody was held in the coach,
    but whoever gets out of it is in the square, not in the kitchen the shot before held."""
    shots = ["Nell sat in the kitchen. Nell sighed.", "A coach rolled into the square. Two soldiers climbed down."]
    assert places_of(shots, "en", book=_WHO) == ["kitchen", "square"]
    zh = ["阿兰坐在屋里。阿兰叹气。", "一辆马车停在村口，一个老人下了车。"]
    assert places_of(zh, "zh") == ["屋里", "村口"]


def test_a_bed_at_night_is_home_only_where_nothing_says_they_stay_elsewhere() -> None:
    """Someone left for the night in a workroom (留在作坊里) who lies down at night is still there,
    and so is one who took lodgings (住进了驿站); one who spent the day at a market is home."""
    stayed = ["师傅走了，阿牛一个人留在作坊里。", "夜里，阿牛躺在床上，听着外面的狗叫。"]
    assert places_of(stayed, "zh", scenes=[1, 2]) == ["作坊", "作坊"]
    lodged = ["天黑了，两人住进了驿站。", "夜里，阿牛躺在床上睡不着。"]
    assert places_of(lodged, "zh", scenes=[1, 2]) == ["驿站", "驿站"]
    market = ["阿牛在集市上卖柴。阿牛笑了。", "夜里，阿牛躺在床上数钱。"]
    assert places_of(market, "zh", scenes=[1, 2]) == ["集市", "家"]


def test_a_building_given_by_its_street_and_a_room_of_a_named_building_are_places() -> None:
    """ "the cottage on Ferry Road" is a place of its own (the street is part of its name), and
    "the cottage" said after it is the same place; "walked over to the Anchor. The snugroom was
    warm" is the Anchor's snugroom, and a place named without an article keeps its rooms the same
    way (Fenwick Hall's kitchen)."""
    cottage = ["Ulla lodged in the cottage on Ferry Road. Ulla baked there.", "Ulla slept early."]
    assert places_of(cottage, "en", book=_WHO) == ["cottage on Ferry Road"] * 2
    again = [*cottage, "Next day Ulla swept the cottage and sat in the cottage."]
    assert places_of(again, "en", scenes=[1, 1, 2], book=_WHO) == ["cottage on Ferry Road"] * 3
    assert build_bible(["\n\n".join(again), _WHO], "en").place_names["cottage"] == "cottage on Ferry Road"
    snug = ["Bram walked over to the Anchor after dark. The snugroom was warm. Bram drank.", "Bram sang."]
    assert places_of(snug, "en", book=_WHO) == ["Anchor's snugroom"] * 2
    hall = ["Jory rode over to Fenwick Hall after lunch. The kitchen was hot. Jory ate.", "Jory slept."]
    assert places_of(hall, "en", book=_WHO + " Fenwick Hall was old.") == ["Fenwick Hall's kitchen"] * 2


@pytest.mark.parametrize(
    ("text", "lang", "place"),
    [
        ("Greta worked all day in the hopfield. Greta was tired.", "en", "hopfield"),
        ("Jory mended the gate of the barnyard and then sat in the barnyard.", "en", "barnyard"),
        ("Ulla walked slowly through the vineyards. Ulla sang.", "en", "vineyard"),
        ("Bram wandered across the pastures with his dog. Bram whistled.", "en", "pasture"),
        ("Bram slept in the hostel. Bram snored.", "en", "hostel"),
        ("傍晚，老马走进一家客栈。老马坐下了。", "zh", "客栈"),
        ("老马来到火车站，买了一张票。", "zh", "火车站"),
        ("老马住进了城南的公寓。老马很累。", "zh", "公寓"),
        ("老马走到池塘边，看了看鱼。", "zh", "池塘"),
    ],
)
def test_outdoor_work_places_lodgings_and_stations_are_places(text: str, lang: str, place: str) -> None:
    """Fields, yards of any kind, vineyards and pastures (said in the plural too), hostels; 客栈,
    车站, 公寓, 池塘: words for places ending in a character that makes words for places."""
    assert place in build_bible([text, _WHO], lang).place_names
    assert places_of([text], lang, book=_WHO if lang == "en" else "") == [place]


def test_zh_standing_is_no_station() -> None:
    """站 ends a place (火车站) but not where it is the verb after one: 走进屋站了一会儿 names no 屋站."""
    names = build_bible(["老马走进屋站了一会儿，又走到车站去了。"], "zh").place_names
    assert "车站" in names and not any(n.endswith("站") and n != "车站" for n in names)
