"""Who a shot stages: the Characters line holds the people its Action line shows, resolved once.

Made-up short texts in English and Chinese, each paragraph one shot, with a hand-made bible, so
every rule is checked where nothing else could make it pass: the pronoun rule (one, shared by
the Action and Characters lines), unnamed people as referents and on the Characters line, they,
moments that open at their subject, and people only spoken of left out.
"""

from __future__ import annotations

import re

from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots
from pipeline_kit.text import ingest_file, sample_book_path, split_book
from pipeline_kit.text.cast import Bible, Character, cast_drafts
from pipeline_kit.text.castdb import load_characters
from pipeline_kit.text.moments import MOMENT_SEP, Who, someones
from pipeline_kit.text.prompts import Templates, moments, narration_only
from pipeline_kit.text.shots import ShotDraft
from pipeline_kit.text.splitter import ChapterShots, build_shots, reprompt

STORIES = Path(__file__).with_name("stories")
EN_CAST = (
    Character("Mara", gender="female"),
    Character("Tobias", gender="male"),
    Character("Old Hetty", ("Hetty",), gender="female"),
)
ZH_CAST = (
    Character("阿Ｋ", gender="male"),
    Character("秀兰", gender="female"),
    Character("老陈", gender="male"),
    Character("掌柜", gender="male"),
)


def _built(text: str, lang: str, bible: Bible) -> ChapterShots:
    """Each paragraph of `text` as one shot of one scene, split with `bible`."""
    drafts, at = [], 0
    for k, paragraph in enumerate(text.split("\n\n"), 1):
        start = text.index(paragraph, at)
        at = start + len(paragraph)
        drafts.append(ShotDraft(k, 1, start, at, None, None, (), False, 6.0))
    return build_shots(
        bookcode="b",
        title="t",
        lang=lang,
        chapter=1,
        text=text,
        drafts=cast_drafts(text, drafts, bible),
        templates=Templates.load(),
        bible=bible,
    )


def _lines(prompt: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in prompt.splitlines()[1:] if ": " in line)


def _shots(text: str, lang: str, cast: tuple[Character, ...]) -> list[tuple[str, tuple[str, ...], dict[str, str]]]:
    """Each paragraph of `text` as one shot of one scene: (its text, its stored characters, its
    image prompt's lines by label), split with a bible of `cast`."""
    built = _built(text, lang, Bible(lang, cast))
    out = []
    for shot in built.shots:
        out.append((shot.text, shot.characters, _lines(shot.prompt)))
    assert not set(built.sheet_prompts) - {c.name for c in cast}  # the unnamed get no sheet of their own
    return out


def _who(genders: dict[str, str]) -> Who:
    return Who(lambda s: sorted((m.start(), n, n) for n in genders for m in re.finditer(re.escape(n), s)), genders)


def test_the_characters_line_stages_whom_the_action_lines_pronoun_means() -> None:
    """One pronoun rule: a shot whose he or she means someone named in an earlier shot (even a
    shot that names somebody else) stages that person on its Characters line and in its stored
    characters (their sheet is its reference), the very person its Action line names."""
    text = "Mara climbed onto the rock.\n\nTobias waited below. She ran down the hundred steps."
    shot = _shots(text, "en", EN_CAST)[1]
    assert shot[2]["Action"] == "Tobias waited below; Mara ran down the hundred steps"
    assert shot[1] == ("Tobias", "Mara")
    assert shot[2]["Characters"].rstrip(".") == "Tobias; Mara"


