"""Task kinds, one entry each: what a kind makes, where it queues, who makes it, what screens call it.

Every other module reads a kind's facts here instead of keeping its own set: the output suffix,
the routing (which backends may make a kind, which every worker makes itself), the lanes, the
storyboard's and review's words. A new kind is a new entry; only the code that plans its tasks
and the backend that makes it know more (docs/architecture.md, "Contributing").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache


class Media(Enum):
    """What a kind's output file is."""

    IMAGE = ".png"
    VIDEO = ".mp4"
    AUDIO = ".wav"  # with its lines' timing beside it
    SOUND = ".m4a"  # AAC, ready to mix (a music bed)
    RECORD = ".json"  # a JSON record (a chat answer, a note)


class Role(Enum):
    """The part a kind plays in a book's graph."""

    SHEET = "sheet"  # a character's or a place's reference picture, drawn before any frame
    FRAME = "frame"  # a shot's first or last frame, drawn from the sheets (and the first frame)
    CLIP = "clip"  # a shot's moving picture, made from its frames
    SPEECH = "speech"  # a shot's spoken lines
    MUSIC = "music"  # a book's music bed, from a sound file the user names
    FILM = "film"  # a chapter's or the book's film, assembled from the shots
    DIRECTION = "direction"  # the director's staging of a chapter or the cast
    RECORD = "record"  # an ad-hoc record outside a book's graph (`enqueue --kind`)


@dataclass(frozen=True, kw_only=True)
class Kind:
    """One task kind. `backends` are the routed backends that may make it (`work --backend`);
    a kind with a `local` maker is made by that backend on every worker, whatever its routing."""

    name: str
    media: Media
    role: Role
    lane: str  # the lane its tasks are enqueued in
    words: str  # what screens call one ("first frame", "clip")
    waits_for: str = "other work"  # what a task of it still waits for, in the screens' words
    backends: tuple[str, ...] = ()
    local: str | None = None
    optional: bool = False  # its dependents go ahead without it once it fails for good
    follows: str | None = None  # a routing that does not name it sends it where this kind goes
    fallback: str | None = None  # the backend that makes it when the routed default cannot

    @property
    def suffix(self) -> str:
        """The output file's suffix."""
        return self.media.value

    @property
    def per_shot(self) -> bool:
        """One task of it per shot, keyed `SHOT/KIND`."""
        return self.role in (Role.FRAME, Role.CLIP, Role.SPEECH)


PICTURES = ("sketch", "ark", "comfyui", "openai")  # backends that draw every image kind

KINDS: tuple[Kind, ...] = (  # in the order a book's graph makes them
    Kind(name="character_sheet", media=Media.IMAGE, role=Role.SHEET, lane="image", words="character sheet",
         backends=PICTURES),
    Kind(name="location_sheet", media=Media.IMAGE, role=Role.SHEET, lane="image", words="place sheet",
         backends=PICTURES, follows="character_sheet"),
    Kind(name="first_frame", media=Media.IMAGE, role=Role.FRAME, lane="image", words="first frame",
         waits_for="its character and place sheets", backends=PICTURES),
    Kind(name="last_frame", media=Media.IMAGE, role=Role.FRAME, lane="image", words="last frame",
         waits_for="its first frame and sheets", backends=PICTURES),
    Kind(name="video", media=Media.VIDEO, role=Role.CLIP, lane="video", words="clip", waits_for="its frames",
         backends=("sketch", "ark", "comfyui")),
    Kind(name="voice", media=Media.AUDIO, role=Role.SPEECH, lane="voice", words="speech",
         backends=("sketch", "espeak", "speech", "doubao"), fallback="espeak"),
    Kind(name="music", media=Media.SOUND, role=Role.MUSIC, lane="music", words="music bed",
         backends=("music",)),
    Kind(name="assemble_chapter", media=Media.VIDEO, role=Role.FILM, lane="assembly", words="chapter film",
         waits_for="its clips", local="assembly"),
    Kind(name="assemble_book", media=Media.VIDEO, role=Role.FILM, lane="assembly", words="book film",
         waits_for="its chapters", local="assembly"),
    Kind(name="direct_chapter", media=Media.RECORD, role=Role.DIRECTION, lane="llm", words="chapter's staging",
         local="director", optional=True),
    Kind(name="direct_book", media=Media.RECORD, role=Role.DIRECTION, lane="llm", words="cast's looks",
         local="director", optional=True),
    Kind(name="llm", media=Media.RECORD, role=Role.RECORD, lane="llm", words="chat answer",
         backends=("sketch", "ollama")),
    Kind(name="noop", media=Media.RECORD, role=Role.RECORD, lane="default", words="record",
         backends=("sketch", "noop", "sleep")),
)  # fmt: skip
BY_NAME: Mapping[str, Kind] = {k.name: k for k in KINDS}


def get(name: str) -> Kind | None:
    """The kind called `name`, None if there is none."""
    return BY_NAME.get(name)


@cache
def names(*roles: Role, media: Media | None = None) -> tuple[str, ...]:
    """The kinds playing one of `roles` (any role when none is given), of `media` when given,
    in the registry's order."""
    return tuple(k.name for k in KINDS if (not roles or k.role in roles) and media in (None, k.media))


@cache
def routed() -> tuple[str, ...]:
    """The kinds a routing may name: those without a local maker, sorted."""
    return tuple(sorted(k.name for k in KINDS if k.local is None))


@cache
def made_by(backend: str) -> frozenset[str]:
    """The kinds `backend` makes (as a routed backend, or as the local maker)."""
    return frozenset(k.name for k in KINDS if backend in k.backends or backend == k.local)


def local_makers() -> dict[str, str]:
    """kind -> the backend every worker runs itself for it (assembly, the director)."""
    return {k.name: k.local for k in KINDS if k.local is not None}


@cache
def per_shot() -> tuple[str, ...]:
    """The kinds a shot has one task of, keyed `SHOT/KIND`."""
    return tuple(k.name for k in KINDS if k.per_shot)


@cache
def optional() -> frozenset[str]:
    """The kinds whose dependents go ahead without them once they fail for good (the director's)."""
    return frozenset(k.name for k in KINDS if k.optional)
