"""The cast in notebook 02: the book's character bible shown and edited, and the character sheets
approved before any frame is drawn ("approve the cast").

Edits go through `castdb` (merge, rename, describe, drop), which re-queues only what changes;
the message says in a creator's words what will be drawn again. With review on, a character
sheet waits for the creator and the frames of every shot naming that character wait on it, so
each sheet says which shots wait; approving or rejecting uses the review gate's own functions.
Sheet images are fetched through the output store, so the page shows them from any folder or PC.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as w
import sqlalchemy as sa

from pipeline_kit import engine, kinds
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import shots
from pipeline_kit.engine.queries import dependent_shots, dependents, find_tasks, tasks_by_id
from pipeline_kit.engine.states import Status
from pipeline_kit.store import Store
from pipeline_kit.text import castdb
from pipeline_kit.text.graph import sheet_task_id
from pipeline_kit.ui.actions import ActionResult, attempt
from pipeline_kit.ui.session import screen_store
from pipeline_kit.ui.media import local_copy
from pipeline_kit.ui.page import Page
from pipeline_kit.ui.widgets import STYLE, Message, heading, options, reuse, table, take_note
from pipeline_kit.ui.words import state_in_words
from pipeline_kit.plural import plural

SHEET, PLACE_SHEET = kinds.names(kinds.Role.SHEET)  # a character's, a place's
WAITING = Status.AWAITING_REVIEW
SHOTS_NAMED = 8  # shots named in a line before "and N more"


@dataclass(frozen=True)
class CastRow:
    """One character of the bible, its sheet, and the shots whose frames wait on that sheet."""

    name: str
    aliases: tuple[str, ...]
    description: str
    first_shot: str | None
    last_shot: str | None
    locked: bool  # a person fixed this entry: a new split keeps it as it is
    sheet_task: str | None  # None: no shot names the character, so no sheet is made
    sheet_status: Status | None
    sheet_state: str  # the sheet's state in words ("waiting for your review")
    sheet_path: str | None  # the sheet image fetched through the store, once drawn
    waiting_shots: tuple[str, ...]  # "chapter.seq" of shots whose frames wait for this sheet
    appears: str = ""  # where it appears, as "chapter.seq to chapter.seq"
    looks: str = ""  # what the prompts use: a person's words, else the director's, else the rules'

    @property
    def to_review(self) -> bool:
        return self.sheet_status == WAITING

    @property
    def shown(self) -> bool:
        return bool(self.sheet_path) and Path(self.sheet_path or "").is_file()


class CastModel:
    """One book's cast: the bible, its edits, and the review of its character sheets."""

    def __init__(self, db: Database, bookcode: str, store: Store | None = None) -> None:
        self.db, self.bookcode = db, bookcode
        self.store = store or screen_store(db)

    def rows(self) -> tuple[CastRow, ...]:
        """The bible (most mentioned first, dropped names left out) with each sheet's state."""
        entries = [e for e in castdb.list_cast(self.db, self.bookcode) if not e.character.dropped]
        ids = {e.character.name: sheet_task_id(self.bookcode, e.character.name) for e in entries}
        with self.db.reading() as conn:
            sheets = {r.task_id: r for r in find_tasks(conn, bookcode=self.bookcode, kinds=(SHEET,))}
            where = _book_places(conn, self.bookcode)
            waiting = _waiting_shots(
                conn, [t for t, r in sheets.items() if t in ids.values() and r.status is not Status.COMPLETED], where
            )
        places = {shot: f"{c}.{s}" for shot, (c, s) in where.items()}
        rows = []
        for e in entries:
            c = e.character
            sheet = sheets.get(ids[c.name])
            drawn = sheet is not None and sheet.status in (WAITING, Status.COMPLETED)
            rows.append(
                CastRow(
                    c.name,
                    c.aliases,
                    c.description,
                    e.first_shot,
                    e.last_shot,
                    c.locked,
                    sheet.task_id if sheet else None,
                    sheet.status if sheet else None,
                    state_in_words(sheet.status, SHEET, error=sheet.last_error)
                    if sheet
                    else "no sheet: no shot names this character",
                    local_copy(self.store, sheet.output_path, sheet.result) if drawn and sheet else None,
                    waiting.get(ids[c.name], ()),
                    " to ".join(dict.fromkeys(places[s] for s in (e.first_shot, e.last_shot) if s in places)),
                    e.looks,
                )
            )
        return tuple(rows)

    def to_review(self) -> tuple[CastRow, ...]:
        return to_review(self.rows())

    # -- review ("approve the cast") -------------------------------------------------------------
    def approve(self, name: str, *, by: str = "reviewer") -> ActionResult:
        """Accept a character's sheet: the frames of its shots may be drawn (once their other
        characters' sheets are approved too)."""
        task_id = sheet_task_id(self.bookcode, name)
        return self._approve(
            [task_id],
            lambda: engine.approve(self.db, task_id, by=by),
            lambda free: (
                f"the character sheet of {name} approved: "
                + (f"{plural(free, 'shot')} can now be drawn" if free else "no shot waits only on it")
            ),
        )

    def approve_all(self, *, by: str = "reviewer") -> ActionResult:
        """Approve every character sheet waiting for review (the whole cast at once) and the place
        sheets the shots are drawn after, in one call to the review gate."""
        names = [r.name for r in self.to_review()]
        places = self._places_to_review()
        if not names and not places:
            return ActionResult(True, "no character or place sheet waits for your review")
        ids = [sheet_task_id(self.bookcode, n) for n in names] + places
        what = f"the cast approved ({', '.join(names)})" if names else "the places approved"
        if names and places:
            what += f" with {plural(len(places), 'place')}"
        return self._approve(
            ids,
            lambda: engine.approve_many(self.db, ids, by=by),
            lambda free: f"{what}: {plural(free, 'shot')} can now be drawn",
        )

    def _places_to_review(self) -> list[str]:
        """The book's place sheets waiting for review."""
        with self.db.reading() as conn:
            return sorted(
                r.task_id for r in find_tasks(conn, bookcode=self.bookcode, kinds=(PLACE_SHEET,), statuses=(WAITING,))
            )

    def _approve(self, sheets: list[str], approve: Callable[[], object], said: Callable[[int], str]) -> ActionResult:
        """Run `approve` on these sheets and say how many shots it freed: those whose frames
        waited on them and now wait on nothing."""

        def freeing() -> int:  # a shot can be drawn once its first frame waits on nothing (its last follows it)
            before = {(s, t) for s, t in self._frames_waiting(sheets) if t.endswith("/first_frame")}
            approve()
            held = {s for s, _ in self._frames_waiting_any(before)}
            return len({s for s, _ in before} - held)

        return attempt(freeing, said)

    def reject(self, name: str, note: str, *, by: str = "reviewer") -> ActionResult:
        """Send a character's sheet back with a note: it is redrawn with the note and a new seed,
        and its shots keep waiting for it."""
        task_id = sheet_task_id(self.bookcode, name)
        waiting = len({s for s, _ in self._frames_waiting([task_id])})
        return attempt(
            lambda: engine.reject(self.db, task_id, note, by=by),
            lambda _: (
                f"the character sheet of {name} sent back: it will be redrawn with your "
                f"note and a new seed; {plural(waiting, 'shot')} keep waiting for it"
            ),
        )

    # -- edits of the bible ----------------------------------------------------------------------
    def merge(self, name: str, into: str) -> ActionResult:
        """`name` is the same person as `into`."""
        return self._edit(lambda: castdb.merge(self.db, self.bookcode, name, into), f"{name} is now {into}")

    def rename(self, old: str, new: str) -> ActionResult:
        return self._edit(lambda: castdb.rename(self.db, self.bookcode, old, new), f"{old} is now called {new.strip()}")

    def describe(self, name: str, text: str) -> ActionResult:
        return self._edit(lambda: castdb.describe(self.db, self.bookcode, name, text), f"{name}'s description saved")

    def drop(self, name: str) -> ActionResult:
        """Not a character: its shots stop naming it and its sheet is not made."""
        return self._edit(lambda: castdb.drop(self.db, self.bookcode, name), f"{name} is no longer a character")

    def _edit(self, action: Callable[[], castdb.CastReport], done: str) -> ActionResult:
        return attempt(action, lambda report: f"{done}; {self._redrawn(report)}")

    def _redrawn(self, report: castdb.CastReport) -> str:
        """What an edit sends back to be drawn, in words: the character's sheet, the frames and
        clips of the shots it changed, and films made from them; 'redrawn' when they were drawn."""
        sheet = sheet_task_id(self.bookcode, report.character.name) if report.character else None
        with self.db.reading() as conn:
            found = {r.task_id: r for r in tasks_by_id(conn, [*report.reset, *([sheet] if sheet else [])])}
        redo = [found[t] for t in report.reset if t in found]
        if sheet in found and found[sheet].status is Status.PENDING and sheet not in report.reset:
            redo.append(found[sheet])  # a renamed or merged character's sheet, made anew
        shot_ids = {r.shot_id for r in redo if r.shot_id}
        parts = (
            [f"the character sheet of {report.character.name}"]
            if report.character and any(r.kind == SHEET for r in redo)
            else []
        )
        if shot_ids:
            parts.append(f"the frames and clips of {plural(len(shot_ids), 'shot')}")
        if any(r.kind in kinds.names(kinds.Role.FILM) and r.attempts for r in redo):
            parts.append("the films made from them")
        if not parts:
            return "no shot names them, so nothing is drawn again"
        what = " and ".join(parts)
        return (
            f"{what} will be redrawn"
            if any(r.attempts for r in redo)
            else f"nothing was drawn yet: {what} will be drawn with the change"
        )

    def _frames_waiting(self, sheets: list[str]) -> set[tuple[str | None, str]]:
        """(shot, frame task) of the frames still waiting on any of `sheets`."""
        with self.db.reading() as conn:
            return {(d.shot_id, d.task_id) for d in dependents(conn, sheets, Status.PENDING)}

    def _frames_waiting_any(self, frames: Collection[tuple[str | None, str]]) -> set[tuple[str | None, str]]:
        """Of these frames, those still waiting on some task (another character's sheet)."""
        if not frames:
            return set()
        with self.db.reading() as conn:
            held = {r.task_id for r in tasks_by_id(conn, [t for _, t in frames]) if r.deps_remaining > 0}
        return {f for f in frames if f[1] in held}


