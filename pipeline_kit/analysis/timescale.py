"""Time units fitted to a run's length, so a run of minutes and a run of eleven days both read well.

A span is shown in the largest unit of which it is at least two (90 s stays seconds, 3 min is
minutes, 2 days is days); throughput is counted in bins of a round size that cut the run into
at most about BIN_TARGET pieces.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """A time unit: its name for axis labels, its short form for numbers, and its length."""

    name: str
    short: str
    seconds: float


SECONDS = Unit("seconds", "s", 1.0)
MINUTES = Unit("minutes", "min", 60.0)
HOURS = Unit("hours", "h", 3600.0)
DAYS = Unit("days", "days", 86400.0)
UNITS = (SECONDS, MINUTES, HOURS, DAYS)
BIN_TARGET = 30  # throughput bins per run, at most (about)
BINS_S = (1, 5, 10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800)


def unit_for(span_s: float) -> Unit:
    """The largest unit of which `span_s` is at least two; seconds for anything shorter."""
    for unit in reversed(UNITS):
        if span_s >= 2 * unit.seconds:
            return unit
    return SECONDS


def human(seconds: float, unit: Unit | None = None) -> str:
    """A duration in words, in `unit` or the one fitted to it: '45 s', '2.5 min', '11.8 days'
    (one decimal below a hundred, none from there)."""
    unit = unit or unit_for(seconds)
    value = seconds / unit.seconds
    text = f"{value:,.{1 if abs(value) < 100 else 0}f}"
    text = text.removesuffix(".0")
    short = "day" if unit is DAYS and text == "1" else unit.short
    return f"{text} {short}"


def per(seconds: float) -> str:
    """'second', 'minute', 'hour', 'day' for those lengths, else the length: '5 min', '6 h'."""
    names = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}
    return names.get(int(seconds), human(seconds)) if float(seconds).is_integer() else human(seconds)


def bin_for(span_s: float, target: int = BIN_TARGET) -> int:
    """The smallest round bin (in seconds) that cuts `span_s` into at most `target` bins."""
    for size in BINS_S:
        if span_s / size <= target:
            return size
    return BINS_S[-1]
