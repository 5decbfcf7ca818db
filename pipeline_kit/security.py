"""Least privilege for worker PCs: a database account that can do a worker's job and nothing else.

A worker claims, heartbeats, completes, fails, releases and reclaims tasks, opens and closes
attempts (with their cost and remote job id), records events, keeps its workers row, its votes
that a provider is down, the chat answers and the blobs of the tasks it holds. The account does
all of that through lease-checked routines that run as the owner (db/routines.py): it gets
EXECUTE on them and SELECT on what it reads (`GRANTS`), and no INSERT, UPDATE or DELETE on any
table, nothing of chapters or shots, no TRUNCATE, no DDL. A stolen worker password can only do
what a worker does to the tasks it holds. SQLite has no roles: protect its file instead.
Run grant-worker as the tables' owner (the routines run as whoever creates them), and again
after an upgrade that changes them.
"""

from __future__ import annotations

import re

import sqlalchemy as sa

from pipeline_kit.db import routines
from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import attempts, events, tasks
from pipeline_kit.errors import BadInput, PermissionDenied

_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _readable(table: sa.Table) -> str:
    """SELECT on every column but the lease token: a token is what a lease-checked routine asks
    for, so no account may read another lease's (its own comes back from its claim)."""
    return f"SELECT ({', '.join(c.name for c in table.c if c.name != 'lease_token')})"


# What a worker reads, the same on both servers; it writes nothing itself.
GRANTS: dict[str, tuple[str, ...]] = {
    "tasks": (_readable(tasks),),
    "attempts": (_readable(attempts),),
    "events": (_readable(events),),  # `status` reads a run's pace, which a worker's PC runs too
    "workers": ("SELECT",),
    "lanes": ("SELECT",),  # a limited lane's claim locks it without a write (db/claims.py)
    "task_deps": ("SELECT",),
    "books": ("SELECT",),  # review switch and budget
    "pk_meta": ("SELECT",),  # the schema version and the output store's URL
    "store_blobs": ("SELECT",),
    "store_chunks": ("SELECT",),
    "llm_answers": ("SELECT",),  # director tasks read each paid chat answer back
    "provider_outages": ("SELECT",),  # which providers the fleet finds down
}
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
        f"REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM {role}",
        f'GRANT CONNECT ON DATABASE "{database}" TO {role}',
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",  # PostgreSQL 15's default; older ones allowed it
        f"GRANT USAGE ON SCHEMA public TO {role}",
        *(f"GRANT {', '.join(privileges)} ON {table} TO {role}" for table, privileges in GRANTS.items()),
        # the worker's writes: the owner's lease-checked routines (CREATE OR REPLACE: a refresh
        # after an upgrade brings them up to date)
        *routines.create_statements("postgresql"),
        *routines.grant_statements("postgresql", role),
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
        *routines.create_statements("mysql"),  # see _postgresql
        *routines.grant_statements("mysql", role, database),
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
# (1044 database, 1142 table, 1143 column, 1227 a global privilege, 1370 a routine). A worker's
# routine that does not exist (PostgreSQL 42883, MariaDB 1305: a grant older than the worker, or
# a routine dropped) is the same want: grant-worker again makes it.
_PG_STATES = ("42501",)
_MY_CODES = {1044, 1142, 1143, 1227, 1370}
_NO_ROUTINE = ("42883", 1305)


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
        text = (args[1] if code is not None and len(args) > 1 else str(orig)).strip()
        missing = (state in _NO_ROUTINE or code in _NO_ROUTINE) and routines.PREFIX in text
        if state in _PG_STATES or code in _MY_CODES or missing:
            return text.splitlines()[0] if text else type(orig).__name__
        current = current.__cause__ or current.__context__
    return None


def _pg_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _my_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


__all__ = ["GRANTS", "PLACEHOLDER", "apply", "grant_statements", "permission_denied", "refusal", "require_owner"]
