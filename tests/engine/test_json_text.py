"""JSON columns hold UTF-8 text, not \\u escapes, so analysts' plain SQL finds names in them."""

from __future__ import annotations

import datetime
import json

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.connect import json_text
from pipeline_kit.db.schema import books, shots
from pipeline_kit.engine import Ack, Completion, TaskSpec


def _found(db: Database, table: str, column: str, key: str, needle: str) -> list[str]:
    """Keys of rows whose JSON column contains `needle`, by a raw LIKE as an analyst writes it
    (PostgreSQL's json type needs a cast to text to take LIKE)."""
    text = f"CAST({column} AS TEXT)" if db.dialect == "postgresql" else column
    with db.engine.connect() as conn:
        return list(
            conn.execute(sa.text(f"SELECT {key} FROM {table} WHERE {text} LIKE :p"), {"p": f"%{needle}%"}).scalars()
        )


def test_json_columns_are_stored_as_utf8_and_found_by_like(db: Database) -> None:
    """shots.characters (written through SQLAlchemy), tasks.params (enqueue) and tasks.result and
    attempts.settings (written on the driver-level completion path) keep Chinese as written."""
    with db.engine.begin() as conn:
        conn.execute(books.insert().values(bookcode="sgyy", title="三国演义", lang="zh"))
        conn.execute(
            shots.insert().values(
                shot_id="sgyy-1-1",
                bookcode="sgyy",
                chapter=1,
                seq=1,
                scene=1,
                characters=["曹操", "刘备"],
                text="曹操与刘备煮酒论英雄。",
                span_start=0,
                span_end=11,
                duration_s=4.0,
            )
        )
        engine.enqueue(
            conn, [TaskSpec(task_id="sgyy-1-1:image", kind="image", lane="default", params={"prompt": "曹操举杯"})]
        )
    (lease,) = engine.claim(db, "w", ["default"])
    done = Completion(
        task_id=lease.task_id, token=lease.token, result={"caption": "刘备闻雷失箸"}, settings={"style": "水墨"}
    )
    assert engine.complete(db, done) is Ack.ACCEPTED
    assert _found(db, "shots", "characters", "shot_id", "曹操") == ["sgyy-1-1"]
    assert _found(db, "tasks", "params", "task_id", "曹操") == ["sgyy-1-1:image"]
    assert _found(db, "tasks", "result", "task_id", "刘备") == ["sgyy-1-1:image"]
    assert _found(db, "attempts", "settings", "task_id", "水墨") == ["sgyy-1-1:image"]
    with db.engine.connect() as conn:  # and it reads back as the same values
        assert conn.execute(sa.select(shots.c.characters)).scalar_one() == ["曹操", "刘备"]


def test_json_text_is_json_dumps_with_the_stored_options() -> None:
    """The encoder kept for speed writes exactly what json.dumps with the stored options writes
    (keys sorted, UTF-8 kept, other values as str), so equal values stay equal text across versions."""
    values = [
        {"b": 1, "a": [1.5, None, True, '曹操 "说"\n'], "z": {"y": -0.0, "x": 1e100}},
        "刘备",
        3,
        [],
        {},
        {"when": datetime.date(2026, 12, 5), "pair": (1, 2)},
        float("nan"),
        {1: "a", 2: "b"},
    ]
    for value in values:
        assert json_text(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
