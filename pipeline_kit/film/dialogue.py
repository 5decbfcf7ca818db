"""A shot's subtitle: its spoken words when it has dialogue, else its narration, cut to fit.

A subtitle must be readable in the seconds a shot lasts, so it keeps at most about two lines
(SUBTITLE_CHARS per language), cut at a sentence end when one is near, else at a word (Latin)
or a character (Chinese), with an ellipsis where text was dropped.
"""

from __future__ import annotations

import re

SUBTITLE_CHARS = {"zh": 36, "en": 84}
_QUOTED = re.compile(r"“([^”]+)”|\"([^\"]+)\"|「([^」]+)」|『([^』]+)』")
_SENTENCE_END = re.compile(r"[.!?。！？…]+[\"”’」』)]*")


def subtitle_text(text: str, *, dialogue: bool, lang: str) -> str:
    """What to show under the shot: the quoted speech of a dialogue shot, else the text."""
    spoken = [next(g for g in m.groups() if g).strip() for m in _QUOTED.finditer(text)] \
        if dialogue else []
    return shorten(joined(spoken, lang) if spoken else text, lang)


def joined(pieces: list[str], lang: str) -> str:
    """Speech broken by narration ("Wait," she said, "not yet.") read as one line.

    A piece ending in a comma ends a sentence unless the next piece goes on in lower case.
    """
    if lang == "zh":
        return "".join(pieces)
    out = ""
    for piece, after in zip(pieces, [*pieces[1:], ""]):
        if piece.endswith(",") and not after[:1].islower():
            piece = piece[:-1] + "."
        out += (" " if out else "") + piece
    return out


def shorten(text: str, lang: str) -> str:
    """`text` on one line, at most SUBTITLE_CHARS[lang] characters (ellipsis when cut)."""
    flat = re.sub(r"\s+", "" if lang == "zh" else " ", text.replace("_", "")).strip()
    limit = SUBTITLE_CHARS.get(lang, SUBTITLE_CHARS["en"])
    if len(flat) <= limit:
        return flat
    head = flat[:limit - 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit // 2:
        return head[:ends[-1]].rstrip()
    if lang != "zh" and " " in head[limit // 2:]:
        head = head[:head.rindex(" ")]
    return head.rstrip(" ,;:，、；：") + "…"
