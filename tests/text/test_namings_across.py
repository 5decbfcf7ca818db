"""Someone brought in unnamed in one chapter and named in a later one is that character from the
first chapter on: the peddler of chapter one is Joss Harrow, whose name chapter two gives, and his
chapter-one shots stage him with his chapter-one looks. In a book of many chapters, "the man" of
one chapter is not taken for the man of another.

Made-up texts, written for these tests after the trial stories the rules came from.
"""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible
from pipeline_kit.text.namings import namings

EN_CHAPTERS = [
    "The market was nearly over when a peddler with a tin box on his back came up the lane. "
    "He set the box down by the pump.\n\n"
    '"Needles, thread, ribbons," the peddler called. Maud Ellery came out of the dairy to look.\n\n'
    "Maud bought a yard of green ribbon and went back inside.",
    "Next morning Maud found the peddler asleep in the hay barn. She shook his shoulder.\n\n"
    '"Who are you, that sleeps in other folk\'s barns?"\n\n'
    "The peddler sat up and rubbed his eyes. His name, it turned out, was Joss Harrow, and he had "
    "walked from Dunmere in the rain.\n\n"
    "Maud gave him bread and told him to be gone by noon.",
]

ZH_CHAPTERS = [
    "赶集的日子，镇口来了一个背着竹篓的老汉，头戴一顶破毡帽。他在石桥边放下竹篓，卖起了山货。\n\n"
    "刘秀芝挎着篮子走过来，问：“这蘑菇怎么卖？”\n\n"
    "老汉伸出两根手指头。刘秀芝买了两斤，回家去了。",
    "过了几天，刘秀芝又在桥边碰见那个背竹篓的老汉。\n\n"
    "“大爷，你是哪个村的？”\n\n"
    "“俺是后山的，俺姓覃，叫覃满仓。”老汉说。\n\n"
    "覃满仓把竹篓里最大的一朵蘑菇塞给她，摆摆手，不要钱。",
]


def test_the_peddler_of_chapter_one_is_the_name_chapter_two_gives_him() -> None:
    """ "His name, it turned out, was Joss Harrow" names the peddler met again in chapter two, who
    came up the lane in chapter one: his chapter-one mentions are Joss's, and so are his looks."""
    bible = build_bible(EN_CHAPTERS, "en")
    joss = bible.canonical.get("Joss Harrow") or bible.canonical.get("Joss")
    assert joss is not None, [c.name for c in bible.characters]
    first = [name for _, name in bible.mentions(EN_CHAPTERS[0])]
    assert first.count(joss) >= 2, bible.spans(EN_CHAPTERS[0])
    person = bible.by_name[joss]
    assert person.gender == "male" and "tin box" in person.description


def test_a_chinese_stranger_named_a_chapter_later_is_that_character_from_the_first() -> None:
    """俺姓覃，叫覃满仓 names the old man with the basket, pointed at again (那个背竹篓的老汉): the
    chapter-one 老汉 is 覃满仓, a man with his felt hat."""
    assert [n.name for n in namings(ZH_CHAPTERS[1], "zh")] == ["覃满仓"]
    bible = build_bible(ZH_CHAPTERS, "zh")
    assert "覃满仓" in bible.by_name, [c.name for c in bible.characters]
    first = [name for _, name in bible.mentions(ZH_CHAPTERS[0])]
    assert first.count("覃满仓") >= 2, bible.spans(ZH_CHAPTERS[0])
    person = bible.by_name["覃满仓"]
    assert person.gender == "male" and "毡帽" in person.description, person


