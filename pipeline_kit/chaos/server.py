"""Restart the database server a chaos run uses: PostgreSQL or MariaDB on this machine only.

The server is always started again (try/finally), however the stop went: the servers here are
shared with other people's tests.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from pipeline_kit.db.connect import create
from pipeline_kit.errors import BadInput

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
MARIADBD = "/usr/sbin/mariadbd"


def can_restart(url: str) -> bool:
    """True for a PostgreSQL or MariaDB server on this machine."""
    parsed = make_url(url)
    return parsed.get_backend_name() in ("postgresql", "mysql", "mariadb") and parsed.host in LOCAL_HOSTS


def restart(url: str, *, ready_timeout_s: float = 60.0) -> float:
    """Stop and start the server behind `url`; returns the seconds until it answered again."""
    parsed = make_url(url)
    if not can_restart(url):
        raise BadInput(f"cannot restart the server at {parsed.host}: only a local PostgreSQL or MariaDB")
    started = time.monotonic()
    if parsed.get_backend_name() == "postgresql":
        version, cluster = _pg_cluster(parsed.port or 5432)
        try:
            _run(["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, "restart"])
            _wait_ready(url, ready_timeout_s)
        except sa.exc.DBAPIError:  # stopped but not started again: start it
            _run(["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, "start"])
            _wait_ready(url, ready_timeout_s)
    else:
        try:
            _run(["mariadb-admin", "-uroot", "-h127.0.0.1", f"-P{parsed.port or 3306}", "shutdown"])
            _wait_gone(MARIADBD, ready_timeout_s)  # `shutdown` returns before the server has exited
        finally:
            _start_mariadb(url, ready_timeout_s)
    return time.monotonic() - started


def _start_mariadb(url: str, timeout_s: float) -> None:
    """Start mariadbd until it answers (a start while the old one still exits is a no-op)."""
    deadline = time.monotonic() + timeout_s
    while True:
        _run(["start-stop-daemon", "--start", "--oknodo", "--background", "--exec", MARIADBD])
        try:
            _wait_ready(url, 10.0)
            return
        except sa.exc.DBAPIError:
            if time.monotonic() > deadline:
                raise


def _wait_gone(executable: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while _running(executable) and time.monotonic() < deadline:
        time.sleep(0.1)


def _running(executable: str) -> bool:
    """True while a process of this executable exists (read from /proc)."""
    for exe in Path("/proc").glob("[0-9]*/exe"):
        try:
            if os.readlink(exe) == executable:
                return True
        except OSError:
            continue
    return False


def _pg_cluster(port: int) -> tuple[str, str]:
    out = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        version, cluster, cport, *_ = line.split()
        if int(cport) == port:
            return version, cluster
    raise BadInput(f"no local PostgreSQL cluster on port {port}")


def _run(cmd: list[str]) -> None:
    subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def _wait_ready(url: str, timeout_s: float) -> None:
    db = create(url)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                with db.engine.connect() as conn:
                    conn.execute(sa.text("SELECT 1"))
                return
            except sa.exc.DBAPIError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        db.dispose()
