"""The storyboard screen's view-model: split a book, page through its shots, edit, re-run, review.

Shots are filtered by chapter, character, location and state in Python over one query's light
columns (a book holds about a thousand shots, and `characters` is a JSON list that the three
databases query differently). Each row carries its tasks' statuses; a shot's media are its tasks'
outputs, fetched through the output store (so from any PC). The grid fetches only what its page
shows: the page's frames as thumbnails (made once per checksum, `thumbnails.py`), a clip when it
is asked for. The frame review is `review.ReviewModel` (`self.review`), sharing this screen's store;
a page, a chapter or every shot the filters show can have its waiting frames approved at once.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from pipeline_kit import kinds, text
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import shots
from pipeline_kit.engine.queries import MADE, shot_states, tasks_by_id
from pipeline_kit.engine.states import Status
from pipeline_kit.store import Store
from pipeline_kit.text.graph import FRAMES, shot_task_ids
from pipeline_kit.ui.actions import ActionResult, attempt
from pipeline_kit.ui.media import MediaItem, media_item
from pipeline_kit.ui.review import WAITING, ReviewModel
from pipeline_kit.ui.session import screen_cache, screen_store
from pipeline_kit.ui.thumbnails import Thumbnails
from pipeline_kit.ui.words import state_in_words
from pipeline_kit.plural import plural

SHOT_KINDS = kinds.names(kinds.Role.FRAME, kinds.Role.CLIP)  # what a card shows of its shot
# A shot's state is that of its most pressing task: the first of these statuses any task has.
PRESSING = (
    Status.FAILED,
    Status.AWAITING_REVIEW,
    Status.PROCESSING,
    Status.BLOCKED,
    Status.PENDING,
    Status.CANCELED,
    Status.COMPLETED,
)
SHOWN = frozenset(MADE)  # statuses whose output is there to show


@dataclass(frozen=True)
class ShotRow:
    shot_id: str
    chapter: int
    seq: int
    location: str | None
    characters: tuple[str, ...]
    prompt: str
    statuses: Mapping[str, Status]  # task kind (first_frame, last_frame, video, voice) -> status
    states: Mapping[str, str]  # task kind -> its state in words ("waiting for your review")
    text: str = ""  # the shot's source text

    @property
    def state(self) -> str:
        """The shot's state in words, from its most pressing task ("failed" without the why)."""
        for status in PRESSING:
            kind = next((k for k in SHOT_KINDS if self.statuses.get(k) == status), None)
            if kind is not None:
                return "failed" if status is Status.FAILED else self.states[kind]
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
    status: Status
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
class Waiting:
    """The frames waiting for review that the grid's batch buttons approve, as the grid read them."""

    page: tuple[str, ...] = ()  # on the page shown
    shown: tuple[str, ...] = ()  # on every page of the shots the filters choose
    chapters: Mapping[int, tuple[str, ...]] = field(default_factory=dict)  # per chapter, whatever the filters


@dataclass(frozen=True)
class Grid:
    """What the storyboard grid shows: the filters' choices, one page, that page's tiles, and the
    frames its batch buttons would approve."""

    filters: Filters
    page: ShotPage
    tiles: Mapping[str, Mapping[str, Tile]]  # shot_id -> kind -> tile
    waiting: Waiting = Waiting()


