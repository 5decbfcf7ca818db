"""The three screens' notebooks run under papermill on tiny inputs: the book entered in 01, split
and browsed in 02, watched in 03. The database URL travels in the environment, never as a parameter."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import papermill
import pytest

from pipeline_kit.db import Database
from pipeline_kit.errors import BadInput
from pipeline_kit.ui.monitor import MonitorModel
from pipeline_kit.ui.newbook import NewBookModel
from pipeline_kit.ui.newbook_view import books_html
from pipeline_kit.ui.session import open_database, url_parameter
from pipeline_kit.ui.storyboard import StoryboardModel
from pipeline_kit.ui.storyboard_view import BookPicker

from .conftest import TITLE, sample_chapters

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET = "application/vnd.jupyter.widget-view+json"


def _run(name: str, out: Path, params: dict[str, object]) -> nbformat.NotebookNode:
    papermill.execute_notebook(
        str(NOTEBOOKS / name),
        str(out),
        parameters=params,
        kernel_name="python3",
        cwd=str(NOTEBOOKS),
        progress_bar=False,
    )
    return nbformat.read(out, as_version=4)


def _outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells for o in c.get("outputs", [])]


def test_screens_notebooks_run_in_order(sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """01 adds a chapter, 02 splits and shows the shots, 03 shows the counts; each renders its widget."""
    url = sqlite_db.engine.url.render_as_string(hide_password=False)
    monkeypatch.setenv("PIPELINE_KIT_DB", url)

    first = _run("01_new_book.ipynb", tmp_path / "01.ipynb", {"title": TITLE, "chapter_text": sample_chapters()[0]})
    assert any(WIDGET in o.get("data", {}) for o in _outputs(first))
    assert url not in json.dumps(first.metadata)
    (book,) = NewBookModel(sqlite_db).books()
    assert book.chapters == 1

    board = _run(
        "02_storyboard.ipynb", tmp_path / "02.ipynb", {"bookcode": book.bookcode, "page_size": 5, "split_now": True}
    )
    assert any(WIDGET in o.get("data", {}) for o in _outputs(board))
    assert StoryboardModel(sqlite_db, book.bookcode).page().total > 0
    for section in ("cast_screen", "film_screen"):  # 02's cast and film sections follow the chosen book
        (cell,) = [c for c in board.cells if section in c.source]
        assert any(WIDGET in o.get("data", {}) for o in cell.outputs), section

    monitor = _run("03_monitor.ipynb", tmp_path / "03.ipynb", {"refresh_s": 0.5})
    assert any(WIDGET in o.get("data", {}) for o in _outputs(monitor))
    assert MonitorModel(sqlite_db).snapshot().counts["pending"] > 0


def test_screens_need_the_database_variable(sqlite_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """No PIPELINE_KIT_DB: one line saying what to set (the kernel's cwd would make a second database)."""
    monkeypatch.delenv("PIPELINE_KIT_DB", raising=False)
    with pytest.raises(BadInput, match="PIPELINE_KIT_DB"):
        open_database()
    monkeypatch.setenv("PIPELINE_KIT_DB", sqlite_db.engine.url.render_as_string(hide_password=False))
    open_database().dispose()


def test_books_list_for_picking_a_bookcode(db: Database) -> None:
    """02 without a bookcode lists the books stored."""
    assert "no books yet" in books_html(NewBookModel(db))
    bookcode = NewBookModel(db).add_chapter(TITLE, sample_chapters()[0]).bookcode
    assert f"<td>{bookcode}</td>" in books_html(NewBookModel(db))


def test_book_chosen_from_a_list_or_the_address(sqlite_db: Database) -> None:
    """02 needs no parameter: the book is chosen from a list, or taken from `?bookcode=` in the
    address Voilà hands the kernel as QUERY_STRING; an unknown code says so and shows the list."""
    bookcode = NewBookModel(sqlite_db).add_chapter(TITLE, sample_chapters()[0]).bookcode or ""
    assert url_parameter("bookcode", {"QUERY_STRING": f"page=2&bookcode={bookcode}"}) == bookcode
    assert url_parameter("bookcode", {}) == ""
    assert url_parameter("bookcode", {"QUERY_STRING": ""}) == ""

    picker = BookPicker(sqlite_db)
    assert picker.screen is None and "choose a book" in picker.board.widget.children[0].value
    assert [v for _, v in picker.book.options] == ["", bookcode]
    picker.book.value = bookcode
    assert picker.screen is not None and picker.screen.model.bookcode == bookcode
    assert picker.board.widget.children == (picker.screen.widget,)

    assert BookPicker(sqlite_db, bookcode).screen is not None
    unknown = BookPicker(sqlite_db, "no-such-book")
    assert unknown.screen is None and "no book no-such-book" in unknown.note.value


def test_postmortem_run_in_notebooks_writes_nothing_there(
    sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The post-mortem notebook run where Jupyter runs it (in notebooks/) with no folder named
    writes its films and tables into this user's cache, not beside itself, and carries the
    chapter film inside its page (a data: address that plays wherever the page is served)."""
    from pipeline_kit.store import set_url

    from .conftest import enter_book
    from .test_film_view import publish_chapter_film

    set_url(sqlite_db, "database")
    model = StoryboardModel(sqlite_db, enter_book(sqlite_db, 1))
    assert model.split().ok
    publish_chapter_film(sqlite_db, model.bookcode, 1, tmp_path / "assembly-pc")
    monkeypatch.setenv("PIPELINE_KIT_DB", sqlite_db.engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    before = {p.relative_to(NOTEBOOKS) for p in NOTEBOOKS.rglob("*")}
    nb = _run("postmortem.ipynb", tmp_path / "pm.ipynb", {"bookcode": model.bookcode})
    assert {p.relative_to(NOTEBOOKS) for p in NOTEBOOKS.rglob("*")} == before
    (films,) = [c for c in nb.cells if "embed_from" in c.source]
    page = "".join(o.get("data", {}).get("text/html", "") for o in films.outputs)
    assert "src='data:video/mp4;base64," in page and "href='films/" not in page
    report = tmp_path / "user-cache" / "pipeline_kit" / "reports" / model.bookcode
    assert (report / "films" / model.bookcode / "chapter-001.mp4").is_file()
