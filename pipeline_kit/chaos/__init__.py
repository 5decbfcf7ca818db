"""The chaos run: workers under random kills, stops, database restarts and cut connections.

`run_chaos(Settings)` drives it and returns a `Report`; the invariant queries it ends with live in
`invariants`, the loopback proxy that cuts and freezes connections in `proxy`.
"""

from pipeline_kit.chaos.invariants import Violation, check_all
from pipeline_kit.chaos.profiles import PROFILES, Profile

__all__ = ["PROFILES", "Profile", "Violation", "check_all"]
