"""The new-book view-model: chapters entered one at a time, and what each submission changed."""

from __future__ import annotations

from pipeline_kit.db import Database
from pipeline_kit.ui.newbook import NewBookModel

from .conftest import TITLE, enter_book, sample_chapters


def test_chapters_added_one_at_a_time_then_unchanged_then_updated(db: Database) -> None:
    """Each paste becomes the next chapter; the same text again changes nothing; new text updates."""
    model = NewBookModel(db)
    first, second, _ = sample_chapters()
    added = model.add_chapter(TITLE, first)
    assert added.ok and added.bookcode == model.bookcode_for(TITLE)
    assert [(c.number, c.action) for c in added.changes] == [(1, "added")]
    assert model.add_chapter(TITLE, second).changes[0].number == 2
    again = model.add_chapter(TITLE, second, 2)
    assert [c.action for c in again.changes] == ["unchanged"]
    unnumbered = model.add_chapter(TITLE, first)  # no number: matched to the chapter it already is
    assert [(c.number, c.action) for c in unnumbered.changes] == [(1, "unchanged")]
    edited = model.add_chapter(TITLE, second + "\nOne more line.\n", 2)
    assert [c.action for c in edited.changes] == ["updated"]
    rows = model.chapters(added.bookcode)
    assert [r.number for r in rows] == [1, 2] and not any(r.split for r in rows)
    assert rows[0].title.startswith("Chapter 1")
    assert [(b.bookcode, b.chapters) for b in model.books()] == [(added.bookcode, 2)]


def test_upload_is_decoded_and_mistakes_are_messages(db: Database) -> None:
    """A GB18030 upload is decoded; an empty title, empty text or binary file is a message, not an error."""
    model = NewBookModel(db)
    assert not model.add_chapter("", "text").ok
    assert not model.add_chapter(TITLE, "   ").ok
    assert model.bookcode_for("") is None
    binary = model.add_upload(TITLE, bytes(range(32)) * 10, "x.bin")
    assert not binary.ok and "binary" in binary.message
    uploaded = model.add_upload("测试之书", "第一章 开始\n\n林小雨走进了老城的茶馆。".encode("gb18030"), "c1.txt")
    assert uploaded.ok, uploaded.message
    assert model.chapters(uploaded.bookcode)[0].length > 5


def test_split_chapter_changed_needs_force(db: Database) -> None:
    """Once split, a changed chapter is refused with advice, and re-split with force saying what changed."""
    from pipeline_kit.text import split_book

    bookcode = enter_book(db, 1)
    split_book(db, bookcode, progress=False)
    body = sample_chapters()[0].replace("young Mara Quill", "young Mara Quill, aged twelve,")
    refused = NewBookModel(db).add_chapter(TITLE, body, 1)
    assert not refused.ok and "--force" in refused.message
    forced = NewBookModel(db).add_chapter(TITLE, body, 1, force=True)
    assert forced.ok and forced.changes[0].action == "resplit"
    assert "changed" in forced.changes[0].detail
