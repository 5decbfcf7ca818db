"""Routing kinds to backends, the provider profile, and `pipeline-kit providers`."""

from __future__ import annotations

from pathlib import Path

import pytest
from servers.ark_fake import FakeArk

from pipeline_kit import cli
from pipeline_kit.backends.profile import load_profile, resolve_backend
from pipeline_kit.backends.routing import Router, Routing
from pipeline_kit.errors import BadInput, GenerationError

ROUTED = "character_sheet=ark,first_frame=sketch,last_frame=sketch,video=ark"


def test_one_name_serves_every_kind_and_a_routing_names_one_per_kind() -> None:
    """`--backend NAME` is the old meaning; KIND=NAME pairs route each kind, default= the rest."""
    assert Routing.parse("sketch").spec_for("video") == "sketch"
    routing = Routing.parse(" character_sheet=ark , video=ark,default=sketch")
    assert [routing.spec_for(k) for k in ("character_sheet", "first_frame", "video")] == ["ark", "sketch", "ark"]
    assert Routing.parse(routing.text()) == routing
    assert Routing.parse("video=ark").spec_for("first_frame") is None


@pytest.mark.parametrize("text", ["", "poster=ark", "video=ark,video=sketch", "video=", "video=ark,sketch"])
def test_malformed_routings_are_bad_input(text: str) -> None:
    """Unknown kinds, duplicates and half pairs are refused in one line."""
    with pytest.raises(BadInput):
        Routing.parse(text)


@pytest.mark.parametrize("kind", ["direct_chapter", "direct_book"])
def test_director_tasks_cannot_be_routed(kind: str) -> None:
    """Director tasks run in every worker serving the llm lane, with the model named at split: a
    routing that names them would be silently ignored, so it is refused, saying why."""
    with pytest.raises(BadInput, match="runs director tasks itself"):
        Routing.parse(f"{kind}=ark,default=sketch")


def test_a_backend_routed_to_a_kind_it_cannot_make_is_refused_at_start() -> None:
    """comfyui makes images only: routing video to it fails at start, naming both."""
    router = Router(Routing.parse("first_frame=comfyui,video=comfyui"))
    with pytest.raises(BadInput, match="'comfyui' cannot make kind 'video'"):
        router.check()
    Router(Routing.parse("first_frame=comfyui,video=sketch")).check()


def test_a_kind_routed_nowhere_fails_that_task_permanently() -> None:
    """A task of a kind the routing leaves out is a permanent invalid_kind, not a crash."""
    router = Router(Routing.parse("video=sketch"))
    with pytest.raises(GenerationError) as info:
        router.backend_for("first_frame")
    assert (info.value.error_kind, info.value.retryable) == ("invalid_kind", False)


def write_profile(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def test_profile_routes_kinds_and_sets_provider_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """[backends] is the routing when --backend is not given; [providers.NAME] settings become
    PIPELINE_KIT_NAME_SETTING defaults, and an explicit variable still wins."""
    profile = write_profile(
        tmp_path / "p.toml",
        """
[backends]
character_sheet = "ark"
video = "ark"
default = "sketch"

[providers.ark]
url = "http://127.0.0.1:1/api/v3"
video_price = 0.1
key_env = "MY_ARK_KEY"
""",
    )
    env = {"PIPELINE_KIT_PROFILE": str(profile), "PIPELINE_KIT_ARK_VIDEO_PRICE": "0.2"}
    assert resolve_backend(None, env) == "character_sheet=ark,video=ark,default=sketch"
    assert env["PIPELINE_KIT_ARK_URL"] == "http://127.0.0.1:1/api/v3"
    assert env["PIPELINE_KIT_ARK_KEY_ENV"] == "MY_ARK_KEY"
    assert env["PIPELINE_KIT_ARK_VIDEO_PRICE"] == "0.2"
    assert resolve_backend("noop", env) == "noop"
    monkeypatch.chdir(tmp_path)  # no pipeline-kit.toml here
    assert resolve_backend(None, {}) == "sketch"


@pytest.mark.parametrize(
    "body",
    [
        '[providers.ark]\napi_key = "sk-123"\n',
        '[providers.ark]\nkey = "sk-123"\n',
        '[providers.openai]\nOPENAI_SECRET = "x"\n',
        '[backends]\nposter = "ark"\n',
        '[backend]\nvideo = "ark"\n',
        "[backends\n",
    ],
)
def test_profile_never_holds_a_key_and_is_checked(tmp_path: Path, body: str) -> None:
    """A setting that looks like a secret, an unknown table or kind, bad TOML: one-line BadInput."""
    with pytest.raises(BadInput):
        load_profile(write_profile(tmp_path / "bad.toml", body))


def test_providers_lists_each_kind_and_checks_with_a_free_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`providers --check`: one line per kind with backend, URL, model and whether the key is set;
    Ark answers a call that costs nothing (no create is billed); the key itself is never shown."""
    with FakeArk(api_key="sk-provider-secret") as ark:
        profile = write_profile(
            tmp_path / "p.toml",
            f"""
[backends]
character_sheet = "ark"
first_frame = "sketch"
last_frame = "sketch"
video = "ark"

[providers.ark]
url = "{ark.url}/api/v3"
video_model = "seedance-test"
key_env = "MY_ARK_KEY"
""",
        )
        for name in ("PIPELINE_KIT_ARK_URL", "PIPELINE_KIT_ARK_VIDEO_MODEL", "PIPELINE_KIT_ARK_KEY_ENV"):
            monkeypatch.setenv(name, "")  # recorded, so what the profile sets is undone after
            monkeypatch.delenv(name)
        monkeypatch.setenv("PIPELINE_KIT_PROFILE", str(profile))
        monkeypatch.setenv("MY_ARK_KEY", "sk-provider-secret")
        assert cli.main(["providers", "--check"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert ark.billing == []
    assert len(lines) == 6
    assert lines[0].startswith("character_sheet: ark") and "key MY_ARK_KEY set" in lines[0]
    assert lines[1].startswith("location_sheet: ark")  # not routed: drawn as the character sheets are
    assert lines[2] == "first_frame: sketch: local, no service"
    assert "model seedance-test" in lines[4] and lines[4].endswith("answers")
    assert lines[5] == "voice: espeak: local, no service"  # no backend named for voice: the offline voice
    assert "sk-provider-secret" not in "\n".join(lines)

    monkeypatch.delenv("MY_ARK_KEY")
    assert cli.main(["providers"]) == 0
    assert "cannot start" in capsys.readouterr().out