@pytest.mark.parametrize(
    ("text", "lang", "moment", "staged", "wrong"),
    [
        (
            "Tobias rowed to the rock.\n\nAn old man in a blue coat stood at the tiller.\n\n"
            "When he saw the turning beam above him, he lifted one hand and waved his cap.",
            "en",
            "the old man lifted one hand and waved his cap",
            "an old man in a blue coat",
            "Tobias",
        ),
        (
            "阿Ｋ走进庄子。\n\n一个白头发的老妇人正坐在门口纺线。\n\n她站起来，上下打量阿Ｋ。",
            "zh",
            "老妇人站起来，上下打量阿Ｋ",
            "一个白头发的老妇人",
            "秀兰",
        ),
    ],
)
def test_an_unnamed_person_is_a_pronouns_referent_and_is_staged(
    text: str, lang: str, moment: str, staged: str, wrong: str
) -> None:
    """A person brought in without a name (An old man in a blue coat…, 一个白头发的老妇人) is the
    he/she that follows, not the last named person of that gender: the moment says what they are
    (the old man), and the Characters line stages them by their description, with no sheet."""
    shots = _shots(text, lang, EN_CAST if lang == "en" else ZH_CAST)
    introduced, after = shots[1], shots[2]
    assert staged in introduced[2]["Characters"]
    assert after[2]["Action"].startswith(moment), after
    assert staged in after[2]["Characters"] and wrong not in after[2]["Characters"] and wrong not in after[1]


@pytest.mark.parametrize("clothes", ["a red headscarf", "a hooded cloak", "a shed-brown coat"])
def test_an_unnamed_persons_description_runs_to_its_noun(clothes: str) -> None:
    """An adjective ending in -ed (red, hooded) is no verb: the Characters line says what the
    person wears whole, never "an old woman in a"."""
    (found,) = someones(f"At the well, an old woman in {clothes} was drawing water.", "en")
    assert found[1].described == f"an old woman in {clothes}"


def test_an_unnamed_person_the_text_names_next_is_that_character() -> None:
    """船头坐着一个老汉。老陈是个黑瘦的老船夫: the next sentence names the man it brought in, so
    the shot stages 老陈 once, not 老陈 and 一个老汉; 一个人在走 (alone) is nobody brought in."""
    shot = _shots("船头坐着一个老汉，正在抽烟。老陈是个黑瘦的老船夫。", "zh", ZH_CAST)[0]
    assert shot[2]["Characters"].rstrip(".") == "老陈"
    assert not someones("阿Ｋ走出客栈，一个人在镇上走。", "zh")


def test_they_stages_the_people_of_the_scene_who_were_there() -> None:
    """They act (In the lamp room they found Hetty): the shot stages the people named in its
    scene before it, not only the one it names."""
    text = "Mara counted the steps, and Tobias followed with the lantern.\n\nIn the lamp room they found Old Hetty."
    shot = _shots(text, "en", EN_CAST)[1]
    assert set(shot[1]) == {"Old Hetty", "Mara", "Tobias"}


@pytest.mark.parametrize(
    ("text", "lang", "first"),
    [
        (
            "“Someone is here,” Tobias whispered. “Then they can help us,” said Mara, and she kept climbing.",
            "en",
            "Mara kept climbing",
        ),
        ("Tobias looked at Mara. Then he turned away.", "en", "Tobias turned away"),
        ("阿Ｋ道：“我从黑石岛来。” 正说着，一个姑娘提着灯笼跑下石阶。", "zh", "一个姑娘提着灯笼跑下石阶"),
    ],
)
def test_a_moment_opens_at_its_subject(text: str, lang: str, first: str) -> None:
    """A moment is a clause someone does, from its subject: never and/Then/When… before it, nor a
    clause that only sets up the next (正说着), nor a pronoun the text can name."""
    who = _who({"Mara": "female", "Tobias": "male", "阿Ｋ": "male"})
    assert moments(text, lang, who)[-1] == first


