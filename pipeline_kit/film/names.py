"""The names the film's planner and its assembly backend share: kinds, lane, keys, paths.

Kept apart from the planner so the backend can use them without reading the database.
"""

from __future__ import annotations

from pathlib import Path

from pipeline_kit import kinds

CHAPTER_KIND, BOOK_KIND = kinds.names(kinds.Role.FILM)  # the registry's film kinds: a chapter's, the book's
LANE = kinds.BY_NAME[CHAPTER_KIND].lane
MUSIC_KIND = kinds.names(kinds.Role.MUSIC)[0]  # the book's music bed, from a file the user names
MUSIC_LANE = kinds.BY_NAME[MUSIC_KIND].lane  # no worker serves it by default: the file is on one PC
SRT, CONTACT = ".srt", ".contact.png"  # side files published next to a film


def chapter_task_id(bookcode: str, chapter: int) -> str:
    return f"{bookcode}/film/chapter-{chapter:03d}"


def book_task_id(bookcode: str) -> str:
    return f"{bookcode}/film/book"


def music_task_id(bookcode: str) -> str:
    """The task whose output is the book's music bed (made by `film BOOKCODE --music FILE`)."""
    return f"{bookcode}/music"


def chapter_film_path(bookcode: str, chapter: int) -> str:
    """Where a chapter's film is published, relative to the data folder."""
    return f"films/{bookcode}/chapter-{chapter:03d}.mp4"


def book_film_path(bookcode: str) -> str:
    """Where the book's film is published, relative to the data folder."""
    return f"films/{bookcode}/film.mp4"


def side_path(film: Path, suffix: str) -> Path:
    """Where a side file of `film` is published: its suffix replaced (film.mp4 -> film.srt)."""
    return film.with_name(film.stem + suffix) if film.suffix else film.with_name(film.name + suffix)
