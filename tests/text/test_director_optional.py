"""The director is optional: with `split --director openai:MODEL` and no chat server to reach (or
no URL at all), the director tasks fail for good, their frames, sheets and clips go ahead with
the rules' prompts, `status` says so in one line, and the book's film is made; on all three
databases."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine, text
from pipeline_kit.cli.engine_cmds import render_status
from pipeline_kit.db import Database
from pipeline_kit.db.schema import events, shots, tasks
from pipeline_kit.engine.lanes import update_lane
from pipeline_kit.plural import plural
from pipeline_kit.text.direct import DirectorSettings
from pipeline_kit.worker.runtime import WorkerConfig, run_worker

BOOK = """Chapter 1. The Quay

Wren walked down to the quay at dawn. The ferry was late, and the gulls screamed over the water.
Jory waited by the ticket hut with a lantern.

"You are late," Jory said. "The tide will not wait."

Wren laughed and took the lantern from him. They boarded the ferry together.
"""


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("url", ["unreachable", "unset"])
def test_an_unreachable_chat_server_leaves_a_film_made_with_the_rules_prompts(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """Director tasks end failed; every other task of the book completes (the film included);
    each frame kept the rules' prompt; one went_ahead event per director; status tells it."""
    if url == "unset":
        monkeypatch.delenv("PIPELINE_KIT_CHAT_URL", raising=False)
    else:
        monkeypatch.setenv("PIPELINE_KIT_CHAT_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("PIPELINE_KIT_CHAT_API_KEY", "sk-none")
    update_lane(db, "llm", max_attempts=1)  # an unreachable server fails for good at once
    book = text.ingest_text(db, BOOK, "Quay Test", lang="en")
    text.split_book(db, book.bookcode, director=DirectorSettings("openai", "director-1"))
    with db.engine.connect() as conn:
        rules = {
            r.task_id: r.params["prompt"]
            for r in conn.execute(sa.select(tasks.c.task_id, tasks.c.params).where(tasks.c.kind == "first_frame"))
        }
    run_worker(
        db,
        WorkerConfig(
            worker_id="w1",
            lanes=("llm", "image", "video", "voice", "assembly"),
            backend="sketch",
            until_empty=True,
            progress=False,
            outputs=tmp_path / "outputs",
            spool=tmp_path / "spool",
            poll_s=0.1,
        ),
    )
    with db.engine.connect() as conn:
        rows = conn.execute(sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.status)).all()
        went = conn.execute(sa.select(events.c.detail).where(events.c.kind == "went_ahead")).scalars().all()
    directors = [r for r in rows if r.kind.startswith("direct_")]
    assert directors and {r.status for r in directors} == {"failed"}
    others = [r for r in rows if not r.kind.startswith("direct_")]
    assert {r.status for r in others} == {"completed"} and "assemble_book" in {r.kind for r in others}
    assert {w["without"] for w in went} == {r.task_id for r in directors}
    with db.engine.connect() as conn:
        now = dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.params).where(tasks.c.task_id.in_(rules))).all())
    assert all(now[t]["prompt"] == p and "Frame:" in p for t, p in rules.items())  # the rules' prompts
    status = render_status(engine.overview(db, book.bookcode), bookcode=book.bookcode)
    assert "went ahead without" in status


def test_a_chapter_whose_director_answers_were_unusable_shows_in_status(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A director task that completes with the rules' prompts for its shots (every answer not
    JSON) is no plain `completed`: status names the chapter, how many shots and why."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from servers.chat_fake import FakeChat

    with FakeChat() as chat:
        monkeypatch.setenv("PIPELINE_KIT_CHAT_URL", f"{chat.url}/v1")
        monkeypatch.setenv("PIPELINE_KIT_CHAT_API_KEY", chat.api_key)
        chat.script(*["malformed"] * 20)
        book = text.ingest_text(db, BOOK, "Quay Test", lang="en")
        text.split_book(db, book.bookcode, director=DirectorSettings("openai", "director-1"))
        config = WorkerConfig(
            worker_id="w1",
            lanes=("llm",),
            backend="noop",
            until_empty=True,
            progress=False,
            outputs=tmp_path / "outputs",
            spool=tmp_path / "spool",
            poll_s=0.1,
        )
        run_worker(db, config)
    with db.engine.connect() as conn:
        done = conn.execute(sa.select(tasks.c.status).where(tasks.c.kind == "direct_chapter")).scalars().all()
        shots_made = conn.execute(sa.select(sa.func.count()).select_from(shots)).scalar()
    assert done == ["completed"]
    status = render_status(engine.overview(db, book.bookcode), bookcode=book.bookcode)
    line = next(line for line in status.splitlines() if line.startswith("chapter 1 fell back"))
    assert f"for {plural(shots_made, 'shot')}" in line and "json" in line.lower(), line
    assert "the cast fell back to the rules" in status
    assert engine.overview(db, book.bookcode).to_json()["fell_back"]