@pytest.mark.parametrize(
    ("text", "lang", "cast", "staged", "absent"),
    [
        ("“I saw it,” said Tobias. “Old Hetty will say it is the ghost again.”", "en", EN_CAST, "Tobias", "Old Hetty"),
        ("“Hetty, what are you doing out here?” asked Mara.", "en", EN_CAST, "Old Hetty", None),
        ("“Let them go, Tobias,” said Hetty.", "en", EN_CAST, "Tobias", None),
        ("秀兰道：“那是悦来客栈的周掌柜。我带你去。”", "zh", ZH_CAST, "秀兰", "掌柜"),
        ("秀兰道：“周掌柜，你外甥来了。”", "zh", ZH_CAST, "掌柜", None),
    ],
)
def test_someone_only_spoken_of_is_not_staged_and_someone_spoken_to_is(
    text: str, lang: str, cast: tuple[Character, ...], staged: str, absent: str | None
) -> None:
    """A person named only inside quoted speech is talked about, not there: no Characters line or
    sheet; one the speaker addresses by name (“Hetty, …”, “…, Tobias,” 周掌柜，…) is there."""
    shot = _shots(text, lang, cast)[0]
    assert staged in shot[1] and staged in shot[2]["Characters"]
    if absent:
        assert absent not in shot[1] and absent not in shot[2]["Characters"]


# Port Ellery: "Row them to the quay, Tom" stages the Grey Fox (Tom, named once in each of two chapters)
CORPUS = [("sample_book.txt", "en", 1), ("en_port_ellery.txt", "en", 5), ("zh_qingshui.txt", "zh", 0)]
_BAD_OPENING = {
    "en": re.compile(r"^(?:and|but|then|so|when|while|as|after|before|until|because|though|if|he|she)\b", re.I),
    "zh": re.compile(r"^(?:[他她](?!们)|然后|于是|[^，]{1,4}着，)"),
}
_SPOKEN_TO = r"(?:^[“\"]|,\s*)(?:[A-Z]\w*\.? )?{name}\s*[,.!?，！？。]"  # a title may come first: Miss Ardent


@pytest.mark.parametrize(("name", "lang", "spoken_to"), CORPUS)
def test_corpus_moments_open_at_a_subject_and_nobody_only_spoken_of_is_staged(
    sqlite_db: Database, name: str, lang: str, spoken_to: int
) -> None:
    """On the sample book and the two stories: no moment of an Action line opens with a
    conjunction, a subordinate clause or a pronoun; a character staged though its shot's narration
    never names it is a pronoun's referent or addressed by name in a quotation, `spoken_to` shots
    in all (“Hetty, what…”, “Let them go, Pike,”)."""
    path = sample_book_path() if name == "sample_book.txt" else STORIES / name
    bookcode = ingest_file(sqlite_db, path, name).bookcode
    split_book(sqlite_db, bookcode, progress=False)
    with sqlite_db.engine.connect() as conn:
        names = {c.name: c.names for c in load_characters(conn, bookcode)}
        rows = conn.execute(sa.select(shots.c.text, shots.c.characters, shots.c.inferred, shots.c.prompt)).all()
    addressed = 0
    for text, characters, inferred, prompt in rows:
        action = next(line for line in prompt.splitlines() if line.startswith("Action: "))[len("Action: ") :]
        assert not [m for m in action.split(MOMENT_SEP[lang]) if _BAD_OPENING[lang].match(m)], action
        plain = narration_only(text)
        for person in set(characters or ()) - set(inferred or ()):
            if not any(alias in plain for alias in names[person]):
                quoted = [q.group() for q in re.finditer(r"“[^”]*”|\"[^\"]*\"", text)]
                said_to = (rf"{_SPOKEN_TO.format(name=re.escape(a))}" for a in names[person])
                assert any(re.search(p, q) for p in said_to for q in quoted), (person, text)
                addressed += 1
    assert addressed == spoken_to


def test_they_that_only_is_something_stages_nobody() -> None:
    """They were admirable things: a they whose verb only says what they are is mostly things,
    and stages nobody; they were sitting is done, and stages the people there."""
    text = "Mara met Tobias on the quay.\n\nThey were admirable boats.\n\nThey were sitting by the fire."
    shots = _shots(text, "en", EN_CAST)
    assert shots[1][1] == () and set(shots[2][1]) == {"Mara", "Tobias"}


