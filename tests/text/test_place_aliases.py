"""One place under all its names, on short made-up texts: a kind of place named with its street
is the kind (the street is its address), said again with its article it is the same place; one
owner's place under two words for its kind is one place; furniture is no place; a verb of seeing
governs only its own phrase; a thing sent off is no one leaving."""

from __future__ import annotations

import pytest

from pipeline_kit.text.cast import build_bible, cast_drafts
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.text.places import _marks, settings
from pipeline_kit.text.shots import split_chapter
from tests.conftest import CORPUS
from tests.text.test_shot_places import places_of

# Shots with no place when each corpus book is split whole, as measured (Holmes 916 and 西游记
# 1,126 before the rules above; 西游记's own rise is 场 of 这一场, 家 of 两家 no longer places;
# measured again with the moves of test_place_moves.py: 864 and 1,133, the books' unplaced shots
# being mostly told inside quotations, which no move reaches; with the place words of
# test_place_weather.py (plurals, -yard and -field words, 涧, 驿, 站, 廊…): 855 and 1,116; and with
# 从茶馆出来 leaving the teahouse: 855 and 1,120; people getting out where a vehicle stopped: 855 and
# 1,111).
UNPLACED = {"en": ("en_adventures_of_sherlock_holmes.txt", 855), "zh": ("zh_xiyouji.txt", 1111)}

_BAKERY = [
    "Ines Varga worked in the corner bakery on Mill Hill. Every night she lit the ovens.",
    "At dawn Ines carried the trays out. Ines counted the loaves twice.",
    "Later, when the bakery was quiet, Ines sat down with her ledger.",
]


def test_a_kind_of_place_with_its_street_is_the_place_and_the_street_its_address() -> None:
    """In the corner bakery on Mill Hill: the bakery is where Ines is, Mill Hill says where it
    stands; "the bakery" in a later scene is the same place (an alias), not a new one."""
    assert places_of(_BAKERY, "en", scenes=[1, 1, 2]) == ["corner bakery"] * 3
    bible = build_bible(["\n\n".join(_BAKERY)], "en")
    assert bible.place_names.get("bakery") == "corner bakery"


def test_a_bare_kind_is_an_alias_only_of_the_one_place_of_its_kind_named_before_it() -> None:
    """ "the stall" is no alias where the book has two stalls (the fish stall, the flower stall),
    where the one stall is named by its position (the back stall), or where a chapter says "the
    stall" before it names the place; the back room is not "the room"."""
    two = "Lev sat in the fish stall. Lev went to the flower stall. Lev slept in the stall. Lev sat in the stall."
    placed = "Lev sat in the back stall. Lev slept in the stall. Lev sat in the stall."
    first = "Lev slept in the stall. Lev sat in the fish stall. Lev ate in the stall."
    for text in (two, placed, first):
        names = build_bible([text], "en").place_names
        assert names.get("stall") == "stall", (text, names)


def test_a_place_said_with_its_article_alone_refers_back_or_is_none() -> None:
    """ "The roof of the barn had fallen in" puts nobody on a roof: a place said with its article
    alone sets a shot only once the text has put someone there; "as the bell rang the door opened
    and Ada entered the hall": the verb of hearing governs the bell, not the hall."""
    places = places_of(
        [
            "Ada climbed onto the roof to mend it.",
            "The roof of the barn had fallen in. Ada counted the sheep.",
            "As the bell rang the door opened and Ada entered the hall.",
            "Ada stood on the porch and gazed over the orchard.",
        ],
        "en",
        scenes=[1, 2, 3, 4],
    )
    assert places == ["roof", "roof", "hall", "porch"]
    assert places_of(["The roof of the barn had fallen in. Ada counted the sheep."], "en") == [None]


def test_aboard_a_vessel_named_with_its_article_is_a_place() -> None:
    """Aboard the Kestrel: a vessel's name takes its article, and aboard says it is a place."""
    assert "Kestrel" in build_bible(["Jonas lived aboard the Kestrel, a grey sloop. Jonas slept."], "en").place_names


def test_zh_one_owners_place_under_two_words_for_its_kind_is_one_place() -> None:
    """孙家茶馆 and 孙家馆子 are one owner's one teahouse (馆), and a bare 馆子 after it is that place;
    钱家茶馆 is another owner's, and with two teahouses a bare 馆子 is neither."""
    story = [
        "天刚亮，周福来到孙家茶馆，坐在靠窗的桌边。",
        "周福喝了一碗茶。",
        "中午，周福又走进孙家馆子。",
        "傍晚，周福还坐在馆子里。",
    ]
    assert places_of(story, "zh", scenes=[1, 1, 2, 3]) == ["孙家茶馆"] * 4
    names = build_bible(["\n".join(story)], "zh").place_names
    assert names["孙家馆子"] == names["馆子"] == "孙家茶馆"
    two = build_bible(["\n".join([*story, "第二天，周福走进钱家茶馆。周福坐在馆子里。"])], "zh").place_names
    assert two["钱家茶馆"] == "钱家茶馆" and two.get("馆子") == "馆子"


def test_zh_furniture_is_no_place_a_raised_floor_someone_is_on_is() -> None:
    """锅台前, 写字台旁: beside furniture, in the room it stands in; 走到戏台上, 站在站台上: on a
    stage, on a platform."""
    found = {name for _, name in settings("阿梅站在锅台前烧火。老周走到写字台旁坐下。", "zh")}
    assert not {"锅台", "写字台"} & found
    found = {name for _, name in settings("戏子们走到戏台上。小李站在站台上等车。", "zh")}
    assert {"戏台", "站台"} <= found


def test_zh_a_thing_sent_off_is_no_one_leaving_and_a_counted_word_no_place() -> None:
    """把石子扔了出去: the stone goes, 阿牛 stays on the bridge; 一路: all the way, no road."""
    assert places_of(["阿牛站在桥上，把石子扔了出去。", "阿牛笑了笑，坐了下来，拍了拍手上的灰。"], "zh") == ["桥上"] * 2
    assert _marks("他一路丢开。", "zh", [(2, "路")], []) == []


@pytest.mark.parametrize("lang", sorted(UNPLACED))
def test_corpus_shots_with_no_place_stay_at_the_measured_count(lang: str) -> None:
    """The count of the corpus books' shots set nowhere stays within 5% of the measured count
    (more: places lost; far fewer: a place sticking to shots it does not reach)."""
    name, measured = UNPLACED[lang]
    texts = [c.text for c in find_chapters((CORPUS / name).read_text(encoding="utf-8"), lang).chapters]
    bible = build_bible(texts, lang)
    unplaced = sum(d.location is None for t in texts for d in cast_drafts(t, split_chapter(t, lang), bible))
    assert measured * 0.95 <= unplaced <= measured * 1.05, unplaced
