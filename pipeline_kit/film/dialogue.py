"""A shot's subtitles: each speaker's words when it has dialogue, else its narration, cut to fit.

A subtitle must be readable in the seconds a shot lasts, so it keeps at most about two lines
(SUBTITLE_CHARS per language), cut at a sentence end when one is near, else at a word (Latin)
or a character (Chinese), with an ellipsis where text was dropped.
"""

from __future__ import annotations

import re

from pipeline_kit.ornaments import without_ornaments

SUBTITLE_CHARS = {"zh": 36, "en": 84}
_QUOTED = re.compile(r"“([^”]+)”|\"([^\"]+)\"|「([^」]+)」|『([^』]+)』")
_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=[ \t\u3000])")
_INTRODUCED = re.compile(r"[：:]\s*$")  # 张飞曰： right before a quote: someone new speaks
_SENTENCE_END = re.compile(r"[.!?。！？…]+[\"”’」』)]*")


def subtitles(text: str, *, dialogue: bool, lang: str) -> list[str]:
    """What to show under the shot, one entry per cue: in a dialogue shot each speaker's quoted
    words on their own, else the narration. Scene-break ornaments are never shown."""
    text = without_ornaments(text)
    spoken = [joined(turn, lang) for turn in speech_turns(text, lang)] if dialogue else []
    shown = [shorten(line, lang) for line in spoken] if spoken else [shorten(text, lang)]
    return [line for line in shown if line]


def speech_turns(text: str, lang: str) -> list[list[str]]:
    """The quoted pieces of `text` grouped by speaker.

    A new paragraph is a new speaker (a line in Chinese, a blank-line block or an indented line
    in English); in Chinese so is a quote opened after a colon (张飞曰：“…”), the way a second
    speaker is brought in within one line.
    """
    paragraphs = text.split("\n") if lang == "zh" else _PARAGRAPH.split(text)
    turns: list[list[str]] = []
    for paragraph in paragraphs:
        turn: list[str] = []
        said_at = 0
        for match in _QUOTED.finditer(paragraph):
            if turn and lang == "zh" and _INTRODUCED.search(paragraph[said_at:match.start()]):
                turns.append(turn)
                turn = []
            turn.append(next(g for g in match.groups() if g).strip())
            said_at = match.end()
        if turn:
            turns.append(turn)
    return turns


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
