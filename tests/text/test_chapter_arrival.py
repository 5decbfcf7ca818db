"""Chapters can come at any time: whatever the order of ingest, split, re-ingest (--force) and
--chapter N, the task graph keeps one film per chapter with shots, after exactly its clips, and
one book film after exactly every chapter's film, re-planned (and re-opened) in the split's
transaction; the cast's first and last shots stay right over all chapters."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import characters, events, shots, task_deps, tasks
from pipeline_kit.film import book_task_id, chapter_task_id, film_status
from pipeline_kit.text import ingest_text, make_bookcode, sample_book_path, split_book
from pipeline_kit.text.direct import DirectorSettings, director_task_id
from pipeline_kit.text.splitter import RuleSplitter
from tests.text.filmgraph import check_film_graph, finish_all
from tests.text.helpers import SAMPLE_TITLE, sample_chapter_files

EDITS = {  # a change to each chapter's text that a re-ingest with --force re-splits
    1: ("young Mara Quill saw", "young Mara Quill, aged twelve, saw"),
    2: ("Mara counted the steps", "Mara, out of breath, counted the steps"),
}

ORDERS = {
    "one by one, made between": ["i1", "s", "w", "i2", "s", "w", "i3", "s", "w"],
    "last chapter first": ["i3", "s", "w", "i1", "s", "i2", "s", "w"],
    "two, then a re-split and a third": ["i1", "i2", "s", "w", "f1", "i3", "s", "w"],
    "middle first, then the whole file": ["i2", "s", "w", "all", "s", "w", "f2", "w"],
    "re-split while a chapter waits unsplit": ["i1", "s", "w", "i3", "f1", "s", "w", "s"],
}


def chapter_texts(tmp_path: Path) -> dict[int, str]:
    return {n: p.read_text(encoding="utf-8") for n, p in enumerate(sample_chapter_files(tmp_path), start=1)}


def edited(body: str, number: int) -> str:
    old, new = EDITS[number]
    assert old in body
    return body.replace(old, new, 1)


def step(db: Database, bookcode: str, texts: dict[int, str], action: str) -> None:
    """One user action: i<N> ingest chapter N alone, f<N> re-ingest it changed with --force,
    all the whole book file, s split, w workers finish everything they can."""
    if action == "s":
        split_book(db, bookcode, progress=False)
    elif action == "w":
        finish_all(db)
    elif action == "all":
        ingest_text(db, sample_book_path().read_text(encoding="utf-8"), SAMPLE_TITLE, progress=False)
    elif action[0] == "i":
        ingest_text(db, texts[int(action[1:])], SAMPLE_TITLE, chapter=int(action[1:]), progress=False)
    else:
        number = int(action[1:])
        ingest_text(db, edited(texts[number], number), SAMPLE_TITLE, chapter=number, force=True, progress=False)


@pytest.mark.parametrize("order", list(ORDERS), ids=list(ORDERS))
def test_graph_holds_over_orders_of_chapter_arrival(db: Database, tmp_path: Path, order: str) -> None:
    """After every step of each order the film graph is whole (filmgraph.check_film_graph); at the
    end every chapter's film and the book's are made and nothing is out of date."""
    texts = chapter_texts(tmp_path)
    bookcode = make_bookcode(SAMPLE_TITLE)
    for action in ORDERS[order]:
        step(db, bookcode, texts, action)
        check_film_graph(db, bookcode)
    status = film_status(db, bookcode)
    arrived = {1, 2, 3} if "all" in ORDERS[order] else {int(a[1:]) for a in ORDERS[order] if a[0] == "i"}
    assert [c.chapter for c in status.chapters] == sorted(arrived)
    assert status.task_status == "completed" and all(c.task_status == "completed" for c in status.chapters)
    assert status.out_of_date == () and all(c.out_of_date == () for c in status.chapters)


def made_book(db: Database, texts: dict[int, str], chapters: tuple[int, ...] = (1, 2)) -> str:
    """The book with `chapters` ingested one by one, split and every task finished."""
    bookcode = ""
    for number in chapters:
        bookcode = ingest_text(db, texts[number], SAMPLE_TITLE, chapter=number, progress=False).bookcode
    split_book(db, bookcode, progress=False)
    finish_all(db)
    return bookcode


def statuses(db: Database, bookcode: str) -> dict[str, str]:
    with db.engine.connect() as conn:
        return dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status).where(tasks.c.bookcode == bookcode)).all())


def voice_lines(db: Database, bookcode: str) -> dict[str, object]:
    """Each voice task's lines (who says what, in which voice)."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(tasks.c.task_id, tasks.c.params).where(tasks.c.bookcode == bookcode, tasks.c.kind == "voice")
        ).all()
    return {r.task_id: r.params.get("lines") for r in rows}


