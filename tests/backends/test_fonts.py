"""The CJK font lookup shared by frames, sheets, cards and charts, and its missing-font warning."""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from pathlib import Path

import matplotlib
import pytest
from matplotlib.figure import Figure

from pipeline_kit import fonts

DEJAVU = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


@pytest.fixture
def fresh_lookup() -> Iterator[None]:
    """Forget the cached lookup (and what was warned) before and after the test."""
    fonts.cjk_font_path.cache_clear()
    fonts._face.cache_clear()
    fonts.matplotlib_rc.cache_clear()
    fonts._warned.clear()
    yield
    fonts.cjk_font_path.cache_clear()
    fonts._face.cache_clear()
    fonts.matplotlib_rc.cache_clear()
    fonts._warned.clear()


def test_without_a_cjk_font_chinese_books_warn_once(monkeypatch: pytest.MonkeyPatch, fresh_lookup: None) -> None:
    """With no CJK font, a Chinese book gets one warning line however often it is asked; an
    English book gets none."""
    monkeypatch.setenv(fonts.ENV, "none")
    assert fonts.cjk_font_path() is None
    assert fonts.missing_warning(["en"]) is None
    out = io.StringIO()
    assert not fonts.warn_missing(["en", None], out)
    written = [fonts.warn_missing(["en", "zh"], out) for _ in range(5)]
    assert written == [True, False, False, False, False]
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pipeline-kit: warning: ") and "cjk" in lines[0]


def test_a_latin_only_font_is_not_taken_for_a_cjk_one(monkeypatch: pytest.MonkeyPatch, fresh_lookup: None) -> None:
    """$PIPELINE_KIT_FONT naming a font without Han glyphs is passed over: it would draw boxes."""
    assert not fonts.draws_han(str(DEJAVU))
    monkeypatch.setenv(fonts.ENV, str(DEJAVU))
    assert fonts.cjk_font_path() != str(DEJAVU)


def test_matplotlib_draws_chinese_with_the_found_font(fresh_lookup: None) -> None:
    """matplotlib_rc() lets a chart title in Chinese render with no missing-glyph warning (the
    test extra installs the `cjk` extra's font, so there is always one to find)."""
    assert fonts.cjk_font_path() is not None
    with warnings.catch_warnings(record=True) as caught, matplotlib.rc_context(fonts.matplotlib_rc()):
        warnings.simplefilter("always")
        figure = Figure(figsize=(3, 1))
        figure.add_subplot().set_title("曹操 and Mara: 林黛玉")
        figure.savefig(io.BytesIO(), format="png")
    assert not [w for w in caught if "missing from" in str(w.message)]
