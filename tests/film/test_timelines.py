"""A timeline counts time at a rate SMPTE timecode has, so OTIO's FCP XML and EDL adapters (which
write timecode and refuse other rates) convert it: the film's own rate when timecode has it, else
its smallest whole multiple that timecode has (each film frame a whole number of timeline frames),
else the film's own."""

from __future__ import annotations

import opentimelineio as otio
import pytest

from pipeline_kit.film.timelines import edit_rate


@pytest.mark.parametrize(
    ("fps", "rate"), [(24, 24), (25, 25), (30, 30), (60, 60), (12, 24), (16, 48), (15, 30), (8, 24), (10, 30), (20, 60)]
)
def test_a_timeline_rate_is_a_timecode_rate_holding_whole_film_frames(fps: int, rate: int) -> None:
    assert edit_rate(fps) == rate
    assert otio.opentime.RationalTime(fps * 3, rate).to_timecode()  # raises at a rate timecode lacks


@pytest.mark.parametrize("fps", [7, 120])
def test_a_rate_no_timecode_multiple_has_stays_the_films(fps: int) -> None:
    assert edit_rate(fps) == fps
