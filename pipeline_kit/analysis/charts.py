"""The report's charts, built with matplotlib's object API and returned as Figures.

A chart with nothing to draw comes back as `NothingToShow` (one line saying why), never as an
empty axis. Time axes fit the run: clock axes span exactly the data with tick labels that adapt
from seconds to days, and durations are shown in the unit fitted to them (see timescale).
Categories sit on the vertical axis, one row each, so long labels never overlap.

Nothing here touches pyplot's global state or picks a backend. Every figure is drawn inside one
pinned style (font, size, dpi) from inputs sorted by the metric functions, and `png_bytes`
saves without the Software stamp, so the same data gives the same PNG bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib as mpl
import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from pipeline_kit import fonts
from pipeline_kit.analysis import schedule, timescale
from pipeline_kit.analysis.metrics import Costs

DPI = 100
WIDTH = 8.0
HEIGHT = 4.0
STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "lines.linewidth": 1.4,
    "text.hinting": "default",
}
OUTCOME_COLOURS = {"completed": "#4c9a5b", "failed": "#c8453c", "lost": "#e0a030"}
QUEUE_COLOURS = {
    "queued": "#5470a8",
    "running": "#e0a030",
    "completed": OUTCOME_COLOURS["completed"],
    "failed": OUTCOME_COLOURS["failed"],
}
MAX_BARS = 20_000  # a Gantt with more attempts than this is drawn as busy blocks per machine
LOG_RATIO = 50.0  # durations spread wider than this (max / min) get a log axis
CLOCK_LABEL = "time (UTC)"
CLOCK_MARGIN = 0.01  # of the span, either side, so marks at the ends stay visible


@dataclass(frozen=True)
class NothingToShow:
    """A chart left out, and why: shown as one line instead of an empty axis."""

    why: str

    def __str__(self) -> str:
        return f"nothing to show: {self.why}"


Chart = Figure | NothingToShow


def _style() -> dict[str, object]:
    """STYLE, plus the CJK font when one is found, so Chinese titles and names draw as glyphs."""
    return {**STYLE, **fonts.matplotlib_rc()}  # a cached dict: copied, never changed


def _figure(height: float = HEIGHT) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(WIDTH, height), dpi=DPI, layout="constrained")
    return fig, fig.add_subplot()


def _rows_height(rows: int, per_row: float = 0.32, base: float = 1.3) -> float:
    """A figure height that gives each of `rows` categories room for its label."""
    return max(2.4, base + per_row * rows)


def _colours(names: Sequence[str]) -> dict[str, tuple[float, ...]]:
    palette = mpl.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: palette(i % palette.N) for i, n in enumerate(names)}


def _clock_axis(ax: Axes, start: pd.Timestamp, end: pd.Timestamp) -> None:
    """A date axis spanning start..end (and a margin of CLOCK_MARGIN), labelled to the precision
    the span needs: seconds for a run of minutes, days for a run of weeks."""
    if end <= start:  # a single moment: half a minute either side
        start, end = start - pd.Timedelta(seconds=30), end + pd.Timedelta(seconds=30)
    pad = (end - start) * CLOCK_MARGIN
    start, end = start - pad, end + pad
    locator = mdates.AutoDateLocator(minticks=4, maxticks=9)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_xlim(start, end)
    ax.set_xlabel(CLOCK_LABEL)


def completed_per_pc(frame: pd.DataFrame) -> Chart:
    """Completed tasks per worker, labelled with each one's share."""
    if frame.empty or frame["completed"].sum() == 0:
        return NothingToShow("no task was completed")
    with mpl.rc_context(_style()):
        fig, ax = _figure(_rows_height(len(frame)))
        names = list(frame["worker_id"])
        colours = _colours(names)
        bars = ax.barh(names, frame["completed"], color=[colours[n] for n in names])
        shares = zip(frame["completed"], frame["share"], strict=True)
        ax.bar_label(bars, labels=[f"{c:,} ({s:.0%})" for c, s in shares], padding=3)
        ax.invert_yaxis()
        ax.margins(x=0.15)
        ax.set(title="Completed tasks per PC", xlabel="tasks completed")
    return fig


def throughput(frame: pd.DataFrame) -> Chart:
    """Completions per time bin, stacked by worker, on a clock axis spanning the bins."""
    if frame.empty or frame["completed"].sum() == 0:
        return NothingToShow("no task was completed")
    bin_s = int(frame["bin_s"].iloc[0])
    width = np.timedelta64(bin_s, "s")
    table = frame.pivot(index="bin_start", columns="worker_id", values="completed").sort_index()
    with mpl.rc_context(_style()):
        fig, ax = _figure()
        colours = _colours(list(table.columns))
        bottom = np.zeros(len(table))
        for name in table.columns:
            ax.bar(
                table.index,
                table[name],
                width=width,
                bottom=bottom,
                align="edge",
                color=colours[name],
                label=name,
                linewidth=0,
            )
            bottom = bottom + table[name].to_numpy()
        per = timescale.per(bin_s)
        ax.set(title=f"Tasks completed per {per}, by PC", ylabel=f"completed per {per}")
        fig.legend(loc="outside right upper")
        _clock_axis(ax, table.index.min(), table.index.max() + pd.Timedelta(seconds=bin_s))
    return fig


