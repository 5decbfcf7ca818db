"""Contact sheets at book scale: a chapter of many shots is shown a few rows at a time, at the
sheet's own size (labels readable), with previous and next, and the whole sheet downloadable."""

from __future__ import annotations

import base64
import io
import math
import re
from pathlib import Path

import ipywidgets as w
from PIL import Image

from pipeline_kit.film.cards import MAX_COLUMNS, PAGE_ROWS, grid_for, save_contact_sheet
from pipeline_kit.ui.film_view import ContactPages


def _sheet(tmp_path: Path, shots: int) -> Path:
    thumb = tmp_path / "thumb.jpg"
    Image.new("RGB", (320, 180), (40, 90, 160)).save(thumb)
    sheet = tmp_path / "chapter-001.contact.png"
    save_contact_sheet([(f"c001-s{n:04d}", thumb) for n in range(1, shots + 1)], (640, 360), sheet)
    return sheet


def test_a_long_sheet_is_shown_in_pages_of_whole_rows(tmp_path: Path) -> None:
    """103 shots: 26 rows of 4 in pages of PAGE_ROWS rows, each page as wide as the sheet and cut
    between rows; next and previous walk them, stopping at either end; the link downloads the
    whole sheet under the film's name."""
    sheet = _sheet(tmp_path, 103)
    grid = grid_for(103, (640, 360))
    view = ContactPages(sheet, "book-chapter-001.contact.png")
    assert len(view.pages) == math.ceil(grid.rows / PAGE_ROWS) > 1
    sizes = [Image.open(io.BytesIO(page)).size for page in view.pages]
    assert all(width == MAX_COLUMNS * grid.cell[0] for width, _ in sizes)
    assert all(height % grid.cell[1] == 0 for _, height in sizes)  # never a row cut in two
    assert sum(height for _, height in sizes) == Image.open(sheet).height
    assert view.previous.disabled and "page 1 of" in view.where.value
    for _ in view.pages:
        view.next.click()
    assert view.next.disabled and view.image.value == view.pages[-1]
    view.previous.click()
    assert view.image.value == view.pages[-2] and not view.next.disabled
    link = view.widget.children[-1].value
    assert "download='book-chapter-001.contact.png'" in link
    assert base64.b64decode(re.search(r"base64,([^']+)'", link).group(1)) == sheet.read_bytes()


def test_a_short_sheet_is_one_page_without_a_pager(tmp_path: Path) -> None:
    """Six shots fit one page: the sheet is shown whole and no page buttons are offered."""
    view = ContactPages(_sheet(tmp_path, 6), "book-chapter-002.contact.png")
    assert len(view.pages) == 1
    assert [type(c) for c in view.widget.children] == [w.HTML, w.Image, w.HTML]  # title, the page, the link
