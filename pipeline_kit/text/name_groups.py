"""Names joined into groups, one group per person: the union-find the language rules use, and
what they hand back."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field


@dataclass(frozen=True)
class NameGroups:
    """What a language's rules found: groups of names (one per person), the formal names, each
    name's frequency, and shared names -> the names of the groups they may stand for."""

    groups: list[set[str]]
    formal: set[str]
    freq: Counter[str]
    shared: dict[str, set[str]] = field(default_factory=dict)
    titled: frozenset[str] = frozenset()  # surname + title (孙大圣): never the canonical name
    roles: frozenset[str] = frozenset()  # 樵夫, the inspector: the canonical name only of a group with no name
    once: frozenset[str] = frozenset()  # a full name met once (Mara Quill): an alias, never the canonical name


class NameSets:
    """Names joined into groups, one per person (union-find)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def add(self, name: str) -> None:
        self.parent.setdefault(name, name)

    def find(self, name: str) -> str:
        self.add(name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, first: str, *others: str) -> None:
        root = self.find(first)
        for other in others:
            self.parent[self.find(other)] = root

    def groups(self) -> list[set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for name in list(self.parent):
            out[self.find(name)].add(name)
        return sorted(out.values(), key=lambda g: sorted(g))
