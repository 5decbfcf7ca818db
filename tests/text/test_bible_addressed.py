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
