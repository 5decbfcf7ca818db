"""Output names: one file per task whatever its names, and no task replacing another's file."""

from __future__ import annotations

import json
import random
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit import engine, text
from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.engine import TaskSpec
from pipeline_kit.store import open_store
from pipeline_kit.worker import WorkerConfig, run_worker
from pipeline_kit.worker.outputs import OutputPaths

# Names from scripts that a plain-ASCII slug turns into nothing: Han, kana, Arabic, emoji.
_SCRIPTS = (
    ("\u4e00", "\u9fa5"),
    ("\u3041", "\u3096"),
    ("\u30a1", "\u30fa"),
    ("\u0621", "\u064a"),
    ("\U0001f300", "\U0001f64f"),
)


def _names(n: int) -> list[str]:
    rng = random.Random(18)
    names: set[str] = set()
    while len(names) < n:
        lo, hi = rng.choice(_SCRIPTS)
        names.add("".join(chr(rng.randint(ord(lo), ord(hi))) for _ in range(rng.randint(1, 4))))
    return sorted(names)


def test_a_thousand_foreign_names_get_a_thousand_paths(tmp_path: Path) -> None:
    """Output paths are unique per task: a thousand distinct Chinese, Japanese, Arabic and emoji
    character names give a thousand distinct sheet paths, each under the book's folder, and the
    same name always gives the same path."""
    names = _names(1000)

    def path(name: str) -> Path:
        return OutputPaths.for_task(
            tmp_path,
            task_id=text.graph.sheet_task_id("bk", name),
            kind="character_sheet",
            bookcode="bk",
            shot_id=None,
            suffix=".png",
            token="t" * 32,
        ).final

    paths = [path(name) for name in names]
    assert len(set(paths)) == 1000
    assert len({p.name.casefold() for p in paths}) == 1000  # also on case-blind file systems
    assert all(p.parent == tmp_path / "bk" / "tasks" and len(p.name.encode()) < 200 for p in paths)
    assert path(names[0]) == paths[0]
    assert path("曹操").name.startswith("char-曹操-")  # readable where the script allows


def test_publish_onto_another_tasks_output_is_refused(db: Database, tmp_path: Path) -> None:
    """A task never replaces the file another task recorded as its output: the second of two
    tasks asking for the same file fails for good (output_taken) and the first's file stays."""
    with db.engine.begin() as conn:
        engine.enqueue(
            conn,
            [
                TaskSpec(task_id=tid, kind="noop", lane="default", params={"publish_as": "films/bk/same.json"})
                for tid in ("first", "second")
            ],
        )
    run_worker(
        db,
        WorkerConfig(
            worker_id="w",
            lanes=("default",),
            backend="noop",
            until_empty=True,
            outputs=tmp_path / "outputs",
            spool=tmp_path / "spool",
            progress=False,
        ),
    )
    with db.engine.connect() as conn:
        rows = {r.task_id: r for r in conn.execute(sa.select(tasks))}
    assert rows["first"].status == "completed" and rows["second"].status == "failed"
    assert "belongs to task first" in rows["second"].last_error
    published = open_store(db, cache=tmp_path / "check").fetch(rows["first"].output_path, rows["first"].result)
    assert json.loads(published.read_text())["task_id"] == "first"


ZH_BOOK = "第一回 桃园结义\n" + "".join(
    f"曹操道：“{i}来。”刘备说：“好。”孙权曰：“可。”诸葛亮笑道：“妙。”天色渐晚，众人各自散去。\n" for i in range(6)
)


def test_a_split_chinese_book_gets_a_sheet_file_per_character(sqlite_db: Database, tmp_path: Path) -> None:
    """Data loss guard: each named character of a Chinese book gets its own sheet file (before,
    every Han name became `_-character_sheet.png` and each sheet overwrote the last)."""
    book = text.ingest_text(sqlite_db, ZH_BOOK, "三国小试", lang="zh")
    text.split_book(sqlite_db, book.bookcode)
    run_worker(
        sqlite_db,
        WorkerConfig(
            worker_id="w",
            lanes=("image",),
            until_empty=True,
            outputs=tmp_path / "outputs",
            spool=tmp_path / "spool",
            progress=False,
        ),
    )
    with sqlite_db.engine.connect() as conn:
        sheets = conn.execute(
            sa.select(tasks.c.status, tasks.c.output_path, tasks.c.result).where(tasks.c.kind == "character_sheet")
        ).all()
    assert len(sheets) == 4 and {s.status for s in sheets} == {"completed"}
    assert len({s.output_path for s in sheets}) == 4
    assert len({s.result["sha256"] for s in sheets}) == 4  # four drawings, none overwritten
    assert all((tmp_path / s.output_path).is_file() for s in sheets)  # store names, in the store's folder
