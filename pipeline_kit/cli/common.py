"""Helpers every command module shares: opening the database and argument types."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pipeline_kit.db import Database, connect
from pipeline_kit.db.migrate import require_schema


def open_db(args: argparse.Namespace, *, check_schema: bool = True) -> Database:
    """Connect to --db (or the environment / default) and insist on a current schema."""
    db = connect(args.db)
    if check_schema:
        require_schema(db)
    return db


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1 with a sane ceiling."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected a number from 1 to 1000000, got {value}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a number of seconds > 0 and at most a day."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"expected a number above 0 and at most 86400, got {value}")
    return value


def json_object(text: str) -> dict[str, Any]:
    """argparse type: a JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object like {\"seed\": 1}")
    return value


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str))
