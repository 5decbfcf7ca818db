"""Small pieces every screen shares: escaped HTML tables, a message line, number formats."""

from __future__ import annotations

import html
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar
from pathlib import Path

import ipywidgets as w

from pipeline_kit.ui.actions import ActionResult, Said

STYLE = """<style>
.pk-table {border-collapse: collapse; font-size: 13px; margin: 4px 0 10px 0}
.pk-table th, .pk-table td {border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top}
.pk-table th {background: #f2f2f2}
.pk-ok {color: #1a7f37} .pk-bad {color: #c62828}
.pk-card {border: 1px solid #ccc; border-radius: 4px; background: #fafafa}
.pk-card .widget-html-content {line-height: 1.35}
.pk-none {display: flex; align-items: center; justify-content: center; text-align: center;
          background: #eee; color: #555; font-size: 12px}
</style>"""


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, key: str = "", empty: str = "none") -> str:
    """An HTML table; every cell escaped. `key` names the table (data-pk) for tests and styling."""
    body = ["<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows]
    if not body:
        return f'<p data-pk="{key}"><i>{html.escape(empty)}</i></p>'
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    return f'<table class="pk-table" data-pk="{key}"><tr>{head}</tr>{"".join(body)}</table>'


@dataclass(frozen=True)
class Styled:
    """A table cell shown with a CSS class (e.g. `pk-bad`, red); its text is escaped too."""

    text: str
    css: str


def cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, Styled):
        return f'<span class="{html.escape(value.css)}">{html.escape(value.text)}</span>'
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, (tuple, list)):
        return html.escape(", ".join(map(str, value)))
    return html.escape(str(value))


def heading(text: str) -> w.HTML:
    return w.HTML(f"<h3 style='margin:8px 0 2px 0'>{html.escape(text)}</h3>")


def ages(seconds: float | None) -> str:
    """'12 s', '3.5 min', '2.0 h' ('' when unknown)."""
    if seconds is None:
        return ""
    if abs(seconds) < 120:
        return f"{seconds:.0f} s"
    if abs(seconds) < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def reuse(
    shown: Mapping[K, w.Widget], items: Sequence[tuple[K, T]], make: Callable[[T], w.Widget]
) -> dict[K, w.Widget]:
    """A widget per picture or film, in the order given: made once per key (its file), then
    reused while it is shown, so a refresh does not send the same file to the page again."""
    return {key: shown.get(key) or make(item) for key, item in items}


def take_note(note: w.Text, act: Callable[[str], ActionResult]) -> ActionResult:
    """Act with the note typed (a rejection's); the box clears once the note was taken, and
    keeps it when the action was refused, so nothing typed is lost."""
    result = act(note.value)
    if result.ok:
        note.value = ""
    return result


class Message:
    """One line telling the person what their last action did (green if it worked, red if not)."""

    def __init__(self) -> None:
        self.widget = w.HTML("", layout=w.Layout(min_height="1.5em"))

    def show(self, result: Said) -> None:
        css = "pk-ok" if result.ok else "pk-bad"
        self.widget.value = f'<span class="{css}" data-pk="message">{html.escape(result.message)}</span>'

    def error(self, text: str) -> None:
        self.show(ActionResult(False, text))


class Screen(Protocol):
    """Anything shown as a section of a page: it has its widget and shows the database anew."""

    widget: w.Widget

    def redraw(self) -> object: ...


S = TypeVar("S", bound=Screen)


class BookSection(Generic[S]):
    """A section of a page that shows `make(bookcode)` for the book chosen in a dropdown elsewhere
    on the page (02's book list), and follows it when another book is chosen."""

    def __init__(self, book: w.ValueWidget, make: Callable[[str], S]) -> None:
        self.book, self.make = book, make
        self.screen: S | None = None
        self.widget = w.VBox()
        book.observe(lambda _: self.open(), names="value")
        self.open()

    def open(self) -> S | None:
        """Show the chosen book's screen (a hint while none is chosen)."""
        code = self.book.value
        self.screen = self.make(code) if code else None
        self.widget.children = (
            (self.screen.widget,) if self.screen is not None else (w.HTML("<i>choose a book above</i>"),)
        )
        return self.screen

    def redraw(self) -> None:
        """The shown screen reads the database again (nothing while no book is chosen)."""
        if self.screen is not None:
            self.screen.redraw()


def options(box: w.Dropdown, choices: Sequence[tuple[str, object]]) -> None:
    """Replace a dropdown's choices, keeping its value when still offered."""
    keep, values = box.value, [v for _, v in choices]
    box.options = list(choices)
    if values:
        box.value = keep if keep in values else values[0]


def picture(path: Path, mime: str, width: int) -> w.Widget | None:
    """An image or a video widget showing the file (None for other kinds of file)."""
    kind, _, fmt = mime.partition("/")
    if kind == "image":
        return w.Image(value=path.read_bytes(), format=fmt, width=width)
    if kind == "video":
        return w.Video(value=path.read_bytes(), format=fmt, width=width, autoplay=False, controls=True)
    return None


def placeholder(text: str, width: int, height: int) -> w.HTML:
    """A grey box of a picture's size saying why there is no picture (yet)."""
    return w.HTML(f"<div class='pk-none' style='width:{width}px;height:{height}px'>{html.escape(text)}</div>")
