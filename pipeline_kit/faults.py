"""Named fault points for crash tests: kill, stop or raise at the n-th pass, only when switched on.

    PIPELINE_KIT_FAULTS="after_call:kill:3,after_complete:raise:1"

means: on the 3rd pass through `after_call` SIGKILL this process; on the 1st pass through
`after_complete` raise InjectedFault. Actions: kill, stop (SIGSTOP itself), raise. Without the
variable every `fault()` call is a dictionary miss and nothing else. Points, in the order a task
passes them: after_claim, after_call, after_cost, after_temp_write, after_publish, after_complete.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

from pipeline_kit.errors import PipelineKitError

POINTS = ("after_claim", "after_call", "after_cost", "after_temp_write", "after_publish", "after_complete")
ENV_VAR = "PIPELINE_KIT_FAULTS"


class InjectedFault(PipelineKitError):
    """Raised by a fault point set to `raise`."""


def _parse(spec: str) -> dict[str, tuple[str, int]]:
    plan: dict[str, tuple[str, int]] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        point, action, nth = (item.split(":") + ["1"])[:3]
        if point not in POINTS or action not in ("kill", "stop", "raise"):
            raise ValueError(f"bad fault spec {item!r}: points {', '.join(POINTS)}; actions kill, stop, raise")
        plan[point] = (action, int(nth))
    return plan


_PLAN = _parse(os.environ.get(ENV_VAR, ""))
_passes: Counter[str] = Counter()


def fault(point: str) -> None:
    """Pass a fault point: act if the plan names this point and this is the n-th pass."""
    if point not in _PLAN:
        return
    _passes[point] += 1
    action, nth = _PLAN[point]
    if _passes[point] != nth:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    else:
        raise InjectedFault(f"injected fault at {point} (pass {nth})")
