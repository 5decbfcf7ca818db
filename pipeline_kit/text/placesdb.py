"""The place bible in the database, and a person's edits to it (`pipeline-kit places`).

`save_places` replaces a book's rows (split builds the places afresh; locked and dropped ones
come back as they were). The edits lock what they touch and re-queue only what changes: the
place's location sheet and the frames (with their videos) of the shots set there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, places, shots
from pipeline_kit.engine.planned import set_params
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.operator import cancel_tasks
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.text.cast import Bible
from pipeline_kit.text.graph import place_task_id, sheet_spec
from pipeline_kit.text.places import Place
from pipeline_kit.text.prompts import STYLE, Templates, place_prompt
from pipeline_kit.text.entries import entry_row, other_names, valid_name
from pipeline_kit.text.records import Book, Shot, get_book
from pipeline_kit.text.splitter import reprompt
from pipeline_kit.text.store import reset_shot_tasks, update_task_params

MAX_NAME = 200
MAX_DESCRIPTION = 2000


@dataclass(frozen=True)
class PlaceEntry:
    """A stored place and the shots set there."""

    place: Place
    first_shot: str | None
    last_shot: str | None
    shots: int


@dataclass(frozen=True)
class PlaceReport:
    """What an edit did: the place as it now is (None once dropped), the tasks re-queued."""

    place: Place | None
    reset: tuple[str, ...]


def load_places(conn: sa.Connection, bookcode: str) -> list[Place]:
    """The book's stored places, most mentioned first."""
    rows = conn.execute(
        sa.select(places).where(places.c.bookcode == bookcode).order_by(places.c.mentions.desc(), places.c.name)
    ).mappings()
    return [
        Place(
            r["name"],
            tuple(r["aliases"] or ()),
            r["description"] or "",
            r["mentions"],
            bool(r["locked"]),
            bool(r["dropped"]),
        )
        for r in rows
    ]


def save_places(conn: sa.Connection, bookcode: str, found: tuple[Place, ...]) -> None:
    """Replace the book's places with `found` (the caller holds the book's row lock, see castdb)."""
    conn.execute(sa.delete(places).where(places.c.bookcode == bookcode))
    if found:
        conn.execute(sa.insert(places), [entry_row(bookcode, p) for p in found])


def list_places(db: Database, bookcode: str) -> list[PlaceEntry]:
    """The book's places with their first and last shot and how many shots are set there."""
    with db.reading() as conn:
        get_book(conn, bookcode)
        where: dict[str, list[str]] = {}
        for shot_id, location in conn.execute(
            sa.select(shots.c.shot_id, shots.c.location)
            .where(shots.c.bookcode == bookcode, shots.c.location.is_not(None))
            .order_by(shots.c.chapter, shots.c.seq)
        ):
            where.setdefault(location, []).append(shot_id)
        found = load_places(conn, bookcode)
    return [
        PlaceEntry(p, (where.get(p.name) or [None])[0], (where.get(p.name) or [None])[-1], len(where.get(p.name, [])))
        for p in found
    ]


def rename(db: Database, bookcode: str, old: str, new: str, templates: Templates | None = None) -> PlaceReport:
    """The place goes by `new` (`old` stays an alias); its shots and sheet follow."""
    new = valid_name(new, MAX_NAME, "place")
    with db.engine.begin() as conn:
        book, found = get_book(conn, bookcode), _find(conn, bookcode, old)
        if new == found.name:
            raise BadInput(f"{found.name!r} already goes by that name")
        if _lookup(conn, bookcode, new) is not None:
            raise BadInput(f"{new!r} is already a place: use `places {bookcode} merge`")
        renamed = dataclasses.replace(found, name=new, aliases=other_names(new, found.names), locked=True)
        _replace(conn, bookcode, found.name, renamed)
        return PlaceReport(renamed, _move(conn, book, {found.name: new}, renamed, templates or Templates.load()))


def merge(db: Database, bookcode: str, name: str, into: str, templates: Templates | None = None) -> PlaceReport:
    """`name` is `into`: its names become aliases of `into`, and its shots are set there."""
    with db.engine.begin() as conn:
        book = get_book(conn, bookcode)
        gone, kept = _find(conn, bookcode, name), _find(conn, bookcode, into)
        if gone.name == kept.name:
            raise BadInput(f"{name!r} and {into!r} are the same place")
        merged = dataclasses.replace(
            kept,
            aliases=other_names(kept.name, kept.aliases + gone.names),
            mentions=kept.mentions + gone.mentions,
            description=kept.description or gone.description,
            locked=True,
        )
        conn.execute(sa.delete(places).where(places.c.bookcode == bookcode, places.c.name == gone.name))
        _replace(conn, bookcode, kept.name, merged)
        return PlaceReport(merged, _move(conn, book, {gone.name: kept.name}, merged, templates or Templates.load()))


