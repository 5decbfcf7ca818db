"""Earlier shots follow the bible: when chapters are added, the bible is folded again over the
whole book, and the shots of chapters split before it name characters and places as it now does.

A shot whose cast or place changed gets its prompts afresh and its tasks re-queued (attempt
history kept); a shot a person edited keeps what the person set. Sheets of characters and places
the shots now name are made; sheets of names the bible no longer holds are canceled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sqlalchemy as sa

from pipeline_kit import kinds
from pipeline_kit.db.schema import chapters, shots
from pipeline_kit.engine.queries import find_tasks
from pipeline_kit.engine.states import Status
from pipeline_kit.engine.enqueue import enqueue
from pipeline_kit.engine.operator import cancel_tasks
from pipeline_kit.text.cast import Bible, cast_drafts
from pipeline_kit.text.graph import place_task_id, sheet_spec, sheet_task_id
from pipeline_kit.text.prompts import NO_LOOKS, STYLE, Templates, place_prompt, sheet_prompt
from pipeline_kit.text.records import Book, Shot
from pipeline_kit.text.shots import ShotDraft
from pipeline_kit.text.splitter import reprompt
from pipeline_kit.text.store import reset_shot_tasks, update_task_params


def follow_bible(
    conn: sa.Connection, book: Book, bible: Bible, templates: Templates, numbers: Sequence[int]
) -> list[str]:
    """Recast the shots of the chapters `numbers` (already split) by `bible`; the tasks re-queued."""
    changed: list[Shot] = []
    for number in numbers:
        text = conn.execute(
            sa.select(chapters.c.text).where(chapters.c.bookcode == book.bookcode, chapters.c.number == number)
        ).scalar_one()
        rows = conn.execute(
            sa.select(shots).where(shots.c.bookcode == book.bookcode, shots.c.chapter == number).order_by(shots.c.seq)
        ).mappings()
        old = [(Shot.from_row(r), r["edited_at"] is not None) for r in rows]
        drafts = [_draft(s) for s, _ in old]
        for (shot, edited), new in zip(old, cast_drafts(text, drafts, bible)):
            moved = (new.characters, new.inferred, new.location) != (shot.characters, shot.inferred, shot.location)
            if moved and not edited:
                changed.append(
                    dataclasses.replace(shot, characters=new.characters, inferred=new.inferred, location=new.location)
                )
    if not changed:
        return []
    _sheets(conn, book, bible, changed, templates)
    for shot in changed:
        image, video = reprompt(
            shot, title=book.title, lang=book.lang, templates=templates, bible=bible, style=book.style
        )
        shot = dataclasses.replace(shot, prompt=image, video_prompt=video)
        conn.execute(sa.update(shots).where(shots.c.shot_id == shot.shot_id).values(**shot.to_row()))
        update_task_params(conn, shot, book.lang)
    return reset_shot_tasks(conn, [s.shot_id for s in changed], "the bible was folded again over the whole book")


def _draft(shot: Shot) -> ShotDraft:
    """A stored shot as the draft the bible recasts (its own names count where still the bible's)."""
    return ShotDraft(
        seq=shot.seq,
        scene=shot.scene,
        span_start=shot.span_start,
        span_end=shot.span_end,
        location=shot.location,
        time_of_day=shot.time_of_day,
        characters=tuple(n for n in shot.characters if n not in shot.inferred),
        dialogue=shot.dialogue,
        duration_s=shot.duration_s,
    )


def _sheets(conn: sa.Connection, book: Book, bible: Bible, changed: list[Shot], templates: Templates) -> None:
    """Sheets for the characters and places the changed shots name; the names gone, canceled."""
    specs = []
    for name in dict.fromkeys(n for s in changed for n in s.characters):
        known = bible.by_name.get(name)
        description = known.description if known and known.description else NO_LOOKS
        specs.append(
            sheet_spec(
                book.bookcode, name, sheet_prompt(templates, title=book.title, name=name, description=description)
            )
        )
    looks = {p.name: p.description for p in bible.places}
    for place in dict.fromkeys(s.location for s in changed if s.location in looks):
        prompt = place_prompt(
            templates, title=book.title, name=place, description=looks[place], style=book.style or STYLE
        )
        specs.append(sheet_spec(book.bookcode, place, prompt, "location_sheet"))
    enqueue(conn, specs)
    kept = {sheet_task_id(book.bookcode, c.name) for c in bible.characters if not c.dropped}
    kept |= {place_task_id(book.bookcode, p) for p in looks}
    waiting = (Status.PENDING, Status.BLOCKED)
    sheets = find_tasks(conn, bookcode=book.bookcode, kinds=kinds.names(kinds.Role.SHEET), statuses=waiting)
    stale = [r.task_id for r in sheets if r.task_id not in kept]
    cancel_tasks(conn, stale, reason="the bible no longer holds that name")
