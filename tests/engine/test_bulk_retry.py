"""An operator acts in one command: `retry` by book, kind, lane, status or error kind, with a
count and `--dry-run`, on every database.

Invariants: a bulk retry takes exactly the tasks its filters pick (failed ones unless told
otherwise), moves them only as the state table's `retry` verb allows, releases their blocked
dependents, keeps every attempt on record, and a dry run changes nothing; a named task that
cannot be retried is refused in one line before anything changes.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.cli import main
from pipeline_kit.db import Database
from pipeline_kit.db.schema import attempts, books, events, tasks
from pipeline_kit.engine import TaskSpec

BOOKS = ("alpha", "beta")


def _statuses(db: Database) -> dict[str, str]:
    with db.engine.connect() as conn:
        return dict(conn.execute(sa.select(tasks.c.task_id, tasks.c.status)).all())


def _attempt_count(db: Database) -> int:
    with db.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(attempts)).scalar_one())


@pytest.fixture
def fleet(db: Database) -> Database:
    """Two books; in each, four frames (two failed as rate_limited, one as bad_prompt, one
    completed) and a clip after each frame; beta also holds a canceled clip."""
    with db.engine.begin() as conn:
        for code in BOOKS:
            conn.execute(sa.insert(books).values(bookcode=code, title=code.title(), lang="en", review=False))
    specs = []
    for code in BOOKS:
        for n in range(4):
            specs.append(TaskSpec(task_id=f"{code}-{n}/image", kind="first_frame", lane="image", bookcode=code))
            specs.append(
                TaskSpec(
                    task_id=f"{code}-{n}/video",
                    kind="video",
                    lane="video",
                    bookcode=code,
                    depends_on=(f"{code}-{n}/image",),
                )
            )
    with db.engine.begin() as conn:
        engine.enqueue(conn, specs)
    for code in BOOKS:
        for n, kind in enumerate(("rate_limited", "rate_limited", "bad_prompt")):
            _claim_only(db, f"{code}-{n}/image")
            _fail_claimed(db, f"{code}-{n}/image", kind)
    engine.cancel_task(db, "beta-3/video")
    return db


def _claim_only(db: Database, task_id: str) -> None:
    """Hold every other pending image task back so the claim takes `task_id`."""
    with db.engine.begin() as conn:
        conn.execute(
            sa.update(tasks)
            .where(tasks.c.lane == "image", tasks.c.status == "pending", tasks.c.task_id != task_id)
            .values(priority=-1)
        )
        conn.execute(sa.update(tasks).where(tasks.c.task_id == task_id).values(priority=1))


def _fail_claimed(db: Database, task_id: str, error_kind: str) -> None:
    (lease,) = engine.claim(db, "w1", ["image"], limit=1)
    assert lease.task_id == task_id
    engine.fail(db, task_id, lease.token, error=f"{error_kind} happened", error_kind=error_kind, retryable=False)


def test_dry_run_counts_and_changes_nothing(fleet: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """`--dry-run` names how many tasks it would retry and writes nothing at all."""
    url = fleet.engine.url.render_as_string(hide_password=False)
    before, tries = _statuses(fleet), _attempt_count(fleet)
    assert main(["--db", url, "retry", "alpha", "--failed", "--kind", "first_frame", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("would retry 3 tasks: ") and "(dry run)" in out, out
    assert _statuses(fleet) == before and _attempt_count(fleet) == tries


def test_retry_by_book_and_kind_takes_only_those(fleet: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """`retry BOOK --failed --kind first_frame` retries that book's failed frames alone, in one
    command, releases their blocked clips, and keeps the failed attempts on record."""
    url = fleet.engine.url.render_as_string(hide_password=False)
    before, tries = _statuses(fleet), _attempt_count(fleet)
    assert before["alpha-0/video"] == "blocked"
    assert main(["--db", url, "retry", "alpha", "--failed", "--kind", "first_frame"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("3 tasks pending again") and "3 dependents released" in out, out
    after = _statuses(fleet)
    changed = {t for t in after if after[t] != before[t]}
    assert changed == {f"alpha-{n}/{lane}" for n in range(3) for lane in ("image", "video")}
    assert all(after[t] == "pending" for t in changed)
    assert after["beta-0/image"] == "failed" and _attempt_count(fleet) == tries
    with fleet.engine.connect() as conn:
        logged = conn.execute(sa.select(sa.func.count()).select_from(events).where(events.c.kind == "retry")).scalar()
    assert logged == 3


def test_retry_by_error_kind_across_books(fleet: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """`--error-kind` picks tasks by how their last attempt failed, in every book when none is
    named; a second run finds nothing left to retry and says so."""
    url = fleet.engine.url.render_as_string(hide_password=False)
    assert main(["--db", url, "retry", "--error-kind", "rate_limited"]) == 0
    assert capsys.readouterr().out.startswith("4 tasks pending again")
    after = _statuses(fleet)
    assert {t for t, s in after.items() if s == "failed"} == {"alpha-2/image", "beta-2/image"}
    assert main(["--db", url, "retry", "--error-kind", "rate_limited"]) == 0
    assert capsys.readouterr().out.startswith("0 tasks pending again")


def test_canceled_only_when_asked_and_by_lane(fleet: Database, capsys: pytest.CaptureFixture[str]) -> None:
    """Canceled tasks stay canceled unless `--canceled` asks for them; `--lane` narrows by lane."""
    url = fleet.engine.url.render_as_string(hide_password=False)
    assert main(["--db", url, "retry", "beta", "--lane", "video"]) == 0
    assert capsys.readouterr().out.startswith("0 tasks pending again")
    assert main(["--db", url, "retry", "beta", "--canceled", "--lane", "video"]) == 0
    assert capsys.readouterr().out.startswith("1 task pending again: beta-3/video")
    assert _statuses(fleet)["beta-3/video"] == "pending"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["retry"], "needs a task id"),
        (["retry", "nobody"], "no task or book named 'nobody'"),
        (["retry", "alpha-3/video"], "only failed or canceled"),
        (["retry", "alpha-0/video"], "blocked by alpha-0/image"),
        (["retry", "alpha-0/image", "alpha-3/image"], "only failed or canceled"),
        (["retry", "alpha-0/image", "--kind", "video"], "not both"),
    ],
)
def test_refusals_are_one_line_and_change_nothing(
    fleet: Database, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """Nothing to retry, an unknown name, or a named task that is not failed or canceled: exit
    2, one line, and not even the retryable tasks named beside it change."""
    url = fleet.engine.url.render_as_string(hide_password=False)
    before = _statuses(fleet)
    assert main(["--db", url, *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err
    assert _statuses(fleet) == before
