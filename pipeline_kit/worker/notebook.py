"""What the worker notebook calls: validate its literal parameters, find the database, summarise.

Papermill only warns about unknown parameters and happily injects numbers for ids, so the
notebook hands everything to `notebook_config`, which checks types and ranges. The database URL
never travels as a parameter: it comes from $PIPELINE_KIT_DB, or $PIPELINE_KIT_DB_<PROFILE>
for a named profile, so an executed notebook holds no password.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pandas as pd

from pipeline_kit.backends import backend_choices
from pipeline_kit.backends.profile import resolve_backend
from pipeline_kit.backends.routing import KINDS, Routing
from pipeline_kit.db.connect import ENV_VAR, resolve_url
from pipeline_kit.engine.claim import MAX_BATCH
from pipeline_kit.engine.registry import check_identity
from pipeline_kit.errors import BadInput
from pipeline_kit.worker.inflight import MAX_INFLIGHT
from pipeline_kit.worker.runtime import DEFAULT_LANES, Summary, WorkerConfig, default_heartbeat

_PROFILE = re.compile(r"^[A-Za-z0-9_]{1,40}$")


def database_url(db_profile: str = "") -> str:
    """The URL for a profile name ('' = $PIPELINE_KIT_DB or the SQLite default)."""
    if not db_profile:
        return resolve_url(None)
    if not _PROFILE.match(db_profile):
        raise BadInput(f"db_profile must be letters, digits or '_', got {db_profile!r}")
    var = f"{ENV_VAR}_{db_profile.upper()}"
    url = os.environ.get(var)
    if not url:
        raise BadInput(f"no database for profile {db_profile!r}: set ${var} on this PC")
    return url


def backend_help() -> str:
    """What the notebook's `backend` may name, from the registries: the backends, and the kinds
    a routing names one per kind."""
    return (
        f"backend: one of {backend_choices()}; or KIND=NAME pairs, default=NAME for the rest, "
        f"over the kinds {', '.join(KINDS)}"
    )


def notebook_config(
    *,
    worker_id: Any,
    lanes: Any = ",".join(DEFAULT_LANES),
    backend: Any,
    batch: Any,
    until_empty: Any,
    max_tasks: Any,
    max_minutes: Any,
    lease_s: Any = 120.0,
    heartbeat_s: Any = None,
    inflight: Any = 1,
) -> WorkerConfig:
    """Check the notebook's parameters and build the worker's config (0 means 'no limit'; the
    lanes and heartbeat default as the CLI's do)."""
    if not isinstance(worker_id, str) or not worker_id.strip():
        raise BadInput(f"worker_id must be a non-empty string (pass it with -r), got {worker_id!r}")
    if not isinstance(lanes, str) or not [x for x in lanes.split(",") if x.strip()]:
        raise BadInput(f"lanes must be a comma-separated string like 'image,video', got {lanes!r}")
    if not isinstance(backend, str):
        raise BadInput(
            f"backend must be a name like 'sketch' or a routing like "
            f"'character_sheet=ark,video=ark' ('' = the profile), got {backend!r}"
        )
    backend = resolve_backend(backend.strip() or None)
    Routing.parse(backend)  # a malformed routing is refused here, in one line
    for name, value, low, high in (
        ("batch", batch, 1, MAX_BATCH),
        ("max_tasks", max_tasks, 0, 100_000),
        ("inflight", inflight, 1, MAX_INFLIGHT),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise BadInput(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    if not isinstance(until_empty, bool):
        raise BadInput(f"until_empty must be True or False, got {until_empty!r}")
    if not isinstance(max_minutes, (int, float)) or isinstance(max_minutes, bool) or not 0 <= max_minutes <= 7 * 1440:
        raise BadInput(f"max_minutes must be a number of minutes from 0 to 10080, got {max_minutes!r}")
    if heartbeat_s is None:
        heartbeat_s = default_heartbeat(float(lease_s))
    if not 0 < float(heartbeat_s) < float(lease_s):
        raise BadInput(f"heartbeat_s ({heartbeat_s}) must be above 0 and shorter than lease_s ({lease_s})")
    check_identity(worker_id.strip(), os.environ.get("PIPELINE_KIT_UID"))
    return WorkerConfig(
        worker_id=worker_id.strip(),
        lanes=tuple(x.strip() for x in lanes.split(",") if x.strip()),
        backend=backend,
        batch=batch,
        inflight=inflight,
        until_empty=until_empty,
        max_tasks=max_tasks or None,
        max_minutes=float(max_minutes) or None,
        lease_s=float(lease_s),
        heartbeat_s=float(heartbeat_s),
        uid=os.environ.get("PIPELINE_KIT_UID"),
    )


def summary_frame(summary: Summary) -> pd.DataFrame:
    """The run's closing summary as a one-row-per-outcome table."""
    rows = [
        {"worker_id": summary.worker_id, "outcome": end.value, "tasks": n} for end, n in sorted(summary.counts.items())
    ]
    frame = pd.DataFrame(rows, columns=["worker_id", "outcome", "tasks"])
    frame.attrs.update(seconds=round(summary.seconds, 1), cost=summary.cost, stopped_by=summary.stopped_by)
    return frame
