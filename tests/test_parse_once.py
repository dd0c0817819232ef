"""The spec's quantities are parsed once, at validation (issue 21, "Parse once"): every size is a
quantity.Size (its text and bytes) and every CPU quantity a quantity.Cpu (its text and exact
millicores), so planning and the template context read numbers and never call the parser again.
The text as written is what messages and output echo, and what a model dump writes back."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import compile_spec, container, kube_version_of, problem_set, spec

from kvgen.app.compiler import compile_text
from kvgen.context import run as layout
from kvgen.core import quantity
from kvgen.core.quantity import GiB
from kvgen.plan import build as planning
from kvgen.spec.models import ResourceList, Spec

# every size and CPU field of the spec, set (the claim template's storage is a Kubernetes object's)
EVERY_QUANTITY = spec(
    model={"id": "acme/every-size", "hfTokenSecret": {"name": "hf-token", "key": "HF_TOKEN"}, "weights": "15Gi"},
    instance={
        "type": "dgx-a100-80g",
        "gpuMemory": "80Gi",
        "memory": "2000Gi",
        "localDisk": "15Ti",
        "ephemeralStorage": 28312 * GiB,
    },
    parallelism={"tensor": 2},
    kvCacheOffloading={
        "cpu": "64Gi",
        "secondary": [
            {"fileSystem": {"emptyDir": {"size": "500Gi"}}},
            {
                "fileSystem": {
                    "pvc": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "100Gi"}}}}
                }
            },
        ],
        "remote": {"url": "redis://valkey.cache.svc.cluster.local:6379", "capacity": "20Gi"},
    },
    resources={
        "shm": "40Gi",
        "modelCache": "100Gi",
        "vllm": {
            "requests": {"cpu": "16", "memory": "300Gi", "ephemeral-storage": "200Gi"},
            "limits": {"cpu": 32, "memory": "400Gi", "ephemeral-storage": "300Gi"},
        },
        "lmcacheServer": {"limits": {"cpu": "1500m", "memory": "100Gi", "ephemeral-storage": "1000Gi"}},
    },
    catalog={
        "models": {
            "acme/every-size": {
                "architecture": "LlamaForCausalLM",
                "layers": 32,
                "kvHeads": 8,
                "headDim": 128,
                "weights": "16Gi",
            }
        },
        "instances": {
            "dgx-a100-80g": {
                "gpus": 8,
                "gpuMemory": "80Gi",
                "memory": "2Ti",
                "cpu": 256,
                "localDisk": "15Ti",
                "ephemeralStorage": "1800Gi",
            }
        },
    },
)


def _claim_storage(s: Spec) -> set[str]:
    """The storage requests of the disk tiers' claim templates: a Kubernetes object kvgen passes
    through as written, checked (kvgen.plan.apiserver) and read for the tier's capacity as text."""
    out = set()
    for tier in s.kv_cache_offloading.secondary:
        claim = tier.file_system.pvc.spec if tier.file_system.pvc else None
        if claim:
            out.add(str(claim["resources"]["requests"]["storage"]))
    return out


def _parses_after_validation(monkeypatch: pytest.MonkeyPatch, render: Any) -> tuple[list[str], set[str]]:
    """(every quantity text the parser saw while a spec was planned and laid out, the claim
    templates' storage of the specs planned); validation, dialects and rendering are not counted."""
    seen: list[str] = []
    claims: set[str] = set()
    planned_specs: list[Spec] = []
    active = [False]
    parse, to_bytes = quantity.parse, quantity.to_bytes
    plan_build, context_build = planning.build, layout.build

    def counting_parse(value: Any) -> Decimal:
        if active[0]:
            seen.append(str(value))
        return parse(value)

    def counting_to_bytes(value: Any) -> int:
        if active[0]:
            seen.append(str(value))
        active[0], was = False, active[0]  # its own call of parse is the same parse
        try:
            return to_bytes(value)
        finally:
            active[0] = was

    def during(build: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            active[0] = True
            try:
                return build(*args, **kwargs)
            finally:
                active[0] = False

        return wrapped

    def planned(s: Spec, *args: Any) -> Any:
        planned_specs.append(s)
        claims.update(_claim_storage(s))
        return during(plan_build)(s, *args)

    render()  # once first: the catalog files' rows are parsed once per process
    monkeypatch.setattr(quantity, "parse", counting_parse)
    monkeypatch.setattr(quantity, "to_bytes", counting_to_bytes)
    monkeypatch.setattr(planning, "build", planned)
    monkeypatch.setattr(layout, "build", during(context_build))
    render()
    assert planned_specs, "no spec was planned"
    return seen, claims


def test_planning_a_spec_with_every_quantity_parses_none_again(monkeypatch):
    seen, claims = _parses_after_validation(monkeypatch, lambda: compile_spec(EVERY_QUANTITY))
    # the claim template's storage only: checked by the API-server rules, read for the tier's capacity
    assert claims == {"100Gi"}
    assert seen == ["100Gi", "100Gi"]


def test_planning_an_example_parses_no_quantity_of_the_spec_again(monkeypatch, example: Path):
    def render() -> None:
        compile_text(example.read_text(), str(example), kube_version_of(example))

    seen, claims = _parses_after_validation(monkeypatch, render)
    assert set(seen) <= claims, f"{example.name}: planning parsed {sorted(set(seen) - claims)} again"


def test_sizes_and_cpu_are_numbers_with_their_text():
    s = Spec.model_validate(EVERY_QUANTITY)
    assert s.resources.shm == quantity.Size("40Gi", 40 * GiB)
    assert s.instance.ephemeral_storage == quantity.Size(str(28312 * GiB), 28312 * GiB)  # a number is its text
    assert s.resources.vllm.limits.cpu == quantity.Cpu("32", Decimal(32000))
    assert s.resources.lmcache_server.limits.cpu == quantity.Cpu("1500m", Decimal(1500))
    assert f"{s.kv_cache_offloading.cpu} of RAM" == "64Gi of RAM"  # messages echo the text


def test_a_model_dump_writes_the_text_back():
    s = Spec.model_validate(EVERY_QUANTITY)
    dumped = s.model_dump(by_alias=True, exclude_none=True, mode="json")
    assert dumped["instance"]["ephemeralStorage"] == str(28312 * GiB)
    assert dumped["resources"]["vllm"]["limits"]["cpu"] == "32"
    assert dumped["kvCacheOffloading"]["secondary"][0] == {"fileSystem": {"emptyDir": {"size": "500Gi"}}}
    assert s.resources.model_dump(by_alias=True)["shm"] == "40Gi"
    assert Spec.model_validate(dumped) == s  # and the text is parsed to the same values


def test_a_parsed_value_is_taken_as_it_is():
    """A model built from a built spec's values (model_copy, a dialect's spec) keeps them."""
    size = quantity.Size("64Gi", 64 * GiB)
    assert ResourceList.model_validate({"memory": size}).memory is size


def test_output_echoes_the_text_as_written():
    c = compile_spec(EVERY_QUANTITY)
    vllm = container(c, "vllm")["resources"]
    assert vllm["requests"]["cpu"] == "16" and vllm["limits"]["cpu"] == "32"
    assert container(c, "lmcache-mp-server")["resources"]["limits"]["cpu"] == "1500m"


def test_cpu_requests_and_limits_compare_exactly():
    """A fraction of a millicore still counts (Kubernetes compares quantities exactly)."""
    res = {"vllm": {"requests": {"cpu": "1.0002"}, "limits": {"cpu": "1.0001"}}}
    problems = problem_set(spec(resources=res))
    assert any(path == "resources.vllm.requests.cpu" for path, _, _ in problems), problems
