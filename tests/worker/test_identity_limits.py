"""A worker id or API identity longer than its column is refused in one line, exit 2, on every
database, before anything is written (PostgreSQL and MariaDB would refuse the row mid-run with
a traceback; SQLite would silently keep what the others cannot). The longest that fits works."""

from __future__ import annotations

import pytest

from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import workers
from pipeline_kit.worker.notebook import notebook_config
from pipeline_kit.errors import BadInput
from tests.faults.helpers import enqueue_frames, row_counts

WORK = ["work", "--lanes", "image", "--backend", "noop", "--until-empty", "--quiet"]
MOST = workers.c.worker_id.type.length


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--worker-id", "渲" * (MOST + 1)], "--worker-id is"),
        (["--worker-id", "pc-1", "--uid", "u" * (workers.c.uid.type.length + 1)], "--uid is"),
    ],
    ids=["worker id", "uid"],
)
def test_too_long_identity_is_refused_before_any_write(
    db: Database, db_url: str, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    """Exit 2, one line naming the flag and the limit, no traceback, every table as it was."""
    enqueue_frames(db, 2)
    before = row_counts(db)
    assert main(["--db", db_url, *WORK, *flags]) == 2
    err = capsys.readouterr().err
    assert says in err and f"at most {MOST}" in err and len(err.strip().splitlines()) == 1, err
    assert row_counts(db) == before


def test_the_longest_id_that_fits_works(db: Database, db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A worker id of exactly the column's length (in Chinese characters, too) runs and is kept whole."""
    enqueue_frames(db, 1)
    worker_id = "渲" * MOST
    assert main(["--db", db_url, *WORK, "--worker-id", worker_id]) == 0, capsys.readouterr().err
    with db.engine.connect() as conn:
        assert conn.execute(workers.select().with_only_columns(workers.c.worker_id)).scalar() == worker_id


def test_the_worker_notebook_refuses_it_too() -> None:
    """The papermill worker's parameters go through the same check."""
    with pytest.raises(BadInput, match="--worker-id is"):
        notebook_config(
            worker_id="x" * (MOST + 1), backend="noop", batch=1, until_empty=True, max_tasks=0, max_minutes=0
        )
