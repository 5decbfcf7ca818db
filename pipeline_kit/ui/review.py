"""The frame review of the storyboard (02): what waits, in the book's order and named as the cards
name shots; the frame under review with what it is judged against; and the decisions.

Decisions go through the engine's review gate: one frame (`approve`, `reject`), or a page, a
chapter or everything the filters show at once (`approve_many`: one call, one transaction). The
list is sorted here, in Python, so the three databases agree on where character sheets (no
shot) go; the frame review shows frames only, character sheets have their own step (the cast).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit import engine, kinds
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, shots
from pipeline_kit.engine.queries import held_shots, tasks_by_id
from pipeline_kit.engine.planned import task_params
from pipeline_kit.engine.states import Status
from pipeline_kit.store import Store
from pipeline_kit.ui.actions import ActionResult, attempt
from pipeline_kit.ui.media import MediaItem, media_item
from pipeline_kit.ui.words import cut, describe_task, frames, kind_words, place
from pipeline_kit.plural import plural

WAITING = Status.AWAITING_REVIEW
SHEETS = kinds.names(kinds.Role.SHEET)  # what a shot's frames are drawn after: a character's, a place's
KIND_ORDER = {kind: i for i, kind in enumerate(kinds.names(kinds.Role.SHEET, kinds.Role.FRAME))}
LABEL_TEXT = 60  # characters of a shot's text in the review list


@dataclass(frozen=True)
class ReviewRow:
    """An output waiting for review, with the shot it belongs to (None for a character or place sheet)."""

    task_id: str
    shot_id: str | None
    kind: str
    path: str | None
    chapter: int | None = None
    seq: int | None = None
    text: str = ""  # the shot's source text

    @property
    def label(self) -> str:
        """The review list's name for it: the shot as its card names it, which frame, the start
        of its text ('2.14 · first frame · Mara climbs…'); a sheet by its character or place."""
        if self.chapter is None or self.seq is None:
            return describe_task(self.task_id)
        text = cut(" ".join(self.text.split()), LABEL_TEXT)
        return f"{place(self.chapter, self.seq)} · {kind_words(self.kind)} · {text}"

    @property
    def book_order(self) -> tuple[int, int, int, int, str]:
        """Character and place sheets first (the frames wait on them), then shots as the book tells them,
        a shot's first frame before its last."""
        in_shot = self.chapter is not None
        return (
            int(in_shot),
            self.chapter or 0,
            self.seq or 0,
            KIND_ORDER.get(self.kind, len(KIND_ORDER)),
            self.task_id,
        )


@dataclass(frozen=True)
class ReviewFrame:
    """A frame waiting for review, with what the reviewer judges it against."""

    task_id: str
    kind: str
    shot_id: str | None
    where: str  # "chapter 2, shot 14"
    text: str  # the shot's source text
    prompt: str  # what the frame was drawn from (earlier notes included)
    media: MediaItem


@dataclass(frozen=True)
class ReviewCounts:
    """What waits for the creator: frames and sheets (characters and places), and the last decisions."""

    frames: int
    sheets: int  # character sheets
    decisions: tuple[engine.ReviewDecision, ...]
    shots_on_sheets: int = 0  # shots whose frames wait until those sheets are approved
    places: int = 0  # place sheets

    @property
    def total(self) -> int:
        return self.frames + self.sheets + self.places

    def line(self) -> str:
        if not self.total:
            return "nothing waits for your review"
        parts = [frames(self.frames)] if self.frames else []
        held = [plural(n, what) for n, what in ((self.sheets, "character sheet"), (self.places, "place sheet")) if n]
        if held:
            parts.append(
                f"{' and '.join(held)} (approve the cast first: {plural(self.shots_on_sheets, 'shot')} wait on them)"
            )
        return f"waiting for your review: {' and '.join(parts)}"


