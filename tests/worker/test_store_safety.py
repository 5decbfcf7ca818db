"""Safe store and export commands: `store set` never strands outputs or saves a store that does
not work, `export` never overwrites a user's folder unasked and writes all it can."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import store
from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import books, tasks
from pipeline_kit.engine import TaskSpec, enqueue
from pipeline_kit.worker.outputs import file_digest
from pipeline_kit.worker.runtime import WorkerConfig, run_worker

from .test_several_pcs import cli, pc


def _url(db: Database) -> str:
    return db.engine.url.render_as_string(hide_password=False)


def _made(db: Database, tmp_path: Path, n: int = 3) -> list[sa.RowMapping]:
    """`n` tasks made by a worker into the store in effect; their rows."""
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title="Bk", lang="en", review=False))
        enqueue(conn, [TaskSpec(task_id=f"t{i}", kind="noop", lane="default", bookcode="bk") for i in range(n)])
    cfg = WorkerConfig(
        worker_id="w", lanes=("default",), backend="noop", until_empty=True, spool=tmp_path / "spool", progress=False
    )
    run_worker(db, cfg)
    with db.engine.connect() as conn:
        rows = list(conn.execute(sa.select(tasks).order_by(tasks.c.id)).mappings())
    assert [r["status"] for r in rows] == ["completed"] * n
    return rows


def _one_line(err: str, *words: str) -> None:
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err


def test_store_set_refuses_while_outputs_live_in_the_old_store_unless_copy(
    db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With outputs in the current store (SQLite's folder, the servers' database), `store set`
    to a new folder is refused in one line and changes nothing; `--copy` copies every output
    (checksum-checked) and then sets it, and `export` from the new store gives every file."""
    monkeypatch.chdir(tmp_path)
    rows = _made(db, tmp_path)
    before = store.effective_url(db)[0]
    nas = tmp_path / "nas"
    nas.mkdir()
    assert main(["--db", _url(db), "store", "set", str(nas)]) == 2
    _one_line(capsys.readouterr().err, "3 outputs live in the current store", "--copy", "--force")
    assert store.effective_url(db)[0] == before and not list(nas.iterdir())
    assert main(["--db", _url(db), "store", "set", str(nas), "--copy"]) == 0
    assert "3 outputs copied" in capsys.readouterr().out
    assert store.effective_url(db)[0] == str(nas)
    for r in rows:
        assert file_digest(nas / r["output_path"])[1] == r["result"]["sha256"]
    assert main(["--db", _url(db), "export", "bk", str(tmp_path / "out")]) == 0
    assert len(list((tmp_path / "out").rglob("*.json"))) == 3


