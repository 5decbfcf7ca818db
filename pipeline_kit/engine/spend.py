"""Money spent per provider, from the attempts ledger (no column of its own: derived).

An attempt's provider is the one its backend recorded in the attempt's settings (`provider`:
ark, openai, comfyui, ...). An attempt that never completed has no settings (a paid call that
failed, a lease lost mid-call): it is put down to its worker's backend(s) as the workers table
names them ("ark", or "comfyui+ark" for a worker routing kinds to several), else "unknown".
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from pipeline_kit.db.schema import attempts, tasks, workers

RECORDED = attempts.c.settings["provider"].as_string()
PROVIDER = sa.func.coalesce(RECORDED, workers.c.backend, "unknown")


def provider_spend(conn: sa.Connection, bookcode: str | None = None) -> dict[str, dict[str, Any]]:
    """provider -> paid attempts and their cost (in one book, or in all), costliest first."""
    query = (
        sa.select(
            PROVIDER.label("provider"), sa.func.count().label("attempts"), sa.func.sum(attempts.c.cost).label("cost")
        )
        .select_from(attempts.outerjoin(workers, workers.c.worker_id == attempts.c.worker_id))
        .where(attempts.c.cost > 0)
        .group_by(PROVIDER)
    )
    if bookcode:
        query = query.where(attempts.c.task_id.in_(sa.select(tasks.c.task_id).where(tasks.c.bookcode == bookcode)))
    rows = sorted(conn.execute(query), key=lambda r: (-float(r.cost), str(r.provider)))
    return {str(r.provider): {"attempts": int(r.attempts), "cost": round(float(r.cost), 6)} for r in rows}
