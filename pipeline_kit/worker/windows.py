"""Availability windows: a worker that may only work in given hours (the MacBook only at night)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from pipeline_kit.errors import BadInput

_SPEC = re.compile(r"^(\d{1,2})(?::(\d{2}))?-(\d{1,2})(?::(\d{2}))?$")


@dataclass(frozen=True)
class Window:
    """Local-time hours [start, end); a window may wrap past midnight (22-07)."""

    start_min: int
    end_min: int

    @classmethod
    def parse(cls, spec: str) -> Window:
        m = _SPEC.match(spec.strip())
        if not m:
            raise BadInput(f"--hours must look like 22-07 or 21:30-06:00, got {spec!r}")
        h1, m1, h2, m2 = (int(x) if x else 0 for x in m.groups())
        if not (h1 <= 23 and h2 <= 23):
            raise BadInput(f"--hours: hours must be 0-23, got {spec!r}")
        if not (m1 < 60 and m2 < 60):
            raise BadInput(f"--hours: minutes must be 0-59, got {spec!r}")
        if (h1, m1) == (h2, m2):
            raise BadInput(f"--hours needs two different times of day, got {spec!r}")
        return cls(h1 * 60 + m1, h2 * 60 + m2)

    def is_open(self, when: datetime) -> bool:
        minute = when.hour * 60 + when.minute
        if self.start_min < self.end_min:
            return self.start_min <= minute < self.end_min
        return minute >= self.start_min or minute < self.end_min
