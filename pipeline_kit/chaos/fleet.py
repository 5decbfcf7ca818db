"""The chaos run's worker processes: start, SIGKILL, SIGSTOP/SIGCONT, and keep W of them alive.

Each incarnation gets a fresh worker id (`w2.3` is worker slot 2's third start), so attempts
and events tell which process did what.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Slot:
    index: int
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    started_at: float = 0.0
    stopped_until: float | None = None  # monotonic time to SIGCONT a stopped worker

    @property
    def worker_id(self) -> str:
        return f"w{self.index}.{self.starts}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@dataclass
class Fleet:
    url: str  # what workers connect to (through the proxy for a server database)
    backend: str
    lease_s: float
    heartbeat_s: float
    lane: str
    cwd: Path
    size: int
    slots: list[Slot] = field(default_factory=list)
    restarted: int = 0
    skew_s: float = 0.0  # wall-clock offset of worker 1 (0: none)

    def __post_init__(self) -> None:
        self.slots = [Slot(i) for i in range(1, self.size + 1)]
        (self.cwd / "logs").mkdir(parents=True, exist_ok=True)

    def start_missing(self) -> None:
        """Start every slot whose worker is not running (a killed or crashed one comes back)."""
        for slot in self.slots:
            if slot.alive():
                continue
            if slot.proc is not None:
                self.restarted += 1
            slot.starts += 1
            slot.started_at = time.monotonic()
            log = (self.cwd / "logs" / f"{slot.worker_id}.log").open("wb")
            env = dict(os.environ)
            if slot.index == 1 and self.skew_s:  # one PC whose clock is off
                env["PIPELINE_KIT_CHAOS_SKEW_S"] = str(self.skew_s)
            slot.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pipeline_kit.chaos.worker",
                    self.url,
                    slot.worker_id,
                    self.backend,
                    str(self.lease_s),
                    str(self.heartbeat_s),
                    self.lane,
                ],
                cwd=self.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
            log.close()

    def running(self) -> list[Slot]:
        """Live, not stopped workers (the ones a fault may hit)."""
        return [s for s in self.slots if s.alive() and s.stopped_until is None]

    def kill(self, slot: Slot) -> None:
        assert slot.proc is not None
        slot.proc.send_signal(signal.SIGKILL)
        slot.proc.wait()
        slot.stopped_until = None

    def stop(self, slot: Slot, seconds: float) -> None:
        assert slot.proc is not None
        slot.proc.send_signal(signal.SIGSTOP)
        slot.stopped_until = time.monotonic() + seconds

    def wake_due(self) -> None:
        """SIGCONT the stopped workers whose time is up."""
        for slot in self.slots:
            if slot.stopped_until is not None and time.monotonic() >= slot.stopped_until:
                if slot.alive():
                    assert slot.proc is not None
                    slot.proc.send_signal(signal.SIGCONT)
                slot.stopped_until = None

    def wake_all(self) -> None:
        for slot in self.slots:
            if slot.stopped_until is not None:
                slot.stopped_until = time.monotonic()
        self.wake_due()

    def any_alive(self) -> bool:
        return any(s.alive() for s in self.slots)

    def shutdown(self) -> None:
        """End every worker this fleet started (by its own process handle)."""
        for slot in self.slots:
            if slot.alive():
                assert slot.proc is not None
                slot.proc.send_signal(signal.SIGCONT)
                slot.proc.kill()
                slot.proc.wait()
