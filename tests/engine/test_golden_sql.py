"""Each dialect's claim, completion, heartbeat, failure, release and reclaim SQL is kept whole,
laid out to be read, in tests/engine/golden/DIALECT/VERB.sql; these tests fail when what the code
sends differs from those files by anything but whitespace.

The claim and completion statements come from their builders (db/claims.py, db/finishes.py, as
db/driver.py renders them); the other verbs go through SQLAlchemy, so their statements are taken
as the driver receives them during one real call of each verb, on each database. After a change
to the engine's SQL, rewrite the files with `pytest --update-golden tests/engine/test_golden_sql.py`
and read the diff.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from pipeline_kit import engine
from pipeline_kit.db.connect import Database
from pipeline_kit.engine import TaskSpec
from tests.engine.golden import FOLDER, HERE, captured, document, hot_path, normal, parse


def _check(request: pytest.FixtureRequest, dialect: str, verb: str, statements: dict[str, str]) -> None:
    path = HERE / FOLDER[dialect] / f"{verb}.sql"
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(document(statements), encoding="utf-8")
    assert path.exists(), f"{path} is missing: run pytest --update-golden {__file__}"
    assert parse(path.read_text(encoding="utf-8")) == {k: normal(v) for k, v in statements.items()}, (
        f"{path} is not what the code sends: run with --update-golden and read the diff"
    )


@pytest.mark.parametrize("dialect", sorted(FOLDER))
@pytest.mark.parametrize("verb", ["claim", "complete"])
def test_hot_path_sql_is_the_golden_file(request: pytest.FixtureRequest, dialect: str, verb: str) -> None:
    """The claim and completion statements, every optional part included, are the golden files."""
    _check(request, dialect, verb, hot_path(dialect)[verb])


def _leased(db: Database, task_id: str, lease_s: float = 60.0) -> engine.Lease:
    with db.engine.begin() as conn:
        engine.enqueue(conn, [TaskSpec(task_id=task_id, kind="noop", lane="default")])
    (lease,) = engine.claim(db, "w1", ["default"], lease_s=lease_s)
    return lease


def _sent(db: Database, call: Callable[[], object]) -> list[str]:
    with captured(db) as sent:
        call()
    return sent


def test_lease_sql_is_the_golden_file(request: pytest.FixtureRequest, db: Database) -> None:
    """Heartbeat (held and fenced), failure, release and reclaim send the golden files' SQL."""
    held = _leased(db, "a")
    verbs = {
        "heartbeat": {
            "one": _sent(db, lambda: engine.heartbeat(db, "a", held.token, lease_s=60, stage="drawing")),
            "fenced": _sent(db, lambda: engine.heartbeat(db, "a", "not-the-token", lease_s=60, worker_id="w1")),
            "many": _sent(
                db, lambda: engine.heartbeat_many(db, "w1", {"a": held.token}, lease_s=60, stages={"a": "drawing"})
            ),
        },
        "fail": {"retried": _sent(db, lambda: engine.fail(db, "a", held.token, error="boom", worker_id="w1"))},
    }
    db_release = _leased(db, "b")
    verbs["release"] = {"released": _sent(db, lambda: engine.release_many(db, {"b": db_release.token}, worker_id="w1"))}
    _leased(db, "c", lease_s=0.05)
    time.sleep(0.3)
    verbs["reclaim"] = {"expired": _sent(db, lambda: engine.reclaim_expired(db, by="watchdog"))}
    for verb, calls in verbs.items():
        statements = {f"{call}_{k + 1}": sql for call, sent in calls.items() for k, sql in enumerate(sent)}
        _check(request, db.dialect, verb, statements)
