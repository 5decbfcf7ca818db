"""Whose pronoun, whose looks, whose time: evidence read by the grammar around a mention, on short
made-up stories in both languages that no rule was fitted to.

Invariants:
- a possessor (孙掌柜的女儿…, Tom's sister…) is not what its sentence goes on about: the next
  sentence's pronoun and looks belong to the one possessed, never to the possessor;
- a pronoun someone's verb acts on (把他, 给她, "looked at her") says nothing of the name before it,
  and a pronoun tagging a quotation is the speaker's ("Mr Lowe," he said), not the last named;
- a verb taking the person's own thing says their sex (Ellen tied her bonnet);
- a time of another day (明天一早, tomorrow morning, every night) is not the shot's time of day;
- in a short story, a given name with no surname that tags quotations is a character, and so is a
  common word someone gives as their own name (“我叫铁锁。”).
"""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible
from pipeline_kit.text.moments import someones
from pipeline_kit.text.shots import split_chapter


def _genders(text: str, lang: str) -> dict[str, str | None]:
    return {c.name: c.gender for c in build_bible([text], lang).characters}


def test_zh_the_daughter_after_her_fathers_name_takes_the_next_sentences_pronoun_and_looks() -> None:
    """赵掌柜的女儿春桃…。她十七八岁…: 春桃 is female with those looks; 赵掌柜 gets neither."""
    story = (
        "镇上的油坊是赵掌柜开的。赵掌柜五十来岁，矮胖，总穿一件黑马褂。\n\n"
        "这天赵掌柜把伙计叫到跟前，给他两块钱。“去东街买盐。”赵掌柜说。\n\n"
        "赵掌柜的女儿春桃从里屋出来。她十七八岁，圆脸，穿一件红袄。\n\n"
        "“爹，盐我去买吧。”春桃说。\n\n"
        "赵掌柜点点头。春桃拿了篮子出门去了。\n"
    )
    bible = build_bible([story], "zh")
    people = {c.name: c for c in bible.characters}
    assert people["春桃"].gender == "female"
    assert "十七八岁" in people["春桃"].description and "十七八岁" not in people["赵掌柜"].description
    assert people["赵掌柜"].gender != "female"


def test_zh_a_pronoun_the_verb_acts_on_is_someone_else() -> None:
    """吴大夫把她扶起来 / 吴大夫给她倒了碗水: 她 is the one helped, not 吴大夫, who is a man by 他 opening
    his own clauses."""
    story = (
        "吴大夫进了院子，看见一个妇人倒在井边。吴大夫把她扶起来，给她倒了碗水。\n\n"
        "吴大夫看了看她的脸色，他皱起眉头，说：“你病得不轻。”\n\n"
        "吴大夫背起药箱，他一路小跑回了药铺。\n"
    )
    assert _genders(story, "zh")["吴大夫"] == "male"


def test_en_a_speech_tag_after_a_quotation_is_the_speakers_not_the_last_named() -> None:
    """Ellen walked out to meet him. "Good day," he said: he is the visitor, and Ellen, whose own
    sentences say she (and "tied her bonnet"), is a woman."""
    story = (
        "Ellen Marsh tied her bonnet and went down to the gate. A carriage was coming up the lane.\n\n"
        "Ellen walked out to meet it.\n\n"
        '"Good day, Miss Marsh," he said, touching his hat. "Is your brother at home?"\n\n'
        '"He is in the fields," Ellen said. She pointed past the barn.\n\n'
        "Ellen watched until he was out of sight, then she went back to the kitchen.\n"
    )
    assert _genders(story, "en")["Ellen"] == "female"


def test_en_whose_apostrophe_s_is_no_subject() -> None:
    """Tom's sister came in. She…: she is the sister's, not Tom's (a man by his own he)."""
    story = (
        "Tom Pryce sat by the fire. He was mending a boot. Tom's sister came in from the yard. "
        "She was shaking snow from her shawl.\n\n"
        '"Cold?" asked Tom. He did not look up. Tom put the boot down.\n'
    )
    assert _genders(story, "en")["Tom"] == "male"


def test_a_time_of_another_day_is_not_the_shots_time() -> None:
    """傍晚…让她明天一早送去: evening; At dusk … they would leave tomorrow morning: evening."""
    zh = split_chapter("傍晚，老周关了店门，把钥匙交给女儿，让她明天一早去开门。", "zh")
    en = split_chapter("At dusk Ruth shut the shop. They would leave tomorrow morning, she said to herself.", "en")
    assert [d.time_of_day for d in zh] == ["evening"]
    assert [d.time_of_day for d in en] == ["evening"]


def test_zh_given_names_that_tag_quotations_are_characters_of_a_short_story() -> None:
    """玉兰 and 根生 have no surname and never open a sentence ending in their speech, but each tags
    a quotation (“…”玉兰说，) and recurs: characters. 铁锁 is a common word (an iron lock) that a boy
    gives as his name (“我叫铁锁。”), then acts: a character too."""
    story = (
        "一\n\n河边有座磨坊。磨坊里住着玉兰和她哥哥根生。\n\n"
        "“今天的麦子磨完了吗？”根生问。\n\n“还差两袋。”玉兰说，“你先去吃饭。”\n\n"
        "门口站着一个孩子，光着脚。“你叫什么？”玉兰问。\n\n“我叫铁锁。”孩子说。\n\n"
        "二\n\n第二天一早，铁锁帮着扛麦袋。根生看了直笑。玉兰给铁锁端来一碗面。\n\n"
        "铁锁吃完面，又去扛麦袋。根生说：“这孩子有力气。”\n"
    )
    names = set(build_bible([story], "zh").canonical)
    assert {"玉兰", "根生", "铁锁"} <= names


