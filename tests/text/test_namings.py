"""Someone the text brings in without a name and then names ("My name is…", 她叫…, a boy named…)
is one character from their first mention: the bible holds the name, the sex and looks of the
one brought in, and every shot that showed the unnamed person stages the character.

Made-up stories (tests/text/stories/en_toll_bridge.txt, zh_shimo.txt), written for these tests
after the trial stories the rules came from: each rule is checked in both languages where both
have it, and beside a sentence of the same shape that names nobody.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots
from pipeline_kit.text import ingest_file, split_book
from pipeline_kit.text.cast import Bible, build_bible
from pipeline_kit.text.namings import namings

STORIES = Path(__file__).with_name("stories")
EN_STORY = (STORIES / "en_toll_bridge.txt").read_text(encoding="utf-8")
ZH_STORY = (STORIES / "zh_shimo.txt").read_text(encoding="utf-8")


def _chapters(text: str) -> list[str]:
    return [text.split("\n\n", 1)[1]]


def _staged(db: Database, tmp_path: Path, text: str, name: str) -> list[tuple[str, tuple[str, ...]]]:
    """(shot text, characters staged) of `text` split as a user would."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    split_book(db, ingest_file(db, path, name).bookcode, progress=False)
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(shots.c.text, shots.c.characters).order_by(shots.c.chapter, shots.c.seq))
        return [(r.text, tuple(r.characters or ())) for r in rows]


def test_an_english_stranger_who_says_her_name_is_that_character_from_her_first_mention() -> None:
    """ "I'm Hester Vane" said by the woman at the gate: Hester is a woman (the noun and the she say
    so), her looks are the woman's (a tall woman in a blue cloak), and the boy who answers "Kit,"
    to "What's your name?" is Kit, a boy."""
    bible = build_bible(_chapters(EN_STORY), "en")
    hester, kit = bible.by_name[bible.canonical["Hester"]], bible.by_name[bible.canonical["Kit"]]
    assert hester.gender == "female" and "blue cloak" in hester.description
    assert kit.gender == "male" and "small boy" in kit.description
    assert bible.by_name[bible.canonical["Walter"]].gender == "male"


def test_every_shot_of_the_unnamed_person_stages_the_character_named_later(sqlite_db: Database, tmp_path: Path) -> None:
    """The shots that show the woman at the gate before she gives her name show Hester; the boy who
    caught the bridle is Kit in the shot he runs out of the fog."""
    staged = _staged(sqlite_db, tmp_path, EN_STORY, "toll_bridge.txt")
    at_gate = next(chars for text, chars in staged if "stood by the gate" in text)
    sixpence = next(chars for text, chars in staged if "Sixpence" in text)
    bridle = next(chars for text, chars in staged if "caught the horse's bridle" in text)
    assert "Hester Vane" in at_gate or "Hester" in at_gate, staged
    assert any(c.startswith("Hester") for c in sixpence), staged
    assert any(c.startswith("Kit") for c in bridle), staged


def test_a_name_said_to_someone_or_read_out_names_no_one() -> None:
    """An answer names the one answering only when it is the name alone: "Miss Pell, you have not"
    after a question, or an address read out ("Mrs. Gray, 12, Mill Lane"), gives nobody a name (a
    name called is only the newcomer's, see below)."""
    text = (
        '"What is the name on the letter?"\n\n"Mrs. Gray, 12, Mill Lane," read Ada.\n\n'
        '"Have you told me all?"\n\n"Miss Pell, you have not told me all."\n\n'
        '"Who are you?" she asked.\n\n"Rosa," said the girl.'
    )
    assert [n.name for n in namings(text, "en") if not n.called] == ["Rosa"]


def test_a_chinese_woman_called_by_her_name_is_that_character_with_her_looks() -> None:
    """她叫田秀芝 names the woman carrying water: 田秀芝 is a woman with her looks (瘦瘦的女人, 三十出头),
    whatever her pronouns elsewhere; 大家都叫他三伯 names the hunched old man (驼背的老头), a man."""
    bible = build_bible(_chapters(ZH_STORY), "zh")
    tian, san = bible.by_name["田秀芝"], bible.by_name["三伯"]
    assert tian.gender == "female" and "瘦瘦的女人" in tian.description and "三十出头" in tian.description
    assert san.gender == "male" and "驼背的老头" in san.description


def test_a_chinese_surname_name_that_speaks_or_is_set_after_a_role_is_a_character() -> None:
    """木匠孙大河 (a role before the name) and 孙大河…说：“ (a colon before a quotation tags it, whatever
    the verb) make 孙大河 a person, though 大河 alone is a river and 河 ends place names."""
    bible = build_bible(_chapters(ZH_STORY), "zh")
    assert "孙大河" in bible.by_name and bible.by_name["孙大河"].gender == "male"
    assert "孙大河" not in {p.name for p in bible.places}
    assert "紫红" in bible.by_name["孙大河"].description


