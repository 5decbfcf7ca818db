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
# Who says a quote in English narration: "said Tom", "Tom said", "Mr. Holmes asked" (a name or a
# pronoun, with the verb on either side).
_VERBS = r"(?:said|says|asked|asks|replied|cried|answered|shouted|whispered|called|added|muttered)"
_WHO = r"((?:Mr\.|Mrs\.|Miss|Dr\.)?\s?[A-Z][\w'-]+(?:\s[A-Z][\w'-]+)?|he|she|I|they|we)"
_SAID = re.compile(rf"\b{_VERBS}\s+{_WHO}|{_WHO}\s+{_VERBS}\b")


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
    speaker is brought in within one line; in English so is a quote whose narration names another
    speaker than the quote before it ("Yes," said Tom. "No," said Mary.).
    """
    paragraphs = text.split("\n") if lang == "zh" else _PARAGRAPH.split(text)
    turns: list[list[str]] = []
    for paragraph in paragraphs:
        quotes = list(_QUOTED.finditer(paragraph))
        turn: list[str] = []
        last_speaker = None
        for i, match in enumerate(quotes):
            before = paragraph[quotes[i - 1].end() if i else 0:match.start()]
            after = paragraph[match.end():quotes[i + 1].start() if i + 1 < len(quotes) else len(paragraph)]
            said = next(g for g in match.groups() if g).strip()
            speaker = None if lang == "zh" else _speaker(said, before, after)
            if turn and ((lang == "zh" and _INTRODUCED.search(before))
                         or (speaker and last_speaker and speaker != last_speaker)):
                turns.append(turn)
                turn = []
            turn.append(said)
            last_speaker = speaker or last_speaker
        if turn:
            turns.append(turn)
    return turns


def _speaker(said: str, before: str, after: str) -> str | None:
    """Who speaks the quote `said`, lower-cased, from the narration around it (None: not said).

    The narration after a quote names its speaker up to the first sentence end ("Yes," said Tom.),
    or, with no sentence end, when the quote itself did not end one ("Wait," she said, "...");
    else the narration after belongs to the next quote, and the speaker is named in the last
    sentence before this one (Tom said, "Go.").
    """
    end = _SENTENCE_END.search(after)
    if end:
        own = after[:end.end()]
    else:
        own = "" if _SENTENCE_END.fullmatch(said[-1:]) else after
    lead = _SENTENCE_END.split(before)[-1]
    found = _SAID.search(own) or _SAID.search(lead)
    if found is None:
        return None
    return next(g for g in found.groups() if g).strip().lower()


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
