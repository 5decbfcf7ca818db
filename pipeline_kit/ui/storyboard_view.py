"""The storyboard screen's widgets: split, a filtered paged grid of shots (thumbnails, clip on
click, approve and reject), the shot editor and the frame review (large, with previous and next)."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from pathlib import Path

import ipywidgets as w

from pipeline_kit.db.connect import Database
from pipeline_kit.text.graph import FRAMES
from pipeline_kit.ui.actions import ActionResult
from pipeline_kit.ui.newbook import NewBookModel
from pipeline_kit.ui.storyboard import (
    Grid,
    MediaItem,
    ReviewCounts,
    ReviewFrame,
    ShotRow,
    StoryboardModel,
    Tile,
    describe_task,
)
from pipeline_kit.ui.widgets import STYLE, Message, heading, picture, placeholder
from pipeline_kit.ui.words import state_in_words

ANY = "(any)"
TEXT_SHOWN = 160  # characters of a shot's source text on its card
THUMB_W, THUMB_H = 176, 99  # a thumbnail as shown on a card
LARGE = 640  # the width of the frame under review
CARD = w.Layout(width="384px", padding="4px", margin="3px")


class StoryboardScreen:
    """Browse, edit and review one book's shots."""

    def __init__(self, model: StoryboardModel, *, page_size: int = 20) -> None:
        self.model, self.page_size, self.page_no = model, page_size, 1
        self._drawing = False  # True while redraw sets values: those are not a person's choices
        self.shown: Grid | None = None  # what the grid shows now
        self.filler: asyncio.Task[None] | None = None  # drawing the page's missing thumbnails
        self._pending: list[tuple[Tile, w.Box]] = []  # (tile, its picture's slot) still to draw
        self.message = Message()
        self.split_button = w.Button(description="Split into shots", icon="cut", button_style="primary")
        self.refresh = w.Button(description="Show what workers made since", icon="refresh",
                                layout=w.Layout(width="auto"))
        self.chapter = w.Dropdown(description="Chapter")
        self.character = w.Dropdown(description="Character")
        self.location = w.Dropdown(description="Location")
        self.state = w.Dropdown(description="State", layout=w.Layout(width="auto"))
        self.prev, self.next = w.Button(description="◀ Prev"), w.Button(description="Next ▶")
        self.page_label = w.HTML()
        self.grid_note = w.Text(description="Note", placeholder="what to change, for Reject in the grid",
                                layout=w.Layout(width="600px"))
        self.grid = w.GridBox(layout=w.Layout(grid_template_columns="repeat(auto-fill, 394px)"))
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
        self.waiting = w.Dropdown(description="Frame", layout=w.Layout(width="600px"))
        self.prev_frame = w.Button(description="◀ Previous frame", layout=w.Layout(width="auto"))
        self.next_frame = w.Button(description="Next frame ▶", layout=w.Layout(width="auto"))
        self.position = w.HTML()
        self.large = w.Box(layout=w.Layout(min_width=f"{LARGE}px"))
        self.frame_info = w.HTML(layout=w.Layout(max_width="520px", margin="0 0 0 12px"))
        self.note = w.Text(description="Note", placeholder="what to change (needed to reject)",
                           layout=w.Layout(width="600px"))
        self.approve, self.reject = (w.Button(description="Approve", icon="check", button_style="success"),
                                     w.Button(description="Reject", icon="times", button_style="danger"))
        self.approve.add_class("pk-approve")
        self.reject.add_class("pk-reject")
        self._wire()
        self.widget = w.VBox([
            w.HTML(STYLE), w.HTML(f"<b>Book</b> <span data-pk='bookcode'>{html.escape(model.bookcode)}</span>"),
            w.HBox([self.split_button, self.refresh]), self.message.widget,
            heading("Shots"), w.HBox([self.chapter, self.character, self.location, self.state]),
            w.HBox([self.prev, self.page_label, self.next]), self.grid_note, self.grid,
            heading("Edit a shot"), self.shot, self.prompt, self.characters, self.where,
            w.HBox([self.save, self.rerun]), self.media,
            heading("Review frames"), self.review, self.review_line, self.waiting,
            w.HBox([self.prev_frame, self.position, self.next_frame]),
            w.HBox([self.large, self.frame_info]), self.note,
            w.HBox([self.approve, self.reject]),
        ])
        self.redraw()

    def _wire(self) -> None:
        self.split_button.on_click(lambda _: self.run(self.model.split))
        self.refresh.on_click(lambda _: self.redraw())
        for box in (self.chapter, self.character, self.location, self.state):
            box.observe(lambda _: self._drawing or self.go(1), names="value")
        self.prev.on_click(lambda _: self.go(self.page_no - 1))
        self.next.on_click(lambda _: self.go(self.page_no + 1))
        self.shot.observe(lambda _: self._drawing or self.load_shot(), names="value")
        self.save.on_click(lambda _: self.save_shot())
        self.rerun.on_click(lambda _: self.shot.value and self.run(lambda: self.model.rerun(self.shot.value)))
        self.review.observe(lambda change: self._drawing or self.run(lambda: self.model.set_review(change["new"])),
                            names="value")
        self.waiting.observe(lambda _: self._drawing or self._show_waiting(), names="value")
        self.prev_frame.on_click(lambda _: self.step(-1))
        self.next_frame.on_click(lambda _: self.step(1))
        self.approve.on_click(lambda _: self.waiting.value and self.decide(
            lambda: self.model.approve(self.waiting.value)))
        self.reject.on_click(lambda _: self.reject_selected())

    def redraw(self) -> None:
        """Re-read the filters, the current page, the selected shot (its prompt, characters,
        location and media) and the review queue: every widget shows what the database holds now."""
        self._drawing = True
        try:
            self.review.value = self.model.review_on()
        finally:
            self._drawing = False
        self.go(self.page_no)
        self.review_line.value = _review_html(self.model.review_counts())
        self._queue()

    def go(self, page: int) -> Grid:
        """Show a page of the shots the filters choose: their cards, and the editor's choice.
        Thumbnails this PC lacks are drawn after the page shows (see `fill`)."""
        grid = self.model.grid(page, self.page_size, draw=False, **self._chosen())
        drawing, self._drawing = self._drawing, True
        try:
            if self._offer(grid):  # a chosen value is gone (e.g. the last shot left that state)
                grid = self.model.grid(page, self.page_size, draw=False, **self._chosen())
            _options(self.shot, [(f"{r.chapter}.{r.seq} · {_cut(r.text or r.prompt, 70)}", r.shot_id)
                                 for r in grid.page.rows])
        finally:
            self._drawing = drawing
        self.shown, self.page_no = grid, grid.page.page
        self.page_label.value = (f"&nbsp;page {grid.page.page} of {grid.page.pages} · "
                                 f"{grid.page.total} shot(s)&nbsp;")
        self._pending = []
        self.grid.children = tuple(self._card(r, grid.tiles.get(r.shot_id, {})) for r in grid.page.rows) or (
            w.HTML("<i data-pk='shots'>" + ("none match" if grid.filters.chapters
                                             else "no shots: split the book first") + "</i>"),)
        self.fill()
        self.load_shot()
        return grid

    def fill(self) -> None:
        """Draw the page's missing thumbnails into their slots: in a task off the kernel's event
        loop, so the page shows (and its buttons work) at once; right here when there is no loop
        (plain Python, tests). A page left meanwhile is no longer filled."""
        if self.filler is not None:
            self.filler.cancel()
            self.filler = None
        pending, self._pending = self._pending, []
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            for tile, slot in pending:
                _thumb(slot, self.model.draw_thumbnail(tile))
            return

        async def draw() -> None:
            for tile, slot in pending:
                try:
                    path = await asyncio.to_thread(self.model.draw_thumbnail, tile)
                except Exception:  # a database or store away for a moment: the slot says so
                    path = None
                _thumb(slot, path)
        if pending:
            self.filler = loop.create_task(draw())

    def _chosen(self) -> dict[str, object]:
        return {"chapter": self.chapter.value or None, "character": self.character.value or None,
                "location": self.location.value or None, "state": self.state.value or None}

    def _offer(self, grid: Grid) -> bool:
        """Offer the filter values there are now; True if a chosen one had to be dropped."""
        before = self._chosen()
        f = grid.filters
        _options(self.chapter, [(ANY, 0)] + [(str(c), c) for c in f.chapters])
        _options(self.character, [(ANY, "")] + [(c, c) for c in f.characters])
        _options(self.location, [(ANY, "")] + [(x, x) for x in f.locations])
        _options(self.state, [(ANY, "")] + [(x, x) for x in f.states])
        return self._chosen() != before

    def _card(self, row: ShotRow, tiles: dict[str, Tile]) -> w.Widget:
        """One shot: where it is, its state and source text, who and where, its two frames (with
        approve and reject while they wait for review), its clip on click, and Edit."""
        who = ", ".join(row.characters) or "nobody named"
        head = w.HTML(
            f"<div data-pk='shot-card' data-shot='{html.escape(row.shot_id)}'>"
            f"<b>{row.chapter}.{row.seq}</b> · <span data-pk='shot-state'>{html.escape(row.state)}</span><br>"
            f"<span style='font-size:12px'>{html.escape(_cut(row.text or row.prompt, TEXT_SHOWN))}</span><br>"
            f"<small>{html.escape(who)} · {html.escape(row.location or 'no location')}</small></div>")
        frames = w.HBox([self._frame(tiles.get(kind), kind) for kind in FRAMES])
        clip_box = w.Box()
        buttons = []
        clip = tiles.get("video")
        if clip is not None and clip.has_output:
            play = w.Button(description="▶ Play clip", layout=w.Layout(width="auto"))
            play.on_click(lambda _, t=clip.task_id, box=clip_box: self.play(t, box))
            buttons.append(play)
        else:
            buttons.append(w.HTML(f"<small>clip: {html.escape(clip.state if clip else '-')}</small>"))
        edit = w.Button(description="Edit", icon="pencil", layout=w.Layout(width="auto"))
        edit.on_click(lambda _, s=row.shot_id: setattr(self.shot, "value", s))
        card = w.VBox([head, frames, w.HBox([*buttons, edit]), clip_box], layout=CARD)
        card.add_class("pk-card")
        return card

    def _frame(self, tile: Tile | None, kind: str) -> w.Widget:
        caption = f"{kind.replace('_', ' ')}: {tile.state if tile else '-'}"
        slot = w.Box()
        if tile is not None and tile.to_draw:
            slot.children = (placeholder("drawing its thumbnail…", THUMB_W, THUMB_H),)
            self._pending.append((tile, slot))
        elif tile is not None and tile.thumbnail is not None:
            _thumb(slot, tile.thumbnail)
        else:
            slot.children = (placeholder(tile.state if tile else "no task", THUMB_W, THUMB_H),)
        parts = [slot, w.HTML(f"<small>{html.escape(caption)}</small>")]
        if tile is not None and tile.status == "awaiting_review":
            ok = w.Button(description="Approve", button_style="success", layout=w.Layout(width="auto"),
                          tooltip=f"approve {describe_task(tile.task_id)}")
            no = w.Button(description="Reject", button_style="danger", layout=w.Layout(width="auto"),
                          tooltip=f"reject {describe_task(tile.task_id)} with the note above the grid")
            ok.add_class("pk-grid-approve")
            no.add_class("pk-grid-reject")
            ok.on_click(lambda _, t=tile.task_id: self.run(lambda: self.model.approve(t)))
            no.on_click(lambda _, t=tile.task_id: self.reject_in_grid(t))
            parts.append(w.HBox([ok, no]))
        return w.VBox(parts, layout=w.Layout(width=f"{THUMB_W + 8}px"))

    def play(self, task_id: str, box: w.Box) -> None:
        """Fetch one clip through the store and play it in its card (clips load only on click)."""
        item = self.model.clip(task_id)
        shown = None
        if item is not None and item.ready and item.path and item.mime:
            shown = picture(Path(item.path), item.mime, THUMB_W * 2)
        if shown is None:
            self.message.error(f"the clip of {describe_task(task_id)} cannot be fetched now")
            return
        box.children = (shown,)

    def load_shot(self) -> None:
        """Show the selected shot as stored: its prompt, characters, location, frames and clip."""
        if not self.shot.value:
            self.prompt.value = self.characters.value = self.where.value = ""
            self.media.children = ()
            return
        shot = self.model.shot(self.shot.value)
        self.prompt.value, self.characters.value, self.where.value = (shot.prompt, ", ".join(shot.characters),
                                                                      shot.location or "")
        self.media.children = tuple(self._preview(m) for m in self.model.media(shot.shot_id))

    def save_shot(self) -> ActionResult | None:
        if not self.shot.value:
            return None
        shot = self.model.shot(self.shot.value)
        changed_prompt = self.prompt.value if self.prompt.value != shot.prompt else None
        return self.run(lambda: self.model.edit(shot.shot_id, prompt=changed_prompt, characters=self.characters.value,
                                                location=self.where.value))

    def reject_selected(self) -> ActionResult | None:
        """Reject the frame under review with the note; the note box clears once the note is taken."""
        if not self.waiting.value:
            return None
        task_id, note = self.waiting.value, self.note.value
        result = self.decide(lambda: self.model.reject(task_id, note))
        if result.ok:
            self.note.value = ""
        return result

    def reject_in_grid(self, task_id: str) -> ActionResult:
        """Reject a frame from its card with the grid's note (cleared once taken)."""
        result = self.run(lambda: self.model.reject(task_id, self.grid_note.value))
        if result.ok:
            self.grid_note.value = ""
        return result

    def decide(self, action: Callable[[], ActionResult]) -> ActionResult:
        """Approve or reject the frame under review, then show the one that came after it."""
        at = self._index()
        result = self.run(action)
        if result.ok and self.waiting.options:
            self.waiting.value = self.waiting.options[min(at, len(self.waiting.options) - 1)][1]
        return result

    def step(self, by: int) -> None:
        """Move to the previous (-1) or next (+1) frame waiting for review."""
        options = self.waiting.options
        if options:
            self.waiting.value = options[max(0, min(self._index() + by, len(options) - 1))][1]

    def _index(self) -> int:
        values = [v for _, v in self.waiting.options]
        return values.index(self.waiting.value) if self.waiting.value in values else 0

    def _queue(self) -> None:
        """The frames waiting for review (character sheets have their own step), keeping the one
        shown when it still waits."""
        drawing, self._drawing = self._drawing, True
        try:
            _options(self.waiting, [(describe_task(r.task_id), r.task_id)
                                    for r in self.model.awaiting(kinds=FRAMES)])
        finally:
            self._drawing = drawing
        self._show_waiting()

    def _show_waiting(self) -> None:
        """The frame under review large, beside its shot's text and the prompt it was drawn from."""
        count, at = len(self.waiting.options), self._index()
        self.prev_frame.disabled, self.next_frame.disabled = at <= 0, at >= count - 1
        item = self.model.review_frame(self.waiting.value) if self.waiting.value else None
        if item is None:
            self.position.value = "&nbsp;no frame waits for your review&nbsp;" if not count else ""
            self.large.children, self.frame_info.value = (), ""
            return
        self.position.value = f"&nbsp;<span data-pk='review-position'>frame {at + 1} of {count}</span>&nbsp;"
        self.large.children = (self._preview(item.media, LARGE),)
        self.frame_info.value = _frame_html(item)

    def _preview(self, item: MediaItem, width: int = 320) -> w.Widget:
        """A frame when its file is there, a clip's play button, else its state in words."""
        caption = w.HTML(f"<small style='margin-right:16px'>{html.escape(item.kind.replace('_', ' '))}: "
                         f"{html.escape(state_in_words(item.status, item.kind))}</small>")
        if not item.ready or item.path is None or item.mime is None:
            return w.VBox([caption])
        if item.mime.startswith("video/"):
            box = w.Box()
            play = w.Button(description="▶ Play clip", layout=w.Layout(width="auto"))
            play.on_click(lambda _: self.play(item.task_id, box))
            return w.VBox([play, box, caption])
        shown = picture(Path(item.path), item.mime, width)
        return w.VBox([shown, caption] if shown else [caption])

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


