"""The bible on made-up texts in both languages, for what people do, are called and are: looks
are how a person appears, never what they do (pulled on her boots, 穿了草鞋跑出门去); a kinship word
said to someone tells the gender of the one the grammar says it is said to (爹 answered by 老陈); a
role set beside a name by apposition is that person (John Pike, the landlord; 周掌柜 and 掌柜); a
name that speaks is a person wherever else it stands (a letter from Tobias Venn), never a place."""

from __future__ import annotations

from pathlib import Path

from pipeline_kit.text.cast import Bible, build_bible
from pipeline_kit.text.cast_address import addressed_genders
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.text.names import find_mentions

STORIES = Path(__file__).with_name("stories")


def test_looks_are_appearance_never_something_done() -> None:
    """Pulling on boots, putting on a cap, 穿了草鞋跑出门去 and 手里接过一把伞 are actions, no looks;
    wearing a green coat, a stout old man, 穿一件蓝布褂子 and 手里提着灯笼 are, and 手持竹杖 is without
    the coming (而来) or the speaking (道) that follows it."""
    en = "\n\n".join(
        [
            "Ada Crane pulled on her boots and took the lamp. Ada Crane wore a green coat.",
            "“Come,” said Ada Crane. Ada Crane ran out into the rain.",
            "Ben Hollis came after her. He put on his cap and followed. “Wait,” said Ben Hollis.",
            "Ben Hollis was a stout old man. She pulled on her gloves.",
        ]
    )
    bible = build_bible([en], "en")
    assert bible.by_name["Ada Crane"].description == "in a green coat"  # as a description says it
    assert bible.by_name["Ben Hollis"].description == "a stout old man"
    zh = (
        "阿福穿了草鞋，跑出门去。阿福道：“走。”\n"
        "阿福穿一件蓝布褂子，手里接过一把伞。阿福道：“好。”\n"
        "秀英穿一件红袄，手里提着灯笼。秀英道：“来了。”秀英道：“走吧。”\n"
        "王老七手持竹杖而来。王老七道：“来了。”王老七道：“走吧。”\n王老七拄着竹杖道：“慢些。”\n"
    )
    bible = build_bible([zh], "zh")
    assert bible.by_name["阿福"].description == "穿一件蓝布褂子"
    assert bible.by_name["秀英"].description == "穿一件红袄，手里提着灯笼"
    assert bible.by_name["王老七"].description == "手持竹杖，拄着竹杖"  # not 而来 nor 道


def test_a_name_that_speaks_is_a_person_wherever_else_it_stands() -> None:
    """ "a letter from Tobias Venn" and "from Venn" put the name after a preposition of place, but
    Tobias Venn speaks: he is a character (Venn his alias) and no place, as is a Venn who only
    laughs and nods, and a chapter's mentions never call a name that speaks a place; 从石小庄来的信
    and 去找石小庄 are about 石小庄, who speaks, so neither 石小庄 nor 找石小庄 is a place."""
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
    laughs = "\n\n".join(
        [
            "Mara Quill had a letter from Venn. Then a parcel came from Venn, and Mara Quill laughed.",
            "Venn laughed at the door. Venn nodded to Mara Quill. “Come in,” said Mara Quill.",
        ]
    )
    bible = build_bible([laughs], "en")
    assert "Venn" in bible.by_name and "Venn" not in bible.place_names
    said = "A letter came from Venn. Then a parcel came from Venn. “Open it,” said Venn. Mara Quill did."
    assert "Venn" in find_mentions(said, "en").people and "Venn" not in find_mentions(said, "en").places
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


def test_a_role_joins_a_name_given_after_it_and_a_list_joins_nothing() -> None:
    """那掌柜名叫周福 (掌柜 speaking like a title), 那樵夫人称李定, "a landlord named John Pike" and "Mrs
    Dace, the landlady of the Gull Inn," join the role to that person; "Holmes, the inspector, the
    doctor and I" is a list of three people, so the inspector stays a character of its own."""
    zh = (
        "阿福走进客店，掌柜迎上来。那掌柜名叫周福，是个胖子。掌柜道：“客官住店么？”阿福道：“住一晚。”"
        "掌柜道：“楼上请。”周福笑了。周福道：“请。”\n"
    )
    assert build_bible([zh], "zh").canonical["掌柜"] == "周福"
    called = (
        "阿福走进树林，那樵夫人称李定，坐在石上。樵夫道：“客官哪里去？”阿福道：“上山。”"
        "樵夫道：“山上有虎。”李定笑了。李定道：“小心。”\n"
    )
    assert build_bible([called], "zh").canonical["樵夫"] == "李定"  # the person's name, never the role
    en = EN_INN.replace("John Pike, the landlord,", "Mrs Dace, the landlady of the Gull Inn,")
    for old, new in (("the landlord", "the landlady"), ("The landlord", "The landlady"), ("John Pike", "Mrs Dace")):
        en = en.replace(old, new)
    assert build_bible([en], "en").canonical["the landlady"] == "Dace"
    named = EN_INN.replace("John Pike, the landlord, wiped", "A landlord named John Pike wiped")
    assert build_bible([named], "en").canonical["the landlord"] == "John Pike"
    listed = "\n\n".join(
        [
            "Holmes, the inspector, the doctor and I sat down. “Well,” said the inspector. Holmes smiled.",
            "“Go on,” said Holmes. “I will,” said the inspector. Holmes waited.",
        ]
    )
    bible = build_bible([listed], "en")
    assert bible.canonical["the inspector"] == "the inspector" and "Holmes" in bible.canonical


