"""The director pass end to end: `split --director` makes llm-lane tasks the frames wait for; a
worker runs them against the chat stand-in; the image model then gets the director's prompts;
a rerun or a killed-and-resumed director task pays for no answer twice."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, chapters, shots, task_deps, tasks
from pipeline_kit.text import castdb, ingest_file, sample_book_path, split_book
from pipeline_kit.text.direct import DirectorSettings, director_task_id
from pipeline_kit.worker.runtime import WorkerConfig, run_worker
from tests.text.helpers import SAMPLE_TITLE, sample_chapter_files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from servers.chat_fake import FakeChat  # noqa: E402
from servers.openai_fake import FakeOpenAI  # noqa: E402


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeChat]:
    with FakeChat() as server:
        monkeypatch.setenv("PIPELINE_KIT_CHAT_URL", f"{server.url}/v1")
        monkeypatch.setenv("PIPELINE_KIT_CHAT_API_KEY", server.api_key)
        monkeypatch.setenv("PIPELINE_KIT_CHAT_PRICE_IN", "1")
        monkeypatch.setenv("PIPELINE_KIT_CHAT_PRICE_OUT", "2")
        yield server


def directed_book(db: Database) -> str:
    bookcode = ingest_file(db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(db, bookcode, director=DirectorSettings("openai", "director-1"))
    return bookcode


def work(db: Database, tmp_path: Path, lanes: tuple[str, ...], backend: str = "noop", name: str = "w1") -> None:
    cfg = WorkerConfig(
        worker_id=name,
        lanes=lanes,
        backend=backend,
        until_empty=True,
        progress=False,
        outputs=tmp_path / name / "outputs",
        spool=tmp_path / name / "spool",
        poll_s=0.1,
    )
    run_worker(db, cfg)


def statuses(db: Database, kind: str) -> list[str]:
    with db.engine.connect() as conn:
        return conn.execute(sa.select(tasks.c.status).where(tasks.c.kind == kind)).scalars().all()


def test_frames_wait_for_their_chapters_director_and_get_its_prompts(
    db: Database, chat: FakeChat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per chapter one direct_chapter task, per book one direct_book, in the llm lane; each frame
    and video depends on its chapter's director, each sheet and chapter director on the book's, so
    the chapter requests describe the cast as the book's pass did. After the llm lane ran, the
    image provider is sent the director's first-frame prompt, not the rules' one."""
    bookcode = directed_book(db)
    assert statuses(db, "direct_chapter") == ["pending"] * 3 and statuses(db, "direct_book") == ["pending"]
    frame_id = f"{bookcode}-c002-s0001/first_frame"
    with db.engine.connect() as conn:
        deps = set(conn.execute(sa.select(task_deps.c.depends_on).where(task_deps.c.task_id == frame_id)).scalars())
        lanes = set(conn.execute(sa.select(tasks.c.lane).where(tasks.c.kind.like("direct_%"))).scalars())
    assert director_task_id(bookcode, 2) in deps and lanes == {"llm"}
    early = engine.claim(db, "w0", ["image", "video"], limit=100)  # before the director: places' sheets only
    assert {lease.kind for lease in early} <= {"location_sheet"}
    engine.release_many(db, {lease.task_id: lease.token for lease in early})

    work(db, tmp_path, ("llm",))
    assert statuses(db, "direct_chapter") == ["completed"] * 3
    with db.engine.connect() as conn:
        result = conn.execute(
            sa.select(tasks.c.result).where(tasks.c.task_id == director_task_id(bookcode, 2))
        ).scalar_one()
    direction = result["shots"]["1"]
    assert direction["prompts"]["first_frame"].startswith("Shot 1 opens")
    chapter_asks = [b["messages"][-1]["content"] for b in chat.billing if "[shot " in b["messages"][-1]["content"]]
    cast_lines = [line for a in chapter_asks for line in a.split("\n\n")[0].split("\n") if line.startswith("- ")]
    assert chapter_asks and cast_lines and all("not described" not in line for line in cast_lines)
    assert all("about forty, tall, grey coat" in a for a in chapter_asks if "- " in a.split("\n\n")[0])

    with FakeOpenAI() as images:
        monkeypatch.setenv("PIPELINE_KIT_OPENAI_URL", images.url)
        monkeypatch.setenv("OPENAI_API_KEY", images.api_key)
        with db.engine.begin() as conn:  # only this frame and the sheets it waits for
            conn.execute(
                sa.update(tasks)
                .where(tasks.c.kind.in_(["first_frame", "last_frame", "video"]), tasks.c.task_id != frame_id)
                .values(status="canceled")
            )
        work(db, tmp_path, ("image",), backend="openai", name="w2")
    prompts = [b["prompt"] for b in images.billing]
    assert any(p.startswith(direction["prompts"]["first_frame"]) for p in prompts)
    assert any("Looks: " in p and "about forty, tall, grey coat" in p for p in prompts)  # the book's pass
    assert statuses(db, "character_sheet") == ["completed"] * len(statuses(db, "character_sheet"))


