"""A font that renders Chinese and Japanese, for Pillow pictures and matplotlib charts alike.

Found once per process, never downloaded. Order: $PIPELINE_KIT_FONT (a font file, or `none`
for Latin only), the Noto Sans CJK SC the optional `cjk` extra installs (package mplfonts),
fontconfig's fonts for `:lang=zh`, then well-known paths on Linux, macOS and Windows. A
candidate counts only if it really draws Han characters. Without one, Pillow's built-in font
draws Latin and Han characters come out as boxes: `warn_missing` says so, once.
A leaf module: it imports nothing of the project, so text, film, backends and analysis share it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from PIL import ImageFont

ENV = "PIPELINE_KIT_FONT"
CJK_LANGS = frozenset({"zh", "ja", "ko"})  # languages whose text needs a CJK font
CJK_CHARS = re.compile(  # Han, kana, Hangul, CJK punctuation and full-width forms
    r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff]"
)
PACKAGED = ("mplfonts", "fonts/NotoSansCJKsc-Regular.otf")  # the `cjk` extra's font
KNOWN_CJK_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/wenquanyi/wqy-microhei/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/arphic/uming.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/System/Library/Fonts/PingFang.ttc",
    "/System/Library/Fonts/STHeiti Medium.ttc",
    "/Library/Fonts/Arial Unicode.ttf",
    "C:/Windows/Fonts/msyh.ttc",
    "C:/Windows/Fonts/simhei.ttf",
    "C:/Windows/Fonts/simsun.ttc",
)
MISSING = (
    "no font that draws Chinese or Japanese was found, so their text will show as empty "
    "boxes in frames, sheets, title cards and charts: install the `cjk` extra "
    "(pip install 'pipeline_kit[cjk]'), a system CJK font (e.g. fonts-noto-cjk), or set "
    f"${ENV} to a font file"
)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
_warned: set[str] = set()  # the messages this process has already written


def _packaged() -> list[str]:
    """The `cjk` extra's font file, found without importing its package (empty when absent)."""
    spec = importlib.util.find_spec(PACKAGED[0])
    if spec is None or not spec.submodule_search_locations:
        return []
    return [str(Path(next(iter(spec.submodule_search_locations))) / PACKAGED[1])]


def _fontconfig() -> list[str]:
    """Font files fontconfig says cover Chinese, sans faces first (empty without fc-list)."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return []
    try:
        found = subprocess.run(
            [fc_list, ":lang=zh", "file"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    files = {line.strip().rstrip(":") for line in found.splitlines() if line.strip()}
    return sorted(files, key=lambda f: ("sans" not in f.lower() and "hei" not in f.lower(), f))


def draws_han(path: str) -> bool:
    """Does the font at `path` load and draw two Han characters differently (not as boxes)?"""
    try:
        face = ImageFont.truetype(path, 24)
    except OSError:
        return False
    one, other = face.getmask("国"), face.getmask("林")
    return one.getbbox() is not None and bytes(one) != bytes(other)


@functools.cache
def cjk_font_path() -> str | None:
    """The path of a font that renders Chinese, or None if there is none (or $ENV is `none`)."""
    override = os.environ.get(ENV, "").strip()
    if override.lower() == "none":
        return None
    candidates = [override] if override else []
    candidates += _packaged() + _fontconfig() + list(KNOWN_CJK_FONTS)
    return next((c for c in candidates if Path(c).is_file() and draws_han(c)), None)


def font(size: int, text: str | None = None) -> Font:
    """A font of `size` pixels for `text`: the CJK one if any (and `text` is None or has CJK
    characters), else Pillow's own font, whose Latin quotes and spaces are not full-width."""
    return _face(size, text is None or bool(CJK_CHARS.search(text)))


@functools.cache
def _face(size: int, cjk: bool) -> Font:
    path = cjk_font_path() if cjk else None
    if path is not None:
        return ImageFont.truetype(path, size)
    return ImageFont.load_default(size)


def needs_cjk(langs: Iterable[str | None]) -> bool:
    """Does any of these book languages need a CJK font?"""
    return any((lang or "").split("-")[0].lower() in CJK_LANGS for lang in langs)


def missing_warning(langs: Iterable[str | None]) -> str | None:
    """The warning to give when books in `langs` need a CJK font this machine lacks, else None."""
    return MISSING if needs_cjk(langs) and cjk_font_path() is None else None


def warn_missing(langs: Iterable[str | None], stream: IO[str] | None = None) -> bool:
    """Write the missing-font warning on stderr, at most once per process; True if written."""
    message = missing_warning(langs)
    if message is None or message in _warned:
        return False
    _warned.add(message)
    (stream or sys.stderr).write(f"pipeline-kit: warning: {message}\n")
    return True


@functools.cache  # registering the font reads the whole file: once per process
def matplotlib_rc() -> dict[str, Any]:
    """matplotlib rc settings that draw CJK text with the found font ({} without one).

    Latin text keeps DejaVu Sans; matplotlib falls back per glyph to the CJK font (a list of
    families, not a generic one, turns that on), which is registered with its font manager here.
    Use as `with matplotlib.rc_context(matplotlib_rc()):`.
    """
    path = cjk_font_path()
    if path is None:
        return {}
    from matplotlib import font_manager

    font_manager.fontManager.addfont(path)
    name = font_manager.FontProperties(fname=path).get_name()
    return {"font.family": ["DejaVu Sans", name]}
