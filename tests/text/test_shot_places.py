"""The place and time of day of each shot, on short made-up texts in English and Chinese: where
the shot's people are (not a place only seen, described or spoken of), held while they stay and
talk (as long as they talk), ended when they leave, at a scene break or after `HOLD` shots with no
word of it; rooms named by the word that says which; the time of day kept across a break that
does not move on in time."""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible, cast_drafts
from pipeline_kit.text.places import HOLD, settings
from pipeline_kit.text.shots import ShotDraft, split_chapter


def places_of(paragraphs: list[str], lang: str, scenes: list[int] | None = None, book: str = "") -> list[str | None]:
    """Each paragraph a shot (all in one scene unless `scenes` says), its place by the bible of
    the text (plus `book`, more of the same book the bible learns its places from)."""
    sep = "\n\n" if lang == "en" else "\n"
    text = sep.join(paragraphs)
    bible = build_bible([text, book] if book else [text], lang)
    starts = [text.index(p) for p in paragraphs] + [len(text)]
    scenes = scenes or [1] * len(paragraphs)
    drafts = [
        ShotDraft(k + 1, scenes[k], starts[k], starts[k + 1], None, None, (), False, 3.0)
        for k in range(len(paragraphs))
    ]
    return [d.location for d in cast_drafts(text, drafts, bible)]


def test_the_place_is_where_the_people_are_not_one_only_seen_or_described() -> None:
    """A shot is where its narration puts a person (sat on the quay), not at a place said of a
    thing (out on its rock, the lighthouse kept turning; the tower, which stood on its rock) nor one
    someone only looks at, though those come last in the shot."""
    places = places_of(
        [
            "Ada ran down to the quay. She climbed onto the rock.",
            "That evening Ada sat beside her uncle on the quay. Out on its rock, the old lighthouse kept turning.",
            "Ada rowed hard. Ada kept her eyes on the lighthouse, which stood on its rock like a candle.",
        ],
        "en",
        scenes=[1, 2, 3],
    )
    assert places == ["rock", "quay", None]


def test_zh_the_place_is_where_the_people_stand_not_a_boat_moored_there() -> None:
    """站在码头上 puts 阿福 on the 码头; 码头边停着一条渡船 says where a boat is, not where he is,
    though it is named last; 跳上渡船 then puts him on the 渡船."""
    places = places_of(
        ["阿福来到石桥镇。他背着包袱，站在码头上四下张望。码头边停着一条渡船。", "阿福跳上渡船。"],
        "zh",
    )
    assert places == ["码头", "渡船"]


def test_a_place_holds_while_the_people_talk_and_ends_when_they_leave() -> None:
    """Dialogue and acting in place keep the place the text put the people in (more than a couple
    of shots); a shot in which they leave with no place named is still there, the next is not."""
    places = places_of(
        [
            "Ilse stepped onto the quay.",
            '"The lamp is out," said Ilse.',
            '"I saw it," said Oskar.',
            '"Row me across," said Ilse. Oskar sighed.',
            "Oskar folded the net and untied his boat.",
            "Ilse hummed. Then she ran off.",
            "Ilse slept.",
        ],
        "en",
    )
    assert places == ["quay"] * 6 + [None]


def test_zh_a_place_holds_while_the_people_talk_and_ends_when_they_leave() -> None:
    """坐在船头 holds through the talk; 转身走了 ends it after the shot it happens in."""
    places = places_of(
        [
            "阿福坐在船头。",
            "老陈道：“你从哪里来？”",
            "阿福道：“我从黑石岛来。”",
            "老陈点了点头。",
            "阿福转身走了。",
            "老陈叹了口气。",
        ],
        "zh",
        book="阿福又坐在船头。秀兰也坐在船头。",
    )
    assert places == ["船头"] * 5 + [None]


def test_a_place_only_spoken_of_never_sets_the_shot() -> None:
    """A place named inside quotation marks is talk, not where anyone stands: it neither gives a
    shot a place nor replaces the one the people are in."""
    places = places_of(
        [
            '"Meet me at the harbour tonight," said Ilse.',
            "Ilse stepped into the kitchen.",
            '"The harbour is cold," said Oskar.',
        ],
        "en",
        book="Oskar walked to the harbour.",
    )
    assert places == [None, "kitchen", "kitchen"]