def durations(frame: pd.DataFrame) -> Chart:
    """Box plot of completed-attempt durations per kind, in the unit fitted to them."""
    if frame.empty:
        return NothingToShow("no attempt completed")
    groups = frame.groupby(["lane", "kind"], sort=True)["seconds"]
    labels = [f"{kind} ({lane}), n={len(g)}" for (lane, kind), g in groups]
    unit = timescale.unit_for(float(frame["seconds"].max()))
    data = [g.to_numpy() / unit.seconds for _, g in groups]
    with mpl.rc_context(_style()):
        fig, ax = _figure(_rows_height(len(data), per_row=0.4))
        ax.boxplot(data, tick_labels=labels, orientation="horizontal", showfliers=True)
        ax.invert_yaxis()
        low, high = float(frame["seconds"].min()), float(frame["seconds"].max())
        if low > 0 and high / low > LOG_RATIO:
            ax.set_xscale("log")
        ax.set(title="How long a completed attempt took, per kind of task", xlabel=f"{unit.name} per attempt")
    return fig


def errors(frame: pd.DataFrame) -> Chart:
    """Failed, retried and lost attempts per error kind."""
    if frame.empty:
        return NothingToShow("no attempt failed, was retried or lost its lease")
    with mpl.rc_context(_style()):
        fig, ax = _figure(_rows_height(len(frame)))
        bars = ax.barh(frame["error_kind"], frame["attempts"], color=OUTCOME_COLOURS["failed"])
        ax.bar_label(
            bars,
            labels=[
                f"{a:,} ({t:,} task{'' if t == 1 else 's'})"
                for a, t in zip(frame["attempts"], frame["tasks"], strict=True)
            ],
            padding=3,
        )
        ax.invert_yaxis()
        ax.margins(x=0.2)
        ax.set(title="Attempts that failed, were retried or lost, by error kind", xlabel="attempts")
    return fig


def idle(frame: pd.DataFrame) -> Chart:
    """Busy and idle time per worker within its working span (first claim to last finish)."""
    if frame.empty or frame["span_s"].max() <= 0:
        return NothingToShow("no PC has a working span yet (no attempt has finished)")
    unit = timescale.unit_for(float(frame["span_s"].max()))
    with mpl.rc_context(_style()):
        fig, ax = _figure(_rows_height(len(frame)))
        names = list(frame["worker_id"])
        busy, spare = frame["busy_s"] / unit.seconds, frame["idle_s"] / unit.seconds
        ax.barh(names, busy, color=OUTCOME_COLOURS["completed"], label="busy")
        ax.barh(names, spare, left=busy, color="#bbbbbb", label="idle")
        ax.invert_yaxis()
        ax.set(title="Busy and idle time per PC, first claim to last finish", xlabel=unit.name)
        fig.legend(loc="outside right upper")
    return fig


