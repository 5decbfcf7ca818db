"""Storyboard frames and character sheets drawn with Pillow, deterministic from their fields.

A frame's look comes from its shot: the sky or wall colours from the time of day and the
location, hills or a room from the location, one labelled figure per character, the shot text
wrapped in a caption band and the shot id in the corner. Both frames of a shot share its set;
the last frame moves the figures, and a clip redraws them walking from one spot to the other
(the frame's PNG carries its shot and seed for that). Same fields and seed -> the same pixels.
"""

from __future__ import annotations

import colorsys
import dataclasses
import hashlib
import json
import math
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw
from PIL.PngImagePlugin import PngInfo

from pipeline_kit.fonts import Font, font

RGB = tuple[int, int, int]

# (words that name the time, sky colour at the top, sky colour at the horizon); first match wins.
TIMES: tuple[tuple[tuple[str, ...], RGB, RGB], ...] = (
    (("night", "midnight", "夜", "深夜", "午夜", "半夜"), (10, 14, 38), (42, 52, 96)),
    (("dawn", "sunrise", "morning", "清晨", "黎明", "拂晓", "早晨", "早上"), (118, 140, 204), (250, 196, 150)),
    (("dusk", "sunset", "evening", "黄昏", "傍晚", "日落", "晚"), (72, 58, 120), (242, 142, 88)),
    (("day", "noon", "afternoon", "白天", "中午", "下午", "上午", "午", "日"), (96, 160, 228), (204, 228, 246)),
)
NEUTRAL_SKY: tuple[RGB, RGB] = ((120, 140, 170), (200, 208, 220))
INDOOR = re.compile(
    r"room|hall|house|inside|interior|office|inn|shop|palace|temple|"
    r"[室屋房厅殿店内堂府楼馆宫庙舍]",
    re.IGNORECASE,
)
INFO_KEY = "pipeline_kit.sketch"  # PNG text key of a frame's shot and seed (see frame_info)
STEP = 0.02  # a stride, in fractions of the frame's width
MAX_FIGURES = 6  # characters drawn in one frame; more are counted ("+2")
MARGIN = 4  # pixels a label's box keeps from the picture's edges
_TOKEN = re.compile(r"[A-Za-z0-9'\u2019.,;:!?\-]+\s*|\s+|.", re.DOTALL)


@dataclass(frozen=True)
class Shot:
    """The fields of a storyboard frame that change its picture."""

    shot_id: str
    kind: str
    caption: str
    characters: tuple[str, ...]
    location: str | None
    time_of_day: str | None
    chapter: str = ""
    seq: str = ""


def _hash_unit(text: str) -> float:
    """A number in [0, 1) from text, the same on every machine (unlike hash())."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big") / 2**32


def _hsv(hue: float, sat: float, val: float) -> RGB:
    r, g, b = colorsys.hsv_to_rgb(hue % 1.0, sat, val)
    return round(r * 255), round(g * 255), round(b * 255)


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def sky_colours(time_of_day: str | None, location: str | None) -> tuple[RGB, RGB]:
    """(top, horizon) colours: the time of day, tinted a little by the location's hue."""
    when = (time_of_day or "").lower()
    top, bottom = next(((t, b) for words, t, b in TIMES if any(w in when for w in words)), NEUTRAL_SKY)
    tint = _hsv(_hash_unit(location or ""), 0.5, 0.8)
    return _mix(top, tint, 0.12), _mix(bottom, tint, 0.12)


def vertical_gradient(size: tuple[int, int], top: RGB, bottom: RGB) -> Image.Image:
    """An RGB image fading from `top` to `bottom`."""
    width, height = size
    ramp = np.linspace(np.array(top, float), np.array(bottom, float), height)
    rows = np.repeat(ramp.round().astype(np.uint8)[:, None, :], width, axis=1)
    return Image.fromarray(rows, "RGB")


def wrap(text: str, face: Font, width: float) -> list[str]:
    """Greedy line wrap: by word for Latin text, by character for Chinese."""
    lines, line = [], ""
    for token in _TOKEN.findall(" ".join(text.split())):
        if line and face.getlength(line + token.rstrip()) > width:
            lines.append(line.rstrip())
            line = token.lstrip()
        else:
            line += token
    if line.strip():
        lines.append(line.rstrip())
    return lines


