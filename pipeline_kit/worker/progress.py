"""The worker's progress on stderr: a live bar on a terminal, plain periodic lines in a log file.

A bar redraws itself with carriage returns; written to a file that becomes one endless line, so
a worker whose stderr is not a terminal writes one dated line per interval instead.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from typing import IO, Protocol

from tqdm import tqdm

LINE_EVERY_S = 60.0


class Progress(Protocol):
    disable: bool

    def update(self, n: int = 1) -> object: ...

    def set_postfix_str(self, s: str = "") -> object: ...

    def close(self) -> None: ...


class ProgressLines:
    """Counts finished tasks and writes `TIME DESC: N tasks in S s` at most every `every_s`,
    plus once at close if anything was done since the last line."""

    disable = False

    def __init__(self, desc: str, file: IO[str], every_s: float = LINE_EVERY_S) -> None:
        self.desc, self.file, self.every_s = desc, file, every_s
        self.n = self._written = 0
        self._started = self._last = time.monotonic()
        self._note = ""

    def set_postfix_str(self, s: str = "") -> None:
        """A note such as "waiting: 3 frames need review": one dated line when it changes."""
        if s and s != self._note:
            stamp = datetime.now().isoformat(sep=" ", timespec="seconds")
            self.file.write(f"{stamp} {self.desc}: {s}\n")
            self.file.flush()
        self._note = s

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.monotonic() - self._last >= self.every_s:
            self._write()

    def close(self) -> None:
        if self.n != self._written:
            self._write()

    def _write(self) -> None:
        self._last = time.monotonic()
        elapsed = self._last - self._started
        rate = self.n / elapsed * 60 if elapsed > 0 else 0.0
        stamp = datetime.now().isoformat(sep=" ", timespec="seconds")
        self.file.write(f"{stamp} {self.desc}: {self.n} tasks in {elapsed:.0f} s ({rate:.1f}/min)\n")
        self.file.flush()
        self._written = self.n


def progress(desc: str, *, enabled: bool, file: IO[str] | None = None) -> Progress:
    """A bar on a terminal, periodic lines elsewhere, nothing when disabled."""
    out = file or sys.stderr
    if enabled and not out.isatty():
        return ProgressLines(desc, out)
    return tqdm(desc=desc, unit="task", disable=not enabled, file=out)
