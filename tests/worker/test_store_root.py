"""One store root per database, whatever the folder: workers, screens and `export` started in
different folders read and write the same files, and task rows hold store names, never paths."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import store, text
from pipeline_kit.db import Database, create
from pipeline_kit.db.migrate import BESIDE_DATABASE, init, store_name
from pipeline_kit.db.schema import STORE_KEY, meta, tasks
from pipeline_kit.ui.film_view import FilmModel
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.worker.outputs import file_digest

from .test_processes import ROOT, SMALL_BOOK, finish
from .test_several_pcs import cli, pc


def _rows(db: Database) -> list[sa.RowMapping]:
    with db.engine.connect() as conn:
        return list(conn.execute(sa.select(tasks).order_by(tasks.c.id)).mappings())


def test_workers_in_two_folders_a_screen_and_export_in_a_third_find_every_file(
    db_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two `work` processes in two folders (SQLite with no `store set`; a folder store on the
    servers), the storyboard and film screens from a notebook folder and `export` from a third
    folder: every task completes, no input goes missing, every frame's thumbnail and every clip
    and film is found, and export writes every file as its row's checksum says."""
    if db.dialect != "sqlite":
        (tmp_path / "nas").mkdir()
        done = cli(db_url, tmp_path / "owner", "store", "set", str(tmp_path / "nas"))
        assert done.returncode == 0, done.stderr
    root = Path(store.effective_url(db)[0])
    assert root == (tmp_path if db.dialect == "sqlite" else tmp_path / "nas")  # beside test.db on SQLite
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    outs = finish([pc(db_url, w, tmp_path / f"pc-{w}", "--until-empty", "--lease", "60") for w in ("A", "B")])
    rows = _rows(db)
    assert rows and {r["status"] for r in rows} == {"completed"}, [r["last_error"] for r in rows]
    assert all("missing_input" not in o for o in outs)
    assert all(r["output_path"].startswith(("outputs/", "films/")) for r in rows)  # store names
    assert all((root / r["output_path"]).is_file() for r in rows)
    assert not list(tmp_path.glob("pc-*/data/**/*.*"))  # nothing left in a worker's own folder

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    monkeypatch.chdir(notebooks)  # where Voilà runs a screen's kernel
    board = StoryboardModel(db, book.bookcode, cache=tmp_path / "user-cache")
    shots = board.page(1, 100).rows
    tiles = board.tiles(shots)
    frames = [t for kinds in tiles.values() for k, t in kinds.items() if k in ("first_frame", "last_frame")]
    assert len(frames) == 2 * len(shots) and all(t.thumbnail and t.thumbnail.is_file() for t in frames)
    clips = [board.clip(kinds["video"].task_id) for kinds in tiles.values()]
    assert clips and all(c is not None and c.ready for c in clips)
    films = FilmModel(db, book.bookcode, board.store).films()
    assert films and all(f.ready for f in films)

    done = cli(db_url, tmp_path / "elsewhere", "export", book.bookcode, "out")
    assert done.returncode == 0 and not done.stderr, done.stderr
    out = tmp_path / "elsewhere" / "out"
    for r in rows:
        assert file_digest(out / r["output_path"])[1] == r["result"]["sha256"]
        for suffix, sha in (r["result"].get("sides") or {}).items():
            assert file_digest(store.side_name(out / r["output_path"], suffix))[1] == sha


