"""The report reads well for a run of minutes and a run of eleven days alike: every chart has
data filling its axes or says why not, units fit the run, headings are plain words, times are
to the second, the book's title is on the page and every cut table says how much it shows."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from pipeline_kit.analysis import timescale
from pipeline_kit.analysis.charts import NothingToShow
from pipeline_kit.analysis.load import load
from pipeline_kit.analysis.postmortem import postmortem
from pipeline_kit.analysis.report import HTML_ROWS, rate_text, rows_note, write_report
from pipeline_kit.analysis.simulate import Plan, simulate
from pipeline_kit.db import Database

from .chartcheck import problems
from .conftest import TITLES, insert_log, simulated_rows

ELEVEN_DAYS = Plan(
    tasks=390,
    minutes=120,
    machines=3,
    speeds=(1.0, 0.8, 1.2),
    fail_streaks=((0, 4),),
    fail_rate=0.04,
    sleeps=((1, 3010, 4500),),
    seed=7,
)


@pytest.fixture
def days_db(sqlite_db: Database) -> Database:
    """A simulated run of about eleven and a half days on three PCs, with failures and a PC
    asleep for a day, as rows in SQLite."""
    insert_log(sqlite_db, **simulated_rows(simulate(ELEVEN_DAYS)))
    return sqlite_db


def _bad_charts(db: Database) -> dict[str, list[str]]:
    charts = postmortem(load(db)).figures()
    return {name: p for name, chart in charts.items() if (p := problems(chart))}


def _page(db: Database, out: Path, book: str | None = None) -> str:
    return write_report(db, book, out).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "seconds, unit",
    [
        (0, "seconds"),
        (45, "seconds"),
        (119, "seconds"),
        (150, "minutes"),
        (90 * 60, "minutes"),
        (3 * 3600, "hours"),
        (47 * 3600, "hours"),
        (2 * 86400, "days"),
        (11 * 86400, "days"),
    ],
)
def test_unit_fits_the_span(seconds: float, unit: str) -> None:
    """A span is shown in the largest unit it is at least two of: a 45 s run in seconds, a
    90 min run in minutes, eleven days in days (never 'makespan 0.0 hours')."""
    assert timescale.unit_for(seconds).name == unit


def test_human_durations_and_bins() -> None:
    """Durations read as words with one decimal below a hundred; throughput bins are round sizes
    cutting the run into at most BIN_TARGET pieces."""
    assert [timescale.human(s) for s in (0.4, 45, 150, 5400, 86400 * 11.5, 86400 * 1.0)] == [
        "0.4 s",
        "45 s",
        "2.5 min",
        "90 min",
        "11.5 days",
        "24 h",
    ]
    assert timescale.human(86400 * 365) == "365 days"
    assert timescale.human(86400, timescale.DAYS) == "1 day"
    for span in (0, 45, 5400, 86400 * 11.5):
        size = timescale.bin_for(span)
        assert size in timescale.BINS_S and span / size <= timescale.BIN_TARGET
    assert timescale.bin_for(45) == 5 and timescale.bin_for(86400 * 11.5) == 43200
    assert timescale.per(3600) == "hour" and timescale.per(300) == "5 min"


def test_hand_built_run_every_chart_has_data(known_db: Database) -> None:
    """The 90-minute hand-built log (failures, a lost lease, costs, heartbeats): every chart
    has data inside its axes, x limits fitted to the data, no overlapping or cut-off labels."""
    assert _bad_charts(known_db) == {}


def test_eleven_day_run_every_chart_has_data(days_db: Database) -> None:
    """A simulated eleven-day run: every chart has data inside its axes, x limits fitted to
    the data, no overlapping or cut-off labels."""
    assert _bad_charts(days_db) == {}


def test_eleven_day_run_speaks_in_days(days_db: Database, tmp_path: Path) -> None:
    """Over eleven days the Gantt, idle time and makespans are in days, throughput is counted
    per 12 h, the clock axes span the days, and the page's durations are in days."""
    pm = postmortem(load(days_db))
    charts = pm.figures()
    gantt = charts["replay_gantt"]
    assert not isinstance(gantt, NothingToShow)
    assert gantt.axes[-1].get_xlabel() == "days from the start"
    assert all(re.search(r"makespan \d+(\.\d)? days$", ax.get_title()) for ax in gantt.axes)
    idle = charts["idle"]
    assert not isinstance(idle, NothingToShow) and idle.axes[0].get_xlabel() == "days"
    assert set(pm.throughput["bin_s"]) == {43200}
    queue = charts["queue_depth"]
    assert not isinstance(queue, NothingToShow)
    low, high = queue.axes[0].get_xlim()
    assert 11 < high - low < 13  # matplotlib date numbers are days
    page = _page(days_db, tmp_path / "r")
    assert "makespan (days)" in page and "working span (days)" in page
    assert "Tasks completed per 12 h" in str(charts["throughput"].axes[0].get_title())


def test_ninety_minute_run_speaks_in_minutes(known_db: Database, tmp_path: Path) -> None:
    """A 90-minute run reads in minutes: Gantt axis, idle axis and the page's durations, and
    throughput counted per 5 min."""
    pm = postmortem(load(known_db))
    charts = pm.figures()
    assert charts["replay_gantt"].axes[-1].get_xlabel() == "minutes from the start"
    assert charts["idle"].axes[0].get_xlabel() == "minutes"
    assert set(pm.throughput["bin_s"]) == {300}
    page = _page(known_db, tmp_path / "r")
    assert "working span (min)" in page and "median gap (min)" in page


