"""Plain-text columns measured in terminal cells, not characters, so Chinese or Japanese titles
(two cells a character) and emoji keep a table's columns in line. Headers are never cut."""

from __future__ import annotations

from collections.abc import Sequence

from wcwidth import wcswidth

ELLIPSIS = "…"
TITLE_CELLS = 40  # a title longer than this many cells is cut, with an ellipsis, in a table


def width(text: str) -> int:
    """Terminal cells `text` takes (a control character counts as one, never as -1)."""
    cells = wcswidth(text)
    return cells if cells >= 0 else sum(max(wcswidth(ch), 1) for ch in text)


def clip(text: str, most: int) -> str:
    """`text` cut to at most `most` cells, ending in an ellipsis when something was cut."""
    if width(text) <= most:
        return text
    kept, used = [], width(ELLIPSIS)
    for ch in text:
        used += width(ch)
        if used > most:
            break
        kept.append(ch)
    return "".join(kept) + ELLIPSIS


def pad(text: str, cells: int, *, right: bool = False) -> str:
    """`text` filled with spaces to `cells` cells, left-aligned (or right-aligned)."""
    fill = " " * max(cells - width(text), 0)
    return fill + text if right else text + fill


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    right: Sequence[int] = (),
    gap: str = "  ",
    indent: str = "",
) -> list[str]:
    """Lines of a table whose columns are as wide as their widest cell or header; columns whose
    index is in `right` (numbers) are right-aligned. Trailing spaces are dropped."""
    text = [[str(h) for h in headers], *[["-" if v is None else str(v) for v in row] for row in rows]]
    widths = [max(width(r[i]) for r in text) for i in range(len(headers))]
    return [(indent + gap.join(pad(v, widths[i], right=i in right) for i, v in enumerate(r))).rstrip() for r in text]
