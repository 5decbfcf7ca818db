"""The book's films in its report: the finished film, the chapter films and their contact sheets,
fetched through the output store and copied beside the page.

Read through the store (never a recorded path on some PC's disk), so a report built on any PC, in
a folder that never saw the files, holds the real films: the page links files in its own folder.
Only what a completed assembly task names is shown; what cannot be fetched is said in one line.
"""

from __future__ import annotations

import html
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import sqlalchemy as sa

from pipeline_kit.db.connect import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.errors import PipelineKitError
from pipeline_kit.film.names import BOOK_KIND, CHAPTER_KIND, CONTACT, SRT
from pipeline_kit.store import Store, open_store, side_name

FOLDER = "films"  # under the report folder, as the store names them: films/BOOK/film.mp4


@dataclass(frozen=True)
class Film:
    """One film in the report: its file relative to the page, its side files, or why it is missing."""

    task_id: str
    name: str  # films/BOOK/film.mp4
    book: bool  # the whole book's film, not a chapter's
    sides: dict[str, str] = field(default_factory=dict)  # ".contact.png" -> relative path
    missing: str = ""  # why it could not be fetched, when it could not


def copy_films(db: Database, bookcode: str | None, out_dir: Path) -> list[Film]:
    """Fetch the completed films of the book (or of every book) through the store in effect
    (cached in this folder's data/cache) into `out_dir/films/`; the book's film first, then the
    chapters in order."""
    query = (sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.output_path, tasks.c.result)
             .where(tasks.c.kind.in_((BOOK_KIND, CHAPTER_KIND)), tasks.c.status == "completed",
                    tasks.c.output_path.is_not(None)))
    if bookcode is not None:
        query = query.where(tasks.c.bookcode == bookcode)
    with db.engine.connect() as conn:
        rows = conn.execute(query).all()
    if not rows:
        return []
    store = open_store(db)
    films = [_copy(store, row, out_dir) for row in rows]
    return sorted(films, key=lambda f: (not f.book, f.name))


def _copy(store: Store, row: sa.Row, out_dir: Path) -> Film:
    name = store.name_of(row.output_path)
    result = dict(row.result or {})
    book = row.kind == BOOK_KIND
    try:
        source = store.fetch(row.output_path, result)
        target = out_dir.joinpath(FOLDER, *PurePosixPath(name).parts[1:])
        target.parent.mkdir(parents=True, exist_ok=True)
        sides = {}
        for suffix in sorted(result.get("sides") or {}):
            shutil.copyfile(side_name(source, suffix), side_name(target, suffix))
            sides[suffix] = side_name(target, suffix).relative_to(out_dir).as_posix()
        shutil.copyfile(source, target)
    except (PipelineKitError, OSError) as exc:
        return Film(row.task_id, name, book, missing=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return Film(row.task_id, target.relative_to(out_dir).as_posix(), book, sides)


def films_html(films: list[Film]) -> str:
    """The report's "Films" section: each film playable and linked, its contact sheet shown."""
    parts = ["<h2>Films</h2>"]
    if not films:
        return parts[0] + "\n<p class='empty'>none yet: no chapter has been assembled</p>"
    for film in films:
        title = "The book's film" if film.book else f"Chapter film {PurePosixPath(film.name).stem}"
        parts.append(f"<h3>{html.escape(title)}</h3>")
        if film.missing:
            parts.append(f"<p class='empty'>{html.escape(film.name)} could not be fetched from the "
                         f"store: {html.escape(film.missing)}</p>")
            continue
        src = html.escape(film.name, quote=True)
        links = [f"<a href='{src}'>{html.escape(PurePosixPath(film.name).name)}</a>"]
        if SRT in film.sides:
            links.append(f"<a href='{html.escape(film.sides[SRT], quote=True)}'>subtitles</a>")
        parts.append(f"<video controls preload='metadata' src='{src}'></video>")
        parts.append(f"<p class='note'>{' · '.join(links)}</p>")
        if CONTACT in film.sides:
            parts.append(f"<img src='{html.escape(film.sides[CONTACT], quote=True)}' "
                         f"alt='contact sheet of {html.escape(title)}'>")
    return "\n".join(parts)