def _fit_lines(lines: list[str], face: Font, width: float, max_lines: int) -> list[str]:
    """At most `max_lines`, the last ending in an ellipsis when text was cut."""
    if len(lines) <= max_lines:
        return lines
    last = lines[max_lines - 1]
    while last and face.getlength(last + "…") > width:
        last = last[:-1]
    return [*lines[: max_lines - 1], last + "…"]


def _label(
    draw: ImageDraw.ImageDraw,
    xy: tuple[float, float],
    text: str,
    size: int,
    fill: RGB = (255, 255, 255),
    box: RGB | None = (20, 20, 28),
    anchor: str = "mt",
) -> None:
    """Text with a small dark box behind it so it reads on any background, moved inside the
    picture when it would run over an edge (a name under a figure at the side)."""
    face = font(size, text)
    width, height = draw.im.size
    left, top, right, bottom = draw.textbbox(xy, text, font=face, anchor=anchor)
    pad = 4 if box is not None else 0  # the box reaches this far past the text
    dx = max(0.0, MARGIN + pad - left) or min(0.0, width - MARGIN - pad - right)
    dy = max(0.0, MARGIN + pad - top) or min(0.0, height - MARGIN - pad - bottom)
    xy = (xy[0] + dx, xy[1] + dy)
    if box is not None:
        draw.rounded_rectangle((left + dx - 4, top + dy - 3, right + dx + 4, bottom + dy + 3), radius=4, fill=box)
    draw.text(xy, text, font=face, fill=fill, anchor=anchor)


def figure(
    draw: ImageDraw.ImageDraw,
    cx: float,
    base: float,
    height: float,
    colour: RGB,
    pose: str = "front",
    stride: float = 0.0,
) -> None:
    """A simple standing figure (head, body, arms, legs); pose is front, side or back; `stride`
    (0 to 1) swings the feet apart, for a figure caught mid-step."""
    head = height * 0.13
    neck = base - height + 2 * head
    skin = (232, 200, 170) if pose != "back" else _mix(colour, (30, 30, 30), 0.5)
    half = height * (0.11 if pose == "side" else 0.16)
    body_bottom = base - height * 0.42
    leg = max(2, int(height * 0.05))
    step = half * 0.5 * stride
    draw.line((cx - half * 0.5, body_bottom, cx - half * 0.6 - step, base), fill=(40, 40, 48), width=leg)
    draw.line((cx + half * 0.5, body_bottom, cx + half * 0.6 + step, base), fill=(40, 40, 48), width=leg)
    draw.polygon(
        ((cx - half * 0.7, neck), (cx + half * 0.7, neck), (cx + half, body_bottom), (cx - half, body_bottom)),
        fill=colour,
        outline=(25, 25, 30),
    )
    arm = max(2, int(height * 0.04))
    reach = half * (1.4 if pose != "side" else 1.2)
    draw.line((cx - half * 0.7, neck + head * 0.3, cx - reach, body_bottom), fill=colour, width=arm)
    if pose != "side":
        draw.line((cx + half * 0.7, neck + head * 0.3, cx + reach, body_bottom), fill=colour, width=arm)
    draw.ellipse((cx - head, neck - 2 * head, cx + head, neck), fill=skin, outline=(25, 25, 30))
    if pose == "side":
        draw.polygon(
            (
                (cx + head * 0.9, neck - head),
                (cx + head * 1.3, neck - head * 0.8),
                (cx + head * 0.9, neck - head * 0.6),
            ),
            fill=skin,
        )


def character_colour(name: str) -> RGB:
    """A costume colour from the name alone, so a character looks the same in every shot."""
    unit = _hash_unit(name)
    return _hsv(unit, 0.55, 0.55 + 0.3 * ((unit * 997) % 1.0))


