"""The new-book screen's widgets: title, one chapter pasted or uploaded, and what it changed.
Each submission goes through the page's one refresh path (`Page.act`), like 02's and 03's."""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as w

from pipeline_kit.ui.newbook import AddResult, NewBookModel
from pipeline_kit.ui.page import Page
from pipeline_kit.ui.widgets import STYLE, Message, heading, table

FIT = {"description_width": "initial"}  # a label as wide as its words: never cut off


class NewBookScreen:
    """Type a title, then add chapters one at a time; the stored chapters and the last change show below."""

    def __init__(self, model: NewBookModel, *, title: str = "") -> None:
        self.model = model
        self.page = Page(self)
        self.message = Message()
        self.title = w.Text(
            value=title, description="Title", placeholder="the book's title", layout=w.Layout(width="600px")
        )
        self.code = w.HTML()
        self.number = w.BoundedIntText(
            value=0,
            min=0,
            max=100_000,
            description="Chapter number",
            style=FIT,
            layout=w.Layout(width="auto"),
            tooltip="0 = the next chapter; a number replaces it",
        )
        self.number_help = w.HTML(
            "<small>0 = the next chapter (or the one this text already is); a number replaces that chapter</small>"
        )
        self.force = w.Checkbox(
            value=False,
            description="re-split a changed chapter that was already split",
            indent=False,
            style=FIT,
            layout=w.Layout(width="auto"),
        )
        self.body = w.Textarea(
            placeholder="paste one chapter here (a heading on its first line becomes its title)",
            layout=w.Layout(width="100%", height="220px"),
        )
        self.paste = w.Button(
            description="Add pasted chapter", button_style="primary", icon="plus", layout=w.Layout(width="auto")
        )
        self.upload = w.FileUpload(
            accept=".txt,.md", multiple=False, description="Upload chapter", layout=w.Layout(width="auto")
        )
        self.chapters, self.changes = w.HTML(), w.HTML()
        self.paste.on_click(lambda _: self.add_pasted())
        self.upload.observe(lambda _: self.add_uploaded(), names="value")
        self.title.observe(lambda _: self.redraw(), names="value")
        self.widget = w.VBox(
            [
                w.HTML(STYLE),
                self.title,
                self.code,
                w.HBox([self.number, self.number_help]),
                self.force,
                self.body,
                w.HBox([self.paste, self.upload]),
                self.message.widget,
                heading("What changed"),
                self.changes,
                heading("Chapters stored"),
                self.chapters,
            ]
        )
        self.redraw()

    def add_pasted(self) -> AddResult:
        """Add the box's text; the text stays in the box (adding it again says "unchanged")."""
        return self._after(
            lambda: self.model.add_chapter(
                self.title.value, self.body.value, self.number.value or None, force=self.force.value
            )
        )

    def add_uploaded(self) -> AddResult | None:
        if not self.upload.value:
            return None
        item = self.upload.value[0]
        result = self._after(
            lambda: self.model.add_upload(
                self.title.value,
                bytes(item["content"]),
                item["name"],
                self.number.value or None,
                force=self.force.value,
            )
        )
        self.upload.value = ()
        return result

    def redraw(self) -> None:
        code = self.model.bookcode_for(self.title.value)
        self.code.value = (
            f"Bookcode: <b data-pk='bookcode'>{html.escape(code)}</b> (open the storyboard with it)"
            if code
            else "<i>type the title: the bookcode appears here</i>"
        )
        self.chapters.value = table(
            ["no.", "title", "length (characters)", "split into shots"],
            [(c.number, c.title, c.length, "yes" if c.split else "no") for c in self.model.chapters(code)],
            key="chapters",
            empty="no chapters yet",
        )

    def _after(self, add: Callable[[], AddResult]) -> AddResult:
        """Add through the page (message, then the page redrawn), then say what changed."""
        result = self.page.act(add, self.message)
        self.number.value = 0
        if result.changes:
            self.changes.value = table(
                ["no.", "title", "what happened", "detail"],
                [(c.number, c.title, c.action, c.detail) for c in result.changes],
                key="changes",
            )
        return result


def books_html(model: NewBookModel) -> str:
    """The stored books as a table (to pick a bookcode for the storyboard)."""
    rows = [(b.bookcode, b.title, b.lang, b.chapters, "on" if b.review else "off") for b in model.books()]
    return STYLE + table(
        ["bookcode", "title", "lang", "chapters", "review"],
        rows,
        key="books",
        empty="no books yet: add one in 01_new_book",
    )


def newbook_screen(model: NewBookModel, *, title: str = "") -> NewBookScreen:
    return NewBookScreen(model, title=title)
