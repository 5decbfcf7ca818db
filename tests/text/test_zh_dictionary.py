"""The name finder cuts Chinese as jieba does (text/zh_dictionary.py: jieba's cut without its HMM,
over word frequencies read one at a time from an indexed copy of the dictionary); it must give
exactly the words of jieba with its whole dictionary loaded."""

from __future__ import annotations

import logging
import random

import jieba
import pytest

from pipeline_kit.text.zh_dictionary import cut, frequencies, read_ahead
from tests.conftest import CORPUS


@pytest.fixture(scope="module")
def loaded() -> jieba.Tokenizer:
    jieba.setLogLevel(logging.WARNING)
    whole = jieba.Tokenizer()
    whole.initialize()
    return whole


def test_cuts_as_jieba_with_its_whole_dictionary(loaded: jieba.Tokenizer) -> None:
    """Random stretches of 西游记 (as short as the contexts names are confirmed in, and longer),
    and text mixing Latin letters, digits, spaces and symbols, come out of both in the same words."""
    text = (CORPUS / "zh_xiyouji.txt").read_text(encoding="utf-8")
    pick = random.Random(7)
    pieces = [text[s : s + pick.randrange(2, 60)] for s in (pick.randrange(len(text) - 60) for _ in range(300))]
    pieces += ["阿Ｑ说ab 12，孙悟空a1道：“OK! C++ 3.5%”\r\n\t好-的", "  ", "", "x"]
    for piece in pieces:
        assert list(cut(piece)) == list(loaded.cut(piece, HMM=False)), piece


def test_frequencies_are_jiebas(loaded: jieba.Tokenizer) -> None:
    """A word, a bare prefix (frequency 0) and a string jieba lacks answer as jieba's FREQ does."""
    words = frequencies()
    assert words.total == loaded.total
    for word in ("悟空", "孙悟空", "母亲", "孙悟", "忽然", "xyz不在词典"):  # 孙悟: a bare prefix
        assert (word in words, words.get(word, -1)) == (word in loaded.FREQ, loaded.FREQ.get(word, -1)), word
    with pytest.raises(KeyError):
        words["xyz不在词典"]


def test_read_ahead_reads_all_that_cut_looks_up(loaded: jieba.Tokenizer) -> None:
    """After `read_ahead` of some texts, cutting them looks nothing more up, and every answer read
    in a batch (a word, a bare prefix, none) is jieba's."""
    text = (CORPUS / "zh_xiyouji.txt").read_text(encoding="utf-8")
    pick = random.Random(11)
    pieces = [text[s : s + pick.randrange(2, 30)] for s in (pick.randrange(len(text) - 30) for _ in range(200))]
    pieces.append("阿Ｑ说ab 12，孙悟空a1道：“OK! C++ 3.5%”")
    frequencies.cache_clear()  # a fresh copy that knows nothing yet
    words = frequencies()
    read_ahead(pieces)
    known = dict(words._known)
    assert known
    for piece in pieces:
        assert list(cut(piece)) == list(loaded.cut(piece, HMM=False)), piece
    assert words._known == known  # nothing read one by one
    assert all(n == loaded.FREQ.get(word) for word, n in known.items())
