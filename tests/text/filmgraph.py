"""Checks of a book's task graph as the film needs it, computed from the stored shots and
chapters alone (not from the planner under test), and helpers that drive chapters in."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import sqlalchemy as sa

from pipeline_kit import engine
from pipeline_kit.db import Database
from pipeline_kit.db.schema import chapters, characters, shots, task_deps, tasks
from pipeline_kit.film import book_task_id, chapter_task_id

LANES = ("image", "video", "voice", "assembly", "llm")


def check_film_graph(db: Database, bookcode: str) -> None:
    """Every dependency names a stored task; each chapter with shots has exactly one assembly,
    after exactly its shots' clips and voices, in shot order; once every chapter is split, one book assembly
    after exactly those chapter films in chapter order; pending tasks count their unfinished
    dependencies; every name a shot gives is in the cast, whose first and last shots are right."""
    with db.engine.connect() as conn:
        split = dict(
            conn.execute(sa.select(chapters.c.number, chapters.c.split_at).where(chapters.c.bookcode == bookcode)).all()
        )
        by_chapter: dict[int, list[str]] = defaultdict(list)
        named: list[tuple[str, list[str]]] = []
        for row in conn.execute(
            sa.select(shots.c.shot_id, shots.c.chapter, shots.c.characters)
            .where(shots.c.bookcode == bookcode)
            .order_by(shots.c.chapter, shots.c.seq)
        ):
            by_chapter[row.chapter].append(row.shot_id)
            named.append((row.shot_id, list(row.characters or ())))
        rows = {r.task_id: r for r in conn.execute(sa.select(tasks).where(tasks.c.bookcode == bookcode))}
        deps: dict[str, set[str]] = defaultdict(set)
        for dep in conn.execute(sa.select(task_deps).where(task_deps.c.task_id.in_(list(rows)))):
            deps[dep.task_id].add(dep.depends_on)
        cast = {
            r.name: (r.first_shot, r.last_shot)
            for r in conn.execute(sa.select(characters).where(characters.c.bookcode == bookcode))
        }
    missing = sorted(d for ds in deps.values() for d in ds if d not in rows)
    assert not missing, f"dependencies on tasks that do not exist: {missing[:3]}"
    filmed = sorted(n for n, ids in by_chapter.items() if ids)
    chapter_tasks = sorted(t for t, r in rows.items() if r.kind == "assemble_chapter")
    assert chapter_tasks == sorted(chapter_task_id(bookcode, n) for n in filmed)
    for n in filmed:
        task = chapter_task_id(bookcode, n)
        wanted = {f"{s}/{kind}" for s in by_chapter[n] for kind in ("video", "voice")}
        assert deps[task] == wanted, f"chapter {n}'s film waits for other clips or voices"
        assert [s["shot_id"] for s in rows[task].params["shots"]] == by_chapter[n]
    books = [t for t, r in rows.items() if r.kind == "assemble_book"]
    if filmed and all(at is not None for at in split.values()):
        assert books == [book_task_id(bookcode)]
        book = book_task_id(bookcode)
        assert deps[book] == {chapter_task_id(bookcode, n) for n in filmed}
        assert [c["chapter"] for c in rows[book].params["chapters"]] == filmed
    assert len(books) <= 1
    for task_id, row in rows.items():
        if row.status == "pending":
            open_deps = sum(rows[d].status != "completed" for d in deps[task_id])
            assert row.deps_remaining == open_deps, f"{task_id} counts {row.deps_remaining} of {open_deps}"
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    for shot_id, names in named:
        for name in names:
            first.setdefault(name, shot_id)
            last[name] = shot_id
    assert set(first) <= set(cast), f"shots name characters the cast lacks: {sorted(set(first) - set(cast))}"
    assert {n: cast[n] for n in first} == {n: (first[n], last[n]) for n in first}


def finish_all(db: Database) -> int:
    """Complete every task that can run, as workers would (no files: the graph is what is checked)."""
    done = 0
    while leases := engine.claim(db, "w-test", LANES, limit=100):
        engine.complete_many(
            db, [engine.Completion(task_id=lease.task_id, token=lease.token, result={}) for lease in leases]
        )
        done += len(leases)
    return done


def chapter_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")
