"""The film: chapter and book assembly tasks, and what is still missing before they can run.

    from pipeline_kit import film
    engine.enqueue(conn, film.assembly_specs(conn, bookcode))   # in the split's transaction
    film.film_status(db, bookcode)                               # -> FilmStatus

Two halves. `graph` and `status` read the database (and use the engine's TaskSpec); the media
modules (`ffmpeg`, `cards`, `srt`, `timeline`, `dialogue`, `names`) never touch it and are what
the `assembly` backend builds films with.
"""

from __future__ import annotations

from pipeline_kit.film.graph import assembly_specs, plan_assembly
from pipeline_kit.film.names import (
    BOOK_KIND,
    CHAPTER_KIND,
    LANE,
    book_task_id,
    chapter_task_id,
    side_path,
)
from pipeline_kit.film.status import ChapterStatus, FilmStatus, film_status

__all__ = [
    "BOOK_KIND", "CHAPTER_KIND", "LANE", "ChapterStatus", "FilmStatus", "assembly_specs", "plan_assembly",
    "book_task_id", "chapter_task_id", "film_status", "side_path",
]