@pytest.mark.db
def test_init_fixes_the_root_beside_the_sqlite_file_from_any_folder(tmp_path: Path) -> None:
    """`init` of a new SQLite database, run from some folder with a relative URL, keeps the
    absolute folder of the database file as the store's root in the database; a process in
    another folder (absolute URL) reads that same root."""
    (tmp_path / "project" / "data").mkdir(parents=True)
    made = subprocess.run(
        [sys.executable, "-m", "pipeline_kit", "--db", "sqlite:///data/production.db", "init"],
        cwd=tmp_path / "project",
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert made.returncode == 0, made.stderr
    url = f"sqlite:///{tmp_path / 'project' / 'data' / 'production.db'}"
    db = create(url)
    try:
        assert store.stored_url(db) == str(tmp_path / "project" / "data")
    finally:
        db.dispose()
    shown = cli(url, tmp_path / "somewhere", "store", "show")
    assert shown.returncode == 0 and str(tmp_path / "project" / "data") in shown.stdout


def test_export_from_a_store_that_lost_its_films_lists_them_without_a_traceback(
    db_url: str, db: Database, tmp_path: Path
) -> None:
    """A folder store whose films/ folder is gone (deleted, a NAS share half there): `export`
    writes every other output, names each film it could not write on stderr, writes no timeline
    for a film that is not there, and exits 1 with no traceback."""
    if db.dialect != "sqlite":
        (tmp_path / "nas").mkdir()
        assert cli(db_url, tmp_path / "owner", "store", "set", str(tmp_path / "nas")).returncode == 0
    root = Path(store.effective_url(db)[0])
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    finish([pc(db_url, "A", tmp_path / "pc-a", "--until-empty")])
    films = [r for r in _rows(db) if r["output_path"].startswith("films/")]
    assert films and {r["status"] for r in _rows(db)} == {"completed"}
    shutil.rmtree(root / "films")

    done = cli(db_url, tmp_path / "elsewhere", "export", book.bookcode, "out")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(f"not written: {r['output_path']}: " in done.stderr for r in films), done.stderr
    out = tmp_path / "elsewhere" / "out"
    assert not list(out.rglob("*.otio"))
    others = [r for r in _rows(db) if r not in films]
    assert others and all((out / r["output_path"]).is_file() for r in others)


@pytest.mark.db
def test_a_project_folder_moved_or_copied_keeps_its_own_store(tmp_path: Path) -> None:
    """A SQLite project made and worked in one folder, then moved: its database's store is the
    folder beside the file where it is now, so `export` from another folder writes every output;
    a copy of it uses the copy's files, never the original's (an absolute root kept in the
    database would name the folder the project left)."""
    first = tmp_path / "first"
    (first / "data").mkdir(parents=True)
    (first / "book.txt").write_text(SMALL_BOOK, encoding="utf-8")
    url = f"sqlite:///{first / 'data' / 'production.db'}"
    assert cli(url, first, "init").returncode == 0
    made = cli(url, first, "ingest", "book.txt", "--title", "Harbour Test", "--lang", "en")
    bookcode = made.stdout.strip()
    assert made.returncode == 0 and cli(url, first, "split", bookcode).returncode == 0
    assert finish([pc(url, "A", tmp_path / "pc-a", "--until-empty")])

    moved = tmp_path / "moved"
    first.rename(moved)
    url = f"sqlite:///{moved / 'data' / 'production.db'}"
    shown = cli(url, tmp_path / "elsewhere", "store", "show")
    assert shown.returncode == 0 and f"store: {moved / 'data'} " in shown.stdout, shown.stdout
    done = cli(url, tmp_path / "elsewhere", "export", bookcode, "out")
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert (tmp_path / "elsewhere" / "out" / "films" / bookcode / "film.mp4").is_file()

    copy = tmp_path / "copy"
    shutil.copytree(moved, copy)
    shown = cli(f"sqlite:///{copy / 'data' / 'production.db'}", tmp_path / "elsewhere", "store", "show")
    assert f"store: {copy / 'data'} " in shown.stdout, shown.stdout


@pytest.mark.db
def test_init_keeps_a_root_older_versions_wrote_as_beside_the_database(tmp_path: Path) -> None:
    """A database whose store setting is the absolute folder beside its file (as earlier versions
    of `init` wrote it) is upgraded by `init` to follow the file; a folder set elsewhere stays."""
    db = create(f"sqlite:///{tmp_path / 'production.db'}")
    try:
        init(db)
        for setting, kept in ((str(tmp_path), BESIDE_DATABASE), ("/mnt/nas", "/mnt/nas")):
            with db.engine.begin() as conn:
                conn.execute(sa.update(meta).where(meta.c.key == STORE_KEY).values(value=setting))
            init(db)
            with db.engine.connect() as conn:
                assert conn.execute(sa.select(meta.c.value).where(meta.c.key == STORE_KEY)).scalar() == kept
            assert store.stored_url(db) == setting
    finally:
        db.dispose()


@pytest.mark.parametrize(
    ("recorded", "name"),
    [
        ("data/outputs/bk/bk-c001-s0001/first_frame.png", "outputs/bk/bk-c001-s0001/first_frame.png"),
        ("/home/me/film/data/films/bk/film.mp4", "films/bk/film.mp4"),
        ("/mnt/nas/outputs/bk/tasks/char-x-1a2b3c4d5e6f.png", "outputs/bk/tasks/char-x-1a2b3c4d5e6f.png"),
        ("/srv/data/outputs/bk/s/video.mp4", "outputs/bk/s/video.mp4"),
        ("outputs/bk/s/video.mp4", "outputs/bk/s/video.mp4"),  # already a name: unchanged
    ],
)
def test_an_older_rows_path_becomes_its_store_name(recorded: str, name: str) -> None:
    """The upgrade's mapping of what older versions recorded (worker-relative or absolute
    folder paths) onto store names; a name stays as it is."""
    assert store_name(recorded, ("/mnt/nas", "/srv")) == name


def test_init_upgrades_worker_relative_rows_in_place(db: Database, tmp_path: Path) -> None:
    """A version-8 database whose rows hold worker-relative and absolute folder paths: `init`
    brings it to version 9, rewrites each row to its store name (found under the new root),
    keeps rows of a database store as they are, and on SQLite fixes the root beside the file."""
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    rows = _rows(db)[:3]
    root = store.effective_url(db)[0] if db.dialect == "sqlite" else "/mnt/nas"
    old = {
        rows[0]["id"]: f"data/outputs/{book.bookcode}/a.png",
        rows[1]["id"]: f"{root}/films/{book.bookcode}/film.mp4",
        rows[2]["id"]: f"outputs/{book.bookcode}/c.png",
    }
    with db.engine.begin() as conn:
        for row_id, path in old.items():
            conn.execute(sa.update(tasks).where(tasks.c.id == row_id).values(output_path=path))
        conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value="8"))
        conn.execute(meta.delete().where(meta.c.key == STORE_KEY))
        if db.dialect != "sqlite":
            conn.execute(sa.insert(meta).values(key=STORE_KEY, value="/mnt/nas"))
    try:
        assert init(db)[0] == 8
        got = {r["id"]: r["output_path"] for r in _rows(db) if r["id"] in old}
        assert got == {
            rows[0]["id"]: f"outputs/{book.bookcode}/a.png",
            rows[1]["id"]: f"films/{book.bookcode}/film.mp4",
            rows[2]["id"]: f"outputs/{book.bookcode}/c.png",
        }
        assert store.stored_url(db) == (str(tmp_path) if db.dialect == "sqlite" else "/mnt/nas")
    finally:
        with db.engine.begin() as conn:  # the server databases are reused by later tests
            conn.execute(meta.delete().where(meta.c.key == STORE_KEY))