def test_a_rerun_of_an_unchanged_chapter_makes_no_call(sqlite_db: Database, chat: FakeChat, tmp_path: Path) -> None:
    """Director tasks reset and run again (on another PC) find their answers kept: the stand-in's
    call log does not grow and the new attempts cost nothing."""
    bookcode = directed_book(sqlite_db)
    work(sqlite_db, tmp_path, ("llm",))
    paid = len(chat.billing)
    assert paid >= 4
    ids = [director_task_id(bookcode, n) for n in (1, 2, 3)] + [director_task_id(bookcode)]
    with sqlite_db.engine.begin() as conn:
        engine.reset_tasks(conn, ids, reason="rerun")
    work(sqlite_db, tmp_path, ("llm",), name="w2")
    assert len(chat.billing) == paid
    with sqlite_db.engine.connect() as conn:
        costs = (
            conn.execute(sa.select(attempts.c.cost).where(attempts.c.task_id.in_(ids), attempts.c.attempt_no == 2))
            .scalars()
            .all()
        )
    assert len(costs) == 4 and all(not c for c in costs)


def test_shot_show_prints_the_directors_prompts(sqlite_db: Database, chat: FakeChat, tmp_path: Path) -> None:
    """`shot show` gives the director's staging, prompts and line next to the rules' prompt."""
    bookcode = directed_book(sqlite_db)
    sid = f"{bookcode}-c001-s0002"
    show = [sys.executable, "-m", "pipeline_kit", "--db", str(sqlite_db.engine.url), "shot", "show", sid]
    before = json.loads(subprocess.run(show, capture_output=True, text=True, timeout=120).stdout)
    assert before["direction"] is None and before["prompt"]
    work(sqlite_db, tmp_path, ("llm",))
    after = json.loads(subprocess.run(show, capture_output=True, text=True, timeout=120).stdout)
    assert after["direction"]["line"] == "line of shot 2"
    assert after["direction"]["prompts"]["last_frame"].startswith("Shot 2 ends")


