"""A catalogue of bad inputs to the CLI.

Invariant protected (the CLI contract): a bad input or usage gets exit 2 and one clear line on
stderr, never a traceback, and changes nothing stored (every table's row count is the same
before and after); an unreachable database gets exit 1, one line, after the connection retries.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.cli import build_parser
from pipeline_kit.db import create
from pipeline_kit.db.connect import Database
from pipeline_kit.db.migrate import init
from pipeline_kit.db.schema import meta
from pipeline_kit.engine.claim import MAX_BATCH

from .helpers import enqueue_frames, row_counts

WORK = ["work", "--worker-id", "bad", "--lanes", "image", "--until-empty", "--quiet"]
CASES: dict[str, list[str]] = {
    "unknown lane": ["enqueue", "--kind", "noop", "--lane", "nope"],
    "negative count": ["enqueue", "--kind", "noop", "--lane", "image", "--count", "-1"],
    "absurd count": ["enqueue", "--kind", "noop", "--lane", "image", "--count", "100000000"],
    "bad JSON params": ["enqueue", "--kind", "noop", "--lane", "image", "--params", "{bad"],
    "params not an object": ["enqueue", "--kind", "noop", "--lane", "image", "--params", "[1, 2]"],
    "non-numeric priority": ["enqueue", "--kind", "noop", "--lane", "image", "--priority", "high"],
    "unknown dependency": ["enqueue", "--kind", "noop", "--lane", "image", "--after", "nope"],
    "retry unknown task": ["retry", "nope"],
    "cancel unknown task": ["cancel", "nope"],
    "retry a pending task": ["retry", "hlm-001-0001/first_frame"],
    "unknown backend": [*WORK, "--backend", "nope"],
    "sleep backend without seconds": [*WORK, "--backend", "sleep:soon"],
    "routing a kind to a backend that cannot make it": [*WORK, "--backend", "first_frame=sketch,video=comfyui"],
    "routing an unknown kind": [*WORK, "--backend", "poster=sketch"],
    "heartbeat >= lease": [*WORK, "--lease", "5", "--heartbeat", "5"],
    "zero lease": [*WORK, "--lease", "0"],
    "absurd lease": [*WORK, "--lease", "1e12"],
    "zero batch": [*WORK, "--batch", "0"],
    "batch above the claim limit": [*WORK, "--backend", "noop", "--batch", "100000"],
    "no lanes": ["work", "--lanes", ",", "--until-empty", "--quiet"],
    "work on unknown lane": ["work", "--lanes", "nope", "--until-empty", "--quiet", "--backend", "noop"],
    "bad --hours": [*WORK, "--backend", "noop", "--hours", "25-99"],
    "hours not a range": [*WORK, "--backend", "noop", "--hours", "nights"],
    "lane limit not a number": ["lane", "limit", "image", "lots"],
    "lane limit absurd": ["lane", "limit", "image", "100000000"],
    "unknown subcommand": ["explode"],
    "ingest a missing file": ["ingest", "/nonexistent/book.txt", "--title", "Nothing"],
    "chaos with zero tasks": ["chaos", "--tasks", "0"],
    "chaos with negative kills": ["chaos", "--kills", "-3"],
    "chaos on a database with tasks": ["chaos", "--tasks", "5", "--kills", "0", "--restarts", "0"],
    "grant-worker on SQLite": ["grant-worker", "pc2"],
    "grant-worker MariaDB without password": ["--db", "mysql://root@127.0.0.1:3306/pk", "grant-worker", "pc2"],
    "grant-worker password variable unset": ["grant-worker", "pc2", "--password-env", "PK_UNSET_VARIABLE"],
}


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[tuple[str, Database]]:
    """An initialised SQLite database holding a few tasks, events and attempts."""
    url = f"sqlite:///{tmp_path / 'bad.db'}"
    db = create(url)
    init(db)
    engine.seed_default_lanes(db)
    enqueue_frames(db, 2)
    engine.claim(db, "someone", ["image"], lease_s=60)
    yield url, db
    db.dispose()


def _run(main: Callable[..., int], argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse usage errors
        return int(exc.code or 0)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.db
def test_bad_input_is_one_line_exit_2_and_changes_nothing(
    case: str,
    stored: tuple[str, Database],
    cli_main: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each bad input: exit 2, one line on stderr, no traceback, row counts unchanged."""
    url, db = stored
    monkeypatch.delenv("PK_UNSET_VARIABLE", raising=False)
    before = row_counts(db)
    code = _run(cli_main, ["--db", url, *CASES[case]])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert row_counts(db) == before


