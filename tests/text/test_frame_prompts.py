"""Frame prompts an image model can use: who (as the bible describes them), where, when, a book-wide
style line, and the action that opens or ends the shot."""

from __future__ import annotations

import sqlalchemy as sa

from pipeline_kit.db import Database
from pipeline_kit.db.schema import tasks
from pipeline_kit.text import castdb, ingest_file, sample_book_path, split_book
from pipeline_kit.text.prompts import frame_prompt
from tests.text.helpers import SAMPLE_TITLE, shots_with_frame_prompts


def _frames(db: Database) -> list[tuple[str, int, int, tuple[str, ...], str, str, str, str]]:
    """(shot id, chapter, seq, characters, location, time of day, first prompt, last prompt) in book order."""
    return [
        (
            r["shot_id"],
            r["chapter"],
            r["seq"],
            tuple(r["characters"]),
            r["location"] or "unspecified place",
            r["time_of_day"] or "unspecified time",
            first,
            last,
        )
        for r, first, last in shots_with_frame_prompts(db)
    ]


def _adjacent_pairs_naming(frames: list, name: str) -> list[tuple]:  # type: ignore[type-arg]
    return [
        (a, b)
        for a, b in zip(frames, frames[1:])
        if a[1] == b[1] and b[2] == a[2] + 1 and name in a[3] and name in b[3]
    ]


def test_frame_prompts_carry_place_time_style_and_differ_by_the_action(sqlite_db: Database) -> None:
    """Every frame prompt names the shot's place, time of day and the book-wide style line; a shot's
    first and last frame prompts differ (by the opening and closing action)."""
    bookcode = ingest_file(sqlite_db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(sqlite_db, bookcode)
    frames = _frames(sqlite_db)
    styles = set()
    for _, _, _, _, place, when, first, last in frames:
        assert place in first and when in first and place in last and when in last
        assert first != last
        styles |= {line for line in first.splitlines() if line.startswith("Style:")}
    assert len(styles) == 1


def test_adjacent_shots_describe_a_character_alike_and_follow_an_edit(sqlite_db: Database) -> None:
    """Two adjacent shots naming the same character carry the same description in their frame prompts,
    from the bible; after `cast describe` both carry the new description, and so do their videos."""
    bookcode = ingest_file(sqlite_db, sample_book_path(), SAMPLE_TITLE).bookcode
    split_book(sqlite_db, bookcode)
    mara = next(e.character for e in castdb.list_cast(sqlite_db, bookcode) if e.character.name == "Mara")
    assert mara.description
    pairs = _adjacent_pairs_naming(_frames(sqlite_db), "Mara")
    assert pairs
    for a, b in pairs:
        for prompt in (a[6], a[7], b[6], b[7]):
            assert f"Mara ({mara.description})" in prompt
    castdb.describe(sqlite_db, bookcode, "Mara", "a girl of twelve in a red oilskin coat")
    with sqlite_db.engine.connect() as conn:
        videos = {
            r.shot_id: r.params["video_prompt"]
            for r in conn.execute(sa.select(tasks.c.shot_id, tasks.c.params).where(tasks.c.kind == "video"))
        }
    for a, b in _adjacent_pairs_naming(_frames(sqlite_db), "Mara"):
        for prompt in (a[6], a[7], b[6], b[7], videos[a[0]], videos[b[0]]):
            assert "Mara (a girl of twelve in a red oilskin coat)" in prompt


def test_first_and_last_frame_take_the_opening_and_closing_action() -> None:
    """The first frame is pinned to the shot's first sentence, the last frame to its last sentence."""
    text = "Mara climbed the stairs. The wind rose. She lit the great lamp."
    first, last = (frame_prompt("P", kind, text, "en") for kind in ("first_frame", "last_frame"))
    assert "climbed the stairs" in first and "lit the great lamp" not in first
    assert "lit the great lamp" in last and "climbed the stairs" not in last
    zh = "行者举起铁棒。八戒躲在后面。唐僧念起紧箍咒。"
    first, last = (frame_prompt("P", kind, zh, "zh") for kind in ("first_frame", "last_frame"))
    assert "行者举起铁棒" in first and "唐僧念起紧箍咒" in last


def test_a_sentence_that_only_describes_someone_is_no_frames_moment() -> None:
    """“Mr. Marsh was a thin man in a black coat” is what he looks like (the Characters line says
    it), not a moment: the last frame takes the last thing that happens."""
    text = "John Marsh lit the lamps. He climbed down. Mr. Marsh was a thin man in a black coat."
    last = frame_prompt("P", "last_frame", text, "en")
    assert "He climbed down" in last and "thin man" not in last
    zh = "王婶走进门来。她是个矮胖的老妇人，头发花白。"
    first, last = (frame_prompt("P", kind, zh, "zh") for kind in ("first_frame", "last_frame"))
    assert "王婶走进门来" in last and "矮胖" not in first + last
    only = frame_prompt("P", "first_frame", "Mr. Marsh was a thin man.", "en")
    assert "thin man" in only  # a shot with nothing else still shows him
