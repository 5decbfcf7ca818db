"""The character bible in the database, and a person's edits to it.

`save_bible` replaces a book's rows (split builds the bible afresh; locked and dropped entries
come back as they were, and a character keeps the voice a person gave it under any of its
names). The edits (`merge`, `rename`, `describe`, `drop`) lock what they touch and re-queue only
what changes: that character's sheet, the frames (with their videos) of the shots that name it,
and the voices of lines that now have another speaker.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import characters, shots
from pipeline_kit.engine.planned import set_params
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.operator import cancel_tasks, reset_tasks
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.text.cast import Bible, Character
from pipeline_kit.text.direct import director_looks
from pipeline_kit.text.graph import sheet_spec, sheet_task_id
from pipeline_kit.text.prompts import NO_LOOKS, Templates, sheet_prompt
from pipeline_kit.text.placesdb import load_places
from pipeline_kit.text.entries import entry_row, other_names, valid_name
from pipeline_kit.text.records import Book, Shot, get_book, lock_book
from pipeline_kit.text.refold import follow_bible
from pipeline_kit.text.splitter import reprompt
from pipeline_kit.text.store import reset_shot_tasks, update_task_params

MAX_NAME = 100
MAX_DESCRIPTION = 2000


@dataclass(frozen=True)
class CastEntry:
    """A stored character and where it appears."""

    character: Character
    first_shot: str | None
    last_shot: str | None
    director_looks: str = ""  # what the book's director pass wrote (the frames' prompts use it)
    voice: str | None = None  # the voice a person gave it (None: the default for its gender and language)

    @property
    def looks(self) -> str:
        """The looks the prompts use: a person's description (it locks the entry), else the
        director's, marked as such, else what the rules gathered from the book."""
        c = self.character
        if self.director_looks and not c.locked:
            return f"(director) {self.director_looks}"
        return c.description


@dataclass(frozen=True)
class CastReport:
    """What an edit did: the character as it now is (None once dropped), the tasks re-queued."""

    character: Character | None
    reset: tuple[str, ...]


def load_characters(conn: sa.Connection, bookcode: str) -> list[Character]:
    """The book's stored characters, most mentioned first."""
    return [entry.character for entry in _entries(conn, bookcode)]


def load_bible(conn: sa.Connection, book: Book) -> Bible | None:
    """The book's stored bible, or None when it has none yet."""
    found = load_characters(conn, book.bookcode)
    return Bible(book.lang, tuple(found)) if found else None


def save_bible(conn: sa.Connection, bookcode: str, bible: Bible) -> None:
    """Replace the book's characters with the bible's (two splits at once take turns: the book's row
    is locked first, so the second one's delete sees the first one's rows)."""
    lock_book(conn, bookcode)
    voices = _voices(conn, bookcode)
    conn.execute(sa.delete(characters).where(characters.c.bookcode == bookcode))
    if bible.characters:
        rows = [{**entry_row(bookcode, c), "voice": _voice(voices, c.names)} for c in bible.characters]
        conn.execute(sa.insert(characters), rows)


def refresh_appearances(conn: sa.Connection, bookcode: str) -> None:
    """Set each character's first and last shot from the shots that name it."""
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    for shot_id, names in conn.execute(
        sa.select(shots.c.shot_id, shots.c.characters)
        .where(shots.c.bookcode == bookcode)
        .order_by(shots.c.chapter, shots.c.seq)
    ):
        for name in names or ():
            first.setdefault(name, shot_id)
            last[name] = shot_id
    names = conn.execute(sa.select(characters.c.name).where(characters.c.bookcode == bookcode)).scalars().all()
    if names:  # one statement for all of them
        conn.execute(
            sa.update(characters)
            .where(characters.c.bookcode == bookcode, characters.c.name == sa.bindparam("who"))
            .values(first_shot=sa.bindparam("first"), last_shot=sa.bindparam("last")),
            [{"who": n, "first": first.get(n), "last": last.get(n)} for n in names],
        )