@pytest.mark.parametrize(
    "url", ["not a url", "oracle://scott@db/orcl", "sqlite:/relative.db", "postgresql://root@db:notaport/pk"]
)
@pytest.mark.db
def test_malformed_database_url(url: str, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]) -> None:
    """A URL that is not one (or names an unsupported database) is bad input: exit 2, one line."""
    code = _run(cli_main, ["--db", url, "status"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


@pytest.mark.db
def test_uninitialised_database(
    tmp_path: Path, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    """A database without the schema: exit 2 pointing at `init`; no table is created."""
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    code = _run(cli_main, ["--db", url, "status"])
    err = capsys.readouterr().err
    assert code == 2 and "pipeline-kit init" in err and len(err.strip().splitlines()) == 1, err
    db = create(url)
    try:
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar() == 0
    finally:
        db.dispose()


@pytest.mark.db
def test_unreachable_database_exits_1_after_retries(tmp_path: Path) -> None:
    """A server that does not answer: exit 1 with one line after the retries (a real process, no traceback)."""
    done = subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", "postgresql://root@127.0.0.1:9/pk", "status"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and "unreachable" in lines[0] and "Traceback" not in done.stderr, done.stderr


@pytest.mark.db
def test_work_flags_are_refused_with_what_is_wrong(
    stored: tuple[str, Database], cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal names the real rule: hours are 0-23 (not "two different times"), and the
    batch limit quoted is the claim's own limit, the same as the help's."""
    url, _ = stored
    assert _run(cli_main, ["--db", url, *WORK, "--backend", "noop", "--hours", "25-99"]) == 2
    assert "hours must be 0-23" in capsys.readouterr().err
    assert _run(cli_main, ["--db", url, *WORK, "--backend", "noop", "--batch", "100000"]) == 2
    err = capsys.readouterr().err
    assert f"from 1 to {MAX_BATCH}" in err and "%" not in err and "it/s" not in err, err


@pytest.mark.parametrize(
    "url",
    ["postgresql://", "postgresql://root@127.0.0.1:5432", "mysql://root@127.0.0.1:3306", "mariadb://root@127.0.0.1/"],
)
@pytest.mark.db
def test_a_server_url_must_name_its_database(
    url: str, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    """A server URL without a database name is refused, not silently connected to whatever
    default database the server picks for the user."""
    code = _run(cli_main, ["--db", url, "status"])
    err = capsys.readouterr().err
    assert code == 2 and "names no database" in err and len(err.strip().splitlines()) == 1, err


READ_ONLY = [
    ["status"],
    ["status", "--json"],
    ["report", "bk"],
    ["film", "bk"],
    ["lane", "list"],
    ["shot", "show", "bk-1-1"],
    ["watchdog", "--once"],
    ["retry", "t1"],
]


@pytest.mark.parametrize("verb", READ_ONLY, ids=" ".join)
@pytest.mark.db
def test_verbs_other_than_init_create_no_database(
    verb: list[str], tmp_path: Path, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    """On a SQLite path that does not exist, only `init` may create the file (or its folder):
    every other verb says there is no database there, exit 2, and leaves the disk as it was."""
    target = tmp_path / "nowhere" / "x.db"
    code = _run(cli_main, ["--db", f"sqlite:///{target}", *verb])
    err = capsys.readouterr().err
    assert code == 2 and f"no database at {target}" in err and "pipeline-kit init" in err, err
    assert len(err.strip().splitlines()) == 1
    assert not target.parent.exists()


@pytest.mark.db
def test_status_in_an_empty_folder_creates_nothing(
    tmp_path: Path, cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`status` with the default URL in a folder without data/ says to run init and makes no
    data/production.db."""
    monkeypatch.delenv("PIPELINE_KIT_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    assert _run(cli_main, ["status"]) == 2
    assert "no database at data/production.db" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.db
def test_a_schema_version_that_is_not_a_number_is_one_line(
    stored: tuple[str, Database], cli_main: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged version row in pk_meta: one clear line naming it, no traceback, for any verb."""
    url, db = stored
    with db.engine.begin() as conn:
        conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value="two"))
    for verb in (["status"], ["init"]):
        code = _run(cli_main, ["--db", url, *verb])
        err = capsys.readouterr().err
        assert code == 2 and "'two'" in err and "not a number" in err, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def _subcommands(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]]:
    """Every parser that has verbs, with its verbs, all the way down."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield parser, action.choices
            for sub in action.choices.values():
                yield from _subcommands(sub)


def test_every_command_help_lists_all_its_verbs() -> None:
    """`pipeline-kit shot --help` shows `show` (and so on for every command with verbs): a verb
    without a help line is hidden from its parent's help."""
    hidden = []
    for parent, verbs in _subcommands(build_parser()):
        listed = {line.split()[0] for line in parent.format_help().splitlines() if line.startswith("    ")}
        hidden += [f"{parent.prog} {verb}" for verb in verbs if verb not in listed]
    assert hidden == []


def test_work_help_names_the_default_backend() -> None:
    """`work --help` says which backend runs when none is given, and the batch range it states is
    the claim's limit."""
    (verbs,) = [verbs for _, verbs in _subcommands(build_parser()) if "work" in verbs]
    text = " ".join(verbs["work"].format_help().split())
    assert "default: sketch" in text and f"1 to {MAX_BATCH}" in text
