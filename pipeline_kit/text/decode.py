"""Read a book file into text: size limit, binary check, encoding detection, newline normalising.

Accepted: UTF-8 (with or without BOM), UTF-16 with a BOM, and, detected by charset-normalizer,
GB18030 (a superset of GBK and GB2312), Big5, Shift-JIS, EUC-JP, EUC-KR and Windows-1252; any
other bytes are refused in one line. The text is otherwise kept exactly as read: only the BOM
goes and CRLF/CR become LF. (Which languages a book may be in is `lang.py`'s to say.)
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

from charset_normalizer import from_bytes

from pipeline_kit.errors import BadInput, NotFound

MAX_BYTES = 32 * 1024 * 1024  # a long novel is 2-3 MB; 32 MB is ten of them
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_MAX_CONTROL_SHARE = 0.001
# The legacy encodings detection may choose, best first where two read the bytes equally well
# (short GBK text also decodes cleanly as Korean cp949). Python's codec names.
LEGACY = ("gb18030", "big5", "cp932", "euc_jp", "cp949", "cp1252")
LEGACY_NAMES = "GB18030/GBK, Big5, Shift-JIS, EUC-JP, EUC-KR or Windows-1252"


@dataclass(frozen=True)
class Decoded:
    """A file's text and the encoding it was read with."""

    text: str
    encoding: str


def read_book(path: str | Path) -> Decoded:
    """Read and decode `path`, refusing missing, empty, oversized, binary or undecodable files."""
    path = Path(path)
    if not path.is_file():
        raise NotFound(f"no such file: {path}")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise BadInput(
            f"{path.name} is {size / 2**20:.1f} MiB; the limit is {MAX_BYTES // 2**20} MiB per file "
            "(split the book and ingest it with --chapter N)"
        )
    return decode_bytes(path.read_bytes(), name=path.name)


def decode_bytes(data: bytes, *, name: str = "input") -> Decoded:
    """Decode `data` by BOM, else as UTF-8, else in the legacy encoding that reads it best;
    normalise newlines."""
    if len(data) > MAX_BYTES:
        raise BadInput(f"{name} is larger than {MAX_BYTES // 2**20} MiB")
    text, encoding = _decode(data, name)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise BadInput(f"{name} is empty (no text to ingest)")
    controls = len(_CONTROL.findall(text))
    if controls > max(2, len(text) * _MAX_CONTROL_SHARE):
        raise BadInput(f"{name} looks binary ({controls} control characters), not a text file")
    return Decoded(text, encoding)


def _decode(data: bytes, name: str) -> tuple[str, str]:
    if data.startswith(codecs.BOM_UTF8):
        return _strict(data[3:], "utf-8", name), "utf-8-sig"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _strict(data, "utf-16", name), "utf-16"
    if b"\x00" in data:
        raise BadInput(f"{name} looks binary (it holds NUL bytes and no UTF-16 byte-order mark)")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    return _legacy(data, name)


def _legacy(data: bytes, name: str) -> tuple[str, str]:
    """The text in the LEGACY encoding charset-normalizer finds least garbled (ties go to the
    earlier one); refused when none reads the bytes cleanly."""
    readings = from_bytes(data, cp_isolation=list(LEGACY))
    if not readings:
        raise BadInput(f"cannot decode {name}: not UTF-8, UTF-16 (with a byte-order mark), {LEGACY_NAMES}")
    rank = {encoding: i for i, encoding in enumerate(LEGACY)}
    best = min(readings, key=lambda r: (round(r.chaos, 3), rank.get(r.encoding, len(LEGACY))))
    return _strict(data, best.encoding, name), best.encoding


def _strict(data: bytes, encoding: str, name: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise BadInput(f"cannot decode {name} as {encoding} (bad byte at offset {exc.start})") from None
