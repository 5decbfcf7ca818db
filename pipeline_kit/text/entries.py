"""What the character and place bibles' stored entries share: their row, their other names, and
the check of a name a person gives."""

from __future__ import annotations

import dataclasses
from typing import Any

from pipeline_kit.errors import BadInput


def entry_row(bookcode: str, entry: Any) -> dict[str, object]:
    """A bible entry (a Character or a Place, frozen dataclasses) as its table's row."""
    row: dict[str, object] = {"bookcode": bookcode, **dataclasses.asdict(entry)}
    row["aliases"] = list(entry.aliases)
    return row


def other_names(name: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """`names` less `name`, sorted and each once: the aliases of the entry going by `name`."""
    return tuple(sorted(set(names) - {name}))


def valid_name(name: str, limit: int, what: str) -> str:
    """A name a person gave, stripped; BadInput when empty or longer than `limit`."""
    name = name.strip()
    if not name or len(name) > limit:
        raise BadInput(f"a {what} name must have 1 to {limit} characters")
    return name
