"""The bible of short stories nobody tuned for (issue 28, items 1-2): looks told in a sentence a
pronoun opens, a run of looks clauses kept whole, an unnamed person later named taking their looks,
and genders from a short story's little evidence, given only to the person the text means."""

from __future__ import annotations

from pipeline_kit.text.cast import build_bible, cast_drafts
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.text.shots import ShotDraft
from tests.conftest import CORPUS

ZH_FIELD = (
    "天刚亮，孙长顺就扛着扫帚到了晒谷场。他四十来岁，矮胖，一脸络腮胡子，肩上搭着一条蓝毛巾。孙长顺把谷子摊开。\n"
    "过了一会儿，孙长顺的闺女孙小梅也来了。她是个十五岁的丫头，瘦瘦的，扎着两根辫子，提着篮子进了场院。"
    "孙小梅蹲下来翻谷子。\n"
    "“爹，今天能晒干吗？”孙小梅问。孙长顺说：“能。”\n"
    "晌午，一个戴草帽的瘦高个子背着褡裢从村口走来。他就是村长钱德旺。钱德旺走到场边，咳嗽了一声。\n"
    "“长顺，粮站明天来收谷子。”钱德旺说。孙长顺点点头，孙小梅却皱起了眉头。钱德旺又说了几句。\n"
)

ZH_TWO_MEN = (
    "吴大成见了周老七。他五十来岁，秃顶。吴大成说：“走吧。”周老七道：“好。”\n"
    "吴大成挑起担子。周老七撑开了船。吴大成坐在船头。周老七说：“坐稳。”\n"
)

EN_FERRY = "\n\n".join(
    [
        "Agnes Pell kept the ferry at Dunmore. She was a broad woman of fifty, with red hands and a grey shawl "
        "over her head. Agnes Pell rowed the first crossing before dawn.",
        "A boy waited on the far landing, barefoot, in a coat too big for him. The boy, whose name was Simon, "
        "carried a bundle. Agnes Pell took his penny.",
        "Halfway over, a man in a black hat hailed them from a skiff. The stranger was Josiah Marsh. "
        "Josiah Marsh climbed aboard, while the other was a long, thin, sad-faced man, with a very shiny hat.",
        '"You\'ll sink us," said Agnes Pell. Josiah Marsh laughed. Simon stared at him. Agnes Pell rowed on. '
        "Simon looked back once. Josiah Marsh went off toward the mill.",
    ]
)

EN_LETTER = (
    "Ruth Calder watched Owen Brisk. She laughed and turned back to the shop.\n\n"
    '"Goodbye," said Owen Brisk. Ruth Calder opened the parcel. She smiled. Owen Brisk boarded the steamer. '
    "Ruth Calder read the letter twice. Owen Brisk stood at the rail."
)


def test_zh_looks_in_the_sentence_a_pronoun_opens_and_the_whole_run_of_looks_clauses() -> None:
    """他四十来岁，矮胖，一脸络腮胡子，肩上搭着一条蓝毛巾 right after a sentence naming one man is his
    looks, every clause of the run (age, build, face, what he carries); 她是个十五岁的丫头 goes on
    through 瘦瘦的，扎着两根辫子 and stops at what she does (提着篮子进了场院)."""
    bible = build_bible([ZH_FIELD], "zh")
    sun, mei = bible.by_name["孙长顺"], bible.by_name["孙小梅"]
    for phrase in ("四十来岁", "矮胖", "一脸络腮胡子", "肩上搭着一条蓝毛巾"):
        assert phrase in sun.description
    assert mei.description.startswith("十五岁的丫头，瘦瘦的，扎着两根辫子")
    assert "进了场院" not in mei.description and "篮子" not in mei.description
    assert sun.gender == "male" and mei.gender == "female"


