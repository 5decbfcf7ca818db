"""The worker account's writes: lease-checked routines that run as the owner (SECURITY DEFINER).

A worker account (security.py) holds SELECT on what it reads and no INSERT, UPDATE or DELETE on
any table; every write a worker makes is one of these routines, each taking the lease token and
touching only that lease's task and attempt (a reclaim only expired leases; a blob only one the
completion it just made under its lease names, in that completion's transaction). Every
statement in a routine is a named one of the database's SQL file (db/sql/), the same text the
owner's plain path runs, rendered with :name as the routine's p_name parameter (`body`); what
is here is the procedural code around them.

PostgreSQL: PL/pgSQL functions (plans cached per session), `SET search_path` pinned, EXECUTE
taken from PUBLIC and given to the worker role only; the internal helper is never granted.
MariaDB: `SQL SECURITY DEFINER` procedures; a list travels as a JSON array, and a statement
that names one is prepared from its text with the list written out (see `body`). What each
database's procedural code spells differently is in `_Spell`; the routines themselves are
listed once (`_routines`).
A worker account never reads a lease token (security.py): it has its own from its claim.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from pipeline_kit.db import claims, dialects
from pipeline_kit.db.schema import tasks

PREFIX = "pk_"  # every routine's name begins so (security.py knows a missing one by it)
NO_LEASE = "permission denied: the caller holds no lease for this"  # a routine's refusal of a write
_LIST = re.compile(r"\b(NOT )?IN :(\w+)")
_NAME = re.compile(r"(?<![:\w]):(\w+)")
_JSON_ITEM = {"rows": "BIGINT"}  # a list's item type on MariaDB, when not a task id (or a lane, book, kind)
_MY_TEXT = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"


def _json_list(name: str) -> str:
    item = _JSON_ITEM.get(name, _MY_TEXT)
    return f"JSON_TABLE(p_{name}, '$[*]' COLUMNS (v {item} PATH '$')) AS j_{name}"


def refused_for_lease(exc: BaseException) -> bool:
    """Whether a routine refused a write because the caller no longer holds the lease."""
    return isinstance(exc, sa.exc.DBAPIError) and NO_LEASE in str(exc.orig)


def body(dialect: str, sql: str) -> str:
    """A neutral statement (db/driver.py's form) inside a routine: :name is the parameter p_name.

    A list is PostgreSQL's array, MariaDB's JSON array. MariaDB (10.11) runs a single-table
    UPDATE's IN-subquery once per row of the table, and plans a SELECT's over a JSON_TABLE as a
    scan of the whole index, so a statement that names a list runs there as the plain path
    sends it: prepared from its text with the list written out (`_inlined`)."""
    if dialect == "mysql" and _LIST.search(sql):
        return _inlined(sql)

    def listed(m: re.Match[str]) -> str:
        negated, name = bool(m.group(1)), m.group(2)
        if dialect == "postgresql":
            return f"<> ALL(p_{name})" if negated else f"= ANY(p_{name})"
        return f"{'NOT ' if negated else ''}IN (SELECT v FROM {_json_list(name)})"

    return _NAME.sub(r"p_\1", _LIST.sub(listed, sql))


_TOKEN = re.compile(r"\b(?:NOT )?IN :\w+|\bINTO :\w+|(?<![:\w]):\w+")


def _inlined(sql: str) -> str:
    """MariaDB: run `sql` as a prepared statement built from its text, each value written in
    as a quoted literal (QUOTE) and each list as its quoted items (an empty one as an empty
    subquery, so IN finds nothing and NOT IN everything)."""
    pieces, at, into = [], 0, []
    for m in _TOKEN.finditer(sql):
        pieces.append("'" + sql[at : m.start()].replace("'", "''") + "'")
        token = m.group(0)
        if token.startswith("INTO"):  # a prepared statement sets a session variable, copied after
            into.append(token.rsplit(":", 1)[1])
            pieces.append(f"'INTO @pk_{into[-1]}'")
        elif token.startswith(":") and sql[: m.start()].endswith("LIMIT "):
            pieces.append(f"p_{token[1:]}")  # an integer, written as digits
        elif token.startswith(":"):
            pieces.append(f"QUOTE(p_{token[1:]})")
        else:
            name = token.rsplit(":", 1)[1]
            item = "v" if name in _JSON_ITEM else "QUOTE(v)"
            negated = "NOT " if token.startswith("NOT") else ""
            pieces.append(
                f"'{negated}IN (', (SELECT COALESCE(GROUP_CONCAT({item}), 'SELECT NULL FROM DUAL WHERE FALSE') "
                f"FROM {_json_list(name)}), ')'"
            )
        at = m.end()
    pieces.append("'" + sql[at:].replace("'", "''") + "'")
    copy = "".join(f"; SET p_{name} = @pk_{name}" for name in into)
    return (
        f"SET @pk_sql = CONCAT({', '.join(pieces)});\n"
        "PREPARE pk_stmt FROM @pk_sql; EXECUTE pk_stmt; SET @pk_changed = ROW_COUNT(); "
        f"DEALLOCATE PREPARE pk_stmt{copy}"
    )


@dataclass(frozen=True)
class Routine:
    """One routine of one database: its parameters (name, PostgreSQL type; MariaDB's follows
    from it) in call order, what it returns (PostgreSQL) and its body."""

    name: str
    params: tuple[tuple[str, str], ...]
    returns: str
    body: str


def _p(*specs: str) -> tuple[tuple[str, str], ...]:
    """'name type' specs as (name, type)."""
    return tuple(tuple(spec.split(" ", 1)) for spec in specs)  # type: ignore[misc]


@dataclass(frozen=True)
class _Spell:
    """How one database spells what the routines' procedural code needs, side by side (the
    statements themselves are its SQL file's)."""

    dialect: str
    found: str  # the last statement changed a row

    def __call__(self, name: str) -> str:
        """A named statement of this database's file, as a routine's body runs it."""
        return body(self.dialect, dialects.of(self.dialect).sql(name))

    def ret(self, value: str) -> str:
        """Return `value` and stop (a MariaDB procedure returns a one-row result set)."""
        return f"RETURN {value};" if self.dialect == "postgresql" else f"SELECT {value}; LEAVE proc;"

    def unless_found(self, then: str) -> str:
        return f"IF NOT {self.found} THEN {then} END IF;"

    def refuse_unless(self, guard: str, message: str = NO_LEASE) -> str:
        """Refused, unless the named guard (a SELECT of one boolean) holds, like a missing
        privilege (PostgreSQL's 42501, MariaDB's 1370), so callers see one kind of refusal;
        `NO_LEASE` tells a lease lost meanwhile (`refused_for_lease`) from a missing grant."""
        if self.dialect == "postgresql":
            return f"IF NOT ({self(guard)}) THEN RAISE EXCEPTION '{message}' USING ERRCODE = '42501'; END IF;"
        return (
            f"IF NOT ({self(guard)}) THEN SIGNAL SQLSTATE '42000' SET MYSQL_ERRNO = 1370, "
            f"MESSAGE_TEXT = '{message}'; END IF;"
        )


_SPELL = {"postgresql": _Spell("postgresql", "FOUND"), "mysql": _Spell("mysql", "ROW_COUNT() > 0")}

# Types of the routines' parameters: PostgreSQL's, and MariaDB's for each (a list is JSON text).
_UTF8 = "CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
_MY_TYPES = {
    "text": f"LONGTEXT {_UTF8}",
    "text[]": f"LONGTEXT {_UTF8}",
    "json": f"LONGTEXT {_UTF8}",
    "float8": "DOUBLE",
    "boolean": "BOOLEAN",
    "bytea": "LONGBLOB",
    "bigint": "BIGINT",
    "integer": "INT",
}


def _claim_columns() -> str:
    types = {c.name: c.type.compile(dialect=sa.dialects.postgresql.dialect()) for c in tasks.c}
    return ", ".join(f"{name} {types[name]}" for name in claims.COLUMNS.split(", "))


# A MariaDB procedure's list (a JSON array) as rows, its result set.
LIST_OUT = "SELECT v AS task_id FROM JSON_TABLE(:{name}, '$[*]' COLUMNS (v VARCHAR(255) PATH '$')) AS j"
TAKEN = "permission denied: that worker id belongs to another database account"
NO_EVENT = "permission denied: a worker account records no such event, nor one under a worker id it did not register"


def _claim(s: _Spell) -> str:
    """One branch per variant of the plain path's claim (gate or not, spent books, paused kinds),
    so the statement a routine runs is the one the owner's worker would send."""
    d = s.dialect
    has = "cardinality(p_{}) > 0" if d == "postgresql" else "JSON_LENGTH(p_{}) > 0"
    branches = []
    for free, spent, skip in itertools.product((True, False), repeat=3):
        test = " AND ".join(
            ("p_free" if free else "NOT p_free", has.format("spent") if spent else f"NOT {has.format('spent')}")
            + (has.format("skip") if skip else f"NOT {has.format('skip')}",)
        )
        sql = claims.statements(d, None, spent=spent, free=free, skip=skip)
        if d == "postgresql":
            branches.append((test, f"RETURN QUERY {body(d, sql['claim_and_open'])};"))
        else:
            pick = "SELECT COALESCE(JSON_ARRAYAGG(id), '[]') INTO :rows FROM ({}) AS c"
            branches.append((test, f"{body(d, pick.format(sql['lock']))};"))
    chain = "IF " + "\nELSEIF ".join(f"{test} THEN {then}" for test, then in branches[:-1])
    chain += f"\nELSE {branches[-1][1]} END IF;"
    if d == "postgresql":
        return chain.replace("ELSEIF", "ELSIF")
    sql = claims.statements(d, None)
    # the plain path names the claimed rows by their ids; here by the locked ids
    update, read_back, open_ = (
        sql[k].replace("id IN :ids", "id IN :rows") for k in ("update", "read_back", "open_attempts")
    )
    return f"{chain}\n{body(d, update)};\n{body(d, open_)};\n{body(d, read_back)};"


def _finish(s: _Spell) -> str:
    if s.dialect == "postgresql":
        return f"RETURN QUERY {s('finish')};"
    # MariaDB takes the plain path's fast path: accept them all; only when the accept changed
    # fewer rows (a lease lost, a repeated completion) is it undone and redone for the tasks the
    # caller holds, and, if a lease was lost meanwhile, the ones it accepted are read back.
    return (
        "IF @@autocommit AND NOT @@in_transaction THEN SIGNAL SQLSTATE '25000' "  # the savepoint needs the caller's
        "SET MESSAGE_TEXT = 'pk_finish runs inside a transaction'; END IF;\n"
        f"SAVEPOINT pk_finish;\n{s('accept')};\n"
        "IF @pk_changed < JSON_LENGTH(p_ids) THEN ROLLBACK TO SAVEPOINT pk_finish;\n"
        f"  {s('held_ids')};\n  {s('accept')};\n"
        f"  IF @pk_changed < JSON_LENGTH(p_ids) THEN {s('accepted_ids')}; END IF;\nEND IF;\n"
        f"{s('close')};\n{s('count_off')};\n{body('mysql', LIST_OUT.format(name='ids'))};"
    )


def _heartbeat(s: _Spell) -> str:
    if s.dialect == "postgresql":
        return (
            "FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP\n"
            "  p_task_id := p_ids[i]; p_token := p_tokens[i]; p_stage := p_stages[i];\n"
            f"  {s('heartbeat')};\n  IF FOUND THEN RETURN NEXT p_task_id; END IF;\nEND LOOP;"
        )
    item = "JSON_VALUE(p_{}, CONCAT('$[', i, ']'))"
    return (
        "WHILE i < JSON_LENGTH(p_ids) DO\n"
        f"  SET p_task_id = {item.format('ids')}, p_token = {item.format('tokens')}, "
        f"p_stage = {item.format('stages')};\n"
        f"  {s('heartbeat')};\n"
        "  IF ROW_COUNT() > 0 THEN SET p_done = JSON_ARRAY_APPEND(p_done, '$', p_task_id); END IF;\n"
        "  SET i = i + 1;\nEND WHILE;\n"
        f"{body('mysql', LIST_OUT.format(name='done'))};"
    )


def _lease_state(s: _Spell) -> str:
    """Each task's status and whether the caller's token is its current one (a worker account
    reads no token: this is how it tells a repeated completion from a late one)."""
    if s.dialect == "postgresql":
        return (
            "FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP\n"
            "  p_task_id := p_ids[i]; p_token := p_tokens[i];\n"
            f"  RETURN QUERY {s('lease_state')};\nEND LOOP;"
        )
    item = "JSON_VALUE(p_{}, CONCAT('$[', i, ']'))"
    pair = f"JSON_OBJECT('task_id', {item.format('ids')}, 'token', {item.format('tokens')})"
    return (
        f"WHILE i < JSON_LENGTH(p_ids) DO SET p_pairs = JSON_ARRAY_APPEND(p_pairs, '$', {pair});\n"
        f"  SET i = i + 1;\nEND WHILE;\n{s('lease_state')};"
    )


def _block_call(s: _Spell, ids: str) -> str:
    if s.dialect == "postgresql":
        return f"PERFORM pk_block(ARRAY[{ids}]);"
    return f"CALL pk_block(JSON_ARRAY({ids}));"


def _fail(s: _Spell) -> str:
    return (
        f"{s('fail_task')};\n{s.unless_found(s.ret('false'))}\n{s('fail_attempt')};\n{s('book_cost')};\n"
        f"IF NOT p_retry THEN {s('alert')}; {_block_call(s, 'p_task_id')} END IF;\n{s.ret('true')}"
    )


def _reclaim(s: _Spell) -> str:
    """Expired leases, each guarded by its expired token (racing watchdogs reclaim once)."""
    steps = (
        "p_give_up := p_r_on_expire = 'fail' OR p_r_attempts - p_r_base >= p_r_max;\n"
        if s.dialect == "postgresql"
        else "SET p_give_up = p_r_on_expire = 'fail' OR p_r_attempts - p_r_base >= p_r_max;\n"
    )
    steps += f"{s('reclaim_task')};\n"
    then = (
        f"{s('reclaim_attempt')}; {s('reclaim_event')}; {s('reclaim_alert')};\n"
        f"  IF p_give_up THEN {_block_call(s, 'p_r_task')} END IF;\n"
    )
    status = "CASE WHEN p_give_up THEN 'failed' ELSE 'pending' END"
    fetch = "p_r_task, p_r_token, p_r_worker, p_r_attempts, p_r_base, p_r_max, p_r_on_expire"
    if s.dialect == "postgresql":
        return (
            f"FOR {fetch} IN {s('expired')} LOOP\n  {steps}"
            f"  CONTINUE WHEN NOT FOUND;\n  {then}"
            f"  task_id := p_r_task; worker_id := p_r_worker; status := {status}; RETURN NEXT;\nEND LOOP;"
        )
    return (
        "OPEN expired;\nfetching: LOOP\n"
        f"  FETCH expired INTO {fetch};\n  IF p_end THEN LEAVE fetching; END IF;\n  {steps}"
        f"  IF ROW_COUNT() > 0 THEN {then}"
        f"  SET p_out = JSON_ARRAY_APPEND(p_out, '$', JSON_ARRAY(p_r_task, p_r_worker, {status})); END IF;\n"
        "END LOOP;\nCLOSE expired;\n"
        "SELECT task_id, worker_id, status FROM JSON_TABLE(p_out, '$[*]' COLUMNS (task_id VARCHAR(255) PATH '$[0]', "
        "worker_id VARCHAR(128) PATH '$[1]', status VARCHAR(16) PATH '$[2]')) AS j;"
    )


def _block(s: _Spell) -> str:
    """Blocking what waits on a dead task (internal: never granted): through required
    dependencies; the optional dependents of the roots and of the newly blocked go ahead."""
    if s.dialect == "postgresql":
        return (
            f"p_waiting := ARRAY({s('waiting')});\np_newly := ARRAY({s('newly_blocked')});\n{s('block')};\n"
            f"p_dead := p_roots || p_newly;\n{s('went_ahead')};\n{s('waive')};"
        )
    into = "SELECT COALESCE(JSON_ARRAYAGG(task_id), '[]') INTO :{} FROM"
    found = dialects.of("mysql")
    waiting = found.sql("waiting").replace("SELECT task_id FROM waiting", f"{into.format('waiting')} waiting")
    newly = found.sql("newly_blocked").replace("SELECT task_id FROM", into.format("newly"), 1)
    return (
        f"{body('mysql', waiting)};\n{body('mysql', newly)};\n{s('block')};\n"
        "SET p_dead = JSON_MERGE_PRESERVE(p_roots, p_newly);\n"
        f"{s('went_ahead')};\n{s('waive')};"
    )


def _verify(s: _Spell) -> str:
    """The chunks hash to the blob's checksum and add up to its size, or nothing is stored."""
    if s.dialect == "postgresql":
        fail = "RAISE EXCEPTION 'blob % does not match its checksum', left(p_sha256, 12) USING ERRCODE = '22000';"
        return f"IF NOT ({s('blob_matches')}) THEN {fail} END IF;"
    # GROUP_CONCAT stops at group_concat_max_len: lifted for this statement only
    return (
        "SET p_limit = @@SESSION.group_concat_max_len; SET SESSION group_concat_max_len = 4294967295;\n"
        f"SET p_bad = NOT ({s('blob_matches')});\nSET SESSION group_concat_max_len = p_limit;\n"
        "IF p_bad THEN SIGNAL SQLSTATE '22000' SET MESSAGE_TEXT = 'blob does not match its checksum'; END IF;"
    )


def _routines(dialect: str) -> list[Routine]:
    s = _SPELL[dialect]
    found = s.found
    return [
        Routine(
            "pk_claim",
            _p("worker_id text", "token text", "lease_s float8", "lanes text[]", "limit integer", "spent text[]")
            + _p("skip text[]", "free boolean"),
            f"TABLE ({_claim_columns()})",
            _claim(s),
        ),
        Routine(
            "pk_finish",
            _p("ids text[]", "token text", "result json", "path text", "cost float8", "bytes bigint", "model text")
            + _p("settings json", "blobs text"),
            "SETOF varchar",
            _finish(s),
        ),
        Routine(
            "pk_heartbeat",
            _p("worker_id text", "ids text[]", "tokens text[]", "stages text[]", "progress float8", "lease_s float8"),
            "SETOF text",
            _heartbeat(s),
        ),
        Routine(
            "pk_lease_state",
            _p("ids text[]", "tokens text[]"),
            "TABLE (task_id varchar, status varchar, mine boolean)",
            _lease_state(s),
        ),
        Routine(
            "pk_note_attempt",
            _p("task_id text", "token text", "cost float8", "model text", "remote_job_id text", "keep_cost boolean"),
            "void",
            f"{s('note_attempt')};",
        ),
        Routine(
            "pk_event",
            _p("kind text", "task_id text", "worker_id text", "token text", "detail json"),
            "void",
            f"{s.refuse_unless('worker_event', NO_EVENT)}\n{s('event')};",
        ),
        Routine(
            "pk_fail",
            _p("task_id text", "token text", "worker_id text", "retry boolean", "delay_s float8", "error_kind text")
            + _p("error text", "last_error text", "cost float8", "alert json"),
            "boolean",
            _fail(s),
        ),
        Routine(
            "pk_release",
            _p("task_id text", "token text", "error text"),
            "boolean",
            f"{s('release_task')};\n{s.unless_found(s.ret('false'))}\n{s('release_attempt')};\n{s.ret('true')}",
        ),
        Routine(
            "pk_reclaim",
            _p("by text", "limit integer"),
            "TABLE (task_id text, worker_id text, status text)",
            _reclaim(s),
        ),
        Routine(
            "pk_vote",
            _p("provider text", "worker_id text", "reason text", "hold_s float8"),
            "void",
            f"{s.refuse_unless('my_worker', TAKEN)}\n{s('vote_renew')};\nIF NOT {found} THEN {s('vote_new')}; END IF;",
        ),
        Routine(
            "pk_register_worker",
            _p("worker_id text", "uid text", "host text", "version text", "lanes text", "backend text")
            + _p("lease_s float8"),
            "void",
            f"{s('worker_update')};\n"
            f"IF NOT {found} THEN {s.refuse_unless('no_worker', TAKEN)} {s('worker_insert')}; END IF;",
        ),
        Routine("pk_touch_worker", _p("worker_id text", "state text", "paused text"), "void", f"{s('worker_touch')};"),
        Routine(
            "pk_remember_answer",
            _p("task_id text", "token text", "key text", "model text", "answer text", "tokens_in integer")
            + _p("tokens_out integer", "cost float8"),
            "boolean",
            f"{s.refuse_unless('held')}\n{s('answer')};\n{s.ret(found)}",
        ),
        Routine(
            "pk_put_chunk",
            _p("task_id text", "token text", "sha256 text", "seq integer", "data bytea"),
            "void",
            f"{s.refuse_unless('named_blob')}\n{s('chunk')};",
        ),
        Routine(
            "pk_put_blob",
            _p("task_id text", "token text", "sha256 text", "size bigint", "chunks integer"),
            "void",
            f"{s.refuse_unless('named_blob')}\n{_verify(s)}\n{s('blob')};",
        ),
        Routine(
            "pk_blob_seen",
            _p("task_id text", "token text", "sha256 text"),
            "boolean",
            f"{s.refuse_unless('named_blob')}\n{s('blob_seen')};\n{s.ret(found)}",
        ),
    ]


@functools.cache
def routines(dialect: str) -> tuple[Routine, ...]:
    """Every routine a worker account may call, as `dialect` writes it."""
    return tuple(_routines(dialect)) if dialect in _SPELL else ()


# Each routine's local variables (a PostgreSQL DECLARE section; MariaDB declares them one by one).
_LOCALS: dict[str, tuple[tuple[str, str], ...]] = {
    "pk_claim": (("rows", "text[]"),),
    "pk_block": (("waiting", "text[]"), ("newly", "text[]"), ("dead", "text[]")),
    "pk_heartbeat": (("task_id", "text"), ("token", "text"), ("stage", "text"), ("done", "text[]")),
    "pk_lease_state": (("task_id", "text"), ("token", "text"), ("pairs", "text[]")),
    "pk_reclaim": (
        ("r_task", "text"),
        ("r_token", "text"),
        ("r_worker", "text"),
        ("r_attempts", "integer"),
        ("r_base", "integer"),
        ("r_max", "integer"),
        ("r_on_expire", "text"),
        ("give_up", "boolean"),
        ("out", "text[]"),
    ),
    "pk_put_blob": (("limit", "bigint"), ("bad", "boolean")),
}
_MY_EXTRA = {  # MariaDB: counters, defaults, the reclaim's cursor and its end
    "pk_heartbeat": "DECLARE i INT DEFAULT 0; SET p_done = '[]';",
    "pk_lease_state": "DECLARE i INT DEFAULT 0; SET p_pairs = '[]';",
    "pk_reclaim": "DECLARE p_end BOOLEAN DEFAULT FALSE;\n"
    "DECLARE expired CURSOR FOR {expired};\nDECLARE CONTINUE HANDLER FOR NOT FOUND SET p_end = TRUE;\n"
    "SET p_out = '[]';",
}


# PostgreSQL plans a routine's LIMIT p_limit afresh on every call (a generic plan's estimate
# never matches the custom ones'), which cost the claim a third more time than the owner's with
# its literal LIMIT; a generic plan that guesses a tenth of the table joined the claimed rows
# back by a hash join over all of it. The claim keeps one generic plan, joined row by row.
_PG_SETTINGS = {
    "pk_claim": " SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off",
}


def _create(dialect: str, name: str, params: tuple[tuple[str, str], ...], returns: str, text: str) -> str:
    local = _LOCALS.get(name, ())
    if dialect == "postgresql":
        args = ", ".join(f"p_{n} {t}" for n, t in params)
        declare = f"DECLARE {' '.join(f'p_{n} {t};' for n, t in local)}\n" if local else ""
        return (
            f"CREATE OR REPLACE FUNCTION {name}({args}) RETURNS {returns} LANGUAGE plpgsql "
            f"SECURITY DEFINER SET search_path = public, pg_temp{_PG_SETTINGS.get(name, '')} AS $$\n"
            "#variable_conflict use_column\n"
            f"{declare}BEGIN\n{text}\nEND $$"
        )
    args = ", ".join(f"IN p_{n} {_MY_TYPES[t]}" for n, t in params)
    declare = "".join(f"DECLARE p_{n} {_MY_TYPES[t]};\n" for n, t in local)
    extra = _MY_EXTRA.get(name, "").format(expired=_SPELL["mysql"]("expired"))
    return (
        f"CREATE OR REPLACE DEFINER = CURRENT_USER PROCEDURE {name}({args}) SQL SECURITY DEFINER "
        f"MODIFIES SQL DATA\nproc: BEGIN\n{declare}{extra}\n{text}\nEND"
    )


def create_statements(dialect: str) -> list[str]:
    """CREATE OR REPLACE of every routine (run by the tables' owner: they run as it), with
    EXECUTE taken from everyone (PostgreSQL gives it to PUBLIC by default); on PostgreSQL the
    overloads an older version left (earlier parameters) are dropped first."""
    out = []
    if dialect == "mysql":  # a procedure keeps the sql_mode it was made in: QUOTE's escapes must hold
        out.append("SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')")
    if dialect == "postgresql":
        out.append(_drop_overloads((_BLOCK, *routines(dialect))))
    out.append(_create(dialect, "pk_block", _BLOCK.params, "void", _block(_SPELL[dialect])))
    for r in routines(dialect):
        out.append(_create(dialect, r.name, r.params, r.returns, r.body))
    if dialect == "postgresql":
        out += [f"REVOKE ALL ON FUNCTION {signature(r)} FROM PUBLIC" for r in (_BLOCK, *routines(dialect))]
    return out


def _drop_overloads(current: Sequence[Routine]) -> str:
    """PostgreSQL: drop every function of a routine's name whose parameters are not the current
    ones. A function is named by its parameter types, so CREATE OR REPLACE of a routine whose
    parameters changed adds an overload beside the old one, which a worker could still call
    (pk_finish naming no blobs: `store gc` would not spare them); MariaDB replaces by name."""
    names = ", ".join(f"'{r.name}'" for r in current)
    keep = ", ".join(f"'public.{signature(r)}'" for r in current)
    return (
        "DO $$ DECLARE f regprocedure; BEGIN\n"
        "FOR f IN SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        f"WHERE n.nspname = 'public' AND p.proname IN ({names}) AND p.oid <> ALL (ARRAY("
        f"SELECT to_regprocedure(s)::oid FROM unnest(ARRAY[{keep}]) AS s WHERE to_regprocedure(s) IS NOT NULL))\n"
        "LOOP EXECUTE 'DROP FUNCTION ' || f; END LOOP;\nEND $$"
    )


def signature(r: Routine) -> str:
    """The routine's name and parameter types (PostgreSQL names a function by both)."""
    return f"{r.name}({', '.join(t for _, t in r.params)})"


_BLOCK = Routine("pk_block", _p("roots text[]"), "void", "")


def grant_statements(dialect: str, role: str, database: str | None = None) -> list[str]:
    """EXECUTE on every routine for `role` (never on the internal pk_block)."""
    if dialect == "postgresql":
        return [f"GRANT EXECUTE ON FUNCTION {signature(r)} TO {role}" for r in routines(dialect)]
    return [f"GRANT EXECUTE ON PROCEDURE `{database}`.`{r.name}` TO '{role}'@'%'" for r in routines(dialect)]


@functools.cache
def call_sql(dialect: str, name: str) -> str:
    """The SQL that calls a routine, its arguments bound by name (:name; a list as one value,
    see `arguments`)."""
    (r,) = (r for r in routines(dialect) if r.name == name)
    args = ", ".join(f":{n}" for n, _ in r.params)
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
