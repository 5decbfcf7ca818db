"""Section ornaments: the lines that mark a scene break (`* * *`, `***`, `＊＊＊`, `※`, `I.`).

The splitter opens a new scene at one; captions, prompts and subtitles leave them out, since
they are layout, not words. A leaf module (it imports nothing of the project), so text and film
share it.
"""

from __future__ import annotations

import re

# Three or more ornament symbols (spaced or not), or one lone reference mark or diamond.
SYMBOLS = re.compile(r"[ \t\u3000]*(?:(?:[*＊~～=—\-·•◇◆○●※#]\s*){3,}|[※§◇◆]\s*)")
# A bare Roman numeral ("I.", "XII."): a part marker only when it stands alone after a blank line.
NUMERAL = re.compile(r"[ \t\u3000]*[IVXLC]+\.[ \t]*")
# How every line either of them takes begins, after a line break: a text none begins so keeps all
# its lines, told by one search for the break (each shot's lines, read one by one, cost 4x more).
_OPENING = re.compile(r"\n[ \t\u3000]*(?:[*＊~～=—\-·•◇◆○●※#§]|[IVXLC]+\.)")


def is_ornament(line: str, after_blank: bool) -> bool:
    """Is this line (without its newline) an ornament? `after_blank`: the line before is blank
    or there is none (a Roman numeral counts only then: "said\nI." ends a sentence)."""
    return bool(SYMBOLS.fullmatch(line) or after_blank and NUMERAL.fullmatch(line))


def without_ornaments(text: str) -> str:
    """`text` less its ornament lines; every other line is kept as it was."""
    if not _OPENING.search("\n" + text):
        return text
    kept: list[str] = []
    after_blank = True
    for line in text.split("\n"):
        if is_ornament(line, after_blank):
            continue
        kept.append(line)
        after_blank = not line.strip()
    return "\n".join(kept)
