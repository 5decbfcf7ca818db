"""The film: chapter and book assembly tasks, and what is still missing before they can run.

    from pipeline_kit import film
    engine.enqueue(conn, film.assembly_specs(conn, bookcode))   # in the split's transaction
    film.film_status(db, bookcode)                               # -> FilmStatus

Two halves. `graph` and `status` read the database (and use the engine's TaskSpec); the media
modules (`ffmpeg`, `cards`, `srt`, `timeline`, `dialogue`, `names`) never touch it and are what
the `assembly` backend builds films with.
"""

from __future__ import annotations

from typing import Any

# name -> the module defining it; loaded on first use, so the media modules (which the `assembly`
# and `sketch` backends import) never load the database layer through this package.
_EXPORTS = {
    "assembly_specs": "graph", "plan_assembly": "graph",
    "BOOK_KIND": "names", "CHAPTER_KIND": "names", "LANE": "names", "book_task_id": "names",
    "chapter_task_id": "names", "side_path": "names",
    "ChapterStatus": "status", "FilmStatus": "status", "film_status": "status",
}


def __getattr__(name: str) -> Any:
    """A re-exported name, imported from its module when first asked for."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipeline_kit.film' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"pipeline_kit.film.{_EXPORTS[name]}"), name)


__all__ = [
    "BOOK_KIND", "CHAPTER_KIND", "LANE", "ChapterStatus", "FilmStatus", "assembly_specs", "plan_assembly",
    "book_task_id", "chapter_task_id", "film_status", "side_path",
]
