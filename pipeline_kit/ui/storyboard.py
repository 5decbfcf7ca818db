"""The storyboard screen's view-model: split a book, page through its shots, edit, re-run, review.

Shots are filtered by chapter, character, location and state in Python over one query's light
columns (a book holds about a thousand shots, and `characters` is a JSON list that the three
databases query differently). Each row carries its tasks' statuses; a shot's media are its tasks'
outputs, fetched through the output store (so from any PC). The grid fetches only what its page
shows: the page's frames as thumbnails (made once per checksum, `thumbnails.py`), a clip when it
is asked for. The review gate is the engine's (`set_review`, `approve`, `reject`); the frame
review here shows frames only, character sheets have their own step.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from pipeline_kit import engine, text
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, shots, task_deps, tasks
from pipeline_kit.errors import GenerationError, StoreUnavailable
from pipeline_kit.store import Store
from pipeline_kit.text.graph import FRAMES, shot_task_ids
from pipeline_kit.ui.actions import ActionResult, attempt
from pipeline_kit.ui.session import screen_cache, screen_store
from pipeline_kit.ui.thumbnails import Thumbnails
from pipeline_kit.ui.words import frames, state_in_words

KIND_WORDS = {"first_frame": "first frame", "last_frame": "last frame", "video": "clip"}
SHOT_KINDS = (*FRAMES, "video")
# A shot's state is that of its most pressing task: the first of these statuses any task has.
PRESSING = ("failed", "awaiting_review", "processing", "blocked", "pending", "canceled", "completed")
SHOWN = frozenset({"completed", "awaiting_review"})  # statuses whose output is there to show
MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
        ".mp4": "video/mp4", ".webm": "video/webm", ".json": "application/json"}


@dataclass(frozen=True)
class ShotRow:
    shot_id: str
    chapter: int
    seq: int
    location: str | None
    characters: tuple[str, ...]
    prompt: str
    statuses: Mapping[str, str]  # task kind (first_frame, last_frame, video) -> status
    states: Mapping[str, str]  # task kind -> its state in words ("waiting for your review")
    text: str = ""  # the shot's source text

    @property
    def state(self) -> str:
        """The shot's state in words, from its most pressing task ("failed" without the why)."""
        for status in PRESSING:
            kind = next((k for k in SHOT_KINDS if self.statuses.get(k) == status), None)
            if kind is not None:
                return "failed" if status == "failed" else self.states[kind]
        return "no tasks"


@dataclass(frozen=True)
class ShotPage:
    rows: tuple[ShotRow, ...]
    total: int  # shots matching the filters
    page: int  # 1-based, clamped to the pages there are
    pages: int


@dataclass(frozen=True)
class Filters:
    """The values a filter can take in this book."""

    chapters: tuple[int, ...]
    characters: tuple[str, ...]
    locations: tuple[str, ...]
    states: tuple[str, ...] = ()


@dataclass(frozen=True)
class Tile:
    """One of a shot's tasks as the grid shows it: its state, the frame's thumbnail when drawn,
    whether there is a clip to play (fetched only when asked)."""

    task_id: str
    kind: str
    status: str
    state: str  # in words
    thumbnail: Path | None = None
    has_output: bool = False
    output_path: str | None = None  # where the output is recorded, and its checksums:
    result: Mapping[str, Any] | None = None  # what `draw_thumbnail` fetches it by

    @property
    def to_draw(self) -> bool:
        """A drawn frame whose thumbnail this PC has not made yet."""
        return self.kind in FRAMES and self.has_output and self.thumbnail is None


@dataclass(frozen=True)
class Grid:
    """What the storyboard grid shows: the filters' choices, one page, and that page's tiles."""

    filters: Filters
    page: ShotPage
    tiles: Mapping[str, Mapping[str, Tile]]  # shot_id -> kind -> tile


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
class MediaItem:
    task_id: str
    kind: str
    status: str
    path: str | None
    mime: str | None
    ready: bool  # the file exists and can be shown


@dataclass(frozen=True)
class ReviewRow:
    task_id: str
    shot_id: str | None
    kind: str
    path: str | None


