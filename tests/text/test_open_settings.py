"""Settings found by the grammar on short made-up texts nobody tuned for, in English and Chinese:
a word for a place after a preposition or a move, with an owner (the trader's tent, Kessler's
Well); in Chinese the object of a locative or a move ending in a character that makes place words
(走到盐场, 盐池边, 家里, 药铺门口); never a body part, furniture or a thing held; and the time of day
as narration says it (天刚亮, 晚上, at first light, by lamplight), the last one a shot names."""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible, cast_drafts
from pipeline_kit.text.places import settings
from pipeline_kit.text.prompts import Templates
from pipeline_kit.text.shots import ShotDraft, _time_of_day
from pipeline_kit.text.splitter import build_shots

from tests.text.test_shot_places import places_of


def names(text: str, lang: str) -> list[str]:
    return [name for _, name in settings(text, lang)]


def test_en_common_place_words_are_settings_and_furniture_is_not() -> None:
    """A well, a camp, a wagon, a ravine, a warehouse are places someone is at or in; a bed, a
    chair or a table someone sits or lies on is not, nor `well` as an adverb."""
    text = (
        "By the well she found a goatherd. They crossed the ravine and walked through the camp. "
        "Otto lay awake in the wagon, then went down to the warehouse. "
        "He sat on the bed, then at the table, then in the chair. It was well known, and as well."
    )
    assert names(text, "en") == ["well", "ravine", "camp", "wagon", "warehouse"]


def test_en_an_owner_before_the_place_word_names_the_place() -> None:
    """`the trader's tent` and `Mrs Pell's kitchen` are settings with their owner; an owner's
    thing that is no place (the trader's hand) is not."""
    text = "Rosa went to the trader's tent. Later she sat in Mrs Pell's kitchen, the trader's hand on her arm."
    assert names(text, "en") == ["trader's tent", "Mrs Pell's kitchen"]


def test_en_a_place_named_with_an_owner_is_a_place_once() -> None:
    """Kessler's Well and St. Bride's are places where people arrive, named once; a person's
    possession (Otto's tent) is a setting, not a named place, and a name someone looks or smiles
    at (Otto Brandt) is no place."""
    bible = build_bible(
        [
            "Otto Brandt and Rosa Lind rode all day. The wagons reached Kessler's Well at noon. "
            "Otto Brandt rang at St. Bride's. Rosa Lind went to Otto's tent and said nothing. "
            "Rosa Lind looked at Otto Brandt. Otto Brandt smiled at Rosa Lind."
        ],
        "en",
    )
    assert {"Kessler's Well", "St. Bride's"} <= set(bible.place_names)
    assert not {"Otto's", "Otto", "Otto Brandt", "Rosa Lind"} & set(bible.place_names)


def test_en_shots_at_an_unlisted_place_have_that_place() -> None:
    """A shot that puts its people at a well, in a wagon or at an owned tent stands there."""
    places = places_of(
        [
            "At the well, an old woman was drawing water. Otto Brandt asked her the way.",
            "Otto Brandt walked through the camp to the trader's tent.",
            "That night Otto Brandt lay awake in the wagon.",
        ],
        "en",
        scenes=[1, 2, 3],
    )
    assert places == ["well", "trader's tent", "wagon"]


def test_zh_the_object_of_a_locative_or_a_move_is_the_setting() -> None:
    """走到盐场, 蹲在盐池边 (the 盐池), 回到家里 (家), 在一家药铺门口 (the shop's door keeps
    门口), 站在棚子下面: settings no list names."""
    text = (
        "天刚亮，阿梅从村里走到盐场。她蹲在盐池边。中午她回到家里。后来她在一家药铺门口站着。雨来了，她站在棚子下面。"
    )
    assert names(text, "zh") == ["盐场", "盐池", "家", "药铺门口", "棚子"]


def test_zh_body_parts_furniture_things_and_times_are_no_settings() -> None:
    """手里, 心里, 身上, 炕上, 石头上, 灯下, 门槛上 are no places; 在大家面前, 到第二天, 在晚上
    are no places; 进城 and 上山 are what someone does (a one-character noun needs a localiser); 不在家,
    不在店里, 没到盐场 say where nobody is."""
    text = (
        "阿梅手里拿着药，心里盘算着，身上很冷。娘躺在炕上。她坐在石头上，又在灯下坐在门槛上。"
        "在大家面前，到第二天，在晚上。他进城了，又上山。舅舅不在家，也不在店里，阿梅没到盐场。"
    )
    assert names(text, "zh") == []


def test_zh_shots_at_an_unlisted_place_have_that_place() -> None:
    """Each shot stands where its narration puts its people, though no list names the place."""
    places = places_of(
        ["阿梅从村里走到盐场，蹲在盐池边。", "阿梅回到家里，给娘熬粥。", "阿梅在一家药铺门口看见了舅舅。"],
        "zh",
        scenes=[1, 2, 3],
    )
    assert places == ["盐池", "家", "药铺门口"]


