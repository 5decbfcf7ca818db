"""Least privilege for worker PCs: a database account that can do a worker's job and nothing else.

A worker claims, heartbeats, completes, fails, releases and reclaims tasks, opens and closes
attempts (with their cost and remote job id), records events, keeps its workers row and its
votes that a provider is down (provider_outages). The
account gets exactly that, column by column (`GRANTS`): it may set a task's lease, state and
result, never its priority, params, kind, lane, book or shot; it may read (not write) lanes,
task_deps, books and pk_meta; it may add blobs to the database output store, never replace one;
nothing of chapters or shots; no DELETE, no TRUNCATE, no DDL.
Column grants cannot tell one status value from another: the account could still mark any task
canceled or completed by hand; the CLI refuses the owner's verbs to it up front (`require_owner`).
SQLite has no roles: protect its file instead.
"""

from __future__ import annotations

import re

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import workers
from pipeline_kit.errors import BadInput, PermissionDenied

_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# What the worker's writes set (engine/lease.py, engine/watchdog.py, engine/dependents.py's
# blocking, db/claims.py, db/finishes.py), by table. tasks: the claim sets status, worker_id,
# lease_token, lease_expires_at, heartbeat_at, stage, progress and attempts; heartbeats the lease,
# stage and progress; completion the result, output_path, cost, last_error, finished_at and the
# dependents' deps_remaining; fail, release and reclaim run_after, retry_base (release only) and
# status, also of dependents a failure blocks.
TASK_COLUMNS = (
    "status",
    "worker_id",
    "lease_token",
    "lease_expires_at",
    "heartbeat_at",
    "stage",
    "progress",
    "attempts",
    "retry_base",
    "run_after",
    "deps_remaining",
    "result",
    "output_path",
    "cost",
    "last_error",
    "finished_at",
)
# attempts: the claim opens one (these columns); the rest are written while and after it runs.
ATTEMPT_OPEN_COLUMNS = ("task_id", "attempt_no", "worker_id", "lease_token", "claimed_at")
ATTEMPT_COLUMNS = (
    "outcome",
    "finished_at",
    "error_kind",
    "error",
    "cost",
    "model",
    "settings",
    "output_bytes",
    "remote_job_id",
    "output_blobs",
)
# workers: a worker's own row, everything in it but its key (engine/registry.py).
WORKER_COLUMNS = tuple(c.name for c in workers.c if not c.primary_key)


def _cols(privilege: str, columns: tuple[str, ...]) -> str:
    return f"{privilege} ({', '.join(columns)})"


# table -> privileges, the same on both servers. A guarded UPDATE reads the columns in its
# WHERE, so SELECT comes with UPDATE. Events are inserted (db/schema.py asks no id back) and read
# by `status` (a run's pace, what went ahead without an optional input), which a worker's PC runs too.
GRANTS: dict[str, tuple[str, ...]] = {
    "tasks": ("SELECT", _cols("UPDATE", TASK_COLUMNS)),
    "attempts": ("SELECT", _cols("INSERT", ATTEMPT_OPEN_COLUMNS), _cols("UPDATE", ATTEMPT_COLUMNS)),
    "events": ("SELECT", "INSERT"),
    "workers": ("SELECT", "INSERT", _cols("UPDATE", WORKER_COLUMNS)),
    "lanes": ("SELECT",),  # a limited lane's claim locks it without a write (db/claims.py)
    "task_deps": ("SELECT",),
    "books": ("SELECT",),  # review switch and budget
    "pk_meta": ("SELECT",),  # the schema version and the output store's URL
    # The database output store (store/database.py): blobs are inserted once and never replaced;
    # finding one already stored refreshes its stored_at, so a sweep spares it.
    "store_blobs": ("SELECT", "INSERT", _cols("UPDATE", ("stored_at",))),
    "store_chunks": ("SELECT", "INSERT"),
    "llm_answers": ("SELECT", "INSERT"),  # director tasks keep each paid chat answer, once
    # A worker's votes that a provider is down (engine/outages.py): withdrawn by expiring, never deleted.
    "provider_outages": ("SELECT", "INSERT", _cols("UPDATE", ("since", "until", "reason"))),
}
SEQUENCES = ("attempts_id_seq", "events_id_seq")  # PostgreSQL: ids of the rows a worker inserts
PLACEHOLDER = "<password>"  # what --print shows instead of a password


