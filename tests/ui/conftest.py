"""Fixtures of the screen tests: the sample book entered chapter by chapter, as a creator would."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline_kit.db import Database
from pipeline_kit.text import sample_book_path
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.ui.newbook import NewBookModel

TITLE = "The Lamplighter of Gullhaven"


def sample_chapters() -> list[str]:
    """The sample book's chapters as pasted texts, heading first."""
    found = find_chapters(sample_book_path().read_text(encoding="utf-8"), TITLE)
    return [f"{c.title}\n\n{c.text}\n" for c in found.chapters]


def enter_book(db: Database, chapters: int = 2) -> str:
    """Enter the first `chapters` chapters of the sample book; returns its bookcode."""
    model = NewBookModel(db)
    bookcode = ""
    for body in sample_chapters()[:chapters]:
        result = model.add_chapter(TITLE, body)
        assert result.ok, result.message
        bookcode = result.bookcode or ""
    return bookcode


@pytest.fixture(autouse=True)
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Screens cache what they fetch through the store in the user's cache folder; a test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    return tmp_path / "user-cache"
