"""Least privilege for worker PCs: a database role that can claim, heartbeat, complete and fail.

What the worker runtime touches, and nothing else: read and update tasks; read, insert and update
attempts (a guarded UPDATE reads the columns in its WHERE, so SELECT comes with UPDATE); insert
events; read, insert and update its workers row; read lanes (plus the row lock a limited lane's
claim takes), task_deps, books and pk_meta; the sequences behind the inserted ids. No DDL, no
DELETE, no writes to books, chapters or shots. SQLite has no roles: protect its file instead.
"""

from __future__ import annotations

import re


from pipeline_kit.db.connect import Database
from pipeline_kit.errors import BadInput

_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

# table -> privileges, the same on both servers.
GRANTS: dict[str, str] = {
    "tasks": "SELECT, UPDATE",
    "attempts": "SELECT, INSERT, UPDATE",
    "events": "INSERT",
    "workers": "SELECT, INSERT, UPDATE",
    "lanes": "SELECT",
    "task_deps": "SELECT",
    "books": "SELECT",
    "pk_meta": "SELECT",
}
SEQUENCES = ("attempts_id_seq", "events_id_seq")  # PostgreSQL: ids of the rows a worker inserts


def grant_statements(dialect: str, role: str, password: str | None, *, database: str | None) -> list[str]:
    """The SQL that creates (or refreshes) `role` with the worker's privileges on `database`."""
    if dialect == "sqlite":
        raise BadInput("SQLite has no roles: give worker PCs a PostgreSQL or MariaDB account "
                       "(SQLite is for one machine; protect its file with file permissions)")
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
        f'GRANT CONNECT ON DATABASE "{database}" TO {role}',
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",  # PostgreSQL 15's default; older ones allowed it
        f"GRANT USAGE ON SCHEMA public TO {role}",
        *(f"GRANT {privileges} ON {table} TO {role}" for table, privileges in GRANTS.items()),
        # A limited lane's claim locks its row (SELECT ... FOR UPDATE needs an UPDATE privilege):
        # the key column only, which the foreign key from tasks keeps fixed while tasks use the lane.
        f"GRANT UPDATE (lane) ON lanes TO {role}",
        f"GRANT USAGE ON SEQUENCE {', '.join(SEQUENCES)} TO {role}",
    ]


def _mariadb(role: str, password: str, database: str) -> list[str]:
    user = f"'{role}'@'%'"
    auth = f"IDENTIFIED BY {_my_literal(password)}"
    grants = [f"GRANT {privileges} ON `{database}`.`{table}` TO {user}" for table, privileges in GRANTS.items()]
    return [f"CREATE USER IF NOT EXISTS {user} {auth}", f"ALTER USER {user} {auth}", *grants]


def apply(db: Database, statements: list[str]) -> None:
    """Run the statements in one go (as an account allowed to create roles)."""
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for sql in statements:
            conn.exec_driver_sql(sql.replace("%", "%%"))  # both drivers format %-placeholders


def _pg_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _my_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


__all__ = ["GRANTS", "apply", "grant_statements"]