def test_a_killed_director_resumes_without_a_second_paid_call(
    sqlite_db: Database, chat: FakeChat, tmp_path: Path
) -> None:
    """A worker killed right after its chat call returned (before it booked or completed
    anything) leaves the answer kept; a worker on another PC takes the task over and completes it
    with no new call."""
    bookcode = ingest_file(sqlite_db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(sqlite_db, bookcode, director=DirectorSettings("openai", "director-1"))
    url = str(sqlite_db.engine.url)
    cmd = [
        sys.executable,
        "-m",
        "pipeline_kit",
        "--db",
        url,
        "work",
        "--lanes",
        "llm",
        "--backend",
        "noop",
        "--until-empty",
        "--quiet",
        "--lease",
        "2",
        "--heartbeat",
        "0.5",
    ]
    env = {
        **os.environ,
        "PIPELINE_KIT_FAULTS": "after_call:kill:1",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    killed = subprocess.run(
        [*cmd, "--worker-id", "doomed"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert killed.returncode == -9, killed.stderr
    paid = len(chat.billing)
    assert paid >= 1
    env.pop("PIPELINE_KIT_FAULTS")
    (tmp_path / "other").mkdir()
    done = subprocess.run(
        [*cmd, "--worker-id", "heir"], cwd=tmp_path / "other", env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    assert statuses(sqlite_db, "direct_chapter") == ["completed"] * 3
    with sqlite_db.engine.connect() as conn:
        first = (
            conn.execute(sa.select(tasks.c.task_id).where(tasks.c.kind.like("direct_%")).order_by(tasks.c.id))
            .scalars()
            .first()
        )
        outcomes = conn.execute(
            sa.select(attempts.c.worker_id, attempts.c.outcome)
            .where(attempts.c.task_id == first)
            .order_by(attempts.c.attempt_no)
        ).all()
        costs = dict(
            conn.execute(sa.select(attempts.c.worker_id, attempts.c.cost).where(attempts.c.task_id == first)).all()
        )
    assert [tuple(o) for o in outcomes] == [("doomed", "lost"), ("heir", "completed")]
    assert costs["doomed"] > 0 and not costs["heir"]  # the killed call is booked; the heir paid nothing
    asked = [json.dumps(b["messages"]) for b in chat.billing]
    assert len(asked) == len(set(asked)) > paid  # every chunk paid once, the killed one included


def test_the_book_pass_never_sends_a_character_a_person_fixed(sqlite_db: Database) -> None:
    """A character a person described (which locks it) is left out of the book's director task;
    the others are sent with their notes and passages from the book."""
    bookcode = ingest_file(sqlite_db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(sqlite_db, bookcode)
    castdb.describe(sqlite_db, bookcode, "Mara", "a girl of twelve in a blue oilskin")
    with sqlite_db.engine.begin() as conn:  # split afresh, the person's description kept
        conn.execute(sa.delete(task_deps))
        conn.execute(sa.delete(tasks))
        conn.execute(sa.delete(shots))
        conn.execute(sa.update(chapters).values(split_at=None))
    split_book(sqlite_db, bookcode, director=DirectorSettings("ollama", "qwen2.5", "zh"))
    with sqlite_db.engine.connect() as conn:
        params = conn.execute(
            sa.select(tasks.c.params).where(tasks.c.task_id == director_task_id(bookcode))
        ).scalar_one()
    sent = [name for chunk in params["chunks"] for name in chunk["expect"]]
    assert "Tobias" in " ".join(sent) and not any(n.startswith("Mara") for n in sent)
    asked = params["chunks"][0]["messages"]
    assert "Chinese" in asked[0]["content"] and "passages: " in asked[1]["content"]


def test_the_book_pass_completes_the_bible_where_nobody_described(
    sqlite_db: Database, chat: FakeChat, tmp_path: Path
) -> None:
    """Once the book's director task completed, `cast` shows its looks (the ones the prompts use)
    for each character no person described, marked as the director's; a person's words still win."""
    bookcode = directed_book(sqlite_db)
    castdb.describe(sqlite_db, bookcode, "Mara", "a girl of twelve in a blue oilskin")
    assert not any(e.director_looks for e in castdb.list_cast(sqlite_db, bookcode))  # not yet run
    work(sqlite_db, tmp_path, ("llm",))
    entries = {e.character.name: e for e in castdb.list_cast(sqlite_db, bookcode)}
    tobias = next(e for name, e in entries.items() if name.startswith("Tobias"))
    assert tobias.looks == f"(director) {tobias.director_looks}" and "grey coat" in tobias.looks
    assert entries["Mara"].looks == "a girl of twelve in a blue oilskin"
    listed = subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", str(sqlite_db.engine.url), "cast", bookcode],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    line = next(row for row in listed.splitlines() if row.startswith("Tobias"))
    assert "(director) " in line and "about forty" in line
    assert "(director)" not in next(row for row in listed.splitlines() if row.startswith("Mara"))


def test_a_bad_director_spec_is_one_line_and_exit_2(sqlite_db: Database) -> None:
    """`split --director` with an unknown protocol, or openai without a model, is refused before
    anything is written."""
    url = str(sqlite_db.engine.url)
    for spec in ("gpt", "openai"):
        done = subprocess.run(
            [sys.executable, "-m", "pipeline_kit", "--db", url, "split", "nobook", "--director", spec],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--director" in done.stderr


def test_a_resplit_chapter_asks_only_for_its_changed_shots(sqlite_db: Database, chat: FakeChat, tmp_path: Path) -> None:
    """After the director ran, chapter 2 is edited and re-ingested with --force: only the shots
    that changed get a new director task (the others keep their answers and their waiting), and
    draining the llm lane asks the model about those shots alone."""
    files = sample_chapter_files(tmp_path)
    bookcode = directed_book(sqlite_db)
    work(sqlite_db, tmp_path, ("llm",))
    paid = len(chat.billing)
    edited = files[1].read_text(encoding="utf-8").replace("sitting on an upturned\nbucket", "asleep on a crate")
    files[1].write_text(edited, encoding="utf-8")
    (outcome,) = ingest_file(sqlite_db, files[1], SAMPLE_TITLE, chapter=2, force=True).chapters
    changed = set(outcome.changes.changed) | set(outcome.changes.added)
    assert changed
    with sqlite_db.engine.connect() as conn:
        directors = dict(
            conn.execute(
                sa.select(tasks.c.task_id, tasks.c.params["director"].as_string()).where(
                    tasks.c.kind == "first_frame", tasks.c.task_id.like("%-c002-%")
                )
            ).all()
        )
    fresh = {d for t, d in directors.items() if t.split("/")[0] in changed}
    assert len(fresh) == 1 and fresh != {director_task_id(bookcode, 2)}
    assert all(d == director_task_id(bookcode, 2) for t, d in directors.items() if t.split("/")[0] not in changed)
    work(sqlite_db, tmp_path, ("llm",), name="w2")
    asked = "".join(m["content"] for b in chat.billing[paid:] for m in b["messages"])
    seqs = {int(s) for s in re.findall(r"\[shot (\d+)\]", asked)}
    assert len(chat.billing) > paid and seqs == {int(sid.rsplit("-s", 1)[1]) for sid in changed}
