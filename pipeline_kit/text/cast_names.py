"""The rules behind the bible, shared by both languages: names grouped one group per person.

The language rules (`cast_zh`, `cast_en`) return groups of names, the names given formally, each
name's frequency and the shared short names (a title or first name of several people, resolved
per mention by the text around it). Here: the canonical name a group goes by (its formal full
name, else its longest, most common one), and the shared names added to each group they may mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline_kit.text.cast_en import en_groups
from pipeline_kit.text.cast_zh import zh_groups
from pipeline_kit.text.name_groups import NameGroups
from pipeline_kit.text.names import Mentions


@dataclass(frozen=True)
class People:
    """Canonical name -> every name of that person (shared names included in each candidate)."""

    members: dict[str, set[str]]
    shared: frozenset[str]


def people(texts: Sequence[str], lang: str, found: Sequence[Mentions]) -> People:
    """The book's people, from its chapter texts and their mentions."""
    result = (zh_groups if lang == "zh" else en_groups)(texts, found)
    members = {_canonical(g, result, lang): set(g) for g in result.groups}
    owner = {n: c for c, g in members.items() for n in g}
    for name, fulls in result.shared.items():
        for canonical in {owner[f] for f in fulls if f in owner}:
            members[canonical].add(name)
    return People(members, frozenset(result.shared))


def _canonical(members: set[str], found: NameGroups, lang: str) -> str:
    """The name a group goes by: its formal full name, else its longest, most common one."""
    pool = [m for m in members if m in found.formal] or sorted(members)
    pool = [m for m in pool if m not in found.roles] or pool  # the inspector, Gregson: Gregson
    pool = [m for m in pool if m not in found.once] or pool  # Mara, whom the text once calls Mara Quill
    if lang == "zh":
        pool = [m for m in pool if len(m) >= 3 and m not in found.titled] or pool
    return max(pool, key=lambda m: (len(m.split()) if lang != "zh" else 0, found.freq[m], m))