@dataclass(frozen=True)
class ReviewCounts:
    """What waits for the creator: frames and character sheets, and the last decisions."""

    frames: int
    sheets: int
    decisions: tuple[engine.ReviewDecision, ...]
    shots_on_sheets: int = 0  # shots whose frames wait until those character sheets are approved

    @property
    def total(self) -> int:
        return self.frames + self.sheets

    def line(self) -> str:
        if not self.total:
            return "nothing waits for your review"
        parts = [frames(self.frames)] if self.frames else []
        if self.sheets:
            parts.append(f"{self.sheets} character sheet(s) (approve the cast first: "
                         f"{self.shots_on_sheets} shot(s) wait on them)")
        return f"waiting for your review: {' and '.join(parts)}"


class StoryboardModel:
    """One book's storyboard: its shots, their tasks and the review gate."""

    def __init__(self, db: Database, bookcode: str, *, cache: Path | None = None) -> None:
        """`cache`: this PC's folder for fetched outputs and thumbnails (default `screen_cache()`)."""
        self.db, self.bookcode, self.cache = db, bookcode, cache or screen_cache()
        self.thumbnails = Thumbnails(self.cache / "thumbnails")
        self._store: Store | None = None

    @property
    def store(self) -> Store:
        """The output store in effect, opened once (not once per thumbnail: opening reads the setting)."""
        if self._store is None:
            self._store = screen_store(self.db, self.cache)
        return self._store

    def split(self) -> ActionResult:
        """Split the chapters not yet split into shots and tasks (a second run creates nothing)."""
        def said(r: text.SplitReport) -> str:
            if not r.chapters_split:
                return f"nothing to split: {r.chapters_already_split} chapter(s) already split"
            return (f"split {r.chapters_split} chapter(s): {r.shots_created} shots, {r.tasks_created} tasks "
                    f"({r.chapters_already_split} already split)")
        return attempt(lambda: text.split_book(self.db, self.bookcode, progress=False), said)

    def filters(self) -> Filters:
        return _filters(self._shots())

    def page(self, page: int = 1, size: int = 20, *, chapter: int | None = None, character: str | None = None,
             location: str | None = None, state: str | None = None) -> ShotPage:
        """One page of the shots that match every filter given (None or "" means any)."""
        return _page(self._shots(), page, size, chapter=chapter, character=character, location=location,
                     state=state)

    def grid(self, page: int = 1, size: int = 20, *, chapter: int | None = None, character: str | None = None,
             location: str | None = None, state: str | None = None, draw: bool = True) -> Grid:
        """The filters' choices and one page with its tiles, from one read of the book's shots;
        thumbnails are made (`draw`, else only found) for that page's frames only."""
        rows = self._shots()
        shown = _page(rows, page, size, chapter=chapter, character=character, location=location, state=state)
        return Grid(_filters(rows), shown, self.tiles(shown.rows, draw=draw))

    def tiles(self, rows: tuple[ShotRow, ...], *, draw: bool = True) -> dict[str, dict[str, Tile]]:
        """The tiles of these shots: one query for their tasks, thumbnails of their drawn frames
        (those this PC lacks are made when `draw`, else left for `draw_thumbnail`)."""
        ids = {shot_task_ids(r.shot_id)[k]: r.shot_id for r in rows for k in SHOT_KINDS}
        if not ids:
            return {}
        with self._read() as conn:
            found = conn.execute(
                sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.status, tasks.c.output_path, tasks.c.result,
                          tasks.c.deps_remaining, tasks.c.last_error)
                .where(tasks.c.task_id.in_(list(ids)))).all()
        store = self.store if any(r.output_path for r in found) else None
        tiles: dict[str, dict[str, Tile]] = defaultdict(dict)
        for r in found:
            thumb = None
            if store is not None and r.kind in FRAMES and r.status in SHOWN:
                thumb = (self.thumbnails.of(store, r.output_path, r.result) if draw
                         else self.thumbnails.cached(r.result))
            tiles[ids[r.task_id]][r.kind] = Tile(
                r.task_id, r.kind, r.status,
                state_in_words(r.status, r.kind, waiting=bool(r.deps_remaining), error=r.last_error),
                thumb, bool(r.output_path) and r.status in SHOWN, r.output_path, r.result)
        return dict(tiles)

    def draw_thumbnail(self, tile: Tile) -> Path | None:
        """Make (or find) a tile's thumbnail, its frame fetched through the store."""
        return self.thumbnails.of(self.store, tile.output_path, tile.result)

    def clip(self, task_id: str) -> MediaItem | None:
        """One output fetched through the store (a clip, when the person asks to play it)."""
        with self._read() as conn:
            row = conn.execute(sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.status, tasks.c.output_path,
                                         tasks.c.result).where(tasks.c.task_id == task_id)).first()
        return None if row is None else _item(self.store, row)

    def shot(self, shot_id: str) -> text.Shot:
        return text.show_shot(self.db, shot_id)

    def edit(self, shot_id: str, *, prompt: str | None = None, characters: str | list[str] | None = None,
             location: str | None = None) -> ActionResult:
        """Change what was given (characters as a list or comma-separated); the shot's tasks re-run."""
        names = characters.split(",") if isinstance(characters, str) else characters
        made = self._made(shot_id)
        return attempt(lambda: text.edit_shot(self.db, shot_id, prompt=prompt, characters=names, location=location),
                       lambda _: f"shot {shot_id} saved; " + (
                           "its frames and clip will be made again from it" if made
                           else "its frames and clip will be made from it"))

    def rerun(self, shot_id: str) -> ActionResult:
        """Send the shot's tasks (and what depends on them) back to pending, unchanged."""
        made = self._made(shot_id)
        return attempt(lambda: text.rerun_shot(self.db, shot_id),
                       lambda _: f"shot {shot_id}: " + (
                           "its frames and clip will be made again" if made
                           else "nothing was made yet; its frames and clip wait for a worker"))

    def media(self, shot_id: str) -> tuple[MediaItem, ...]:
        """The shot's frames and clip, in order, with whether each file is there to show."""
        ids = shot_task_ids(shot_id)
        with self._read() as conn:
            found = {r.task_id: r for r in conn.execute(
                sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.status, tasks.c.output_path, tasks.c.result)
                .where(tasks.c.task_id.in_(list(ids.values()))))}
        store = self.store
        return tuple(_item(store, found[ids[kind]]) for kind in SHOT_KINDS if ids[kind] in found)

    def review_on(self) -> bool:
        with self._read() as conn:
            return bool(conn.execute(sa.select(books.c.review).where(books.c.bookcode == self.bookcode)).scalar())

    def set_review(self, on: bool) -> ActionResult:
        return attempt(lambda: engine.set_review(self.db, self.bookcode, on),
                       lambda _: ("review on: new frames wait for approval before their clip is made" if on
                                  else "review off: new frames go straight on"))

    def awaiting(self, kinds: tuple[str, ...] | None = None) -> tuple[ReviewRow, ...]:
        """What waits for review, oldest first (only `kinds` when given)."""
        return tuple(ReviewRow(i.task_id, i.shot_id, i.kind, i.output_path)
                     for i in engine.awaiting_review(self.db, self.bookcode, kinds=kinds))

    def review_frame(self, task_id: str) -> ReviewFrame | None:
        """A frame waiting for review, fetched through the store, with its shot's text and the
        prompt it was drawn from; None once it no longer waits."""
        with self._read() as conn:
            row = conn.execute(
                sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.status, tasks.c.output_path, tasks.c.result,
                          tasks.c.params, tasks.c.shot_id, shots.c.chapter, shots.c.seq, shots.c.text,
                          shots.c.prompt)
                .select_from(tasks.outerjoin(shots, shots.c.shot_id == tasks.c.shot_id))
                .where(tasks.c.task_id == task_id, tasks.c.status == "awaiting_review")).first()
        if row is None:
            return None
        prompt = str((row.params or {}).get("prompt") or row.prompt or "")
        where = f"chapter {row.chapter}, shot {row.seq}" if row.chapter is not None else ""
        return ReviewFrame(row.task_id, row.kind, row.shot_id, where, row.text or "", prompt,
                           _item(self.store, row))

    def review_counts(self) -> ReviewCounts:
        """How many frames and character sheets wait for the creator, and the last decisions."""
        waiting = self.awaiting()
        sheets = [r.task_id for r in waiting if r.kind == "character_sheet"]
        held = 0
        if sheets:
            with self._read() as conn:
                held = int(conn.execute(
                    sa.select(sa.func.count(sa.distinct(tasks.c.shot_id)))
                    .select_from(task_deps.join(tasks, tasks.c.task_id == task_deps.c.task_id))
                    .where(task_deps.c.depends_on.in_(sheets))).scalar() or 0)
        return ReviewCounts(len(waiting) - len(sheets), len(sheets),
                            tuple(engine.last_decisions(self.db, self.bookcode)), held)

    def approve(self, task_id: str, *, by: str = "reviewer") -> ActionResult:
        return attempt(lambda: engine.approve(self.db, task_id, by=by),
                       lambda _: f"{describe_task(task_id)} approved")

    def reject(self, task_id: str, note: str, *, by: str = "reviewer") -> ActionResult:
        return attempt(lambda: engine.reject(self.db, task_id, note, by=by),
                       lambda _: f"{describe_task(task_id)} sent back: it will be redrawn with "
                                 "your note and a new seed")

    def _made(self, shot_id: str) -> bool:
        """Whether any of the shot's tasks got past waiting (so a reset makes things again)."""
        with self._read() as conn:
            return bool(conn.execute(
                sa.select(sa.func.count()).select_from(tasks)
                .where(tasks.c.task_id.in_(list(shot_task_ids(shot_id).values())),
                       tasks.c.status != "pending")).scalar())

    def _shots(self) -> list[ShotRow]:
        with self._read() as conn:
            statuses: dict[str, dict[str, str]] = defaultdict(dict)
            states: dict[str, dict[str, str]] = defaultdict(dict)
            for r in conn.execute(sa.select(tasks.c.shot_id, tasks.c.kind, tasks.c.status,
                                            tasks.c.deps_remaining, tasks.c.last_error)
                                  .where(tasks.c.bookcode == self.bookcode, tasks.c.shot_id.is_not(None))):
                statuses[r.shot_id][r.kind] = r.status
                states[r.shot_id][r.kind] = state_in_words(
                    r.status, r.kind, waiting=bool(r.deps_remaining), error=r.last_error)
            return [ShotRow(r.shot_id, r.chapter, r.seq, r.location, tuple(r.characters or ()), r.prompt or "",
                            statuses.get(r.shot_id, {}), states.get(r.shot_id, {}), r.text or "")
                    for r in conn.execute(
                        sa.select(shots.c.shot_id, shots.c.chapter, shots.c.seq, shots.c.location,
                                  shots.c.characters, shots.c.prompt, shots.c.text)
                        .where(shots.c.bookcode == self.bookcode).order_by(shots.c.chapter, shots.c.seq))]

    def _read(self) -> sa.Connection:
        return self.db.engine.connect().execution_options(sqlite_begin="DEFERRED")



