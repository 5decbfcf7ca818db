"""The stored place bible, the style line, and the bible folded again as chapters are added, on
all three databases: what split stores, what each edit re-queues, and what earlier shots do."""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots, task_deps, tasks
from pipeline_kit.text import castdb, ingest_text, placesdb, split_book
from pipeline_kit.text.graph import place_task_id, sheet_task_id

CHAPTER_1 = """第一章 渡口

阿禾来到渡口。阿禾道：“船呢？”艄公道：“就来。”阿禾道：“快些。”艄公道：“莫急。”
阿禾坐在渡口等船。艄公道：“上船吧。”阿禾道：“好。”
"""
CHAPTER_2 = """第二章 改名

阿禾道：“我要进城。”艄公道：“去吧。”阿禾笑道：“自今就叫做林青禾也！”林青禾道：“走了。”
林青禾来到渡口。林青禾道：“再会。”艄公道：“保重。”林青禾道：“保重。”
"""
EN_BOOK = """Chapter 1. The Quay

Wren walked down to the quay at dawn. “Late again,” Wren said. Jory waited on the quay.

“The tide,” said Jory. Wren boarded the ferry. Jory sat on the ferry with a lantern.

Chapter 2. The Ferry

On the ferry Wren slept. “Wake up,” said Jory. Wren stood on the quay at noon.
"""


def _rows(db: Database, query: sa.Select) -> list[sa.Row]:  # type: ignore[type-arg]
    with db.engine.connect() as conn:
        return list(conn.execute(query))


def test_split_stores_places_and_frames_are_drawn_from_location_sheets(db: Database) -> None:
    """Split stores the places the shots are set at; each such place gets one location sheet; a
    frame set there waits for it, and its params say which reference is the place."""
    bookcode = ingest_text(db, EN_BOOK, "Quay Book", lang="en").bookcode
    split_book(db, bookcode)
    entries = {e.place.name: e for e in placesdb.list_places(db, bookcode)}
    assert {"quay", "ferry"} <= set(entries) and entries["quay"].shots >= 2
    located = _rows(db, sa.select(shots.c.shot_id, shots.c.location).where(shots.c.location.is_not(None)))
    assert located and {loc for _, loc in located} <= set(entries)
    shot_id, place = located[0]
    deps = {
        r.depends_on for r in _rows(db, sa.select(task_deps).where(task_deps.c.task_id == f"{shot_id}/first_frame"))
    }
    assert place_task_id(bookcode, place) in deps
    [params] = [
        r.params for r in _rows(db, sa.select(tasks.c.params).where(tasks.c.task_id == f"{shot_id}/first_frame"))
    ]
    assert params["references"][place_task_id(bookcode, place)] == f"the location sheet of {place}"
    kinds = {
        r.kind for r in _rows(db, sa.select(tasks.c.kind).where(tasks.c.task_id == place_task_id(bookcode, place)))
    }
    assert kinds == {"location_sheet"}


def test_place_edits_requeue_that_place_only_and_the_style_line_reaches_every_prompt(db: Database) -> None:
    """Describing a place locks it, puts its looks in its sheet and its shots' prompts and resets
    only those; renaming moves its shots; the style line is stored and every shot's prompt carries it."""
    bookcode = ingest_text(db, EN_BOOK, "Quay Book", lang="en").bookcode
    split_book(db, bookcode)
    at_quay = {r.shot_id for r in _rows(db, sa.select(shots.c.shot_id).where(shots.c.location == "quay"))}
    report = placesdb.describe(db, bookcode, "quay", "a long stone quay, tarred bollards, gulls")
    assert report.place is not None and report.place.locked
    assert {t.split("/")[0] for t in report.reset if "/film/" not in t and "/place/" not in t} == at_quay
    prompts = [r.prompt for r in _rows(db, sa.select(shots.c.prompt).where(shots.c.location == "quay"))]
    assert all("tarred bollards" in p for p in prompts)
    placesdb.rename(db, bookcode, "quay", "harbour quay")
    moved = {r.shot_id for r in _rows(db, sa.select(shots.c.shot_id).where(shots.c.location == "harbour quay"))}
    assert moved == at_quay
    placesdb.set_style(db, bookcode, "1890s woodcut, ink on paper, sepia")
    assert all("1890s woodcut" in r.prompt for r in _rows(db, sa.select(shots.c.prompt)))


def test_earlier_shots_follow_the_bible_and_a_merge_is_undoable(db: Database) -> None:
    """A chapter added later names the hero by a new name he gives himself: the bible joins the
    names, and the first chapter's shots, split before, name him as the bible now does. Merging
    the two names again is allowed; unmerging makes the new name a character of its own."""
    bookcode = ingest_text(db, CHAPTER_1, "渡口", lang="zh").bookcode
    split_book(db, bookcode)
    ingest_text(db, CHAPTER_1 + "\n" + CHAPTER_2, "渡口", lang="zh")
    split_book(db, bookcode)
    canonical = {n: c.name for c in (e.character for e in castdb.list_cast(db, bookcode)) for n in c.names}
    hero = canonical["阿禾"]
    assert canonical["林青禾"] == hero
    named = {n for r in _rows(db, sa.select(shots.c.characters)) for n in r.characters}
    assert "阿禾" not in named or hero == "阿禾"
    assert castdb.merge(db, bookcode, "阿禾", "林青禾").character is not None  # already one: allowed
    other = "林青禾" if hero == "阿禾" else "阿禾"
    report = castdb.unmerge(db, bookcode, hero, other)
    assert report.character is not None and report.character.name == other and report.character.locked
    names = {c.name for c in (e.character for e in castdb.list_cast(db, bookcode))}
    assert {hero, other} <= names
    sheets = {r.task_id for r in _rows(db, sa.select(tasks.c.task_id).where(tasks.c.kind == "character_sheet"))}
    assert sheet_task_id(bookcode, other) in sheets