def test_zh_an_unnamed_person_later_named_gives_that_name_his_looks() -> None:
    """一个戴草帽的瘦高个子…。他就是村长钱德旺: the unnamed man's looks are 钱德旺's, and 他就是 says he
    is a man."""
    bible = build_bible([ZH_FIELD], "zh")
    qian = bible.by_name["钱德旺"]
    assert "戴草帽的瘦高个子" in qian.description and qian.gender == "male"


def test_zh_a_pronoun_after_a_sentence_naming_two_men_describes_neither() -> None:
    """吴大成见了周老七。他五十来岁: 他 may be either man, so neither gets the looks (nor, by this
    他, a gender)."""
    bible = build_bible([ZH_TWO_MEN], "zh")
    for name in ("吴大成", "周老七"):
        assert "五十来岁" not in bible.by_name[name].description
        assert "秃顶" not in bible.by_name[name].description


def test_en_describing_clauses_go_on_after_the_looks_and_stop_at_another_subject() -> None:
    """ "a broad woman of fifty, with red hands and a grey shawl" keeps its with-clause; a with-clause
    after "while the other was…" is the other's, not Josiah Marsh's."""
    bible = build_bible([EN_FERRY], "en")
    agnes, josiah = bible.by_name["Agnes Pell"], bible.by_name["Josiah Marsh"]
    assert "a broad woman of fifty" in agnes.description and "with red hands and a grey shawl" in agnes.description
    assert "shiny hat" not in josiah.description


def test_en_the_unnamed_person_the_text_then_names_is_that_person() -> None:
    """ "A boy waited…, barefoot, in a coat too big for him. The boy, whose name was Simon,": the
    boy's looks and sex are Simon's; "a man in a black hat… The stranger was Josiah Marsh": his."""
    bible = build_bible([EN_FERRY], "en")
    simon, josiah = bible.by_name["Simon"], bible.by_name["Josiah Marsh"]
    assert "barefoot" in simon.description and "in a coat too big for him" in simon.description
    assert simon.gender == "male"
    assert "a man in a black hat" in josiah.description and josiah.gender == "male"


def test_en_a_pronoun_goes_to_the_person_the_text_means_not_the_last_name() -> None:
    """Ruth Calder watched Owen Brisk. She laughed: the she is no evidence that Owen is a woman
    (Ruth is one: "Ruth Calder opened the parcel. She smiled."), and a shot that says "She laughed"
    casts Ruth, the woman named, not Owen, named last."""
    bible = build_bible([EN_LETTER], "en")
    assert bible.by_name["Owen Brisk"].gender != "female"
    assert bible.by_name["Ruth Calder"].gender == "female"
    cut = EN_LETTER.index("She laughed")
    drafts = [
        ShotDraft(1, 1, 0, cut, None, None, (), False, 3.0),
        ShotDraft(2, 1, cut, EN_LETTER.index("\n\n"), None, None, (), False, 3.0),
    ]
    assert cast_drafts(EN_LETTER, drafts, bible)[1].characters == ("Ruth Calder",)


def test_corpus_describing_clauses_stay_with_their_own_person() -> None:
    """Sherlock Holmes: "Peter Jones, the official police agent, while the other was a long, thin,
    sad-faced man, with a very shiny hat" gives Jones no hat; 西游记's 老母今年八十三岁 is said once."""
    holmes = (CORPUS / "en_adventures_of_sherlock_holmes.txt").read_text(encoding="utf-8")
    en = build_bible([c.text for c in find_chapters(holmes, "x").chapters], "en")
    assert "shiny hat" not in en.by_name["Jones"].description
    xyj = (CORPUS / "zh_xiyouji.txt").read_text(encoding="utf-8")
    zh = build_bible([c.text for c in find_chapters(xyj, "x").chapters], "zh")
    assert zh.by_name["老母"].description.count("八十三岁") == 1


