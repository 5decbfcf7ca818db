"""Find chapters in a book's text from common heading markers.

A heading is a short line at column 0: 第X回/章/节/卷, 卷X, 楔子/序章/尾声/附录, CHAPTER I. /
Chapter 1, an all-capitals story heading like `I. A SCANDAL IN BOHEMIA`, or a markdown heading.
Indented lines (a contents list) and bare part markers (`I.`) are not headings. A chapter's text
is everything after its heading line up to the next heading, without surrounding blank lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline_kit.errors import BadInput

_MAX_HEADING = 80
_ZH_NUM = "一二三四五六七八九十百千零〇两0-9０-９"
_HEADING = re.compile(
    "|".join(
        (
            rf"第[{_ZH_NUM}]+[回章节卷部集篇](?:[ \t\u3000:：].*)?",
            rf"卷[{_ZH_NUM}]+(?:[ \t\u3000:：].*)?",
            r"(?:楔子|序章|序幕|尾声|后记|附录|番外)(?:[ \t\u3000:：].*)?",
            r"(?:CHAPTER|Chapter)[ \t]+(?:[IVXLCDM]+|\d+|[A-Z][A-Za-z-]+)\b[.:]?(?:[ \t].*)?",
            r"[IVXLC]+\.[ \t]+[A-Z][A-Z0-9’'\-,.!?& ]*[A-Z]",
            r"#{1,3}[ \t]+\S.*",
        )
    )
)


@dataclass(frozen=True)
class RawChapter:
    """One chapter as found in a file: its heading (title) and its text."""

    title: str
    text: str


@dataclass(frozen=True)
class Found:
    """The chapters of a text, plus warnings for the user (on stderr)."""

    chapters: tuple[RawChapter, ...]
    warnings: tuple[str, ...]


def is_heading(line: str) -> bool:
    """True for a chapter heading line (see the module docstring)."""
    return len(line) <= _MAX_HEADING and _HEADING.fullmatch(line.rstrip()) is not None


def chapter_body(text: str) -> str:
    """A chapter's stored text: no leading blank lines, no trailing whitespace."""
    return re.sub(r"\A(?:[ \t\u3000]*\n)+", "", text).rstrip()


def find_chapters(text: str, fallback_title: str) -> Found:
    """Split `text` at headings; without any, the whole text is one chapter (with a warning)."""
    lines = text.split("\n")
    marks = [i for i, line in enumerate(lines) if is_heading(line)]
    if not marks:
        body = chapter_body(text)
        if not body:
            raise BadInput("the file has no text")
        return Found((RawChapter(fallback_title, body),),
                     ("no chapter markers found: the whole text is one chapter",))
    warnings: list[str] = []
    preamble = chapter_body("\n".join(lines[: marks[0]]))
    if preamble:
        warnings.append(f"ignored {len(preamble)} characters before the first chapter heading (title page or contents)")
    chapters: list[RawChapter] = []
    for k, start in enumerate(marks):
        end = marks[k + 1] if k + 1 < len(marks) else len(lines)
        title = _title(lines[start])
        body = chapter_body("\n".join(lines[start + 1 : end]))
        if body:
            chapters.append(RawChapter(title, body))
        else:
            warnings.append(f"skipped chapter heading {title!r}: it has no text")
    if not chapters:
        raise BadInput(f"chapter heading {_title(lines[marks[0]])!r} has no text after it: nothing to ingest")
    return Found(tuple(chapters), tuple(warnings))


def one_chapter(text: str, number: int) -> Found:
    """The whole text as chapter `number` (for --chapter N); a heading on its first line is its title."""
    body = chapter_body(text)
    lines = body.split("\n")
    title = f"Chapter {number}"
    if is_heading(lines[0]):
        title = _title(lines[0])
        body = chapter_body("\n".join(lines[1:]))
    if not body:
        raise BadInput(f"chapter heading {title!r} has no text after it: nothing to ingest")
    extra = [line for line in body.split("\n") if is_heading(line)]
    if extra:
        raise BadInput(f"--chapter {number} takes one chapter, but the file has another heading: {_title(extra[0])!r}")
    return Found((RawChapter(title, body),), ())


def _title(line: str) -> str:
    return line.strip().lstrip("#").strip()[:500]