def test_zh_an_unnamed_person_is_any_noun_for_a_person() -> None:
    """一个穿皮袄的胖子 and 一个瘦子 are someone, as 一个老汉 is; the nouns come from one table."""
    found = someones("门外进来一个穿皮袄的胖子，后面跟着一个瘦子。", "zh")
    assert [p.name for _, p in found] == ["胖子", "瘦子"]


def test_zh_a_surname_and_a_role_the_role_never_alone_is_somebody() -> None:
    """郑保管员 and 马大队长 are only ever a surname and an office (保管员 is never met alone): each is a
    character; 队长 alone, said once, is nobody."""
    story = (
        "场院里堆满了麦子。郑保管员坐在桌子后面打算盘，马大队长背着手走来走去。\n\n"
        "“今年能交多少？”马大队长问。\n\n“一千二百斤。”郑保管员说。\n\n"
        "马大队长点点头，把烟袋锅在鞋底上磕了磕。郑保管员又拨了一遍算盘。队长说过的话没人敢改。\n"
    )
    names = set(build_bible([story], "zh").canonical)
    assert {"郑保管员", "马大队长"} <= names and "队长" not in names


def test_zh_someone_came_with_a_bare_classifier() -> None:
    """村里来了个年轻人 brings in a young man as 一个年轻人 does; 他是个好人 (what he is) brings in nobody."""
    found = someones("这年秋天，村里来了个年轻人，背着一个帆布包。", "zh")
    assert [(p.name, p.described) for _, p in found] == [("年轻人", "一个年轻人")]
    assert someones("他是个好人。", "zh") == []


def test_en_a_titled_surname_is_the_one_full_name_of_that_sex_ending_in_it() -> None:
    """Miss Marsh is Ellen Marsh (a woman, the only full name ending in Marsh); Mr. Brand, a man, is
    not Lucy Brand, a woman he takes across: one character each. A full name met once never
    makes a second person of its first name (Lucy Brand is Lucy)."""
    ellen = (
        "Ellen Marsh tied her bonnet and went down to the gate. A carriage was coming up the lane.\n\n"
        '"Good day, Miss Marsh," the doctor said. Ellen smiled. She opened the gate.\n\n'
        '"Is your father well, Miss Marsh?" Ellen shook her head. Miss Marsh had not slept. Ellen led him in.'
    )
    lucy = (
        "Lucy Brand crossed on the ferry every morning since she was nine. Mr. Brand owned the boat.\n\n"
        '"Sit down," said Mr. Brand. Lucy sat down. She watched the water. Mr. Brand cast off. Lucy laughed.'
    )
    assert build_bible([ellen], "en").canonical["Marsh"] == "Ellen"
    bible = build_bible([lucy], "en")
    assert bible.canonical["Lucy Brand"] == "Lucy" and bible.canonical["Brand"] == "Brand"
    assert bible.by_name["Lucy"].gender == "female" and bible.by_name["Brand"].gender == "male"


def test_zh_people_named_where_a_story_names_people_whatever_their_names() -> None:
    """阿旺 is called (“阿旺，回家了！”), 秋云 tags a quotation before it (秋云喊道：“), 小河 follows a
    kinship word (女儿小河) and ends like a place (河): each recurs and is a character; 大嫂, called
    the same way, is a noun for a person and nobody's name."""
    story = (
        "一\n\n山坡上的茶园里，阿旺和他媳妇秋云一早就在采茶。阿旺四十岁，黑脸膛，戴一顶破草帽。\n\n"
        "女儿小河蹲在地头，捉蚂蚱玩。\n\n"
        "二\n\n太阳落山了，秋云喊道：“阿旺，回家了！”\n\n"
        "“大嫂，你先走。”阿旺头也不抬，“我把这一垄采完。”\n\n"
        "秋云背起竹篓，拉着小河下了山。阿旺又采了一会儿，才扛着锄头回去。小河跑在最前头。\n"
    )
    names = set(build_bible([story], "zh").canonical)
    assert {"阿旺", "秋云", "小河"} <= names and "大嫂" not in names


def test_en_a_speech_tag_after_ones_own_action_is_ones_own_after_ones_own_line_the_others() -> None:
    """Tobias looked at the water. "Cold," he said: he is Tobias, who acted last. "What is that?"
    Ruth asked. "A compass," he said: the one who answers is the other speaker, never Ruth."""
    story = (
        "Tobias Reed walked down to the jetty. At the end of it, Tobias looked at the black water.\n\n"
        '"Cold tonight," he said.\n\n'
        "Ruth Vane came down the steps with a lamp. Then Ruth stood beside the boat.\n\n"
        '"What is that?" Ruth asked.\n\n"A compass," he said.'
    )
    bible = build_bible([story], "en")
    tobias, ruth = (bible.by_name[bible.canonical[n]] for n in ("Tobias", "Ruth"))
    assert tobias.gender == "male" and ruth.gender != "male"
