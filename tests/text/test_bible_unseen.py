"""The bible on made-up texts written after the rules (issue 28's audit), and the corpus counts
they change: a person whose name ends like a place (周大山) is a person and lends
no place his name; a word met mostly in a place's name (Hatherley of Hatherley Farm) or after a
capitalised preposition (In Dunmore) is no person; an epithet statement folds by the text's
grammar (the Monkey King was called Sun Wukong; Everyone called Ada Fenn the Owl: Everyone is
the caller, not a name)."""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.text.noise import clean
from tests.conftest import CORPUS

ZH_VILLAGE = (
    "梅姑住在柳树村。梅姑道：“来了。”梅姑笑了。\n"
    "周大山来到柳树村，见了梅姑。周大山说：“好久不见。”梅姑道：“你来做什么？”周大山道：“来看你。”\n"
    "梅姑领着周大山走进了祠堂。周大山在祠堂里坐下。周大山回到了柳树村。\n"
)

EN_HARBOUR = "\n\n".join(
    [
        "At Hatherley Farm, Mara Quill kept the lamps. Mara Quill said, “Late again.”",
        "Tobias Venn laughed. “That is the Hatherley light,” said Tobias Venn.",
        "The Monkey King was called Sun Wukong by his master. Sun Wukong laughed. “Go,” said the Monkey King.",
        "The Monkey King flew. Sun Wukong landed.",
        "Everyone called Ada Fenn the Owl. “Hush,” said the Owl. Ada Fenn smiled. The Owl wept.",
        "Ada Fenn left for Dunmore. In Dunmore she met Tobias Venn. Mara Quill waved.",
    ]
)


def test_zh_a_person_whose_name_ends_like_a_place_is_a_person() -> None:
    """周大山 speaks, so his 山 makes no place of him; 大山 inside his name is no place."""
    bible = build_bible([ZH_VILLAGE], "zh")
    assert "周大山" in bible.by_name
    assert "大山" not in bible.place_names and "周大山" not in bible.place_names


def test_en_places_inside_place_names_and_after_capitalised_prepositions_are_no_people() -> None:
    bible = build_bible([EN_HARBOUR], "en")
    assert {"Mara Quill", "Tobias Venn", "Ada Fenn"} <= set(bible.by_name)
    assert "Hatherley" not in bible.canonical and "Dunmore" not in bible.canonical


def test_en_epithets_fold_by_the_statements_grammar() -> None:
    bible = build_bible([EN_HARBOUR], "en")
    assert bible.canonical["Monkey King"] == "Sun Wukong"
    assert bible.canonical["Owl"] == "Ada Fenn"
    assert "Everyone" not in bible.canonical


EN_LOOKS = "\n\n".join(
    [
        "Nell Ardent stepped onto the quay as the bell rang. She was a tall woman of thirty, with cropped red hair.",
        "“You’re late,” said Corin Vale. He was a stout old man with a white beard. Corin Vale laughed.",
        "Nell Ardent watched a light blink three short flashes. Corin Vale shrugged. Nell Ardent smiled.",
    ]
)
ZH_LOOKS = (
    "阿Ｗ是个瘦高的年轻人，脸上有一道疤，忽然笑了。阿Ｗ道：“走吧。”\n"
    "钱嫂叹了口气。她是个矮胖的老妇人，头发花白。钱嫂道：“慢些。”阿Ｗ道：“好。”钱嫂道：“去吧。”\n"
    "钱嫂点了点头，年方十六的女儿也来了。阿Ｗ道：“回去。”\n"
)


def test_looks_from_the_sentence_a_pronoun_opens_and_from_is_a_statements() -> None:
    """She was a tall woman…/他是个瘦高的年轻人: what the text says of the person's looks, in the
    sentence after the name when the person's own pronoun opens it, and clauses that go on
    describing (脸上有一道疤) but not a later clause about someone else (年方十六的女儿)."""
    en = build_bible([EN_LOOKS], "en")
    assert en.by_name["Nell Ardent"].description.startswith("a tall woman of thirty")
    assert "flashes" not in en.by_name["Nell Ardent"].description
    assert en.by_name["Corin Vale"].description == "a stout old man with a white beard"
    zh = build_bible([ZH_LOOKS], "zh")
    assert zh.by_name["阿Ｗ"].description == "瘦高的年轻人，脸上有一道疤"
    assert zh.by_name["钱嫂"].description == "矮胖的老妇人，头发花白"


def test_zh_a_named_place_no_dictionary_knows_is_found_where_people_go() -> None:
    """柳树村 and 李家祠堂 are in no dictionary; people go and stay there, so they are places, and a
    shot set there says so."""
    bible = build_bible([ZH_VILLAGE.replace("祠堂", "李家祠堂")], "zh")
    assert {"柳树村", "李家祠堂"} <= set(bible.place_names)
    assert "周大山" in bible.by_name


