"""The character bible's rules, on small hand-made texts in both languages and on the corpus books."""

from __future__ import annotations

import pytest

from pipeline_kit.text.cast import Bible, Character, build_bible, cast_drafts
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.text.places import Place
from pipeline_kit.text.shots import ShotDraft, split_chapter
from tests.conftest import CORPUS

ZH_COURTESY = (
    "却说涿县有一人，姓刘，名备，字玄德。又有一人，姓关，名羽，字云长。\n"
    "玄德曰：“吾欲起兵。”云长曰：“愿从兄长。”\n"
    "玄德笑道：“善。”云长曰：“诺。”老夫曰：“可也。”\n"
    "刘玄德与关云长同行。玄德问：“前面何处？”云长答：“不知。”老夫曰：“且住。”\n"
    "玄德说：“进兵。”诸侯曰：“何往？”老夫曰：“去也。”诸侯曰：“同去。”诸侯曰：“好。”\n"
    "曹操字孟德。曹操曰：“玄德何在？”孟德曰：“吾自往。”曹孟德大笑。孟德曰：“走。”\n"
    "曹操曰：“来。”曹操曰：“去。”\n"
)

EN_TEXT = "\n\n".join(
    [
        "Mr. Sherlock Holmes sat by the fire. “I’m tired,” said Holmes. “I’ve waited,” said Alice.",
        "That’s all. Sherlock Holmes rose. “I’ll go,” said Alice, a tall girl with red hair and a green coat.",
        "It’s late. Then Alice Brown smiled, and Holmes nodded. “I’m sure,” Alice said.",
        "That’s it. I’ve seen Holmes and Alice before. Later Miss Alice Brown left; Holmes stayed.",
        "I’m here. Mr. Holmes said, “Come.” Alice said no. I’ll wait. That’s true, said Holmes.",
    ]
)


def _names(bible: Bible) -> dict[str, str]:
    return bible.canonical


def test_zh_courtesy_names_fold_and_speech_verbs_are_stripped() -> None:
    """姓刘，名备，字玄德 and 曹操字孟德 make one character each under the formal name, with the
    courtesy name and surname + courtesy name as aliases; 玄德曰/玄德笑道 never become names."""
    names = _names(build_bible([ZH_COURTESY], "zh"))
    assert names["玄德"] == names["刘玄德"] == "刘备"
    assert names["云长"] == names["关云长"] == "关羽"
    assert names["孟德"] == names["曹孟德"] == names["曹操"] == "曹操"
    assert not [n for n in names if n[-1] in "曰道说问答" or n.endswith("笑道")]


def test_zh_stop_list_keeps_address_and_groups_out() -> None:
    """Forms of address and groups (老夫, 诸侯) that speak are still no characters."""
    names = _names(build_bible([ZH_COURTESY], "zh"))
    assert "老夫" not in names and "诸侯" not in names


def test_en_contractions_speech_verbs_and_name_forms() -> None:
    """I'm, I've, I'll, That's, It's are never characters; "said Alice" is Alice; Holmes, Mr. Holmes and
    Sherlock Holmes are one character under the full name; an appearance sentence describes Alice."""
    bible = build_bible([EN_TEXT], "en")
    names = _names(bible)
    for junk in ("I’m", "I’ve", "I’ll", "That’s", "It’s", "That", "Then", "Later", "Mr", "Said"):
        assert junk not in names
    assert names["Holmes"] == names["Sherlock"] == names["Sherlock Holmes"] == "Sherlock Holmes"
    assert names["Alice"] == "Alice Brown" and names["Alice"] != names["Holmes"]
    alice = bible.by_name["Alice Brown"]
    assert "red hair" in alice.description and alice.gender == "female"
    assert bible.by_name["Sherlock Holmes"].gender == "male"


def _drafts(text: str, pieces: list[str]) -> list[ShotDraft]:
    """Drafts tiling `text`, one per piece, naming nobody."""
    out, start = [], 0
    for seq, piece in enumerate(pieces, start=1):
        assert text.startswith(piece, start)
        out.append(
            ShotDraft(
                seq=seq,
                scene=1,
                span_start=start,
                span_end=start + len(piece),
                location=None,
                time_of_day=None,
                characters=(),
                dialogue=False,
                duration_s=2.0,
            )
        )
        start += len(piece)
    return out


@pytest.mark.parametrize(
    "lang,pieces",
    [
        (
            "zh",
            [
                "孙悟空跳了起来。",
                "白骨精笑了一笑。",
                "她转身就走。",
                "他举棒便打。",
                "风吹过山岗。",
            ],
        ),
        (
            "en",
            [
                "Holmes stood up. ",
                "Irene laughed. ",
                "She turned away. ",
                "He followed. ",
                "Rain fell. ",
            ],
        ),
    ],
)
def test_pronouns_go_to_the_last_named_character_of_that_gender(lang: str, pieces: list[str]) -> None:
    """A shot naming nobody but saying she/he (她/他) gets the last named character of that gender, marked
    as inferred; a shot with neither name nor pronoun stays empty; named shots are not marked."""
    he, she = ("孙悟空", "白骨精") if lang == "zh" else ("Holmes", "Irene")
    bible = Bible(lang, (Character(he, gender="male"), Character(she, gender="female")))
    text = "".join(pieces)
    shots = cast_drafts(text, _drafts(text, pieces), bible)
    assert [s.characters for s in shots] == [(he,), (she,), (she,), (he,), ()]
    assert [s.inferred for s in shots] == [(), (), (she,), (he,), ()]