def heartbeats(per_worker: pd.DataFrame, long_gaps: pd.DataFrame, factor: float, working: pd.DataFrame) -> Chart:
    """Per worker, its working span (first claim to last finish, grey), the time its heartbeats
    covered (green) and the long gaps between them (red): a PC that worked without beating
    shows grey where green should be."""
    if per_worker.empty:
        return NothingToShow("no heartbeat was recorded")
    names = sorted(set(per_worker["worker_id"]) | set(working["worker_id"]))
    rows = {n: i for i, n in enumerate(names)}
    with mpl.rc_context(_style()):
        fig, ax = _figure(_rows_height(len(names)))
        for w in working.itertuples(index=False):
            _spans(ax, [(w.first_claim, w.last_finish)], rows[w.worker_id], "#dddddd", 0.8)
        for w in per_worker.itertuples(index=False):
            gaps = long_gaps[long_gaps["worker_id"] == w.worker_id]
            cuts = [
                w.first_beat,
                *(t for g in gaps.itertuples(index=False) for t in (g.gap_from, g.gap_to)),
                w.last_beat,
            ]
            covered = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]
            _spans(ax, covered, rows[w.worker_id], OUTCOME_COLOURS["completed"], 0.5)
            _spans(
                ax,
                list(zip(gaps["gap_from"], gaps["gap_to"], strict=True)),
                rows[w.worker_id],
                OUTCOME_COLOURS["failed"],
                0.5,
            )
            ax.plot(
                [w.first_beat, w.last_beat],
                [rows[w.worker_id]] * 2,
                linestyle="none",
                marker="|",
                markersize=10,
                color="#333333",
            )
        ax.set_yticks(range(len(names)), names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_title(
            f"Heartbeats per PC: covered (green), gaps over {factor:g}x the PC's median (red), working span (grey)"
        )
        ends = [
            t
            for t in (
                per_worker["first_beat"].min(),
                per_worker["last_beat"].max(),
                working["first_claim"].min(),
                working["last_finish"].max(),
            )
            if not pd.isna(t)
        ]
        _clock_axis(ax, min(ends), max(ends))
    return fig


def _spans(ax: Axes, spans: list[tuple[pd.Timestamp, pd.Timestamp]], row: int, colour: str, height: float) -> None:
    if spans:
        ax.broken_barh(
            [(mdates.date2num(a), mdates.date2num(b) - mdates.date2num(a)) for a, b in spans],
            (row - height / 2, height),
            facecolor=colour,
        )


def costs(c: Costs) -> Chart:
    """Spend per worker and per lane, side by side."""
    if c.total == 0:
        attempts = int(c.by_lane["attempts"].sum())
        return NothingToShow(f"no attempt recorded a cost ({attempts:,} attempts, total 0)")
    with mpl.rc_context(_style()):
        fig = Figure(figsize=(WIDTH, _rows_height(max(len(c.by_pc), len(c.by_lane)))), dpi=DPI, layout="constrained")
        for ax, frame, key, title, colour in (
            (fig.add_subplot(1, 2, 1), c.by_pc, "worker_id", "Cost per PC", "#5470a8"),
            (fig.add_subplot(1, 2, 2), c.by_lane, "lane", "Cost per lane", "#8a5aa8"),
        ):
            bars = ax.barh(frame[key], frame["cost"], color=colour)
            ax.bar_label(bars, labels=[f"{v:,.2f}" for v in frame["cost"]], padding=3)
            ax.invert_yaxis()
            ax.margins(x=0.25)
            ax.set(title=title, xlabel="cost")
    return fig


def queue_depth(frame: pd.DataFrame) -> Chart:
    """Queued, running, completed (and failed, if any) tasks over time."""
    if frame.empty:
        return NothingToShow("no task was created")
    with mpl.rc_context(_style()):
        fig, ax = _figure()
        for col, colour in QUEUE_COLOURS.items():
            if col != "failed" or frame[col].any():
                ax.plot(frame["at"], frame[col], label=col, color=colour, drawstyle="steps-post")
        ax.set(title="Tasks queued, running and done over time", ylabel="tasks")
        fig.legend(loc="outside right upper")
        _clock_axis(ax, frame["at"].min(), frame["at"].max())
    return fig


def gantt(schedules: Sequence[schedule.Schedule], time_s: float = 1.0, title: str = "") -> Chart:
    """One Gantt panel per schedule (attempts coloured by outcome) on one shared time axis, in
    the unit fitted to the longest makespan; `time_s` is the length of the schedules' time
    unit in seconds (1 for the replay, 60 for the simulator's minutes)."""
    longest = max((s.makespan for s in schedules), default=0.0)
    if longest <= 0:
        return NothingToShow("no attempt to schedule")
    unit = timescale.unit_for(longest * time_s)
    scale = time_s / unit.seconds
    with mpl.rc_context(_style()):
        panel = 0.9 + 0.3 * max(len(s.machines) for s in schedules)
        fig = Figure(figsize=(WIDTH, 1.0 + panel * len(schedules)), dpi=DPI, layout="constrained")
        axes = fig.subplots(len(schedules), 1, sharex=True, squeeze=False)[:, 0]
        for ax, sched in zip(axes, schedules, strict=True):
            rows = {m: i for i, m in enumerate(sched.machines)}
            for outcome, spans in _bars(sched.gantt).items():
                for machine, part in spans.groupby("machine", sort=True):
                    ax.broken_barh(
                        list(zip(part["start"] * scale, (part["end"] - part["start"]) * scale, strict=True)),
                        (rows[machine] - 0.4, 0.8),
                        facecolor=OUTCOME_COLOURS.get(outcome, "#888888"),
                        edgecolor="white",
                        linewidth=0.4,
                    )
            ax.set_yticks(range(len(rows)), list(rows))
            ax.set_ylim(len(rows) - 0.5, -0.5)
            makespan = timescale.human(sched.makespan * time_s, unit)
            ax.set_title(f"{title}{sched.strategy}: makespan {makespan}")
        axes[0].set_xlim(0, longest * scale)
        axes[-1].set_xlabel(f"{unit.name} from the start")
        fig.legend(
            handles=[Patch(color=c, label=o) for o, c in OUTCOME_COLOURS.items()], loc="outside lower center", ncols=3
        )
    return fig


def _bars(g: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Attempts by outcome; when there are too many to draw, back-to-back runs merged."""
    if len(g) <= MAX_BARS:
        return {o: g[g["outcome"] == o] for o in sorted(g["outcome"].unique())}
    g = g.sort_values(["machine", "start"], kind="stable")
    prev_end = g.groupby("machine")["end"].shift()
    new = (g["start"] > prev_end + 1e-9) | prev_end.isna()
    block = new.cumsum()
    merged = g.groupby(block).agg(machine=("machine", "first"), start=("start", "min"), end=("end", "max"))
    return {"completed": merged.reset_index(drop=True)}


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes that depend on nothing but the figure (no Software stamp)."""
    buf = io.BytesIO()
    with mpl.rc_context(_style()):
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()