def _thumb(slot: w.Box, path: Path | None) -> None:
    """Put a thumbnail into its slot on a card (or say the frame cannot be shown now)."""
    if path is None:
        slot.children = (placeholder("the frame cannot be shown now", THUMB_W, THUMB_H),)
        return
    image = w.Image(value=path.read_bytes(), format="jpeg", width=THUMB_W)
    image.add_class("pk-thumb")
    slot.children = (image,)


def _frame_html(item: ReviewFrame) -> str:
    """What a frame under review is judged against: which shot, its source text, the prompt."""
    return (f"<div data-pk='review-frame'><b>{html.escape(describe_task(item.task_id))}</b>"
            + (f" · {html.escape(item.where)}" if item.where else "")
            + f"<p data-pk='review-text'><b>Source text</b><br>{html.escape(item.text)}</p>"
            f"<p data-pk='review-prompt' style='white-space:pre-wrap'><b>Prompt</b><br>{html.escape(item.prompt)}</p>"
            "</div>")


def _review_html(counts: ReviewCounts) -> str:
    """What waits for review, then the last decisions (who, when, the note)."""
    lines = [f"<p data-pk='review-count'><b>{html.escape(counts.line())}</b></p>"]
    lines += [f"<div data-pk='decision'><small>{d.at:%Y-%m-%d %H:%M} UTC · "
              f"{'approved' if d.decision == 'approve' else 'rejected'} "
              f"{html.escape(describe_task(d.task_id))} "
              f"by {html.escape(d.by or '?')}" + (f": “{html.escape(d.note)}”" if d.note else "")
              + "</small></div>" for d in counts.decisions]
    return "".join(lines)


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def storyboard_screen(model: StoryboardModel, *, page_size: int = 20) -> StoryboardScreen:
    return StoryboardScreen(model, page_size=page_size)


class BookPicker:
    """Choose the book from the books stored; its storyboard opens below. No parameter needed:
    a bookcode given (papermill's `bookcode`, or `?bookcode=` in Voilà's address) is preselected."""

    def __init__(self, db: Database, bookcode: str = "", *, page_size: int = 20, cache: Path | None = None) -> None:
        """`cache`: this PC's folder for fetched frames and thumbnails (default: `screen_cache()`)."""
        self.db, self.page_size, self.cache = db, page_size, cache
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
        self.screen = (storyboard_screen(StoryboardModel(self.db, code, cache=self.cache),
                                         page_size=self.page_size)
                       if code else None)
        self.board.children = (self.screen.widget,) if self.screen else ()
        return self.screen
