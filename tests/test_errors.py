"""One problem type and one error base: every check reports ``kvgen.core.errors.Problem``, every
error kvgen raises on purpose is a ``KvgenError``, and problems are printed sorted by file, then
line, then path."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from conftest import BASE, dump, run_kvgen, spec

import kvgen
from kvgen.core.errors import KvgenError, Location, Problem, SpecError, sort_key
from kvgen.plan import build as planning
from kvgen.spec.models import Spec


def _modules():
    for info in pkgutil.walk_packages(kvgen.__path__, "kvgen."):
        if info.name.endswith("__main__"):
            continue
        yield importlib.import_module(info.name)


def test_every_exception_kvgen_defines_is_a_kvgen_error():
    defined = {
        (module.__name__, name): cls
        for module in _modules()
        for name, cls in vars(module).items()
        if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == module.__name__
    }
    assert len(defined) >= 10  # SpecError, InputErrors, TreeError, OutDirError, Interrupted, ...
    assert {key: cls for key, cls in defined.items() if not issubclass(cls, KvgenError)} == {}


def test_there_is_one_problem_type():
    """No module keeps a Problem of its own (a tuple alias, a contract dataclass) or a second
    error carrying problems (PlanError, FitError)."""
    for module in _modules():
        for name in ("Problem", "PlanError", "FitError"):
            value = getattr(module, name, None)
            assert value is None or value is Problem, f"{module.__name__}.{name} is {value!r}"


def _plan_problems(data: dict) -> list[Problem]:
    """What planning finds: a SpecError's problems, or those a plan whose pod does not fit carries."""
    try:
        plan = planning.build(Spec.model_validate(data))
    except SpecError as err:
        return err.problems
    assert plan.problems, "a spec that plans must not fit its node here"
    return plan.problems


@pytest.mark.parametrize(
    "data",
    [
        spec(model={"id": "acme/nope"}, instance={"type": "Standard_NC24ads_A100_v5"}),  # catalog
        spec(parallelism={"tensor": 4}, vllm={"extraArgs": ["--port=1"]}),  # structure
        spec(kvCacheOffloading={"backend": "native", "cpu": "500Gi"}),  # sizing: the pod does not fit
        spec(model={"id": "Qwen/Qwen3-32B", "maxModelLen": 36864}),  # context length
        spec(service={"port": 5555}),  # ports
        spec(kvCacheOffloading={"lmcache": {"gpuAccess": "dra"}}),  # gpu access, below 1.34
        spec(scheduling={"priorityClassName": "Bad_Name"}),  # what the API server refuses
    ],
    ids=["catalog", "structure", "sizing", "context", "ports", "gpu-access", "apiserver"],
)
def test_every_stage_of_the_plan_reports_problems(data):
    problems = _plan_problems(data)
    assert problems and all(type(p) is Problem and isinstance(p.path, tuple) and p.message for p in problems)


def test_problems_sort_by_file_then_line_then_path():
    a1 = Problem(("b",), "m", location=Location("a.yaml", 3, 1))
    a2 = Problem(("a",), "m", location=Location("a.yaml", 3, 1))
    a3 = Problem(("x", 10), "m", location=Location("a.yaml", 3, 1))
    a4 = Problem(("x", 9), "m", location=Location("a.yaml", 3, 1))
    b1 = Problem(("a",), "m", location=Location("b.yaml", 1, 1))
    early = Problem(("z",), "m", location=Location("a.yaml", 2, 5))
    assert sorted([b1, a1, a3, early, a2, a4], key=sort_key) == [early, a2, a1, a4, a3, b1]
    assert SpecError("a.yaml", [b1, a1, early]).problems == [early, a1, b1]


@pytest.mark.heavy
def test_cli_prints_problems_sorted_by_file_and_line(tmp_path):
    """kvgen finds the unknown model and instance (catalog) before the priority class name (what
    the API server refuses), and reads b.yaml before a.yaml; it prints them by file and line."""
    b = tmp_path / "b.yaml"
    b.write_text(
        "name: demo\nscheduling:\n  priorityClassName: Bad_Name\nmodel:\n  id: acme/nope\n"
        "instance:\n  type: Standard_NC24ads_A100_v5\n"
    )
    a = tmp_path / "a.yaml"
    a.write_text("replicas: two\n" + dump(BASE))
    result = run_kvgen("validate", str(b), str(a))
    assert result.returncode == 1, result.stderr
    located = [line.split(": ", 1)[0].strip() for line in result.stderr.splitlines() if line.startswith("  /")]
    assert located == [f"{a}:1:1", f"{b}:3:3", f"{b}:5:3", f"{b}:7:3"], result.stderr
