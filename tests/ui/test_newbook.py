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


def test_a_chapter_pasted_after_the_split_is_filmed_and_joins_the_book_film(db: Database) -> None:
    """In 01, a chapter pasted once the book was split and its films made is split at once: its
    shots, tasks and film are planned, the book's film is re-planned over both chapters (made
    again, with the reason shown) and nothing else is re-made but the shots the re-folded bible
    re-cast (with chapter 1's film); the message says so."""
    from pipeline_kit.film import book_task_id, chapter_task_id, film_status
    from pipeline_kit.text import split_book
    from tests.text.filmgraph import check_film_graph, finish_all

    bookcode = enter_book(db, 1)
    split_book(db, bookcode, progress=False)
    finish_all(db)
    result = NewBookModel(db).add_chapter(TITLE, sample_chapters()[1])
    assert result.ok, result.message
    assert [(c.number, c.action) for c in result.changes] == [(2, "added")]
    assert "its film is planned" in result.changes[0].detail
    assert "split into" in result.message and "films to be made again: chapter 2 added" in result.message
    assert [r.split for r in NewBookModel(db).chapters(bookcode)] == [True, True]
    recast = "the bible re-cast earlier shots" in result.message
    status = film_status(db, bookcode)
    assert [c.task_status for c in status.chapters] == ["pending" if recast else "completed", "pending"]
    assert status.chapters[1].task_id == chapter_task_id(bookcode, 2)
    assert (status.task_id, status.task_status) == (book_task_id(bookcode), "pending")
    assert status.out_of_date == ("made before: chapter 2 added",)
    check_film_graph(db, bookcode)
    again = NewBookModel(db).add_chapter(TITLE, sample_chapters()[1])  # the same text: nothing to do
    assert [c.action for c in again.changes] == ["unchanged"] and "split into" not in again.message