def _filters(rows: list[ShotRow]) -> Filters:
    """The values each filter can take among these shots."""
    return Filters(
        chapters=tuple(sorted({r.chapter for r in rows})),
        characters=tuple(sorted({c for r in rows for c in r.characters})),
        locations=tuple(sorted({r.location for r in rows if r.location})),
        states=tuple(sorted({r.state for r in rows})),
    )


def _page(rows: list[ShotRow], page: int, size: int, *, chapter: int | None, character: str | None,
          location: str | None, state: str | None) -> ShotPage:
    size = max(1, size)
    matching = [r for r in rows
                if (chapter is None or r.chapter == chapter)
                and (not character or character in r.characters)
                and (not location or r.location == location)
                and (not state or r.state == state)]
    pages = max(1, math.ceil(len(matching) / size))
    page = min(max(1, page), pages)
    return ShotPage(tuple(matching[(page - 1) * size : page * size]), len(matching), page, pages)


def _item(store: Store, row: Any) -> MediaItem:
    """A task's output as a MediaItem, fetched through the store."""
    path = _local(store, row.output_path, row.result)
    return MediaItem(row.task_id, row.kind, row.status, path,
                     MIME.get(Path(path).suffix.lower()) if path else None, bool(path) and Path(path).is_file())


def _local(store: Store, output_path: str | None, result: Any) -> str | None:
    """Where an output can be shown from: fetched through the store (cached on this PC), else the
    recorded path as it is."""
    if not output_path:
        return None
    try:
        return str(store.fetch(output_path, dict(result or {})))
    except (GenerationError, StoreUnavailable):
        return output_path


def describe_task(task_id: str) -> str:
    """A task id as a creator reads it: 'the first frame of shot X', 'the character sheet (Y)'."""
    head, _, last = task_id.rpartition("/")
    if head.endswith("/char"):
        return f"the character sheet ({last})"
    return f"the {KIND_WORDS[last]} of shot {head}" if last in KIND_WORDS else task_id
