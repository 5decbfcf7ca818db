"""The offline voice: libespeak-ng through ctypes, from the `espeakng-loader` wheel (or Debian's
`libespeak-ng1`), so a fresh machine speaks English and Mandarin with no key and no network.

The library keeps global state, so one synthesis runs at a time per process (a lock); it is
initialised once, in synchronous mode, and hands its 16-bit mono PCM to a callback.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from dataclasses import dataclass
from functools import cache

from pipeline_kit.errors import GenerationError

_SYNCHRONOUS = 0x02  # AUDIO_OUTPUT_SYNCHRONOUS: espeak_Synth returns once every sample was handed over
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_RATE = 1  # espeakRATE, words per minute
_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Speech:
    """Synthesised speech: 16-bit little-endian mono PCM at `rate` Hz."""

    pcm: bytes
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.pcm) / 2 / self.rate


def _unavailable(message: str) -> GenerationError:
    return GenerationError(f"offline voice unavailable: {message}", error_kind="voice_unavailable", retryable=False)


@cache
def _library() -> tuple[ctypes.CDLL, int]:
    """The loaded library and its sample rate, initialised once for the process."""
    try:
        import espeakng_loader  # type: ignore[import-untyped]

        path, data = espeakng_loader.get_library_path(), espeakng_loader.get_data_path()
    except (ImportError, RuntimeError):  # Debian's package: its library finds its own data
        path, data = ctypes.util.find_library("espeak-ng"), None
    if path is None:
        raise _unavailable("install espeakng-loader (pip) or libespeak-ng1 (apt)")
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        raise _unavailable(f"cannot load {path}: {exc}") from None
    lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.espeak_Synth.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_uint,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    rate = lib.espeak_Initialize(_SYNCHRONOUS, 0, data.encode() if data else None, 0)
    if rate <= 0:
        raise _unavailable(f"espeak_Initialize failed ({rate}) with data at {data}")
    return lib, rate


def speak(text: str, voice: str, *, words_per_minute: int = 160) -> Speech:
    """`text` (UTF-8, any length) spoken by espeak voice `voice` (`en`, `cmn`, `en+f3`, ...); an
    unknown voice is a permanent `bad_voice`."""
    with _LOCK:
        lib, rate = _library()
        if lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise GenerationError(f"bad_voice: espeak has no voice {voice!r}", error_kind="bad_voice", retryable=False)
        lib.espeak_SetParameter(_RATE, words_per_minute, 0)
        chunks: list[bytes] = []

        def collect(samples: ctypes._Pointer[ctypes.c_short], count: int, _events: int) -> int:
            if count > 0:
                chunks.append(ctypes.string_at(samples, count * 2))
            return 0

        callback = _CALLBACK(collect)  # kept referenced until the synthesis is over
        lib.espeak_SetSynthCallback(callback)
        data = text.encode("utf-8") + b"\0"
        if lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None) != 0:
            raise GenerationError("espeak could not synthesise the line", error_kind="voice_failed", retryable=True)
        lib.espeak_Synchronize()
        return Speech(b"".join(chunks), rate)
