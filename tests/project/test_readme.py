"""The README works as written. Its code blocks are read from README.md itself, so the test
breaks when the README changes and its commands do not work:

- every ```sh block runs in bash (`set -euo pipefail`) in a fresh folder of its own, with no
  database but the one its commands make (the default SQLite file there) and exit 0 expected;
- every ```python block runs the same way under python;
- every ```text block is a synopsis: each `pipeline-kit ...` line names a real command and only
  options that command (or one under it) takes;
- any other code block (indented or unlabelled) fails: say whether it is to run.

What a reader brings or does elsewhere is stated below, with the reason, and nowhere else.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline_kit.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# Commands not run, each with why (the rest of its line or block still runs).
SKIPPED = {
    "pip install": "installs the package from the network; the test runs this checkout, installed already",
    "python -m pytest": "the test suite itself, which this test is part of",
}
# Commands that serve until stopped: the block passes when the server says it is up (this text
# on its output) and has not exited; then it is stopped.
SERVERS = {"jupyter lab": "is running at", "pipeline-kit notebooks": "is running at"}
# What a reader has beside the README's commands: their book (the package's sample stands in)
# and the checkout's notebooks folder, which the commands name.
READER_FILES = {"mybook.txt": ROOT / "pipeline_kit" / "samples" / "sample_book.txt", "notebooks": ROOT / "notebooks"}
# Blocks run on a PC that joins a database its owner made ("Once, as the owner: pipeline-kit
# init"): for these (found by a command they hold) the fresh folder's database is made first.
JOINS_A_DATABASE = ("python -m papermill",)
BLOCK_TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """One code block of the README: its language, its text, and where it is."""

    lang: str
    text: str
    section: str
    line: int

    @property
    def name(self) -> str:
        return f"{self.lang}:{self.section}:line {self.line}"


def blocks() -> list[Block]:
    """The fenced code blocks of README.md, dedented, with the heading they sit under."""
    found, section, fence = [], "top", None
    lines = README.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if fence is None:
            if line.startswith("#"):
                section = line.lstrip("#").strip()
            opened = re.match(r"^(\s*)```(\w*)\s*$", line)
            if opened:
                fence = (opened.group(1), opened.group(2), number, [])
            continue
        indent, lang, start, body = fence
        if line.strip() == "```":
            found.append(Block(lang, "\n".join(b[len(indent) :] for b in body), section, start))
            fence = None
        else:
            body.append(line)
    return found


def test_every_code_block_says_what_it_is() -> None:
    """Blocks are labelled sh, python or text, and no command sits in an unlabelled indented block."""
    assert [b.name for b in blocks() if b.lang not in ("sh", "python", "text")] == []
    fenced, bare = False, []
    for number, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"^ {4,}(pipeline-kit|python|pip|export|jupyter|mkdir)\b", line):
            bare.append(f"line {number}: {line.strip()}")
    assert bare == []
    assert {b.lang for b in blocks()} == {"sh", "python", "text"}


def _runnable(text: str) -> str:
    """The block with each skipped command replaced by `:` (so `a && b` still runs b)."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("&&")]
        out.append(" && ".join(":" if any(p.startswith(s) for s in SKIPPED) else p for p in parts))
    return "\n".join(out)


def _environment(tmp: Path) -> dict[str, str]:
    """This machine's environment without any pipeline_kit setting a developer may have set.
    Tests and CI run as root, which Jupyter refuses unless told (a reader is not root)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIPELINE_KIT_")}
    env.update(MPLBACKEND="Agg", BROWSER="true", JUPYTER_RUNTIME_DIR=str(tmp / ".jupyter-runtime"))
    if os.geteuid() == 0:
        config = tmp / ".jupyter-config"
        config.mkdir()
        (config / "jupyter_server_config.py").write_text("c.ServerApp.allow_root = True\n")
        env["JUPYTER_CONFIG_DIR"] = str(config)
    return env


def _fresh_folder(tmp: Path) -> Path:
    folder = tmp / "reader"
    folder.mkdir()
    for name, source in READER_FILES.items():
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        else:
            shutil.copy(source, folder / name)
    return folder


RUN = [b for b in blocks() if b.lang in ("sh", "python")]


@pytest.mark.db
@pytest.mark.parametrize("block", RUN, ids=[b.name for b in RUN])
def test_readme_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    """The block, run in a fresh folder, exits 0 (a server block: comes up and keeps serving)."""
    folder, env = _fresh_folder(tmp_path), _environment(tmp_path)
    if any(marker in block.text for marker in JOINS_A_DATABASE):
        subprocess.run([sys.executable, "-m", "pipeline_kit", "init"], cwd=folder, env=env, check=True)
    if block.lang == "python":
        script = folder / "readme_block.py"
        script.write_text(block.text, encoding="utf-8")
        argv = [sys.executable, str(script)]
    else:
        script = folder / "readme_block.sh"
        script.write_text("set -euo pipefail\n" + _runnable(block.text) + "\n", encoding="utf-8")
        argv = ["bash", str(script)]
    serves = [marker for command, marker in SERVERS.items() if command in block.text]
    if serves:
        _serves(argv, folder, env, serves[0])
        return
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    assert done.returncode == 0, f"{block.name} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


def _serves(argv: list[str], folder: Path, env: dict[str, str], marker: str) -> None:
    """Run a block whose last command serves: it must print `marker` and still be running."""
    proc = subprocess.Popen(
        argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    seen: list[str] = []
    deadline = time.monotonic() + 120
    try:
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            seen.append(line)
            if marker in line:
                break
        assert proc.poll() is None and marker in "".join(seen), "".join(seen)[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of `parser` and of the commands under it."""
    found = {o for a in parser._actions for o in a.option_strings}
    for sub in _commands(parser).values():
        found |= _options(sub)
    return found


def _synopsis_problems(line: str) -> list[str]:
    """What is wrong with one synopsis line; ` | ` separates alternatives, each after the first
    a command beside the last one named (`lane list | add NAME [--paid]`)."""
    first, *others = line.split("#", 1)[0].replace("[--db URL]", "").split(" | ")
    words = first.split()[1:]
    parent, parser, path = build_parser(), build_parser(), []
    while words and words[0] in _commands(parser):
        parent, parser = parser, _commands(parser)[words[0]]
        path.append(words.pop(0))
    if not path:
        return [f"no such command: {line}"]
    problems = _unknown_flags(" ".join(path), parser, first)
    for other in others:
        name = other.split()[0] if other.split() else ""
        sub = _commands(parent).get(name)
        if sub is None:
            problems.append(f"{' '.join(path[:-1])} has no command {name!r}")
        else:
            problems += _unknown_flags(" ".join([*path[:-1], name]), sub, other)
    return problems


def _unknown_flags(name: str, parser: argparse.ArgumentParser, text: str) -> list[str]:
    known = _options(parser)
    return [f"{name} has no {flag}" for flag in re.findall(r"--[a-z][\w-]*", text) if flag not in known]


def test_synopses_name_real_commands_and_options() -> None:
    """Each `pipeline-kit ...` line of a text block names a command the parser has, and every
    --option on it is one that command (or one under it) takes."""
    problems = []
    for block in (b for b in blocks() if b.lang == "text"):
        for line in block.text.replace("\\\n", " ").splitlines():
            if line.strip().startswith("pipeline-kit "):
                problems += [f"{block.name}: {p}" for p in _synopsis_problems(line.strip())]
    assert problems == []
