"""The still pictures of a film, drawn with Pillow: title cards, subtitle overlays, contact sheets.

Text uses the project's font finder (Chinese-capable when the machine has such a font) and its
line wrapper, so a card reads the same as the storyboard frames it introduces.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, PngImagePlugin

from pipeline_kit.film.drawing import wrap
from pipeline_kit.fonts import Font, font

BACKGROUND = (12, 12, 18)
INK = (236, 236, 240)
DIM = (150, 150, 165)
THUMB_WIDTH = 320  # contact sheet cell width in pixels: half a 640-wide frame, still legible
MAX_COLUMNS = 4  # so a sheet stays 1,280 pixels wide and reads at 100% on a laptop screen
LABEL_SIZE = 16  # pixel size of the shot id under each thumbnail
LABEL_HEIGHT = 26  # strip under each thumbnail holding the shot id
MAX_SUBTITLE_LINES = 2  # lines of a burnt-in cue, at the largest size that fits them
MIN_SUBTITLE_PX = 10  # the smallest burnt-in subtitle; a cue that needs more lines even so gets them
PAGE_ROWS = 4  # rows of a contact sheet shown at once: a 1,280 x 824 page reads without zooming
ROW_HEIGHT_KEY = "pipeline_kit:row_height"  # PNG text chunk: where a contact sheet's rows break


@dataclass(frozen=True)
class Grid:
    """A contact sheet's layout: `columns` x `rows` cells of `cell` pixels."""

    columns: int
    rows: int
    cell: tuple[int, int]

    @property
    def size(self) -> tuple[int, int]:
        return self.columns * self.cell[0], self.rows * self.cell[1]


def grid_for(count: int, frame_size: tuple[int, int]) -> Grid:
    """A near-square grid (at most MAX_COLUMNS wide) for `count` thumbnails of frames shaped
    like `frame_size`."""
    columns = max(1, min(MAX_COLUMNS, math.ceil(math.sqrt(count))))
    rows = max(1, math.ceil(count / columns))
    thumb_height = thumb_height_for(frame_size)
    return Grid(columns, rows, (THUMB_WIDTH, thumb_height + LABEL_HEIGHT))


def thumb_height_for(frame_size: tuple[int, int]) -> int:
    """The even height ffmpeg gives a THUMB_WIDTH-wide thumbnail (scale=W:-2)."""
    width, height = frame_size
    return max(2, 2 * round(THUMB_WIDTH * height / width / 2))


def title_card(size: tuple[int, int], heading: str, title: str, subtitle: str = "") -> Image.Image:
    """A dark card: a small heading ("Chapter 3"), the title large, an optional line below."""
    width, height = size
    image = Image.new("RGB", size, BACKGROUND)
    draw = ImageDraw.Draw(image)
    big = font(max(12, height // 11), title)
    small = font(max(10, height // 22), heading + subtitle)
    lines = wrap(title, big, width * 0.84)[:3] or [""]
    line_height = _px(big) * 1.25
    block = len(lines) * line_height
    top = (height - block) / 2
    draw.text((width / 2, top - _px(small) * 1.6), heading, font=small, fill=DIM, anchor="mt")
    for i, line in enumerate(lines):
        draw.text((width / 2, top + i * line_height), line, font=big, fill=INK, anchor="mt")
    if subtitle:
        draw.text((width / 2, top + block + line_height * 0.4), subtitle, font=small, fill=DIM, anchor="mt")
    return image


def subtitle_lines(size: tuple[int, int], text: str) -> tuple[Font, list[str]]:
    """The font and lines a cue is burnt in with: a twentieth of the frame's height, made smaller
    until the cue fits in MAX_SUBTITLE_LINES across 90% of its width (a portrait or square frame
    is narrow for its height), down to 10 pixels; every word is kept, never cut."""
    width, height = size
    pixels = max(MIN_SUBTITLE_PX, height // 20)
    while True:
        face = font(pixels, text)
        lines = wrap(text, face, width * 0.9)
        if len(lines) <= MAX_SUBTITLE_LINES or pixels == MIN_SUBTITLE_PX:
            return face, lines
        pixels = max(MIN_SUBTITLE_PX, pixels * 9 // 10)


def subtitle_overlay(size: tuple[int, int], text: str) -> Image.Image:
    """A transparent frame with `text` on a dark band near the bottom (for burning in)."""
    width, height = size
    image = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    face, lines = subtitle_lines(size, text)
    line_height = _px(face) * 1.3
    bottom = height * 0.94
    for i, line in enumerate(reversed(lines)):
        y = bottom - (i + 1) * line_height
        box = draw.textbbox((width / 2, y), line, font=face, anchor="mt")
        draw.rectangle((box[0] - 6, box[1] - 3, box[2] + 6, box[3] + 3), fill=(0, 0, 0, 170))
        draw.text((width / 2, y), line, font=face, fill=(255, 255, 255, 255), anchor="mt")
    return image


def save_contact_sheet(cells: Sequence[tuple[str, Path]], frame_size: tuple[int, int], path: Path) -> None:
    """The contact sheet as a PNG that records its row height, so it can be shown page by page."""
    info = PngImagePlugin.PngInfo()
    info.add_text(ROW_HEIGHT_KEY, str(grid_for(len(cells), frame_size).cell[1]))
    contact_sheet(cells, frame_size).save(path, format="PNG", pnginfo=info)


def contact_pages(path: Path, rows: int = PAGE_ROWS) -> list[bytes]:
    """A contact sheet cut between its rows into PNG pages of at most `rows` rows each (a sheet
    that does not record its row height is one page)."""
    with Image.open(path) as sheet:
        sheet.load()
        row_height = int(sheet.info.get(ROW_HEIGHT_KEY) or sheet.height)
        pages = []
        for top in range(0, sheet.height, row_height * rows):
            out = io.BytesIO()
            sheet.crop((0, top, sheet.width, min(sheet.height, top + row_height * rows))).save(out, format="PNG")
            pages.append(out.getvalue())
    return pages


def contact_sheet(cells: Sequence[tuple[str, Path]], frame_size: tuple[int, int]) -> Image.Image:
    """One cell per (label, thumbnail file), in order, each labelled under its picture."""
    layout = grid_for(len(cells), frame_size)
    sheet = Image.new("RGB", layout.size, BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    cell_w, cell_h = layout.cell
    thumb_size = (cell_w, cell_h - LABEL_HEIGHT)
    for index, (label, path) in enumerate(cells):
        left, top = (index % layout.columns) * cell_w, (index // layout.columns) * cell_h
        with Image.open(path) as thumb:
            picture = thumb.convert("RGB")
        if picture.size != thumb_size:
            picture = picture.resize(thumb_size, Image.Resampling.BILINEAR)
        sheet.paste(picture, (left, top))
        draw.text(
            (left + cell_w / 2, top + thumb_size[1] + 4),
            label[-32:],
            font=font(LABEL_SIZE, label),
            fill=INK,
            anchor="mt",
        )
    return sheet


def _px(face: Font) -> float:
    """A font's size in pixels (Pillow's bitmap fallback has none: assume 11)."""
    return float(getattr(face, "size", 11))
