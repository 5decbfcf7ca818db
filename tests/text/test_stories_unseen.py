"""Two short stories written after the rules (audit 28, tests/text/stories/), split as a user
would: what every frame prompt an image model gets must hold on them.

The invariants: a chapter heading's underline is no text; an Action line shows moments (at most
three, each a short clause, no quotation, never the paragraph); a moment never opens with a
subject pronoun when the shot or the text before it names a person of that gender; a title that
speaks and acts is a character; a kinship word beside a name tells its gender.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots
from pipeline_kit.text import ingest_file, split_book
from pipeline_kit.text.cast import Bible, build_bible
from pipeline_kit.text.cast_roles import en_roles, kin_genders
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.text.moments import CHARS, MOMENTS, WORDS, Who
from pipeline_kit.text.prompts import NO_LETTERING, frame_prompt, moments, narration_only

from tests.text.helpers import shots_with_frame_prompts

STORIES = Path(__file__).with_name("stories")
BOOKS = [("en_port_ellery.txt", "en"), ("zh_qingshui.txt", "zh")]
_QUOTE_MARKS = re.compile(r"[“”「」『』\"]")
_PRONOUN_OPENS = {"en": re.compile(r"^(?:He|She)\b"), "zh": re.compile(r"^[他她](?!们)")}


def _split(db: Database, name: str) -> list[tuple[str, str, str, str]]:
    """(shot text, image prompt, first frame prompt, last frame prompt) of the story, split."""
    bookcode = ingest_file(db, STORIES / name, name).bookcode
    split_book(db, bookcode, progress=False)
    return [(r["text"], r["prompt"], first, last) for r, first, last in shots_with_frame_prompts(db)]


def _line(prompt: str, head: str) -> str:
    return next(line for line in prompt.splitlines() if line.startswith(head))[len(head) :].strip()


@pytest.mark.parametrize(("name", "lang"), BOOKS)
def test_an_underlined_chapter_heading_leaves_no_underline_in_the_text(name: str, lang: str) -> None:
    """`Chapter Two: The Colonel` / `第二章　客栈` over a line of - or =: three chapters, and no
    chapter's text opens with the underline (it would be a paid shot of dashes)."""
    found = find_chapters((STORIES / name).read_text(encoding="utf-8"), "x").chapters
    assert len(found) == 3
    assert not any(re.match(r"\s*[-=]{3}", c.text) for c in found)


@pytest.mark.parametrize(("name", "lang"), BOOKS)
def test_every_image_prompt_shows_short_moments_never_words_nor_paragraphs(
    sqlite_db: Database, name: str, lang: str
) -> None:
    """Each Action line holds at most MOMENTS moments, each at most WORDS words (CHARS
    characters), none quoted, none holding a sentence's end (never the narration pasted); frames
    hold no quotation."""
    for _, prompt, first, last in _split(sqlite_db, name):
        action = _line(prompt, "Action:")
        parts = action.split("；" if lang == "zh" else "; ")
        assert len(parts) <= MOMENTS, action
        for part in parts:
            assert (len(part) <= CHARS) if lang == "zh" else (len(part.split()) <= WORDS), part
        for p in (prompt, first, last):
            assert not _QUOTE_MARKS.search(_line(p, "Action:")), p
        for frame in (first, last):
            assert not _QUOTE_MARKS.search(_line(frame, "Frame:")), frame
        assert not any(re.search(r"[!?。！？]|\.\s", part) for part in parts), action  # one clause run each


@pytest.mark.parametrize(("name", "lang"), BOOKS)
def test_no_frame_opens_with_a_pronoun_the_text_can_name(sqlite_db: Database, name: str, lang: str) -> None:
    """She steps onto the quay / 他走进庄子: in these stories every he and she has a person named
    before it, so no frame's moment and no Action moment opens with one."""
    pronoun = _PRONOUN_OPENS[lang]
    for _, prompt, first, last in _split(sqlite_db, name):
        moments_seen = [*_line(prompt, "Action:").split("；" if lang == "zh" else "; ")]
        moments_seen += [_line(f, "Frame:").split(": ", 1)[-1] for f in (first, last)]
        assert not [m for m in moments_seen if pronoun.match(m)], moments_seen


def _who(genders: dict[str, str]) -> Who:
    """A cast naming each of `genders` where a text holds it, in the text's order."""
    return Who(lambda s: sorted((m.start(), n, n) for n in genders for m in re.finditer(re.escape(n), s)), genders)


