"""The voice that says a line nobody cast a voice for.

Narration takes the narrator's voice; a character's line takes one of the voices its language
and gender offer, picked by the speaker's name (a CRC, not Python's per-process hash), so each
character keeps one voice across shots, runs and PCs; two characters share one only when their
names' hashes meet (`cast BOOK voice NAME VOICE` sets one by hand). A line whose speaker is
unknown takes the first voice of its gender's pool.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

# gender ("male", "female", None) or "narrator" -> the voices a backend offers for it, first the default
Pools = Mapping[str | None, tuple[str, ...]]


def default_voice(pools: Pools, line: Mapping[str, Any]) -> str:
    """The voice for `line` (its `narration`, `gender` and `speaker`) from the backend's pools."""
    pool = pools["narrator"] if line.get("narration") else pools.get(line.get("gender")) or pools[None]
    speaker = line.get("speaker")
    return pool[zlib.crc32(str(speaker).encode("utf-8")) % len(pool)] if speaker else pool[0]
