"""The optional model splitter: a valid answer is used, anything else falls back to the rules."""

from __future__ import annotations

import json

import pytest

from pipeline_kit.text import ModelSplitter, RuleSplitter, sample_book_path
from pipeline_kit.text.chapters import find_chapters
from pipeline_kit.text.segment import units

TEXT = find_chapters(sample_book_path().read_text(encoding="utf-8"), "x").chapters[0].text


def _pairs_answer(messages: list[dict[str, str]]) -> str:
    """A well-behaved fake model: two sentences a shot, a new scene halfway."""
    n = len(units(TEXT, "en"))
    groups = [list(range(k, min(k + 2, n))) for k in range(0, n, 2)]
    shots = [
        {
            "units": g,
            "scene": 1 if i < len(groups) // 2 else 2,
            "location": "Harbour",
            "time_of_day": "evening",
            "characters": ["Mara"],
        }
        for i, g in enumerate(groups)
    ]
    return "Here you go:\n```json\n" + json.dumps({"shots": shots}) + "\n```"


def test_valid_model_answer_is_used_and_tiles_the_text() -> None:
    """A valid answer becomes the shots: its grouping, scenes and names, covering the text exactly."""
    splitter = ModelSplitter(_pairs_answer)
    drafts = splitter.split(TEXT, "en")
    assert not splitter.fallbacks
    assert drafts[0].span_start == 0 and drafts[-1].span_end == len(TEXT)
    assert all(a.span_end == b.span_start for a, b in zip(drafts, drafts[1:]))
    assert {d.scene for d in drafts} == {1, 2} and drafts[0].characters == ("Mara",)
    assert drafts != RuleSplitter().split(TEXT, "en")


def _bad(kind: str) -> str:
    n = len(units(TEXT, "en"))
    good = json.loads(_pairs_answer([]).split("```json\n")[1].split("\n```")[0])
    if kind == "not json":
        return "I cannot help with that."
    if kind == "gap":
        good["shots"][1]["units"] = good["shots"][1]["units"][1:]
    elif kind == "repeat":
        good["shots"][1]["units"] = [0, 1]
    elif kind == "short":
        good["shots"] = good["shots"][:-1]
    elif kind == "scene jump":
        good["shots"][1]["scene"] = 5
    elif kind == "bad time":
        good["shots"][0]["time_of_day"] = "teatime"
    elif kind == "bad names":
        good["shots"][0]["characters"] = "Mara"
    elif kind == "past the end":
        good["shots"][-1]["units"] = list(range(good["shots"][-1]["units"][0], n + 3))
    return json.dumps(good)


@pytest.mark.parametrize(
    "kind", ["not json", "gap", "repeat", "short", "scene jump", "bad time", "bad names", "past the end", "raises"]
)
def test_invalid_answers_fall_back_to_the_rules(kind: str) -> None:
    """Any answer that is not valid JSON of the schema covering every unit once is replaced by the rules' result."""

    def chat(messages: list[dict[str, str]]) -> str:
        if kind == "raises":
            raise TimeoutError("model did not answer")
        return _bad(kind)

    splitter = ModelSplitter(chat)
    assert splitter.split(TEXT, "en") == RuleSplitter().split(TEXT, "en")
    assert len(splitter.fallbacks) == 1