def test_zh_a_given_name_opening_with_a_verb_is_still_a_name() -> None:
    """钱有福 (a surname, then 有福) who speaks after a quotation is a person, though 有 is a verb; a
    horse that 有些累 three times is no 马有些."""
    text = (
        "钱有福走到场边，咳嗽了一声。“粮站明天来收谷子。”钱有福说。孙长顺点点头。"
        "钱有福又说了几句。“知道了。”孙长顺说。钱有福背着手走了。\n"
        "马有些累了。马有些饿了，站着不动。马有些渴了。孙长顺牵马去喝水。"
    )
    bible = build_bible([text], "zh")
    assert "钱有福" in bible.by_name
    assert not any(name.startswith("马有") for name in bible.canonical)


def test_the_identified_persons_looks_follow_the_noun_and_a_bare_someone_gives_none() -> None:
    """一个汉子…，穿一件破棉袄，腰里别着一把斧头。这人便是樵夫李石头: the man's looks clauses are 李石头's;
    一个人…。那人就是郭二 says nothing of looks, so 郭二 gets none. "The woman in the blue bonnet was
    Hester Lyle" gives her the bonnet; "Someone stood… The figure was Amos Kerr" gives him nothing."""
    zh = (
        "傍晚，一个汉子从山上走下来，穿一件破棉袄，腰里别着一把斧头。这人便是樵夫李石头。李石头放下柴担，坐下歇脚。\n"
        "“天要下雨了。”李石头说。过了一会儿，一个人从林子里走出来。那人就是郭二。郭二说：“石头哥，等等我。”"
        "李石头笑了。郭二也笑了。李石头站起身。郭二跟着他下山。\n"
    )
    bible = build_bible([zh], "zh")
    assert "穿一件破棉袄" in bible.by_name["李石头"].description
    assert "腰里别着一把斧头" in bible.by_name["李石头"].description
    assert bible.by_name["郭二"].description == ""
    en = (
        "At noon a woman in a blue bonnet came down the lane. The woman in the blue bonnet was Hester Lyle. "
        'Hester Lyle stopped at the gate. "Good day," said Hester Lyle.\n\n'
        'Someone stood by the well. The figure was Amos Kerr. Amos Kerr nodded. "Day," said Amos Kerr. '
        "Hester Lyle smiled. Amos Kerr drew water."
    )
    en_bible = build_bible([en], "en")
    assert "a woman in a blue bonnet" in en_bible.by_name["Hester Lyle"].description
    assert en_bible.by_name["Hester Lyle"].gender == "female"
    assert en_bible.by_name["Amos Kerr"].description == ""


def test_a_long_run_of_looks_is_kept_to_the_descriptions_limit() -> None:
    """A run of five looks clauses (age, build, face, hair, dress) is one description, not its first four."""
    text = (
        "林秋月推开了店门。她三十来岁，高高的个子，白白的脸，一头乌黑的头发，穿着一件蓝底白花的旗袍。"
        "林秋月在柜台后坐下。林秋月说：“来了。”\n"
    )
    bible = build_bible([text], "zh")
    description = bible.by_name["林秋月"].description
    assert description.startswith("三十来岁") and description.endswith("穿着一件蓝底白花的旗袍")


def test_en_a_role_the_text_says_is_a_named_person_is_that_persons_alias() -> None:
    """ "The stranger was Josiah Marsh": the stranger who laughs and asks later is Josiah Marsh; "The
    man was Abel Dunn" makes no alias of "the man", who may be anyone."""
    text = (
        "A man in a black hat hailed them from a skiff. The stranger was Josiah Marsh. Josiah Marsh climbed aboard.\n\n"
        '"You\'ll sink us," said Agnes Pell. The stranger laughed. Agnes Pell rowed on. "Where to?" asked the '
        "stranger. Agnes Pell said nothing. Josiah Marsh went off toward the mill.\n\n"
        'A man waited at the mill. The man was Abel Dunn. "Late," said Abel Dunn. Abel Dunn frowned. Abel Dunn left.'
    )
    bible = build_bible([text], "en")
    assert bible.canonical["the stranger"] == "Josiah Marsh"
    assert "the man" not in bible.canonical and "The man" not in bible.canonical