class ReviewModel:
    """One book's review gate as the storyboard uses it."""

    def __init__(self, db: Database, bookcode: str, store: Callable[[], Store]) -> None:
        """`store`: the screen's output store, opened when first needed (shared with its grid)."""
        self.db, self.bookcode, self.store = db, bookcode, store

    def review_on(self) -> bool:
        with self.db.reading() as conn:
            return bool(conn.execute(sa.select(books.c.review).where(books.c.bookcode == self.bookcode)).scalar())

    def set_review(self, on: bool) -> ActionResult:
        return attempt(
            lambda: engine.set_review(self.db, self.bookcode, on),
            lambda _: (
                "review on: new frames wait for approval before their clip is made"
                if on
                else "review off: new frames go straight on"
            ),
        )

    def awaiting(self, kinds: Iterable[str] | None = None) -> tuple[ReviewRow, ...]:
        """What waits for review (only `kinds` when given), in the book's order."""
        waiting = engine.awaiting_review(self.db, self.bookcode, kinds=kinds)
        where = {}
        if any(r.shot_id for r in waiting):  # the book's shots read at once: cheaper than hundreds of keys
            with self.db.reading() as conn:
                where = _shots(conn, shots.c.bookcode == self.bookcode)
        rows = []
        for r in waiting:
            shot = where.get(r.shot_id or "")
            rows.append(
                ReviewRow(
                    r.task_id,
                    r.shot_id,
                    r.kind,
                    r.output_path,
                    shot.chapter if shot else None,
                    shot.seq if shot else None,
                    (shot.text or "") if shot else "",
                )
            )
        return tuple(sorted(rows, key=lambda r: r.book_order))

    def frame(self, task_id: str) -> ReviewFrame | None:
        """A frame waiting for review, fetched through the store, with its shot's text and the
        prompt it was drawn from; None once it no longer waits."""
        with self.db.reading() as conn:
            row = next((r for r in tasks_by_id(conn, [task_id]) if r.status is WAITING), None)
            if row is None:
                return None
            params = task_params(conn, [task_id]).get(task_id, {})
            shot = _shots(conn, shots.c.shot_id == row.shot_id, shots.c.prompt).get(row.shot_id or "")
        prompt = str(params.get("prompt") or (shot.prompt if shot else None) or "")
        where = f"chapter {shot.chapter}, shot {shot.seq}" if shot is not None and shot.chapter is not None else ""
        text = (shot.text or "") if shot else ""
        return ReviewFrame(row.task_id, row.kind, row.shot_id, where, text, prompt, media_item(self.store(), row))

    def counts(self) -> ReviewCounts:
        """How many frames and sheets wait for the creator, and the last decisions."""
        waiting = self.awaiting()
        sheets = [r.task_id for r in waiting if r.kind in SHEETS]
        held = 0
        if sheets:
            with self.db.reading() as conn:
                held = held_shots(conn, sheets)
        places = sum(r.kind == "location_sheet" for r in waiting)
        return ReviewCounts(
            len(waiting) - len(sheets),
            len(sheets) - places,
            tuple(engine.last_decisions(self.db, self.bookcode)),
            held,
            places,
        )

    def approve(self, task_id: str, *, by: str = "reviewer") -> ActionResult:
        return attempt(lambda: engine.approve(self.db, task_id, by=by), lambda _: f"{describe_task(task_id)} approved")

    def approve_many(self, task_ids: Iterable[str], what: str, *, by: str = "reviewer") -> ActionResult:
        """Approve the frames of `what` ('this page', 'chapter 2') that still wait, in one call to
        the review gate; says how many were approved."""
        ids = list(task_ids)
        if not ids:
            return ActionResult(True, f"no frame of {what} waits for your review")

        def said(approved: list[str]) -> str:
            if not approved:
                return f"no frame of {what} waits for your review any more"
            return f"{frames(len(approved))} of {what} approved: their clips can be made"

        return attempt(lambda: engine.approve_many(self.db, ids, by=by), said)

    def reject(self, task_id: str, note: str, *, by: str = "reviewer") -> ActionResult:
        return attempt(
            lambda: engine.reject(self.db, task_id, note, by=by),
            lambda _: f"{describe_task(task_id)} sent back: it will be redrawn with your note and a new seed",
        )


def _shots(conn: sa.Connection, which: sa.ColumnElement[bool], *more: sa.Column[Any]) -> dict[str, sa.Row[Any]]:
    """shot id -> its chapter, seq and text (and `more` columns), for the shots `which` picks."""
    query = sa.select(shots.c.shot_id, shots.c.chapter, shots.c.seq, shots.c.text, *more).where(which)
    return {r.shot_id: r for r in conn.execute(query)}