def test_times_of_day_as_narration_says_them() -> None:
    """Dawn, morning, noon, evening and night in the words stories use; evening is from sunset
    until bedtime (晚上, after dark, by lamplight), night the dark hours (半夜, midnight); a word
    that is no time (天宫, well) gives none."""
    said = {
        "天刚亮，她出门了。": "dawn",
        "天蒙蒙亮的时候，他来了。": "dawn",
        "第二天一早，她上路了。": "morning",
        "大清早就有人敲门。": "morning",
        "晌午，雨停了。": "noon",
        "午后下起了雨。": "afternoon",
        "天快黑了，她才回来。": "evening",
        "晚上，她在灯下煎药。": "evening",
        "半夜里下起了雨。": "night",
        "他飞上天宫。": None,
        "At first light the camp was moving.": "dawn",
        "They reached the oasis an hour before sunset.": "evening",
        "After dark the drovers played cards.": "evening",
        "She ate by lamplight.": "evening",
        "She woke at midnight.": "night",
        "He drew water from the well.": None,
    }
    found = {text: _time_of_day(text, "en" if text.isascii() else "zh") for text in said}
    assert found == said


def test_a_time_said_as_a_deadline_is_not_the_shot_s() -> None:
    """ "Be back before sunset", 说天黑前回来: talk of a deadline tells no time of day (the narration's
    "an hour before sunset" does, above), and neither does "until morning" said."""
    assert _time_of_day("“她说天黑前回来。”", "zh", talk=True) is None
    assert _time_of_day("“天黑了，快进屋。”", "zh", talk=True) == "evening"
    assert _time_of_day('"Be home before sunset," she said.', "en", talk=True) is None
    assert _time_of_day('"We wait until morning," he said.', "en", talk=True) is None
    assert _time_of_day('"It is past midnight," he said.', "en", talk=True) == "night"


def test_the_time_of_day_is_the_last_one_the_shot_names() -> None:
    """A shot that runs from afternoon into evening ends in the evening (下午…傍晚; morning…noon)."""
    assert _time_of_day("下午，她坐在桥头歇脚。傍晚，她才赶回村口。", "zh") == "evening"
    assert _time_of_day("She left in the morning and reached the ford at noon.", "en") == "noon"


def test_a_word_for_the_kind_of_place_the_people_are_in_is_that_place() -> None:
    """At the ford, after reaching Harlan's Ford, is still Harlan's Ford (镇上 of 石桥镇 is 石桥镇);
    a word for another kind of place (the river, 河边) is a new place."""
    en = places_of(
        [
            "Nell Averill reached Harlan's Ford at noon.",
            "At the ford, Nell Averill spoke to the ferryman.",
            "Nell Averill walked down to the river.",
        ],
        "en",
    )
    zh = places_of(["阿梅来到石桥镇。", "阿梅在镇上买了药。", "阿梅走到河边，洗了洗手。"], "zh")
    assert (en, zh) == (["Harlan's Ford", "Harlan's Ford", "river"], ["石桥镇", "石桥镇", "河边"])


def test_a_place_that_says_where_another_is_is_not_where_the_people_are() -> None:
    """She walked to the cemetery behind the chapel: she is in the cemetery, the chapel only says
    where it is; a place in a clause of its own (then she went into the chapel) still moves her."""
    places = places_of(
        [
            "Nell Averill walked down to the cemetery behind the chapel.",
            "Nell Averill stood there a long time, then she went into the chapel.",
        ],
        "en",
    )
    assert places == ["cemetery", "chapel"]


def test_a_bare_one_character_place_word_sets_the_scene_but_gets_no_sheet() -> None:
    """坡 or 家 says what kind of place a shot is in, not which one (a journey passes many
    mountains): the shot's Setting line says it, but no location sheet is drawn for it, so no
    frame takes one mountain for all; a named place (花果山) gets its sheet."""
    text = (
        "悟空走到坡上，坐下歇息。悟空又走到坡上。\n\n"
        "悟空回到花果山，众猴都来了。悟空在花果山住下。\n\n"
        "悟空回到家里。悟空在家中睡了。"
    )
    bible = build_bible([text], "zh")
    paragraphs = text.split("\n\n")
    starts = [text.index(p) for p in paragraphs] + [len(text)]
    drafts = [ShotDraft(k + 1, k + 1, starts[k], starts[k + 1], None, None, (), False, 3.0) for k in range(3)]
    built = build_shots(
        bookcode="b",
        title="t",
        lang="zh",
        chapter=1,
        text=text,
        drafts=cast_drafts(text, drafts, bible),
        templates=Templates.load(),
        bible=bible,
    )
    assert [s.location for s in built.shots] == ["坡", "花果山", "家"]
    assert "Setting: 坡" in built.shots[0].prompt
    assert set(built.place_prompts) == {"花果山"}