def test_in_a_long_book_the_man_of_one_chapter_is_not_the_man_named_in_another() -> None:
    """In a short story's chapters, "the man" who comes back and gives his name is chapter one's man
    with a limp; a long book's chapters meet many a man, and there the same words name nobody of
    chapter one."""
    filler = "The rain went on. The street was empty and the lamps were lit early. " * 300
    one = "A man with a limp crossed the square. The man stopped at the well and drank.\n\n"
    back = (
        'The man came back at dusk.\n\n"Who are you?" asked Ada.\n\n"My name is Silas Crane," said the man.\n\n'
        "Silas sat down on the step. Silas rubbed his knee. Ada brought Silas a cup of milk.\n\n"
    )
    short = build_bible([one, back], "en")
    silas = short.canonical.get("Silas Crane") or short.canonical.get("Silas")
    assert [name for _, name in short.mentions(one)] == [silas, silas]
    long_book = build_bible([one + filler, filler, back + filler], "en")
    assert "Silas" in long_book.canonical
    assert long_book.unnamed_spans(one + filler) == []


def test_a_name_the_narration_of_an_earlier_chapter_gave_is_no_news() -> None:
    """Ada, named in the narration of chapter one, says "I'm Ada" in chapter two: the girl just
    brought in there is someone else, and keeps no name."""
    one = "Ada ran down to the harbour. Ada waved at the boats.\n\nAda went home at dusk."
    two = 'A girl in a red shawl stood on the quay. "I\'m Ada," said Ada. The girl laughed.'
    bible = build_bible([one, two], "en")
    assert [n for _, _, n in bible.unnamed_spans(two)] == []


def test_someone_fronted_by_where_they_are_is_brought_in_and_i_m_names_no_one() -> None:
    """ "Among the crowd on the platform was a small boy in a cap" brings the boy in (the "was" has
    no subject before it), so "I'm Pip" names him; "I'm" itself is no name called to anyone."""
    text = (
        "Among the crowd on the platform was a small boy in a cap. Mrs. Orme looked down at him.\n\n"
        '"I\'m Pip," said the boy. "I\'m to meet my aunt."\n\n'
        "Mrs. Orme took his hand. Pip held on tight. Pip did not cry."
    )
    assert all("I" not in n.name.split()[0] for n in namings(text, "en")), namings(text, "en")
    bible = build_bible([text], "en")
    pip = bible.by_name[bible.canonical["Pip"]]
    assert pip.gender == "male" and "small boy in a cap" in pip.description
    assert text.index("a small boy") in {o for o, name in bible.mentions(text) if name == pip.name}


def test_a_name_read_out_and_owned_names_the_one_who_owns_it() -> None:
    """ "Mr. Silas Vane," read off a parcel, then "That's me," said by the newcomer: he is Silas Vane
    from his first mention (the carrier only looked up), a man by the Mr."""
    text = (
        "The coach stopped at the inn. The carrier only looked up from his ledger.\n\n"
        'The landlady read the label aloud: "Mr. Silas Vane."\n\n'
        '"That\'s me," said the carrier. Silas Vane took the parcel. Silas Vane paid.'
    )
    assert [n.name for n in namings(text, "en")] == ["Silas Vane"]
    bible = build_bible([text], "en")
    silas = bible.by_name[bible.canonical["Silas Vane"]]
    assert silas.gender == "male"
    assert text.index("The carrier") in {o for o, name in bible.mentions(text) if name == silas.name}


def test_a_surname_and_a_given_name_said_apart_name_a_person_met_once() -> None:
    """我姓许，单名一个澄字 and 在下姓陆名青 give 许澄 and 陆青; in a short story such a name is a person
    even when the narration names him once (the young man brought in before is he)."""
    assert [n.name for n in namings("“我姓许，单名一个澄字。”", "zh")] == ["许澄"]
    assert [n.name for n in namings("“在下姓陆名青，路过宝地。”", "zh")] == ["陆青"]
    one = "傍晚，一个穿青布长衫的书生走进茶馆，要了一壶茶。\n\n掌柜的给他倒茶。书生低头喝茶，不说话。"
    two = "第二天，书生又来了。\n\n“在下姓陆名青，路过宝地。”书生说。\n\n陆青喝完茶，起身走了。"
    bible = build_bible([one, two], "zh")
    assert "陆青" in bible.by_name, [c.name for c in bible.characters]
    assert "青布长衫" in bible.by_name["陆青"].description
    assert "陆青" in {name for _, name in bible.mentions(one)}


