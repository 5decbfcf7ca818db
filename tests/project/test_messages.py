"""Counts in messages read as English: '1 chapter', '3 chapters', never '1 chapters' or
'chapter(s)'. `plural` is the one helper; a scan of the package's string literals fails on a
count written as `{n} thing(s)`, so a new message cannot go back to it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from pipeline_kit.plural import plural

PACKAGE = Path(__file__).resolve().parents[2] / "pipeline_kit"
COUNT_S = re.compile(r"\}\s*[A-Za-z][\w-]*(?: [A-Za-z][\w-]*)?\(s\)")  # "{n} frame(s)", "{n} character sheet(s)"


def test_plural_says_one_and_many() -> None:
    """One is singular, everything else (zero included) plural; irregular plurals are given."""
    assert plural(1, "chapter") == "1 chapter"
    assert plural(0, "chapter") == "0 chapters"
    assert plural(3, "character sheet") == "3 character sheets"
    assert plural(2, "entry", "entries") == "2 entries" and plural(1, "entry", "entries") == "1 entry"


def test_no_message_counts_with_s_in_brackets() -> None:
    """No f-string in the package writes a count as `{n} word(s)`."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                text = "".join("{}" if isinstance(v, ast.FormattedValue) else v.value for v in node.values)
                if COUNT_S.search(text):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {text}")
    assert found == []
