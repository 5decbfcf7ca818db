"""Show, edit and re-run one shot; an edit or re-run resets only that shot's tasks and their dependents."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import shots
from pipeline_kit.db.sqltime import db_now
from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.text.castdb import canonical_names, load_bible
from pipeline_kit.text.graph import sheet_spec
from pipeline_kit.text.prompts import Templates, caption, sheet_prompt
from pipeline_kit.text.records import Shot, get_book
from pipeline_kit.text.splitter import reprompt
from pipeline_kit.text.store import reset_shot_tasks, update_task_params

MAX_NAME = 100


@dataclass(frozen=True)
class EditReport:
    """The shot as it now stands and the task ids sent back to pending."""

    shot: Shot
    reset: tuple[str, ...]


def show_shot(db: Database, shot_id: str) -> Shot:
    with db.reading() as conn:
        return _load(conn, shot_id)


def edit_shot(
    db: Database,
    shot_id: str,
    *,
    prompt: str | None = None,
    characters: list[str] | None = None,
    location: str | None = None,
    templates: Templates | None = None,
) -> EditReport:
    """Change a shot's prompt, characters or location; its tasks' params follow and are reset."""
    if prompt is None and characters is None and location is None:
        raise BadInput("nothing to edit: give --prompt, --characters or --location")
    if prompt is not None and not prompt.strip():
        raise BadInput("--prompt must not be empty")
    if characters is not None:
        characters = list(dict.fromkeys(c.strip() for c in characters if c.strip()))
        if any(len(c) > MAX_NAME for c in characters):
            raise BadInput(f"a character name is longer than {MAX_NAME} characters")
    if location is not None and len(location) > 200:
        raise BadInput("--location is longer than 200 characters")
    templates = templates or Templates.load()
    with db.engine.begin() as conn:
        old = _load(conn, shot_id)
        book = get_book(conn, old.bookcode)
        if characters is not None:
            characters = canonical_names(conn, book, characters)
        shot = dataclasses.replace(
            old,
            characters=tuple(characters) if characters is not None else old.characters,
            location=(location.strip() or None) if location is not None else old.location,
        )
        image, video = reprompt(
            shot, title=book.title, lang=book.lang, templates=templates, bible=load_bible(conn, book)
        )
        shot = dataclasses.replace(shot, prompt=prompt.strip() if prompt is not None else image, video_prompt=video)
        conn.execute(
            sa.update(shots)
            .where(shots.c.shot_id == shot_id)
            .values(
                prompt=shot.prompt,
                video_prompt=shot.video_prompt,
                location=shot.location,
                characters=list(shot.characters),
                edited_at=db_now(),
            )
        )
        new_names = [n for n in shot.characters if n not in old.characters]
        if new_names:  # a newly named character needs its sheet (an existing one is left as it is)
            desc = caption(shot.text, book.lang)
            enqueue(
                conn,
                [
                    sheet_spec(book.bookcode, n, sheet_prompt(templates, title=book.title, name=n, description=desc))
                    for n in new_names
                ],
            )
        update_task_params(conn, shot, book.lang)
        reset = reset_shot_tasks(conn, [shot_id], reason=f"shot {shot_id} edited")
    return EditReport(shot, tuple(reset))


def rerun_shot(db: Database, shot_id: str) -> EditReport:
    """Reset the shot's tasks (and their dependents) to pending, unchanged."""
    with db.engine.begin() as conn:
        shot = _load(conn, shot_id)
        reset = reset_shot_tasks(conn, [shot_id], reason=f"shot {shot_id} re-run")
    return EditReport(shot, tuple(reset))


def _load(conn: sa.Connection, shot_id: str) -> Shot:
    row = conn.execute(sa.select(shots).where(shots.c.shot_id == shot_id)).mappings().first()
    if row is None:
        raise NotFound(f"no shot {shot_id!r}")
    return Shot.from_row(row)