def test_store_set_force_sets_it_and_says_nothing_was_copied(
    sqlite_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--force` sets the new store though outputs stay in the old one (nothing copied)."""
    _made(sqlite_db, tmp_path, 1)
    (tmp_path / "nas").mkdir()
    assert main(["--db", _url(sqlite_db), "store", "set", str(tmp_path / "nas"), "--force"]) == 0
    assert store.stored_url(sqlite_db) == str(tmp_path / "nas") and not list((tmp_path / "nas").iterdir())


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://[::1", ("not a store URL",)),
        ("/no/such/folder/anywhere", ("does not exist",)),
    ],
)
def test_a_store_that_cannot_work_is_refused_before_it_is_saved(
    sqlite_db: Database, url: str, words: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed URL and a folder that is not there: one line, exit 2, nothing saved."""
    before = store.stored_url(sqlite_db)
    assert main(["--db", _url(sqlite_db), "store", "set", url]) == 2
    _one_line(capsys.readouterr().err, *words)
    assert store.stored_url(sqlite_db) == before


def test_a_folder_that_cannot_be_written_is_refused(
    sqlite_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder that takes no file (read-only; for root, /proc): `store set` says it cannot be
    written and saves nothing."""
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    before = store.stored_url(sqlite_db)
    target = "/proc" if os.geteuid() == 0 else str(ro)  # root writes into read-only folders
    assert main(["--db", _url(sqlite_db), "store", "set", target]) == 2
    _one_line(capsys.readouterr().err, "cannot be written")
    assert store.stored_url(sqlite_db) == before


def test_wrong_s3_keys_say_credentials_refused(
    sqlite_db: Database, checked_s3: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An S3 server (SeaweedFS with one identity) given wrong keys: `store set` says
    "credentials refused" in one line, exit 2, nothing saved; the right keys are accepted."""
    for key, value in checked_s3.items():
        monkeypatch.setenv(key, value)
    before = store.stored_url(sqlite_db)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    assert main(["--db", _url(sqlite_db), "store", "set", "s3://films/keys"]) == 2
    _one_line(capsys.readouterr().err, "credentials refused", "AWS_SECRET_ACCESS_KEY")
    assert store.stored_url(sqlite_db) == before
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", checked_s3["AWS_SECRET_ACCESS_KEY"])
    assert main(["--db", _url(sqlite_db), "store", "set", "s3://films/keys"]) == 0
    assert store.stored_url(sqlite_db) == "s3://films/keys"


def test_export_refuses_a_folder_with_files_unless_update_or_force(
    db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder holding a user's file is refused (exit 2, the file untouched); `--update`
    rewrites only the exported file that changed; `--force` overwrites."""
    monkeypatch.chdir(tmp_path)
    rows = _made(db, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("the user's")
    assert main(["--db", _url(db), "export", "bk", str(out)]) == 2
    _one_line(capsys.readouterr().err, "not empty", "--update", "--force")
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    assert main(["--db", _url(db), "export", "bk", str(out), "--update"]) == 0
    assert "3 files written" in capsys.readouterr().out
    changed = out / rows[0]["output_path"]
    changed.write_text("edited")
    assert main(["--db", _url(db), "export", "bk", str(out), "--update"]) == 0
    said = capsys.readouterr().out
    assert "1 file written" in said and "2 files already up to date" in said
    assert file_digest(changed)[1] == rows[0]["result"]["sha256"]
    assert main(["--db", _url(db), "export", "bk", str(out), "--force"]) == 0
    assert "3 files written" in capsys.readouterr().out
    assert (out / "mine.txt").read_text() == "the user's"


def test_export_writes_what_it_can_and_lists_what_it_could_not(
    sqlite_db: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One output gone from the store and one damaged: export writes the others, names the two
    on stderr and exits 1."""
    monkeypatch.chdir(tmp_path)
    rows = _made(sqlite_db, tmp_path, 4)
    (tmp_path / rows[0]["output_path"]).unlink()
    (tmp_path / rows[1]["output_path"]).write_text("damaged")
    assert main(["--db", _url(sqlite_db), "export", "bk", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"not written: {rows[0]['output_path']}: not in the store" in err
    assert f"not written: {rows[1]['output_path']}" in err and "does not match its checksum" in err
    assert "2 outputs could not be exported" in err and "Traceback" not in err
    for r in rows[2:]:
        assert file_digest(tmp_path / "out" / r["output_path"])[1] == r["result"]["sha256"]


@pytest.mark.parametrize("where", ["onto a file", "under a file"])
def test_export_into_a_folder_it_cannot_make_is_one_line(
    sqlite_db: Database, tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Export onto a file, or into a folder that cannot be made (its parent is a file): one
    line, exit 2, no traceback, the file untouched."""
    monkeypatch.chdir(tmp_path)
    _made(sqlite_db, tmp_path, 1)
    blocker = tmp_path / "film.mp4"
    blocker.write_text("the user's film")
    target = blocker if where == "onto a file" else blocker / "out"
    assert main(["--db", _url(sqlite_db), "export", "bk", str(target)]) == 2
    _one_line(capsys.readouterr().err, "cannot")
    assert blocker.read_text() == "the user's film"


def test_export_on_sqlite_from_another_folder(sqlite_db: Database, tmp_path: Path) -> None:
    """`export` from another folder than the workers': with the database's absolute URL it
    writes every file; with the default relative URL (no database there) it is one line and
    exit 2, never a traceback."""
    rows = _made(sqlite_db, tmp_path, 2)
    done = cli(_url(sqlite_db), tmp_path / "far", "export", "bk", "out")
    assert done.returncode == 0, done.stderr
    assert all((tmp_path / "far" / "out" / r["output_path"]).is_file() for r in rows)
    lost = cli("sqlite:///data/production.db", tmp_path / "far", "export", "bk", "out2")
    assert lost.returncode == 2
    _one_line(lost.stderr, "data/production.db")


def test_a_worker_given_wrong_s3_keys_stops_with_one_line(
    sqlite_db: Database, tmp_path: Path, checked_s3: dict[str, str]
) -> None:
    """A worker whose S3 keys the store refuses stops at once with "credentials refused" (exit 2,
    no traceback) instead of pausing forever as if the store were down; no attempt is failed."""
    store.set_url(sqlite_db, f"s3://films/{tmp_path.name}")
    with sqlite_db.engine.begin() as conn:
        enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default")])
    env = {**checked_s3, "AWS_SECRET_ACCESS_KEY": "wrong"}
    worker = pc(
        _url(sqlite_db), "w", tmp_path / "pc", "--lanes", "default", "--backend", "noop", "--until-empty", env=env
    )
    _, err = worker.communicate(timeout=120)
    assert worker.returncode == 2
    _one_line(err, "credentials refused", "AWS_SECRET_ACCESS_KEY")
    with sqlite_db.engine.connect() as conn:
        assert conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == "t1")).scalar() != "failed"
