"""Counts in words for messages: '1 chapter', '3 chapters', never '1 chapters' or 'chapter(s)'."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and `noun`, the noun plural unless the count is one: `many` for an irregular
    plural, else the noun with an s ('character sheet' gives 'character sheets')."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"