def test_a_pronoun_is_the_last_person_of_its_gender_named_outside_speech() -> None:
    """She after a woman and a man is the woman; he after “…John Marlow…” said in a quotation is
    the man the narration named; he after `A looked at B` is A (the subject, named first), and
    the moment opens at him, not at the Then before him."""
    genders = {"Nell": "female", "Silas": "male", "Abel": "male", "John Marlow": "male"}
    who = _who(genders)
    found = moments("Nell came in. Silas waited. She stepped onto the quay.", "en", who)
    assert found[-1] == "Nell stepped onto the quay"
    found = moments("“John Marlow told me,” said Abel. He rowed on.", "en", who)
    assert found[-1] == "Abel rowed on"
    found = moments("Abel looked at Silas for a long moment. Then he turned away.", "en", who)
    assert found[-1] == "Abel turned away"
    zh = {"阿Ｋ": "male", "秀兰": "female"}
    who_zh = _who(zh)
    assert moments("秀兰看了阿Ｋ一眼。他走进庄子。", "zh", who_zh)[-1] == "阿Ｋ走进庄子"


def test_frames_pin_the_first_and_last_moment_of_the_action_line() -> None:
    """The frames take their moments from the prompt's Action line (the named ones the split
    wrote, or a person's edit), not from the raw text, where “She” names nobody."""
    prompt = "Setting: quay.\nAction: Nell Ardent waved; Silas Ardent lit his pipe\nStyle: s."
    first, last = (
        frame_prompt(prompt, kind, "She waved. He lit his pipe.", "en") for kind in ("first_frame", "last_frame")
    )
    assert first.endswith(f"opens: Nell Ardent waved\n{NO_LETTERING}")
    assert "Silas Ardent lit his pipe\n" in last and "Nell Ardent waved\n" not in last


def test_a_moment_is_the_head_of_its_sentence() -> None:
    """An apposition after a name goes, an opening clause without a person goes, a long clause
    is cut before a phrase, not mid-phrase."""
    genders = {"Silas Ardent": "male", "the Colonel": "male", "阿Ｋ": "male"}
    who = _who(genders)
    assert moments("Silas Ardent, her father, was waiting by the bollards.", "en", who) == [
        "Silas Ardent was waiting by the bollards"
    ]
    sitting = moments(
        "Inside, the Colonel was sitting on the bottom step of the old stair with a chart across his knees.", "en", who
    )
    assert sitting == ["the Colonel was sitting on the bottom step of the old stair"]
    assert moments("天快黑的时候，阿Ｋ来到清水镇。", "zh", who) == ["阿Ｋ来到清水镇"]


def _bible(name: str, lang: str) -> Bible:
    return build_bible(
        [c.text for c in find_chapters((STORIES / name).read_text(encoding="utf-8"), "x").chapters], lang
    )


def test_a_title_that_speaks_and_acts_is_a_character() -> None:
    """“said the Colonel” (a title written capitalised, never with a name after it) five times is
    someone: a character named by the title, whatever its case; “the Colonel Ross” would be Ross's."""
    bible = _bible("en_port_ellery.txt", "en")
    assert bible.canonical["the Colonel"] == bible.canonical["The Colonel"]
    colonel = bible.by_name[bible.canonical["the Colonel"]]
    assert colonel.gender == "male" and "red coat" in colonel.description
    roles = en_roles(["“Go,” said the Colonel Ross. “Now,” said the Colonel Ross."])
    assert not roles


def test_kinship_words_beside_a_name_tell_its_gender() -> None:
    """这是我女儿秀兰 / 老陈，她的父亲 / “Silas Ardent, her father” / “his sister, Mara Quill”:
    the kinship word says the sex, where nothing else in the text does."""
    names = {"秀兰": "秀兰", "老陈": "老陈", "阿Ｋ": "阿Ｋ"}
    zh = "老陈道：“这是我女儿秀兰。”秀兰笑了。阿Ｋ坐下。老陈，她的父亲，点了点头。"
    assert kin_genders([zh], "zh", names) == {"秀兰": "female", "老陈": "male"}
    en = "Silas Ardent, her father, waited. Then came his sister, Mara Quill, and Mrs. Crane, his aunt."
    people = {"Silas Ardent": "Silas Ardent", "Mara Quill": "Mara Quill", "Crane": "Crane"}
    assert kin_genders([en], "en", people) == {"Silas Ardent": "male", "Mara Quill": "female", "Crane": "female"}
    assert _bible("zh_qingshui.txt", "zh").by_name["秀兰"].gender == "female"


