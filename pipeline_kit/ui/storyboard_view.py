"""The storyboard screen's widgets: split, a filtered paged table, the shot editor and the review gate."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import ipywidgets as w

from pipeline_kit.db.connect import Database
from pipeline_kit.ui.actions import ActionResult
from pipeline_kit.ui.newbook import NewBookModel
from pipeline_kit.ui.storyboard import (
    MediaItem,
    ReviewCounts,
    ShotPage,
    StoryboardModel,
    describe_task,
)
from pipeline_kit.ui.widgets import STYLE, Message, heading, table
from pipeline_kit.ui.words import state_in_words

ANY = "(any)"
PROMPT_SHOWN = 120  # characters of a prompt shown in the table


class StoryboardScreen:
    """Browse, edit and review one book's shots."""

    def __init__(self, model: StoryboardModel, *, page_size: int = 20) -> None:
        self.model, self.page_size, self.page_no = model, page_size, 1
        self._drawing = False  # True while redraw sets values: those are not a person's choices
        self.message = Message()
        self.split_button = w.Button(description="Split into shots", icon="cut", button_style="primary")
        self.refresh = w.Button(description="Show what workers made since", icon="refresh",
                                layout=w.Layout(width="auto"))
        self.chapter = w.Dropdown(description="Chapter")
        self.character = w.Dropdown(description="Character")
        self.location = w.Dropdown(description="Location")
        self.prev, self.next = w.Button(description="◀ Prev"), w.Button(description="Next ▶")
        self.page_label, self.table = w.HTML(), w.HTML()
        self.shot = w.Dropdown(description="Shot", layout=w.Layout(width="600px"))
        self.prompt = w.Textarea(description="Prompt", layout=w.Layout(width="100%", height="90px"))
        self.characters = w.Text(description="Characters", placeholder="comma-separated names",
                                 layout=w.Layout(width="600px"))
        self.where = w.Text(description="Location", layout=w.Layout(width="600px"))
        self.save = w.Button(description="Save and re-run", icon="save", button_style="primary")
        self.rerun = w.Button(description="Re-run unchanged", icon="redo")
        self.media = w.HBox()
        self.review = w.Checkbox(description="Review frames before their clip is made", indent=False)
        self.review_line = w.HTML()
        self.waiting = w.Dropdown(description="Waiting", layout=w.Layout(width="600px"))
        self.waiting_media = w.HBox()
        self.note = w.Text(description="Note", placeholder="what to change (needed to reject)",
                           layout=w.Layout(width="600px"))
        self.approve, self.reject = (w.Button(description="Approve", icon="check", button_style="success"),
                                     w.Button(description="Reject", icon="times", button_style="danger"))
        self._wire()
        self.widget = w.VBox([
            w.HTML(STYLE), w.HTML(f"<b>Book</b> <span data-pk='bookcode'>{html.escape(model.bookcode)}</span>"),
            w.HBox([self.split_button, self.refresh]), self.message.widget,
            heading("Shots"), w.HBox([self.chapter, self.character, self.location]),
            w.HBox([self.prev, self.page_label, self.next]), self.table,
            heading("Edit a shot"), self.shot, self.prompt, self.characters, self.where,
            w.HBox([self.save, self.rerun]), self.media,
            heading("Review"), self.review, self.review_line, self.waiting, self.waiting_media,
            self.note,
            w.HBox([self.approve, self.reject]),
        ])
        self.redraw()

    def _wire(self) -> None:
        self.split_button.on_click(lambda _: self.run(self.model.split))
        self.refresh.on_click(lambda _: self.redraw())
        for box in (self.chapter, self.character, self.location):
            box.observe(lambda _: self._drawing or self.go(1), names="value")
        self.prev.on_click(lambda _: self.go(self.page_no - 1))
        self.next.on_click(lambda _: self.go(self.page_no + 1))
        self.shot.observe(lambda _: self._drawing or self.load_shot(), names="value")
        self.save.on_click(lambda _: self.save_shot())
        self.rerun.on_click(lambda _: self.shot.value and self.run(lambda: self.model.rerun(self.shot.value)))
        self.review.observe(lambda change: self._drawing or self.run(lambda: self.model.set_review(change["new"])),
                            names="value")
        self.waiting.observe(lambda _: self._show_waiting(), names="value")
        self.approve.on_click(lambda _: self.waiting.value and self.run(lambda: self.model.approve(self.waiting.value)))
        self.reject.on_click(lambda _: self.reject_selected())

    def redraw(self) -> None:
        """Re-read filters, the current page, the selected shot (its prompt, characters, location
        and media) and the review queue: every widget shows what the database holds now."""
        f = self.model.filters()
        self._drawing = True
        try:
            _options(self.chapter, [(ANY, None)] + [(str(c), c) for c in f.chapters])
            _options(self.character, [(ANY, "")] + [(c, c) for c in f.characters])
            _options(self.location, [(ANY, "")] + [(x, x) for x in f.locations])
            self.review.value = self.model.review_on()
        finally:
            self._drawing = False
        self.go(self.page_no)
        self.review_line.value = _review_html(self.model.review_counts())
        _options(self.waiting, [(describe_task(r.task_id), r.task_id)
                                for r in self.model.awaiting()])
        self._show_waiting()

    def go(self, page: int) -> ShotPage:
        shown = self.model.page(page, self.page_size, chapter=self.chapter.value,
                                character=self.character.value, location=self.location.value)
        self.page_no = shown.page
        self.page_label.value = f"&nbsp;page {shown.page} of {shown.pages} · {shown.total} shot(s)&nbsp;"
        self.table.value = table(
            ["ch.", "seq", "shot", "source text", "location", "characters", "first frame",
             "last frame", "clip"],
            [(r.chapter, r.seq, r.shot_id, _cut(r.text or r.prompt), r.location, r.characters,
              *(r.states.get(k, "-") for k in ("first_frame", "last_frame", "video")))
             for r in shown.rows], key="shots", empty="no shots: split the book first" if not shown.total else "none")
        drawing, self._drawing = self._drawing, True
        try:
            _options(self.shot, [(f"{r.chapter}.{r.seq} · {_cut(r.text or r.prompt, 70)}",
                                  r.shot_id) for r in shown.rows])
        finally:
            self._drawing = drawing
        self.load_shot()
        return shown

    def load_shot(self) -> None:
        """Show the selected shot as stored: its prompt, characters, location, frames and clip."""
        if not self.shot.value:
            self.prompt.value = self.characters.value = self.where.value = ""
            self.media.children = ()
            return
        shot = self.model.shot(self.shot.value)
        self.prompt.value, self.characters.value, self.where.value = (shot.prompt, ", ".join(shot.characters),
                                                                      shot.location or "")
        self.media.children = tuple(_preview(m) for m in self.model.media(shot.shot_id))

    def save_shot(self) -> ActionResult | None:
        if not self.shot.value:
            return None
        shot = self.model.shot(self.shot.value)
        changed_prompt = self.prompt.value if self.prompt.value != shot.prompt else None
        return self.run(lambda: self.model.edit(shot.shot_id, prompt=changed_prompt, characters=self.characters.value,
                                                location=self.where.value))

    def reject_selected(self) -> ActionResult | None:
        """Reject the selected frame with the note; the note box clears once the note is taken."""
        if not self.waiting.value:
            return None
        result = self.run(lambda: self.model.reject(self.waiting.value, self.note.value))
        if result.ok:
            self.note.value = ""
        return result

    def _show_waiting(self) -> None:
        item = next((r for r in self.model.awaiting() if r.task_id == self.waiting.value), None)
        self.waiting_media.children = () if item is None else (
            _preview(MediaItem(item.task_id, item.kind, "awaiting_review", item.path, "image/png",
                               bool(item.path) and Path(item.path).is_file())),)

    def run(self, action: Callable[[], ActionResult]) -> ActionResult:
        """Do one of the model's actions, say what it did and redraw (buttons and notebooks alike)."""
        result = action()
        self.message.show(result)
        self.redraw()
        return result