def test_a_place_does_not_stick_past_the_scene_or_the_hold() -> None:
    """A place named once holds for HOLD shots with no word of it and no longer (a 76-shot scene is
    not one place because its first line named one), and never into the next scene."""
    hums = [f"Ilse hummed verse {k}." for k in range(HOLD + 3)]
    places = places_of(["Ilse stepped onto the quay.", *hums], "en")
    assert places[: HOLD + 1] == ["quay"] * (HOLD + 1) and set(places[HOLD + 1 :]) == {None}
    places = places_of(["Ilse stepped onto the quay.", "Ilse hummed.", "Ilse hummed again."], "en", scenes=[1, 1, 2])
    assert places == ["quay", "quay", None]


def test_zh_a_place_does_not_stick_past_the_hold() -> None:
    """The same bound in Chinese: 来到码头 holds HOLD shots of 阿福 doing things, then no more."""
    acts = [f"阿福数了{k}遍网。" for k in range(HOLD + 3)]
    places = places_of(["阿福来到码头。", *acts], "zh")
    assert places[: HOLD + 1] == ["码头"] * (HOLD + 1) and set(places[HOLD + 1 :]) == {None}


def test_talk_moves_nobody_so_the_place_holds_past_the_hold() -> None:
    """A client's long story told in a room is all quotation and speech tags: the people put in
    the room stay there however long they talk (HOLD counts shots of narration, not of talk); a
    place only described with nobody put in it is not held by talk, and the scene still ends it."""
    en_talk = [f"“That was day {k} of it,” said Oskar." for k in range(HOLD + 3)]
    zh_talk = [f"老陈道：“那是第{k}天。”" for k in range(HOLD + 3)]
    assert set(places_of(["Ilse came home. She sat down in the parlour.", *en_talk], "en")) == {"parlour"}
    assert set(places_of(["阿福坐在船头。", *zh_talk], "zh", book="阿福又坐在船头。")) == {"船头"}
    described = places_of(["Rain fell on the parlour.", *en_talk], "en", book="Ilse sat in the parlour.")
    assert described[: HOLD + 1] == ["parlour"] * (HOLD + 1) and set(described[HOLD + 1 :]) == {None}
    scenes = places_of(["She sat down in the parlour.", *en_talk[:2]], "en", scenes=[1, 1, 2])
    assert scenes == ["parlour", "parlour", None]


def test_a_room_keeps_the_word_that_says_which_room() -> None:
    """A setting used once keeps a word that names the kind of room (lamp room, boiler room,
    drawing-room) and drops one that only describes it (the old chapel is a chapel, a dusty attic
    an attic)."""
    found = [name for _, name in settings("In the lamp room they found Hetty. He went into the boiler room.", "en")]
    assert found == ["lamp room", "boiler room"]
    found = [
        name
        for _, name in settings("She sat in the old chapel, then in the dusty attic, then in the drawing-room.", "en")
    ]
    assert found == ["chapel", "attic", "drawing-room"]
    assert places_of(["In the lamp room they found Hetty.", "Hetty wound the handle."], "en") == ["lamp room"] * 2


def test_the_time_of_day_carries_across_a_break_that_does_not_move_on_in_time() -> None:
    """The evening holds across a ruled-off break that says no other time (the crossing, the same
    evening) and ends at one that moves on (the next day); a time named in talk ("Morning, Ilse")
    does not replace the one the narration set."""
    text = (
        "It was evening. Ilse stepped onto the quay and waved to Oskar across the water.\n\n"
        '"Morning, Ilse," said Oskar, who liked a joke. He untied his boat and pushed off.\n\n'
        "* * *\n\n"
        "The crossing was rough. Waves slapped the hull and Ilse held on to the gunwale.\n\n"
        "* * *\n\n"
        "The next day Ilse walked to the market. She bought bread and cheese for the trip."
    )
    drafts = split_chapter(text, "en")
    by_scene = {d.scene: d.time_of_day for d in drafts}
    assert [d.time_of_day for d in drafts if d.scene == 1] == ["evening"] * len([d for d in drafts if d.scene == 1])
    assert by_scene[2] == "evening" and by_scene[3] is None


def test_zh_the_time_of_day_ends_at_a_scene_that_moves_on() -> None:
    """傍晚 holds across a ruled-off break with no new time, not across one opening 次日."""
    text = (
        "傍晚，阿福来到码头，老陈坐在船头抽烟。两人说了一回话，阿福上了船，老陈撑起竹篙。\n"
        "* * *\n"
        "河面上起了雾，甚么也看不清。阿福坐在船舱里，一句话也不说，只听见水声哗哗地响。\n"
        "* * *\n"
        "次日阿福到了柳家庄，庄口有一棵大柳树，树下坐着一个老妇人，正在纺线。\n"
    )
    by_scene = {d.scene: d.time_of_day for d in split_chapter(text, "zh")}
    assert by_scene == {1: "evening", 2: "evening", 3: None}
