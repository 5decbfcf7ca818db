"""The report's charts, built with matplotlib's object API and returned as Figures.

Nothing here touches pyplot's global state or picks a backend. Every figure is drawn inside one
pinned style (font, size, dpi) from inputs sorted by the metric functions, and `png_bytes`
saves without the Software stamp, so the same data gives the same PNG bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib as mpl
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from pipeline_kit.analysis import schedule
from pipeline_kit.analysis.metrics import Costs

DPI = 100
SIZE = (8.0, 4.0)
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
MAX_BARS = 20_000  # a Gantt with more attempts than this is drawn as busy blocks per machine


def _figure(rows: int = 1, height: float | None = None) -> tuple[Figure, list]:
    fig = Figure(figsize=(SIZE[0], height or SIZE[1]), dpi=DPI, layout="constrained")
    axes = [fig.add_subplot(rows, 1, i + 1) for i in range(rows)]
    return fig, axes


def _colours(names: Sequence[str]) -> dict[str, tuple[float, ...]]:
    palette = mpl.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: palette(i % palette.N) for i, n in enumerate(names)}


def _empty(ax: object, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} yet", ha="center", va="center",  # type: ignore[attr-defined]
            transform=ax.transAxes)  # type: ignore[attr-defined]


def completed_per_pc(frame: pd.DataFrame) -> Figure:
    """Bars of completed tasks per worker, labelled with each one's share."""
    with mpl.rc_context(STYLE):
        fig, (ax,) = _figure()
        names = list(frame["worker_id"])
        bars = ax.bar(names, frame["completed"], color=[_colours(names)[n] for n in names])
        ax.bar_label(bars, labels=[f"{s:.0%}" for s in frame["share"]])
        ax.set(title="Completed tasks per PC", ylabel="tasks")
        if not names:
            _empty(ax, "workers")
    return fig


def throughput(frame: pd.DataFrame) -> Figure:
    """Completions per hour, one line per worker."""
    with mpl.rc_context(STYLE):
        fig, (ax,) = _figure()
        names = sorted(frame["worker_id"].unique())
        colours = _colours(names)
        for name in names:
            mine = frame[frame["worker_id"] == name]
            ax.plot(mine["hour"], mine["completed"], label=name, color=colours[name],
                    drawstyle="steps-post")
        ax.set(title="Throughput per PC", ylabel="completed per hour")
        if names:
            ax.legend(loc="upper right")
            fig.autofmt_xdate()
        else:
            _empty(ax, "completions")
    return fig


def durations(frame: pd.DataFrame) -> Figure:
    """Box plot of completed-attempt minutes per lane/kind."""
    with mpl.rc_context(STYLE):
        fig, (ax,) = _figure()
        groups = frame.groupby(["lane", "kind"], sort=True)["seconds"]
        labels = [f"{lane}/{kind}" for (lane, kind), _ in groups]
        data = [g.to_numpy() / 60 for _, g in groups]
        if data:
            ax.boxplot(data, tick_labels=labels, showfliers=True)
        else:
            _empty(ax, "completed attempts")
        ax.set(title="Duration per lane/kind", ylabel="minutes")
    return fig


def errors(frame: pd.DataFrame) -> Figure:
    """Horizontal bars of failed/retried/lost attempts per error kind."""
    with mpl.rc_context(STYLE):
        fig, (ax,) = _figure()
        ordered = frame.iloc[::-1]
        ax.barh(ordered["error_kind"], ordered["attempts"], color=OUTCOME_COLOURS["failed"])
        ax.set(title="Failed attempts by error kind", xlabel="attempts")
        if frame.empty:
            _empty(ax, "failures")
    return fig


def idle(frame: pd.DataFrame) -> Figure:
    """Busy and idle hours per worker within its working span."""
    with mpl.rc_context(STYLE):
        fig, (ax,) = _figure()
        names = list(frame["worker_id"])
        busy, spare = frame["busy_s"] / 3600, frame["idle_s"] / 3600
        ax.barh(names, busy, color=OUTCOME_COLOURS["completed"], label="busy")
        ax.barh(names, spare, left=busy, color="#bbbbbb", label="idle")
        ax.set(title="Busy and idle time per PC", xlabel="hours")
        if names:
            ax.legend(loc="lower right")
        else:
            _empty(ax, "attempts")
    return fig


def costs(c: Costs) -> Figure:
    """Spend per worker and per lane, side by side."""
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
        left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        left.bar(c.by_pc["worker_id"], c.by_pc["cost"], color="#5470a8")
        left.set(title="Cost per PC", ylabel="cost")
        right.bar(c.by_lane["lane"], c.by_lane["cost"], color="#8a5aa8")
        right.set(title="Cost per lane")
    return fig


def queue_depth(frame: pd.DataFrame) -> Figure:
    """Queued, running and completed tasks over time."""
    with mpl.rc_context(STYLE):
        fig, (ax,) = _figure()
        for col, colour in (("queued", "#5470a8"), ("running", "#e0a030"),
                            ("completed", OUTCOME_COLOURS["completed"])):
            ax.plot(frame["at"], frame[col], label=col, color=colour, drawstyle="steps-post")
        ax.set(title="Queue depth", ylabel="tasks")
        if frame.empty:
            _empty(ax, "tasks")
        else:
            ax.legend(loc="upper right")
            fig.autofmt_xdate()
    return fig


def gantt(schedules: Sequence[schedule.Schedule], unit_s: float = 3600,
          unit: str = "hours", title: str = "") -> Figure:
    """One Gantt panel per schedule (attempts coloured by outcome), on a shared time axis."""
    with mpl.rc_context(STYLE):
        fig, axes = _figure(len(schedules), height=1.2 + 1.6 * len(schedules))
        for ax, sched in zip(axes, schedules, strict=True):
            rows = {m: i for i, m in enumerate(sched.machines)}
            for outcome, spans in _bars(sched.gantt).items():
                for machine, part in spans.groupby("machine", sort=True):
                    ax.broken_barh(list(zip(part["start"] / unit_s,
                                            (part["end"] - part["start"]) / unit_s, strict=True)),
                                   (rows[machine] - 0.4, 0.8),
                                   facecolor=OUTCOME_COLOURS.get(outcome, "#888888"),
                                   edgecolor="white", linewidth=0.4)
            ax.set_yticks(range(len(rows)), list(rows))
            ax.set_ylim(len(rows) - 0.5, -0.5)
            ax.set_title(f"{title}{sched.strategy}: makespan {sched.makespan / unit_s:,.1f} {unit}")
            ax.set_xlabel(unit)
        fig.legend(handles=[Patch(color=c, label=o) for o, c in OUTCOME_COLOURS.items()],
                   loc="outside lower center", ncols=3)
        if len(axes) > 1:
            axes[0].sharex(axes[1])
    return fig


def _bars(g: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Attempts by outcome; when there are too many to draw, back-to-back runs merged."""
    if len(g) <= MAX_BARS:
        return {o: g[g["outcome"] == o] for o in sorted(g["outcome"].unique())}
    g = g.sort_values(["machine", "start"], kind="stable")
    prev_end = g.groupby("machine")["end"].shift()
    new = (g["start"] > prev_end + 1e-9) | prev_end.isna()
    block = new.cumsum()
    merged = g.groupby(block).agg(machine=("machine", "first"), start=("start", "min"),
                                  end=("end", "max"))
    return {"completed": merged.reset_index(drop=True)}


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes that depend on nothing but the figure (no Software stamp)."""
    buf = io.BytesIO()
    with mpl.rc_context(STYLE):
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()

