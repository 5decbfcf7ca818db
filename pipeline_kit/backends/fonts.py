"""Finding a font on this machine that renders Chinese, never downloading one.

Order: $PIPELINE_KIT_FONT, fontconfig's fonts for `:lang=zh`, a list of well-known paths on
Linux, macOS and Windows, then Pillow's built-in font (Latin only: Han characters come out as
boxes, but nothing fails).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from PIL import ImageFont

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

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def _fontconfig_cjk() -> list[str]:
    """Font files fontconfig says cover Chinese (empty when fc-list is absent or fails)."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return []
    try:
        found = subprocess.run([fc_list, ":lang=zh", "file"], capture_output=True, text=True,
                               timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    files = {line.strip().rstrip(":") for line in found.splitlines() if line.strip()}
    # Prefer sans faces (Sans, Hei, microhei) for legibility on small frames.
    return sorted(files, key=lambda f: ("sans" not in f.lower() and "hei" not in f.lower(), f))


@functools.cache
def cjk_font_path() -> str | None:
    """The path of a font that renders Chinese, or None if this machine has none."""
    override = os.environ.get("PIPELINE_KIT_FONT")
    candidates = ([override] if override else []) + _fontconfig_cjk() + list(KNOWN_CJK_FONTS)
    for candidate in candidates:
        if Path(candidate).is_file():
            try:
                ImageFont.truetype(candidate, 12)
            except OSError:
                continue
            return candidate
    return None


@functools.cache
def font(size: int) -> Font:
    """A font of `size` pixels: the Chinese-capable one if any, else Pillow's default."""
    path = cjk_font_path()
    if path is not None:
        return ImageFont.truetype(path, size)
    return ImageFont.load_default(size)
