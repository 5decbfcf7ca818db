"""Reading files and naming books: encodings, refusals, and stable, safe bookcodes."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import pytest

from pipeline_kit.errors import BadInput, NotFound
from pipeline_kit.text.bookcode import make_bookcode
from pipeline_kit.text.decode import MAX_BYTES, decode_bytes, read_book
from pipeline_kit.text.lang import detect_lang

TEXT = "第一回　开篇\n    悟空道：“师父！”\r\n    三藏笑了。\r"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8-sig"),
        (TEXT.encode("gb18030"), "gb18030"),
        (TEXT.encode("gbk"), "gb18030"),
        (TEXT.encode("utf-16"), "utf-16"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16"),
    ],
)
def test_every_supported_encoding_gives_the_same_text(data: bytes, encoding: str) -> None:
    """UTF-8 (BOM or not), GB18030/GBK and UTF-16 with a BOM decode to one text with LF newlines only."""
    decoded = decode_bytes(data)
    assert decoded.encoding == encoding
    assert decoded.text == TEXT.replace("\r\n", "\n").replace("\r", "\n")
    assert "\ufeff" not in decoded.text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"  \n\n\t ", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary"),
        (b"plain words then \x80\x81\xff bytes", "cannot decode"),
        (b"\x01\x02\x03\x04\x05 hello \x06\x07\x08", "binary"),
    ],
)
def test_bad_bytes_are_refused_with_one_clear_line(data: bytes, message: str) -> None:
    """Empty, binary and undecodable input raises BadInput (exit 2), never a traceback or garbage text."""
    with pytest.raises(BadInput, match=message) as info:
        decode_bytes(data)
    assert "\n" not in str(info.value)


def test_oversized_and_missing_files_are_refused(tmp_path: Path) -> None:
    """A file above the documented size limit is refused before it is read; a missing one is NotFound."""
    big = tmp_path / "big.txt"
    with big.open("wb") as out:
        out.seek(MAX_BYTES + 1)
        out.write(b"x")
    with pytest.raises(BadInput, match="limit"):
        read_book(big)
    with pytest.raises(NotFound):
        read_book(tmp_path / "nope.txt")


def test_language_is_detected() -> None:
    """Han-heavy text is zh, Latin text en."""
    assert detect_lang(TEXT) == "zh"
    assert detect_lang("It was a dark and stormy night. “Hello,” said Mara.") == "en"


@pytest.mark.parametrize(
    "title",
    [
        "西游记",
        "The Adventures of Sherlock Holmes",
        "Robert'); DROP TABLE books;--",
        "“引号” & <tags> / 斜杠",
        "  Ünïcödé   Tîtlé  ",
        "1984",
    ],
)
def test_bookcodes_are_stable_readable_and_safe(title: str) -> None:
    """Same title -> same code; the code is a short ASCII slug plus hash, safe in paths, URLs and SQL."""
    code = make_bookcode(title)
    assert code == make_bookcode(title)
    assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*-[0-9a-f]{6}", code)
    assert len(code) <= 64
    assert make_bookcode(title + " II") != code


def test_bookcode_keeps_latin_words_readable() -> None:
    """The slug carries the title's Latin words, and Chinese titles get a `book-` prefix."""
    assert make_bookcode("The Adventures of Sherlock Holmes").startswith("the-adventures-of-sherlock-holmes-")
    assert make_bookcode("西游记").startswith("book-")


@pytest.mark.parametrize("title", ["", "   ", "!!!", "“”。，、", "--- ... ---", "x" * 501])
def test_titles_without_letters_or_too_long_are_refused(title: str) -> None:
    """A title of only punctuation (or none, or too long) is BadInput."""
    with pytest.raises(BadInput):
        make_bookcode(title)
