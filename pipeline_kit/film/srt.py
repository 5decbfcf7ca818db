"""SubRip (.srt) subtitles: cues as values, written and read back, shifted and merged.

Times are whole milliseconds, so a cue's end never rounds past the film's end and merged
chapter subtitles keep their order exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from pipeline_kit.errors import BadInput

_TIME = re.compile(r"(\d+):(\d{2}):(\d{2}),(\d{3})")
_ARROW = re.compile(rf"^\s*{_TIME.pattern}\s*-->\s*{_TIME.pattern}")


@dataclass(frozen=True)
class Cue:
    """One subtitle: shown from `start_ms` to `end_ms` (end > start)."""

    start_ms: int
    end_ms: int
    text: str


def timestamp(ms: int) -> str:
    """SRT time, e.g. 3723004 -> "01:02:03,004"."""
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d},{millis:03d}"


def render(cues: Iterable[Cue]) -> str:
    """The .srt text: numbered from 1, blank line between cues, empty cues dropped."""
    blocks: list[str] = []
    for cue in cues:
        text = "\n".join(line for line in cue.text.splitlines() if line.strip())
        if text and cue.end_ms > cue.start_ms:
            blocks.append(f"{len(blocks) + 1}\n{timestamp(cue.start_ms)} --> {timestamp(cue.end_ms)}\n{text}\n")
    return "\n".join(blocks)


def parse(text: str) -> list[Cue]:
    """Cues of an .srt text; a block without a valid time line -> BadInput."""
    cues = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n").strip()):
        lines = block.split("\n")
        if not block.strip():
            continue
        at = next((i for i, line in enumerate(lines) if _ARROW.match(line)), None)
        if at is None:
            raise BadInput(f"not an SRT cue: {block[:60]!r}")
        times = [int(g) for g in _ARROW.match(lines[at]).groups()]  # type: ignore[union-attr]
        cues.append(Cue(_ms(times[:4]), _ms(times[4:]), "\n".join(lines[at + 1 :])))
    return cues


def shifted(cues: Iterable[Cue], offset_ms: int) -> list[Cue]:
    """The cues moved later by `offset_ms`."""
    return [replace(c, start_ms=c.start_ms + offset_ms, end_ms=c.end_ms + offset_ms) for c in cues]


def clipped(cues: Sequence[Cue], end_ms: int) -> list[Cue]:
    """The cues cut to end by `end_ms`; cues starting at or after it are dropped."""
    return [replace(c, end_ms=min(c.end_ms, end_ms)) for c in cues if c.start_ms < end_ms]


def _ms(parts: Sequence[int]) -> int:
    hours, minutes, seconds, millis = parts
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