def test_a_prompt_rendered_afresh_stages_the_same_people() -> None:
    """A shot's prompts rendered again (the bible folded again, a person's edit) stage the unnamed
    person the split staged and name the same moment, from the shot's own text."""
    bible = Bible("en", EN_CAST)
    shot = _built("Tobias rowed out.\n\nAn old man in a blue coat stood at the tiller and waved.", "en", bible).shots[1]
    image, _ = reprompt(shot, title="t", lang="en", templates=Templates.load(), bible=bible)
    assert _lines(image)["Characters"] == _lines(shot.prompt)["Characters"] == "an old man in a blue coat."
    assert _lines(image)["Action"] == _lines(shot.prompt)["Action"]


@pytest.mark.parametrize(
    ("text", "described"),
    [
        ("Behind the mill she found a boy asleep in the straw, with a sack under his head.", "a boy"),
        ("By the well a woman in a grey shawl waited with two buckets.", "a woman in a grey shawl"),
        ("The old ferryman lifted the rope.", "the old ferryman"),
        ("His mother was at the door when he came in.", "his mother"),
        ("Down the lane a tall man with a lantern came towards them.", "a tall man with a lantern"),
        ("Nobody came in but old Mr. Fong from the tea house, who sat by the stove.", "old Mr. Fong"),
    ],
)
def test_someone_is_brought_in_by_any_grammar_that_introduces_a_person(text: str, described: str) -> None:
    """An unnamed person is brought in as a clause's subject wherever the clause starts (after a
    fronted place, too), as what someone finds, by a definite noun with an adjective, as kin by
    a possessive, and by a title and a name met too seldom for the bible: each becomes a referent
    described as the text does."""
    found = someones(text, "en")
    assert [p.described for _, p in found][:1] == [described]


@pytest.mark.parametrize(
    "text",
    [
        "The man went out.",  # "the man" alone is anyone: somebody brought in before, if anybody
        "She was a girl loved by everyone in the village.",  # what she is, not someone else
        "Her figure was outlined against the light.",  # a possessive brings in kin, not any noun
        "Mr. Sherlock Holmes came in, then Lord St. Simon.",  # a title before a longer name: the bible's
    ],
)
def test_no_one_is_brought_in_by_a_bare_noun_a_predicate_or_a_possessed_thing(text: str) -> None:
    """Only phrases that introduce a person count: a bare definite age-sex noun, a predicate
    noun and a possessive of a body or a thing bring in nobody."""
    assert someones(text, "en") == []


def test_the_person_brought_in_is_the_next_pronouns_and_stays_one_referent() -> None:
    """At the hedge a man on a horse reined in. He wore…: he is that man, not Mara (named before, her
    gender unknown to the moment); "the squire" brought in later is his own referent and the he of
    the next shot, while a second mention of the same noun is the same person."""
    text = (
        "Mara walked down to the field.\n\n"
        "At the far hedge a man on a black horse reined in and watched. He wore a tall hat.\n\n"
        "The old squire rode along the hedge to the gate. Mara went to meet him.\n\n"
        "“Good day,” he said, lifting his hat. The old squire smiled."
    )
    shots = _shots(text, "en", (Character("Mara", mentions=3),))
    assert "a man on a black horse" in shots[1][2]["Characters"] and "Mara" not in shots[1][2]["Characters"]
    assert shots[1][2]["Action"].split("; ")[-1].startswith("the man wore")
    assert shots[3][2]["Characters"].count("squire") == 1 and "Mara" not in shots[3][2]["Characters"]