def _background(image: Image.Image, shot: Shot, rng: random.Random) -> None:
    """Sky and hills outdoors, or a wall, window and floor when the location is indoors."""
    width, height = image.size
    draw = ImageDraw.Draw(image)
    top, horizon = sky_colours(shot.time_of_day, shot.location)
    hue = _hash_unit(shot.location or "")
    floor_y = height * 0.66
    if shot.location and INDOOR.search(shot.location):
        wall = _mix(_hsv(hue, 0.25, 0.7), top, 0.25)
        image.paste(vertical_gradient((width, height), wall, _mix(wall, (0, 0, 0), 0.3)))
        wx = width * (0.15 + 0.5 * rng.random())
        draw.rectangle(
            (wx, height * 0.14, wx + width * 0.22, height * 0.45), fill=horizon, outline=(60, 45, 35), width=4
        )
        draw.rectangle((0, floor_y, width, height), fill=_hsv(hue + 0.08, 0.35, 0.35))
        return
    image.paste(vertical_gradient((width, height), top, horizon))
    ground = _mix(_hsv(hue, 0.35, 0.45), top, 0.3)
    for layer in range(3):
        shade = _mix(ground, horizon, 0.45 - layer * 0.2)
        ridge = height * (0.42 + 0.08 * layer)
        points = [(0.0, float(height))]
        for step in range(9):
            points.append((width * step / 8, ridge + height * 0.09 * (rng.random() - 0.5)))
        points.append((float(width), float(height)))
        draw.polygon(points, fill=shade)
    draw.rectangle((0, floor_y, width, height), fill=ground)


@dataclass(frozen=True)
class Placed:
    """Where a character stands in a frame, in fractions of the frame's width and height."""

    name: str
    x: float
    base: float
    scale: float
    stride: float = 0.0  # how far the feet swing apart mid-step (see `figure`)


def placements(shot: Shot, seed: int) -> tuple[Placed, ...]:
    """The shown characters' spots: spread across the frame, the last frame's moved and nearer."""
    rng = random.Random(f"{seed}:{shot.shot_id}")
    last = shot.kind == "last_frame"
    shown = shot.characters[:MAX_FIGURES]
    placed = []
    for index, name in enumerate(shown):
        slot = (index + 0.5) / len(shown)
        drift = ((rng.random() - 0.5) * 0.18 + (0.1 if last else 0.0)) / len(shown)
        scale = (0.36 + 0.06 * rng.random()) * (1.1 if last else 1.0)
        placed.append(Placed(name, min(0.93, max(0.07, slot + drift)), 0.6 + 0.04 * rng.random(), scale))
    return tuple(placed)


def between(start: Sequence[Placed], end: Sequence[Placed], t: float) -> tuple[Placed, ...]:
    """The figures a fraction `t` of the way from `start` to `end` (paired in order), stepping:
    a whole number of strides per walk (one per STEP of the width), so both ends stand still."""
    placed = []
    for a, b in zip(start, end):
        steps = round(abs(b.x - a.x) / STEP)
        stride = abs(math.sin(math.pi * steps * t))
        placed.append(
            Placed(
                a.name, a.x + (b.x - a.x) * t, a.base + (b.base - a.base) * t, a.scale + (b.scale - a.scale) * t, stride
            )
        )
    return tuple(placed)


def storyboard_frame(shot: Shot, size: tuple[int, int], seed: int) -> Image.Image:
    """One storyboard frame of `size` for a first_frame or last_frame task."""
    return compose(stage(shot, size), shot, placements(shot, seed), last=shot.kind == "last_frame")


def walk(first: tuple[Shot, int], last: tuple[Shot, int], size: tuple[int, int], count: int) -> Iterator[Image.Image]:
    """`count` pictures of a shot whose figures walk from the first frame's spots to the last's.

    `first` and `last` are (shot, seed) as `read_frame_info` gives them. The set, caption and
    header stay still and the badge turns from FIRST to LAST halfway: no picture blends two.
    """
    (shot, first_seed), (end_shot, last_seed) = first, last
    still = stage(shot, size)
    start, stop = placements(shot, first_seed), placements(end_shot, last_seed)
    for index in range(count):
        t = index / (count - 1) if count > 1 else 0.0
        eased = t * t * (3 - 2 * t)  # start and stop gently
        yield compose(still, shot, between(start, stop, eased), last=t >= 0.5)


def frame_info(shot: Shot, seed: int) -> PngInfo:
    """PNG text naming the frame's shot and seed, so a clip can redraw it in motion."""
    info = PngInfo()
    info.add_text(
        INFO_KEY, json.dumps({"shot": dataclasses.asdict(shot), "seed": seed}, ensure_ascii=False, sort_keys=True)
    )
    return info


