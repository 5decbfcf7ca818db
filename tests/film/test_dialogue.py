"""Subtitle text: speech for dialogue shots, narration otherwise, short enough to read."""

from __future__ import annotations

import pytest

from pipeline_kit.film.dialogue import SUBTITLE_CHARS, shorten, subtitle_text


def test_dialogue_shot_shows_only_the_spoken_words() -> None:
    """Quoted speech (straight, curly or corner quotes) is kept; the narration around it is not."""
    assert subtitle_text('He turned. "Run!" he cried.', dialogue=True, lang="en") == "Run!"
    assert subtitle_text("黛玉笑道：「你来了。」", dialogue=True, lang="zh") == "你来了。"
    assert subtitle_text('He turned. "Run!"', dialogue=False, lang="en") == 'He turned. "Run!"'


def test_speech_broken_by_narration_reads_as_one_line() -> None:
    """A comma before a break ends the sentence unless the speech goes on in lower case."""
    stop = '"We leave at dawn," he said. "Not a moment later."'
    goes_on = '"We leave at dawn," he said, "not a moment later."'
    assert subtitle_text(stop, dialogue=True, lang="en") == "We leave at dawn. Not a moment later."
    assert subtitle_text(goes_on, dialogue=True, lang="en") == \
        "We leave at dawn, not a moment later."


@pytest.mark.parametrize("lang,text", [
    ("en", "The rain had not stopped for three days. " * 6),
    ("en", "word " * 60),
    ("zh", "林黛玉走进荣国府，贾宝玉在厅上等候。" * 6),
])
def test_long_text_is_cut_to_fit(lang: str, text: str) -> None:
    """Long text is cut to the language's limit at a sentence or word end, marked when cut."""
    short = shorten(text, lang)
    assert 0 < len(short) <= SUBTITLE_CHARS[lang]
    assert short.endswith(("…", ".", "。"))
    if lang == "en":
        assert not short.rstrip("…").endswith(" ") and "  " not in short
