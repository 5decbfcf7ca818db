"""What `pipeline-kit providers` reports: per kind, the backend, its URL and model, its key.

A backend that talks to a service says so with `describe(kind)` (url, model, the name of the
variable holding its key) and `check()` (a call that costs nothing, raising GenerationError if
the service does not answer); offline backends have neither and are reported as local.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pipeline_kit import kinds
from pipeline_kit.backends.routing import Router
from pipeline_kit.errors import BadInput, GenerationError

# The kinds of a book's graph that a routing sends to a provider (not the ad-hoc records, not
# what every worker makes itself), in the order a book makes them.
# What providers make: not records, not the music bed (`film --music` makes it from a file on one PC)
GENERATION_KINDS = tuple(
    k.name for k in kinds.KINDS if k.local is None and k.role not in (kinds.Role.RECORD, kinds.Role.MUSIC)
)


def provider_lines(router: Router, *, check: bool = False, env: Mapping[str, str] = os.environ) -> list[str]:
    """One line per generation kind: who makes it, where, with what, and whether it answers."""
    lines = []
    for kind in GENERATION_KINDS:
        spec = router.spec_for(kind)
        if spec is None:
            lines.append(f"{kind}: no backend routed")
            continue
        try:
            backend = router.backend_for(kind)
        except (BadInput, GenerationError) as exc:  # e.g. the key is missing
            lines.append(f"{kind}: {spec}: cannot start: {exc}")
            continue
        describe = getattr(backend, "describe", None)
        if describe is None:
            lines.append(f"{kind}: {spec}: local, no service")
            continue
        facts = describe(kind)
        key = facts.get("key")
        parts = [
            f"{kind}: {spec}",
            facts.get("url", "-"),
            f"model {facts.get('model', '-')}",
            f"key {key} {'set' if env.get(key) else 'NOT set'}" if key else "no key",
        ]
        if check:
            try:
                backend.check()
                parts.append("answers")
            except GenerationError as exc:
                parts.append(f"does not answer: {exc}")
        lines.append(", ".join(parts))
    return lines
