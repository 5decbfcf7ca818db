"""The chat answer cache: an answer a model was paid for, kept by a hash of its input.

A director task asks `recall` before each chat call and `remember`s each valid answer as soon as
it arrives, so a task resumed after a kill, rerun, or given an unchanged chapter pays nothing
twice. Keys are computed by the caller (model, messages and schema); a second writer of the same
key changes nothing.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import run_named
from pipeline_kit.db.schema import llm_answers

FIELDS = ("answer", "model", "tokens_in", "tokens_out", "cost")


def recall_answer(db: Database, key: str) -> dict[str, Any] | None:
    """The kept answer for `key` ({answer, model, tokens_in, tokens_out, cost}), or None."""
    with db.reading() as conn:
        row = (
            conn.execute(sa.select(*(llm_answers.c[f] for f in FIELDS)).where(llm_answers.c.key == key))
            .mappings()
            .first()
        )
    return dict(row) if row else None


def remember_answer(db: Database, key: str, record: dict[str, Any], *, lease: tuple[str, str] | None = None) -> None:
    """Keep `record` under `key` unless an answer is kept there already (the first one stays).
    A worker account keeps one only while it holds `lease` (task_id, token): a task it runs."""
    values = {f: record.get(f) for f in FIELDS}
    values["cost"] = float(values["cost"] or 0.0)
    if routines.enabled(db):
        task_id, token = lease or (None, None)
        with db.engine.begin() as conn:
            routines.call(conn, "pk_remember_answer", task_id=task_id, token=token, key=key, **values)
        return
    with db.engine.begin() as conn:  # the first answer kept stays: a later writer's is as good
        run_named(conn, "answer", key=key, **values)
