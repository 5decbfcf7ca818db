"""The film's task graph: chapter assemblies after their videos, the book after its chapters."""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import chapters, task_deps, tasks
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.engine import enqueue, reset_tasks
from pipeline_kit.film import book_task_id, chapter_task_id
from pipeline_kit.text.film_tasks import assembly_specs, chapter_duration_s

from .books import BOOK, add_book, add_chapter, shot_id


def deps(conn: sa.Connection) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for row in conn.execute(sa.select(task_deps)):
        found.setdefault(row.task_id, set()).add(row.depends_on)
    return found


def statuses(conn: sa.Connection) -> dict[str, str]:
    return dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())


def test_chapters_depend_on_their_videos_and_the_book_on_its_chapters(db: Database) -> None:
    """Each chapter assembly waits for exactly its own shots' videos (listed in shot order), the
    book for exactly the chapter assemblies; enqueueing the graph a second time adds nothing."""
    with db.engine.begin() as conn:
        add_book(conn, {1: 3, 2: 2})
        specs = assembly_specs(conn, BOOK)
        assert [s.task_id for s in specs] == [chapter_task_id(BOOK, 1), chapter_task_id(BOOK, 2), book_task_id(BOOK)]
        assert enqueue(conn, specs).created == 3
        assert enqueue(conn, assembly_specs(conn, BOOK)).created == 0
        stored = deps(conn)
    one, two, book = specs
    assert one.depends_on == tuple(f"{shot_id(1, s)}/video" for s in (1, 2, 3))
    assert stored[one.task_id] == set(one.depends_on)
    assert stored[two.task_id] == {f"{shot_id(2, s)}/video" for s in (1, 2)}
    assert stored[book.task_id] == {one.task_id, two.task_id}
    assert (one.kind, one.lane, one.bookcode, one.shot_id) == ("assemble_chapter", "assembly", BOOK, None)
    p = dict(one.params or {})
    assert p["publish_as"] == f"films/{BOOK}/chapter-001.mp4"
    assert (p["profile"], p["title"]) == ("provider", "Part 1")  # the clips' own picture, by default
    assert not {"width", "height", "fps"} & set(p)
    assert [s["video_task"] for s in p["shots"]] == list(one.depends_on)
    assert p["shots"][1]["subtitles"] == ["We leave at dawn. Not a moment later."]  # speech only
    assert p["shots"][0]["subtitles"] == ["Rain fell on the empty road."]  # narration
    b = dict(book.params or {})
    assert b["publish_as"] == f"films/{BOOK}/film.mp4"
    assert [c["task"] for c in b["chapters"]] == [one.task_id, two.task_id]
    assert b["chapters"][0]["duration_s"] == round(chapter_duration_s(p), 3)


def test_book_is_planned_only_once_every_chapter_is_split(db: Database) -> None:
    """While a chapter is unsplit the book task is not created (it would miss that chapter);
    the split of the last chapter adds its assembly and the book's."""
    with db.engine.begin() as conn:
        add_book(conn, {1: 2}, unsplit=(2,))
        first = enqueue(conn, assembly_specs(conn, BOOK))
        assert first.created == 1 and book_task_id(BOOK) not in statuses(conn)
        conn.execute(sa.delete(chapters).where(chapters.c.number == 2))
        add_chapter(conn, 2, 2)
        conn.execute(sa.update(chapters).where(chapters.c.number == 2).values(split_at=db_now()))
        assert enqueue(conn, assembly_specs(conn, BOOK)).created == 2
        assert deps(conn)[book_task_id(BOOK)] == {chapter_task_id(BOOK, 1), chapter_task_id(BOOK, 2)}


def test_rerun_of_one_shot_reopens_its_chapter_and_the_book_only(db: Database) -> None:
    """Resetting one shot's video sends its chapter's assembly and the book's back to pending;
    the other chapter's film stays completed."""
    with db.engine.begin() as conn:
        add_book(conn, {1: 2, 2: 2, 3: 1})
        enqueue(conn, assembly_specs(conn, BOOK))
        conn.execute(sa.update(tasks).values(status="completed", deps_remaining=0))
        reset = reset_tasks(conn, [f"{shot_id(2, 1)}/video"], reason="redo the clip")
        after = statuses(conn)
        waiting = conn.execute(
            sa.select(tasks.c.deps_remaining).where(tasks.c.task_id == chapter_task_id(BOOK, 2))
        ).scalar()
    assert set(reset) == {f"{shot_id(2, 1)}/video", chapter_task_id(BOOK, 2), book_task_id(BOOK)}
    assert after[chapter_task_id(BOOK, 2)] == after[book_task_id(BOOK)] == "pending"
    assert after[chapter_task_id(BOOK, 1)] == after[chapter_task_id(BOOK, 3)] == "completed"
    assert waiting == 1  # waits for the one clip being redone


def test_a_forced_resplit_replans_that_chapter_film_and_the_book(db: Database, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Split plans the films; a forced re-split that changes a chapter's shots rewrites that
    chapter's assembly (shot list and dependencies) and re-opens it and the book, nothing else."""
    from pipeline_kit.text import ingest_file, sample_book_path, split_book

    bookcode = ingest_file(db, sample_book_path(), "The Lantern Keeper").bookcode
    split_book(db, bookcode)
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).values(status="completed", deps_remaining=0))
        before = {
            r.task_id: r.params
            for r in conn.execute(sa.select(tasks.c.task_id, tasks.c.params).where(tasks.c.lane == "assembly"))
        }
    assert set(before) == {chapter_task_id(bookcode, n) for n in (1, 2, 3)} | {book_task_id(bookcode)}
    text = sample_book_path().read_text(encoding="utf-8")
    third = text[text.index("Chapter 3") :]
    short = tmp_path / "ch3.txt"
    short.write_text(third[: third.index("\n\n", third.index("\n\n") + 2)] + "\n", encoding="utf-8")
    ingest_file(db, short, "The Lantern Keeper", chapter=3, force=True)
    with db.engine.connect() as conn:
        now = statuses(conn)
        params = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == chapter_task_id(bookcode, 3))
        ).scalar_one()
        graph = deps(conn)
    ch3 = chapter_task_id(bookcode, 3)
    assert now[ch3] == "pending" and now[book_task_id(bookcode)] == "pending"
    assert now[chapter_task_id(bookcode, 1)] == now[chapter_task_id(bookcode, 2)] == "completed"
    assert len(params["shots"]) < len(before[ch3]["shots"])
    assert graph[ch3] == {f"{s['shot_id']}/{kind}" for s in params["shots"] for kind in ("video", "voice")}
