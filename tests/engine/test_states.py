"""The state machine is one table (engine/states.py MOVES: verb -> from -> to -> function), and
the SQL keeps to it: every status literal written in SQL is a `Status` (every outcome literal an
`Outcome`), the hand-written claim and completion SQL moves tasks only as its verb's row says, and
every status change each verb makes in a real database is one its row (or a verb it runs in
turn) allows."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import dialects
from pipeline_kit.db.connect import Database
from pipeline_kit.db.statements import FOLDER
from pipeline_kit.db.schema import books
from pipeline_kit.engine import Completion, TaskSpec
from pipeline_kit.engine.dependents import block_dependents, unblock_dependents
from pipeline_kit.engine.states import MOVES, TRANSITIONS, VERBS, Move, Outcome, Status
from tests.engine.clock import leases_run_out

PACKAGE = Path(__file__).resolve().parents[2] / "pipeline_kit"
# `status = 'x'`, `status <> 'x'`, `status IN ('x', 'y')`, `THEN 'x'`/`ELSE 'x'` of a status CASE,
# and SQLAlchemy's `tasks.c.status == "x"` / `.status.in_(["x"])`
_SQL_STATUS = re.compile(
    r"""\bstatus\s*(?:=|<>|!=|==)\s*["']([a-z_]+)["']"""
    r"""|\bstatus\s*(?:NOT\s+)?IN\s*\(((?:\s*'[a-z_]+',?)+)\)"""
    r"""|\bstatus\.(?:not)?in_\(\[?((?:\s*["'][a-z_]+["'],?)+)"""
)
_CASE = re.compile(r"\bstatus = CASE (.*?) END")
_OUTCOME = re.compile(r"""\boutcome\s*(?:=|==)\s*["']([a-z_]+)["']""")
# Each verb's statements in the SQL files (db/sql/), the ones that move tasks.
_VERB_STATEMENTS = {
    "claim": ("claim_and_open", "claim", "lock", "update", "read_back", "open_attempts"),
    "complete": ("finish", "accept", "close", "count_off"),
    "fail": ("fail_task",),
    "release": ("release_task",),
    "reclaim": ("reclaim_task",),
    "cancel": ("cancel",),
    "retry": ("retry",),
    "reset": ("reset",),
    "block": ("block",),
    "unblock": ("unblock",),
    "approve": ("approve",),
}


def normal(sql: str) -> str:
    """`sql` with every run of whitespace made one space."""
    return " ".join(sql.split())


def verb_sql(dialect: str, verb: str) -> dict[str, str]:
    """A verb's statements of the database's file, every option on."""
    found = dialects.of(dialect).statements
    return {n: found[n].sql(**dict.fromkeys(found[n].options, True)) for n in _VERB_STATEMENTS[verb] if n in found}


def status_literals(text: str) -> set[str]:
    """The task status values written as literals in `text` (SQL or SQLAlchemy source)."""
    found: set[str] = set()
    for m in _SQL_STATUS.finditer(text):
        found.update(re.findall(r"""["']([a-z_]+)["']""", m.group(0)))
    for m in _CASE.finditer(normal(text)):
        found.update(re.findall(r"(?:THEN|ELSE) '([a-z_]+)'", m.group(1)))
    return found


def _sources() -> dict[str, str]:
    """Every module of the package that may touch the database (backends may not: their `status`
    is a provider's) and every SQL file, by path."""
    files = [*(p for p in PACKAGE.rglob("*.py") if "backends" not in p.parts), *FOLDER.glob("*.sql")]
    return {str(p): p.read_text(encoding="utf-8") for p in files}


def test_the_scan_sees_status_literals() -> None:
    """The scan finds literals in each form it claims to read (else the next test proves nothing)."""
    assert status_literals("WHERE status = 'pending' AND status IN ('failed', 'blockd')") == {
        "pending",
        "failed",
        "blockd",
    }
    assert status_literals("SET status = CASE WHEN x THEN 'awaiting_review' ELSE 'done' END") == {
        "awaiting_review",
        "done",
    }
    assert status_literals('tasks.c.status == "processing", tasks.c.status.in_(["completed"])') == {
        "processing",
        "completed",
    }


def test_every_status_literal_is_a_status() -> None:
    """No SQL in the package (its SQL files included) names a status or outcome that does not exist."""
    statuses, outcomes = {s.value for s in Status}, {o.value for o in Outcome}
    wrong = {path: sorted(status_literals(text) - statuses) for path, text in _sources().items()}
    wrong_outcomes = {path: sorted(set(_OUTCOME.findall(text)) - outcomes) for path, text in _sources().items()}
    assert {p: w for p, w in wrong.items() if w} == {}
    assert {p: w for p, w in wrong_outcomes.items() if w} == {}