def test_the_action_line_never_names_her_twice_where_her_sentence_gives_her_name(
    sqlite_db: Database, tmp_path: Path
) -> None:
    """她叫田秀芝 stays as written: replacing 她 by the name would make 田秀芝叫田秀芝."""
    _staged(sqlite_db, tmp_path, ZH_STORY, "mill.txt")
    with sqlite_db.engine.connect() as conn:
        prompts = [r.prompt for r in conn.execute(sa.select(shots.c.prompt))]
    assert not any("田秀芝叫田秀芝" in p for p in prompts)
    assert any("田秀芝" in p for p in prompts)


def test_a_novel_s_shouts_and_questions_with_jiao_name_nobody() -> None:
    """叫 also shouts, orders and asks (待我叫开门, 你叫甚名字, 他叫父王): a common word or a question
    after it is no name given."""
    text = "行者道：“待我叫开门。”八戒道：“你叫甚名字？”那太子见了，叫父王。“大家都叫我阿贵。”"
    assert [n.name for n in namings(text, "zh")] == ["阿贵"]


def test_a_bible_without_namings_is_unchanged_by_them() -> None:
    """A story whose people are all named outright has no unnamed mentions given to anyone."""
    text = "Mara Quill walked to the pier. Mara looked at the sea. Tobias Venn waved to Mara."
    bible = build_bible([text], "en")
    assert isinstance(bible, Bible) and bible.unnamed_spans(text) == []


def test_a_name_said_in_the_narration_names_the_one_just_brought_in() -> None:
    """ "The vet came up the track on a pony. She was a stout woman in a tweed coat, and she said her
    name was Mrs. Garrow": Garrow is the vet, a woman with the vet's looks; "At the front rode a
    girl with a red scarf … Folk call me Nan" names the girl who rode in (a verb before its subject)."""
    text = (
        "The vet came up the track on a pony. She was a stout woman in a tweed coat, and she said her name was "
        "Mrs. Garrow. Mrs. Garrow looked at the cow.\n\n"
        "At the front rode a girl with a red scarf. The girl stopped by the trough. "
        '"Folk call me Nan," she said. Nan laughed.'
    )
    bible = build_bible([text], "en")
    garrow, nan = bible.by_name[bible.canonical["Garrow"]], bible.by_name[bible.canonical["Nan"]]
    assert garrow.gender == "female" and "tweed coat" in garrow.description
    assert nan.gender == "female" and "red scarf" in nan.description


def test_a_name_called_to_the_one_just_brought_in_is_theirs_unless_named_before_or_asked_about() -> None:
    """ "The youngest of the crew, a skinny lad in a blue cap, ran up the mast. 'Get down, Pip!'": Pip is
    the lad. A name asked about ("Crane?") or called with a title of the other sex (Miss Orme, to a
    man) names nobody; and one the narration named before is its own holder, not the newcomer."""
    text = (
        "The youngest of the crew, a skinny lad in a blue cap, ran up the mast. "
        '"Get down, Pip!" the mate bellowed. Pip laughed. Pip climbed higher.\n\n'
        'Ellen Orme watched from the rail. A tall man with a lantern came aft. "Miss Orme," he said. '
        '"Crane?" she asked. She meant the purser, Crane. Crane sat down.'
    )
    bible = build_bible([text], "en")
    pip = bible.by_name[bible.canonical["Pip"]]
    assert pip.gender == "male" and "skinny lad in a blue cap" in pip.description
    assert "tall man" not in bible.by_name[bible.canonical["Orme"]].description
    assert "tall man" not in bible.by_name[bible.canonical["Crane"]].description


def test_a_name_the_narration_gave_before_is_its_holder_s_own_not_the_newcomer_s() -> None:
    """Rhoda is named before the girl at the door comes: "I'm Rhoda," said Rhoda is no news and
    leaves the girl unnamed; "Who are you?" "Liz Parr." names her."""
    text = (
        "Rhoda Finch sat by the fire. A thin girl with a satchel came to the door. "
        '"I\'m looking for Rhoda." \n\n"I\'m Rhoda," said Rhoda. "Who are you?"\n\n'
        '"Liz Parr." The girl held out a parcel. Liz smiled.'
    )
    bible = build_bible([text], "en")
    assert "satchel" not in bible.by_name[bible.canonical["Rhoda"]].description
    assert "thin girl with a satchel" in bible.by_name[bible.canonical["Liz"]].description
