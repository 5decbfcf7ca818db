"""Which backend makes which kind: one backend for every kind, or a routing per kind.

`ark` serves every kind with ark; `character_sheet=ark,first_frame=comfyui,last_frame=comfyui,
video=ark` names one backend per kind, and a `default=NAME` entry serves the kinds it does not
name. Every routed backend is built once, at start, and asked whether it makes the kinds routed
to it, so a worker that could never do its work refuses to start with one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pipeline_kit import kinds
from pipeline_kit.backends import get_backend
from pipeline_kit.backends.base import Backend
from pipeline_kit.backends.params import permanent
from pipeline_kit.errors import BadInput, GenerationError

KINDS = kinds.routed()  # the task kinds a routing may name
# A kind a routing does not name goes where its elder goes (`Kind.follows`: location sheets are
# drawn as the character sheets are, unless routed on their own).
FOLLOWS = {k.name: k.follows for k in kinds.KINDS if k.follows}
# A kind the routing does not name and its default backend does not make goes to its
# `Kind.fallback` instead: a book speaks (offline) whatever picture provider a worker runs.
FALLBACK = {k.name: k.fallback for k in kinds.KINDS if k.fallback}


@dataclass(frozen=True)
class Routing:
    """kind -> backend spec, plus the spec for every kind not named (None: no other kind)."""

    routes: Mapping[str, str] = field(default_factory=dict)
    default: str | None = None

    @classmethod
    def parse(cls, text: str) -> Routing:
        """`NAME[:ARG]`, or comma-separated `KIND=NAME[:ARG]` pairs (`default=` for the rest)."""
        text = text.strip()
        if not text:
            raise BadInput("--backend needs a backend name or KIND=NAME pairs")
        if "=" not in text:
            return cls(default=text)
        routes: dict[str, str] = {}
        for item in (part.strip() for part in text.split(",")):
            kind, sep, spec = (x.strip() for x in item.partition("="))
            if not (sep and kind and spec):
                raise BadInput(f"--backend routing items are KIND=NAME, got {item!r}")
            local = kinds.get(kind)
            if local is not None and local.local is not None:
                raise BadInput(
                    f"--backend cannot route {kind!r}: every worker serving the {local.lane} lane runs "
                    f"{local.local} tasks itself"
                )
            if kind != "default" and kind not in KINDS:
                raise BadInput(f"--backend routes unknown kind {kind!r}; kinds: {', '.join(KINDS)} (and default)")
            if kind in routes:
                raise BadInput(f"--backend routes kind {kind!r} twice")
            routes[kind] = spec
        default = routes.pop("default", None)
        return cls(routes=routes, default=default)

    def spec_for(self, kind: str) -> str | None:
        """The backend spec that makes `kind`, None if nothing is routed to it."""
        if kind not in self.routes and kind in FOLLOWS and FOLLOWS[kind] in self.routes:
            return self.routes[FOLLOWS[kind]]
        return self.routes.get(kind, self.default)

    def text(self) -> str:
        """The routing as `--backend` takes it."""
        if not self.routes:
            return self.default or ""
        pairs = [f"{k}={v}" for k, v in self.routes.items()]
        return ",".join(pairs + ([f"default={self.default}"] if self.default else []))

    def names(self) -> str:
        """The backend specs in use, joined by '+' (what the workers table shows)."""
        specs = dict.fromkeys([*self.routes.values(), *([self.default] if self.default else [])])
        return "+".join(specs)


class Router:
    """Hands out the backend for each kind, each backend built once."""

    def __init__(self, routing: Routing, build: Callable[[str], Backend] = get_backend) -> None:
        self.routing = routing
        self._build = build
        self._built: dict[str, Backend] = {}

    @classmethod
    def single(cls, backend: Backend) -> Router:
        """A router that gives `backend` for every kind (tests and notebooks pass one in)."""
        router = cls(Routing(default=backend.name))
        router._built[backend.name] = backend
        return router

    def backend_for(self, kind: str) -> Backend:
        """The backend routed to `kind` (or its FALLBACK); a kind routed nowhere is a permanent
        `invalid_kind`."""
        spec = self.spec_for(kind)
        if spec is None:
            raise permanent(
                "invalid_kind", f"invalid_kind: no backend is routed to kind {kind!r} (--backend {self.routing.text()})"
            )
        if spec not in self._built:
            self._built[spec] = self._build(spec)
        return self._built[spec]

    def spec_for(self, kind: str) -> str | None:
        """The spec routed to `kind`; its FALLBACK when only the default names it and cannot make it."""
        spec = self.routing.spec_for(kind)
        if kind in FALLBACK and kind not in self.routing.routes and spec is not None:
            if spec not in self._built:
                self._built[spec] = self._build(spec)
            try:
                self._built[spec].suffix(kind)
            except GenerationError:
                return FALLBACK[kind]
        return spec or FALLBACK.get(kind)

    def built(self) -> list[Backend]:
        """The backends built so far (all of them after `check`)."""
        return list(self._built.values())

    def check(self, waiting: Mapping[str, str] | None = None) -> None:
        """Build every backend named (BadInput if one cannot be: unknown, no key) and make sure
        each makes the kinds routed to it, and the backend serving each kind of `waiting` (kind ->
        its lane: the tasks the worker's lanes hold) makes that kind; BadInput in one line if not."""
        for spec in dict.fromkeys([*self.routing.routes.values(), self.routing.default]):
            if spec is not None and spec not in self._built:
                self._built[spec] = self._build(spec)
        for kind, spec in self.routing.routes.items():
            try:
                self.backend_for(kind).suffix(kind)
            except GenerationError:
                raise BadInput(
                    f"backend {spec!r} cannot make kind {kind!r} (--backend {self.routing.text()})"
                ) from None
        for kind, lane in (waiting or {}).items():
            spec = self.spec_for(kind)
            try:
                self.backend_for(kind).suffix(kind)
            except GenerationError:
                who = f"backend {spec!r} cannot make" if spec else "no backend is routed to"
                raise BadInput(
                    f"{who} kind {kind!r}, which lane {lane!r} holds: route it "
                    f"(--backend {kind}=NAME,default={spec or 'NAME'}) or leave the lane out "
                    f"(--lanes without {lane})"
                ) from None