@pytest.mark.parametrize(
    "lang,text,expected",
    [
        (
            "zh",
            "孙家庄外，孙悟空见了悟空的师父孙小圣，又到孙家。",
            [(5, "孙悟空", "孙悟空"), (10, "悟空", "孙悟空"), (15, "孙小圣", "孙小圣")],
        ),
        (
            "en",
            "John Clay left St. John's Wood; Johnson met John, and Jo waved at Johns.",
            [(0, "John Clay", "John Clay"), (44, "John", "John Clay"), (54, "Jo", "Jo")],
        ),
    ],
)
def test_a_name_is_read_as_the_longest_the_bible_holds_there(lang: str, text: str, expected: list) -> None:
    """Where several of the bible's names (people's and places') could start, the longest written
    there wins, and in English only a whole word: names sharing their first letters (孙悟空, 孙小圣,
    孙家庄; John, John Clay, Jo, St. John's Wood) are never cut short or read inside another word."""
    if lang == "zh":
        people = (Character("孙悟空", ("悟空",)), Character("孙小圣"))
        places = (Place("孙家庄"), Place("花果山", ("孙家",)))
    else:
        people = (Character("John Clay", ("John",)), Character("Jo"))
        places = (Place("St. John's Wood"),)
    bible = Bible(lang, people, places)
    assert [(o, text[o:end], name) for o, end, name in bible.spans(text)] == expected
    assert [name for _, name in bible.place_mentions(text)] == (
        ["孙家庄", "花果山"] if lang == "zh" else ["St. John's Wood"]
    )


def test_locked_and_dropped_entries_survive_a_rebuild() -> None:
    """What a person fixed stays: a locked description and name win, a dropped name is never cast."""
    fixed = [
        Character("刘备", ("玄德",), "a tall man in green", "male", 5, locked=True),
        Character("云长", (), "", None, 5, locked=True, dropped=True),
    ]
    bible = build_bible([ZH_COURTESY], "zh", fixed)
    assert bible.by_name["刘备"].description == "a tall man in green"
    assert "云长" not in bible.canonical


BOOKS = {"zh": "zh_xiyouji.txt", "en": "en_adventures_of_sherlock_holmes.txt"}
MAIN = {
    "zh": [
        ("孙悟空", "悟空", "行者", "孙行者", "大圣", "孙大圣", "齐天大圣", "美猴王"),
        ("唐僧", "三藏", "唐三藏", "玄奘"),
        ("猪八戒", "八戒", "悟能"),
        ("沙僧", "沙和尚", "悟净"),
    ],
    "en": [("Holmes", "Sherlock Holmes", "Sherlock"), ("Watson",)],
}
JUNK = {
    "zh": [
        "老孙",
        "老夫",
        "师父",
        "呆子",
        "众人",
        "妖精",
        "大王",
        "行者道",
        "八戒道",
        "三藏道",
        "十分",
        "玉玺",
        "令人",
        "诸侯",
    ],
    "en": [
        "I’m",
        "I’ve",
        "I’ll",
        "That’s",
        "It’s",
        "Mr",
        "London",
        "Street",
        "Baker",
        "Then",
        "Yes",
    ],
}


@pytest.fixture(scope="module", params=sorted(BOOKS))
def corpus_book(request: pytest.FixtureRequest) -> tuple[str, list[str], Bible]:
    lang = request.param
    texts = [c.text for c in find_chapters((CORPUS / BOOKS[lang]).read_text(encoding="utf-8"), lang).chapters]
    return lang, texts, build_bible(texts, lang)


def test_corpus_main_characters_have_one_canonical_name_each(
    corpus_book: tuple[str, list[str], Bible],
) -> None:
    """Each main character of 西游记 and of Sherlock Holmes is one character whatever name the text uses,
    and different main characters stay apart."""
    lang, _, bible = corpus_book
    canon = [{bible.canonical.get(n) for n in group} for group in MAIN[lang]]
    assert all(len(c) == 1 and None not in c for c in canon), canon
    assert len({c.pop() for c in canon}) == len(MAIN[lang])


def test_corpus_has_none_of_the_junk_names(corpus_book: tuple[str, list[str], Bible]) -> None:
    """Pronouns, forms of address, groups, objects, speech-verb fusions and contractions are no characters."""
    lang, _, bible = corpus_book
    assert [j for j in JUNK[lang] if j in bible.canonical] == []


def test_corpus_shots_name_canonical_characters_only(
    corpus_book: tuple[str, list[str], Bible],
) -> None:
    """Shots' characters are canonical names of the bible, never an alias, on the first chapters."""
    lang, texts, bible = corpus_book
    canonical = {c.name for c in bible.characters}
    for text in texts[:5]:
        for shot in cast_drafts(text, split_chapter(text, lang), bible):
            assert set(shot.characters) <= canonical, shot.characters
