"""What a chaos run did and found: faults injected per kind, recovery times, invariant violations."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from pipeline_kit.chaos.invariants import Violation
from pipeline_kit.plural import plural


@dataclass(frozen=True, kw_only=True)
class Report:
    profile: str
    database: str
    account: str | None  # the worker account the fleet logged in as (None: the owner)
    workdir: str
    tasks: int
    completed: int
    failed: int
    seconds: float
    faults: dict[str, int]
    worker_restarts: int
    fenced_writes: int  # stale heartbeats/completions the engine refused (late workers)
    recoveries_s: tuple[float, ...]  # a dead or stopped worker's task back to pending, per task
    recovery_bound_s: float  # lease + watchdog interval (+ the poll of this run)
    server_restarts_s: tuple[float, ...]
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def late_recoveries(self) -> int:
        return sum(1 for s in self.recoveries_s if s > self.recovery_bound_s)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(ok=self.ok, late_recoveries=self.late_recoveries, violations=[asdict(v) for v in self.violations])
        return data

    def render(self) -> str:
        faults = ", ".join(f"{n} {k}" for k, n in sorted(self.faults.items())) or "none"
        lines = [
            f"chaos {self.profile} on {self.database}"
            + (f" (workers as account {self.account})" if self.account else "")
            + f": {self.completed}/{self.tasks} completed, "
            f"{self.failed} failed in {self.seconds:.1f} s",
            f"faults injected: {faults}; workers restarted {self.worker_restarts}; "
            f"fenced late writes {self.fenced_writes}",
        ]
        if self.recoveries_s:
            lines.append(
                f"recovery (task back in pending): {plural(len(self.recoveries_s), 'task')}, median "
                f"{statistics.median(self.recoveries_s):.2f} s, max {max(self.recoveries_s):.2f} s; "
                f"bound {self.recovery_bound_s:.1f} s exceeded {plural(self.late_recoveries, 'time')}"
            )
        if self.server_restarts_s:
            lines.append("database restarts took " + ", ".join(f"{s:.1f} s" for s in self.server_restarts_s))
        lines.append("invariants: all hold" if self.ok else f"invariants: {plural(len(self.violations), 'violation')}")
        lines += [f"  {v.check}: {v.task_id or '-'}: {v.detail}" for v in self.violations[:50]]
        lines.append(f"logs: {self.workdir}/logs")
        return "\n".join(lines)
