"""The stored character bible and its edits: what split stores, and what each edit re-queues."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.migrate import init, require_schema
from pipeline_kit.db.schema import characters, meta, shots, tasks
from pipeline_kit.errors import NotInitialised
from pipeline_kit.text import castdb, ingest_file, sample_book_path, split_book
from pipeline_kit.text.graph import sheet_task_id
from tests.text.helpers import SAMPLE_TITLE, book_all_completed


def _shots_naming(db: Database, bookcode: str, name: str) -> set[str]:
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(shots.c.shot_id, shots.c.characters).where(shots.c.bookcode == bookcode))
        return {r.shot_id for r in rows if name in r.characters}


def _pending(db: Database) -> set[str]:
    with db.engine.connect() as conn:
        return set(conn.execute(sa.select(tasks.c.task_id).where(tasks.c.status == "pending")).scalars())


def _expected(bookcode: str, shot_ids: set[str], sheets: set[str], voices: set[str] = frozenset()) -> set[str]:
    """The sheets given, the frames and videos of the shots given, the voices of the `voices`
    shots (their lines' speaker changed), and the films that follow them."""
    chapters = {f"{bookcode}/film/chapter-{sid.split('-c')[-1][:3]}" for sid in shot_ids}
    frames = {f"{sid}/{kind}" for sid in shot_ids for kind in ("first_frame", "last_frame", "video")}
    said = {f"{sid}/voice" for sid in voices}
    return sheets | frames | said | chapters | ({f"{bookcode}/film/book"} if shot_ids else set())


def _speaking(db: Database, bookcode: str, names: set[str]) -> set[str]:
    """The shots whose voice task has a line said by one of `names`."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(tasks.c.shot_id, tasks.c.params).where(tasks.c.bookcode == bookcode, tasks.c.kind == "voice")
        )
        return {r.shot_id for r in rows if any(line["speaker"] in names for line in r.params["lines"])}


def test_split_stores_the_bible_and_shots_name_canonical_characters(db: Database) -> None:
    """Split stores one row per character (aliases as a UTF-8 JSON list, first and last shot); shots name
    canonical characters only, and there is one sheet task per character a shot names."""
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode)
    entries = {e.character.name: e for e in castdb.list_cast(db, bookcode)}
    assert {"Mara", "Tobias", "Old Hetty"} <= set(entries)
    assert "Hetty" in entries["Old Hetty"].character.aliases
    with db.engine.connect() as conn:
        named = {n for cs in conn.execute(sa.select(shots.c.characters)).scalars() for n in cs}
        sheets = set(conn.execute(sa.select(tasks.c.task_id).where(tasks.c.kind == "character_sheet")).scalars())
        order = [
            r.shot_id
            for r in conn.execute(sa.select(shots.c.shot_id, shots.c.characters).order_by(shots.c.chapter, shots.c.seq))
            if "Mara" in r.characters
        ]
    assert named <= set(entries)
    assert sheets == {sheet_task_id(bookcode, n) for n in named}
    assert (entries["Mara"].first_shot, entries["Mara"].last_shot) == (order[0], order[-1])


def test_describe_requeues_exactly_that_characters_sheet_and_frames(db: Database) -> None:
    """`cast describe` locks the description and re-queues that character's sheet, the frames (and videos,
    films) of the shots naming it, nothing else; the sheet's prompt carries the new description."""
    bookcode = book_all_completed(db)
    report = castdb.describe(db, bookcode, "Mara", "a girl of twelve in a red oilskin coat")
    mine = _expected(bookcode, _shots_naming(db, bookcode, "Mara"), {sheet_task_id(bookcode, "Mara")})
    assert set(report.reset) == mine == _pending(db)
    with db.engine.connect() as conn:
        params = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == sheet_task_id(bookcode, "Mara"))
        ).scalar_one()
        row = conn.execute(sa.select(characters).where(characters.c.name == "Mara")).mappings().one()
    assert "red oilskin coat" in params["prompt"]
    assert row["locked"] and row["description"] == "a girl of twelve in a red oilskin coat"


