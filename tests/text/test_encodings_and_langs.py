"""Legacy encodings are detected (charset-normalizer), not guessed as GB18030, and the language
tag follows the text: a Shift-JIS book is read as Shift-JIS, found to be Japanese and refused in
one line (exit 2, nothing stored) whatever `--lang` says, like Korean or Cyrillic text; Big5 and
GBK Chinese and Windows-1252 English are read right and tagged zh and en."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from pipeline_kit.cli import main
from pipeline_kit.db import create
from pipeline_kit.db.schema import books, chapters
from pipeline_kit.errors import BadInput
from pipeline_kit.text.decode import decode_bytes
from pipeline_kit.text.lang import detect_lang

from tests.conftest import CORPUS

# Public-domain openings: Natsume Soseki (1905), the Romance of the Three Kingdoms (14th c.).
JAPANESE = (
    "第一章\n吾輩は猫である。名前はまだ無い。\nどこで生れたかとんと見当がつかぬ。"
    "何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。\n"
)
TRADITIONAL = "第一回\n話說天下大勢，分久必合，合久必分。周末七國分爭，并入於秦。及秦滅之後，楚、漢分爭，又并入於漢。\n"
KOREAN = "제1장\n옛날 옛적에 호랑이가 담배 피던 시절에 한 마을에 착한 나무꾼이 살았습니다.\n"
RUSSIAN = "Глава 1\nВсе счастливые семьи похожи друг на друга, каждая несчастливая семья несчастлива по-своему.\n"


def _zh() -> str:
    return (CORPUS / "zh_xiyouji.txt").read_text(encoding="utf-8")[:20000]


def _en() -> str:
    text = (CORPUS / "en_adventures_of_sherlock_holmes.txt").read_text(encoding="utf-8")[:20000]
    return text.replace("'", "\u2019").replace('"', "\u201c")  # curly quotes: bytes 0x92, 0x93 in cp1252


@pytest.mark.parametrize(
    ("make", "encoding", "lang"),
    [
        (_zh, "gb18030", "zh"),
        (lambda: TRADITIONAL, "big5", "zh"),
        (_en, "cp1252", "en"),
    ],
    ids=["GBK Chinese", "Big5 Chinese", "Windows-1252 English"],
)
def test_legacy_encodings_read_as_written(make, encoding: str, lang: str) -> None:  # type: ignore[no-untyped-def]
    """Each legacy encoding gives back exactly the text that was written, tagged by its script."""
    text = make()
    decoded = decode_bytes(text.encode(encoding))
    assert decoded.encoding == encoding and decoded.text == text
    assert detect_lang(decoded.text) == lang


@pytest.mark.parametrize(
    ("text", "encoding", "says"),
    [
        (JAPANESE, "shift_jis", "Japanese"),
        (JAPANESE, "euc_jp", "Japanese"),
        (KOREAN, "euc_kr", "Korean"),
        (RUSSIAN, "utf-8", "Cyrillic"),
    ],
)
def test_other_languages_are_read_then_refused(text: str, encoding: str, says: str) -> None:
    """Japanese and Korean bytes decode to their real text (not GB18030 mojibake), and the text
    is refused as a language the rules cannot read, in one line."""
    decoded = decode_bytes(text.encode(encoding))
    assert decoded.text == text
    with pytest.raises(BadInput, match=says) as info:
        detect_lang(decoded.text)
    assert "\n" not in str(info.value) and "zh" in str(info.value)


def test_a_few_foreign_words_keep_the_books_language() -> None:
    """An English book quoting Japanese or Russian words is still English; a Chinese one with an
    English name still Chinese."""
    assert detect_lang("Tokyo: 東京 is the capital. ありがとう means thank you, she said, and smiled.") == "en"
    assert detect_lang("He wrote 'спасибо' on the card, then crossed the street to the old harbour.") == "en"
    assert detect_lang("悟空道：“Sherlock Holmes 来了！”三藏笑了。") == "zh"


def _ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, *extra: str) -> tuple[int, str]:
    """`pipeline-kit ingest` of `data` into a SQLite database in `tmp_path`: its exit code and stderr."""
    book = tmp_path / "book.txt"
    book.write_bytes(data)
    url = f"sqlite:///{tmp_path / 'lang.db'}"
    if not (tmp_path / "lang.db").exists():
        assert main(["--db", url, "init"]) == 0
    capsys.readouterr()
    try:
        code = main(["--db", url, "ingest", str(book), "--title", "Book", *extra])
    except SystemExit as exc:  # a usage error, as argparse reports it
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("lang", [[], ["--lang", "zh"], ["--lang", "en"]], ids=["detected", "zh", "en"])
@pytest.mark.db
def test_shift_jis_book_is_refused_in_one_line_and_nothing_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: list[str]
) -> None:
    """`ingest` of a Shift-JIS Japanese book: exit 2, one line naming Japanese, no traceback, no
    book or chapter stored, whatever --lang claims."""
    code, err = _ingest(tmp_path, capsys, JAPANESE.encode("shift_jis"), *lang)
    assert code == 2 and "Japanese" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    db = create(f"sqlite:///{tmp_path / 'lang.db'}")
    try:
        with db.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(books)).scalar() == 0
            assert conn.execute(sa.select(sa.func.count()).select_from(chapters)).scalar() == 0
    finally:
        db.dispose()


@pytest.mark.db
def test_lang_takes_zh_or_en_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--lang ja` is refused in one line that names the codes there are; a Big5 book ingests as
    zh with its text intact."""
    code, err = _ingest(tmp_path, capsys, TRADITIONAL.encode("big5"), "--lang", "ja")
    assert code == 2 and "zh (Chinese) or en (English)" in err, err
    assert len(err.strip().splitlines()) == 1
    code, err = _ingest(tmp_path, capsys, TRADITIONAL.encode("big5"))
    assert code == 0 and "(zh, big5)" in err, err
    db = create(f"sqlite:///{tmp_path / 'lang.db'}")
    try:
        with db.engine.connect() as conn:
            assert "話說天下大勢" in conn.execute(sa.select(chapters.c.text)).scalar()
    finally:
        db.dispose()
