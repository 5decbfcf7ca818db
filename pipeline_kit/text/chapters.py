"""Find chapters in a book's text from common heading markers.

A heading is a short line at column 0: 第X回/章/节/卷, 卷X, 楔子/序章/尾声/附录, CHAPTER I. /
Chapter 1, an all-capitals story heading like `I. A SCANDAL IN BOHEMIA`, a markdown heading, or
a setext heading (a one-line paragraph underlined by a line of `=` or `-`, full-width too; the
title may be indented a little, by Markdown's three spaces or a Chinese paragraph's two full-width
ones, and a line ending a sentence over a rule is a scene break, not a title). Other indented
lines (a contents list) and bare part markers (`I.`) are not headings, except in a text with no
other heading, where numbers alone on their lines that count up from one (一 二 三, 1 2 3, I II III)
are its sections; a note mark after a title (`故乡(1)`, `狂人日记⑴`) is not part of it. A chapter's text
is everything after its heading up to the next heading, without surrounding blank lines, and
without the page markers and note blocks of `noise` (they would become shots).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline_kit.errors import BadInput
from pipeline_kit.text.noise import NOTE_MARK, clean

_MAX_HEADING = 80
_UNDERLINE = re.compile(r"[ \t]*(?:[=＝]{3,}|[-－—–]{3,}|[_＿]{3,})[ \t]*")
_SETEXT_INDENT = re.compile(r"[ \u3000]{0,4}\S")  # Markdown's three spaces, or a Chinese indent
_SENTENCE_END = re.compile(r"[。！？!?.…；;，,：:”’\"]$")
_TITLE_NOTE = re.compile(rf"(?:{NOTE_MARK}|[(（][0-9０-９]{{1,2}}[)）])+$")
_ZH_NUM = "一二三四五六七八九十百千零〇两0-9０-９"
_BARE_NUMBER = re.compile(rf"[ \t\u3000]*([{_ZH_NUM}]{{1,4}}|[0-9]{{1,3}}|[IVXLC]{{1,7}})[.、．]?[ \t\u3000]*")
_ZH_DIGITS = {c: k for k, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
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


def heading_lines(lines: list[str], i: int) -> int:
    """How many lines the heading starting at line `i` takes: 1 (a marker line), 2 (a setext
    title, or a marker line, and its underline) or 0 (no heading there)."""
    line = lines[i]
    underlined = i + 1 < len(lines) and _UNDERLINE.fullmatch(lines[i + 1]) is not None
    if is_heading(line):
        return 2 if underlined else 1  # 第二章　客栈 over a line of =: the underline is no text
    setext = (
        underlined
        and 0 < len(line.strip()) <= _MAX_HEADING
        and _SETEXT_INDENT.match(line) is not None
        and _SENTENCE_END.search(line.strip()) is None
        and (i == 0 or not lines[i - 1].strip())
        and _UNDERLINE.fullmatch(line) is None
    )
    return 2 if setext else 0


def chapter_body(text: str) -> str:
    """A chapter's stored text: no leading blank lines, no trailing whitespace."""
    return re.sub(r"\A(?:[ \t\u3000]*\n)+", "", text).rstrip()


def find_chapters(text: str, fallback_title: str) -> Found:
    """Split `text` at headings; without any, the whole text is one chapter (with a warning)."""
    lines = clean(text).split("\n")
    sizes = {i: n for i in range(len(lines)) if (n := heading_lines(lines, i))} or _numbered_sections(lines)
    marks = sorted(sizes)
    if not marks:
        body = chapter_body(text)
        if not body:
            raise BadInput("the file has no text")
        return Found((RawChapter(fallback_title, body),), ("no chapter markers found: the whole text is one chapter",))
    warnings: list[str] = []
    preamble = chapter_body("\n".join(lines[: marks[0]]))
    if preamble:
        warnings.append(f"ignored {len(preamble)} characters before the first chapter heading (title page or contents)")
    chapters: list[RawChapter] = []
    for k, start in enumerate(marks):
        end = marks[k + 1] if k + 1 < len(marks) else len(lines)
        title = _title(lines[start])
        body = chapter_body("\n".join(lines[start + sizes[start] : end]))
        if body:
            chapters.append(RawChapter(title, body))
        else:
            warnings.append(f"skipped chapter heading {title!r}: it has no text")
    if not chapters:
        raise BadInput(f"chapter heading {_title(lines[marks[0]])!r} has no text after it: nothing to ingest")
    return Found(tuple(chapters), tuple(warnings))


def one_chapter(text: str, number: int) -> Found:
    """The whole text as chapter `number` (for --chapter N); a heading on its first line is its title."""
    body = chapter_body(clean(text))
    lines = body.split("\n")
    title = f"Chapter {number}"
    if size := heading_lines(lines, 0):
        title = _title(lines[0])
        body = chapter_body("\n".join(lines[size:]))
    if not body:
        raise BadInput(f"chapter heading {title!r} has no text after it: nothing to ingest")
    rest = body.split("\n")
    extra = [line for i, line in enumerate(rest) if heading_lines(rest, i)]
    if extra:
        raise BadInput(f"--chapter {number} takes one chapter, but the file has another heading: {_title(extra[0])!r}")
    return Found((RawChapter(title, body),), ())


def _title(line: str) -> str:
    return _TITLE_NOTE.sub("", line.strip().lstrip("#").strip()).strip()[:500]


def _numbered_sections(lines: list[str]) -> dict[int, int]:
    """Lines holding only a number, a blank line (or the text's edge) on each side, as long as
    their numbers count up from one, by line index (each one line long); {} unless two or more."""
    found: dict[int, int] = {}
    for i, line in enumerate(lines):
        m = _BARE_NUMBER.fullmatch(line)
        if m and (i == 0 or not lines[i - 1].strip()) and (i + 1 == len(lines) or not lines[i + 1].strip()):
            if _number(m.group(1)) != len(found) + 1:
                break
            found[i] = 1
    return found if len(found) >= 2 else {}


def _number(numeral: str) -> int:
    """The value of 十二, ４, 12 or XII (-1: not a number this reads)."""
    numeral = numeral.translate(str.maketrans("０１２３４５６７８９", "0123456789"))
    if numeral.isdigit():
        return int(numeral)
    if numeral[0] in _ROMAN:
        values = [_ROMAN.get(c, 0) for c in numeral]
        return sum(-v if v < w else v for v, w in zip(values, [*values[1:], 0]))
    if any(c not in _ZH_DIGITS and c not in "十百" for c in numeral):
        return -1
    total, digit = 0, 0
    for c in numeral:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        else:
            total += (digit or 1) * (10 if c == "十" else 100)
            digit = 0
    return total + digit
