"""Talk on screen: who a line of talk stages, and that a speech tag is never a moment.

Invariants: a line of talk no tag names (a speech running on over paragraphs, an untagged reply)
stages the people of its scene's last talk, never nobody and never someone only spoken of; a new
scene carries nobody over; a speech tag with its manner (said the stranger with deference,
observed Mr. Merryweather gloomily) is no Action moment, what the speaker does after it is.
"""

from __future__ import annotations

import pytest

from pipeline_kit.text.cast import Bible, Character, cast_drafts
from pipeline_kit.text.prompts import _unspoken_sentences, moments
from pipeline_kit.text.shots import ShotDraft

EN = (Character("Ada Vell", ("Ada",), gender="female"), Character("Rook", gender="male"), Character("Pim"))
ZH = (Character("周福", gender="male"), Character("小梅", gender="female"), Character("孙二"))


def _cast(paragraphs: list[str], lang: str, cast: tuple[Character, ...], scenes: list[int]) -> list[tuple[str, ...]]:
    """Each paragraph one shot (talk where it holds a quotation), in `scenes`: who each stages."""
    text = "\n\n".join(paragraphs)
    drafts, at = [], 0
    for k, (paragraph, scene) in enumerate(zip(paragraphs, scenes), 1):
        start = text.index(paragraph, at)
        at = start + len(paragraph)
        drafts.append(ShotDraft(k, scene, start, at, None, None, (), "“" in paragraph, 6.0))
    return [d.characters for d in cast_drafts(text, drafts, Bible(lang, cast))]


@pytest.mark.parametrize(
    ("lang", "cast", "paragraphs", "first", "second"),
    [
        (
            "en",
            EN,
            [
                "“You came back,” said Rook.",
                "“I did,” Ada answered. “Pim sent word that the well was dry.",
                "“And then the caravan left without us, and nobody would say why.",
                "“So here we are.”",
            ],
            "Rook",
            "Ada Vell",
        ),
        (
            "zh",
            ZH,
            [
                "周福道：“你又来了。”",
                "小梅道：“孙二说井干了，我就来了。",
                "“后来车队也走了，谁也不告诉我为什么。",
                "“我们就这样到了这里。”",
            ],
            "周福",
            "小梅",
        ),
    ],
)
def test_talk_no_tag_names_stages_the_scenes_talkers_not_who_is_spoken_of(
    lang: str, cast: tuple[Character, ...], paragraphs: list[str], first: str, second: str
) -> None:
    """Two people talk, then her speech runs on over two paragraphs no tag names: those shots
    stage the two talkers; Pim / 孙二, only spoken of, is staged nowhere."""
    staged = _cast(paragraphs, lang, cast, [1, 1, 1, 1])
    assert staged[0] == (first,) and staged[1] == (second,)
    assert set(staged[2]) == set(staged[3]) == {first, second}
    assert not any(cast[2].name in people for people in staged)


def test_a_new_scene_carries_no_talkers_over() -> None:
    """Talk in a new scene that no tag names stages nobody from the scene before."""
    staged = _cast(["“You came back,” said Rook.", "“Nobody answers here.”"], "en", EN, [1, 2])
    assert staged == [("Rook",), ()]


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("“I hope so,” observed Mr. Merryweather gloomily. “It is late.”", []),
        ("“Oh, if you say so,” said the stranger with deference.", []),
        ("“You may trust him,” said the police agent loftily. “He knows.”", []),
        ("“We are close now,” my friend remarked. “Look there.”", []),
        ("“And the papers?” asked the King hoarsely.", []),
        ("“Nor from below,” said Mr. Pell, striking his stick upon the flags.", ["striking his stick upon the flags."]),
        ("“Yes,” said Jory and went out.", ["and went out."]),
    ],
)
def test_a_speech_tag_and_its_manner_are_no_moment(text: str, left: list[str]) -> None:
    """What a frame may show of a line of talk: never its tag (who said it, and how), only what
    the speaker does besides."""
    assert _unspoken_sentences(text, "en") == left


@pytest.mark.parametrize(
    ("lang", "text", "shown"),
    [
        ("zh", "一个胖子骑着毛驴来了。他就是场主赵德福。赵德福下了驴。", ["一个胖子骑着毛驴来了", "赵德福下了驴"]),
        ("zh", "王老五蹲在盐池边。他五十来岁，秃顶。王老五抬起头。", ["王老五蹲在盐池边", "王老五抬起头"]),
        (
            "en",
            "A stranger rode up. The stranger was Daniel Crane. Crane got down.",
            ["A stranger rode up", "Crane got down"],
        ),
    ],
)
def test_who_someone_is_or_how_old_is_no_moment(lang: str, text: str, shown: list[str]) -> None:
    """他就是X, The stranger was X, 他五十来岁 say who someone is or what they look like (the
    Characters line carries that), not what a frame shows happening."""
    assert [m.rstrip("。.") for m in moments(text, lang)] == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("The boy, whose name was Eli, sat beside her eating bread.", ["Eli sat beside her eating bread"]),
        ("A rider, called Brand, stopped at the gate.", ["Brand stopped at the gate"]),
    ],
)
def test_an_apposition_that_gives_the_name_stands_for_who_it_names(text: str, shown: list[str]) -> None:
    """The moment opens at its subject, named as the apposition names it, never at the
    apposition ("whose name was Eli, sat beside her")."""
    assert moments(text, "en") == shown