def canonical_names(conn: sa.Connection, book: Book, names: list[str]) -> list[str]:
    """Names as the bible has them (an alias becomes its character); a new name joins it, locked."""
    bible = load_bible(conn, book) or Bible(book.lang, ())
    out = list(dict.fromkeys(bible.canonical.get(n, n) for n in names))
    for name in out:
        if name not in bible.by_name:
            _store(conn, book.bookcode, Character(name, locked=True))
    return out


def list_cast(db: Database, bookcode: str) -> list[CastEntry]:
    """The book's bible (NotFound for an unknown book)."""
    with db.reading() as conn:
        get_book(conn, bookcode)
        return _entries(conn, bookcode)


def merge(db: Database, bookcode: str, name: str, into: str, templates: Templates | None = None) -> CastReport:
    """`name` is `into`: its names become aliases of `into`, and its shots name `into` instead.
    Always allowed: when the bible already holds them as one, the merge is locked and the shots
    still naming `name` (split before the bible joined them) follow."""
    with db.engine.begin() as conn:
        book = get_book(conn, bookcode)
        gone, kept = _find(conn, bookcode, name), _find(conn, bookcode, into)
        if gone.name == kept.name:
            fixed = dataclasses.replace(kept, locked=True)
            _store(conn, bookcode, fixed)
            mapping = {n: kept.name for n in {name.strip(), into.strip()} - {kept.name}}
            return CastReport(fixed, _recast(conn, book, mapping, fixed, templates or Templates.load()))
        merged = dataclasses.replace(
            kept,
            aliases=other_names(kept.name, kept.aliases + gone.names),
            mentions=kept.mentions + gone.mentions,
            description=kept.description or gone.description,
            gender=kept.gender or gone.gender,
            locked=True,
        )
        _store(conn, bookcode, merged, voice_from=(kept.name, gone.name))
        conn.execute(sa.delete(characters).where(characters.c.bookcode == bookcode, characters.c.name == gone.name))
        reset = _recast(conn, book, {gone.name: merged.name}, merged, templates or Templates.load())
        return CastReport(merged, reset)


def unmerge(db: Database, bookcode: str, name: str, alias: str, templates: Templates | None = None) -> CastReport:
    """Undo a merge: `alias` is a character of its own again, not one of `name`'s names; both are
    locked (a rebuild keeps them apart) and the shots are cast again by the bible as it now is."""
    alias = valid_name(alias, MAX_NAME, "character")
    with db.engine.begin() as conn:
        book = get_book(conn, bookcode)
        found = _find(conn, bookcode, name)
        if alias not in found.aliases:
            raise BadInput(f"{alias!r} is not one of {found.name!r}'s names (see `pipeline-kit cast {bookcode}`)")
        kept = tuple(a for a in found.aliases if a != alias)
        _store(conn, bookcode, dataclasses.replace(found, aliases=kept, locked=True))
        apart = Character(alias, gender=found.gender, locked=True)
        _store(conn, bookcode, apart)
        numbers = sorted({s.chapter for s in _shots_naming(conn, bookcode, {found.name})})
        stored = load_bible(conn, book) or Bible(book.lang, ())
        bible = dataclasses.replace(stored, places=tuple(load_places(conn, bookcode)))
        reset = follow_bible(conn, book, bible, templates or Templates.load(), numbers)
        refresh_appearances(conn, bookcode)
        return CastReport(apart, tuple(reset))


