"""The provider profile: `pipeline-kit.toml` in the working folder, or the file that
$PIPELINE_KIT_PROFILE names. It routes kinds to backends and holds each provider's settings, never a key:

    [backends]
    character_sheet = "ark"
    first_frame = "comfyui"
    last_frame = "comfyui"
    video = "ark"

    [providers.ark]
    url = "https://ark.cn-beijing.volces.com/api/v3"
    video_model = "doubao-seedance-1-0-lite-i2v-250428"
    video_price = 0.1          # per second of video
    rate = 1                   # calls a second per uid
    key_env = "ARK_API_KEY"    # the NAME of the variable that holds the key

A provider setting becomes the default of PIPELINE_KIT_<PROVIDER>_<SETTING> (a variable already
set wins), so every backend keeps reading its settings from the environment. A setting named like
a secret (key, api_key, token, secret, password) is refused: the file may be shared, keys may not.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline_kit.backends.routing import Routing
from pipeline_kit.errors import BadInput

ENV_VAR = "PIPELINE_KIT_PROFILE"
FILE_NAME = "pipeline-kit.toml"
_SECRET = re.compile(r"^(api_?)?(key|token|secret|password)$|_(key|token|secret|password)$", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,40}$")


@dataclass(frozen=True)
class Profile:
    """What the profile says: a routing (None without [backends]) and provider settings."""

    path: Path
    routing: Routing | None = None
    providers: dict[str, dict[str, str]] = field(default_factory=dict)


def profile_path(env: MutableMapping[str, str] = os.environ) -> Path | None:
    """$PIPELINE_KIT_PROFILE (which must exist), else ./pipeline-kit.toml if present."""
    named = env.get(ENV_VAR)
    if named:
        if not Path(named).is_file():
            raise BadInput(f"${ENV_VAR} names {named}, which is not a file")
        return Path(named)
    local = Path(FILE_NAME)
    return local if local.is_file() else None


def load_profile(path: Path) -> Profile:
    """Read and check a profile file; anything malformed is BadInput in one line."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"profile {path}: {exc}") from None
    unknown = set(data) - {"backends", "providers"}
    if unknown:
        raise BadInput(
            f"profile {path}: unknown table(s) {', '.join(sorted(unknown))}; use [backends] and [providers.NAME]"
        )
    routing = None
    if "backends" in data:
        backends = _table(data["backends"], path, "[backends]")
        if not all(isinstance(v, str) for v in backends.values()):
            raise BadInput(f"profile {path}: [backends] values are backend names in quotes")
        routing = Routing.parse(",".join(f"{k}={v}" for k, v in backends.items()))
    providers = {
        name: _settings(name, table, path)
        for name, table in _table(data.get("providers", {}), path, "[providers]").items()
    }
    return Profile(path=path, routing=routing, providers=providers)


def _table(value: Any, path: Path, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadInput(f"profile {path}: {what} must be a table")
    return value


def _settings(provider: str, table: Any, path: Path) -> dict[str, str]:
    if not _NAME.match(provider):
        raise BadInput(f"profile {path}: provider name {provider!r} must be letters, digits, '_'")
    settings: dict[str, str] = {}
    for key, value in _table(table, path, f"[providers.{provider}]").items():
        if _SECRET.search(key):
            raise BadInput(
                f"profile {path}: [providers.{provider}] {key} looks like a secret; "
                "put the key in an environment variable and name it with key_env"
            )
        if not _NAME.match(key) or not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise BadInput(f"profile {path}: [providers.{provider}] {key} must be a name with a text or number value")
        settings[key] = str(value)
    return settings


def apply(profile: Profile, env: MutableMapping[str, str] = os.environ) -> None:
    """Provider settings become defaults of PIPELINE_KIT_<PROVIDER>_<SETTING>."""
    for provider, settings in profile.providers.items():
        for key, value in settings.items():
            env.setdefault(f"PIPELINE_KIT_{provider.upper()}_{key.upper()}", value)


def resolve_backend(given: str | None, env: MutableMapping[str, str] = os.environ) -> str:
    """The routing to run: `given` (--backend) if any, else the profile's [backends], else
    `sketch`; the profile's provider settings are applied either way."""
    path = profile_path(env)
    profile = load_profile(path) if path is not None else None
    if profile is not None:
        apply(profile, env)
    if given:
        return given
    if profile is not None and profile.routing is not None:
        return profile.routing.text()
    return "sketch"
