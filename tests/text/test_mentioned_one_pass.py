"""`moments.mentioned` reads an English text once for all the people brought in before, where it
searched once per person: the one pass must find exactly what the searches found (who is met again where),
also where two people's words start alike, one's words run on into another's (or its own), or a
mention is not at a word's or clause's start."""

from __future__ import annotations

import random
import re
from collections import Counter

from pipeline_kit.text.moments import Someone, mentioned


def _searched(text: str, known: list[Someone]) -> list[tuple[int, Someone]]:
    """The answer as one search per person gave it (the rule before the one pass)."""
    out = []
    people = list(dict.fromkeys(known))
    for person in people:
        pattern = rf"\b[Tt]he {re.escape(person.words)}\b"
        out += [(m.start(), person) for m in re.finditer(pattern, text)]
    heads = Counter(p.words.split()[-1] for p in people)
    alone = {p.words.split()[-1]: p for p in people if heads[p.words.split()[-1]] == 1 and " " in p.words}
    if alone:
        pattern = rf"\b[Tt]he ({'|'.join(map(re.escape, alone))})\b"
        out += [(m.start(), alone[m.group(1)]) for m in re.finditer(pattern, text)]
    return sorted(dict(out).items())


EN_PEOPLE = [
    Someone("the old man", "an old man", "male"),
    Someone("the old man in grey", "an old man in grey", "male"),
    Someone("the man", "a man", "male"),
    Someone("the tall woman", "a tall woman", "female"),
    Someone("the woman the tall", "a woman", "female"),  # words that run on into another's
    Someone("the boy", "a boy", "male"),
    Someone("the man the man", "a man", "male"),  # met again inside its own mention
]
EN_PIECES = [
    "the old man",
    "The old man in grey",
    "the man",
    "bathe old man",
    "the tall woman",
    "the woman the tall",
    "woman",
    "the boy's",
    "theboy",
    "the tall woman the tall",
    "the man the man the man",
    ", ",
    ". ",
    " said ",
    "\n",
    " the ",
]


def test_one_pass_finds_what_a_search_per_person_found() -> None:
    people, pieces = EN_PEOPLE, EN_PIECES
    rnd = random.Random(7)
    for _ in range(400):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 30)))
        known = rnd.sample(people, rnd.randint(0, len(people)))
        assert mentioned(text, "en", known) == _searched(text, known), (text, known)
