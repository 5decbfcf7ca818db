"""The film: its media, its names, and what is still missing before it can be assembled.

    from pipeline_kit import film
    film.film_status(db, bookcode)   # -> FilmStatus

The media modules (`ffmpeg`, `cards`, `drawing`, `srt`, `timeline`, `dialogue`, `audio`, `names`) never
touch the database; they are what the `assembly` and `sketch` backends build films with. `status`
reads the database. The film's tasks are planned with the rest of the book's task graph, in
`text/film_tasks.py`.
"""

from __future__ import annotations

from typing import Any

# name -> the module defining it; loaded on first use, so the media modules (which the `assembly`
# and `sketch` backends import) never load the database layer through this package.
_EXPORTS = {
    "BOOK_KIND": "names",
    "CHAPTER_KIND": "names",
    "LANE": "names",
    "book_task_id": "names",
    "chapter_task_id": "names",
    "side_path": "names",
    "ChapterStatus": "status",
    "FilmStatus": "status",
    "film_status": "status",
}


def __getattr__(name: str) -> Any:
    """A re-exported name, imported from its module when first asked for."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipeline_kit.film' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"pipeline_kit.film.{_EXPORTS[name]}"), name)


__all__ = [
    "BOOK_KIND",
    "CHAPTER_KIND",
    "LANE",
    "ChapterStatus",
    "FilmStatus",
    "book_task_id",
    "chapter_task_id",
    "film_status",
    "side_path",
]
