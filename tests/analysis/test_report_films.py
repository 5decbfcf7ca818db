"""The report shows the book's films read through the output store, from any folder on any PC."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import store, text
from pipeline_kit.analysis.films import Film, films_html
from pipeline_kit.analysis.report import _CSS, write_report
from pipeline_kit.db import Database
from pipeline_kit.db.schema import books, tasks
from pipeline_kit.engine import TaskSpec, enqueue
from pipeline_kit.film.names import BOOK_KIND, CHAPTER_KIND, CONTACT

from ..worker.test_processes import SMALL_BOOK, finish
from ..worker.test_several_pcs import cli, pc
from .test_notebooks import _run


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_report_in_another_folder_holds_the_films_from_the_database_store(
    db_url: str, db: Database, tmp_path: Path
) -> None:
    """A book made by a worker in folder A, with the store in the database; `report` run in
    folder B (which never saw the files) writes the book's film, the chapter film and its contact
    sheet beside the page, byte for byte as the task rows record them, and the page links those
    copies, never a path on A's disk."""
    assert store.effective_url(db)[0] == store.DATABASE_URL
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    finish([pc(db_url, "PC-A", tmp_path / "a", "--until-empty", "--lease", "60")])
    with db.engine.connect() as conn:
        films = {
            r.kind: r
            for r in conn.execute(
                sa.select(tasks.c.kind, tasks.c.status, tasks.c.result).where(
                    tasks.c.kind.in_((BOOK_KIND, CHAPTER_KIND))
                )
            ).all()
        }
    assert {r.status for r in films.values()} == {"completed"}

    done = cli(db_url, tmp_path / "b", "report", book.bookcode, "--out", "r")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "b" / "r"
    page = (out / "index.html").read_text(encoding="utf-8")
    film = out / "films" / book.bookcode / "film.mp4"
    chapter = out / "films" / book.bookcode / "chapter-001.mp4"
    contact = chapter.with_name("chapter-001.contact.png")
    assert _sha(film) == films[BOOK_KIND].result["sha256"]
    assert _sha(chapter) == films[CHAPTER_KIND].result["sha256"]
    assert _sha(contact) == films[CHAPTER_KIND].result["sides"][".contact.png"]
    assert contact.read_bytes().startswith(b"\x89PNG")
    linked = set(re.findall(r"(?:src|href)='(films/[^']+)'", page))
    assert {
        f"films/{book.bookcode}/film.mp4",
        f"films/{book.bookcode}/chapter-001.mp4",
        f"films/{book.bookcode}/chapter-001.contact.png",
    } <= linked
    assert all((out / link).is_file() for link in linked)
    assert str(tmp_path / "a") not in page


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_postmortem_notebook_shows_the_films_from_the_database_store(
    db_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post-mortem notebook, run in a folder that never saw the files, fetches the films
    through the store into the report folder it is given (never its own folder) and carries the
    film and the chapter's contact sheet inside its page (so they play wherever it is served)."""
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    finish([pc(db_url, "PC-A", tmp_path / "a", "--until-empty", "--lease", "60")])
    with db.engine.connect() as conn:
        film_sha = conn.execute(sa.select(tasks.c.result).where(tasks.c.kind == BOOK_KIND)).scalar_one()["sha256"]
    (tmp_path / "nb").mkdir()
    report = tmp_path / "report"
    nb = _run(
        "postmortem.ipynb",
        tmp_path / "nb" / "pm.ipynb",
        {"bookcode": book.bookcode, "out_dir": str(report)},
        {"PIPELINE_KIT_DB": db_url, "MPLBACKEND": "Agg", "XDG_CACHE_HOME": str(tmp_path / "cache")},
        monkeypatch,
    )
    (shown,) = [c for c in nb.cells if "embed_from" in c.source]
    page = "".join(o.get("data", {}).get("text/html", "") for o in shown.get("outputs", []))
    assert "<video controls preload='metadata' src='data:video/mp4;base64," in page
    assert "<img src='data:image/png;base64," in page  # the chapter's contact sheet
    film = report / "films" / book.bookcode / "film.mp4"
    assert _sha(film) == film_sha
    assert sorted(p.name for p in (tmp_path / "nb").iterdir()) == ["pm.ipynb"]  # nothing beside the notebook


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_report_says_so_when_there_is_no_film_yet(db_url: str, db: Database, tmp_path: Path) -> None:
    """A book whose chapters were never assembled: the page says there is no film yet and the
    report folder holds no films."""
    book = text.ingest_text(db, SMALL_BOOK, "Harbour Test", lang="en")
    text.split_book(db, book.bookcode)
    done = cli(db_url, tmp_path / "b", "report", book.bookcode, "--out", "r")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "b" / "r" / "index.html").read_text(encoding="utf-8")
    assert "<h2>Films</h2>" in page and "none yet: no chapter has been assembled" in page
    assert not (tmp_path / "b" / "r" / "films").exists()


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_film_the_store_cannot_give_is_said_in_one_line(
    db_url: str, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A completed book film whose blob is not in the database store: the report is still
    written and says, under the film's heading, that it could not be fetched and why."""
    store.set_url(db, "database")
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title="Bk", lang="en", review=False))
        enqueue(conn, [TaskSpec(task_id="bk/film/book", kind=BOOK_KIND, lane="assembly", bookcode="bk")])
        conn.execute(
            sa.update(tasks).values(status="completed", output_path="films/bk/film.mp4", result={"sha256": "0" * 64})
        )
    monkeypatch.chdir(tmp_path)
    page = write_report(db, "bk", tmp_path / "r").read_text(encoding="utf-8")
    assert "<h3>The book&#x27;s film</h3>" in page
    assert (
        "films/bk/film.mp4 could not be fetched from the store: blob 000000000000 is not in the database store" in page
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("embedded", [False, True])
def test_a_contact_sheet_shows_at_its_own_size_in_a_box_and_downloads_whole(tmp_path: Path, embedded: bool) -> None:
    """A long chapter's contact sheet is not shrunk to the page's width (its labels would not
    read): it sits at its own size in a box a few rows tall that scrolls, and clicking it
    downloads the whole sheet under its name, whether the page links its folder or carries it."""
    sheet = tmp_path / "films" / "bk" / "chapter-001.contact.png"
    sheet.parent.mkdir(parents=True)
    sheet.write_bytes(b"\x89PNG\r\n\x1a\n")
    film = tmp_path / "films" / "bk" / "chapter-001.mp4"
    film.write_bytes(b"mp4")
    sides = {CONTACT: "films/bk/chapter-001.contact.png"}
    page = films_html([Film("t", "films/bk/chapter-001.mp4", False, sides)], embed_from=tmp_path if embedded else None)
    src = "data:image/png;base64," if embedded else "films/bk/chapter-001.contact.png"
    found = re.search(
        r"<div class='sheet'><a href='([^']+)' download='chapter-001.contact.png'[^>]*><img src='([^']+)'", page
    )
    assert found and found[1].startswith(src) and found[2] == found[1]
    assert ".sheet{max-height:52em;overflow:auto" in _CSS and ".sheet img{max-width:none" in _CSS
