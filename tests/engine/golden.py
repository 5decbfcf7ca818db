"""The engine's SQL as each database receives it, laid out to be read whole and kept as golden
files under tests/engine/golden/DIALECT/VERB.sql (see test_golden_sql.py).

Laying out only turns single spaces into a line break and an indent, so a golden file and the
text the code sends are equal once whitespace is normalised: the files cannot drift from the code
without the test saying so. `pytest --update-golden tests/engine/test_golden_sql.py` rewrites them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit.db import claims, finishes
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import render
from pipeline_kit.db.finishes import REVIEW_LANES

HERE = Path(__file__).resolve().parent / "golden"
FOLDER = {"sqlite": "sqlite", "postgresql": "postgresql", "mysql": "mariadb"}  # by SQLAlchemy's dialect name
_BREAK = {
    "FROM",
    "WHERE",
    "SET",
    "RETURNING",
    "ORDER",
    "GROUP",
    "LIMIT",
    "FOR",
    "AND",
    "JOIN",
    "VALUES",
    "SELECT",
    "ON",
    "INSERT",
    "UPDATE",
    "WHEN",
    "ELSE",
    "INNER",
    "LEFT",
}
_WORD = re.compile(r"[A-Z]+\b")
_ASSIGN = re.compile(r"[\w.]+ = ")  # the next column of a SET list


def normal(sql: str) -> str:
    """SQL with every run of whitespace made one space: what the comparison ignores."""
    return " ".join(sql.split())


def layout(sql: str) -> str:
    """`sql` with a line break before each clause keyword, indented by its parenthesis depth."""
    text, out, depth, quoted = normal(sql), [], 0, False
    for i, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch in "()":
            depth += 1 if ch == "(" else -1
        word = _WORD.match(text, i + 1)
        clause = word and word.group() in _BREAK and not text.endswith(("FOR", "INNER", "LEFT"), 0, i)
        item = text[i - 1] == "," and _ASSIGN.match(text, i + 1)
        if ch == " " and not quoted and (clause or item or depth == 0 and text[i - 2 : i] == "),"):
            out.append("\n" + "    " * (depth + 1))
        else:
            out.append(ch)
    return "".join(out)


def hot_path(dialect: str) -> dict[str, dict[str, str]]:
    """The claim and completion statements the driver sends (db/claims.py, db/finishes.py), by
    verb and statement name: built with every optional part (the free-lane gate, the spent-book
    filter, the paused providers' kinds, review lanes), lists of two items."""
    lengths = (("lanes", 2), ("spent", 2), ("skip", 2), ("ids", 2))
    claim = {
        name: render(dialect, sql, lengths)
        for name, sql in claims.statements(dialect, 10, books=True, free=True, kinds=True).items()
    }
    claim["lock_lane"] = render(dialect, claims.LOCK_LANE[dialect], lengths)
    for name in ("LANE_SETTINGS", "RUNNING", "SPENT_BOOKS", "REMOTE_JOBS"):
        claim[name.lower()] = render(dialect, getattr(claims, name), lengths)
    finish = {name: render(dialect, sql, lengths) for name, sql in finishes.statements(dialect, REVIEW_LANES).items()}
    finish["count_off"] = render(dialect, finishes.COUNT_OFF, lengths)
    return {"claim": claim, "complete": finish}


@contextmanager
def captured(db: Database) -> Iterator[list[str]]:
    """Every statement SQLAlchemy sends on `db` while the block runs, as the driver gets it."""
    sent: list[str] = []

    def keep(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        sent.append(statement)

    sa.event.listen(db.engine, "before_cursor_execute", keep)
    try:
        yield sent
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", keep)


def document(statements: Mapping[str, str]) -> str:
    """A golden file: each statement under a `-- name` line, laid out, ending with a semicolon."""
    return "\n\n".join(f"-- {name}\n{layout(sql)};" for name, sql in statements.items()) + "\n"


def parse(text: str) -> dict[str, str]:
    """A golden file back into name -> SQL (normalised)."""
    parts = re.split(r"^-- (\S+)\n", text, flags=re.M)[1:]
    return {name: normal(body).removesuffix(";") for name, body in zip(parts[::2], parts[1::2])}
