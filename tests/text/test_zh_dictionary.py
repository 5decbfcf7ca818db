"""The name finder's jieba reads word frequencies one at a time from its indexed copy of the
dictionary (text/zh_dictionary.py); it must cut exactly as jieba with its whole dictionary loaded."""

from __future__ import annotations

import logging
import random

import jieba
import pytest

from pipeline_kit.text.zh_dictionary import tokenizer
from tests.conftest import CORPUS


@pytest.fixture(scope="module")
def loaded() -> jieba.Tokenizer:
    jieba.setLogLevel(logging.WARNING)
    whole = jieba.Tokenizer()
    whole.initialize()
    return whole


def test_cuts_as_jieba_with_its_whole_dictionary(loaded: jieba.Tokenizer) -> None:
    """Random stretches of 西游记 (as short as the contexts names are confirmed in, and longer)
    come out of both tokenizers in the same words."""
    text = (CORPUS / "zh_xiyouji.txt").read_text(encoding="utf-8")
    pick = random.Random(7)
    for _ in range(300):
        start = pick.randrange(len(text) - 60)
        piece = text[start : start + pick.randrange(2, 60)]
        assert list(tokenizer().cut(piece, HMM=False)) == list(loaded.cut(piece, HMM=False)), piece


def test_frequencies_are_jiebas(loaded: jieba.Tokenizer) -> None:
    """A word, a bare prefix (frequency 0) and a string jieba lacks answer as jieba's FREQ does."""
    words = tokenizer().FREQ
    assert tokenizer().total == loaded.total
    for word in ("悟空", "孙悟空", "母亲", "齐天大", "忽然", "xyz不在词典"):
        assert (word in words, words.get(word, -1)) == (word in loaded.FREQ, loaded.FREQ.get(word, -1)), word
    with pytest.raises(KeyError):
        words["xyz不在词典"]