EN_CALLS = "\n\n".join(
    [
        "Ann Lowry came in from the yard. “Mother!” cried Ann Lowry, and Kit Venn turned from the stove.",
        "“Uncle Robin, look!” said Ann Lowry. Robin Hale laughed. “A frog,” said Robin Hale.",
        "“Come here, Grandpa,” Ann Lowry said to Sam Orme. Sam Orme came slowly. “Well?” said Sam Orme.",
        "“Sister!” shouted Ann Lowry.\n\n“What now?” said Jo Marsh. Jo Marsh put down the bucket.",
        "“Father!” cried Ann Lowry. The rain fell on Lee Carter. Lee Carter waited. “Rain,” said Lee Carter.",
        "“Father says you are late,” said Ann Lowry to Lee Carter. “Wash your hands,” said Kit Venn.",
        "“Come home, father,” she said, “the tea is cold.” Pat Dunne looked up. “Soon,” said Pat Dunne.",
    ]
)
ZH_CALLS = (
    "二娃跑进院子，叫道：“娘，我回来了！”\n周春道：“快洗手吃饭。”周春道：“洗干净些。”\n"
    "二娃回头对王平道：“叔，你也来吃吧。”王平摆摆手。王平道：“不了。”\n"
    "二娃道：“宋兰姐，等等我！”宋兰站住了。宋兰道：“快些。”宋兰道：“走吧。”\n"
    "二娃叫道：“爹！”\n刘三拿起扁担走了。刘三道：“晚了。”刘三道：“我娘病了。”二娃道：“好。”\n"
    "“姐，”二娃道，“你看！”\n马小玉道：“看什么？”马小玉道：“一只鸟。”\n"
)


def _genders(text: str, lang: str) -> dict[str, str | None]:
    return {c.name: c.gender for c in build_bible([text], lang).characters}


def test_a_kinship_word_said_to_someone_tells_that_persons_gender() -> None:
    """The one a kinship word is said to is whom the grammar says: who answers in the next clause
    (Kit Venn turned; “What now?” said Jo Marsh; 周春道; after the speaker goes on, “姐，”二娃道，“你看！”
    and "Come home, father," she said, "…"), who is named in the address (Uncle Robin;
    宋兰姐) or the tag's "said to"/对X道. Where nobody answers (the rain fell on Lee Carter; 刘三拿起扁担走了)
    or the word speaks of someone (Father says; 我娘病了), nobody's gender is told."""
    assert _genders(EN_CALLS, "en") == {
        "Ann Lowry": None,
        "Kit Venn": "female",
        "Robin Hale": "male",
        "Sam Orme": "male",
        "Jo Marsh": "female",
        "Lee Carter": None,
        "Pat Dunne": "male",
    }
    assert _genders(ZH_CALLS, "zh") == {
        "二娃": None,
        "周春": "female",
        "王平": "male",
        "宋兰": "female",
        "刘三": None,
        "马小玉": "female",
    }


def _story(name: str, lang: str) -> tuple[list[str], Bible]:
    texts = [c.text for c in find_chapters((STORIES / name).read_text(encoding="utf-8"), "x").chapters]
    return texts, build_bible(texts, lang)


def test_the_stories_landlord_and_innkeeper_are_the_named_men() -> None:
    """Port Ellery: "John Pike, the landlord," so "said the landlord" in the last chapter is John
    Pike; 清水镇: the 掌柜 the text calls 周掌柜 is one character, 周掌柜, a man."""
    texts, bible = _story("en_port_ellery.txt", "en")
    said = texts[-1].index("said the landlord") + len("said ")
    assert dict(bible.mentions(texts[-1]))[said] == "John Pike"
    texts, bible = _story("zh_qingshui.txt", "zh")
    assert bible.canonical["掌柜"] == "周掌柜" and bible.by_name["周掌柜"].gender == "male"
    assert "掌柜" not in bible.by_name


def test_the_ferrymans_daughter_calling_him_father_makes_him_a_man() -> None:
    """清水镇: a girl calls “爹，回家吃饭了！” and 老陈 answers “就来。”: 老陈 is a man, told by the
    address alone (no pronoun nor kinship statement needed)."""
    texts, bible = _story("zh_qingshui.txt", "zh")
    assert bible.by_name["老陈"].gender == "male"
    assert addressed_genders(texts, "zh", [bible.spans(t) for t in texts])["老陈"] == "male"
