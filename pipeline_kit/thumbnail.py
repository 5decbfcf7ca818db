"""Small JPEG pictures of frames: a worker publishes one beside each image it makes, and a
screen shows it instead of fetching the full frame (a megabyte) for a card in a grid."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from PIL import Image, UnidentifiedImageError

SUFFIX = ".thumb.jpg"  # the side file's suffix beside its frame (frame.png -> frame.thumb.jpg)
BOX = (256, 144)  # a 16:9 frame fits exactly; other shapes keep theirs inside it
QUALITY = 80


def draw(frame: Path, target: Path, box: tuple[int, int] = BOX) -> bool:
    """Write `frame`'s thumbnail to `target` whole or not at all; False if it is no picture."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with Image.open(frame) as im:
            im.draft("RGB", box)  # JPEG sources decode at a smaller scale
            im.thumbnail(box)
            im.convert("RGB").save(tmp, "JPEG", quality=QUALITY)
        os.replace(tmp, target)  # a reader never sees half a thumbnail
        return True
    except (UnidentifiedImageError, OSError):
        return False
    finally:
        tmp.unlink(missing_ok=True)