def _options(box: w.Dropdown, options: list[tuple[str, object]]) -> None:
    """Replace a dropdown's choices, keeping its value when still offered."""
    keep, values = box.value, [v for _, v in options]
    box.options = options
    if values:
        box.value = keep if keep in values else values[0]


def _review_html(counts: ReviewCounts) -> str:
    """What waits for review, then the last decisions (who, when, the note)."""
    lines = [f"<p data-pk='review-count'><b>{html.escape(counts.line())}</b></p>"]
    lines += [f"<div data-pk='decision'><small>{d.at:%Y-%m-%d %H:%M} UTC · "
              f"{'approved' if d.decision == 'approve' else 'rejected'} "
              f"{html.escape(describe_task(d.task_id))} "
              f"by {html.escape(d.by or '?')}" + (f": “{html.escape(d.note)}”" if d.note else "")
              + "</small></div>" for d in counts.decisions]
    return "".join(lines)


def _cut(text: str, n: int = PROMPT_SHOWN) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _preview(item: MediaItem) -> w.Widget:
    """A frame or clip when its file is there, else its status."""
    what = html.escape(item.kind.replace("_", " "))
    caption = w.HTML(f"<small style='margin-right:16px'>{what}: "
                     f"{html.escape(state_in_words(item.status, item.kind))}</small>")
    if not item.ready or item.path is None or item.mime is None:
        return w.VBox([caption])
    data = Path(item.path).read_bytes()
    if item.mime.startswith("image/"):
        return w.VBox([w.Image(value=data, format=item.mime.split("/")[1], width=320), caption])
    if item.mime.startswith("video/"):
        return w.VBox([w.Video(value=data, format=item.mime.split("/")[1], width=320, autoplay=False), caption])
    return w.VBox([caption])


