"""A shot's speech as a file: 16-bit mono WAV, and beside it when each line is said.

Voice backends write both (`write_speech`); the assembly reads the timing (`read_lines`) to
make a shot last as long as its speech and to time each cue to its line. Lines follow one
another with GAP_S of silence, so two speakers never talk over each other.
"""

from __future__ import annotations

import json
import wave
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

LINES = ".lines.json"  # the side file of a voice output: each line's text, speaker and time
GAP_S = 0.3  # silence between two lines
TAIL_S = 0.4  # a shot holds this long after its last word before the next one starts


@dataclass(frozen=True)
class Said:
    """One line of a shot's speech and when it is said, in seconds from the shot's start."""

    text: str
    speaker: str | None
    start_s: float
    end_s: float


def write_speech(
    path: Path, side: Path, pieces: Sequence[tuple[Mapping[str, Any], bytes]], rate: int
) -> tuple[list[Said], float]:
    """Write the (line, 16-bit mono PCM at `rate`) pieces one after another into the WAV `path`,
    GAP_S apart, and their timing into `side`; returns the timing and the length in seconds."""
    gap = b"\0\0" * round(GAP_S * rate)
    said: list[Said] = []
    pcm = bytearray()
    for k, (line, samples) in enumerate(pieces):
        if k:
            pcm += gap
        start = len(pcm) / 2 / rate
        pcm += samples
        said.append(
            Said(str(line.get("text", "")), line.get("speaker"), round(start, 3), round(len(pcm) / 2 / rate, 3))
        )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(pcm))
    seconds = len(pcm) / 2 / rate
    side.write_text(json.dumps({"duration_s": round(seconds, 3), "lines": [asdict(s) for s in said]}), encoding="utf-8")
    return said, seconds


def read_lines(side: Path) -> tuple[list[Said], float]:
    """The timing a voice backend wrote beside its WAV: (lines, seconds); ValueError if unreadable."""
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
        lines = [Said(str(x["text"]), x.get("speaker"), float(x["start_s"]), float(x["end_s"])) for x in data["lines"]]
        return lines, float(data["duration_s"])
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"unreadable speech timing at {side}: {exc}") from None


def wav_seconds(path: Path) -> float:
    """The length of a WAV file in seconds."""
    with wave.open(str(path), "rb") as found:
        return found.getnframes() / found.getframerate()