def describe(db: Database, bookcode: str, name: str, text: str, templates: Templates | None = None) -> PlaceReport:
    """Set what the place looks like; its sheet and the frames of its shots are made again."""
    text = " ".join(text.split())
    if not text or len(text) > MAX_DESCRIPTION:
        raise BadInput(f"a place's description must have 1 to {MAX_DESCRIPTION} characters")
    with db.engine.begin() as conn:
        book, found = get_book(conn, bookcode), _find(conn, bookcode, name)
        described = dataclasses.replace(found, description=text, locked=True)
        _replace(conn, bookcode, found.name, described)
        return PlaceReport(described, _move(conn, book, {}, described, templates or Templates.load()))


def drop(db: Database, bookcode: str, name: str, templates: Templates | None = None) -> PlaceReport:
    """No place: its shots are set nowhere named, its sheet is canceled, a rebuild keeps it out."""
    with db.engine.begin() as conn:
        book, found = get_book(conn, bookcode), _find(conn, bookcode, name)
        _replace(conn, bookcode, found.name, dataclasses.replace(found, locked=True, dropped=True))
        return PlaceReport(None, _move(conn, book, {found.name: None}, None, templates or Templates.load()))


def set_style(db: Database, bookcode: str, style: str, templates: Templates | None = None) -> tuple[str, ...]:
    """Set the book's style line (era, medium, palette); every shot's prompts carry it, so the
    tasks of shots already made are re-queued."""
    style = " ".join(style.split())
    if not style or len(style) > MAX_DESCRIPTION:
        raise BadInput(f"a style line must have 1 to {MAX_DESCRIPTION} characters")
    with db.engine.begin() as conn:
        get_book(conn, bookcode)
        conn.execute(sa.update(books).where(books.c.bookcode == bookcode).values(style=style))
        book = get_book(conn, bookcode)
        everything = _shots_at(conn, bookcode, None)
        _rewrite(conn, book, everything, {}, templates or Templates.load())
        return tuple(reset_shot_tasks(conn, [s.shot_id for s in everything], "style set")) if everything else ()


def _move(
    conn: sa.Connection, book: Book, mapping: dict[str, str | None], target: Place | None, templates: Templates
) -> tuple[str, ...]:
    """Shots set at a key of `mapping` are set at its value (None: nowhere named); the target's
    shots get prompts afresh, the old places' sheets are canceled and the target's made again."""
    names = set(mapping) | ({target.name} if target else set())
    touched = [s for n in names for s in _shots_at(conn, book.bookcode, n)]
    if target is not None:
        prompt = place_prompt(
            templates, title=book.title, name=target.name, description=target.description, style=book.style or STYLE
        )
        spec = sheet_spec(book.bookcode, target.name, prompt, "location_sheet")
        set_params(conn, spec.task_id, spec.params or {})
        enqueue(conn, [spec])
    gone = [place_task_id(book.bookcode, n) for n in mapping if mapping[n] != n]
    cancel_tasks(conn, gone, reason=f"places of {book.bookcode} edited")
    _rewrite(conn, book, touched, mapping, templates)
    reset = reset_shot_tasks(conn, [s.shot_id for s in touched], f"places of {book.bookcode} edited") if touched else []
    return tuple(reset)


def _rewrite(
    conn: sa.Connection, book: Book, touched: list[Shot], mapping: dict[str, str | None], templates: Templates
) -> None:
    """Set the shots' places by `mapping` and render their prompts (a prompt a person edited is kept)."""
    bible = Bible(book.lang, (), tuple(load_places(conn, book.bookcode)))
    for old in touched:
        shot = dataclasses.replace(old, location=mapping.get(old.location, old.location) if old.location else None)
        image, video = reprompt(
            shot, title=book.title, lang=book.lang, templates=templates, bible=bible, style=book.style
        )
        edited = conn.execute(sa.select(shots.c.edited_at).where(shots.c.shot_id == old.shot_id)).scalar()
        shot = dataclasses.replace(shot, prompt=old.prompt if edited else image, video_prompt=video)
        conn.execute(
            sa.update(shots)
            .where(shots.c.shot_id == shot.shot_id)
            .values(location=shot.location, prompt=shot.prompt, video_prompt=shot.video_prompt)
        )
        update_task_params(conn, shot, book.lang)


def _shots_at(conn: sa.Connection, bookcode: str, name: str | None) -> list[Shot]:
    """The book's shots set at `name` (every shot: None), in book order."""
    query = sa.select(shots).where(shots.c.bookcode == bookcode)
    if name is not None:
        query = query.where(shots.c.location == name)
    return [Shot.from_row(r) for r in conn.execute(query.order_by(shots.c.chapter, shots.c.seq)).mappings()]


def _lookup(conn: sa.Connection, bookcode: str, name: str) -> Place | None:
    found = load_places(conn, bookcode)
    return next((p for p in found if p.name == name), None) or next((p for p in found if name in p.aliases), None)


def _find(conn: sa.Connection, bookcode: str, name: str) -> Place:
    found = _lookup(conn, bookcode, name.strip())
    if found is None or found.dropped:
        raise NotFound(f"no place {name!r} in {bookcode} (see `pipeline-kit places {bookcode}`)")
    return found


def _replace(conn: sa.Connection, bookcode: str, old_name: str, place: Place) -> None:
    conn.execute(sa.delete(places).where(places.c.bookcode == bookcode, places.c.name.in_([old_name, place.name])))
    conn.execute(sa.insert(places).values(**entry_row(bookcode, place)))
