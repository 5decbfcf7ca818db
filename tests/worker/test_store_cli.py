"""`store show|set` and `export`: one setting every PC reads, bad input refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.store import stored_url


def _url(db: Database) -> str:
    return db.engine.url.render_as_string(hide_password=False)


def test_store_is_set_once_for_the_database(
    sqlite_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The owner's `store set` is kept in the database (what every PC's worker reads) and `store
    show` says which store is in effect and why; the SQLite default is the folder beside the
    database file, fixed by `init`."""
    assert main(["--db", _url(sqlite_db), "store", "show"]) == 0
    assert (
        capsys.readouterr().out.strip() == f"store: {tmp_path} (fixed by `init`: the folder beside the SQLite database)"
    )
    mount = tmp_path / "nas"
    mount.mkdir()
    assert main(["--db", _url(sqlite_db), "store", "set", f"file://{mount}"]) == 0
    assert stored_url(sqlite_db) == str(mount)
    assert main(["--db", _url(sqlite_db), "store", "set", "database"]) == 0
    capsys.readouterr()
    assert main(["--db", _url(sqlite_db), "store", "show"]) == 0
    assert capsys.readouterr().out.strip() == "store: database (set for this database)"


@pytest.mark.parametrize(
    "args, message",
    [
        (["store", "set", "ftp://host/x"], "unknown store"),
        (["store", "set", "s3://"], "needs a bucket"),
        (["store", "gc", "--grace-hours", "-1"], "--grace-hours"),
        (["export", "no-such-book", "out"], "no book"),
    ],
)
def test_bad_store_input_is_one_line_and_exit_2(
    sqlite_db: Database, tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad store URLs, grace periods and unknown books: exit 2, one line, nothing stored."""
    before = stored_url(sqlite_db)
    assert main(["--db", _url(sqlite_db), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert stored_url(sqlite_db) == before == str(tmp_path)


def test_store_show_warns_when_the_store_folder_is_gone(
    db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder store whose folder is not there (a NAS not mounted, a folder moved away): `store
    show` still names it (exit 0) and warns in one line how to point the database at the
    outputs' new place; a folder that is there gets no warning."""
    nas = tmp_path / "nas"
    nas.mkdir()
    assert main(["--db", _url(db), "store", "set", str(nas)]) == 0
    capsys.readouterr()
    assert main(["--db", _url(db), "store", "show"]) == 0
    assert capsys.readouterr().err == ""
    nas.rmdir()
    assert main(["--db", _url(db), "store", "show"]) == 0
    said = capsys.readouterr()
    assert f"store: {nas} (set for this database)" in said.out
    assert said.err.count("\n") == 1 and f"{nas} is not there" in said.err and "store set FOLDER --force" in said.err