def resets(db: Database) -> int:
    with db.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(events).where(events.c.kind == "reset")).scalar_one()


def casting(db: Database, bookcode: str) -> dict[str, tuple[object, ...]]:
    """Each shot's cast and place, as the bible last named them."""
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(shots).where(shots.c.bookcode == bookcode)).all()
    return {r.shot_id: (tuple(r.characters), tuple(r.inferred or ()), r.location, r.chapter) for r in rows}


def test_adding_a_chapter_reopens_only_the_book_film(db: Database, tmp_path: Path) -> None:
    """Chapter 3 added after the films were made: its tasks are new, the book's film is reset with
    its attempt kept and waits for chapter 3's film; of chapters 1 and 2 only the shots the re-folded
    bible re-cast (a new cast or place) are made again, with their chapter's film, and the split
    says so (their voices only where the lines to say changed); every other clip and film stays
    made. `film` says the book's film is out of date because chapter 3 was added, until it is made."""
    texts = chapter_texts(tmp_path)
    bookcode = made_book(db, texts)
    before, cast_before, said_before = statuses(db, bookcode), casting(db, bookcode), voice_lines(db, bookcode)
    ingest_text(db, texts[3], SAMPLE_TITLE, chapter=3, progress=False)
    waiting = film_status(db, bookcode)
    assert waiting.task_status == "completed" and waiting.out_of_date == ("chapter 3 is not split yet (run split)",)
    report = split_book(db, bookcode, progress=False)
    assert report.films_replanned == ("chapter 3 added",)
    after, cast_after, said_after = statuses(db, bookcode), casting(db, bookcode), voice_lines(db, bookcode)
    recast = {s for s in cast_before if cast_before[s] != cast_after[s]}
    expected = {book_task_id(bookcode)} | {chapter_task_id(bookcode, cast_before[s][3]) for s in recast}
    expected |= {t for t in before if t.split("/")[0] in recast and t not in said_before}
    expected |= {t for t in said_before if said_before[t] != said_after[t]}
    assert {t for t in before if before[t] != after[t]} == expected
    assert {t for t in before if t.split("/")[0] in recast and t not in said_before} <= set(report.recast) <= expected
    assert after[book_task_id(bookcode)] == "pending" and after[chapter_task_id(bookcode, 3)] == "pending"
    with db.engine.connect() as conn:
        book = conn.execute(sa.select(tasks).where(tasks.c.task_id == book_task_id(bookcode))).one()
    waits_for = 1 + len({cast_before[s][3] for s in recast})  # chapter 3's film and each re-cast chapter's
    assert (book.attempts, book.deps_remaining) == (1, waits_for)  # its first attempt is on record
    stale = film_status(db, bookcode)
    assert stale.out_of_date == ("made before: chapter 3 added",)
    refolded = ("made before: the bible was folded again over the whole book",)
    recast_chapters = {cast_before[s][3] for s in recast}
    assert [c.out_of_date for c in stale.chapters] == [refolded if n in recast_chapters else () for n in (1, 2, 3)]
    finish_all(db)
    assert film_status(db, bookcode).out_of_date == ()
    check_film_graph(db, bookcode)


