"""The book's films in its report: the finished film, the chapter films and their contact sheets,
fetched through the output store and copied beside the page.

Read through the store (never a recorded path on some PC's disk), so a report built on any PC, in
a folder that never saw the files, holds the real films: the page links files in its own folder.
A notebook's page is served from elsewhere (Voilà, Jupyter), where such links answer 403 or
nothing: there the films are carried inside the page (`films_html(..., embed_from=...)`), up to
a size a page copes with. Only what a completed assembly task names is shown; what cannot be
fetched is said in one line.
"""

from __future__ import annotations

import base64
import html
import mimetypes
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
EMBED_MAX = 32 << 20  # bytes: a larger file is not carried inside a notebook's page, its place is named


@dataclass(frozen=True)
class Film:
    """One film in the report: its file relative to the page, its side files, or why it is missing."""

    task_id: str
    name: str  # films/BOOK/film.mp4
    book: bool  # the whole book's film, not a chapter's
    sides: dict[str, str] = field(default_factory=dict)  # ".contact.png" -> relative path
    missing: str = ""  # why it could not be fetched, when it could not
    picture: str = ""  # its size, frame rate and film profile, and what its sound holds


def copy_films(db: Database, bookcode: str | None, out_dir: Path, store: Store | None = None) -> list[Film]:
    """Fetch the completed films of the book (or of every book) through `store` (default: the
    store in effect, cached in this folder's data/cache) into `out_dir/films/`; the book's film
    first, then the chapters in order."""
    query = sa.select(tasks.c.task_id, tasks.c.kind, tasks.c.output_path, tasks.c.result).where(
        tasks.c.kind.in_((BOOK_KIND, CHAPTER_KIND)), tasks.c.status == "completed", tasks.c.output_path.is_not(None)
    )
    if bookcode is not None:
        query = query.where(tasks.c.bookcode == bookcode)
    with db.reading() as conn:
        rows = conn.execute(query).all()
    if not rows:
        return []
    store = store or open_store(db)
    films = [_copy(store, row, out_dir) for row in rows]
    return sorted(films, key=lambda f: (not f.book, f.name))


def _copy(store: Store, row: sa.Row, out_dir: Path) -> Film:
    name = row.output_path  # its store name
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
    return Film(row.task_id, target.relative_to(out_dir).as_posix(), book, sides, picture=picture_of(result))


def picture_of(result: dict[str, object]) -> str:
    """`1280x720 at 24 fps, film profile provider; sound: speech, music`, from what the assembly
    recorded (empty for a film made before it recorded them)."""
    if not result.get("width"):
        return ""
    said = f"{result['width']}x{result['height']} at {result['fps']} fps"
    said += f", film profile {result['profile']}" if result.get("profile") else ""
    sound = [
        name
        for name, key in (("speech", "voiced_shots"), ("the clips' own sound", "clip_sound_shots"), ("music", "music"))
        if result.get(key)
    ]
    return said + (f"; sound: {', '.join(sound)}" if sound else "")


def films_html(films: list[Film], *, embed_from: Path | None = None) -> str:
    """The report's "Films" section: each film playable and linked, its contact sheet shown.
    Links are relative to the report page; with `embed_from` (the report folder) every file is
    carried in the page itself (a data: address), so a notebook plays it wherever it is served."""
    parts = ["<h2>Films</h2>"]
    if not films:
        return parts[0] + "\n<p class='empty'>none yet: no chapter has been assembled</p>"
    for film in films:
        title = "The book's film" if film.book else f"Chapter film {PurePosixPath(film.name).stem}"
        parts.append(f"<h3>{html.escape(title)}</h3>")
        if film.picture:
            parts.append(f"<p class='note'>{html.escape(film.picture)}</p>")
        if film.missing:
            parts.append(
                f"<p class='empty'>{html.escape(film.name)} could not be fetched from the "
                f"store: {html.escape(film.missing)}</p>"
            )
            continue
        src = _src(film.name, embed_from)
        if src is None:  # too large to carry in a notebook's page
            where = html.escape(str((embed_from or Path()) / film.name))
            parts.append(
                f"<p class='note'>{html.escape(title)} is too large to show here: it is at <code>{where}</code></p>"
            )
        else:
            name = html.escape(PurePosixPath(film.name).name, quote=True)
            saved = f" download='{name}'" if embed_from else ""  # a data: link saves under the film's name
            links = [f"<a href='{src}'{saved}>{name}</a>"]
            subtitles = _src(film.sides[SRT], embed_from) if SRT in film.sides else None
            if subtitles:
                saved = f" download='{name[:-4]}.srt'" if embed_from else ""
                links.append(f"<a href='{subtitles}'{saved}>subtitles</a>")
            parts.append(f"<video controls preload='metadata' src='{src}'></video>")
            parts.append(f"<p class='note'>{' · '.join(links)}</p>")
        contact = _src(film.sides[CONTACT], embed_from) if CONTACT in film.sides else None
        if contact:
            parts.append(_contact_html(contact, PurePosixPath(film.sides[CONTACT]).name, title))
    return "\n".join(parts)


def _contact_html(src: str, name: str, title: str) -> str:
    """A contact sheet at its own size (its labels read, where a page-wide image of a long
    chapter shrank them), in a box about four rows tall that scrolls through the rest; the sheet
    itself is a link that downloads it whole."""
    name = html.escape(name, quote=True)
    return (
        f"<div class='sheet'><a href='{src}' download='{name}' title='download {name}'>"
        f"<img src='{src}' alt='contact sheet of {html.escape(title)}'></a></div>"
        f"<p class='note'>contact sheet: scroll through it, or click it to download {name}</p>"
    )


def _src(relative: str, embed_from: Path | None) -> str | None:
    """How the page names a file of the report: its relative path, or (embedding) the file
    itself as a data: address; None when it is too large to embed."""
    if embed_from is None:
        return html.escape(relative, quote=True)
    path = embed_from / relative
    if path.stat().st_size > EMBED_MAX:
        return None
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode()}"
