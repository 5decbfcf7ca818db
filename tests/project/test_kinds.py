"""A task kind is one entry of `pipeline_kit/kinds.py`: every module that needs a kind's facts
reads them there. A kind added to the registry alone is routable, has its suffix, is made by the
backends it names, is offered by `work --help` and the worker notebook and is named on the
screens; a module that names a kind's string either reads the registry or says here why not. The
files a new kind touches are counted, and docs/architecture.md states that count."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pipeline_kit import kinds
from pipeline_kit.backends import REGISTRY
from pipeline_kit.engine.lanes import DEFAULT_LANES

from .test_docs import touches

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pipeline_kit"

# Modules that name a kind's string without reading the registry, and why: the string is
# something else there (a lane, a backend, a column, a protocol's field), or the module is the
# code that plans or makes that very kind, whose facts it does not repeat.
EXPLAINED = {
    "analysis/films.py": "the report's words for a film's sound (`music`: the bed it holds)",
    "backends/direction.py": "applies the director's answer to each kind it stages (its answer's fields)",
    "backends/noop.py": "the noop backend's own name",
    "bench/workload.py": "the benchmark's tasks are noop records",
    "chaos/runner.py": "the chaos run's tasks are noop records",
    "cli/text_cmds.py": "`cast voice`: a verb of the cast command",
    "db/schema.py": "the characters' `voice` column",
    "engine/lanes.py": "the default lanes (a test below checks they hold every kind's lane)",
    "engine/status.py": "the director's fallback lines, per director kind",
    "film/timelines.py": "its audio tracks' names (`music`: the bed's track)",
    "film/drawing.py": "the sketch draws a shot's last frame unlike its first",
    "text/castdb.py": "a character's `voice`",
    "text/direct.py": "plans the director's kinds and their answers' fields",
    "text/film_tasks.py": "plans the films from the shots' clips and voices",
    "text/placesdb.py": "plans a place's sheet",
    "text/prompts.py": "the prompt templates of the sheets and frames",
    "text/store.py": "plans the sheets and a shot's tasks",
    "text/voices.py": "plans a shot's voice task",
    "ui/storyboard_view.py": "a card plays its shot's clip",
    "ui/widgets.py": "the `video` of a MIME type",
}


def _reads_registry(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (
            node.module == "pipeline_kit.kinds"
            or (node.module == "pipeline_kit" and any(a.name == "kinds" for a in node.names))
        ):
            return True
        if isinstance(node, ast.Import) and any(a.name == "pipeline_kit.kinds" for a in node.names):
            return True
    return False


def kind_strings(tree: ast.AST) -> set[str]:
    """The kinds' names a module spells as strings (docstrings left out)."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in kinds.BY_NAME and id(node) not in docs
    }


def test_every_module_naming_a_kind_reads_the_registry_or_says_why() -> None:
    """No module keeps its own copy of a kind's facts: one that spells a kind's name imports the
    registry, or is listed above with the reason its string is not a copy (and the list holds no
    module that no longer names one)."""
    naming: dict[str, set[str]] = {}
    unexplained = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = kind_strings(tree)
        if found and name != "kinds.py":
            naming[name] = found
            if not _reads_registry(tree) and name not in EXPLAINED:
                unexplained[name] = sorted(found)
    assert unexplained == {}
    assert sorted(set(EXPLAINED) - set(naming)) == []


def test_the_registry_names_what_exists() -> None:
    """Every kind's lane is seeded by init, every backend a kind names is registered, a kind
    follows or falls back to kinds and backends that exist, and names are unique."""
    assert len(kinds.BY_NAME) == len(kinds.KINDS)
    for kind in kinds.KINDS:
        assert kind.lane in DEFAULT_LANES, kind.name
        assert set(kind.backends) | ({kind.local} if kind.local else set()) <= set(REGISTRY), kind.name
        assert bool(kind.backends) != bool(kind.local), f"{kind.name}: routed backends or a local maker, not both"
        assert kind.follows is None or kind.follows in kinds.BY_NAME, kind.name
        assert kind.fallback is None or kind.fallback in kind.backends, kind.name
        assert kind.suffix.startswith(".") and kind.words


def _changed(copy: Path) -> list[str]:
    """The files of the scratch `copy` of the package that differ from the package's own, as
    `pipeline_kit/...` paths (compiled files left out)."""
    return sorted(
        f"pipeline_kit/{path.relative_to(copy)}"
        for path in copy.rglob("*")
        if path.is_file()
        and path.suffix != ".pyc"
        and (
            not (PACKAGE / path.relative_to(copy)).is_file()
            or path.read_bytes() != (PACKAGE / path.relative_to(copy)).read_bytes()
        )
    )


def test_a_new_kind_costs_one_file(tmp_path: Path) -> None:
    """A kind added to kinds.py alone, in a scratch copy of the package, reaches every reader:
    the routing takes it, the backends it names make it with its suffix, `work --help`, the
    worker notebook and `providers` offer it, a shot has a task of it, and the screens name it
    and say what it waits for. The files that made it so are the ones docs/architecture.md says
    a new kind touches, as many as it says."""
    copy = tmp_path / "pipeline_kit"
    shutil.copytree(PACKAGE, copy)  # compiled files kept: only kinds.py is compiled again
    registry = copy / "kinds.py"
    source = registry.read_text(encoding="utf-8")
    end = ")  # fmt: skip\n"
    assert source.count(end) == 1
    entry = (
        '    Kind(name="score", media=Media.AUDIO, role=Role.SPEECH, lane="voice", words="score",\n'
        '         waits_for="its clip", backends=("sketch", "espeak")),\n'
    )
    registry.write_text(source.replace(end, entry + end), encoding="utf-8")
    code = """
import argparse, json, re
from pipeline_kit.cli import build_parser
from pipeline_kit.backends import get_backend
from pipeline_kit.backends.params import suffix_for
from pipeline_kit.backends.providers import GENERATION_KINDS
from pipeline_kit.backends.routing import Router, Routing
from pipeline_kit.text.graph import shot_task_ids
from pipeline_kit.ui.words import describe_task, kind_words, state_in_words
from pipeline_kit.worker.notebook import backend_help
router = Router(Routing.parse("score=espeak,default=sketch"))
router.check({"score": "voice"})
routed = router.backend_for("score")
commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
work = next(a.help for a in commands.choices["work"]._actions if "--backend" in a.option_strings)
print(json.dumps({
    "suffixes": [suffix_for("score"), get_backend("sketch").suffix("score"), routed.suffix("score")],
    "provided": "score" in GENERATION_KINDS,
    "shot": shot_task_ids("bk/1/1").get("score"),
    "words": [kind_words("score"), state_in_words("pending", "score", waiting=True), describe_task("bk/1/1/score")],
    "notebook": "score" in backend_help(),
    "work": "score" in re.findall(r"[a-z_]+", work[work.index("routing per kind"):]),
}))
"""
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "suffixes": [".wav", ".wav", ".wav"],
        "provided": True,
        "shot": "bk/1/1/score",
        "words": ["score", "waiting for its clip", "the score of shot bk/1/1"],
        "notebook": True,
        "work": True,
    }
    files, count = touches()["a new task kind"]
    assert _changed(copy) == sorted(files) and len(files) == count == 1