def read_frame_info(path: Path | None) -> tuple[Shot, int] | None:
    """(shot, seed) of a frame this module drew, or None for any other picture."""
    if path is None:
        return None
    try:
        with Image.open(path) as image:
            raw = getattr(image, "text", {}).get(INFO_KEY)
        if raw is None:
            return None
        data = json.loads(raw)
        fields = {**data["shot"], "characters": tuple(data["shot"]["characters"])}
        return Shot(**fields), int(data["seed"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def same_shot(first: Shot, last: Shot) -> bool:
    """Do two frames show the same shot (everything equal but which frame they are)?"""
    return dataclasses.replace(first, kind=last.kind) == last


def stage(shot: Shot, size: tuple[int, int]) -> Image.Image:
    """What stays still in a shot: the set (the same for every shot at its location) and the
    caption band."""
    image = Image.new("RGB", size)
    _background(image, shot, random.Random(f"set:{shot.location}"))  # one place, one set
    _caption_band(image, shot.caption, size[1] * 0.26)
    return image


def compose(still: Image.Image, shot: Shot, figures: Sequence[Placed], last: bool) -> Image.Image:
    """`still` with the figures on it, their names, the header and the FIRST or LAST badge."""
    image = still.copy()
    width, height = image.size
    draw = ImageDraw.Draw(image)
    name_size = max(10, height // 22)
    for one in figures:
        figure(
            draw, width * one.x, height * one.base, height * one.scale, character_colour(one.name), stride=one.stride
        )
    for one in figures:  # after every figure, so no name is hidden under a neighbour
        _label(draw, (width * one.x, height * one.base + 4), one.name, name_size)
    if len(shot.characters) > len(figures):
        _label(draw, (width - 8, height * 0.14), f"+{len(shot.characters) - len(figures)}", name_size, anchor="rt")
    small = max(10, height // 26)
    header = " · ".join(
        p for p in (shot.shot_id, shot.chapter and f"ch {shot.chapter}", shot.seq and f"#{shot.seq}") if p
    )
    _label(draw, (8, 8), header, small, anchor="lt")
    place = " · ".join(p for p in (shot.location, shot.time_of_day) if p)
    if place:
        _label(draw, (8, 16 + font(small).getbbox("Ag国")[3]), place, small, anchor="lt")
    _label(
        draw,
        (width - 8, 8),
        "LAST" if last else "FIRST",
        small,
        anchor="rt",
        box=(150, 30, 30) if last else (30, 110, 60),
    )
    return image


def _caption_band(image: Image.Image, caption: str, band: float) -> None:
    """Darken the bottom of the image and write the wrapped caption on it."""
    width, height = image.size
    top = int(height - band)
    region = image.crop((0, top, width, height))
    image.paste(Image.blend(region, Image.new("RGB", region.size), 0.6), (0, top))
    if not caption.strip():
        return
    face = font(max(10, height // 20), caption)
    line_height = font(max(10, height // 20)).getbbox("Ag国")[3] + 4
    lines = wrap(caption, face, width - 24)
    lines = _fit_lines(lines, face, width - 24, max(1, int((band - 8) // line_height)))
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        draw.text((12, top + 6 + row * line_height), line, font=face, fill=(245, 245, 240))


def character_sheet(
    name: str, prompt: str, size: tuple[int, int], poses: Sequence[str] = ("front", "side", "back")
) -> Image.Image:
    """A reference sheet: the name, the figure from front, side and back, the prompt below."""
    width, height = size
    hue = _hash_unit(name)
    image = vertical_gradient(size, _hsv(hue, 0.08, 0.97), _hsv(hue, 0.15, 0.82))
    draw = ImageDraw.Draw(image)
    _label(draw, (width / 2, 6), name, max(12, height // 11), box=None, fill=(30, 30, 40))
    small = max(10, height // 26)
    colour = character_colour(name)
    base = height * 0.72
    for index, pose in enumerate(poses):
        cx = width * (index + 0.5) / len(poses)
        figure(draw, cx, base, height * 0.5, colour, pose)
        _label(draw, (cx, base + 6), pose, small)
    _caption_band(image, prompt, height * 0.2)
    return image
