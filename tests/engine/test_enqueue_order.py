"""The order a bulk enqueue inserts its tasks in (their ids, and so the FIFO claim order)."""

from __future__ import annotations

import random
from graphlib import TopologicalSorter

import pytest

from pipeline_kit.engine.enqueue import _in_dependency_order
from pipeline_kit.engine.models import TaskSpec
from pipeline_kit.errors import BadInput


def _batch(rnd: random.Random, size: int) -> list[TaskSpec]:
    """A batch shaped like a split's: each task waits on a few earlier or later ones (a sheet
    named after the frames that need it), now and then twice on one, or on a task stored before."""
    keys = [f"t{k}" for k in range(size)]
    rank = {key: rnd.random() for key in keys}  # a hidden order the dependencies follow: no cycle
    specs = []
    for key in keys:
        earlier = [other for other in keys if rank[other] < rank[key]]
        deps = rnd.sample(earlier, min(len(earlier), rnd.randint(0, 3)))
        deps += deps[:1] if rnd.random() < 0.1 else []
        deps += ["stored-before"] if rnd.random() < 0.1 else []
        specs.append(TaskSpec(task_id=key, kind="x", lane="default", depends_on=tuple(deps)))
    return specs


def test_tasks_go_in_graphlib_static_order() -> None:
    """Every task comes after the tasks of its batch it depends on, in exactly the order
    graphlib's `static_order` gives (waves of tasks whose dependencies are all placed, in the
    order first named), as it did when enqueue sorted with graphlib: claim order is unchanged."""
    rnd = random.Random(3)
    for _ in range(200):
        specs = _batch(rnd, rnd.randint(1, 40))
        keys = {s.task_id for s in specs}
        graph = {s.task_id: [d for d in s.depends_on if d in keys] for s in specs}
        order = [s.task_id for s in _in_dependency_order(specs)]
        assert order == list(TopologicalSorter(graph).static_order())
        placed = {key: k for k, key in enumerate(order)}
        assert all(placed[d] < placed[s.task_id] for s in specs for d in s.depends_on if d in keys)


def test_a_dependency_cycle_is_refused_and_named() -> None:
    """Tasks that wait on each other are refused with the cycle spelled out, the rest of the batch
    notwithstanding."""
    specs = [
        TaskSpec(task_id="free", kind="x", lane="default"),
        TaskSpec(task_id="a", kind="x", lane="default", depends_on=("free", "c")),
        TaskSpec(task_id="b", kind="x", lane="default", depends_on=("a",)),
        TaskSpec(task_id="c", kind="x", lane="default", depends_on=("b",)),
    ]
    with pytest.raises(BadInput, match=r"dependency cycle among tasks: (\w -> ){3}\w$"):
        _in_dependency_order(specs)
