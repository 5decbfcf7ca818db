"""The text commands as users run them: `python -m pipeline_kit --db URL ...` in a subprocess."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline_kit import fonts
from pipeline_kit.db import Database, create
from pipeline_kit.text import make_bookcode, sample_book_path
from tests.text.helpers import SAMPLE_TITLE, row_counts


def run(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", url, *args], capture_output=True, text=True, timeout=300
    )


def test_ingest_split_and_shot_commands(db_url: str) -> None:
    """ingest prints the bookcode; split creates shots once; shot show/edit/rerun work, on every database."""
    ingested = run(db_url, "ingest", str(sample_book_path()), "--title", SAMPLE_TITLE)
    assert ingested.returncode == 0, ingested.stderr
    bookcode = ingested.stdout.strip()
    assert bookcode == make_bookcode(SAMPLE_TITLE)
    first = run(db_url, "split", bookcode)
    assert first.returncode == 0 and "3 chapters split" in first.stdout, first.stderr
    second = run(db_url, "split", bookcode)
    assert "0 shots, 0 tasks created" in second.stdout
    sid = f"{bookcode}-c001-s0002"
    shown = run(db_url, "shot", "show", sid)
    assert shown.returncode == 0 and json.loads(shown.stdout)["shot_id"] == sid
    edited = run(db_url, "shot", "edit", sid, "--characters", "Mara,Tobias", "--location", "The pier")
    assert edited.returncode == 0 and "5 tasks reset" in edited.stdout, edited.stderr
    assert json.loads(run(db_url, "shot", "show", sid).stdout)["location"] == "The pier"
    assert "5 tasks reset" in run(db_url, "shot", "rerun", sid).stdout


def _bad_files(tmp: Path) -> dict[str, tuple[Path, list[str]]]:
    """name -> (file, extra args) for each kind of bad input."""
    files = {
        "empty": b"",
        "binary": bytes(range(256)) * 40,
        "undecodable": b"Chapter 1\n\nSome words \x80\x81\xff\xfe more words.\n",
        "heading only": "第一回　只有标题\n\n".encode(),
        "good": b"Chapter 1\n\nA short and proper chapter.\n",
    }
    out: dict[str, tuple[Path, list[str]]] = {}
    for name, data in files.items():
        path = tmp / f"{name.replace(' ', '_')}.txt"
        path.write_bytes(data)
        out[name] = (path, ["--title", "Bad Input Book"])
    out["punctuation title"] = (out["good"][0], ["--title", "!?…"])
    big = tmp / "big.txt"
    line = ("All work and no play makes a very dull story indeed. " * 20 + "\n").encode()
    with big.open("wb") as handle:
        for _ in range(50 * 2**20 // len(line) + 1):
            handle.write(line)
    out["50 MB file"] = (big, ["--title", "Huge"])
    out["missing file"] = (tmp / "nope.txt", ["--title", "Nope"])
    out["chapter number 0"] = (out["good"][0], ["--title", "X", "--chapter", "0"])
    del out["good"]
    return out


@pytest.mark.db
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    """Each bad input gives exit 2 and one line on stderr (no traceback) and leaves every table unchanged."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert run(url, "init").returncode == 0
    db = create(url)
    before = row_counts(db)
    for name, (path, extra) in _bad_files(tmp_path).items():
        result = run(url, "ingest", str(path), *extra)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, (name, result.stderr)
        assert len(lines) == 1 and "Traceback" not in result.stderr, (name, result.stderr)
        assert row_counts(db) == before, name
    for args in (("split", "no-such-book-000000"), ("shot", "show", "nope"), ("shot", "edit", "nope", "--prompt", "x")):
        result = run(url, *args)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, args
    db.dispose()


@pytest.mark.db
def test_text_without_markers_warns_on_stderr(tmp_path: Path) -> None:
    """A file with no chapter markers is ingested as one chapter, with a warning on stderr."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    run(url, "init")
    path = tmp_path / "plain.txt"
    path.write_text("Once upon a time there was a lamp.\n\nIt went out.\n", encoding="utf-8")
    result = run(url, "ingest", str(path), "--title", "Plain")
    assert result.returncode == 0 and result.stdout.strip() == make_bookcode("Plain")
    assert "warning" in result.stderr and "one chapter" in result.stderr


@pytest.mark.parametrize("encoding", ["utf-8-sig", "gb18030", "utf-16"])
@pytest.mark.db
def test_encodings_through_the_command(tmp_path: Path, encoding: str) -> None:
    """The command reads UTF-8 with a BOM, GB18030 and UTF-16 files and reports what it read."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    run(url, "init")
    path = tmp_path / "zh.txt"
    path.write_bytes("第一回　开篇\r\n    悟空道：“师父！”三藏笑了。\r\n".encode(encoding))
    result = run(url, "ingest", str(path), "--title", "编码")
    assert result.returncode == 0, result.stderr
    assert "(zh," in result.stderr


