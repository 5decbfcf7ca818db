"""Prompt templates (built-in and overridden) and the pure parts of the task graph."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import shots, tasks
from pipeline_kit.errors import BadInput
from pipeline_kit.ornaments import without_ornaments
from pipeline_kit.text import ingest_file, sample_book_path, split_book
from pipeline_kit.text.graph import char_slug, seed_for, shot_specs
from pipeline_kit.text.prompts import Templates, caption, shot_size
from pipeline_kit.text.records import Shot
from tests.text.helpers import SAMPLE_TITLE


def _shot(**changes: object) -> Shot:
    fields: dict = dict(
        shot_id="bk-1a2b3c-c001-s0001",
        bookcode="bk-1a2b3c",
        chapter=1,
        seq=1,
        scene=1,
        location="Harbour",
        time_of_day="night",
        characters=("Mara", "Tobias"),
        text="“Row,” said Mara.\n\n",
        span_start=0,
        span_end=19,
        dialogue=True,
        duration_s=4.0,
        prompt="P",
        video_prompt="V",
    )
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
    """Seeds come from the task id alone; frames wait for the characters' sheets, the last frame also
    for the first (it is drawn from it), the video for both frames; the voice waits for nothing."""
    assert seed_for("x/first_frame") == seed_for("x/first_frame") != seed_for("x/last_frame")
    assert 0 <= seed_for("anything") < 2**31
    assert char_slug("Irene Adler") == "irene-adler" and char_slug("孙悟空") == "孙悟空" and char_slug("///")
    first, last, video, voice = shot_specs(_shot(), "en")
    assert (voice.kind, voice.lane, voice.depends_on) == ("voice", "voice", ())
    assert first.depends_on == ("bk-1a2b3c/char/mara", "bk-1a2b3c/char/tobias")
    assert set(last.depends_on) == {*first.depends_on, first.task_id}
    assert video.depends_on == (first.task_id, last.task_id)
    assert first.params is not None and first.params["prompt"].startswith("P\n")


@pytest.mark.parametrize("marker", ["* * *", "***", "＊＊＊", "※", "  ~ ~ ~  ", "◆◆◆"])
def test_scene_break_markers_stay_out_of_captions(marker: str) -> None:
    """A scene-break ornament opens the shot's text (shots tile the chapter) but is layout, not
    words: no caption, and so no image or video prompt, shows it."""
    assert caption(f"{marker}\n\nThe crossing took half an hour.\n", "en") == "The crossing took half an hour."
    assert caption(f"{marker}\n次日清晨，玄德出城。", "zh") == "次日清晨，玄德出城。"
    assert caption("He counted: 3 * 4 * 5 lamps.", "en") == "He counted: 3 * 4 * 5 lamps."


@pytest.mark.parametrize("line", ["* * *", "\u3000＊＊＊", "  ※", "§", "XII.", " ~ ~ ~ ", "◇"])
def test_an_ornament_line_goes_wherever_it_stands(line: str) -> None:
    """An ornament line is left out first, in the middle or last, however it is indented; a text
    with none (dashes, a capital I, a numeral in words) comes back as it was, every line kept."""
    assert without_ornaments(f"He waited.\n\n{line}\n\nShe came.\n") == "He waited.\n\n\nShe came.\n"
    assert without_ornaments(f"{line}\nShe came.") == "She came."
    assert without_ornaments(f"She came.\n\n{line}") == "She came.\n"
    plain = "Line one\n  I. Adler was here.\n- a dash\n— and another\nIV is a number\n\n"
    assert without_ornaments(plain) == plain


def test_the_sample_books_scene_breaks_reach_no_task(sqlite_db: Database) -> None:
    """After a split of the sample book (which has `* * *` breaks), no task's caption, prompt or
    subtitle holds the marker."""
    bookcode = ingest_file(sqlite_db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(sqlite_db, bookcode)
    with sqlite_db.engine.connect() as conn:
        texts = conn.execute(sa.select(shots.c.text)).scalars().all()
        stored = [json.dumps(p, ensure_ascii=False) for p in conn.execute(sa.select(tasks.c.params)).scalars()]
    assert any("* * *" in text for text in texts)  # the marker is in the book ...
    assert stored and not [p for p in stored if "* * *" in p]  # ... and in no task


def _unnamed(prompt: str, characters: Sequence[str]) -> int:
    """How many people the prompt's Characters line stages besides the shot's `characters`."""
    line = next(x for x in prompt.splitlines() if x.startswith("Characters: ")).removeprefix("Characters: ")
    entries = re.split(r";\s*(?![^(]*\))", line.rstrip("."))  # a description's own ; is inside ( )
    return sum(1 for e in entries if e != "none named" and e.split(" (")[0] not in characters)


def test_every_frame_prompt_says_how_close_the_camera_stands(sqlite_db: Database) -> None:
    """The rules give each shot a shot size from who is in it (the setting alone wide, one speaker
    in close-up, two as a two-shot) and both frame prompts carry it with the place and the cast;
    an unnamed person the shot stages (an old man in a blue coat) counts as one of its people."""
    assert shot_size(0, False) == "wide shot of the setting" and shot_size(1, True) == "close-up"
    assert shot_size(1, False) == "medium shot" and shot_size(2, True) == "medium two-shot"
    assert shot_size(5, False) == "wide shot of the group"
    bookcode = ingest_file(sqlite_db, sample_book_path(), "The Lamplighter").bookcode
    split_book(sqlite_db, bookcode)
    with sqlite_db.engine.connect() as conn:
        rows = conn.execute(
            sa.select(shots.c.shot_id, shots.c.characters, shots.c.dialogue).where(shots.c.bookcode == bookcode)
        ).all()
        frames = dict(
            conn.execute(
                sa.select(tasks.c.task_id, tasks.c.params).where(tasks.c.kind.in_(["first_frame", "last_frame"]))
            ).all()
        )
    sizes = set()
    for shot_id, characters, dialogue in rows:
        prompt = frames[f"{shot_id}/first_frame"]["prompt"]
        size = shot_size(len(characters or ()) + _unnamed(prompt, characters or ()), bool(dialogue))
        sizes.add(size)
        for kind in ("first_frame", "last_frame"):
            assert f": {size}." in frames[f"{shot_id}/{kind}"]["prompt"]
    assert len(sizes) >= 3  # the sample book has shots of every kind, not one size for all
