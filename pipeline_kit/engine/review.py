"""The review gate: with review on for a book, its generated images wait for a person.

A completed image of such a book lands in `awaiting_review` and its dependents (the video)
stay unclaimable; approving completes it and releases them; rejecting with a note resets it
(and what depends on it) for regeneration, keeping the attempt history. The note goes into the
redraw: it is appended to the task's prompt as an instruction and the task gets a new seed, so
the next attempt's params (what the worker sends to its backend) carry both. Approving a page,
a chapter or a whole cast is one call (`approve_many`): one transaction, not one per output.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import run_named, within
from pipeline_kit.db.finishes import count_off
from pipeline_kit.db.schema import books, tasks
from pipeline_kit.engine.events import record, record_each
from pipeline_kit.engine.operator import reset_tasks
from pipeline_kit.engine.states import Status
from pipeline_kit.errors import BadInput, NotFound

BATCH = 500  # ids per statement of a batch approval (every database takes an IN list this long)


@dataclass(frozen=True)
class ReviewItem:
    task_id: str
    shot_id: str | None
    kind: str
    output_path: str | None


def set_review(db: Database, bookcode: str, on: bool) -> None:
    """Turn the review gate on or off for a book (affects images completed from now on)."""
    with db.engine.begin() as conn:
        if not conn.execute(sa.update(books).where(books.c.bookcode == bookcode).values(review=on)).rowcount:
            raise NotFound(f"unknown book {bookcode!r}")


def awaiting_review(
    db: Database, bookcode: str | None = None, *, kinds: Iterable[str] | None = None
) -> list[ReviewItem]:
    """Outputs waiting for a person, oldest first; `kinds` keeps only those kinds (the frame
    review shows frames, the cast step character sheets)."""
    query = (
        sa.select(tasks.c.task_id, tasks.c.shot_id, tasks.c.kind, tasks.c.output_path)
        .where(tasks.c.status == Status.AWAITING_REVIEW.value)
        .order_by(tasks.c.id)
    )
    if bookcode:
        query = query.where(tasks.c.bookcode == bookcode)
    if kinds is not None:
        query = query.where(tasks.c.kind.in_(list(kinds)))
    with db.reading() as conn:
        return [ReviewItem(r.task_id, r.shot_id, r.kind, r.output_path) for r in conn.execute(query)]


def approve(db: Database, task_id: str, *, by: str = "reviewer") -> None:
    """Accept a reviewed output: the task completes and its dependents may run (NotFound for an
    unknown task, BadInput when it does not wait for review)."""
    with db.engine.begin() as conn:
        _require_waiting(conn, task_id)
        _approve(conn, db.dialect, [task_id], by)


def approve_many(db: Database, task_ids: Iterable[str], *, by: str = "reviewer") -> list[str]:
    """Accept every output among `task_ids` that still awaits review, in one transaction (a page,
    a chapter, a cast at once). Ids that no longer wait (decided meanwhile) or are unknown are
    left alone; returns those approved."""
    ids = list(dict.fromkeys(task_ids))
    with db.engine.begin() as conn:
        return [
            t for start in range(0, len(ids), BATCH) for t in _approve(conn, db.dialect, ids[start : start + BATCH], by)
        ]


def _approve(conn: sa.Connection, dialect: str, ids: list[str], by: str) -> list[str]:
    """Complete those of `ids` that await review, in the caller's transaction: their dependents
    are counted off once and one `approve` event each is kept. The rows are locked first, so two
    reviewers racing approve each output once."""
    waiting = list(
        conn.execute(
            sa.select(tasks.c.task_id)
            .where(tasks.c.task_id.in_(ids), tasks.c.status == Status.AWAITING_REVIEW.value)
            .with_for_update()
        ).scalars()
    )
    if not waiting:
        return []
    run_named(conn, "approve", ids=waiting)
    with within(conn, dialect) as tx:
        count_off(tx, waiting)
    record_each(conn, "approve", waiting, by, {})
    return waiting


def reject(db: Database, task_id: str, note: str, *, by: str = "reviewer") -> list[str]:
    """Send a reviewed output back for regeneration with a note; returns the tasks reset."""
    if not note.strip():
        raise BadInput("a rejection needs a note saying what to change")
    with db.engine.begin() as conn:
        _require_waiting(conn, task_id)
        params = conn.execute(sa.select(tasks.c.params).where(tasks.c.task_id == task_id)).scalar()
        redraw = redraw_params(params or {}, note)
        conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id).values(params=redraw))
        record(conn, "reject", {"note": note, "seed": redraw["seed"]}, task_id=task_id, worker_id=by)
        return reset_tasks(conn, [task_id], reason=f"rejected: {note}", by=by)


def redraw_params(params: dict[str, Any], note: str) -> dict[str, Any]:
    """The params of a rejected output's redraw: the note appended to the prompt as an
    instruction (earlier notes stay), listed under `review_notes`, and a seed unlike the last."""
    note = " ".join(note.split())
    prompt = str(params.get("prompt") or "")
    old_seed = params.get("seed")
    seed = old_seed
    while seed == old_seed:
        seed = random.SystemRandom().getrandbits(31)
    return {
        **params,
        "prompt": f"{prompt}\nReviewer's note, change this: {note}".lstrip("\n"),
        "review_notes": [*params.get("review_notes", []), note],
        "seed": seed,
    }


def _require_waiting(conn: sa.Connection, task_id: str) -> None:
    status = conn.execute(sa.select(tasks.c.status).where(tasks.c.task_id == task_id)).scalar()
    if status is None:
        raise NotFound(f"unknown task {task_id!r}")
    if status != Status.AWAITING_REVIEW.value:
        raise BadInput(f"task {task_id!r} is {status}, not awaiting review")
