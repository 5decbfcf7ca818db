"""The SQL files are the source: every statement the engine and the worker accounts' routines
run is a named one of db/sql/DATABASE.sql, each runs on its real database as written, and the
parts the code and the files must agree on (the review lanes, each verb's statements) agree.

A statement whose sample parameters are missing below fails here: a new statement brings one.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from pipeline_kit import engine
from pipeline_kit.db import claims, dialects, routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.driver import within
from pipeline_kit.db.finishes import REVIEW_LANES
from pipeline_kit.db.statements import FOLDER, Statement, load, parse
from pipeline_kit.engine import TaskSpec

_PARAM = re.compile(r"(?<![:\w]):(\w+)")
_LIST = re.compile(r"\bIN :(\w+)")
# One plausible value per parameter name the files use (lists are given one item).
SAMPLE: dict[str, Any] = {
    **dict.fromkeys(["task_id", "r_task", "ids", "roots", "dead", "waiting", "newly"], "t1"),
    **dict.fromkeys(["token", "r_token"], "no-such-token"),
    **dict.fromkeys(["worker_id", "r_worker", "by"], "w1"),
    **dict.fromkeys(["lease_s", "delay_s", "hold_s", "cost", "progress"], 1.5),
    **dict.fromkeys(["retry", "give_up", "keep_cost"], True),
    **dict.fromkeys(["lane", "lanes"], "default"),
    **dict.fromkeys(["spent", "skip", "model", "stage", "remote_job_id", "reason"], "x"),
    "provider": "comfyui",
    "kind": "stale",
    "detail": '{"op": "test"}',
    "alert": '{"message": "test"}',
    "result": '{"ok": true}',
    "settings": None,
    "path": "out/t1.png",
    "bytes": 10,
    "error": "boom",
    "error_kind": "error",
    "last_error": "error: boom",
    "r_on_expire": "retry",
    "r_max": 3,
    **dict.fromkeys(["uid", "host", "version", "backend", "state", "paused"], "x"),
    "key": "k1",
    "answer": "{}",
    "tokens_in": 1,
    "tokens_out": 1,
    "sha256": "ab" * 32,
    "blobs": "ab" * 32,
    "marks": "0123456789abcdef",
    "seq": 0,
    "size": 3,
    "chunks": 1,
    "data": b"abc",
    "pairs": '[{"task_id": "t1", "token": "no-such-token"}]',
    # a session lock no init waits for, taken and given back (init_unlock follows init_lock)
    "lock_key": 4242,
    "name": "pipeline_kit test lock",
    "wait": 0,
}
# Statements that only a MariaDB procedure can run: they SELECT ... INTO its variables.
PROCEDURE_ONLY = re.compile(r"\bINTO :\w+")


def _params(sql: str) -> dict[str, Any]:
    lists = set(_LIST.findall(sql))
    missing = set(_PARAM.findall(sql)) - SAMPLE.keys()
    assert not missing, f"no sample value for {sorted(missing)}: add one to SAMPLE"
    return {name: [SAMPLE[name]] if name in lists else SAMPLE[name] for name in _PARAM.findall(sql)}


def test_each_file_parses_into_named_statements_with_their_options() -> None:
    """The loader keeps a `-- when` line only when asked, writes a limit in, and refuses an
    option a statement does not have and a name given twice."""
    text = (
        "-- name: pick\n-- what it does\nSELECT id FROM tasks\nWHERE a = :a\n  AND b = :b  -- when b\nLIMIT :limit;\n"
    )
    (pick,) = parse(text).values()
    assert pick.doc == "what it does" and pick.options == {"b"}
    assert pick.sql() == "SELECT id FROM tasks WHERE a = :a LIMIT :limit"
    assert pick.sql(limit=5, b=True) == "SELECT id FROM tasks WHERE a = :a AND b = :b LIMIT 5"
    with pytest.raises(KeyError):
        pick.sql(c=True)
    with pytest.raises(ValueError):
        parse(text + text)
    assert {p.name for p in FOLDER.glob("*.sql")} == {"sqlite.sql", "postgresql.sql", "mariadb.sql"}


@pytest.mark.parametrize("name", ["sqlite", "postgresql", "mysql"])
def test_every_statement_the_code_asks_for_is_in_the_file(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each claim variant, the completion, and (on a server) every routine is built from the
    file's statements alone, and nothing in the file is left that none of them runs."""
    used: set[str] = set()
    text_of = Statement.sql

    def recorded(stmt: Statement, **kw: Any) -> str:
        used.add(stmt.name)
        return text_of(stmt, **kw)

    monkeypatch.setattr(Statement, "sql", recorded)
    claims.statements.cache_clear()
    routines.routines.cache_clear()
    dialects._text.cache_clear()  # a text an earlier test asked for would not pass through `recorded`
    try:
        for spent, free, skip, history in itertools.product((True, False), repeat=4):
            if history or not (spent or skip):  # the minimal loop has only the gate
                claims.statements(name, 10, spent=spent, free=free, skip=skip, history=history)
        if name != "sqlite":
            routines.create_statements(name)
    finally:
        claims.statements.cache_clear()
        routines.routines.cache_clear()
        dialects._text.cache_clear()
    # run by the owner's plain path (engine/claim.py, db/finishes.py, engine/lease.py, engine/watchdog.py)
    plain = {"lock_lane", "lane_settings", "running", "spent_books", "remote_jobs", "finish", "accept", "close"}
    plain |= {"count_off", "heartbeat", "note_attempt", "fail_task", "fail_attempt", "book_cost", "event"}
    plain |= {"release_task", "release_attempt", "expired", "reclaim_task", "reclaim_attempt", "reclaim_event"}
    plain |= {"reclaim_alert", "revoke_attempts", "revoke_tokens", "retry", "cancel", "reset", "approve"}
    plain |= {"newly_blocked", "block", "unblock"}  # engine/operator.py, engine/review.py, engine/dependents.py
    plain |= {"vote_renew", "vote_new", "answer"}  # engine/outages.py, engine/answers.py
    plain |= {"init_lock", "init_unlock"}  # db/migrate.py
    plain |= {"chunk", "blob", "blob_seen"}  # store/database.py
    plain |= {"named_checksums", "recorded_marks", "running_for"}  # engine/queries.py (store gc)
    found = dialects.of(name).statements
    assert not (set(found) - used - plain), f"statements nothing runs: {sorted(set(found) - used - plain)}"


