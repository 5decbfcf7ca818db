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
    """shot id -> (status, lines) of the book's voice tasks, in the book's order (shot ids sort so)."""
    with db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(tasks.c.shot_id, tasks.c.status, tasks.c.params, tasks.c.lane)
            .where(tasks.c.bookcode == bookcode, tasks.c.kind == "voice")
            .order_by(tasks.c.shot_id)
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


# A made-up Chinese chapter: 周大年 is also called 铁算盘 (the narration says so), 阿芸 is a woman.
ZH_CHAPTER = (
    "第一回　渡口\n\n"
    "周大年又名铁算盘，是镇上的账房。阿芸是渡口的船娘。\n"
    "铁算盘笑道：“今年收成不好。”阿芸道：“只好省着。”\n"
    "周大年道：“明年再看。”阿芸说：“也罢。”\n"
    "铁算盘叹道：“船还没来。”阿芸问道：“你怕黑么？”\n"
    "周大年道：“不怕。”又道：“走罢。”\n"
)


def test_chinese_lines_are_voiced_by_their_speakers_under_any_name(
    db: Database, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Split from a file, each Chinese line goes to the character who says it, also when the
    narration calls him by another name (铁算盘道 is 周大年's line; 又道 goes on with him), so a
    voice bound to him speaks all of them. Re-splitting the changed chapter (ingest --force)
    keeps the voice, and `cast` still shows it."""
    path = tmp_path / "ferry.txt"
    path.write_text(ZH_CHAPTER, encoding="utf-8")
    bookcode = ingest_file(db, path, "渡口", lang="zh").bookcode
    split_book(db, bookcode)
    said = [(line["speaker"], line["text"]) for _, lines in voice_tasks(db, bookcode).values() for line in lines]
    with db.engine.connect() as conn:
        cast = {r.name: set(r.aliases) for r in conn.execute(sa.select(characters.c.name, characters.c.aliases))}
    him = next(name for name, aliases in cast.items() if {name, *aliases} == {"周大年", "铁算盘"})  # one man
    spoken = [(who, text) for who, text in said if text.endswith(("。", "？", "！")) and len(text) <= 8]
    assert spoken == [
        (him, "今年收成不好。"),
        ("阿芸", "只好省着。"),
        (him, "明年再看。"),
        ("阿芸", "也罢。"),
        (him, "船还没来。"),
        ("阿芸", "你怕黑么？"),
        (him, "不怕。"),
        (him, "走罢。"),
    ]

    code, _, err = run(capsys, db_url, "cast", bookcode, "voice", "周大年", "cmn+m3")
    assert code == 0, err
    path.write_text(ZH_CHAPTER.replace("不怕。", "不怕，不怕。"), encoding="utf-8")
    assert ingest_file(db, path, "渡口", lang="zh", force=True).bookcode == bookcode
    after = [line for _, lines in voice_tasks(db, bookcode).values() for line in lines if not line["narration"]]
    assert {line["voice"] for line in after if line["speaker"] == him} == {"cmn+m3"}
    assert any(line["text"] == "不怕，不怕。" and line["voice"] == "cmn+m3" for line in after)
    assert {line["voice"] for line in after if line["speaker"] != him} == {None}
    assert "voice: cmn+m3" in next(x for x in run(capsys, db_url, "cast", bookcode)[1].splitlines() if him in x)
