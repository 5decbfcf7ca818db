"""Where each shot sits in a film, counted in whole frames so pictures and subtitles agree.

A shot takes `frames_for(seconds, fps)` frames, where `seconds` is its clip's real length (a
provider may return another duration than the shot's estimate), or its speech's when that is
longer; the film's length is the sum
of its parts' frames. Subtitle cues are derived from the same frame counts, so a cue starts on
the frame its shot starts and never ends after the film.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

TITLE_CARD_S = 2.0  # how long a chapter's (or the book's) title card is shown


def frames_for(duration_s: float, fps: int) -> int:
    """Frames a part of `duration_s` seconds takes at `fps` (at least one)."""
    return max(1, round(duration_s * fps))


def card_frames(seconds: float, fps: int) -> int:
    """Frames a title card of `seconds` takes (none for 0: a film without a card)."""
    return round(seconds * fps)


def frame_ms(frame: int, fps: int) -> int:
    """The time of frame number `frame` in whole milliseconds."""
    return round(frame * 1000 / fps)


def turn_spans(frames: int, texts: Sequence[str]) -> list[tuple[int, int]]:
    """(first, end) frame offsets of each text in a part of `frames` frames, shared by length.

    A shot with two speakers shows each one's words for its share of the shot, so no cue (and
    no burned-in subtitle) ever holds two speakers. A span may be empty when frames are few.
    """
    weights = [max(1, len(text)) for text in texts]
    total, reached, bounds = sum(weights), 0, [0]
    for weight in weights:
        reached += weight
        bounds.append(round(frames * reached / total))
    return list(itertools.pairwise(bounds))