def test_zh_an_epithet_statement_names_its_person_though_nothing_else_did() -> None:
    """张小梅人称梅姑: 张小梅, built like a name and opening the statement, is the person the known
    梅姑 names, though she is never met as an object (the rule a book's names need)."""
    text = "张小梅人称梅姑，住在柳树村。梅姑道：“来了。”张小梅道：“等等我。”梅姑笑了。张小梅走了。\n" + ZH_VILLAGE
    bible = build_bible([text], "zh")
    assert bible.canonical["梅姑"] == "张小梅"


def test_the_person_a_full_name_is_given_to_is_that_persons_looks_and_gender() -> None:
    """A boy named Jem Harlow: a boy, so male; a man named Crane, where Mrs. Crane is named too,
    is a family's surname and tells nothing."""
    text = "\n\n".join(
        [
            "A boy named Jem Harlow sat on a coil of rope. Jem Harlow waved. “Hi,” said Jem Harlow.",
            "Her sister had married a man named Crane. “Come in,” said Mrs. Crane. Mrs. Crane smiled. Mrs. Crane sat.",
        ]
    )
    bible = build_bible([text], "en")
    assert bible.by_name["Jem Harlow"].description == "a boy" and bible.by_name["Jem Harlow"].gender == "male"
    crane = bible.by_name[bible.canonical["Crane"]]
    assert crane.gender == "female" and "man" not in crane.description


def test_end_marks_are_no_story_and_a_one_word_exclamation_is() -> None:
    """（本章完）, 未完待续 and THE END on lines of their own make no shot; “完！” said aloud stays."""
    text = "他走了。\n（本章完）\n未完待续……\n“完！”\nShe left.\nTHE END.\n(完)"
    assert clean(text).split("\n") == ["他走了。", "“完！”", "She left."]


def test_corpus_places_and_people_the_new_rules_change() -> None:
    """Whole 西游记: places people go to, come from or stay in that no dictionary tags are places,
        once being enough (188 places when measured, 131 before the once-rule, 116 before that;
        雷音寺, 水晶宫, 水帘洞, 高老庄), and settings found by the grammar rather than a list of
        words, the object of a move or a stay ending in a character that makes place words (371
        when measured, 192 before: 火云洞, 狮驼岭, 法门寺, 莲花池; no body part or furniture);
        158 characters (155 before those who open sentences ending in
    their own speech joined, never met as objects: 黄狮, 老姆, 许旌阳), then 159 with a surname
    and a role never met alone (黄婆), then 160 with the queen 金圣宫, whose quotations a colon
    tags whatever the verb (no longer a place though her name ends in 宫). Sherlock Holmes: the
        town of Reading (\"at Reading\") is no character but a place (53 characters, 54 before), and
        places named once after a preposition are places (177 when measured, 89 before: Stoke Moran,
        San Francisco; settings someone is in or goes to once count too: the breakfast-room, the
        police-station), never a character's name; with a broad list of words for places and owners
        (235 when measured, 185 before: St. Paul’s, the housekeeper’s room, lawn, glade, stables).
        Then ferries are places (凌云渡, 洪江渡: 373 places when measured, 371 before), and so are
        the house a room is part of (the lower vault of a furniture warehouse) and a bare name a
        journey reaches (came to Wexley), and a family's or a county's before a word for a place (the
        Reed farmhouse, the Southampton road), but not a kind of thing (the deep-sea fishes): 237
        when measured, 234 before."""
    xyj = [c.text for c in find_chapters((CORPUS / "zh_xiyouji.txt").read_text(encoding="utf-8"), "x").chapters]
    zh = build_bible(xyj, "zh")
    assert {"雷音寺", "水晶宫", "水帘洞", "高老庄"} <= set(zh.place_names) and 355 <= len(zh.places) <= 395
    assert {"火云洞", "狮驼岭", "法门寺", "莲花池", "凌云渡", "洪江渡"} <= set(zh.place_names)
    assert not {"心", "手", "身", "脸", "炕", "床", "石头"} & set(zh.place_names)
    assert len(zh.characters) == 160 and "黄婆" in zh.by_name and "金圣宫" in zh.by_name
    holmes = (CORPUS / "en_adventures_of_sherlock_holmes.txt").read_text(encoding="utf-8")
    en = build_bible([c.text for c in find_chapters(holmes, "x").chapters], "en")
    assert "Reading" not in en.canonical and 48 <= len(en.characters) <= 60
    assert {"Reading", "Stoke Moran", "San Francisco", "police-station"} <= set(en.place_names)
    assert 220 <= len(en.places) <= 250
    assert {"St. Paul’s", "housekeeper’s room", "lawn"} <= set(en.place_names)
    assert not {"bed", "chair", "table", "library-chair"} & set(en.place_names)
    assert not set(en.place_names) & set(en.canonical)
