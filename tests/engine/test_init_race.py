"""`init` is safe to race: several processes running `pipeline-kit init` at once on one fresh
database of each kind (SQLite, PostgreSQL, MariaDB) all exit 0, with no traceback, and leave the
schema whole: every table, column and index, the current version recorded once, the default
lanes once each, and on PostgreSQL the wake-up triggers."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import create
from pipeline_kit.db.schema import SCHEMA_VERSION, lanes, meta, metadata
from pipeline_kit.engine.lanes import DEFAULT_LANES

from ..conftest import MY_ADMIN, PG_ADMIN, _server_database

RACERS = 4
# Each racer imports everything first, then waits for the go file, so the inits overlap.
RACER = """
import sys, time, pathlib
from pipeline_kit.cli import main
go = pathlib.Path(sys.argv[2])
while not go.exists():
    time.sleep(0.005)
sys.exit(main(["--db", sys.argv[1], "init"]))
"""


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each kind that nothing has initialised: no table at all."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    admin = PG_ADMIN if request.param == "postgresql" else MY_ADMIN
    yield from _server_database(admin, request.param)


def _whole(url: str) -> list[str]:
    """What is missing or doubled in the schema at `url` (empty when it is whole)."""
    db = create(url)
    problems = []
    try:
        inspector = sa.inspect(db.engine)
        for table in metadata.sorted_tables:
            if not inspector.has_table(table.name):
                problems.append(f"table {table.name}")
                continue
            have = {c["name"] for c in inspector.get_columns(table.name)}
            problems += [f"column {table.name}.{c.name}" for c in table.columns if c.name not in have]
            indexes = {i["name"] for i in inspector.get_indexes(table.name)}
            problems += [f"index {i.name}" for i in table.indexes if i.name not in indexes]
        with db.engine.connect() as conn:
            versions = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).scalars().all()
            seeded = sorted(conn.execute(sa.select(lanes.c.lane)).scalars())
            if db.dialect == "postgresql":
                triggers = set(conn.exec_driver_sql("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal").scalars())
                problems += [
                    f"trigger {t}"
                    for t in ("tasks_wake_insert", "tasks_wake_update", "lanes_wake")
                    if t not in triggers
                ]
        if versions != [str(SCHEMA_VERSION)]:
            problems.append(f"schema_version rows {versions}")
        if seeded != sorted(DEFAULT_LANES):
            problems.append(f"lanes {seeded}")
    finally:
        db.dispose()
    return problems


@pytest.mark.db
def test_racing_inits_all_succeed_and_leave_the_schema_whole(fresh_url: str, tmp_path: Path) -> None:
    """RACERS processes run `init` at the same moment on a fresh database: each exits 0 with no
    traceback, one says it created the schema, and the schema is whole afterwards."""
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, fresh_url, str(go)],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(RACERS)
    ]
    time.sleep(3)  # every racer has imported the package and waits for the go file
    go.touch()
    results = [(p.wait(timeout=300), *p.communicate()) for p in racers]
    assert [code for code, _, _ in results] == [0] * RACERS, results
    assert not any("Traceback" in err for _, _, err in results), results
    created = [out for _, out, _ in results if out.startswith("created schema version")]
    assert len(created) == 1, results
    assert _whole(fresh_url) == []