class StoryboardModel:
    """One book's storyboard: its shots, their tasks and the review gate."""

    def __init__(self, db: Database, bookcode: str, *, cache: Path | None = None) -> None:
        """`cache`: this PC's folder for fetched outputs and thumbnails (default `screen_cache()`)."""
        self.db, self.bookcode, self.cache = db, bookcode, cache or screen_cache()
        self.thumbnails = Thumbnails(self.cache / "thumbnails")
        self._store: Store | None = None
        self.review = ReviewModel(db, bookcode, lambda: self.store)

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
                return f"nothing to split: {plural(r.chapters_already_split, 'chapter')} already split"
            return (
                f"split {plural(r.chapters_split, 'chapter')}: {r.shots_created} shots, {r.tasks_created} tasks "
                f"({r.chapters_already_split} already split)"
            )

        return attempt(lambda: text.split_book(self.db, self.bookcode, progress=False), said)

    def filters(self) -> Filters:
        return _filters(self._shots())

    def page(
        self,
        page: int = 1,
        size: int = 20,
        *,
        chapter: int | None = None,
        character: str | None = None,
        location: str | None = None,
        state: str | None = None,
    ) -> ShotPage:
        """One page of the shots that match every filter given (None or "" means any)."""
        return _page(self._shots(), page, size, chapter=chapter, character=character, location=location, state=state)

    def grid(
        self,
        page: int = 1,
        size: int = 20,
        *,
        chapter: int | None = None,
        character: str | None = None,
        location: str | None = None,
        state: str | None = None,
        draw: bool = True,
    ) -> Grid:
        """The filters' choices, one page with its tiles and the frames waiting that the batch
        buttons approve, from one read of the book's shots; thumbnails are made (`draw`, else only
        found) for that page's frames only."""
        rows = self._shots()
        shown = _page(rows, page, size, chapter=chapter, character=character, location=location, state=state)
        every = _page(rows, 1, len(rows) or 1, chapter=chapter, character=character, location=location, state=state)
        by_chapter: dict[int, list[str]] = defaultdict(list)
        for row in rows:
            by_chapter[row.chapter] += waiting_frames((row,))
        waiting = Waiting(
            waiting_frames(shown.rows),
            waiting_frames(every.rows),
            {c: tuple(ids) for c, ids in by_chapter.items() if ids},
        )
        return Grid(_filters(rows), shown, self.tiles(shown.rows, draw=draw), waiting)

    def tiles(self, rows: tuple[ShotRow, ...], *, draw: bool = True) -> dict[str, dict[str, Tile]]:
        """The tiles of these shots: one query for their tasks, thumbnails of their drawn frames
        (those this PC lacks are made when `draw`, else left for `draw_thumbnail`)."""
        ids = {shot_task_ids(r.shot_id)[k]: r.shot_id for r in rows for k in SHOT_KINDS}
        if not ids:
            return {}
        with self.db.reading() as conn:
            found = tasks_by_id(conn, ids)
        store = self.store if any(r.output_path for r in found) else None
        tiles: dict[str, dict[str, Tile]] = defaultdict(dict)
        for r in found:
            thumb = None
            if store is not None and r.kind in FRAMES and r.status in SHOWN:
                thumb = self.thumbnails.of(store, r.output_path, r.result) if draw else self.thumbnails.cached(r.result)
            tiles[ids[r.task_id]][r.kind] = Tile(
                r.task_id,
                r.kind,
                r.status,
                state_in_words(r.status, r.kind, waiting=bool(r.deps_remaining), error=r.last_error),
                thumb,
                bool(r.output_path) and r.status in SHOWN,
                r.output_path,
                r.result,
            )
        return dict(tiles)

    def draw_thumbnail(self, tile: Tile) -> Path | None:
        """Make (or find) a tile's thumbnail, its frame fetched through the store."""
        return self.thumbnails.of(self.store, tile.output_path, tile.result)

    def clip(self, task_id: str) -> MediaItem | None:
        """One output fetched through the store (a clip, when the person asks to play it)."""
        with self.db.reading() as conn:
            found = tasks_by_id(conn, [task_id])
        return media_item(self.store, found[0]) if found else None

    def shot(self, shot_id: str) -> text.Shot:
        return text.show_shot(self.db, shot_id)

    def edit(
        self,
        shot_id: str,
        *,
        prompt: str | None = None,
        characters: str | list[str] | None = None,
        location: str | None = None,
    ) -> ActionResult:
        """Change what was given (characters as a list or comma-separated); the shot's tasks re-run."""
        names = characters.split(",") if isinstance(characters, str) else characters
        made = self._made(shot_id)
        return attempt(
            lambda: text.edit_shot(self.db, shot_id, prompt=prompt, characters=names, location=location),
            lambda _: (
                f"shot {shot_id} saved; "
                + (
                    "its frames and clip will be made again from it"
                    if made
                    else "its frames and clip will be made from it"
                )
            ),
        )

    def rerun(self, shot_id: str) -> ActionResult:
        """Send the shot's tasks (and what depends on them) back to pending, unchanged."""
        made = self._made(shot_id)
        return attempt(
            lambda: text.rerun_shot(self.db, shot_id),
            lambda _: (
                f"shot {shot_id}: "
                + (
                    "its frames and clip will be made again"
                    if made
                    else "nothing was made yet; its frames and clip wait for a worker"
                )
            ),
        )

    def media(self, shot_id: str) -> tuple[MediaItem, ...]:
        """The shot's frames and clip, in order, with whether each file is there to show."""
        ids = shot_task_ids(shot_id)
        with self.db.reading() as conn:
            found = {r.task_id: r for r in tasks_by_id(conn, ids.values())}
        store = self.store
        return tuple(media_item(store, found[ids[kind]]) for kind in SHOT_KINDS if ids[kind] in found)

    def _made(self, shot_id: str) -> bool:
        """Whether any of the shot's tasks got past waiting (so a reset makes things again)."""
        with self.db.reading() as conn:
            return any(r.status is not Status.PENDING for r in tasks_by_id(conn, shot_task_ids(shot_id).values()))

    def _shots(self) -> list[ShotRow]:
        with self.db.reading() as conn:
            statuses: dict[str, dict[str, Status]] = defaultdict(dict)
            states: dict[str, dict[str, str]] = defaultdict(dict)
            for r in shot_states(conn, self.bookcode):
                statuses[r.shot_id][r.kind] = r.status
                states[r.shot_id][r.kind] = state_in_words(
                    r.status, r.kind, waiting=bool(r.deps_remaining), error=r.last_error
                )
            return [
                ShotRow(
                    r.shot_id,
                    r.chapter,
                    r.seq,
                    r.location,
                    tuple(r.characters or ()),
                    r.prompt or "",
                    statuses.get(r.shot_id, {}),
                    states.get(r.shot_id, {}),
                    r.text or "",
                )
                for r in conn.execute(
                    sa.select(
                        shots.c.shot_id,
                        shots.c.chapter,
                        shots.c.seq,
                        shots.c.location,
                        shots.c.characters,
                        shots.c.prompt,
                        shots.c.text,
                    )
                    .where(shots.c.bookcode == self.bookcode)
                    .order_by(shots.c.chapter, shots.c.seq)
                )
            ]


