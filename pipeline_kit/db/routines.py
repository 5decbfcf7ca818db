"""The worker account's writes: lease-checked routines that run as the owner (SECURITY DEFINER).

A worker account (security.py) holds SELECT on what it reads and no INSERT, UPDATE or DELETE on
any table; every write a worker makes is one of these routines, each taking the lease token and
touching only that lease's task and attempt (a reclaim only expired leases; a blob only one the
caller's held attempt named). The owner and SQLite run the same statements as plain SQL: where
a routine does what a plain path does, its body is that path's statement (db/claims.py,
db/finishes.py), rendered with :name as the routine's p_name parameter (`body`).

PostgreSQL: PL/pgSQL functions (plans cached per session), `SET search_path` pinned, EXECUTE
taken from PUBLIC and given to the worker role only; the internal helper is never granted.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import claims, finishes
from pipeline_kit.db.schema import tasks
from pipeline_kit.db.sqltime import sql_now, sql_now_plus

_LIST = re.compile(r"\b(NOT )?IN :(\w+)")
_NAME = re.compile(r"(?<![:\w]):(\w+)")
# A list parameter inside a routine: PostgreSQL takes an array, MariaDB a JSON array of strings.
_ROUTINE_IN = {
    "postgresql": ("= ANY(p_{n})", "<> ALL(p_{n})"),
    "mysql": (
        "IN (SELECT v FROM JSON_TABLE(p_{n}, '$[*]' COLUMNS (v VARCHAR(255) PATH '$')) AS j_{n})",
        "NOT IN (SELECT v FROM JSON_TABLE(p_{n}, '$[*]' COLUMNS (v VARCHAR(255) PATH '$')) AS j_{n})",
    ),
}


def body(dialect: str, sql: str) -> str:
    """A neutral statement (db/driver.py's form) inside a routine: :name is the parameter p_name."""
    sql = _LIST.sub(lambda m: _ROUTINE_IN[dialect][bool(m.group(1))].format(n=m.group(2)), sql)
    return _NAME.sub(r"p_\1", sql)


@dataclass(frozen=True)
class Routine:
    """One routine: its parameters (name, PostgreSQL type, MariaDB type) in call order, what
    it returns (PostgreSQL), and its body per dialect."""

    name: str
    params: tuple[tuple[str, str, str], ...]
    returns: str
    bodies: Mapping[str, str]


def _p(*specs: str) -> tuple[tuple[str, str, str], ...]:
    """'name pgtype|mytype' specs as (name, pgtype, mytype)."""
    out = []
    for spec in specs:
        name, types = spec.split(" ", 1)
        pg, _, my = types.partition("|")
        out.append((name, pg, my or pg))
    return tuple(out)


_TEXT, _ID, _TOKEN = "text|TEXT", "text|VARCHAR(255)", "text|VARCHAR(32)"
_LIST_T = "text[]|LONGTEXT"  # a list of strings: an array, a JSON array on MariaDB
_FLOAT = "double precision|DOUBLE"

# Whether the caller holds the task under this token right now.
HELD = "EXISTS (SELECT 1 FROM tasks WHERE task_id = :task_id AND lease_token = :token AND status = 'processing')"
# ... and its running attempt named this blob before the upload (engine/lease.py's name_blobs).
NAMED_BLOB = (
    "EXISTS (SELECT 1 FROM tasks t JOIN attempts a ON a.task_id = t.task_id AND a.lease_token = t.lease_token "
    "WHERE t.task_id = :task_id AND t.lease_token = :token AND t.status = 'processing' "
    "AND a.outcome IS NULL AND a.output_blobs LIKE CONCAT('%', :sha256, '%'))"
)
# A task's cost is the sum of its attempts' (paid calls of lost attempts included).
TASK_COST = "(SELECT COALESCE(SUM(a.cost), 0.0) FROM attempts a WHERE a.task_id = tasks.task_id)"

EVENT = (
    "INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail) "
    "VALUES ({now}, :kind, :task_id, :worker_id, :token, :detail)"
)
NOTE_ATTEMPT = (
    "UPDATE attempts SET cost = CASE WHEN :keep_cost AND cost IS NOT NULL THEN cost ELSE COALESCE(:cost, cost) END, "
    "model = COALESCE(:model, model), remote_job_id = COALESCE(:remote_job_id, remote_job_id), "
    "output_blobs = COALESCE(:output_blobs, output_blobs) WHERE task_id = :task_id AND lease_token = :token"
)
HEARTBEAT = (
    "UPDATE tasks SET lease_expires_at = {expires}, heartbeat_at = {now}, stage = COALESCE(:stage, stage), "
    "progress = COALESCE(:progress, progress) "
    "WHERE task_id = :task_id AND lease_token = :token AND status = 'processing'"
)
FAIL_TASK = (
    "UPDATE tasks SET last_error = :last_error, lease_expires_at = NULL, stage = NULL, "
    "status = CASE WHEN :retry THEN 'pending' ELSE 'failed' END, "
    "run_after = CASE WHEN :retry THEN {after} ELSE run_after END, "
    "finished_at = CASE WHEN :retry THEN finished_at ELSE {now} END "
    "WHERE task_id = :task_id AND lease_token = :token AND status = 'processing'"
)
FAIL_ATTEMPT = (
    "UPDATE attempts SET outcome = CASE WHEN :retry THEN 'retried' ELSE 'failed' END, finished_at = {now}, "
    "error_kind = :error_kind, error = :error, cost = COALESCE(:cost, cost) "
    "WHERE task_id = :task_id AND lease_token = :token"
)
ALERT = EVENT.replace(":kind", "'alert'").replace(":detail", ":alert")
BOOK_COST = f"UPDATE tasks SET cost = {TASK_COST} WHERE task_id = :task_id"
RELEASE_TASK = (
    "UPDATE tasks SET status = 'pending', lease_expires_at = NULL, stage = NULL, run_after = {now}, "
    "retry_base = retry_base + 1 WHERE task_id = :task_id AND lease_token = :token AND status = 'processing'"
)
RELEASE_ATTEMPT = (
    "UPDATE attempts SET outcome = 'canceled', finished_at = {now}, error_kind = 'released', error = :error "
    "WHERE task_id = :task_id AND lease_token = :token"
)
# A worker's vote that a provider is down (engine/outages.py): a live vote keeps its start.
VOTE_RENEW = (
    "UPDATE provider_outages SET since = CASE WHEN until > {now} THEN since ELSE {now} END, "
    "until = {hold}, reason = COALESCE(:reason, reason) WHERE provider = :provider AND worker_id = :worker_id"
)
VOTE_NEW = (
    "INSERT INTO provider_outages (provider, worker_id, since, until, reason) "
    "VALUES (:provider, :worker_id, {now}, {hold}, :reason)"
)
WORKER_UPDATE = (
    "UPDATE workers SET uid = :uid, host = :host, version = :version, lanes = :lanes, backend = :backend, "
    "started_at = {now}, last_seen_at = {now}, state = 'working', lease_s = :lease_s, paused_reason = NULL, "
    "paused_since = NULL WHERE worker_id = :worker_id"
)
WORKER_INSERT = (
    "INSERT INTO workers (worker_id, uid, host, version, lanes, backend, started_at, last_seen_at, state, lease_s) "
    "VALUES (:worker_id, :uid, :host, :version, :lanes, :backend, {now}, {now}, 'working', :lease_s)"
)
# paused_since first: MariaDB evaluates SET left to right, so it must read the old reason
WORKER_TOUCH = (
    "UPDATE workers SET paused_since = CASE WHEN :paused IS NULL THEN NULL WHEN paused_reason = :paused "
    "THEN paused_since ELSE {now} END, paused_reason = :paused, last_seen_at = {now}, "
    "state = CASE WHEN :paused IS NULL THEN :state ELSE 'paused' END WHERE worker_id = :worker_id"
)
ANSWER = (
    "INSERT INTO llm_answers (key, model, answer, tokens_in, tokens_out, cost, created_at) "
    "VALUES (:key, :model, :answer, :tokens_in, :tokens_out, :cost, {now})"
)
CHUNK = "INSERT INTO store_chunks (sha256, seq, data) VALUES (:sha256, :seq, :data)"
BLOB = "INSERT INTO store_blobs (sha256, size, chunks, stored_at) VALUES (:sha256, :size, :chunks, {now})"
BLOB_SEEN = "UPDATE store_blobs SET stored_at = {now} WHERE sha256 = :sha256"
# The transitive dependents a failure blocks: through required dependencies only.
WAITING = (
    "WITH RECURSIVE waiting(task_id) AS (SELECT task_id FROM task_deps WHERE depends_on IN :roots AND NOT optional "
    "UNION SELECT d.task_id FROM task_deps d JOIN waiting w ON d.depends_on = w.task_id WHERE NOT d.optional) "
    "SELECT task_id FROM waiting"
)
# Optional dependencies on a dead task stop being waited for (counted off once per death).
WAIVE = (
    "UPDATE tasks SET deps_remaining = deps_remaining - (SELECT COUNT(*) FROM task_deps d "
    "WHERE d.task_id = tasks.task_id AND d.optional AND d.depends_on IN :dead) "
    "WHERE status IN ('pending', 'blocked') AND task_id IN "
    "(SELECT task_id FROM task_deps WHERE optional AND depends_on IN :dead)"
)


def _pg(dialect_sql: str) -> str:
    """A statement with the PostgreSQL clock, rendered for a routine's body."""
    return body(
        "postgresql",
        dialect_sql.format(
            now=sql_now("postgresql"),
            expires=sql_now_plus("postgresql", ":lease_s"),
            after=sql_now_plus("postgresql", "LEAST(:delay_s, 86400.0)"),  # a retry waits a day at most
            hold=sql_now_plus("postgresql", "LEAST(:hold_s, 86400.0)"),
        ),
    )


def _claim_columns() -> str:
    types = {c.name: c.type.compile(dialect=sa.dialects.postgresql.dialect()) for c in tasks.c}
    return ", ".join(f"{name} {types[name]}" for name in claims.COLUMNS.split(", "))


def _postgresql() -> list[Routine]:
    claim = {free: claims.statements("postgresql", ":limit", books=True, free=free, kinds=True) for free in (1, 0)}
    finish = finishes.statements("postgresql", finishes.REVIEW_LANES)["finish"]
    return [
        Routine(
            "pk_claim",
            _p("worker_id text", "token text", "lease_s float8", "lanes text[]", "limit integer", "spent text[]")
            + _p("skip text[]", "free boolean"),
            f"TABLE ({_claim_columns()})",
            {
                "postgresql": f"IF p_free THEN RETURN QUERY {body('postgresql', claim[1]['claim_and_open'])};\n"
                f"ELSE RETURN QUERY {body('postgresql', claim[0]['claim_and_open'])}; END IF;"
            },
        ),
        Routine(
            "pk_finish",
            _p("ids text[]", "token text", "result json", "path text", "cost float8", "bytes bigint", "model text")
            + _p("settings json"),
            "SETOF varchar",
            {"postgresql": f"RETURN QUERY {body('postgresql', finish)};"},
        ),
        Routine(
            "pk_heartbeat",
            _p("worker_id text", "ids text[]", "tokens text[]", "stages text[]", "progress float8", "lease_s float8"),
            "SETOF text",
            {
                "postgresql": "FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP\n"
                "  p_task_id := p_ids[i]; p_token := p_tokens[i]; p_stage := p_stages[i];\n"
                f"  {_pg(HEARTBEAT)};\n"
                "  IF FOUND THEN RETURN NEXT p_task_id; END IF;\nEND LOOP;"
            },
            # p_task_id, p_token, p_stage: loop variables (see _create)
        ),
        Routine(
            "pk_note_attempt",
            _p("task_id text", "token text", "cost float8", "model text", "remote_job_id text", "output_blobs text")
            + _p("keep_cost boolean"),
            "void",
            {"postgresql": f"{_pg(NOTE_ATTEMPT)};"},
        ),
        Routine(
            "pk_event",
            _p("kind text", "task_id text", "worker_id text", "token text", "detail json"),
            "void",
            {"postgresql": f"{_pg(EVENT)};"},
        ),
        Routine(
            "pk_fail",
            _p("task_id text", "token text", "worker_id text", "retry boolean", "delay_s float8", "error_kind text")
            + _p("error text", "last_error text", "cost float8", "alert json"),
            "boolean",
            {
                "postgresql": f"{_pg(FAIL_TASK)};\nIF NOT FOUND THEN RETURN false; END IF;\n"
                f"{_pg(FAIL_ATTEMPT)};\n{_pg(BOOK_COST)};\n"
                "IF NOT p_retry THEN\n"
                f"  {_pg(ALERT)};\n"
                "  PERFORM pk_block(ARRAY[p_task_id]);\nEND IF;\nRETURN true;"
            },
        ),
        Routine(
            "pk_release",
            _p("task_id text", "token text", "error text"),
            "boolean",
            {
                "postgresql": f"{_pg(RELEASE_TASK)};\nIF NOT FOUND THEN RETURN false; END IF;\n"
                f"{_pg(RELEASE_ATTEMPT)};\nRETURN true;"
            },
        ),
        Routine(
            "pk_reclaim",
            _p("by text", "limit integer"),
            "TABLE (task_id text, worker_id text, status text)",
            {"postgresql": _PG_RECLAIM},
        ),
        Routine(
            "pk_vote",
            _p("provider text", "worker_id text", "reason text", "hold_s float8"),
            "void",
            {
                "postgresql": f"{_pg(VOTE_RENEW)};\nIF NOT FOUND THEN {_pg(VOTE_NEW)}; END IF;",
            },
        ),
        Routine(
            "pk_register_worker",
            _p("worker_id text", "uid text", "host text", "version text", "lanes text", "backend text")
            + _p("lease_s float8"),
            "void",
            {"postgresql": f"{_pg(WORKER_UPDATE)};\nIF NOT FOUND THEN {_pg(WORKER_INSERT)}; END IF;"},
        ),
        Routine(
            "pk_touch_worker",
            _p("worker_id text", "state text", "paused text"),
            "void",
            {"postgresql": f"{_pg(WORKER_TOUCH)};"},
        ),
        Routine(
            "pk_remember_answer",
            _p("task_id text", "token text", "key text", "model text", "answer text", "tokens_in integer")
            + _p("tokens_out integer", "cost float8"),
            "boolean",
            {
                "postgresql": f"{_PG_REFUSE.format(guard=_pg(HELD))}\n{_pg(ANSWER)} ON CONFLICT DO NOTHING;\n"
                "RETURN FOUND;"
            },
        ),
        Routine(
            "pk_put_chunk",
            _p("task_id text", "token text", "sha256 text", "seq integer", "data bytea"),
            "void",
            {"postgresql": f"{_PG_REFUSE.format(guard=_pg(NAMED_BLOB))}\n{_pg(CHUNK)};"},
        ),
        Routine(
            "pk_put_blob",
            _p("task_id text", "token text", "sha256 text", "size bigint", "chunks integer"),
            "void",
            {"postgresql": f"{_PG_REFUSE.format(guard=_pg(NAMED_BLOB))}\n{_PG_VERIFY}\n{_pg(BLOB)};"},
        ),
        Routine(
            "pk_blob_seen",
            _p("task_id text", "token text", "sha256 text"),
            "boolean",
            {"postgresql": f"{_PG_REFUSE.format(guard=_pg(NAMED_BLOB))}\n{_pg(BLOB_SEEN)};\nRETURN FOUND;"},
        ),
    ]


# Refused like a missing privilege (SQLSTATE 42501), so callers see one kind of refusal.
_PG_REFUSE = (
    "IF NOT {guard} THEN RAISE EXCEPTION 'permission denied: the caller holds no lease for this' "
    "USING ERRCODE = '42501'; END IF;"
)
# The chunks hash to the blob's checksum and add up to its size, or nothing is stored.
_PG_VERIFY = (
    "IF NOT EXISTS (SELECT 1 FROM (SELECT encode(sha256(COALESCE(string_agg(data, ''::bytea ORDER BY seq), "
    "''::bytea)), 'hex') AS sha, COALESCE(SUM(length(data)), 0) AS size, COUNT(*) AS n FROM store_chunks "
    "WHERE sha256 = p_sha256) c WHERE c.sha = p_sha256 AND c.size = p_size AND c.n = p_chunks) THEN "
    "RAISE EXCEPTION 'blob % does not match its checksum', left(p_sha256, 12) USING ERRCODE = '22000'; END IF;"
)
# Reclaim: expired leases, each guarded by its expired token (racing watchdogs reclaim once).
_PG_RECLAIM = """FOR r IN SELECT t.task_id, t.lease_token, t.worker_id, t.attempts, t.retry_base, t.max_attempts,
    l.on_expire FROM tasks t JOIN lanes l ON l.lane = t.lane
    WHERE t.status = 'processing' AND t.lease_expires_at < {now}
    ORDER BY t.lease_expires_at LIMIT p_limit FOR UPDATE OF t SKIP LOCKED LOOP
  give_up := r.on_expire = 'fail' OR r.attempts - r.retry_base >= r.max_attempts;
  UPDATE tasks SET status = CASE WHEN give_up THEN 'failed' ELSE 'pending' END, lease_expires_at = NULL,
    stage = NULL, last_error = 'lease expired (held by ' || coalesce(r.worker_id, 'None') || ')',
    finished_at = CASE WHEN give_up THEN {now} ELSE finished_at END,
    run_after = CASE WHEN give_up THEN run_after ELSE {now} END
    WHERE tasks.task_id = r.task_id AND lease_token = r.lease_token AND tasks.status = 'processing';
  CONTINUE WHEN NOT FOUND;
  UPDATE attempts SET outcome = 'lost', finished_at = {now}, error_kind = 'lease_expired',
    error = 'lease expired before the worker finished'
    WHERE attempts.task_id = r.task_id AND lease_token = r.lease_token AND outcome IS NULL;
  INSERT INTO events (at, kind, task_id, worker_id, lease_token, detail) VALUES ({now}, 'reclaim', r.task_id,
    r.worker_id, r.lease_token, json_build_object('by', p_by, 'status',
    CASE WHEN give_up THEN 'failed' ELSE 'pending' END));
  IF give_up THEN
    INSERT INTO events (at, kind, task_id, worker_id, detail) VALUES ({now}, 'alert', r.task_id, r.worker_id,
      json_build_object('message', 'lease expired: ' || CASE WHEN r.on_expire = 'fail'
      THEN 'lane fails on expiry' ELSE 'lease lost on the last of ' || r.max_attempts || ' attempts' END));
    PERFORM pk_block(ARRAY[r.task_id]);
  END IF;
  task_id := r.task_id; worker_id := r.worker_id;
  status := CASE WHEN give_up THEN 'failed' ELSE 'pending' END;
  RETURN NEXT;
END LOOP;""".format(now=sql_now("postgresql"))
# Internal (never granted): block what waits on `roots` through required dependencies; the
# optional dependents of the roots and of the newly blocked go ahead without them.
_PG_BLOCK = f"""CREATE OR REPLACE FUNCTION pk_block(p_roots text[]) RETURNS void LANGUAGE plpgsql
SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  p_waiting text[]; p_newly text[]; p_dead text[];
BEGIN
  p_waiting := ARRAY({body("postgresql", WAITING)});
  p_newly := ARRAY(SELECT task_id FROM tasks WHERE task_id = ANY(p_waiting) AND status = 'pending');
  UPDATE tasks SET status = 'blocked' WHERE task_id = ANY(p_newly);
  p_dead := p_roots || p_newly;
  INSERT INTO events (at, kind, task_id, detail)
    SELECT {sql_now("postgresql")}, 'went_ahead', d.depends_on,
      json_build_object('without', d.depends_on, 'tasks', COUNT(*), 'first', MIN(d.task_id))
    FROM task_deps d JOIN tasks t ON t.task_id = d.task_id
    WHERE d.optional AND d.depends_on = ANY(p_dead) AND t.status IN ('pending', 'blocked') GROUP BY d.depends_on;
  {body("postgresql", WAIVE)};
END $$"""


@functools.cache
def routines(dialect: str) -> tuple[Routine, ...]:
    """Every routine a worker account may call."""
    return tuple(_postgresql()) if dialect == "postgresql" else ()


_LOOP_VARS = {"pk_heartbeat": "p_task_id text; p_token text; p_stage text;", "pk_reclaim": "r record; give_up boolean;"}


def create_statements(dialect: str) -> list[str]:
    """CREATE OR REPLACE of every routine (run by the tables' owner: they run as it)."""
    out = [_PG_BLOCK, "REVOKE ALL ON FUNCTION pk_block(text[]) FROM PUBLIC"]
    for r in routines(dialect):
        args = ", ".join(f"p_{name} {pg}" for name, pg, _ in r.params)
        declare = f"DECLARE {_LOOP_VARS[r.name]}\n" if r.name in _LOOP_VARS else ""
        out.append(
            f"CREATE OR REPLACE FUNCTION {r.name}({args}) RETURNS {r.returns} LANGUAGE plpgsql "
            "SECURITY DEFINER SET search_path = public, pg_temp AS $$\n#variable_conflict use_column\n"
            f"{declare}BEGIN\n{r.bodies[dialect]}\nEND $$"
        )
        out.append(f"REVOKE ALL ON FUNCTION {signature(r)} FROM PUBLIC")
    return out


def signature(r: Routine) -> str:
    """The routine's name and parameter types (PostgreSQL names a function by both)."""
    return f"{r.name}({', '.join(pg for _, pg, _ in r.params)})"


def grant_statements(dialect: str, role: str) -> list[str]:
    """EXECUTE on every routine for `role`."""
    return [f"GRANT EXECUTE ON FUNCTION {signature(r)} TO {role}" for r in routines(dialect)]


@functools.cache
def call_sql(dialect: str, name: str) -> str:
    """The SQL that calls a routine, its arguments bound by name (:name; a list as one value,
    see `arguments`)."""
    (r,) = (r for r in routines(dialect) if r.name == name)
    args = ", ".join(f":{n}" for n, _, _ in r.params)
    return f"SELECT * FROM {name}({args})" if dialect == "postgresql" else f"CALL {name}({args})"


def arguments(dialect: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters as the routine takes them: a list as an array, or as JSON text on MariaDB."""
    if dialect == "postgresql":
        return {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in params.items()}
    return {k: json.dumps(list(v)) if isinstance(v, (list, tuple)) else v for k, v in params.items()}


def call(conn: sa.Connection, name: str, **params: Any) -> list[Any]:
    """Run a routine in the caller's SQLAlchemy transaction; its rows."""
    dialect = conn.dialect.name
    result = conn.execute(sa.text(call_sql(dialect, name)), arguments(dialect, params))
    return list(result) if result.returns_rows else []


_ENABLED: weakref.WeakKeyDictionary[sa.Engine, bool] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_MAY_WRITE = {
    "postgresql": "SELECT has_any_column_privilege('tasks', 'UPDATE')",
    "mysql": (
        "SELECT EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE = 'UPDATE') "
        "OR EXISTS (SELECT 1 FROM information_schema.SCHEMA_PRIVILEGES WHERE PRIVILEGE_TYPE = 'UPDATE' "
        "AND TABLE_SCHEMA = DATABASE()) OR EXISTS (SELECT 1 FROM information_schema.TABLE_PRIVILEGES "
        "WHERE PRIVILEGE_TYPE = 'UPDATE' AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'tasks')"
    ),
}


def enabled(bind: Any) -> bool:
    """Whether this account writes through the routines: a server account that may not update
    tasks (a worker account); asked once per engine. `bind`: a Database, Engine or Connection."""
    engine = getattr(bind, "engine", bind)
    found = _ENABLED.get(engine)
    if found is None:
        if engine.dialect.name not in _MAY_WRITE:
            found = False
        else:
            with engine.connect() as conn:
                found = not conn.exec_driver_sql(_MAY_WRITE[engine.dialect.name]).scalar()
        with _LOCK:
            _ENABLED[engine] = found
    return found


def names(rows: Sequence[Any]) -> list[str]:
    """The first column of a routine's rows."""
    return [r[0] for r in rows]
