"""Image prompts show a moment, never words: quotations and their speech tags leave, narration
stays (a speech verb in plain narration too); a shot that is all talk shows its people talking;
every frame asks for no lettering, and the last frame says it continues the first."""

from __future__ import annotations

import pytest

from pipeline_kit.text.prompts import NO_LETTERING, Templates, frame_prompt, place_prompt, sheet_prompt, unspoken


@pytest.mark.parametrize(
    ("text", "lang", "kept", "gone"),
    [
        (
            "Ansel lit the stove. “It’s cold,” said Ansel. Brin nodded.",
            "en",
            ["lit the stove", "Brin nodded"],
            ["cold", "said"],
        ),
        ("Brin said, “Hush.” The candle guttered.", "en", ["The candle guttered"], ["Hush", "said"]),
        ("Brin said nothing at all.", "en", ["Brin said nothing at all."], []),
        ("老渔夫收起网，叹道：“天要变了。”小船靠了岸。", "zh", ["老渔夫收起网", "小船靠了岸"], ["天要变了", "叹道"]),
        # A quotation opened before the shot, or whose opening mark the book left out: its words still go.
        ("and the tide is turning.” Ansel shut the door.", "en", ["Ansel shut the door"], ["tide", "”"]),
        ("风也停了，雨也住了。”渔夫点了点头。", "zh", ["渔夫点了点头"], ["风也停了", "”"]),
        ("众人都吃惊的喊：着火了！”渔夫跑了出去。", "zh", ["众人都吃惊的喊", "渔夫跑了出去"], ["着火了", "”"]),
        # A closing mark printed where the opening one belongs (道：”…”).
        ("渔夫道：”快收网。”小船靠了岸。", "zh", ["小船靠了岸"], ["快收网", "”"]),
    ],
)
def test_spoken_words_leave_and_narration_stays(text: str, lang: str, kept: list[str], gone: list[str]) -> None:
    """What is said (and who says it) is out of the image text; what happens is in."""
    out = unspoken(text, lang)
    assert all(k in out for k in kept) and not any(g in out for g in gone), out


def test_frame_prompts_pin_one_moment_without_lettering() -> None:
    """The first frame shows the first thing that happens, the last the last, continuing the
    first; an all-dialogue shot shows its people talking; both ask for no text in the picture."""
    text = "Ansel lit the stove. “It’s cold,” said Ansel. Brin pulled on her boots."
    first = frame_prompt("P", "first_frame", text, "en", ("Ansel", "Brin"))
    last = frame_prompt("P", "last_frame", text, "en", ("Ansel", "Brin"))
    assert "lit the stove" in first and "boots" in last and "continuation of the first frame" in last
    assert NO_LETTERING in first and NO_LETTERING in last and "cold" not in first + last
    talk = frame_prompt("P", "first_frame", "“Now?” “Now.”", "en", ("Ansel", "Brin"))
    assert "Ansel and Brin talking" in talk


def test_sheet_prompts_ask_for_no_lettering() -> None:
    """Character and location sheets are image prompts too: each asks for no lettering."""
    templates = Templates.load()
    assert NO_LETTERING in sheet_prompt(templates, title="T", name="Wren", description="a tall girl")
    assert NO_LETTERING in place_prompt(templates, title="T", name="quay", description="")