def test_merge_moves_the_shots_and_requeues_only_their_frames(db: Database) -> None:
    """`cast merge A B`: shots naming A name B, their frames are re-queued and depend on B's sheet; A's sheet
    is canceled and its names become B's aliases; no other task changes."""
    bookcode = book_all_completed(db)
    hetty = _shots_naming(db, bookcode, "Old Hetty")
    her_lines = _speaking(db, bookcode, {"Old Hetty"})
    report = castdb.merge(db, bookcode, "Hetty", "Tobias")
    assert set(report.reset) == _expected(bookcode, hetty, set(), her_lines) == _pending(db)
    assert hetty <= _shots_naming(db, bookcode, "Tobias") and not _shots_naming(db, bookcode, "Old Hetty")
    with db.engine.connect() as conn:
        status = conn.execute(
            sa.select(tasks.c.status).where(tasks.c.task_id == sheet_task_id(bookcode, "Old Hetty"))
        ).scalar_one()
    assert status == "completed"  # a finished sheet stays on record; nothing waits on it any more
    assert {"Old Hetty", "Hetty"} <= set(report.character.aliases)


def test_rename_and_drop_requeue_only_the_shots_naming_the_character(db: Database) -> None:
    """`cast rename` gives the character a new sheet and name in its shots; `cast drop` removes it from its
    shots and a rebuild by split never casts it again; each re-queues only those shots' frames."""
    bookcode = book_all_completed(db)
    tobias = _shots_naming(db, bookcode, "Tobias")
    his_lines = _speaking(db, bookcode, {"Tobias"})
    report = castdb.rename(db, bookcode, "Tobias", "Tobias Wren")
    new_sheet = sheet_task_id(bookcode, "Tobias Wren")
    assert set(report.reset) == _expected(bookcode, tobias, set(), his_lines) and new_sheet in _pending(db)
    assert _shots_naming(db, bookcode, "Tobias Wren") == tobias
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).values(status="completed", deps_remaining=0))
    report = castdb.drop(db, bookcode, "Tobias Wren")
    assert set(report.reset) == _expected(bookcode, tobias, set(), his_lines) == _pending(db)
    assert not _shots_naming(db, bookcode, "Tobias Wren")
    assert "Tobias Wren" not in {e.character.name for e in castdb.list_cast(db, bookcode) if not e.character.dropped}


def test_cast_cli_lists_and_refuses_bad_input(db_url: str, db: Database) -> None:
    """`cast BOOKCODE` lists the bible; an unknown book, unknown name, taken name or wrong arity is one line
    on stderr and exit 2, and changes nothing."""
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pipeline_kit", "--db", db_url, "cast", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    listed = run(bookcode)
    assert listed.returncode == 0 and listed.stdout.startswith(("Mara", "Tobias", "Old Hetty"))
    before = castdb.list_cast(db, bookcode)
    for bad in (
        ["nobook"],
        [bookcode, "describe", "Nobody", "tall"],
        [bookcode, "rename", "Mara", "Tobias"],
        [bookcode, "merge", "Mara"],
        [bookcode, "describe", "Mara", " "],
    ):
        done = run(*bad)
        assert done.returncode == 2, (bad, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert castdb.list_cast(db, bookcode) == before


def test_a_v2_database_gains_the_bible_on_init(db: Database) -> None:
    """A database from before the bible (no `characters` table, no shots.inferred) is refused until
    `init`, which adds both and keeps the shots; split then stores the bible."""
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    with db.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE characters"))
        conn.execute(sa.text("ALTER TABLE shots DROP COLUMN inferred"))
        conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value="2"))
    try:
        with pytest.raises(NotInitialised, match="pipeline-kit init"):
            require_schema(db)
    finally:
        assert init(db)[0] == 2
    split_book(db, bookcode)
    assert {"Mara", "Tobias"} <= {e.character.name for e in castdb.list_cast(db, bookcode)}
