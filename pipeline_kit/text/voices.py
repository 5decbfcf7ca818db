"""Who speaks a book, as stored: each character's voice (characters.voice), the narrator's voice
and the narration switch (books.narrator, books.narration), and a person's edits to them.

An edit rewrites the voice tasks of the shots it changes and re-queues them (and, through their
dependents, the chapter films), so the film speaks with the voice just chosen.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import books, chapters, characters, shots
from pipeline_kit.engine.planned import set_params, task_params
from pipeline_kit.engine.operator import reset_tasks
from pipeline_kit.film.dialogue import Speakers
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.text.graph import Voices, shot_task_ids, voice_params
from pipeline_kit.text.records import Shot, get_book

_VOICE = re.compile(r"^[\w.+:@-]{1,64}$")  # espeak `en+f3`, OpenAI `alloy`, Volcengine `zh_female_x`
_CHUNK = 500


def book_voices(conn: sa.Connection, bookcode: str, numbers: Collection[int] = ()) -> Voices:
    """The book's voices as the planner reads them (the defaults for a book without any), with
    the texts of the chapters `numbers` whose shots it plans."""
    row = conn.execute(sa.select(books.c.narrator, books.c.narration).where(books.c.bookcode == bookcode)).first()
    rows = conn.execute(
        sa.select(
            characters.c.name, characters.c.aliases, characters.c.gender, characters.c.voice, characters.c.dropped
        ).where(characters.c.bookcode == bookcode)
    ).all()
    cast = {r.name: (r.gender, r.voice) for r in rows}
    speakers = Speakers.of((r.name, r.aliases or (), r.gender) for r in rows if not r.dropped)
    texts = chapter_texts(conn, bookcode, numbers)
    if row is None:
        return Voices(cast, speakers=speakers, chapters=texts)
    return Voices(cast, row.narrator, row.narration is None or bool(row.narration), speakers, texts)


def chapter_texts(conn: sa.Connection, bookcode: str, numbers: Collection[int]) -> dict[int, str]:
    """Chapter number -> text, of the book's chapters `numbers`."""
    if not numbers:
        return {}
    query = sa.select(chapters.c.number, chapters.c.text).where(
        chapters.c.bookcode == bookcode, chapters.c.number.in_(sorted(numbers))
    )
    return {r.number: r.text for r in conn.execute(query)}


def check_voice(voice: str) -> str:
    """A voice name as a backend takes it (letters, digits and `.+:@-_`), else BadInput."""
    voice = voice.strip()
    if not _VOICE.match(voice):
        raise BadInput(f"not a voice name: {voice!r} (letters, digits and . + : @ - _, at most 64)")
    return voice


def set_voice(db: Database, bookcode: str, name: str, voice: str | None) -> tuple[str, ...]:
    """Give character `name` (its name or an alias) `voice` (None: the default again); returns
    the voice tasks re-queued."""
    voice = check_voice(voice) if voice is not None else None
    with db.engine.begin() as conn:
        get_book(conn, bookcode)
        found = None
        for r in conn.execute(
            sa.select(characters.c.name, characters.c.aliases, characters.c.dropped).where(
                characters.c.bookcode == bookcode
            )
        ):
            if not r.dropped and (r.name == name or (found is None and name in (r.aliases or ()))):
                found = r.name
        if found is None:
            raise NotFound(f"no character {name!r} in {bookcode} (see `pipeline-kit cast {bookcode}`)")
        conn.execute(
            sa.update(characters)
            .where(characters.c.bookcode == bookcode, characters.c.name == found)
            .values(voice=voice)
        )
        return replan_voices(conn, bookcode)


def set_narrator(db: Database, bookcode: str, voice: str | None, narration: bool | None = None) -> tuple[str, ...]:
    """Set the book's narrator voice (None: keep it) and whether narration is spoken (None: keep
    it); returns the voice tasks re-queued."""
    values: dict[str, object] = {}
    if voice is not None:
        values["narrator"] = check_voice(voice)
    if narration is not None:
        values["narration"] = narration
    with db.engine.begin() as conn:
        get_book(conn, bookcode)
        if values:
            conn.execute(sa.update(books).where(books.c.bookcode == bookcode).values(**values))
        return replan_voices(conn, bookcode)


def replan_voices(conn: sa.Connection, bookcode: str) -> tuple[str, ...]:
    """Bring the book's voice tasks to its current voices and re-queue those that changed
    (attempts kept); returns the ids reset."""
    shot_ids = list(conn.execute(sa.select(shots.c.shot_id).where(shots.c.bookcode == bookcode)).scalars())
    stale = restate_voices(conn, shot_ids)
    return tuple(reset_tasks(conn, stale, reason="the book's voices changed")) if stale else ()


def restate_voices(conn: sa.Connection, shot_ids: Sequence[str]) -> list[str]:
    """Rewrite the params of the shots' voice tasks whose lines (or voices) differ from what the
    shots and their book's voices now say; returns those tasks, for the caller to reset."""
    stale: list[str] = []
    known: dict[str, tuple[str, Voices]] = {}
    for i in range(0, len(shot_ids), _CHUNK):
        chunk = shot_ids[i : i + _CHUNK]
        found = [Shot.from_row(r) for r in conn.execute(sa.select(shots).where(shots.c.shot_id.in_(chunk))).mappings()]
        stored = task_params(conn, [shot_task_ids(s)["voice"] for s in chunk])
        texts: dict[str, dict[int, str]] = {}
        for shot in found:
            if shot.bookcode not in known:
                known[shot.bookcode] = (get_book(conn, shot.bookcode).lang, book_voices(conn, shot.bookcode))
            texts.setdefault(shot.bookcode, {})[shot.chapter] = ""
        for bookcode, numbers in texts.items():
            texts[bookcode] = chapter_texts(conn, bookcode, numbers.keys())
        for shot in found:
            lang, voices = known[shot.bookcode]
            task_id = shot_task_ids(shot.shot_id)["voice"]
            wanted = voice_params(shot, lang, replace(voices, chapters=texts[shot.bookcode]))
            if task_id in stored and dict(stored[task_id] or {}) != wanted:
                set_params(conn, task_id, wanted)
                stale.append(task_id)
    return sorted(stale)
