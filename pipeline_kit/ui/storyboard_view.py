"""The storyboard screen's widgets: split, a filtered paged grid of shots (thumbnails, clip on
click, approve and reject; approve a page, a chapter or everything shown at once), the shot editor
(*Edit* brings it into view) and the frame review (`review_view`). Every action goes through the
page's one refresh path (`Page.act`), so 02's cast and films follow it too (`BookPicker`)."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from pathlib import Path

import ipywidgets as w

from pipeline_kit.db.connect import Database
from pipeline_kit.engine.states import Status
from pipeline_kit.text.graph import FRAMES
from pipeline_kit.ui.actions import ActionResult
from pipeline_kit.ui.media import MediaItem
from pipeline_kit.ui.newbook import NewBookModel
from pipeline_kit.ui.page import Page
from pipeline_kit.ui.review_view import ReviewPanel
from pipeline_kit.ui.storyboard import Grid, ShotRow, StoryboardModel, Tile
from pipeline_kit.ui.widgets import STYLE, BookSection, Message, S, heading, options, picture, placeholder
from pipeline_kit.ui.words import cut, describe_task, frames, place, state_in_words
from pipeline_kit.plural import plural

ANY = "(any)"
TEXT_SHOWN = 160  # characters of a shot's source text on its card
THUMB_W, THUMB_H = 176, 99  # a thumbnail as shown on a card
CARD = w.Layout(width="384px", padding="4px", margin="3px")


class StoryboardScreen:
    """Browse, edit and review one book's shots."""

    def __init__(self, model: StoryboardModel, *, page_size: int = 20, page: Page | None = None) -> None:
        """`page`: the page this screen is a section of (02's, with the cast and films); every
        action redraws all of it. Alone (a test, a notebook cell), the screen is its own page."""
        self.model, self.page_size, self.page_no = model, page_size, 1
        self.page = page if page is not None else Page(self)
        self._drawing = False  # True while redraw sets values: those are not a person's choices
        self.shown: Grid | None = None  # what the grid shows now
        self.filler: asyncio.Task[None] | None = None  # drawing the page's missing thumbnails
        self._pending: list[tuple[Tile, w.Box]] = []  # (tile, its picture's slot) still to draw
        self.message = Message()
        self.split_button = w.Button(description="Split into shots", icon="cut", button_style="primary")
        self.refresh = w.Button(
            description="Show what workers made since", icon="refresh", layout=w.Layout(width="auto")
        )
        self.chapter = w.Dropdown(description="Chapter")
        self.character = w.Dropdown(description="Character")
        self.location = w.Dropdown(description="Location")
        self.state = w.Dropdown(description="State", layout=w.Layout(width="auto"))
        self.prev, self.next = w.Button(description="◀ Prev"), w.Button(description="Next ▶")
        self.page_label = w.HTML()
        self.approve_page = w.Button(icon="check", button_style="success", layout=w.Layout(width="auto"))
        self.approve_shown = w.Button(icon="check-double", button_style="success", layout=w.Layout(width="auto"))
        self.approve_chapter = w.Button(
            description="Approve the chapter", icon="check", button_style="success", layout=w.Layout(width="auto")
        )
        self.chapter_to_approve = w.Dropdown(description="Frames of", layout=w.Layout(width="auto"))
        for button in (self.approve_page, self.approve_shown, self.approve_chapter):
            button.add_class("pk-batch-approve")
        self.grid_note = w.Text(
            description="Note", placeholder="what to change, for Reject in the grid", layout=w.Layout(width="600px")
        )
        self.grid = w.GridBox(layout=w.Layout(grid_template_columns="repeat(auto-fill, 394px)"))
        self.shot = w.Dropdown(description="Shot", layout=w.Layout(width="600px"))
        self.prompt = w.Textarea(description="Prompt", layout=w.Layout(width="100%", height="90px"))
        self.characters = w.Text(
            description="Characters", placeholder="comma-separated names", layout=w.Layout(width="600px")
        )
        self.where = w.Text(description="Location", layout=w.Layout(width="600px"))
        self.save = w.Button(description="Save and re-run", icon="save", button_style="primary")
        self.rerun = w.Button(description="Re-run unchanged", icon="redo")
        self.media = w.HBox()
        self.panel = ReviewPanel(model.review, self.page, self.message)
        self._wire()
        self.widget = w.VBox(
            [
                w.HTML(STYLE),
                w.HTML(f"<b>Book</b> <span data-pk='bookcode'>{html.escape(model.bookcode)}</span>"),
                w.HBox([self.split_button, self.refresh]),
                self.message.widget,
                heading("Shots"),
                w.HBox([self.chapter, self.character, self.location, self.state]),
                w.HBox([self.prev, self.page_label, self.next]),
                w.HBox([self.approve_page, self.approve_shown, self.chapter_to_approve, self.approve_chapter]),
                self.grid_note,
                self.grid,
                heading("Edit a shot"),
                self.shot,
                self.prompt,
                self.characters,
                self.where,
                w.HBox([self.save, self.rerun]),
                self.media,
                heading("Review frames"),
                self.panel.widget,
            ]
        )
        self.redraw()

    def _wire(self) -> None:
        self.split_button.on_click(lambda _: self.run(self.model.split))
        self.refresh.on_click(lambda _: self.page.redraw())
        for box in (self.chapter, self.character, self.location, self.state):
            box.observe(lambda _: self._drawing or self.go(1), names="value")
        self.prev.on_click(lambda _: self.go(self.page_no - 1))
        self.next.on_click(lambda _: self.go(self.page_no + 1))
        self.approve_page.on_click(lambda _: self.approve_frames(lambda g: g.waiting.page, "this page"))
        self.approve_shown.on_click(lambda _: self.approve_frames(lambda g: g.waiting.shown, self._shown_words()))
        self.approve_chapter.on_click(
            lambda _: (
                self.chapter_to_approve.value
                and self.approve_frames(
                    lambda g: g.waiting.chapters.get(self.chapter_to_approve.value, ()),
                    f"chapter {self.chapter_to_approve.value}",
                )
            )
        )
        self.shot.observe(lambda _: self._drawing or self.load_shot(), names="value")
        self.save.on_click(lambda _: self.save_shot())
        self.rerun.on_click(lambda _: self.shot.value and self.run(lambda: self.model.rerun(self.shot.value)))

    def redraw(self) -> None:
        """Re-read the filters, the current page, the selected shot (its prompt, characters,
        location and media) and the review panel: every widget shows what the database holds now."""
        self.go(self.page_no)
        self.panel.redraw()

    def approve_frames(self, which: Callable[[Grid], tuple[str, ...]], what: str) -> ActionResult | None:
        """Approve at once the frames waiting among those the grid shows (`which` picks them:
        this page, a chapter, every page shown), in one call to the review gate."""
        if self.shown is None:
            return None
        ids = which(self.shown)
        return self.run(lambda: self.model.review.approve_many(ids, what))

    def edit(self, shot_id: str) -> None:
        """Open a shot in the editor and bring the editor into view (its prompt takes the focus,
        which scrolls the page to it)."""
        self.shot.value = shot_id
        self.prompt.focus()

    def go(self, page: int) -> Grid:
        """Show a page of the shots the filters choose: their cards, and the editor's choice.
        Thumbnails this PC lacks are drawn after the page shows (see `fill`)."""
        grid = self.model.grid(page, self.page_size, draw=False, **self._chosen())
        drawing, self._drawing = self._drawing, True
        try:
            if self._offer(grid):  # a chosen value is gone (e.g. the last shot left that state)
                grid = self.model.grid(page, self.page_size, draw=False, **self._chosen())
            options(
                self.shot,
                [(f"{place(r.chapter, r.seq)} · {cut(r.text or r.prompt, 70)}", r.shot_id) for r in grid.page.rows],
            )
            self._batch(grid)
        finally:
            self._drawing = drawing
        self.shown, self.page_no = grid, grid.page.page
        self.page_label.value = (
            f"&nbsp;page {grid.page.page} of {grid.page.pages} · {plural(grid.page.total, 'shot')}&nbsp;"
        )
        self._pending = []
        self.grid.children = tuple(self._card(r, grid.tiles.get(r.shot_id, {})) for r in grid.page.rows) or (
            w.HTML(
                "<i data-pk='shots'>"
                + ("none match" if grid.filters.chapters else "no shots: split the book first")
                + "</i>"
            ),
        )
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
        return {
            "chapter": self.chapter.value or None,
            "character": self.character.value or None,
            "location": self.location.value or None,
            "state": self.state.value or None,
        }

    def _offer(self, grid: Grid) -> bool:
        """Offer the filter values there are now; True if a chosen one had to be dropped."""
        before = self._chosen()
        f = grid.filters
        options(self.chapter, [(ANY, 0)] + [(str(c), c) for c in f.chapters])
        options(self.character, [(ANY, "")] + [(c, c) for c in f.characters])
        options(self.location, [(ANY, "")] + [(x, x) for x in f.locations])
        options(self.state, [(ANY, "")] + [(x, x) for x in f.states])
        return self._chosen() != before

    def _batch(self, grid: Grid) -> None:
        """The batch buttons say how many frames each would approve; the chapter list offers the
        chapters with frames waiting."""
        waiting = grid.waiting
        self.approve_page.description = f"Approve this page ({frames(len(waiting.page))})"
        self.approve_shown.description = f"Approve {self._shown_words()} ({frames(len(waiting.shown))})"
        self.approve_page.disabled, self.approve_shown.disabled = not waiting.page, not waiting.shown
        options(
            self.chapter_to_approve,
            [(f"chapter {c} ({frames(len(ids))})", c) for c, ids in sorted(waiting.chapters.items())]
            or [("no chapter waits", 0)],
        )
        self.approve_chapter.disabled = not waiting.chapters

    def _shown_words(self) -> str:
        """The shots the filters show, on every page, as a message names them."""
        return "every shot shown" if any(self._chosen().values()) else "every shot"

    def _card(self, row: ShotRow, tiles: dict[str, Tile]) -> w.Widget:
        """One shot: where it is, its state and source text, who and where, its two frames (with
        approve and reject while they wait for review), its clip on click, and Edit."""
        who = ", ".join(row.characters) or "nobody named"
        head = w.HTML(
            f"<div data-pk='shot-card' data-shot='{html.escape(row.shot_id)}'>"
            f"<b>{place(row.chapter, row.seq)}</b> · <span data-pk='shot-state'>{html.escape(row.state)}</span><br>"
            f"<span style='font-size:12px'>{html.escape(cut(row.text or row.prompt, TEXT_SHOWN))}</span><br>"
            f"<small>{html.escape(who)} · {html.escape(row.location or 'no location')}</small></div>"
        )
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
        edit.on_click(lambda _, s=row.shot_id: self.edit(s))
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
        if tile is not None and tile.status is Status.AWAITING_REVIEW:
            ok = w.Button(
                description="Approve",
                button_style="success",
                layout=w.Layout(width="auto"),
                tooltip=f"approve {describe_task(tile.task_id)}",
            )
            no = w.Button(
                description="Reject",
                button_style="danger",
                layout=w.Layout(width="auto"),
                tooltip=f"reject {describe_task(tile.task_id)} with the note above the grid",
            )
            ok.add_class("pk-grid-approve")
            no.add_class("pk-grid-reject")
            ok.on_click(lambda _, t=tile.task_id: self.run(lambda: self.model.review.approve(t)))
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
        self.prompt.value, self.characters.value, self.where.value = (
            shot.prompt,
            ", ".join(shot.characters),
            shot.location or "",
        )
        self.media.children = tuple(self._preview(m) for m in self.model.media(shot.shot_id))

    def save_shot(self) -> ActionResult | None:
        if not self.shot.value:
            return None
        shot = self.model.shot(self.shot.value)
        changed_prompt = self.prompt.value if self.prompt.value != shot.prompt else None
        return self.run(
            lambda: self.model.edit(
                shot.shot_id, prompt=changed_prompt, characters=self.characters.value, location=self.where.value
            )
        )

    def reject_in_grid(self, task_id: str) -> ActionResult:
        """Reject a frame from its card with the grid's note (cleared once taken)."""
        result = self.run(lambda: self.model.review.reject(task_id, self.grid_note.value))
        if result.ok:
            self.grid_note.value = ""
        return result

    def _preview(self, item: MediaItem, width: int = 320) -> w.Widget:
        """A frame when its file is there, a clip's play button, else its state in words."""
        caption = w.HTML(
            f"<small style='margin-right:16px'>{html.escape(item.kind.replace('_', ' '))}: "
            f"{html.escape(state_in_words(item.status, item.kind))}</small>"
        )
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
        """Do one of the model's actions, say what it did and redraw the whole page."""
        return self.page.act(action, self.message)