def guarded_states(where: str) -> frozenset[Status]:
    """The states a statement's conditions let a row be in: every state, narrowed by each
    `status = 'x'`, `status IN (...)` and `status NOT IN (...)` it says (an alias's excepted)."""
    allowed = frozenset(Status)
    for op, values in re.findall(r"(?<![.\w])status (=|IN|NOT IN) (\('[^)]*\)|'[a-z_]+')", where):
        named = frozenset(Status(v) for v in re.findall(r"'([a-z_]+)'", values))
        allowed &= frozenset(Status) - named if op == "NOT IN" else named
    return allowed


def test_the_guard_reading_sees_each_form() -> None:
    """The guard reading finds each form (else the next test proves nothing)."""
    assert guarded_states("task_id = :t AND status = 'blocked'") == {Status.BLOCKED}
    assert guarded_states("status IN ('failed', 'canceled')") == {Status.FAILED, Status.CANCELED}
    assert guarded_states("status NOT IN ('completed', 'canceled')") == frozenset(Status) - {_C, _X}
    assert guarded_states("task_id IN :ids") == frozenset(Status)


_C, _X = Status.COMPLETED, Status.CANCELED


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql", "mysql"])
@pytest.mark.parametrize("verb", sorted(_VERB_STATEMENTS))
def test_hand_written_sql_moves_as_its_verb_says(dialect: str, verb: str) -> None:
    """Each UPDATE of tasks in a verb's statements (the SQL files) sets a status its verb may set,
    and only on rows in a state its verb may take tasks from."""
    move, statements = VERBS[verb], verb_sql(dialect, verb)
    changed = 0
    for name, sql in statements.items():
        text = normal(sql)
        sets = re.search(r"UPDATE tasks SET (?:(?! WHERE ).)*?(?<![.\w])(status = ('[a-z_]+'|CASE .*? END))", text)
        if not sets:
            continue
        changed += 1
        assert {Status(t) for t in status_literals(sets.group(1))} <= move.targets, name
        where = text.replace(sets.group(1), "", 1).split(" RETURNING ", 1)[0]
        if "lock" in statements and name == "update":  # MariaDB updates the ids its locking read picked
            where = normal(statements["lock"])
        assert guarded_states(where) <= move.sources, (name, where)
    assert changed, f"no statement of {verb} sets a status"


def test_table_names_real_functions_and_is_transitions() -> None:
    """Every row's function exists, its follow-on verbs are rows, and TRANSITIONS is the table's."""
    for move in MOVES:
        module, name = move.does.split(":")
        assert callable(getattr(importlib.import_module(f"pipeline_kit.engine.{module}"), name)), move
        assert set(move.then) <= set(VERBS), move
    assert TRANSITIONS[Status.COMPLETED] == {Status.PENDING}
    assert Status.PROCESSING in TRANSITIONS[Status.PENDING]


# --- every status change, observed in the database ---------------------------------------------

_WATCH = """CREATE TRIGGER pk_test_moves AFTER UPDATE OF status ON tasks WHEN old.status <> new.status
BEGIN INSERT INTO pk_test_moves (task_id, before, after) VALUES (new.task_id, old.status, new.status); END"""


def _allowed(move: Move) -> set[tuple[Status, Status]]:
    pairs = {(s, t) for s in move.sources for t in move.targets if s != t}
    for verb in move.then:
        pairs |= _allowed(VERBS[verb])
    return pairs


class Watch:
    """Runs verbs on a SQLite database whose trigger logs every status change, and checks each
    against the verb's row."""

    def __init__(self, db: Database) -> None:
        self.db, self.seen = db, set()
        with db.engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE pk_test_moves (task_id TEXT, before TEXT, after TEXT)")
            conn.exec_driver_sql(_WATCH)

    def run(self, verb: str, call: Callable[[], object]) -> set[tuple[Status, Status]]:
        with self.db.engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM pk_test_moves")
        call()
        with self.db.engine.begin() as conn:
            moved = {(Status(b), Status(a)) for b, a in conn.exec_driver_sql("SELECT before, after FROM pk_test_moves")}
        assert moved, f"{verb} changed no status: the scenario does not exercise it"
        assert moved <= _allowed(VERBS[verb]), (verb, moved - _allowed(VERBS[verb]))
        self.seen.add(verb)
        return moved


