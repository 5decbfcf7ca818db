"""The user's own ComfyUI workflows: one API-format file per kind, with `{{name}}` placeholders.

A folder (PIPELINE_KIT_COMFYUI_WORKFLOWS) holds `character_sheet.json`, `first_frame.json`,
`last_frame.json` and `video.json`, each as ComfyUI's "Save (API)" writes it: node id ->
`{"class_type", "inputs"}`. A string input value may name a placeholder: `{{prompt}}`,
`{{negative_prompt}}`, `{{seed}}`, `{{width}}`, `{{height}}`, `{{duration_s}}`, `{{fps}}`,
`{{frames}}`, `{{first_frame}}`, `{{last_frame}}`, `{{reference_1}}`, `{{reference_2}}`, ...
A value that is exactly one placeholder becomes the value itself (a number stays a number); a
placeholder inside longer text is replaced by its text. Image placeholders name input images,
which the backend uploads first and replaces by their stored names.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline_kit import kinds
from pipeline_kit.backends.params import permanent
from pipeline_kit.errors import BadInput

WORKFLOW_KINDS = tuple(k.name for k in kinds.KINDS if "comfyui" in k.backends)  # a file each, KIND.json
VALUE_NAMES = frozenset({"prompt", "negative_prompt", "seed", "width", "height", "duration_s", "fps", "frames"})
FRAME_NAMES = frozenset(kinds.names(kinds.Role.FRAME))  # a frame's inputs are keyed by their kind
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+[0-9]*)\s*\}\}")
_REFERENCE = re.compile(r"^reference_([1-9][0-9]?)$")

Workflow = dict[str, Any]


def is_image_name(name: str) -> bool:
    """Whether a placeholder stands for an input image (a frame or a reference)."""
    return name in FRAME_NAMES or _REFERENCE.match(name) is not None


def reference_index(name: str) -> int | None:
    """1 for `reference_1`, ...; None for any other name."""
    found = _REFERENCE.match(name)
    return int(found.group(1)) if found else None


def _strings(value: Any) -> list[str]:
    """Every string inside an input value (lists hold links like ["4", 0] and literals)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def placeholders(workflow: Workflow) -> set[str]:
    """The placeholder names a workflow uses."""
    return {
        name
        for node in workflow.values()
        for value in node["inputs"].values()
        for text in _strings(value)
        for name in _PLACEHOLDER.findall(text)
    }


def check_workflow(data: Any, where: str) -> Workflow:
    """`data` if it is an API-format workflow whose placeholders are all known; else BadInput."""
    if isinstance(data, dict) and "nodes" in data and "links" in data:
        raise BadInput(f"{where} is a UI workflow; export it with ComfyUI's 'Save (API)'")
    if (
        not data
        or not isinstance(data, dict)
        or not all(
            isinstance(node, dict) and isinstance(node.get("class_type"), str) and isinstance(node.get("inputs"), dict)
            for node in data.values()
        )
    ):
        raise BadInput(f"{where} is not an API-format workflow (node id -> class_type, inputs)")
    unknown = sorted(n for n in placeholders(data) if n not in VALUE_NAMES and not is_image_name(n))
    if unknown:
        raise BadInput(
            f"{where} uses unknown placeholder(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(VALUE_NAMES | FRAME_NAMES))}, reference_1, ..."
        )
    return data


def load_workflow(path: Path) -> Workflow:
    """One workflow file, read and checked."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"workflow {path}: {exc}") from None
    return check_workflow(data, f"workflow {path}")


def load_workflows(folder: Path) -> dict[str, Workflow]:
    """The workflows a folder holds, by kind (a kind without a file is absent)."""
    if not folder.is_dir():
        raise BadInput(f"PIPELINE_KIT_COMFYUI_WORKFLOWS names {folder}, which is not a folder")
    found = {
        kind: load_workflow(folder / f"{kind}.json") for kind in WORKFLOW_KINDS if (folder / f"{kind}.json").is_file()
    }
    if not found:
        raise BadInput(f"{folder} holds none of {', '.join(k + '.json' for k in WORKFLOW_KINDS)}")
    return found


def _fill(value: Any, values: Mapping[str, Any], where: str) -> Any:
    if isinstance(value, list):
        return [_fill(item, values, where) for item in value]
    if not isinstance(value, str):
        return value

    def known(name: str) -> Any:
        if name not in values:
            raise permanent(
                "missing_input", f"missing_input: workflow {where} needs {{{{{name}}}}}, which this task does not have"
            )
        return values[name]

    whole = _PLACEHOLDER.fullmatch(value.strip())
    if whole:
        return known(whole.group(1))
    return _PLACEHOLDER.sub(lambda m: str(known(m.group(1))), value)


def substitute(workflow: Workflow, values: Mapping[str, Any], where: str) -> Workflow:
    """A copy of `workflow` with every placeholder replaced from `values`; one the task cannot
    fill (a second reference for a shot with one character) is a permanent `missing_input`."""
    filled = copy.deepcopy(workflow)
    for node in filled.values():
        node["inputs"] = {key: _fill(value, values, where) for key, value in node["inputs"].items()}
    return filled
