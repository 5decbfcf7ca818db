"""Generation backends behind one registry: `get_backend("sketch")`, `get_backend("sleep:0.5")`.

A spec is NAME or NAME:ARGUMENT. Each backend is one module with a factory taking the argument
(or None); adding a backend is adding its module and one line to `REGISTRY`. Modules load only
when asked for, so `noop` never pays for importing imageio or httpx.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from pipeline_kit import kinds
from pipeline_kit.backends.base import Backend, CallContext, Job, LocalContext, Output
from pipeline_kit.errors import BadInput

# name -> "module:factory"; the factory takes the spec's argument (None when absent).
REGISTRY: dict[str, str] = {
    "sketch": "pipeline_kit.backends.sketch:make",
    "noop": "pipeline_kit.backends.noop:make_noop",
    "sleep": "pipeline_kit.backends.noop:make_sleep",
    "openai": "pipeline_kit.backends.openai_images:make",
    "comfyui": "pipeline_kit.backends.comfyui:make",
    "ollama": "pipeline_kit.backends.ollama:make",
    "assembly": "pipeline_kit.backends.assembly:make",
    "ark": "pipeline_kit.backends.ark:make",
    "director": "pipeline_kit.backends.director:make",
    "espeak": "pipeline_kit.backends.offline_voice:make",
    "speech": "pipeline_kit.backends.openai_speech:make",
    "doubao": "pipeline_kit.backends.doubao_speech:make",
    "music": "pipeline_kit.backends.music:make",
}
ARGUMENTS = {"sleep": "SECONDS"}  # what a backend's spec takes after its name's colon, where it takes one


def available_backends() -> list[str]:
    """The backend names a spec may start with, sorted."""
    return sorted(REGISTRY)


def backend_choices() -> str:
    """The backends `work --backend` and the worker notebook may name, as specs ('sketch | noop |
    sleep:SECONDS | ...'): every registered one but the local makers, which every worker runs itself."""
    local = set(kinds.local_makers().values())
    return " | ".join(f"{n}:{ARGUMENTS[n]}" if n in ARGUMENTS else n for n in REGISTRY if n not in local)


def get_backend(spec: str) -> Backend:
    """The backend for `spec` (NAME or NAME:ARGUMENT); unknown or malformed -> BadInput."""
    name, sep, arg = spec.strip().partition(":")
    target = REGISTRY.get(name)
    if target is None:
        raise BadInput(f"unknown backend {spec!r}; choose one of: {', '.join(available_backends())}")
    module_name, _, factory_name = target.partition(":")
    factory = cast(Callable[[str | None], Backend], getattr(importlib.import_module(module_name), factory_name))
    return factory(arg if sep else None)


__all__ = [
    "Backend",
    "CallContext",
    "Job",
    "LocalContext",
    "Output",
    "available_backends",
    "backend_choices",
    "get_backend",
]
