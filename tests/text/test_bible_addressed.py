"""The bible on made-up texts in both languages, for what people do, are called and are: looks
are how a person appears, never what they do (pulled on her boots, 穿了草鞋跑出门去); a kinship word
said to someone tells the gender of the one the grammar says it is said to (爹 answered by 老陈); a
role set beside a name by apposition is that person (John Pike, the landlord; 周掌柜 and 掌柜); a
name that speaks is a person wherever else it stands (a letter from Tobias Venn), never a place."""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible


def test_looks_are_appearance_never_something_done() -> None:
    """Pulling on boots, putting on a cap, 穿了草鞋跑出门去 and 手里接过一把伞 are actions, no looks;
    wearing a green coat, a stout old man, 穿一件蓝布褂子 and 手里提着灯笼 are."""
    en = "\n\n".join(
        [
            "Ada Crane pulled on her boots and took the lamp. Ada Crane wore a green coat.",
            "“Come,” said Ada Crane. Ada Crane ran out into the rain.",
            "Ben Hollis came after her. He put on his cap and followed. “Wait,” said Ben Hollis.",
            "Ben Hollis was a stout old man. She pulled on her gloves.",
        ]
    )
    bible = build_bible([en], "en")
    assert bible.by_name["Ada Crane"].description == "wore a green coat"
    assert bible.by_name["Ben Hollis"].description == "a stout old man"
    zh = (
        "阿福穿了草鞋，跑出门去。阿福道：“走。”\n"
        "阿福穿一件蓝布褂子，手里接过一把伞。阿福道：“好。”\n"
        "秀英穿一件红袄，手里提着灯笼。秀英道：“来了。”秀英道：“走吧。”\n"
    )
    bible = build_bible([zh], "zh")
    assert bible.by_name["阿福"].description == "穿一件蓝布褂子"
    assert bible.by_name["秀英"].description == "穿一件红袄，手里提着灯笼"


def test_a_name_that_speaks_is_a_person_wherever_else_it_stands() -> None:
    """ "a letter from Tobias Venn" and "from Venn" put the name after a preposition of place, but
    Tobias Venn speaks: he is a character (Venn his alias) and no place; 从石小庄来的信 and 去找石小庄
    are about 石小庄, who speaks, so neither 石小庄 nor 找石小庄 is a place."""
    en = "\n\n".join(
        [
            "Mara Quill found a letter from Tobias Venn on the mat. Mara Quill read it twice. "
            "It was the third letter from Venn that month.",
            "“He wants me at the harbour,” Mara Quill said. She went down at dusk.",
            "On the quay she met Tobias Venn. “You came,” said Venn.",
        ]
    )
    bible = build_bible([en], "en")
    assert bible.canonical["Venn"] == bible.canonical["Tobias"] == "Tobias Venn"
    assert not {"Tobias Venn", "Venn", "Tobias"} & set(bible.place_names)
    zh = (
        "阿芳收到一封从石小庄来的信。阿芳道：“他要我去。”阿芳去找石小庄。\n"
        "石小庄道：“你来了。”阿芳道：“来了。”石小庄道：“坐吧。”\n"
    )
    bible = build_bible([zh], "zh")
    assert "石小庄" in bible.by_name
    assert not any("石小庄" in place for place in bible.place_names)


EN_INN = "\n\n".join(
    [
        "John Pike, the landlord, wiped the bar. Ned Hale came in.",
        "“A pint,” said Ned Hale. The landlord came over with a glass.",
        "“On the house,” the landlord said. Ned Hale drank. “Thanks,” said Ned Hale. John Pike smiled.",
    ]
)
EN_INN_TWO = "\n\n".join(
    [
        "Ned Hale rode to Dunmore. Tom Rudd, the landlord, was asleep by the fire.",
        "“Wake up,” said Ned Hale. The landlord opened one eye. “Go away,” the landlord said. Tom Rudd snored.",
    ]
)
ZH_INN = "阿福走进客店，王掌柜迎上来。掌柜道：“客官住店么？”阿福道：“住一晚。”掌柜道：“楼上请。”王掌柜笑了。\n"
ZH_INN_TWO = "第二天阿福到了镇上，周掌柜正在开门。掌柜道：“早啊。”阿福道：“早。”掌柜道：“进来坐。”周掌柜倒了茶。\n"


def test_a_role_set_after_a_name_is_that_person_and_two_stay_apart() -> None:
    """ "John Pike, the landlord," makes the landlord who speaks and acts later John Pike (an alias,
    no character of its own), though the landlord speaks only once; 王掌柜 is the 掌柜 named 王. A
    second landlord (Tom Rudd, the landlord; 周掌柜) in another chapter is another person: the role
    is shared, each mention going to the one the text named last."""
    bible = build_bible([EN_INN], "en")
    assert bible.canonical["the landlord"] == bible.canonical["The landlord"] == "John Pike"
    assert "the landlord" not in bible.by_name
    said = EN_INN.index("the landlord said")
    assert dict(bible.mentions(EN_INN))[said] == "John Pike"
    bible = build_bible([ZH_INN], "zh")
    assert bible.canonical["掌柜"] == "王掌柜" and "掌柜" not in bible.by_name
    for lang, texts, names in (
        ("en", [EN_INN, EN_INN_TWO], ("John Pike", "Tom Rudd")),
        ("zh", [ZH_INN, ZH_INN_TWO], ("王掌柜", "周掌柜")),
    ):
        bible = build_bible(texts, lang)
        role = "the landlord" if lang == "en" else "掌柜"
        assert set(bible.holders[role]) == set(names)
        for text, name in zip(texts, names):
            at = text.rindex(role + (" said" if lang == "en" else "道"))  # its last words, after its name
            assert dict(bible.mentions(text))[at] == name
