"""What 'a chart reads well' means, checked on a drawn figure: used by the report tests."""

from __future__ import annotations

import itertools
import re

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from pipeline_kit.analysis.charts import NothingToShow

MIN_FILL = 0.5  # the data spans at least this share of the x axis
SLACK = 1e-6  # axes fraction
PIXELS = 1.0
ROUNDED_TO_NOTHING = re.compile(r"(?<![\d.])0\.0+ ?(s|seconds|min|minutes|h|hours|days)\b")


def problems(chart: Figure | NothingToShow) -> list[str]:
    """Everything wrong with a chart; empty when it has data that fills its axes and every
    label is inside the figure and clear of its neighbours, or it says why it has nothing."""
    if isinstance(chart, NothingToShow):
        return (
            [] if chart.why.strip() and str(chart).startswith("nothing to show: ") else [f"an empty reason: {chart!r}"]
        )
    renderer = FigureCanvasAgg(chart).get_renderer()
    chart.draw(renderer)
    found = []
    frame = chart.bbox
    ticks: set[int] = set()
    shown = []
    for ax in chart.axes:
        found += [f"{_name(ax)}: {p}" for p in _data_problems(ax)]
        for axis in (ax.xaxis, ax.yaxis):
            every = axis.get_majorticklabels() + axis.get_minorticklabels()
            ticks.update(id(t) for t in every)
            labels = [t for t in _drawn(axis) if t.get_visible() and t.get_text()]
            shown += labels
            boxes = [t.get_window_extent(renderer) for t in labels]
            for (ta, a), (tb, b) in itertools.combinations(zip(labels, boxes, strict=True), 2):
                if _overlap(a, b):
                    found.append(f"{_name(ax)}: tick labels {ta.get_text()!r} and {tb.get_text()!r} overlap")
    texts = [t for t in chart.findobj(lambda a: isinstance(a, Text)) if id(t) not in ticks]
    for text in texts + shown:
        if not text.get_visible() or not text.get_text():
            continue
        if ROUNDED_TO_NOTHING.search(text.get_text()):
            found.append(f"text {text.get_text()!r} rounds a duration to zero")
        box = text.get_window_extent(renderer)
        if (
            box.x0 < frame.x0 - PIXELS
            or box.x1 > frame.x1 + PIXELS
            or box.y0 < frame.y0 - PIXELS
            or box.y1 > frame.y1 + PIXELS
        ):
            found.append(f"text {text.get_text()!r} runs off the figure")
    return found


def _drawn(axis: Axis) -> list[Text]:
    """The major tick labels matplotlib draws: those of ticks inside the view limits."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    locs = axis.get_majorticklocs()
    return [
        label
        for loc, tick in zip(locs, axis.get_major_ticks(len(locs)), strict=True)
        if low - span <= loc <= high + span
        for label in (tick.label1, tick.label2)
    ]


def _name(ax: Axes) -> str:
    return ax.get_title() or "axes"


def _data_problems(ax: Axes) -> list[str]:
    lim = ax.dataLim
    if not np.all(np.isfinite(lim.get_points())) or lim.width <= 0 or lim.height <= 0:
        return [f"no data drawn (data limits {lim.bounds})"]
    to_axes = ax.transData + ax.transAxes.inverted()
    (x0, y0), (x1, y1) = to_axes.transform(lim.get_points())
    out = []
    if min(x0, x1) < -SLACK or max(x0, x1) > 1 + SLACK:
        out.append(f"data runs off the x axis (axes fraction {x0:.3f}..{x1:.3f})")
    if min(y0, y1) < -SLACK or max(y0, y1) > 1 + SLACK:
        out.append(f"data runs off the y axis (axes fraction {y0:.3f}..{y1:.3f})")
    if abs(x1 - x0) < MIN_FILL:
        out.append(f"the x limits are far wider than the data ({abs(x1 - x0):.0%} used)")
    return out


def _overlap(a: Bbox, b: Bbox) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > PIXELS and min(a.y1, b.y1) - max(a.y0, b.y0) > PIXELS