def grant_statements(dialect: str, role: str, password: str | None, *, database: str | None) -> list[str]:
    """The SQL that creates (or refreshes) `role` with the worker's privileges on `database`,
    and takes away any other privilege it had there. `password` None: PostgreSQL logs the role
    in by other means (peer, certificate); pass PLACEHOLDER to show where a password goes."""
    if dialect == "sqlite":
        raise BadInput(
            "SQLite has no roles: give worker PCs a PostgreSQL or MariaDB account "
            "(SQLite is for one machine; protect its file with file permissions)"
        )
    if not _ROLE.match(role):
        raise BadInput(f"role name must be lowercase letters, digits and _ (at most 63), got {role!r}")
    if password is not None and (not password or any(ord(c) < 32 for c in password)):
        raise BadInput("the password must be non-empty and contain no control characters")
    if dialect == "postgresql":
        return _postgresql(role, password, database or "postgres")
    if not database:
        raise BadInput("the MariaDB URL must name a database (mysql://host/DATABASE)")
    if password is None:  # 'ROLE'@'%' without one would let anyone on the network in
        raise BadInput("a MariaDB worker account needs a password: --password-env VAR")
    return _mariadb(role, password, database)


def _postgresql(role: str, password: str | None, database: str) -> list[str]:
    login = f"LOGIN PASSWORD {_pg_literal(password)}" if password else "LOGIN"
    return [
        f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') "
        f"THEN CREATE ROLE {role} NOLOGIN; END IF; END $$",
        f"ALTER ROLE {role} {login} NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT",
        # Start from nothing (revoking a table's privileges revokes its column privileges too),
        # so a refresh also takes away what an older grant-worker or a person gave.
        f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}",
        f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {role}",
        f'GRANT CONNECT ON DATABASE "{database}" TO {role}',
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",  # PostgreSQL 15's default; older ones allowed it
        f"GRANT USAGE ON SCHEMA public TO {role}",
        *(f"GRANT {', '.join(privileges)} ON {table} TO {role}" for table, privileges in GRANTS.items()),
        f"GRANT USAGE ON SEQUENCE {', '.join(SEQUENCES)} TO {role}",
    ]


def _mariadb(role: str, password: str, database: str) -> list[str]:
    user = f"'{role}'@'%'"
    auth = f"IDENTIFIED BY {_my_literal(password)}"
    return [
        f"CREATE USER IF NOT EXISTS {user} {auth}",
        f"ALTER USER {user} {auth}",
        # Start from nothing (see _postgresql); MariaDB's REVOKE ALL covers every database, so
        # an account serves one pipeline database: give each its own.
        f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM {user}",
        *(f"GRANT {', '.join(privileges)} ON `{database}`.`{table}` TO {user}" for table, privileges in GRANTS.items()),
    ]


def apply(db: Database, statements: list[str]) -> None:
    """Run the statements (as an account allowed to create roles); on PostgreSQL in one
    transaction, so a worker of a refreshed role never sees it without its privileges."""
    with db.engine.begin() as conn:
        for sql in statements:
            conn.exec_driver_sql(sql.replace("%", "%%"))  # both drivers format %-placeholders


def require_owner(db: Database, command: str) -> None:
    """Refuse, with one line, a command that changes what only the owner may change, when run by
    a worker account: checked up front, since column grants let such an account set a task's
    status (cancel, retry) as a worker must. The probe changes no row."""
    if db.dialect == "sqlite" or not sa.inspect(db.engine).has_table("tasks"):
        return  # no roles; or nothing to protect yet (`init` of an empty database)
    try:
        with db.engine.connect() as conn, conn.begin() as tx:
            conn.execute(sa.text("UPDATE tasks SET priority = priority WHERE 1 = 0"))
            tx.rollback()
    except sa.exc.DBAPIError as exc:
        if permission_denied(exc) is None:
            raise
        raise PermissionDenied(refusal(command)) from None


WORKER_COMMANDS = ("work", "watchdog")  # what a worker account is for


def refusal(command: str) -> str:
    """The one line an account gets for a command it may not run."""
    if command in WORKER_COMMANDS:  # the account lacks something a worker needs: an old grant
        return f"permission denied: this account cannot {command}; run grant-worker for it again as the owner"
    return f"permission denied: this account is a worker account; run {command} as the owner"


# Driver errors that mean "this account may not do that": PostgreSQL's SQLSTATE 42501
# (insufficient_privilege; also "must be owner" of a table); MariaDB's access-denied numbers
# (1044 database, 1142 table, 1143 column, 1227 a global privilege, 1370 a routine).
_PG_STATES = ("42501",)
_MY_CODES = {1044, 1142, 1143, 1227, 1370}


def permission_denied(exc: BaseException) -> str | None:
    """The database's one-line reason when `exc` (or what caused it) is a refused privilege."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        orig = current.orig if isinstance(current, sa.exc.DBAPIError) else current
        state = getattr(orig, "sqlstate", None)
        args = getattr(orig, "args", ())
        code = args[0] if args and isinstance(args[0], int) else None
        if state in _PG_STATES or code in _MY_CODES:
            text = (args[1] if code is not None and len(args) > 1 else str(orig)).strip()
            return text.splitlines()[0] if text else type(orig).__name__
        current = current.__cause__ or current.__context__
    return None


def _pg_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _my_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


__all__ = ["GRANTS", "PLACEHOLDER", "apply", "grant_statements", "permission_denied", "refusal", "require_owner"]