@pytest.mark.db
def test_model_splitter_falls_back_when_the_model_is_unreachable(tmp_path: Path) -> None:
    """`split --model ollama` with no server still splits (by the rules), warning once on stderr."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    run(url, "init")
    bookcode = run(url, "ingest", str(sample_book_path()), "--title", SAMPLE_TITLE).stdout.strip()
    env_run = subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", url, "split", bookcode, "--model", "ollama:none"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIPELINE_KIT_OLLAMA_URL": "http://127.0.0.1:9"},
    )
    assert env_run.returncode == 0, env_run.stderr
    assert "3 chapters split" in env_run.stdout and "fell back to the rules" in env_run.stderr
    assert run(url, "split", bookcode, "--model", "gpt").returncode == 2


def test_split_with_a_director_says_which_lane_its_tasks_wait_in(tmp_path: Path) -> None:
    """A worker serves the llm lane only when asked, and the frames wait for the director: the
    split says so in one line, with the lanes to serve, so the film is not left waiting unseen."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    run(url, "init")
    bookcode = run(url, "ingest", str(sample_book_path()), "--title", SAMPLE_TITLE).stdout.strip()
    result = run(url, "split", bookcode, "--director", "openai:director-1")
    assert result.returncode == 0, result.stderr
    told = [line for line in result.stderr.splitlines() if "lane llm" in line]
    assert len(told) == 1 and "--lanes image,video,voice,assembly,llm" in told[0]
    assert "lane llm" not in run(url, "split", bookcode).stderr  # nothing new, nothing said


def test_the_style_line_is_set_once_at_the_split_or_the_split_says_how(tmp_path: Path) -> None:
    """`split --style` writes every prompt with the book's style line (nothing to redo); a split
    without one says in one line how to set it; an empty one is refused in one line, nothing split."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    run(url, "init")
    plain, styled = (
        run(url, "ingest", str(sample_book_path()), "--title", title).stdout.strip() for title in ("Plain", "Styled")
    )
    refused = run(url, "split", styled, "--style", "  ")
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1 and "style line" in refused.stderr
    quiet = run(url, "split", styled, "--style", "1900s fishing town, watercolour")
    assert quiet.returncode == 0 and "no style line" not in quiet.stderr, quiet.stderr
    said = run(url, "split", plain).stderr
    assert [line for line in said.splitlines() if "no style line" in line] == [
        next(line for line in said.splitlines() if f"pipeline-kit style {plain}" in line)
    ]
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        prompts = [
            (task_id.split("-")[0], json.loads(params)["prompt"])
            for task_id, params in conn.execute("SELECT task_id, params FROM tasks WHERE kind = 'first_frame'")
        ]
    assert prompts and all(
        ("Style: 1900s fishing town, watercolour." in p) == (book == "styled") for book, p in prompts
    )


def test_a_missing_cjk_font_is_said_once_at_ingest_and_at_worker_start(db_url: str, tmp_path: Path) -> None:
    """Without a CJK font, ingesting a Chinese book and starting a worker on it each write one
    warning line (not one per frame); with the font found, neither warns."""
    book = tmp_path / "zh.txt"
    book.write_text("第一回　宴桃园\n\n刘备与关羽在桃园中饮酒。\n张飞说：“我们结为兄弟。”\n", encoding="utf-8")
    none = {**os.environ, "PIPELINE_KIT_FONT": "none"}

    def warnings_of(result: subprocess.CompletedProcess[str]) -> list[str]:
        assert result.returncode == 0, result.stderr
        return [line for line in result.stderr.splitlines() if "CJK" in line or "cjk" in line]

    def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pipeline_kit", "--db", db_url, *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )

    ingested = cli(none, "ingest", str(book), "--title", "三国演义")
    assert len(warnings_of(ingested)) == 1
    bookcode = ingested.stdout.strip()
    assert cli(none, "split", bookcode).returncode == 0
    work = [
        "work",
        "--lanes",
        "image",
        "--until-empty",
        "--quiet",
        "--outputs",
        str(tmp_path / "out"),
        "--store",
        str(tmp_path / "out"),
    ]
    worked = cli(none, *work)
    assert len(warnings_of(worked)) == 1 and "empty boxes" in worked.stderr
    assert list((tmp_path / "out").rglob("*.png"))  # frames were drawn, and warned of once
    assert fonts.cjk_font_path() is not None  # the test extra installs the cjk extra's font
    assert cli(none, "shot", "rerun", f"{bookcode}-c001-s0001").returncode == 0
    assert warnings_of(cli(dict(os.environ), *work)) == []


def test_the_notebook_worker_warns_of_a_missing_cjk_font_too(
    sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The warning comes from the worker itself, so a worker started from the notebook (in
    process, no CLI) says it once as well."""
    from pipeline_kit.text import ingest_text, split_book
    from pipeline_kit.worker import WorkerConfig, run_worker

    monkeypatch.setenv("PIPELINE_KIT_FONT", "none")
    for cached in (fonts.cjk_font_path, fonts._face, fonts.matplotlib_rc):
        cached.cache_clear()
    monkeypatch.setattr(fonts, "_warned", set())
    try:
        book = ingest_text(sqlite_db, "第一回　宴桃园\n\n刘备与关羽在桃园中饮酒。\n", "三国演义", lang="zh")
        split_book(sqlite_db, book.bookcode)
        run_worker(
            sqlite_db,
            WorkerConfig(
                worker_id="nb",
                lanes=("image",),
                max_tasks=2,
                progress=False,
                outputs=tmp_path / "out",
                spool=tmp_path / "spool",
            ),
        )
        assert capsys.readouterr().err.count("empty boxes") == 1
    finally:
        for cached in (fonts.cjk_font_path, fonts._face, fonts.matplotlib_rc):
            cached.cache_clear()