def _add(db: Database, *specs: TaskSpec) -> None:
    with db.engine.begin() as conn:
        engine.enqueue(conn, list(specs))


def _claim(db: Database, watch: Watch, lane: str = "default", lease_s: float = 60.0) -> engine.Lease:
    leases: list[engine.Lease] = []
    watch.run("claim", lambda: leases.extend(engine.claim(db, "w1", [lane], lease_s=lease_s)))
    return leases[0]


def test_every_verb_moves_as_the_table_says(sqlite_db: Database) -> None:
    """Each verb, run for real, changes statuses only as MOVES allows; every row is exercised."""
    db, watch = sqlite_db, Watch(sqlite_db)
    with db.engine.begin() as conn:
        conn.execute(sa.insert(books).values(bookcode="bk", title="t", lang="en", review=True))
    _add(
        db,
        TaskSpec(task_id="a", kind="noop", lane="default"),
        TaskSpec(task_id="b", kind="noop", lane="default", depends_on=("a",)),
    )
    a = _claim(db, watch)
    watch.run("fail", lambda: engine.fail(db, "a", a.token, error="no", retryable=False))  # b blocked
    watch.run("retry", lambda: engine.retry_task(db, "a"))  # b unblocked
    a = _claim(db, watch)
    watch.run("release", lambda: engine.release_many(db, {"a": a.token}, worker_id="w1"))
    _claim(db, watch, lease_s=30)
    leases_run_out(db)
    watch.run("reclaim", lambda: engine.reclaim_expired(db, by="test"))
    a = _claim(db, watch)
    watch.run("complete", lambda: engine.complete(db, Completion(task_id="a", token=a.token)))
    watch.run("reset", lambda: _in_tx(db, lambda conn: engine.reset_tasks(conn, ["a"], reason="test")))
    watch.run("cancel", lambda: engine.cancel_task(db, "a"))  # b blocked again
    _add(
        db,
        TaskSpec(task_id="p", kind="noop", lane="video"),
        TaskSpec(task_id="q", kind="noop", lane="video", depends_on=("p",)),
    )
    watch.run("block", lambda: _in_tx(db, lambda conn: block_dependents(conn, ["p"])))
    watch.run("unblock", lambda: _in_tx(db, lambda conn: unblock_dependents(conn, ["p"])))
    for task_id in ("img1", "img2"):
        _add(db, TaskSpec(task_id=task_id, kind="image", lane="image", bookcode="bk"))
        lease = _claim(db, watch, lane="image")
        assert watch.run("complete", lambda: engine.complete(db, Completion(task_id=task_id, token=lease.token))) == {
            (Status.PROCESSING, Status.AWAITING_REVIEW)
        }
    watch.run("approve", lambda: engine.approve(db, "img1"))
    watch.run("reject", lambda: engine.reject(db, "img2", "redder"))
    assert watch.seen == set(VERBS)


def _in_tx(db: Database, call: Callable[[sa.Connection], object]) -> None:
    with db.engine.begin() as conn:
        call(conn)


_SETS_STATUS = (
    re.compile(r"UPDATE tasks SET [^;\"]*?(?<![.\w])status = "),  # hand-written SQL in a Python string
    re.compile(r"\.values\((?:[^()]|\([^()]*\))*?\bstatus=", re.S),  # SQLAlchemy's update().values(status=...)
)
# A new task's first status is not a move (enqueue inserts it pending, or blocked behind a dead
# dependency); the bench's minimal loop is its own yardstick, not the engine.
_MAY_SET_STATUS = {"engine/enqueue.py", "bench/raw.py"}


def status_writers(text: str) -> bool:
    """Whether Python source writes a task's status."""
    return any(p.search(text) for p in _SETS_STATUS)


def test_the_writer_scan_sees_both_forms() -> None:
    """The scan finds a status written either way (else the next test proves nothing)."""
    assert status_writers("\"UPDATE tasks SET retry_base = 0, status = 'pending' WHERE x\"")
    assert status_writers("sa.update(tasks).values(\n    stage=None,\n    status=Status.PENDING.value,\n)")
    assert not status_writers("sa.update(tasks).values(params=redraw)")


def test_only_the_sql_files_move_tasks() -> None:
    """Every status change is a named statement of the SQL files, which the test above holds to
    MOVES: no module of the package writes a task's status itself."""
    found = {
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "backends" not in p.parts and status_writers(p.read_text(encoding="utf-8"))
    }
    assert found - _MAY_SET_STATUS == set(), found