@pytest.mark.parametrize("name", ["sqlite.sql", "postgresql.sql", "mariadb.sql"])
def test_the_files_review_the_lanes_the_code_reviews(name: str) -> None:
    """A completion waits for review in exactly REVIEW_LANES, in every file."""
    found = load(name)
    accept = found["finish" if "finish" in found else "accept"].sql()
    (lanes,) = re.findall(r"WHEN lane IN \(([^)]*)\)", accept)
    assert {lane.strip(" '") for lane in lanes.split(",")} == REVIEW_LANES


def test_every_statement_runs_on_its_database(db: Database) -> None:
    """Each statement of the database's file, with every option on and sample parameters, is
    accepted and run by the real server (rolled back after)."""
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id="t1", kind="noop", lane="default")])
    ran, failed = [], {}
    for stmt in dialects.of(db.dialect).statements.values():
        sql = stmt.sql(limit=5, **dict.fromkeys(stmt.options, True))
        if PROCEDURE_ONLY.search(sql):
            continue
        with db.engine.connect() as conn:
            outer = conn.begin()
            try:
                with within(conn, db.dialect) as tx:
                    tx.run(sql, _params(sql))
                ran.append(stmt.name)
            except Exception as exc:  # every failing statement is named, not only the first
                failed[stmt.name] = str(exc).splitlines()[0]
            outer.rollback()
    assert not failed, failed
    assert len(ran) >= 10, ran