@pytest.mark.parametrize(
    ("text", "lang", "name", "gender"),
    [
        ("院子里静悄悄的。铁柱的奶奶坐在门槛上剥豆子。", "zh", "铁柱的奶奶", "female"),
        ("Nobody answered. Martha's husband came in from the barn.", "en", "Martha's husband", "male"),
        ("The kettle boiled. Their mother poured the tea.", "en", "their mother", "female"),
    ],
)
def test_kin_whose_they_are_is_someone(text: str, lang: str, name: str, gender: str) -> None:
    """A person the text gives only as someone's kin (铁柱的奶奶, Martha's husband, their mother) is a
    referent, named by whose kin they are, with the gender the kinship word says."""
    found = someones(text, lang)
    assert [(p.name, p.gender) for _, p in found] == [(name, gender)]


def test_kin_the_text_then_names_is_that_character_not_someone_else() -> None:
    """孙掌柜的女儿春桃从里屋出来: the daughter is 春桃, staged once by her name."""
    cast = (Character("孙掌柜", mentions=3), Character("春桃", gender="female", mentions=3))
    shot = _shots("孙掌柜的女儿春桃从里屋出来，端了一碗茶。", "zh", cast)[0]
    assert "春桃" in shot[2]["Characters"] and "女儿" not in shot[2]["Characters"]


@pytest.mark.parametrize(
    ("text", "lang", "cast", "acted_on"),
    [
        (
            "Mara sat on the stair.\n\nTobias came up and looked at her for a long time.",
            "en",
            (Character("Mara", gender="female", mentions=3), Character("Tobias", gender="male", mentions=3)),
            "Mara",
        ),
        (
            "秀兰进了屋。\n\n阿Ｋ把她扶到椅子上，给她倒了碗水。",
            "zh",
            (Character("秀兰", gender="female", mentions=3), Character("阿Ｋ", gender="male", mentions=3)),
            "秀兰",
        ),
    ],
)
def test_the_one_an_object_pronoun_means_is_in_the_picture(
    text: str, lang: str, cast: tuple[Character, ...], acted_on: str
) -> None:
    """Tobias looked at her / 阿Ｋ把她扶到椅子上: the shot that says it stages her too, the last woman
    named before who is not the sentence's own subject; the beam above him is his own (no one else)."""
    last = _shots(text, lang, cast)[-1]
    assert acted_on in last[1]
    alone = _shots("Tobias rowed out. When he saw the beam above him, he waved.", "en", EN_CAST)[-1]
    assert alone[1] == ("Tobias",)


def test_a_word_for_anyone_new_refers_back_to_the_one_just_brought_in() -> None:
    """那人 / "the stranger" after someone unnamed came in is that person, in the picture: 一个戴草帽的
    汉子走到船边。\\n\\n那人放下担子 stages the man in the straw hat; so does "Mara looked at the stranger"
    after a man in a grey coat stood at the gate."""
    zh = _shots("一个戴草帽的汉子走到船边，秀兰看了他一眼。\n\n那人放下担子，擦了擦汗。", "zh", ZH_CAST)
    assert "戴草帽的汉子" in zh[1][2]["Characters"], zh[1]
    en = _shots("A man in a grey coat stood at the gate.\n\nMara looked at the stranger and frowned.", "en", EN_CAST)
    assert "a man in a grey coat" in en[1][2]["Characters"], en[1]


def test_someone_named_only_as_whose_kin_acts_is_not_staged() -> None:
    """秀兰的儿子跑进院子 and "Mara's brother rode up" show the son and the brother: 秀兰 and Mara are
    only whose they are, and are not staged there; where they act too, they are."""
    zh = _shots("秀兰的儿子跑进院子，喊了一声。\n\n秀兰的儿子坐下，秀兰给他倒水。", "zh", ZH_CAST)
    assert "秀兰" not in zh[0][1] and "秀兰" in zh[1][1], zh
    en = _shots("Mara's brother rode up the lane.\n\nMara's brother got down and Mara ran to him.", "en", EN_CAST)
    assert "Mara" not in en[0][1] and "Mara" in en[1][1], en
