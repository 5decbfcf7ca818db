"""Write a run's post-mortem: an HTML page (no code in it), PNG charts, CSV metrics and a Parquet
snapshot of the log it was computed from.

The page is for reading: the book's title, plain headings and column names, durations in the
unit fitted to each column, times to the second, a chart or one line saying why there is none,
and for each table how many of its rows the page shows (the CSV beside it has every row, at
full precision).

The same data gives the same files: frames are sorted, floats written with fixed precision, the
page carries the log's own latest time rather than the clock, and PNGs are pinned (see charts).
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline_kit.analysis import charts, timescale
from pipeline_kit.analysis.films import copy_films, films_html
from pipeline_kit.analysis.load import RunLog, load, snapshot
from pipeline_kit.analysis.postmortem import Postmortem, postmortem
from pipeline_kit.analysis.reliability import LONG_GAP_FACTOR
from pipeline_kit.db.connect import Database
from pipeline_kit.errors import NotFound

HTML_ROWS = 40  # longer tables are cut on the page; the CSV has every row
FLOAT_FORMAT = "%.6f"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
# section heading, its chart, the tables shown under it, in page order
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Who did the work", "completed_per_pc", ("workers", "completed_per_pc")),
    ("Throughput", "throughput", ("throughput",)),
    ("How long tasks took", "durations", ("duration_stats",)),
    ("Retries and failures", "errors", ("attempts_per_task", "errors_by_kind", "outcomes_by_pc")),
    ("Heartbeats and reclaimed leases", "heartbeats", ("heartbeats", "heartbeat_long_gaps", "reclaims")),
    ("Busy and idle time", "idle", ("idle_time",)),
    ("Cost", "costs", ("cost_by_provider", "cost_by_pc", "cost_by_lane", "cost_by_shot")),
    ("Queue and estimated finish", "queue_depth", ("status", "eta", "queue_depth")),
    (
        "Static split versus dynamic claiming (replayed from this run)",
        "replay_gantt",
        ("replay_makespans", "replay_machines"),
    ),
)
# table -> its heading on the page, and what an empty table means
TABLES: dict[str, tuple[str, str]] = {
    "workers": ("PCs", "no PC appears in the log"),
    "completed_per_pc": ("Completed tasks per PC", "no PC appears in the log"),
    "throughput": ("Completions per PC and time bin", "no task was completed"),
    "duration_stats": ("Duration of completed attempts per kind of task", "no attempt completed"),
    "attempts_per_task": ("Attempts each task needed", "there are no tasks"),
    "errors_by_kind": ("Failures by error kind", "no attempt failed, was retried or lost its lease"),
    "outcomes_by_pc": ("Attempt outcomes per PC", "no task was claimed"),
    "heartbeats": ("Heartbeats per PC", "no heartbeat was recorded"),
    "heartbeat_long_gaps": (
        "Long heartbeat gaps",
        (f"no PC went silent for more than {LONG_GAP_FACTOR:g}x its median heartbeat gap"),
    ),
    "reclaims": ("Reclaimed leases", "no lease was lost"),
    "idle_time": ("Busy and idle time per PC", "no attempt has finished"),
    "cost_by_provider": ("Spend per provider", "no task was claimed"),
    "cost_by_pc": ("Cost per PC", "no task was claimed"),
    "cost_by_lane": ("Cost per lane", "no task was claimed"),
    "cost_by_shot": ("Cost per shot", "no task was claimed"),
    "status": ("Tasks by status", "there are no tasks"),
    "eta": ("Estimated finish", "there are no tasks"),
    "queue_depth": ("Queue over time", "no task was created"),
    "replay_makespans": ("Makespan: the real run and both strategies replayed", ""),
    "replay_machines": ("PCs as replayed (pace 2 = took twice the usual time)", ""),
}
# column -> its header on the page; columns ending in _s are seconds, _h hours (shown in a
# fitted unit, named in the header), PERCENT columns are shares
COLUMNS = {
    "worker_id": "PC",
    "last_seen_at": "last seen",
    "bin_start": "from",
    "bin_s": "bin",
    "mean_s": "mean",
    "min_s": "shortest",
    "p50_s": "median",
    "p90_s": "90th percentile",
    "max_s": "longest",
    "error_kind": "error kind",
    "failure_rate": "not completed",
    "at": "time",
    "task_id": "task",
    "attempt_no": "attempt",
    "lost_by": "lost by",
    "lost_claimed_at": "claimed at",
    "reclaimed_by": "reclaimed by",
    "taken_over_by": "taken over by",
    "taken_over_at": "taken over at",
    "beats": "heartbeats",
    "first_beat": "first",
    "last_beat": "last",
    "median_gap_s": "median gap",
    "max_gap_s": "longest gap",
    "long_gaps": "long gaps",
    "gap_from": "from",
    "gap_to": "to",
    "gap_s": "silent for",
    "first_claim": "first claim",
    "last_finish": "last finish",
    "span_s": "working span",
    "busy_s": "busy",
    "idle_s": "idle",
    "idle_share": "idle share",
    "shot_id": "shot",
    "remaining": "tasks left",
    "window_hours": "measured over",
    "completed_in_window": "completed meanwhile",
    "rate_per_hour": "completions per hour",
    "hours_left": "time left",
    "finish_at": "finish about (UTC)",
    "makespan_h": "makespan",
}
HOURS = ("window_hours", "hours_left")
PERCENT = ("share", "failure_rate", "idle_share")
SERIES = ("queue_depth", "throughput")  # cut by sampling evenly over time, not by the head
RANKED = {"cost_by_shot": ("cost", "costliest")}  # cut to the top rows by that column
_CSS = """body{font-family:'DejaVu Sans',Arial,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.3em 0 1.5em;font-size:90%}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#eee}
img,video{max-width:100%;border:1px solid #ddd}.note{color:#666;font-size:85%;margin:.2em 0}
.empty{color:#666;font-style:italic}
.sheet{max-height:52em;overflow:auto;max-width:100%}.sheet img{max-width:none;display:block}"""


def default_out_dir(bookcode: str | None) -> Path:
    """reports/BOOKCODE, or reports/all for the whole database."""
    return Path("reports") / (bookcode or "all")


def write_report(db: Database, bookcode: str | None, out_dir: Path) -> Path:
    """Load the log (one book, or everything) and write its report; returns the HTML path."""
    log = load(db, bookcode)
    if bookcode is not None and log.tasks.empty:
        raise NotFound(f"no tasks for book {bookcode!r}")
    films = films_html(copy_films(db, bookcode, Path(out_dir)))
    return write_report_for(log, Path(out_dir), films=films)


def write_report_for(log: RunLog, out_dir: Path, *, films: str = "") -> Path:
    """Write the report of an already loaded log; returns the HTML path. `films` is the
    section showing the book's films (see analysis.films), when the report has the database."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pm = postmortem(log)
    tables = all_tables(pm)
    for name, frame in tables.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    shown: dict[str, str] = {}
    for name, chart in pm.figures().items():
        if isinstance(chart, charts.NothingToShow):
            shown[name] = f"<p class='empty'>{html.escape(str(chart))}</p>"
        else:
            (out_dir / f"{name}.png").write_bytes(charts.png_bytes(chart))
            shown[name] = f"<img src='{name}.png' alt='{html.escape(name.replace('_', ' '))}'>"
    snapshot(log, out_dir / "snapshot")
    page = out_dir / "index.html"
    page.write_text(_page(pm, tables, shown, films), encoding="utf-8")
    return page


def all_tables(pm: Postmortem) -> dict[str, pd.DataFrame]:
    """Every table of the report (the metrics and the workers), named for its CSV file."""
    return {"workers": workers_table(pm), **pm.tables()}


def workers_table(pm: Postmortem) -> pd.DataFrame:
    """Every worker the log names, with what the workers table knows and what it completed."""
    names = pd.DataFrame({"worker_id": pd.Series(pm.log.worker_ids(), dtype="string")})
    info = pm.log.workers[["worker_id", "host", "version", "backend", "lanes", "state", "last_seen_at"]]
    done = pm.completed[["worker_id", "completed"]]
    return (
        names.merge(info, on="worker_id", how="left")
        .merge(done, on="worker_id", how="left")
        .fillna({"completed": 0})
        .sort_values("worker_id", ignore_index=True)
    )


def heading(log: RunLog) -> str:
    """What the report is about: the book's title (and code), or all books."""
    if log.bookcode is None:
        return "all books"
    return f"{log.title} ({log.bookcode})" if log.title else log.bookcode


def summary(pm: Postmortem) -> list[str]:
    """The page's opening sentences, as plain text."""
    log = pm.log
    lines = []
    if log.bookcode is None and len(log.books):
        lines.append(
            "Books: "
            + "; ".join(f"{t} ({c})" for c, t in zip(log.books["bookcode"], log.books["title"], strict=True))
            + "."
        )
    claimed, finished = log.attempts["claimed_at"].min(), log.attempts["finished_at"].max()
    if pd.isna(claimed) or pd.isna(finished):
        span = "no attempt has finished yet"
    else:
        span = (
            f"work ran from {claimed:{TIME_FORMAT}} to {finished:{TIME_FORMAT}} UTC "
            f"({timescale.human((finished - claimed).total_seconds())})"
        )
    workers = log.worker_ids()
    lines.append(
        f"{len(log.tasks):,} tasks and {len(log.attempts):,} attempts by "
        f"{len(workers)} PCs ({', '.join(workers) or 'none'}); {span}."
    )
    as_of = log.as_of
    lines.append(f"The log runs up to {as_of:{TIME_FORMAT}} UTC." if as_of is not None else "The log is empty.")
    lines.append(eta_sentence(pm))
    return lines


def header_html(pm: Postmortem) -> str:
    """The page's title (the book's) and opening sentences."""
    lines = [f"<p>{html.escape(line)}</p>" for line in summary(pm)]
    return "\n".join([f"<h1>{html.escape(f'Post-mortem: {heading(pm.log)}')}</h1>", *lines])


def _page(pm: Postmortem, tables: dict[str, pd.DataFrame], shown: dict[str, str], films: str) -> str:
    title = html.escape(f"Post-mortem: {heading(pm.log)}")
    parts = [
        (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title><style>{_CSS}</style></head><body>"),
        header_html(pm),
        *([films] if films else []),
    ]
    for section, chart, names in SECTIONS:
        parts.append(f"<h2>{html.escape(section)}</h2>")
        parts.append(shown[chart])
        parts += [table_html(name, tables[name]) for name in names if name in tables]
    parts.append(
        "<p class='note'>Every table is also a CSV file beside this page, with every "
        "row at full precision; the log it was computed from is in snapshot/ as "
        "Parquet.</p></body></html>"
    )
    return "\n".join(parts) + "\n"


def table_html(name: str, frame: pd.DataFrame) -> str:
    """A table under its heading, with how many of its rows are shown (or why it is empty)."""
    title, why_empty = TABLES.get(name, (name.replace("_", " "), "no rows"))
    head = f"<h3>{html.escape(title)}</h3>"
    if frame.empty:
        return f"{head}\n<p class='empty'>none: {html.escape(why_empty)}</p>"
    shown = _cut(name, frame)
    body = readable(shown).to_html(index=False, border=0, na_rep="", escape=True)
    note = html.escape(rows_note(name, len(shown), len(frame)))
    return f"{head}\n<p class='note'>{note}</p>\n{body}"


def rows_note(name: str, shown: int, total: int) -> str:
    """How many of a table's rows the page shows, and where the rest are."""
    if shown >= total:
        return f"{total:,} row{'' if total == 1 else 's'}, all shown (also in {name}.csv)."
    if name in SERIES:
        return f"Showing {shown:,} of {total:,} rows, evenly spaced over the run; every row is in {name}.csv."
    if name in RANKED:
        return f"Showing the {shown:,} {RANKED[name][1]} of {total:,} rows; every row is in {name}.csv."
    return f"Showing the first {shown:,} of {total:,} rows; every row is in {name}.csv."


def _cut(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    if len(frame) <= HTML_ROWS:
        return frame
    if name in SERIES:
        picks = np.unique(np.linspace(0, len(frame) - 1, HTML_ROWS).round().astype(int))
        return frame.iloc[picks]
    if name in RANKED:
        return frame.sort_values(RANKED[name][0], ascending=False, kind="stable").head(HTML_ROWS)
    return frame.head(HTML_ROWS)


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as text for reading: plain headers, durations in one unit per table (fitted
    to its longest, named in each header), times to the second, shares as percentages,
    numbers with thousands separators."""
    seconds = {
        col: frame[col] * 3600 if col in HOURS or col.endswith("_h") else frame[col]
        for col in frame.columns
        if (col in HOURS or col.endswith(("_s", "_h"))) and pd.api.types.is_numeric_dtype(frame[col])
    }
    longest = max((float(v.abs().max()) for v in seconds.values() if v.notna().any()), default=0.0)
    unit = timescale.unit_for(longest)
    out = {}
    for col in frame.columns:
        values = frame[col]
        header = COLUMNS.get(col, col.replace("_", " "))
        if col in seconds:
            header = f"{header} ({unit.short})"
            text = (seconds[col] / unit.seconds).map(_number)
        elif pd.api.types.is_datetime64_any_dtype(values):
            text = values.map(lambda v: "" if pd.isna(v) else f"{v:{TIME_FORMAT}}")
        elif col in PERCENT:
            text = values.map(lambda v: "" if pd.isna(v) else f"{v:.0%}")
        elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            text = values.map(_number)
        else:
            text = values.astype("string").fillna("")
        out[header] = text.to_numpy()
    return pd.DataFrame(out)


def _number(v: object) -> str:
    if v is None or pd.isna(v):  # type: ignore[arg-type]
        return ""
    f = float(v)  # type: ignore[arg-type]
    if f.is_integer():
        return f"{int(f):,}"
    return f"{f:,.{2 if abs(f) >= 1 else 3}f}"


def eta_sentence(pm: Postmortem) -> str:
    """When the remaining tasks should be done, in words."""
    e = pm.eta
    if e.remaining == 0:
        return "Nothing remains to be done."
    window = timescale.human(e.window_hours * 3600)
    left = f"{e.remaining:,} tasks remain" if e.remaining != 1 else "1 task remains"
    if e.hours_left is None or e.finish_at is None:
        return f"{left}; none was completed in the last {window}, so there is no estimate of when they will be done."
    return (
        f"{left}; at {rate_text(e.rate_per_hour)} "
        f"(the last {window}) that is {timescale.human(e.hours_left * 3600)} more, about "
        f"{e.finish_at:%Y-%m-%d %H:%M} UTC."
    )


def rate_text(per_hour: float) -> str:
    """A completion rate per minute, hour or day, whichever gives a number from 1 to 600."""
    if per_hour >= 600:
        return f"{per_hour / 60:,.1f} completions per minute"
    if per_hour < 1:
        return f"{per_hour * 24:,.1f} completions per day"
    return f"{per_hour:,.1f} completions per hour"
