"""Write a run's post-mortem: an HTML page (no code in it), PNG charts, CSV metrics and a Parquet
snapshot of the log it was computed from.

The same data gives the same files: frames are sorted, floats written with fixed precision, the
page carries the log's own latest time rather than the clock, and PNGs are pinned (see charts).
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from pipeline_kit.analysis import charts
from pipeline_kit.analysis.load import RunLog, load, snapshot
from pipeline_kit.analysis.postmortem import Postmortem, postmortem
from pipeline_kit.db.connect import Database
from pipeline_kit.errors import NotFound

HTML_ROWS = 40  # longer tables are cut on the page; the CSV has every row
FLOAT_FORMAT = "%.6f"
# chart -> the tables shown under it, in page order
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Who did the work", "completed_per_pc", ("workers", "completed_per_pc")),
    ("Throughput", "throughput", ("throughput_per_hour",)),
    ("Durations", "durations", ("duration_stats",)),
    ("Retries and failures", "errors", ("attempts_per_task", "errors_by_kind", "outcomes_by_pc")),
    ("Reclaimed leases and heartbeats", "", ("reclaims", "heartbeats", "heartbeat_long_gaps")),
    ("Idle time", "idle", ("idle_time",)),
    ("Cost", "costs", ("cost_by_pc", "cost_by_lane", "cost_by_shot")),
    ("Queue depth and ETA", "queue_depth", ("status", "eta", "queue_depth")),
    ("Static split versus dynamic claiming (replayed)", "replay_gantt",
     ("replay_makespans", "replay_machines")),
)
_CSS = """body{font-family:'DejaVu Sans',Arial,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:90%}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#eee}
img{max-width:100%;border:1px solid #ddd}.note{color:#666;font-size:85%}"""


def default_out_dir(bookcode: str | None) -> Path:
    """reports/BOOKCODE, or reports/all for the whole database."""
    return Path("reports") / (bookcode or "all")


def write_report(db: Database, bookcode: str | None, out_dir: Path) -> Path:
    """Load the log (one book, or everything) and write its report; returns the HTML path."""
    log = load(db, bookcode)
    if bookcode is not None and log.tasks.empty:
        raise NotFound(f"no tasks for book {bookcode!r}")
    return write_report_for(log, Path(out_dir))


def write_report_for(log: RunLog, out_dir: Path) -> Path:
    """Write the report of an already loaded log; returns the HTML path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pm = postmortem(log)
    tables = {"workers": workers_table(pm), **pm.tables()}
    for name, frame in tables.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False, float_format=FLOAT_FORMAT,
                     lineterminator="\n")
    images = {}
    for name, fig in pm.figures().items():
        (out_dir / f"{name}.png").write_bytes(charts.png_bytes(fig))
        images[name] = f"{name}.png"
    snapshot(log, out_dir / "snapshot")
    page = out_dir / "index.html"
    page.write_text(_page(pm, tables, images), encoding="utf-8")
    return page


def workers_table(pm: Postmortem) -> pd.DataFrame:
    """Every worker the log names, with what the workers table knows and what it completed."""
    names = pd.DataFrame({"worker_id": pd.Series(pm.log.worker_ids(), dtype="string")})
    info = pm.log.workers[["worker_id", "host", "version", "backend", "lanes", "state",
                           "last_seen_at"]]
    done = pm.completed[["worker_id", "completed"]]
    return (names.merge(info, on="worker_id", how="left").merge(done, on="worker_id", how="left")
            .fillna({"completed": 0}).sort_values("worker_id", ignore_index=True))


def _page(pm: Postmortem, tables: dict[str, pd.DataFrame], images: dict[str, str]) -> str:
    log = pm.log
    scope = log.bookcode or "all books"
    workers = ", ".join(log.worker_ids()) or "none"
    parts = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Post-mortem: "
        f"{html.escape(scope)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Post-mortem: {html.escape(scope)}</h1>",
        f"<p>{len(log.tasks)} tasks, {len(log.attempts)} attempts, log up to "
        f"{html.escape(str(log.as_of or 'no activity'))}. Workers: {html.escape(workers)}.</p>",
        f"<p>{html.escape(_eta_sentence(pm))}</p>",
    ]
    for heading, image, names in SECTIONS:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if image in images:
            parts.append(f"<img src='{images[image]}' alt='{html.escape(heading)}'>")
        for name in names:
            if name in tables:
                parts.append(_table(name, tables[name]))
        if image == "replay_gantt" and pm.replay_note:
            parts.append(f"<p class='note'>{html.escape(pm.replay_note)}</p>")
    parts.append("<p class='note'>Every table is also a CSV file beside this page; the log it "
                 "was computed from is in snapshot/ as Parquet.</p></body></html>")
    return "\n".join(parts) + "\n"


def _table(name: str, frame: pd.DataFrame) -> str:
    shown = frame.head(HTML_ROWS)
    cut = (f"<p class='note'>first {HTML_ROWS} of {len(frame)} rows; all in {name}.csv</p>"
           if len(frame) > HTML_ROWS else "")
    body = shown.to_html(index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.3f}",
                         escape=True)
    return f"<h3>{html.escape(name.replace('_', ' '))}</h3>\n{body}\n{cut}"


def _eta_sentence(pm: Postmortem) -> str:
    e = pm.eta
    if e.remaining == 0:
        return "Nothing remains to be done."
    if e.hours_left is None:
        return f"{e.remaining} tasks remain; no completions in the last window, so no ETA."
    return (f"{e.remaining} tasks remain; at {e.rate_per_hour:.1f} completions per hour "
            f"(last {e.window_hours:.1f} h) that is {e.hours_left:.1f} h more, about "
            f"{e.finish_at:%Y-%m-%d %H:%M} UTC.")