def test_replacing_chapter_one_after_the_book_film_reopens_its_film_and_the_book(db: Database, tmp_path: Path) -> None:
    """A forced re-ingest of chapter 1 after the book's film was made re-opens chapter 1's film and
    the book's (saying why), never chapter 2's; the same text again, or a second split, re-makes
    nothing and creates nothing."""
    texts = chapter_texts(tmp_path)
    bookcode = made_book(db, texts)
    ingest_text(db, texts[1], SAMPLE_TITLE, chapter=1, force=True, progress=False)  # unchanged
    again = split_book(db, bookcode, progress=False)
    assert (again.tasks_created, again.films_replanned, resets(db)) == (0, (), 0)
    ingest_text(db, edited(texts[1], 1), SAMPLE_TITLE, chapter=1, force=True, progress=False)
    now = statuses(db, bookcode)
    assert now[chapter_task_id(bookcode, 1)] == now[book_task_id(bookcode)] == "pending"
    assert now[chapter_task_id(bookcode, 2)] == "completed"
    status = film_status(db, bookcode)
    why = ("made before: chapter 1's shots changed (1 changed)",)  # the edited shot's subtitle cues
    assert status.chapters[0].out_of_date == status.out_of_date == why
    assert status.chapters[1].out_of_date == ()
    check_film_graph(db, bookcode)
    counted = resets(db)
    assert split_book(db, bookcode, progress=False).tasks_created == 0 and resets(db) == counted


def test_a_chapter_added_while_the_book_film_is_being_made_fences_its_worker(db: Database, tmp_path: Path) -> None:
    """A worker assembling the book's film when chapter 3 is split loses its lease: its late result
    is refused and the book's film is made again, after chapter 3's, from every chapter."""
    texts = chapter_texts(tmp_path)
    bookcode = made_book(db, texts)
    with db.engine.begin() as conn:  # the book's film to be made again (a shot of chapter 2 re-run)
        engine.reset_tasks(conn, [book_task_id(bookcode)], reason="test: make it again")
    (lease,) = engine.claim(db, "slow-pc", ["assembly"])
    assert lease.task_id == book_task_id(bookcode)
    ingest_text(db, texts[3], SAMPLE_TITLE, chapter=3, progress=False)
    split_book(db, bookcode, progress=False)
    assert (
        engine.complete(db, engine.Completion(task_id=lease.task_id, token=lease.token, result={})) == engine.Ack.FENCED
    )
    assert statuses(db, bookcode)[book_task_id(bookcode)] == "pending"
    finish_all(db)
    check_film_graph(db, bookcode)
    assert film_status(db, bookcode).out_of_date == ()


class SkipsOrnaments(RuleSplitter):
    """A splitter that finds nothing to film in a chapter of ornaments only (as a model might)."""

    def split(self, text: str, lang: str):  # type: ignore[no-untyped-def]
        return [] if set(text) <= set("* \n") else super().split(text, lang)


def test_a_chapter_with_no_shots_changes_no_film(db: Database, tmp_path: Path) -> None:
    """A chapter split into no shots gets no film and leaves the book's film as made; `film` says
    it has nothing to film."""
    texts = chapter_texts(tmp_path)
    bookcode = made_book(db, texts)
    ingest_text(db, "* * *\n", SAMPLE_TITLE, chapter=3, progress=False)
    report = split_book(db, bookcode, splitter=SkipsOrnaments(), progress=False)
    assert (report.chapters_split, report.shots_created, report.tasks_created) == (1, 0, 0)
    assert statuses(db, bookcode)[book_task_id(bookcode)] == "completed" and resets(db) == 0
    status = film_status(db, bookcode)
    assert status.chapters[2].state == "nothing to film (no shots)" and status.out_of_date == ()
    check_film_graph(db, bookcode)


