"""The engine's SQL, read from one file per database (db/sql/DATABASE.sql), each statement named.

A file is a list of `-- name: NAME` blocks; the comment lines under the name say what the
statement does, and the statement runs to the next name. Parameters are `:name`, and `IN :name`
takes a list (the database's module says how it is bound: db/dialects/). A line that ends in
`-- when OPTION` is part of the statement only when the caller asks for OPTION (a claim's
filters: a book's spent budget, a paused provider's kinds, the free-lane gate); `LIMIT :limit`
may be written as a number (`Statement.sql(limit=10)`), which PostgreSQL plans better than a
bound limit. Every file is parsed once; the same text serves the owner's plain path and the body
of a worker account's routine (db/routines.py), so a statement is written once per database.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "sql"
_NAME = re.compile(r"^-- name: (\w+)\s*$")
_WHEN = re.compile(r"^(.*?)\s*-- when (\w+)\s*$")


@dataclass(frozen=True)
class Statement:
    """One named statement: its lines, each with the option it needs (None: always there)."""

    name: str
    lines: tuple[tuple[str, str | None], ...]
    doc: str = ""

    @property
    def options(self) -> frozenset[str]:
        return frozenset(option for _, option in self.lines if option)

    @functools.cache  # noqa: B019 (statements live as long as the process)
    def sql(self, *, limit: int | None = None, **options: bool) -> str:
        """The statement as one line of SQL, with the lines of the options given true; `limit`
        written in for `:limit`."""
        unknown = set(options) - self.options
        if unknown:
            raise KeyError(f"statement {self.name} has no option {', '.join(sorted(unknown))}")
        text = " ".join(line for line, option in self.lines if option is None or options.get(option))
        return text if limit is None else text.replace("LIMIT :limit", f"LIMIT {int(limit)}")

    def __str__(self) -> str:
        return self.sql()


def parse(text: str, source: str = "<sql>") -> dict[str, Statement]:
    """The named statements of one file's text, in file order."""
    found: dict[str, Statement] = {}
    name: str | None = None
    doc: list[str] = []
    lines: list[tuple[str, str | None]] = []

    def close() -> None:
        if name is None:
            return
        if not lines:
            raise ValueError(f"{source}: statement {name} is empty")
        last, option = lines[-1]
        lines[-1] = (last.removesuffix(";").rstrip(), option)
        found[name] = Statement(name, tuple(lines), " ".join(doc))

    for raw in text.splitlines():
        line = raw.strip()
        named = _NAME.match(line)
        if named:
            close()
            name, doc, lines = named.group(1), [], []
            if name in found:
                raise ValueError(f"{source}: statement {name} is named twice")
        elif not line:
            continue
        elif line.startswith("--"):
            if name is not None and not lines:
                doc.append(line.lstrip("- "))
        elif name is not None:
            when = _WHEN.match(line)
            lines.append((when.group(1), when.group(2)) if when else (_code(line), None))
    close()
    return found


def _code(line: str) -> str:
    """A line without its trailing `-- comment` (lines are joined into one: it would hide the rest)."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == "'":
            quoted = not quoted
        elif not quoted and line.startswith("--", i):
            return line[:i].rstrip()
    return line


@functools.cache
def load(file: str) -> dict[str, Statement]:
    """Every statement of db/sql/`file`, parsed once per process."""
    path = FOLDER / file
    return parse(path.read_text(encoding="utf-8"), str(path))