def _filters(rows: list[ShotRow]) -> Filters:
    """The values each filter can take among these shots."""
    return Filters(
        chapters=tuple(sorted({r.chapter for r in rows})),
        characters=tuple(sorted({c for r in rows for c in r.characters})),
        locations=tuple(sorted({r.location for r in rows if r.location})),
        states=tuple(sorted({r.state for r in rows})),
    )


def _page(
    rows: list[ShotRow],
    page: int,
    size: int,
    *,
    chapter: int | None,
    character: str | None,
    location: str | None,
    state: str | None,
) -> ShotPage:
    size = max(1, size)
    matching = [
        r
        for r in rows
        if (chapter is None or r.chapter == chapter)
        and (not character or character in r.characters)
        and (not location or r.location == location)
        and (not state or r.state == state)
    ]
    pages = max(1, math.ceil(len(matching) / size))
    page = min(max(1, page), pages)
    return ShotPage(tuple(matching[(page - 1) * size : page * size]), len(matching), page, pages)


def waiting_frames(rows: tuple[ShotRow, ...]) -> tuple[str, ...]:
    """The frame tasks of these shots that waited for review when they were read, in book order."""
    return tuple(shot_task_ids(r.shot_id)[k] for r in rows for k in FRAMES if r.statuses.get(k) == WAITING)
