"""Subtitle text: speech for dialogue shots, narration otherwise, short enough to read."""

from __future__ import annotations

import pytest

from pipeline_kit.film.dialogue import SUBTITLE_CHARS, shorten, subtitles


def test_dialogue_shot_shows_only_the_spoken_words() -> None:
    """Quoted speech (straight, curly or corner quotes) is kept; the narration around it is not."""
    assert subtitles('He turned. "Run!" he cried.', dialogue=True, lang="en") == ["Run!"]
    assert subtitles("黛玉笑道：「你来了。」", dialogue=True, lang="zh") == ["你来了。"]
    assert subtitles('He turned. "Run!"', dialogue=False, lang="en") == ['He turned. "Run!"']


def test_speech_broken_by_narration_reads_as_one_line() -> None:
    """A comma before a break ends the sentence unless the speech goes on in lower case."""
    stop = '"We leave at dawn," he said. "Not a moment later."'
    goes_on = '"We leave at dawn," he said, "not a moment later."'
    assert subtitles(stop, dialogue=True, lang="en") == ["We leave at dawn. Not a moment later."]
    assert subtitles(goes_on, dialogue=True, lang="en") == ["We leave at dawn, not a moment later."]


@pytest.mark.parametrize(
    "lang,text",
    [
        ("en", "The rain had not stopped for three days. " * 6),
        ("en", "word " * 60),
        ("zh", "林黛玉走进荣国府，贾宝玉在厅上等候。" * 6),
    ],
)
def test_long_text_is_cut_to_fit(lang: str, text: str) -> None:
    """Long text is cut to the language's limit at a sentence or word end, marked when cut."""
    short = shorten(text, lang)
    assert 0 < len(short) <= SUBTITLE_CHARS[lang]
    assert short.endswith(("…", ".", "。"))
    if lang == "en":
        assert not short.rstrip("…").endswith(" ") and "  " not in short


LAMP = """\u201cThe lamp is out,\u201d Mara said. \u201cDidn\u2019t you see it?\u201d

\u201cI saw it,\u201d said Tobias. \u201cOld Hetty will say it is the ghost again.\u201d
"""


@pytest.mark.parametrize(
    "lang,text,expected",
    [
        (
            "en",
            LAMP,
            ["The lamp is out. Didn\u2019t you see it?", "I saw it. Old Hetty will say it is the ghost again."],
        ),
        ("zh", "玄德曰：“吾欲救民。”张飞曰：“我愿同往。”\n关公曰：“善。”", ["吾欲救民。", "我愿同往。", "善。"]),
        ("en", '    "Come in," she said.\n    "Thank you," he said.', ["Come in.", "Thank you."]),
        ("en", '"Yes," said Tom. "No," said Mary.', ["Yes.", "No."]),
        ("en", 'Tom said, "Go." Mary answered, "Stay."', ["Go.", "Stay."]),
        ("en", '"Come," said Mr. Holmes. "At once," Watson replied.', ["Come.", "At once."]),
    ],
)
def test_two_speakers_never_share_a_subtitle(lang: str, text: str, expected: list[str]) -> None:
    """Each speaker's words are a subtitle of their own: a new paragraph (or, in Chinese, a
    quote brought in by a colon; in English, narration naming another speaker within one
    paragraph) is a new speaker, never joined to the one before."""
    assert subtitles(text, dialogue=True, lang=lang) == expected


@pytest.mark.parametrize("marker", ["* * *", "***", "＊＊＊", "※", "  *  *  *  "])
@pytest.mark.parametrize("dialogue", [False, True])
def test_scene_break_markers_are_not_subtitled(marker: str, dialogue: bool) -> None:
    """A scene-break ornament opening a shot is layout, not words: no subtitle shows it, and a
    shot holding only the ornament has no subtitle."""
    text = f"{marker}\n\nThe crossing took half an hour. \u201cHold on,\u201d said Tobias.\n"
    shown = subtitles(text, dialogue=dialogue, lang="en")
    assert shown and not any(mark in line for line in shown for mark in "*＊※")
    assert subtitles(f"{marker}\n", dialogue=dialogue, lang="en") == []


@pytest.mark.parametrize("text", ['"Wait," she said, "not yet."', '"I know." He turned. "But not yet."'])
def test_one_speaker_interrupted_by_narration_stays_one_cue(text: str) -> None:
    """Speech broken by narration that names no other speaker stays one cue."""
    assert len(subtitles(text, dialogue=True, lang="en")) == 1
