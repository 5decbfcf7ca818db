"""Guess a text's language (zh or en) from its share of Han characters."""

from __future__ import annotations

import re

LANGS = ("zh", "en")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_SAMPLE = 200_000


def detect_lang(text: str) -> str:
    """'zh' when Han characters outnumber a fifth of the Latin letters, else 'en'."""
    sample = text[:_SAMPLE]
    han = len(_HAN.findall(sample))
    latin = len(_LATIN.findall(sample))
    return "zh" if han and han * 5 >= latin else "en"


def han_count(text: str) -> int:
    """Number of Han characters: the unit of Chinese shot length."""
    return len(_HAN.findall(text))
