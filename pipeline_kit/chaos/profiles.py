"""How hard a chaos run shakes: tasks, workers and how many faults of each kind."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pipeline_kit.errors import BadInput


@dataclass(frozen=True, kw_only=True)
class Profile:
    """A chaos run's size. Faults are spread at random over the run; each kind at least its count."""

    name: str
    tasks: int
    workers: int
    kills: int
    stops: int
    restarts: int
    cuts: int
    freezes: int
    disk_full: int = 1  # the output disk filled for a lease's time (where a tmpfs can be mounted)
    skew_s: float = 7200.0  # worker 1's wall clock runs this far ahead (leases use the database clock)
    lease_s: float = 2.0
    heartbeat_s: float = 0.5
    backend: str = "sleep:0.05"
    deadline_s: float = 300.0  # the run fails (exit 1) if the tasks are not finished by then

    def with_overrides(self, **changes: Any) -> Profile:
        """This profile with the flags a user gave (None means: keep the profile's value)."""
        given = {k: v for k, v in changes.items() if v is not None}
        for key in ("tasks", "workers"):
            if key in given and not 1 <= given[key] <= 1_000_000:
                raise BadInput(f"--{key} must be from 1 to 1000000, got {given[key]}")
        for key in ("kills", "restarts"):
            if key in given and not 0 <= given[key] <= 100_000:
                raise BadInput(f"--{key} must be from 0 to 100000, got {given[key]}")
        if given.get("workers", self.workers) > 64:
            raise BadInput("--workers must be at most 64 on one machine")
        return replace(self, **given)


PROFILES: dict[str, Profile] = {
    # What the test suite runs on each database of this busy 2-core machine.
    "smoke": Profile(
        name="smoke", tasks=300, workers=3, kills=12, stops=2, restarts=1, cuts=2, freezes=1, deadline_s=150.0
    ),
    "ci": Profile(name="ci", tasks=1000, workers=4, kills=30, stops=4, restarts=1, cuts=4, freezes=2),
    "release": Profile(
        name="release",
        tasks=10_000,
        workers=8,
        kills=200,
        stops=20,
        restarts=3,
        cuts=20,
        freezes=10,
        disk_full=5,
        deadline_s=3600.0,
    ),
}