def _thumb(slot: w.Box, path: Path | None) -> None:
    """Put a thumbnail into its slot on a card (or say the frame cannot be shown now)."""
    if path is None:
        slot.children = (placeholder("the frame cannot be shown now", THUMB_W, THUMB_H),)
        return
    image = w.Image(value=path.read_bytes(), format="jpeg", width=THUMB_W)
    image.add_class("pk-thumb")
    slot.children = (image,)


def storyboard_screen(model: StoryboardModel, *, page_size: int = 20, page: Page | None = None) -> StoryboardScreen:
    return StoryboardScreen(model, page_size=page_size, page=page)


class BookPicker:
    """02's page: choose the book from the books stored; its storyboard opens below, and the
    sections added with `section` (the cast, the films) follow the same book. It is one page: an
    action in any section redraws them all. No parameter needed: a bookcode given (papermill's
    `bookcode`, or `?bookcode=` in Voilà's address) is preselected."""

    def __init__(self, db: Database, bookcode: str = "", *, page_size: int = 20, cache: Path | None = None) -> None:
        """`cache`: this PC's folder for fetched frames and thumbnails (default: `screen_cache()`)."""
        self.db, self.page_size, self.cache = db, page_size, cache
        books = NewBookModel(db).books()
        known = {b.bookcode for b in books}
        self.note = w.HTML()
        if bookcode and bookcode not in known:
            self.note.value = (
                f"<span class='pk-bad'>There is no book {html.escape(bookcode)} "
                "in this database: choose one below.</span>"
            )
        elif not books:
            self.note.value = "<i>No books yet: add one in 01_new_book first.</i>"
        self.book = w.Dropdown(
            description="Book",
            options=[("(choose a book)", "")]
            + [(f"{b.title} ({b.bookcode}, {plural(b.chapters, 'chapter')})", b.bookcode) for b in books],
            value=bookcode if bookcode in known else "",
            layout=w.Layout(width="700px"),
        )
        self.page = Page()
        self.board = self.section(
            lambda code, page: storyboard_screen(StoryboardModel(db, code, cache=cache), page_size=page_size, page=page)
        )
        self.widget = w.VBox([w.HTML(STYLE), self.book, self.note, self.board.widget])

    @property
    def screen(self) -> StoryboardScreen | None:
        """The chosen book's storyboard (None while no book is chosen)."""
        return self.board.screen

    def section(self, make: Callable[[str, Page], S]) -> BookSection[S]:
        """A section of this page showing `make(bookcode, page)` for the chosen book, redrawn
        with the rest of the page after every action (the cast and the films in 02)."""
        return self.page.add(BookSection(self.book, lambda code: make(code, self.page)))
