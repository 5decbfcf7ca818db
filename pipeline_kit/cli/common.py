"""Helpers every command module shares: opening the database and argument types."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from pipeline_kit.db import Database, connect
from pipeline_kit.db.migrate import require_schema
from pipeline_kit.security import require_owner


def open_db(args: argparse.Namespace, *, check_schema: bool = True, owner: bool = False) -> Database:
    """Connect to --db (or the environment / default) and insist on a current schema. Only
    `init` (check_schema=False) may create a SQLite file; every other verb needs it to exist.
    `owner`: the command changes what only the owner may, so a worker account is refused with
    one line."""
    db = connect(args.db, existing=check_schema)
    if check_schema:
        require_schema(db)
    if owner:
        require_owner(db, command_name(args))
    return db


def command_name(args: argparse.Namespace) -> str:
    """The command as typed, with its action: `cancel`, `lane pause`, `shot edit`."""
    actions = [v for k, v in vars(args).items() if k.endswith("_command") and isinstance(v, str)]
    return " ".join([args.command, *actions])


def int_in(low: int, high: int, what: str = "a whole number") -> Callable[[str], int]:
    """An argparse type: an integer from `low` to `high`, else one clear line."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {what} from {low} to {high}, got {value}")
        return value

    return parse


positive_int = int_in(1, 1_000_000)


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
        raise argparse.ArgumentTypeError('expected a JSON object like {"seed": 1}')
    return value


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str))