def test_a_directed_book_directs_the_chapters_that_come_later(db: Database, tmp_path: Path) -> None:
    """A book split with a director gives a chapter that comes later (split without --director) a
    director task of its own, after the book's one task, with the same settings; its frames wait."""
    texts = chapter_texts(tmp_path)
    bookcode = ingest_text(db, texts[1], SAMPLE_TITLE, chapter=1, progress=False).bookcode
    split_book(db, bookcode, director=DirectorSettings("openai", "director-1", "zh", 4096), progress=False)
    ingest_text(db, texts[2], SAMPLE_TITLE, chapter=2, progress=False)
    split_book(db, bookcode, progress=False)
    with db.engine.connect() as conn:
        rows = {
            r.task_id: r
            for r in conn.execute(sa.select(tasks).where(tasks.c.kind.in_(["direct_book", "direct_chapter"])))
        }
        frame = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == f"{bookcode}-c002-s0001/first_frame")
        ).scalar_one()
    assert set(rows) == {director_task_id(bookcode), director_task_id(bookcode, 1), director_task_id(bookcode, 2)}
    later = rows[director_task_id(bookcode, 2)].params
    assert (later["protocol"], later["model"], later["prompt_lang"], later["context_tokens"]) == (
        "openai",
        "director-1",
        "zh",
        4096,
    )
    assert frame["director"] == director_task_id(bookcode, 2)
    check_film_graph(db, bookcode)


def test_frames_awaiting_review_stay_waiting_when_a_chapter_comes(db: Database, tmp_path: Path) -> None:
    """With review on, chapter 1's frames awaiting a person stay awaiting review (no attempt added)
    when chapter 2 arrives and is split; chapter 2's frames join the review like any."""
    from pipeline_kit.engine import set_review

    texts = chapter_texts(tmp_path)
    bookcode = ingest_text(db, texts[1], SAMPLE_TITLE, chapter=1, progress=False).bookcode
    set_review(db, bookcode, True)
    split_book(db, bookcode, progress=False)
    finish_all(db)
    waiting = {t for t, s in statuses(db, bookcode).items() if s == "awaiting_review"}
    assert waiting
    ingest_text(db, texts[2], SAMPLE_TITLE, chapter=2, progress=False)
    split_book(db, bookcode, progress=False)
    after = statuses(db, bookcode)
    assert {t for t in waiting if after[t] != "awaiting_review"} == set()
    check_film_graph(db, bookcode)


def test_split_mends_a_book_whose_chapter_was_split_without_its_film(db: Database, tmp_path: Path) -> None:
    """A book left as an interrupted (or older, failing) split left it: chapter 2 split but its
    film never planned, the book's film made of chapter 1 alone, the cast's shots unset. `film`
    says so; the next `split` plans chapter 2's film, re-opens the book's over both chapters and
    sets the cast's first and last shots again, creating no shot."""
    texts = chapter_texts(tmp_path)
    bookcode = made_book(db, texts, (1,))
    ingest_text(db, texts[2], SAMPLE_TITLE, chapter=2, progress=False)
    split_book(db, bookcode, progress=False)
    chapter_two, book = chapter_task_id(bookcode, 2), book_task_id(bookcode)
    with db.engine.begin() as conn:  # undo what the split planned for chapter 2's film
        conn.execute(
            sa.delete(task_deps).where(
                sa.or_(task_deps.c.task_id == chapter_two, task_deps.c.depends_on == chapter_two)
            )
        )
        conn.execute(sa.delete(tasks).where(tasks.c.task_id == chapter_two))
        params = conn.execute(sa.select(tasks.c.params).where(tasks.c.task_id == book)).scalar_one()
        conn.execute(
            sa.update(tasks)
            .where(tasks.c.task_id == book)
            .values(params={**params, "chapters": params["chapters"][:1]}, status="completed", deps_remaining=0)
        )
        conn.execute(sa.update(characters).values(first_shot=None, last_shot=None))
    status = film_status(db, bookcode)
    assert status.chapters[1].state == "not planned (run split again)"
    assert status.out_of_date == ("chapter 2 is not in it (run split)",)
    report = split_book(db, bookcode, progress=False)
    assert (report.chapters_split, report.shots_created, report.tasks_created) == (0, 0, 1)
    assert report.films_replanned == ("chapter 2 added",)
    assert statuses(db, bookcode)[book] == "pending"
    check_film_graph(db, bookcode)
