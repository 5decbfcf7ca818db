"""Unnamed people in the bible, on made-up texts in both languages: a role word that speaks is a
character named by its role, with the gender its word says, and its lines are voiced as its own;
a role met in passing is none; a role joins a named person only where the text names it so."""

from __future__ import annotations

from pipeline_kit.film.dialogue import Speakers, spoken_lines
from pipeline_kit.text.cast import Bible, build_bible

ZH_WOODS = (
    "林冲走到山下，见一个樵夫坐在石上。林冲道：“老哥，山上有路么？”\n"
    "那樵夫道：“有路，只是难走。”林冲道：“多谢指点。”樵夫道：“你往东去便是。”\n"
    "林冲上山，那货郎挑着担子过去了。林冲又走了半日，见一个老妇在门前晒谷。\n"
    "老妇道：“客官从哪里来？”林冲道：“从山下来。”老妇道：“天晚了，进来歇歇。”林冲道：“也好。”\n"
)
EN_STATION = "\n\n".join(
    [
        "Tom Harker came into the station at noon. The porter was asleep on a bench.",
        "“Where is the book?” said the inspector. “I have not seen it,” Tom Harker answered.",
        "“Then you will look for it,” said the inspector. Tom Harker looked at the floor.",
        "“Sit down, both of you,” said the old woman from the stove. “The kettle is on.”",
        "“Thank you,” said Tom Harker. “You are kind,” the old woman said, and laughed.",
    ]
)


def speakers(bible: Bible) -> Speakers:
    return Speakers.of((c.name, c.aliases, c.gender) for c in bible.characters)


def said(text: str, lang: str, bible: Bible) -> list[str | None]:
    lines = spoken_lines(text, dialogue=True, lang=lang, characters=(), speakers=speakers(bible))
    return [line.speaker for line in lines]


def test_zh_role_that_speaks_is_a_character_and_a_passing_one_is_not() -> None:
    """樵夫 and 老妇 speak twice each: characters under their role, a man and a woman; the 货郎
    who passes by once is none; their lines are voiced as theirs."""
    bible = build_bible([ZH_WOODS], "zh")
    assert {"林冲", "樵夫", "老妇"} <= set(bible.by_name)
    assert "货郎" not in bible.canonical
    assert bible.by_name["樵夫"].gender == "male" and bible.by_name["老妇"].gender == "female"
    assert said(ZH_WOODS, "zh", bible) == ["林冲", "樵夫", "林冲", "樵夫", "老妇", "林冲", "老妇", "林冲"]


def test_en_role_that_speaks_is_a_character_and_a_passing_one_is_not() -> None:
    """ "said the inspector" twice makes the inspector a character, "the old woman" a woman; the
    porter asleep on a bench is none; their lines are theirs."""
    bible = build_bible([EN_STATION], "en")
    assert {"Tom Harker", "the inspector", "the old woman"} <= set(bible.by_name)
    assert not any("porter" in name for name in bible.canonical)
    assert bible.by_name["the old woman"].gender == "female"
    assert said(EN_STATION, "en", bible) == [
        "the inspector",
        "Tom Harker",
        "the inspector",
        "the old woman",
        "Tom Harker",
        "the old woman",
    ]


def test_zh_role_joins_the_name_the_narration_gives_it() -> None:
    """那樵夫名唤李定: the woodcutter is 李定, one character; a 灰狐 counted as one (一只灰狐) that
    speaks, then 遂称白眉王 in its own sentence, is the 白眉王 who speaks after."""
    named = ZH_WOODS.replace("林冲上山，", "那樵夫名唤李定，住在山脚。林冲上山，")
    named += "次日李定下山，李定道：“客官慢走。”\n"
    bible = build_bible([named], "zh")
    assert bible.canonical["樵夫"] == "李定"
    fox = (
        "山中有一只灰狐，日日拜月。一只灰狐，修了千年。灰狐道：“我要做王。”众兽道：“凭你？”"
        "灰狐道：“凭我。”自此，灰狐坐了洞府，遂称白眉王。白眉王道：“都来拜我。”众兽道：“拜见大王。”"
        "白眉王笑道：“好，好。”\n"
    )
    bible = build_bible([fox], "zh")
    assert bible.canonical["灰狐"] == bible.canonical["白眉王"]


def test_en_role_joins_a_name_set_beside_it_and_stays_apart_otherwise() -> None:
    """ "the inspector, Gregson," joins the inspector to Gregson; without it the inspector is his
    own character beside the named people."""
    joined = EN_STATION.replace("said the inspector. Tom", "said the inspector, Gregson, to him. Tom")
    joined += "\n\nGregson went out. Gregson came back with a lamp."
    bible = build_bible([joined], "en")
    assert bible.canonical["the inspector"] == "Gregson"
    apart = build_bible([EN_STATION], "en")
    assert apart.canonical["the inspector"] == "the inspector"


def test_a_role_that_acts_in_a_stretch_is_a_character() -> None:
    """A role that never speaks but is the subject of three actions in a chapter (那货郎…, "The
    clerk looked up.") is a character; the same word acting once is none."""
    zh = "林冲进了镇子。那货郎放下担子。那货郎摇着鼓。那货郎看着林冲。林冲道：“好热闹。”林冲走了。\n"
    assert "货郎" in build_bible([zh], "zh").by_name
    assert "货郎" not in build_bible([ZH_WOODS], "zh").canonical
    en = (
        "Tom Harker came to the bank. The clerk looked up. The clerk turned a page. "
        "The clerk stood and went to the safe. Tom Harker waited, and Tom Harker left."
    )
    assert "the clerk" in build_bible([en], "en").by_name
    assert "the clerk" not in build_bible([en.replace("The clerk turned", "He turned")], "en").canonical


def test_a_role_the_text_joins_to_two_people_is_shared_by_them() -> None:
    """The inspector is Gregson in one chapter and Lestrade in the next: both hold the role, and
    each chapter's "said the inspector" is the inspector that chapter named."""

    def chapter(name: str) -> str:
        return "\n\n".join(
            [
                f"Tom Harker came in. “Where is it?” said the inspector, {name}, at the door.",
                f"“I do not know,” said Tom Harker. “Then find it,” said the inspector. {name} sat down.",
                f"{name} waited. {name} smoked.",
            ]
        )

    texts = [chapter("Gregson"), chapter("Lestrade")]
    bible = build_bible(texts, "en")
    assert bible.holders["the inspector"] == ("Gregson", "Lestrade")
    for text, name in zip(texts, ("Gregson", "Lestrade")):
        said = text.index("said the inspector.") + len("said ")
        assert dict(bible.mentions(text))[said] == name
