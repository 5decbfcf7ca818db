"""Text: ingest a novel, split it into scenes and shots, and turn shots into the task graph.

    from pipeline_kit import text
    report = text.ingest_file(db, "book.txt", "My Book")       # -> IngestReport (bookcode, chapters)
    text.split_book(db, report.bookcode)                       # -> SplitReport; a second run creates nothing
    text.edit_shot(db, shot_id, prompt="...")                  # resets that shot's tasks only

Uses the engine's enqueue and reset only; nothing of the worker or the backends.
"""

from __future__ import annotations

from pathlib import Path

from pipeline_kit.text.bookcode import make_bookcode
from pipeline_kit.text.edit import EditReport, edit_shot, rerun_shot, show_shot
from pipeline_kit.text.ingest import ChapterOutcome, IngestReport, ingest_file, ingest_text
from pipeline_kit.text.model_splitter import ModelSplitter
from pipeline_kit.text.prompts import Templates
from pipeline_kit.text.records import Shot
from pipeline_kit.text.split import SplitReport, split_book
from pipeline_kit.text.splitter import RuleSplitter, Splitter


def sample_book_path() -> Path:
    """The project's own three-chapter sample book (English), shipped as package data."""
    return Path(__file__).resolve().parents[1] / "samples" / "sample_book.txt"


def sample_book_title() -> str:
    """The sample book's own title: the first line of its file."""
    return sample_book_path().read_text(encoding="utf-8").split("\n", 1)[0].strip()


__all__ = [
    "ChapterOutcome",
    "EditReport",
    "IngestReport",
    "ModelSplitter",
    "RuleSplitter",
    "Shot",
    "SplitReport",
    "Splitter",
    "Templates",
    "edit_shot",
    "ingest_file",
    "ingest_text",
    "make_bookcode",
    "rerun_shot",
    "sample_book_path",
    "sample_book_title",
    "show_shot",
    "split_book",
]
