"""A new user's first try (issue 24): the README's quick-start model on a small GPU instance. Where it
cannot be served, every hint that says what to change says it exactly ("set PATH to VALUE"), both faces
say the same, and doing literally what the hints say renders."""

from __future__ import annotations

import copy
import re
from typing import Any

import helm
import pytest
from conftest import ROOT, compile_spec, problem_set
from ruamel.yaml import YAML

# the model of the README's first render (`kvgen render examples/kaito-gemma-4-12b.yaml`)
QUICK_START_MODEL = YAML(typ="safe", pure=True).load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text())[
    "model"
]["id"]
CHANGE = re.compile(r"\bset ([A-Za-z.]+) to ([^ ,]+)")


def first_try(instance_type: str) -> dict[str, Any]:
    """The smallest spec: a name, the quick-start model and the instance type."""
    return {"name": "first-try", "model": {"id": QUICK_START_MODEL}, "instance": {"type": instance_type}}


def changes(problems: set[tuple[str, str, str | None]]) -> dict[str, Any]:
    """What the hints say to set, as {spec path: value} (each value as YAML reads it)."""
    out = {}
    for _path, _message, hint in problems:
        found = CHANGE.search(hint or "")
        if found:
            out[found[1]] = YAML(typ="safe", pure=True).load(found[2])
    return out


def applied(values: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(values)
    for path, value in change.items():
        *parents, last = path.split(".")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return out


@pytest.mark.heavy
@pytest.mark.parametrize("instance_type", ["g5.2xlarge", "g4dn.xlarge", "g6.xlarge", "g2-standard-4"])
def test_following_the_hints_of_a_first_try_literally_renders(instance_type):
    values = first_try(instance_type)
    for _round in range(3):
        problems = problem_set(values)
        if not problems:
            break
        assert helm.problems(values) == problems  # the chart gives the same hints
        change = changes(problems)
        assert change, f"no hint says what to set: {problems}"
        values = applied(values, change)
    assert not problem_set(values), values
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compile_spec(values).objects)


def _paths(values: dict[str, Any]) -> set[str]:
    return {path for path, _message, _hint in problem_set(values)}


def test_the_host_memory_hint_names_the_largest_share_that_fits():
    """g5.2xlarge (32 GiB) with the quick-start model: the LMCache server at the default share does
    not fit beside vLLM; the hint's share fits and one hundredth more does not."""
    values = first_try("g5.2xlarge")
    change = changes(problem_set(values))
    share = change["kvCacheOffloading.cpuMemoryUtilization"]
    assert 0 < share < 0.5
    assert "kvCacheOffloading.cpuMemoryUtilization" in _paths(values)
    assert "kvCacheOffloading.cpuMemoryUtilization" not in _paths(applied(values, change))
    more = applied(values, {"kvCacheOffloading.cpuMemoryUtilization": round(share + 0.01, 2)})
    assert "kvCacheOffloading.cpuMemoryUtilization" in _paths(more)


def test_the_disk_hint_names_the_smallest_os_disk_that_holds_the_pod():
    """EKS's default 20 GiB OS disk cannot hold the quick-start model's cache: the hint's size can,
    one GiB less cannot."""
    values = first_try("g5.2xlarge")
    least = changes(problem_set(values))["instance.ephemeralStorage"]
    assert re.fullmatch(r"\d+Gi", least)
    assert "instance.ephemeralStorage" not in _paths(applied(values, {"instance.ephemeralStorage": least}))
    less = f"{int(least[:-2]) - 1}Gi"
    assert "instance.ephemeralStorage" in _paths(applied(values, {"instance.ephemeralStorage": less}))


def test_the_weights_hint_raises_tensor_where_the_node_has_the_gpus():
    """On g5.12xlarge (4 x 24 GB) the quick-start model does not fit one GPU: the hint names the next
    tensor size, at which it fits, not a smaller model; both faces alike."""
    values = first_try("g5.12xlarge")
    problems = problem_set(values)
    assert helm.problems(values) == problems
    assert changes(problems)["parallelism.tensor"] == 2 and "model.id" not in changes(problems)
    assert "of weights per GPU" not in str(problem_set(applied(values, {"parallelism.tensor": 2})))
    assert not problem_set(applied(values, changes(problems)))
