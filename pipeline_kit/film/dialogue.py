"""A shot's spoken lines and subtitles: each speaker's words when it has dialogue, else its
narration.

`spoken_lines` is what the voice tasks say, each line attributed to the shot's character who
says it (None: the narrator, or a speaker the text does not name). A subtitle must be readable,
so a long line is shown as several cues (`cue_texts`: at most SUBTITLE_CHARS per language each,
broken at sentence ends, else at words or, in Chinese, characters); `shorten` still cuts a
line to one cue where only one fits (a shot planned without a voice).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Line:
    """One speaker turn to voice: who says it (a character of the shot; None: not named), or
    the narration of a shot without dialogue."""

    speaker: str | None
    text: str
    narration: bool = False


def spoken_lines(text: str, *, dialogue: bool, lang: str, characters: Sequence[str] = ()) -> list[Line]:
    """What a shot says aloud: each speaker turn of a dialogue shot, attributed to the one of
    `characters` the narration names for it; else (or with no quote found) the narration."""
    text = without_ornaments(text)
    turns = attributed_turns(text, lang) if dialogue else []
    if turns:
        return [Line(_character(hint, characters, lang), joined(pieces, lang)) for hint, pieces in turns]
    told = _flat(text, lang)
    return [Line(None, told, narration=True)] if told else []


def speech_turns(text: str, lang: str) -> list[list[str]]:
    """The quoted pieces of `text` grouped by speaker (see `attributed_turns`)."""
    return [pieces for _, pieces in attributed_turns(text, lang)]


def attributed_turns(text: str, lang: str) -> list[tuple[str, list[str]]]:
    """The quoted pieces of `text` grouped by speaker.

    A new paragraph is a new speaker (a line in Chinese, a blank-line block or an indented line
    in English); in Chinese so is a quote opened after a colon (张飞曰：“…”), the way a second
    speaker is brought in within one line; in English so is a quote whose narration names another
    speaker than the quote before it ("Yes," said Tom. "No," said Mary.).
    Each turn comes with a hint of who says it: the speaker's name in English narration
    (lower-case), the narration before the turn in Chinese ("" when none).
    """
    paragraphs = text.split("\n") if lang == "zh" else _PARAGRAPH.split(text)
    turns: list[tuple[str, list[str]]] = []
    for paragraph in paragraphs:
        quotes = list(_QUOTED.finditer(paragraph))
        turn: list[str] = []
        last_speaker, hint = None, ""
        for i, match in enumerate(quotes):
            before = paragraph[quotes[i - 1].end() if i else 0 : match.start()]
            after = paragraph[match.end() : quotes[i + 1].start() if i + 1 < len(quotes) else len(paragraph)]
            said = next(g for g in match.groups() if g).strip()
            speaker = None if lang == "zh" else _speaker(said, before, after)
            if turn and (
                (lang == "zh" and _INTRODUCED.search(before)) or (speaker and last_speaker and speaker != last_speaker)
            ):
                turns.append((hint, turn))
                turn, last_speaker = [], None
            if not turn:
                hint = before
            turn.append(said)
            last_speaker = speaker or last_speaker
            if lang != "zh":
                hint = last_speaker or ""
        if turn:
            turns.append((hint, turn))
    return turns


def _character(hint: str, characters: Sequence[str], lang: str) -> str | None:
    """The one of `characters` a turn's hint names: in Chinese the name said last before the
    quote, in English the name (or a word of it, "tom" for Tom Sawyer); a pronoun names the
    shot's only character."""
    if not hint:
        return None
    if lang == "zh":
        found = [(hint.rfind(name), -len(name), name) for name in characters if name and name in hint]
        return max(found)[2] if found else None
    for name in characters:
        words = name.casefold().split()
        if hint == name.casefold() or hint in words or hint.split()[-1:] == words[-1:]:
            return name
    return characters[0] if len(characters) == 1 and hint in ("he", "she", "i") else None


def _speaker(said: str, before: str, after: str) -> str | None:
    """Who speaks the quote `said`, lower-cased, from the narration around it (None: not said).

    The narration after a quote names its speaker up to the first sentence end ("Yes," said Tom.),
    or, with no sentence end, when the quote itself did not end one ("Wait," she said, "...");
    else the narration after belongs to the next quote, and the speaker is named in the last
    sentence before this one (Tom said, "Go.").
    """
    end = _SENTENCE_END.search(after)
    if end:
        own = after[: end.end()]
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


def _flat(text: str, lang: str) -> str:
    """`text` on one line (Chinese loses its spaces, other scripts keep one between words)."""
    return re.sub(r"\s+", "" if lang == "zh" else " ", text.replace("_", "")).strip()


def cue_texts(text: str, lang: str) -> list[str]:
    """`text` as consecutive cues of at most SUBTITLE_CHARS[lang] characters each, of about equal
    length (no one-word cue left at the end), broken at the last sentence end past half a cue,
    else at a word (Latin) or a character (Chinese); nothing is dropped."""
    rest = _flat(text, lang)
    most = SUBTITLE_CHARS.get(lang, SUBTITLE_CHARS["en"])
    count = max(1, -(-len(rest) // most))  # cues needed
    limit = min(most, -(-len(rest) // count) + most // 8)  # each one's fair share, and some slack
    cues: list[str] = []
    while len(rest) > limit:
        head = rest[:limit]
        ends = [m.end() for m in _SENTENCE_END.finditer(head)]
        if ends and ends[-1] >= limit // 2:
            cut = ends[-1]
        elif lang != "zh" and " " in head[limit // 2 :]:
            cut = head.rindex(" ")
        else:
            cut = limit
        cues.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    return [*cues, rest] if rest else cues


def shorten(text: str, lang: str) -> str:
    """`text` on one line, at most SUBTITLE_CHARS[lang] characters (ellipsis when cut)."""
    flat = _flat(text, lang)
    limit = SUBTITLE_CHARS.get(lang, SUBTITLE_CHARS["en"])
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit // 2:
        return head[: ends[-1]].rstrip()
    if lang != "zh" and " " in head[limit // 2 :]:
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:，、；：") + "…"