def rename(db: Database, bookcode: str, old: str, new: str, templates: Templates | None = None) -> CastReport:
    """The character goes by `new`; `old` stays one of its aliases."""
    new = valid_name(new, MAX_NAME, "character")
    with db.engine.begin() as conn:
        book = get_book(conn, bookcode)
        found = _find(conn, bookcode, old)
        taken = _lookup(conn, bookcode, new)
        if taken is not None and taken.name != found.name:
            raise BadInput(f"{new!r} is already the character {taken.name!r}: use `cast merge`")
        if new == found.name:
            raise BadInput(f"{found.name!r} already goes by that name")
        renamed = dataclasses.replace(found, name=new, aliases=other_names(new, found.names), locked=True)
        _store(conn, bookcode, renamed, voice_from=(found.name,))
        conn.execute(sa.delete(characters).where(characters.c.bookcode == bookcode, characters.c.name == found.name))
        reset = _recast(conn, book, {found.name: new}, renamed, templates or Templates.load())
        return CastReport(renamed, reset)


def describe(db: Database, bookcode: str, name: str, text: str, templates: Templates | None = None) -> CastReport:
    """Set the character's description; its sheet and the frames of its shots are made again."""
    text = " ".join(text.split())
    if not text:
        raise BadInput("the description must not be empty")
    if len(text) > MAX_DESCRIPTION:
        raise BadInput(f"the description is longer than {MAX_DESCRIPTION} characters")
    templates = templates or Templates.load()
    with db.engine.begin() as conn:
        book = get_book(conn, bookcode)
        found = dataclasses.replace(_find(conn, bookcode, name), description=text, locked=True)
        _store(conn, bookcode, found)
        sheet = sheet_task_id(bookcode, found.name)
        spec = sheet_spec(
            bookcode,
            found.name,
            sheet_prompt(templates, title=book.title, name=found.name, description=text),
        )
        present = set_params(conn, sheet, spec.params or {})
        touched = _shots_naming(conn, bookcode, {found.name})
        _rewrite(conn, book, touched, {}, templates)  # their prompts carry the new description
        reason = f"character {found.name} described"
        if present:  # the frames of its shots depend on the sheet, so they are reset with it
            reset = reset_tasks(conn, [sheet], reason=reason)
        else:
            reset = reset_shot_tasks(conn, [s.shot_id for s in touched], reason) if touched else []
        refresh_appearances(conn, bookcode)
        return CastReport(found, tuple(reset))


def drop(db: Database, bookcode: str, name: str, templates: Templates | None = None) -> CastReport:
    """No character: shots stop naming it, its sheet is canceled, and a rebuild keeps it out."""
    with db.engine.begin() as conn:
        book = get_book(conn, bookcode)
        found = dataclasses.replace(_find(conn, bookcode, name), locked=True, dropped=True)
        _store(conn, bookcode, found)
        reset = _recast(conn, book, {found.name: None}, None, templates or Templates.load())
        return CastReport(None, reset)


def _recast(
    conn: sa.Connection,
    book: Book,
    mapping: dict[str, str | None],
    target: Character | None,
    templates: Templates,
) -> tuple[str, ...]:
    """Shots naming a key of `mapping` name its value instead (None: nobody) and their tasks are
    reset; the old names' sheets are canceled and the target's sheet made if it is missing."""
    touched = _shots_naming(conn, book.bookcode, set(mapping))
    if target is not None and touched:
        description = target.description or NO_LOOKS
        prompt = sheet_prompt(templates, title=book.title, name=target.name, description=description)
        enqueue(conn, [sheet_spec(book.bookcode, target.name, prompt)])
    _rewrite(conn, book, touched, mapping, templates)
    reason = f"cast of {book.bookcode} edited"
    reset = reset_shot_tasks(conn, [s.shot_id for s in touched], reason) if touched else []
    gone = [sheet_task_id(book.bookcode, n) for n in mapping if n not in mapping.values()]
    cancel_tasks(conn, gone, reason=reason)
    refresh_appearances(conn, book.bookcode)
    return tuple(reset)


def _shots_naming(conn: sa.Connection, bookcode: str, names: set[str]) -> list[Shot]:
    """The book's shots naming any of `names`, in book order."""
    rows = conn.execute(
        sa.select(shots).where(shots.c.bookcode == bookcode).order_by(shots.c.chapter, shots.c.seq)
    ).mappings()
    return [Shot.from_row(r) for r in rows if set(r["characters"] or ()) & names]


