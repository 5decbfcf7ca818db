"""Who speaks a book: every shot gets a voice task in the voice lane, each line attributed to its
speaker; `cast BOOKCODE voice NAME VOICE` binds a voice to a character (kept when the bible is
built again), `narrator` and `narration` set the narration, and each edit re-queues only the
voice tasks whose lines changed."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import characters, tasks
from pipeline_kit.text import ingest_file, split_book
from tests.text.helpers import SAMPLE_TITLE, sample_chapter_files


def voice_tasks(db: Database, bookcode: str) -> dict[str, tuple[str, list[dict]]]:
    """shot id -> (status, lines) of the book's voice tasks."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(tasks.c.shot_id, tasks.c.status, tasks.c.params, tasks.c.lane).where(
                tasks.c.bookcode == bookcode, tasks.c.kind == "voice"
            )
        ).all()
    assert {r.lane for r in rows} == {"voice"}
    return {r.shot_id: (r.status, r.params["lines"]) for r in rows}


def complete_all(db: Database) -> None:
    with db.engine.begin() as conn:
        conn.execute(sa.update(tasks).values(status="completed", deps_remaining=0))


def run(capsys: pytest.CaptureFixture[str], url: str, *argv: str) -> tuple[int, str, str]:
    code = main(["--db", url, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_voices_are_planned_bound_to_characters_and_kept(
    db: Database, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shot has a voice task: narration for shots without dialogue, each quoted turn under
    the character who says it. Binding Mara a voice rewrites and re-queues only the voice tasks
    of her lines (nothing else), `cast` shows it, and splitting a second chapter (the bible built
    again) keeps it, for her lines there too. Narration off leaves narrated shots silent."""
    one, two = sample_chapter_files(tmp_path)[:2]
    bookcode = ingest_file(db, one, SAMPLE_TITLE, chapter=1).bookcode
    split_book(db, bookcode)
    planned = voice_tasks(db, bookcode)
    with db.engine.connect() as conn:
        shot_count = conn.execute(sa.select(sa.func.count()).where(tasks.c.kind == "video")).scalar()
    assert len(planned) == shot_count
    speakers = {line["speaker"] for _, lines in planned.values() for line in lines}
    assert {"Mara", "Tobias"} <= speakers
    assert any(line["narration"] for _, lines in planned.values() for line in lines)
    assert all(line["voice"] is None for _, lines in planned.values() for line in lines)

    complete_all(db)
    code, out, err = run(capsys, db_url, "cast", bookcode, "voice", "Mara", "en+f2")
    assert code == 0, err
    after = voice_tasks(db, bookcode)
    hers = {s for s, (_, lines) in after.items() if any(line["speaker"] == "Mara" for line in lines)}
    assert hers and f"{len(hers) + 2} tasks reset" in out  # and the chapter's and book's films
    for shot, (status, lines) in after.items():
        assert status == ("pending" if shot in hers else "completed")
        assert all(line["voice"] == ("en+f2" if line["speaker"] == "Mara" else None) for line in lines)
    with db.engine.connect() as conn:
        film = conn.execute(sa.select(tasks.c.status).where(tasks.c.kind == "assemble_chapter")).scalar()
        untouched = conn.execute(
            sa.select(sa.func.count()).where(tasks.c.kind != "voice", tasks.c.status != "completed")
        )
    assert film == "pending" and untouched.scalar() == 2  # the chapter's and book's films wait for her voice
    assert "voice: en+f2" in run(capsys, db_url, "cast", bookcode)[1]

    ingest_file(db, two, SAMPLE_TITLE, chapter=2)
    split_book(db, bookcode)
    with db.engine.connect() as conn:
        kept = conn.execute(sa.select(characters.c.voice).where(characters.c.name == "Mara")).scalar()
    assert kept == "en+f2"
    later = voice_tasks(db, bookcode)
    assert any(line["voice"] == "en+f2" for s, (_, lines) in later.items() if "-c002-" in s for line in lines), (
        "chapter 2's lines by Mara"
    )

    code, _, err = run(capsys, db_url, "cast", bookcode, "narration", "off")
    assert code == 0, err
    silent = voice_tasks(db, bookcode)
    assert not any(line["narration"] for _, lines in silent.values() for line in lines)
    assert any(lines == [] for _, lines in silent.values())


@pytest.mark.parametrize(
    "argv,says",
    [
        (("voice", "Nobody", "en"), "no character 'Nobody'"),
        (("voice", "Mara", "two words"), "not a voice name"),
        (("voice", "Mara"), "cast voice takes NAME VOICE"),
        (("narration", "maybe"), "on or off"),
    ],
)
def test_bad_voice_edits_change_nothing(
    db: Database,
    db_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    says: str,
) -> None:
    """A wrong name, voice or switch: one line on stderr, exit 2, nothing stored changed."""
    bookcode = ingest_file(db, sample_chapter_files(tmp_path)[0], SAMPLE_TITLE, chapter=1).bookcode
    split_book(db, bookcode)
    before = voice_tasks(db, bookcode)
    code, out, err = run(capsys, db_url, "cast", bookcode, *argv)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert voice_tasks(db, bookcode) == before
