"""Cut a chapter's text into units a shot is built from: whole sentences, never a quotation's inside.

Units tile the text: each owns the whitespace after it, the first also the whitespace before it,
so joining them gives the chapter back exactly. A paragraph is a line in Chinese and a
blank-line block (or a first-line indent) in English, or, where a text lost its blank lines, a
line ending a sentence before one that opens with a capital; quotation depth resets at each paragraph end, so
an unclosed quote (a multi-paragraph speech or a typo) cannot swallow the rest of the chapter.
Section ornaments (`***`, `* * *`, `※`, a bare `I.`; see `pipeline_kit.ornaments`) are units of
their own that open a new scene.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline_kit.ornaments import is_ornament
from pipeline_kit.text.lang import han_count

_OPEN = frozenset("“「『")
_CLOSE = frozenset("”」』")
_ZH_TOKEN = re.compile(r"[“”「」『』\"]|[。！？!?…]+[”」』’）)\]\"]*")
_EN_TOKEN = re.compile(r"[“”\"]|[.!?]+[”’\")\]_]*(?=\s|$)")
_ABBREV = frozenset("mr mrs ms dr st mme mlle messrs jr sr prof rev gen col capt lt sgt no vol ch co esq hon".split())
LOST_PARAGRAPH_CHARS = 3000  # blank-line blocks this long on average: the text lost its blank lines
_LINE_END = re.compile(r"[.!?][”’\")\]_]*\s*$")
_EN_SENTENCE_END = re.compile(r"[.!?]+[”’\")\]_]*(?:\s|$)")


@dataclass(frozen=True)
class Unit:
    """A sentence (with any quotation it holds) or an ornament, as offsets into the chapter."""

    start: int
    end: int
    para_start: bool  # first unit of its paragraph
    weight: float  # zh: Han characters; en: sentences
    dialogue: bool
    ornament: bool = False


def units(text: str, lang: str) -> list[Unit]:
    """The chapter's units, in order, tiling `text` from 0 to len(text)."""
    out: list[tuple[int, bool, float, bool, bool]] = []  # each unit's start and fields, stretched by _tile
    for start, end, ornament in _paragraphs(text, lang):
        para = text[start:end]
        if ornament:
            out.append((start, True, 0.0, False, True))
            continue
        first = True
        for a, b in _sentences(para, lang):
            piece = para[a:b]
            lead = len(piece) - len(piece.lstrip())
            out.append((start + a + lead, first, _weight(piece, lang), _is_dialogue(piece), False))
            first = False
    return _tile(out, len(text))


def _paragraphs(text: str, lang: str) -> list[tuple[int, int, bool]]:
    """(start, end, is an ornament) of each paragraph's non-blank text."""
    spans: list[tuple[int, int, bool]] = []
    pos = 0
    para_start = -1
    last_end = 0
    prev_indented = False
    prev_blank = True
    # English whose blank lines were lost (blocks far longer than any paragraph, no indents): a
    # line that ends a sentence ends its paragraph too, so a chapter is not one paragraph.
    lost = lang != "zh" and text.count("\n\n") * LOST_PARAGRAPH_CHARS < len(text) and not re.search(r"\n[ \t]", text)
    prev_line = ""
    for line in text.split("\n"):
        line_end = pos + len(line)
        blank = not line.strip()
        indented = line[:1] in (" ", "\t", "\u3000")
        # An ornament stands alone: "said\nI." is the end of a sentence, not a part marker.
        ornament = is_ornament(line, after_blank=True) and (prev_blank or lang == "zh")
        # English: a first-line indent opens a paragraph; an indented block (a letter) stays one.
        new_para = blank or lang == "zh" or indented and not prev_indented or ornament
        new_para = new_para or lost and bool(_LINE_END.search(prev_line)) and line[:1].isupper()
        prev_line = line
        prev_indented = indented and not blank
        prev_blank = blank
        if para_start >= 0 and new_para:
            spans.append((para_start, last_end, False))
            para_start = -1
        if not blank:
            if para_start < 0:
                para_start = pos + (len(line) - len(line.lstrip()))
            last_end = pos + len(line.rstrip())
            if ornament:
                spans.append((para_start, last_end, True))
                para_start = -1
        pos = line_end + 1
    if para_start >= 0:
        spans.append((para_start, last_end, False))
    return spans


def _sentences(para: str, lang: str) -> list[tuple[int, int]]:
    """Sentence spans in one paragraph, cut only where no quotation is open."""
    cuts: list[int] = []
    depth = 0
    ascii_open = False
    token = _ZH_TOKEN if lang == "zh" else _EN_TOKEN
    for m in token.finditer(para):
        tok = m.group()
        if tok in _OPEN:
            depth += 1
            continue
        if tok in _CLOSE:
            depth = max(0, depth - 1)
            continue
        if tok == '"':
            ascii_open = not ascii_open
            continue
        if len(tok) > 1:  # a sentence end with closing marks after it
            depth = max(0, depth - sum(ch in _CLOSE for ch in tok))
        if '"' in tok:
            ascii_open = False
        if depth or ascii_open:
            continue
        if lang != "zh" and not _en_sentence_end(para, m.start(), m.end()):
            continue
        cuts.append(m.end())
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in cuts:
        if cut > start and para[start:cut].strip():
            spans.append((start, cut))
            start = cut
    if start < len(para) and para[start:].strip():
        spans.append((start, len(para)))
    elif spans:
        spans[-1] = (spans[-1][0], len(para))
    return spans


def _en_sentence_end(para: str, start: int, end: int) -> bool:
    """A '.' after an abbreviation or an initial, or before a lower-case word, ends nothing."""
    if para[start] == ".":
        word = re.search(r"([A-Za-z]+)$", para[max(0, start - 12) : start])
        if word and (word.group(1).lower() in _ABBREV or len(word.group(1)) == 1 and word.group(1).isupper()):
            return False
    nxt = re.match(r"\s*(\S)", para[end:])
    return not (nxt and nxt.group(1).islower())


def _weight(piece: str, lang: str) -> float:
    if lang == "zh":
        return float(han_count(piece))
    return float(max(1, len(_EN_SENTENCE_END.findall(piece))))


def _is_dialogue(piece: str) -> bool:
    return any(ch in piece for ch in '“「『"')


def _tile(found: list[tuple[int, bool, float, bool, bool]], length: int) -> list[Unit]:
    """The units, each stretched to the next one's start so they cover the text with no gap
    (`found`: each one's start, para_start, weight, dialogue and ornament)."""
    if not found:
        return [Unit(0, length, True, 0.0, False)] if length else []
    ends = [start for start, *_ in found[1:]] + [length]
    return [
        Unit(0 if k == 0 else start, end, para_start, weight, dialogue, ornament)
        for k, ((start, para_start, weight, dialogue, ornament), end) in enumerate(zip(found, ends))
    ]
