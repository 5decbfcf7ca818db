"""A book's film profile: the picture its chapter and book films are made at.

`provider` (the default): a film keeps the size and frame rate its clips came at (a Seedance 720p
clip is 1280x720 at 24 fps), the most common among them when they differ; `animatic`: 640x360 at
12 fps, the sketch backend's picture, small and quick to assemble; `WIDTHxHEIGHT@FPS` (for
example `1920x1080@25`): that size and rate. A profile decides the film's picture only: what a
provider draws is kept as drawn, never shrunk on its way to the next provider.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline_kit.errors import BadInput

PROVIDER, ANIMATIC = "provider", "animatic"
DEFAULT = PROVIDER
ANIMATIC_FRAME = (640, 360, 12)
MAX_SIDE, MAX_FPS = 4096, 120
_CUSTOM = re.compile(r"^(\d{2,4})x(\d{2,4})@(\d{1,3})$")


@dataclass(frozen=True)
class FilmProfile:
    """A profile by name; `width`, `height` and `fps` are None for `provider` (the clips decide)."""

    name: str
    width: int | None = None
    height: int | None = None
    fps: int | None = None

    @property
    def fixed(self) -> bool:
        """Whether the profile names the picture (else each film takes its clips')."""
        return self.width is not None

    def describe(self) -> str:
        """One phrase for `status`, `film` and the report."""
        if not self.fixed:
            return f"{self.name} (each film keeps the size and frame rate of its clips)"
        picture = f"{self.width}x{self.height} at {self.fps} fps"
        return picture if self.name == f"{self.width}x{self.height}@{self.fps}" else f"{self.name} ({picture})"


def parse_profile(text: str | None) -> FilmProfile:
    """The profile a book's stored value (None: the default) or a user's `--profile` names;
    anything else is bad input, in one line."""
    name = (text or DEFAULT).strip().lower()
    if name == PROVIDER:
        return FilmProfile(PROVIDER)
    if name == ANIMATIC:
        return FilmProfile(ANIMATIC, *ANIMATIC_FRAME)
    found = _CUSTOM.match(name)
    if found:
        width, height, fps = (int(x) for x in found.groups())
        if (
            16 <= width <= MAX_SIDE
            and 16 <= height <= MAX_SIDE
            and width % 2 == height % 2 == 0
            and 1 <= fps <= MAX_FPS
        ):
            return FilmProfile(name, width, height, fps)
    raise BadInput(
        f"unknown film profile {text!r}: use provider (the clips' own size and rate), animatic "
        f"(640x360 at 12 fps) or WIDTHxHEIGHT@FPS with even sides up to {MAX_SIDE} and up to {MAX_FPS} fps"
    )