def to_review(rows: tuple[CastRow, ...]) -> tuple[CastRow, ...]:
    """The character sheets waiting for the creator, the one most shots wait on first."""
    return tuple(sorted((r for r in rows if r.to_review), key=lambda r: -len(r.waiting_shots)))


def _book_places(conn: sa.Connection, bookcode: str) -> dict[str, tuple[int, int]]:
    """shot id -> (chapter, seq) for every shot of the book, as the storyboard places them."""
    query = sa.select(shots.c.shot_id, shots.c.chapter, shots.c.seq).where(shots.c.bookcode == bookcode)
    return {r.shot_id: (r.chapter, r.seq) for r in conn.execute(query)}


def _waiting_shots(
    conn: sa.Connection, sheets: list[str], where: dict[str, tuple[int, int]]
) -> dict[str, tuple[str, ...]]:
    """For each sheet, the shots ("chapter.seq", in book order) whose frames still wait on it."""
    waiting = dependent_shots(conn, sheets, Status.PENDING)
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for sheet, shot in waiting:
        if shot in where:
            found[sheet].append(where[shot])
    return {sheet: tuple(f"{c}.{s}" for c, s in sorted(places)) for sheet, places in found.items()}


def shots_line(shots_: tuple[str, ...]) -> str:
    """'shots 1.2, 1.5 and 3 more wait on it', or '' when none waits."""
    if not shots_:
        return ""
    named = ", ".join(shots_[:SHOTS_NAMED])
    more = f" and {len(shots_) - SHOTS_NAMED} more" if len(shots_) > SHOTS_NAMED else ""
    return f"{plural(len(shots_), 'shot')} wait on it: {named}{more}"