def test_empty_database_says_why_instead_of_empty_axes(sqlite_db: Database, tmp_path: Path) -> None:
    """A database with no activity gets one 'nothing to show: why' line per chart and no
    PNG of an empty axis."""
    page = _page(sqlite_db, tmp_path / "empty")
    assert not list((tmp_path / "empty").glob("*.png"))
    for why in (
        "no task was completed",
        "no attempt completed",
        "no heartbeat was recorded",
        "no task was created",
        "no attempt has completed yet",
    ):
        assert f"nothing to show: {why}" in page
    assert page.count("nothing to show: ") == 9


def test_zero_cost_and_no_failures_say_so(sqlite_db: Database, tmp_path: Path) -> None:
    """A clean, free run: the cost and failure charts are one line each, not ±0.04 axes, and
    the empty failure tables say 'none: why'."""
    insert_log(
        sqlite_db,
        task_rows=[
            ("t1", "bk1", "s1", "frame", "image", "completed", 10),
            ("t2", "bk1", "s2", "frame", "image", "completed", 12),
        ],
        attempt_rows=[
            ("t1", 1, "pc-a", 0, 10, "completed", None, 0.0),
            ("t2", 1, "pc-a", 10, 12, "completed", None, None),
        ],
    )
    page = _page(sqlite_db, tmp_path / "r")
    assert "nothing to show: no attempt recorded a cost (2 attempts, total 0)" in page
    assert "nothing to show: no attempt failed, was retried or lost its lease" in page
    assert "none: no lease was lost" in page
    assert not (tmp_path / "r" / "costs.png").exists()
    assert not (tmp_path / "r" / "errors.png").exists()


def test_page_names_the_book_and_reads_as_prose(known_db: Database, tmp_path: Path) -> None:
    """The page's title is the book's title; headings and column headers are words, not raw
    column names; no time carries fractions of a second."""
    page = _page(known_db, tmp_path / "bk1", "bk1")
    assert f"<h1>Post-mortem: {TITLES['bk1']} (bk1)</h1>" in page
    assert f"<title>Post-mortem: {TITLES['bk1']} (bk1)</title>" in page
    headers = re.findall(r"<th>(.*?)</th>", page) + re.findall(r"<h[123]>(.*?)</h[123]>", page)
    assert headers and not [h for h in headers if "_" in h]
    assert not re.search(r"\d\d:\d\d:\d\d\.\d", page)
    everything = _page(known_db, tmp_path / "all")
    assert "The Lamplighter of Gullhaven (bk1)" in everything
    assert "Tom &amp; Jerry &lt;Abroad&gt; (bk2)" in everything


def test_every_table_says_how_many_rows_it_shows(days_db: Database, tmp_path: Path) -> None:
    """A table longer than the page shows says 'N of M rows' with M the rows of its CSV and
    shows exactly N; a short one says it shows all of them."""
    page = _page(days_db, tmp_path / "r")
    out = tmp_path / "r"
    with (out / "queue_depth.csv").open() as fh:
        total = len(list(csv.DictReader(fh)))
    assert total > HTML_ROWS
    assert (
        f"Showing {HTML_ROWS} of {total:,} rows, evenly spaced over the run; every row is in queue_depth.csv."
    ) in page
    queue = page.split("<h3>Queue over time</h3>")[1].split("</table>")[0]
    assert queue.split("<tbody>")[1].count("<tr>") == HTML_ROWS
    with (out / "cost_by_shot.csv").open() as fh:
        shots = len(list(csv.DictReader(fh)))
    assert (f"Showing the {HTML_ROWS} costliest of {shots:,} rows; every row is in cost_by_shot.csv.") in page
    with (out / "reclaims.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 1
    assert "1 row, all shown (also in reclaims.csv)." in page
    with (out / "workers.csv").open() as fh:
        workers = len(list(csv.DictReader(fh)))
    assert f"{workers} rows, all shown (also in workers.csv)." in page
    assert rows_note("reclaims", 40, 100) == ("Showing the first 40 of 100 rows; every row is in reclaims.csv.")


def test_eta_reads_in_a_fitting_rate_and_duration(known_db: Database, tmp_path: Path) -> None:
    """The ETA sentence gives the rate per minute, hour or day (a number from 1 to 600) and
    the time left in a fitted unit: one task left at 3.3 per hour over 90 min is 18 min."""
    assert [rate_text(r) for r in (5818.9, 3.3, 0.5)] == [
        "97.0 completions per minute",
        "3.3 completions per hour",
        "12.0 completions per day",
    ]
    page = _page(known_db, tmp_path / "r")
    assert (
        "1 task remains; at 3.3 completions per hour (the last 90 min) that is 18 min more, about 2026-01-01 01:48 UTC."
    ) in page


def test_a_chinese_chart_title_draws_real_glyphs() -> None:
    """Charts use the CJK font when one is found: a Chinese PC name draws with no missing-glyph
    warning (the test extra ships Noto Sans CJK, so the font is always there in tests)."""
    import warnings

    import pandas as pd

    from pipeline_kit.analysis import charts

    frame = pd.DataFrame({"worker_id": ["电脑一号", "电脑二号"], "completed": [3, 5], "share": [0.375, 0.625]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chart = charts.completed_per_pc(frame)
        charts.png_bytes(chart)  # type: ignore[arg-type]
    assert not [w for w in caught if "missing from" in str(w.message)]
