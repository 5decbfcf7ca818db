"""A description says what a person looks like, as a description would (in a green coat, not
"wore a green coat"), and a person's he or she is theirs, not the one their sentence acts on.

Made-up texts in both languages; each rule beside a sentence of the same shape it must not take.
"""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible
from pipeline_kit.text.zh_subjects import built_like_a_name


def test_english_looks_read_as_a_description_and_the_apposition_after_what_she_is() -> None:
    """ "She wore a grey cloak" describes her "in a grey cloak"; "She was the smith's wife, a tall
    woman of forty" gives "a tall woman of forty", not "the smith's wife"."""
    text = (
        "Ida Venn opened the shutters. She was the smith's wife, a tall woman of forty with red hands. "
        "Ida Venn smiled.\n\nOwen Reeve came in from the yard. Owen Reeve wore a grey cloak. Owen Reeve sat."
    )
    bible = build_bible([text], "en")
    assert bible.by_name["Ida Venn"].description.startswith("a tall woman of forty")
    assert bible.by_name["Owen Reeve"].description == "in a grey cloak"


def test_a_pronoun_after_a_sentence_acting_on_someone_is_that_one_s() -> None:
    """ "Ida ran to him. He was pale": the he is the one she ran to, never Ida's (she is a woman by
    her own she elsewhere, whatever follows her acting on a man)."""
    text = (
        "Ida Venn looked up. She was tired. Ida Venn ran to him. He was pale and holding his arm. "
        "Ida Venn knelt. Ida Venn ran to him. He groaned."
    )
    assert build_bible([text], "en").by_name["Ida Venn"].gender == "female"


def test_chinese_looks_in_her_own_sentence_and_features_without_de() -> None:
    """张婶扶着门框站在门口，她五十多岁了，头发全白: the looks after 她 in her own sentence are hers, and
    拄着/扶着 stops where she starts doing (站在门口); 圆脸，大眼睛 are features as 圆圆的脸 is."""
    text = (
        "张婶扶着门框站在门口，她五十多岁了，头发全白，穿一件灰布褂子。张婶喊道：“吃饭了！”\n"
        "张婶的闺女春兰走过来。她是个俊俏的姑娘，圆脸，大眼睛，说话像唱歌。“…来了。”春兰说。"
    )
    bible = build_bible([text], "zh")
    zhang = bible.by_name[bible.canonical["张婶"]].description
    assert "五十多岁了" in zhang and "头发全白" in zhang and "站在门口" not in zhang
    chun = bible.by_name[bible.canonical["春兰"]]
    assert "圆脸" in chun.description and "大眼睛" in chun.description and chun.gender == "female"


def test_kinship_before_a_name_at_a_sentence_start_tells_the_sex() -> None:
    """ "His sister Maud…" opens a sentence as "his sister Maud" does inside one: Maud is a woman."""
    text = "Ned Hale ran in. His sister Maud followed him. Maud laughed. Ned Hale sat. Maud sat."
    bible = build_bible([text], "en")
    assert bible.by_name[bible.canonical["Maud"]].gender == "female"


def test_a_short_story_s_full_name_opening_clause_after_clause_is_a_person() -> None:
    """钱秀梅 opens three clauses and never speaks after a colon nor is met as an object: in a short
    story a surname and two characters opening clause after clause is a person (a novel needs more)."""
    text = "钱秀梅坐在窗前缝衣裳。她的丈夫蹲在门口。\n钱秀梅放下针线，“饭好了。”\n外面下起了雨。钱秀梅站起来关窗。"
    bible = build_bible([text], "zh")
    assert "钱秀梅" in bible.by_name


def test_a_given_name_jieba_knows_as_a_rare_word_still_makes_a_full_name() -> None:
    """杜春生 opens clause after clause in a short story: 春生 is in jieba's dictionary, but too rare
    a word to be anything but a given name; 马车上 opening as often is a cart, not 马 车上."""
    text = (
        "杜春生挑着水从井边回来。马车上堆着柴火。\n杜春生放下水桶，擦了一把汗。马车上的骡子打了个响鼻。\n"
        "天阴了。杜春生把柴火搬进屋。马车上空了。"
    )
    bible = build_bible([text], "zh")
    assert "杜春生" in bible.by_name and "马车上" not in bible.holders


def test_looks_are_the_person_s_own_not_their_kin_s_nor_the_one_they_carry() -> None:
    """In 狗剩蹲着，他爹拄着一根拐棍…, the stick is 他爹's, not 狗剩's; a noun-named person described
    before it (一个穿红袄的小丫头) has those looks, and the looks clauses after (两根小辫子…); 背着一个孩子
    is what someone does, not their looks, though 满脸胡子 is."""
    text = (
        "一个穿红袄的小丫头跑进院子，两根小辫子翘着。小丫头喊：“狗剩哥！”小丫头笑了。小丫头跑了。\n"
        "狗剩蹲在墙根，他爹拄着一根拐棍站在门口。狗剩站起来。狗剩说：“来了。”\n"
        "一个汉子走进院子，满脸胡子，背着一个孩子。汉子说：“俺叫高大顺。”高大顺放下孩子。高大顺笑了。"
    )
    bible = build_bible([text], "zh")
    assert "拐棍" not in bible.by_name["狗剩"].description
    girl = bible.by_name["小丫头"].description
    assert "穿红袄" in girl and "辫子" in girl, girl
    man = bible.by_name["高大顺"].description
    assert "满脸胡子" in man and "孩子" not in man, man


def test_a_name_once_in_each_of_two_chapters_is_someone() -> None:
    """Mr. Pell, named once in each of two chapters (never twice in one), is a character, as is the
    given name after a kinship word inside another's name (罗二娘的儿子狗娃: 娘 of 罗二娘 is no kin)."""
    chapters = [
        "The mill stood by the weir. Old Mr. Pell, who owned it, was asleep in his chair.\n\nThe wheel turned.",
        "In the morning the flood came. Mr. Pell ran out in his nightshirt, shouting for help.",
    ]
    assert "Pell" in build_bible(chapters, "en").canonical
    text = "罗二娘的儿子狗娃跑过来。狗娃摔了一跤。\n罗二娘喊：“狗娃！”狗娃爬起来又跑。"
    assert "狗娃" in build_bible([text], "zh").by_name


def test_a_familiar_name_set_after_what_the_person_does_is_someone() -> None:
    """搬运工大孙 (大 and a surname, set after a trade) is a person though he opens only two clauses
    and is met as an object (交给大孙); 大王, a word, is no such name."""
    text = (
        "仓库里只有两个人：保管员老郑和搬运工大孙。大孙力气大，一个人能扛两袋米。\n"
        "老郑把钥匙交给大孙，自己回家吃饭去了。\n大孙锁好门，坐在台阶上抽烟。"
    )
    bible = build_bible([text], "zh")
    assert "大孙" in bible.by_name, [c.name for c in bible.characters]
    assert not built_like_a_name("大王")  # a word: the king, not a big man named 王
