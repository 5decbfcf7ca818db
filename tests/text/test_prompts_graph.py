"""Prompt templates (built-in and overridden) and the pure parts of the task graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline_kit.errors import BadInput
from pipeline_kit.text.graph import char_slug, seed_for, shot_specs
from pipeline_kit.text.prompts import Templates, caption
from pipeline_kit.text.records import Shot


def _shot(**changes: object) -> Shot:
    fields: dict = dict(shot_id="bk-1a2b3c-c001-s0001", bookcode="bk-1a2b3c", chapter=1, seq=1, scene=1,
                        location="Harbour", time_of_day="night", characters=("Mara", "Tobias"),
                        text="“Row,” said Mara.\n\n", span_start=0, span_end=19, dialogue=True, duration_s=4.0,
                        prompt="P", video_prompt="V")
    fields.update(changes)
    return Shot(**fields)


def test_templates_can_be_overridden_file_by_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A template directory (argument or $PIPELINE_KIT_TEMPLATES) replaces only the files it holds."""
    (tmp_path / "image_prompt.txt").write_text("Ink drawing of $caption at $location", encoding="utf-8")
    custom = Templates.load(tmp_path)
    builtin = Templates.load()
    assert custom.image.template == "Ink drawing of $caption at $location"
    assert custom.video.template == builtin.video.template
    monkeypatch.setenv("PIPELINE_KIT_TEMPLATES", str(tmp_path))
    assert Templates.load().image.template == custom.image.template


def test_a_broken_template_is_bad_input(tmp_path: Path) -> None:
    """A template with a malformed placeholder is refused with BadInput, not a crash mid-split."""
    (tmp_path / "video_prompt.txt").write_text("Cost: $5 and ${broken", encoding="utf-8")
    with pytest.raises(BadInput, match="video_prompt"):
        Templates.load(tmp_path)


def test_captions_are_one_line_and_bounded() -> None:
    """Captions squeeze whitespace and italics marks and stay prompt-sized."""
    assert caption("A _very_\n  long\nline.", "en") == "A very long line."
    assert caption("    悟空道：\n    “好！”", "zh") == "悟空道：“好！”"
    assert len(caption("word " * 500, "en")) == 400


def test_seeds_slugs_and_dependencies_are_stable() -> None:
    """Seeds come from the task id alone; frames wait for the characters' sheets, the video for both frames."""
    assert seed_for("x/first_frame") == seed_for("x/first_frame") != seed_for("x/last_frame")
    assert 0 <= seed_for("anything") < 2**31
    assert char_slug("Irene Adler") == "irene-adler" and char_slug("孙悟空") == "孙悟空" and char_slug("///")
    first, last, video = shot_specs(_shot(), "en")
    assert first.depends_on == last.depends_on == ("bk-1a2b3c/char/mara", "bk-1a2b3c/char/tobias")
    assert video.depends_on == (first.task_id, last.task_id)
    assert first.params is not None and first.params["prompt"].startswith("P\n")