def storyboard_screen(model: StoryboardModel, *, page_size: int = 20) -> StoryboardScreen:
    return StoryboardScreen(model, page_size=page_size)


class BookPicker:
    """Choose the book from the books stored; its storyboard opens below. No parameter needed:
    a bookcode given (papermill's `bookcode`, or `?bookcode=` in Voilà's address) is preselected."""

    def __init__(self, db: Database, bookcode: str = "", *, page_size: int = 20) -> None:
        self.db, self.page_size = db, page_size
        self.screen: StoryboardScreen | None = None
        books = NewBookModel(db).books()
        known = {b.bookcode for b in books}
        self.note = w.HTML()
        if bookcode and bookcode not in known:
            self.note.value = (f"<span class='pk-bad'>There is no book {html.escape(bookcode)} "
                               "in this database: choose one below.</span>")
        elif not books:
            self.note.value = "<i>No books yet: add one in 01_new_book first.</i>"
        self.book = w.Dropdown(description="Book", options=[("(choose a book)", "")] + [
            (f"{b.title} ({b.bookcode}, {b.chapters} chapter(s))", b.bookcode) for b in books],
            value=bookcode if bookcode in known else "", layout=w.Layout(width="700px"))
        self.board = w.VBox()
        self.widget = w.VBox([w.HTML(STYLE), self.book, self.note, self.board])
        self.book.observe(lambda _: self.open(), names="value")
        self.open()

    def open(self) -> StoryboardScreen | None:
        """Show the chosen book's storyboard (nothing while no book is chosen)."""
        code = self.book.value
        self.screen = (storyboard_screen(StoryboardModel(self.db, code), page_size=self.page_size)
                       if code else None)
        self.board.children = (self.screen.widget,) if self.screen else ()
        return self.screen