def _rewrite(
    conn: sa.Connection,
    book: Book,
    touched: list[Shot],
    mapping: dict[str, str | None],
    templates: Templates,
) -> None:
    """Rename the shots' characters by `mapping` and render their prompts (a prompt a person edited
    is kept) and their tasks' params afresh from the stored bible."""
    bible = load_bible(conn, book)
    for old in touched:
        names = tuple(dict.fromkeys(n2 for n in old.characters for n2 in [mapping.get(n, n)] if n2))
        inferred = tuple(dict.fromkeys(n2 for n in old.inferred for n2 in [mapping.get(n, n)] if n2))
        shot = dataclasses.replace(old, characters=names, inferred=inferred)
        image, video = reprompt(shot, title=book.title, lang=book.lang, templates=templates, bible=bible)
        edited = conn.execute(sa.select(shots.c.edited_at).where(shots.c.shot_id == old.shot_id)).scalar()
        shot = dataclasses.replace(shot, prompt=old.prompt if edited else image, video_prompt=video)
        conn.execute(
            sa.update(shots)
            .where(shots.c.shot_id == shot.shot_id)
            .values(
                characters=list(names),
                inferred=list(inferred) or None,
                prompt=shot.prompt,
                video_prompt=shot.video_prompt,
            )
        )
        update_task_params(conn, shot, book.lang)


def _entries(conn: sa.Connection, bookcode: str) -> list[CastEntry]:
    looks = director_looks(conn, bookcode)
    rows = conn.execute(
        sa.select(characters)
        .where(characters.c.bookcode == bookcode)
        .order_by(characters.c.mentions.desc(), characters.c.name)
    ).mappings()
    return [
        CastEntry(
            Character(
                r["name"],
                tuple(r["aliases"] or ()),
                r["description"] or "",
                r["gender"],
                r["mentions"],
                bool(r["locked"]),
                bool(r["dropped"]),
            ),
            r["first_shot"],
            r["last_shot"],
            looks.get(r["name"], ""),
            r["voice"],
        )
        for r in rows
    ]


def _lookup(conn: sa.Connection, bookcode: str, name: str) -> Character | None:
    """The character going by `name` (its canonical name, else one of its aliases)."""
    found = load_characters(conn, bookcode)
    return next((c for c in found if c.name == name), None) or next((c for c in found if name in c.aliases), None)


def _find(conn: sa.Connection, bookcode: str, name: str) -> Character:
    found = _lookup(conn, bookcode, name.strip())
    if found is None or found.dropped:
        raise NotFound(f"no character {name!r} in {bookcode} (see `pipeline-kit cast {bookcode}`)")
    return found


def _store(conn: sa.Connection, bookcode: str, character: Character, voice_from: tuple[str, ...] = ()) -> None:
    """Write the character's row, keeping the voice stored under its name (else the first of
    `voice_from`'s rows that has one)."""
    voice = _voice(_voices(conn, bookcode), (character.name, *voice_from))
    conn.execute(sa.delete(characters).where(characters.c.bookcode == bookcode, characters.c.name == character.name))
    conn.execute(sa.insert(characters).values(**entry_row(bookcode, character), voice=voice))


def _voices(conn: sa.Connection, bookcode: str) -> dict[str, str]:
    """Each name (canonical or alias) of the book's voiced characters -> its voice."""
    found: dict[str, str] = {}
    query = sa.select(characters.c.name, characters.c.aliases, characters.c.voice).where(
        characters.c.bookcode == bookcode, characters.c.voice.is_not(None)
    )
    for r in conn.execute(query):
        found.update(dict.fromkeys(r.aliases or (), r.voice))
    for r in conn.execute(query):
        found[r.name] = r.voice  # a canonical name wins over another character's alias
    return found


def _voice(voices: dict[str, str], names: tuple[str, ...]) -> str | None:
    return next((voices[n] for n in names if n in voices), None)