def test_a_place_named_once_is_a_place_and_people_stay_people() -> None:
    """A harbour town named once after “to” (Port Ellery), an island someone comes from (从黑石岛来),
    a village someone goes to across the river (去对岸的柳家庄): places, from the grammar; none of
    them a character, and no character a place, though people come from and go to people too."""
    en, zh = _bible("en_port_ellery.txt", "en"), _bible("zh_qingshui.txt", "zh")
    assert {"Port Ellery", "Gannet Point", "Gull Inn", "Tanner Street"} <= set(en.place_names)
    assert {"黑石岛", "柳家庄", "清水镇", "悦来客栈"} <= set(zh.place_names)
    for bible in (en, zh):
        assert not set(bible.place_names) & set(bible.canonical)
    assert {"Nell Ardent", "Silas Ardent", "John Pike"} <= set(en.by_name) and {"阿Ｋ", "秀兰"} <= set(zh.by_name)
    text = " ".join(
        ["Mara Quill took a letter from Tobias Venn.", "Tobias Venn sailed to Port Ellery.", "Mara Quill waved."]
        + ["Tobias Venn laughed."] * 3
    )
    bible = build_bible([text], "en")
    assert "Tobias Venn" in bible.by_name and "Tobias Venn" not in bible.place_names
    assert "Port Ellery" in bible.place_names


def test_looks_are_what_the_text_says_of_the_person() -> None:
    """“He was a young fisherman with a broken nose” (an occupation is a word for a person),
    老陈是个黑瘦的老船夫 / 秀兰是个圆脸的姑娘 (a 的-phrase before a person's noun), and never “dark” of
    “In the dark Nell Ardent reached…” (an adjective after “the” is a noun)."""
    en, zh = _bible("en_port_ellery.txt", "en"), _bible("zh_qingshui.txt", "zh")
    assert en.by_name["John Marlow"].description.startswith("a young fisherman with a broken nose")
    assert "dark" not in en.by_name["Nell Ardent"].description
    assert zh.by_name["老陈"].description.startswith("黑瘦的老船夫")
    assert zh.by_name["秀兰"].description.startswith("圆脸的姑娘")


@pytest.mark.parametrize(("name", "lang"), BOOKS)
def test_a_place_only_spoken_of_is_not_where_the_shot_stands(sqlite_db: Database, name: str, lang: str) -> None:
    """我从黑石岛来 said on the quay: the shot stands on the quay, not on the island; a shot's place,
    when its own text names it, is named in its narration."""
    bookcode = ingest_file(sqlite_db, STORIES / name, name).bookcode
    split_book(sqlite_db, bookcode, progress=False)
    with sqlite_db.engine.connect() as conn:
        rows = conn.execute(sa.select(shots.c.text, shots.c.location)).all()
    named = [(text, place) for text, place in rows if place and place in text]
    assert named
    for text, place in named:
        assert place in narration_only(text), (place, text)


def test_where_someone_comes_from_is_not_where_the_shot_stands(sqlite_db: Database, tmp_path: Path) -> None:
    """`the smith from Copper Lane` (once, in a room named once) says where a person lives, not
    where the shot is: the shot stands in the room someone went into, found though it is named
    once, and called the boiler room, as the text calls it (it was `room`); a street someone walks
    along is a shot's place."""
    story = tmp_path / "forge.txt"
    story.write_text(
        "Chapter 1\n\nIvo Brand walked along Copper Lane in the rain, counting the shuttered doors.\n\n"
        "* * *\n\nIn the boiler room they found Dalla Rusk, the smith from Copper Lane, asleep on a sack. "
        "Ivo woke her and she rubbed her eyes.\n",
        encoding="utf-8",
    )
    bookcode = ingest_file(sqlite_db, story, "Forge").bookcode
    split_book(sqlite_db, bookcode, progress=False)
    with sqlite_db.engine.connect() as conn:
        rows = conn.execute(sa.select(shots.c.text, shots.c.location).order_by(shots.c.chapter, shots.c.seq)).all()
    walk, found = (next(place for text, place in rows if marker in text) for marker in ("walked", "boiler room"))
    assert walk == "Copper Lane" and found == "boiler room", rows


@pytest.mark.parametrize(("name", "lang"), BOOKS)
def test_whoever_the_action_line_names_is_in_the_shot(sqlite_db: Database, name: str, lang: str) -> None:
    """She ran down to the quay, after a shot naming Nell: the Action line says Nell, so the
    Characters line (and the character sheets the frame references) must stage her too."""
    bible = _bible(name, lang)
    for _, prompt, _first, _last in _split(sqlite_db, name):
        action, cast = _line(prompt, "Action:"), _line(prompt, "Characters:")
        for person in bible.characters:
            if person.name in action:
                assert person.name in cast, (person.name, prompt)
