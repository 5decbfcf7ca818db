"""Bookcodes: stable, readable, safe identifiers made from a book's title."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from pipeline_kit.errors import BadInput

MAX_TITLE = 500
_SLUG_MAX = 40
_WORD = re.compile(r"[a-z0-9]+")


def normalise_title(title: str) -> str:
    """NFC, collapsed whitespace; refuses titles with no letter or digit."""
    cleaned = " ".join(unicodedata.normalize("NFC", title).split())
    if not cleaned:
        raise BadInput("the title is empty: give --title TITLE")
    if len(cleaned) > MAX_TITLE:
        raise BadInput(f"the title is {len(cleaned)} characters; the limit is {MAX_TITLE}")
    if not any(unicodedata.category(ch)[0] in "LN" for ch in cleaned):
        raise BadInput(f"the title {cleaned!r} has no letter or digit")
    return cleaned


def make_bookcode(title: str) -> str:
    """ASCII slug of the title's Latin/digit parts plus 6 hex of its hash, e.g. `the-adventures-of-sh-3f2a1b`.

    The same title always gives the same code; a title without Latin letters gives `book-<hash>`.
    """
    cleaned = normalise_title(title)
    ascii_form = unicodedata.normalize("NFKD", cleaned).encode("ascii", "ignore").decode().lower()
    slug = ""
    for word in _WORD.findall(ascii_form):
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > _SLUG_MAX:
            break
        slug = candidate
    digest = hashlib.sha256(cleaned.casefold().encode()).hexdigest()[:6]
    return f"{slug or 'book'}-{digest}"