def test_the_stranger_of_a_later_chapter_is_the_one_met_again_there() -> None:
    """Chapter two meets chapter one's woman in the green hood again, then says "the stranger" of
    her before she gives her name: that shot is hers (Orla Finch) too."""
    one = "At dusk a woman in a green hood stood by the mill race. Kit Dunne watched her from the bridge."
    two = (
        "The woman in the green hood came again at noon. Kit Dunne went down to her.\n\n"
        '"You\'re soaked," said Kit Dunne. The stranger only smiled.\n\n'
        '"Who are you?" asked Kit Dunne.\n\n"Orla," she said. "Orla Finch."'
    )
    bible = build_bible([one, two], "en")
    orla = bible.canonical["Orla"]
    mentioned_at = {o for o, name in bible.mentions(two) if name == orla}
    assert two.index("The stranger") in mentioned_at, bible.unnamed_spans(two)
    assert one.index("a woman") in {o for o, name in bible.mentions(one) if name == orla}


def test_the_one_who_reads_names_out_is_not_the_one_called() -> None:
    """The farmer reads out "Jem Rook." and "Here," says a boy: the boy is Jem Rook, the farmer no
    one; "Tom Hale." that nobody answers names neither."""
    text = (
        'At the supper the farmer read out the names of the hands. "Jem Rook." "Here," said a boy at '
        'the end of the table. "Tom Hale." Nobody answered.\n\n'
        '"Tom Hale is gone, sir," said Jem Rook. Jem Rook ate his bread. Tom Hale was never seen again.'
    )
    bible = build_bible([text], "en")
    named = {text[s:e]: n for s, e, n in bible.unnamed_spans(text)}
    assert "the farmer" not in named, named
    assert bible.by_name[bible.canonical["Jem Rook"]].gender == "male"


def test_the_stranger_of_every_chapter_is_one_person_and_not_the_newcomer() -> None:
    """A story calls its hero "the stranger" in every chapter: in chapter two, after a pedlar comes
    up the lane, "the stranger" is still the hero, named in chapter three, never the pedlar."""
    one = "The stranger came to the farm in June. He asked for work. Old Mr. Pryce gave him the loft."
    two = (
        "A pedlar with a cart of pots came up the lane. The stranger went out to meet him.\n\n"
        '"A man I knew once," said the stranger.'
    )
    three = (
        '"Who are you, then?" asked Mr. Pryce at supper.\n\n"Hale," said the stranger. "Tom Hale."\n\n'
        "Tom Hale stayed on until the frost."
    )
    bible = build_bible([one, two, three], "en")
    tom = bible.canonical["Tom Hale"]
    assert one.index("The stranger") in {o for o, n in bible.mentions(one) if n == tom}
    two_tom = {o for o, n in bible.mentions(two) if n == tom}
    assert two.index("The stranger") in two_tom and two.index("A pedlar") not in two_tom


def test_a_noun_for_a_man_tells_the_sex_of_the_one_it_names() -> None:
    """一个老头 then 我姓韩，叫韩老栓: 老头 says a man, as 汉子 and 樵夫 do, and so 韩老栓 is one; a
    different old man of a chapter before (一个卖糖葫芦的老头) is not him."""
    one = "一个卖糖葫芦的老头在铺子门口歇脚，喝了一碗水就走了。"
    two = "过了半个月，又来了一个老头，背着一捆柴。\n\n“我姓韩，叫韩老栓，是山那边的。”\n\n韩老栓把柴放下。"
    bible = build_bible([one, two], "zh")
    assert bible.by_name["韩老栓"].gender == "male"
    assert "韩老栓" not in {name for _, name in bible.mentions(one)}
