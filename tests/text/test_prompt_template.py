"""A prompt template is filled from the pieces it was cut into once (`PromptTemplate`): the text
must come out exactly as `string.Template.safe_substitute` writes it, placeholders with and
without braces, $$, a stray $, a placeholder given no value and values given by keyword alike."""

from __future__ import annotations

from string import Template

import pytest

from pipeline_kit.text.prompts import PromptTemplate

TEXTS = [
    "Storyboard of $title: ${scene}x$seq costs $$5, $ alone, $9 and $missing stay.",
    "$title$title${title}",
    "no placeholder at all",
    "",
    "$",
    "ends with $title",
    "${missing} $$$title $$",
]
VALUES = {"title": "西游记 $seq", "scene": 3, "seq": "12"}


@pytest.mark.parametrize("text", TEXTS)
def test_filled_as_string_template_fills(text: str) -> None:
    ours, theirs = PromptTemplate(text), Template(text)
    assert ours.safe_substitute(VALUES) == theirs.safe_substitute(VALUES)
    assert ours.safe_substitute(VALUES, seq="7") == theirs.safe_substitute(VALUES, seq="7")
    assert ours.safe_substitute(title="T") == theirs.safe_substitute(title="T")
    assert ours.safe_substitute() == theirs.safe_substitute()