class CastScreen:
    """The bible as a table with the sheets drawn so far, the edit buttons, and the cast review."""

    def __init__(self, model: CastModel, *, page: Page | None = None) -> None:
        """`page`: the page this screen is a section of (02's): every action redraws all of it
        (the storyboard's cards and review counts change when a sheet is approved). Alone, the
        screen is its own page."""
        self.model = model
        self.page = page if page is not None else Page(self)
        self.message = Message()
        self.look = w.Button(description="Look again", icon="refresh")
        self.table, self.sheets = w.HTML(), w.HBox(layout=w.Layout(flex_flow="row wrap"))
        wide = w.Layout(width="600px")
        self.who = w.Dropdown(description="Character", layout=wide)
        self.description = w.Textarea(
            description="Looks",
            placeholder="age, build, face, hair, costume",
            layout=w.Layout(width="600px", height="70px"),
        )
        self.save = w.Button(description="Save the description", icon="save", layout=w.Layout(width="auto"))
        self.new_name = w.Text(description="New name", layout=wide)
        self.rename = w.Button(description="Rename", icon="pencil")
        self.same = w.Dropdown(description="Same as", layout=wide)
        self.merge = w.Button(description="Merge into it", icon="compress", layout=w.Layout(width="auto"))
        self.drop = w.Button(
            description="Not a character", icon="trash", button_style="warning", layout=w.Layout(width="auto")
        )
        self.review_line = w.HTML()
        self.waiting = w.Dropdown(description="Sheet", layout=wide)
        self.waiting_sheet, self.waiting_shots = w.HBox(), w.HTML()
        self.note = w.Text(
            description="Note", placeholder="what to change in this sheet (needed to reject)", layout=wide
        )
        # Named apart from the storyboard's Approve / Reject of frames, on the same page.
        self.approve = w.Button(
            description="Accept the sheet", icon="check", button_style="success", layout=w.Layout(width="auto")
        )
        self.reject = w.Button(
            description="Send the sheet back", icon="times", button_style="danger", layout=w.Layout(width="auto")
        )
        self.approve_all = w.Button(
            description="Accept the whole cast", icon="check-circle", layout=w.Layout(width="auto")
        )
        self._rows: tuple[CastRow, ...] = ()
        self._sheets: dict[tuple[str, str | None, str], w.Widget] = {}  # a caption says the state
        self._wire()
        self.widget = w.VBox(
            [
                w.HTML(STYLE),
                self.look,
                self.message.widget,
                self.table,
                self.sheets,
                heading("Edit the cast"),
                w.HBox([self.who, self.drop]),
                w.HBox([self.description, self.save]),
                w.HBox([self.new_name, self.rename]),
                w.HBox([self.same, self.merge]),
                heading("Approve the cast"),
                self.review_line,
                self.waiting,
                w.HBox([self.waiting_sheet, self.waiting_shots]),
                self.note,
                w.HBox([self.approve, self.reject, self.approve_all]),
            ]
        )
        self.redraw()

    def _wire(self) -> None:
        self.look.on_click(lambda _: self.page.redraw())
        self.who.observe(lambda _: self._load(), names="value")
        self.save.on_click(
            lambda _: self.who.value and self.run(lambda: self.model.describe(self.who.value, self.description.value))
        )
        self.rename.on_click(
            lambda _: self.who.value and self.run(lambda: self.model.rename(self.who.value, self.new_name.value))
        )
        self.merge.on_click(
            lambda _: (
                self.who.value
                and self.same.value
                and self.run(lambda: self.model.merge(self.who.value, self.same.value))
            )
        )
        self.drop.on_click(lambda _: self.who.value and self.run(lambda: self.model.drop(self.who.value)))
        self.waiting.observe(lambda _: self._show_waiting(), names="value")
        self.approve.on_click(lambda _: self.waiting.value and self.run(lambda: self.model.approve(self.waiting.value)))
        self.reject.on_click(lambda _: self.reject_selected())
        self.approve_all.on_click(lambda _: self.run(self.model.approve_all))

    def redraw(self) -> None:
        """Every widget shows what the database holds now (no stale description, name or note)."""
        self._rows = self.model.rows()
        self.table.value = table(
            ["name", "also called", "looks", "appears in shots", "fixed by you", "sheet", "shots waiting on the sheet"],
            [
                (
                    r.name,
                    r.aliases,
                    r.looks,
                    r.appears,
                    "yes" if r.locked else "",
                    r.sheet_state,
                    len(r.waiting_shots) or "",
                )
                for r in self._rows
            ],
            key="cast",
            empty="no characters yet: split the book first",
        )
        self._sheets = reuse(
            self._sheets, [((r.name, r.sheet_path, r.sheet_state), r) for r in self._rows if r.shown], _picture
        )
        self.sheets.children = tuple(self._sheets.values())
        names = [r.name for r in self._rows]
        options(self.who, [(n, n) for n in names])
        options(self.same, [(n, n) for n in names])
        self.new_name.value = ""
        self._load()
        review = to_review(self._rows)
        held = len({s for r in review for s in r.waiting_shots})
        self.review_line.value = (
            f"<p data-pk='cast-review'><b>{plural(len(review), 'character sheet')} wait for your review; "
            f"{plural(held, 'shot')} are drawn once they are approved</b></p>"
            if review
            else "<p data-pk='cast-review'>no character sheet waits for your review</p>"
        )
        options(self.waiting, [(f"{r.name} ({plural(len(r.waiting_shots), 'shot')} wait)", r.name) for r in review])
        self._show_waiting()

    def run(self, action: Callable[[], ActionResult]) -> ActionResult:
        """Do one action, say what it did, and redraw the whole page."""
        return self.page.act(action, self.message)

    def reject_selected(self) -> ActionResult | None:
        """Reject the selected sheet with the note; the note box clears once the note is taken."""
        name = self.waiting.value
        return take_note(self.note, lambda note: self.run(lambda: self.model.reject(name, note))) if name else None

    def _load(self) -> None:
        row = next((r for r in self._rows if r.name == self.who.value), None)
        self.description.value = row.description if row else ""

    def _show_waiting(self) -> None:
        row = next((r for r in self._rows if r.name == self.waiting.value and r.to_review), None)
        self.waiting_sheet.children = (_picture(row, 320),) if row and row.shown else ()
        self.waiting_shots.value = (
            f"<span data-pk='sheet-shots'>{html.escape(shots_line(row.waiting_shots))}</span>" if row else ""
        )


def _picture(row: CastRow, width: int = 160) -> w.Widget:
    """A character sheet's picture with its name and state."""
    path = Path(row.sheet_path or "")
    return w.VBox(
        [
            w.Image(value=path.read_bytes(), format=path.suffix.lstrip(".") or "png", width=width),
            w.HTML(f"<small>{html.escape(row.name)} · {html.escape(row.sheet_state)}</small>"),
        ]
    )


def cast_screen(db: Database, bookcode: str, *, page: Page | None = None) -> CastScreen:
    return CastScreen(CastModel(db, bookcode), page=page)
