"""Issue 36: what explain's arithmetic used, it shows: the GPU tier's bytes ("GPU (after weights)") reproduced
from kvCache.gpuBudget's own fields, for every example whose GPU memory kvgen knows."""

from __future__ import annotations

import json
import math

import pytest
from conftest import EXAMPLES, kube_version_of

from kvgen.app import explain
from kvgen.app.compiler import compile_text


@pytest.mark.heavy
def test_the_gpu_tier_is_reproduced_from_the_budget_explain_shows():
    checked = 0
    for example in EXAMPLES:
        for c in compile_text(example.read_text(), str(example), kube_version_of(example)):
            kv = explain.kv_view(c.plan)
            g = kv["gpuBudget"]
            if g is None:
                assert not c.plan.instance.gpus or not c.plan.instance.gpu_memory_known, example.name
                continue
            usable = g["reportedBytes"] * math.floor(g["gpuMemoryUtilization"] * 1_000_000 + 0.5) // 1_000_000
            assert g["usableBytes"] == usable, example.name
            left = max(0, usable - sum(g["nonKvBytes"].values()))
            assert g["kvBytes"] == left * g["kvBudgetPercent"] // 100 == kv["gpuBytesPerGpu"], example.name
            assert g["gpuMemoryUtilization"] == c.plan.spec.vllm.gpu_memory_utilization
            checked += 1
    assert checked > 20


def test_the_text_view_names_the_utilization_it_planned_with(tmp_path):
    from typer.testing import CliRunner

    from kvgen.app.cli import app

    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nmodel:\n  id: Qwen/Qwen3-32B\ninstance:\n  type: Standard_NC48ads_A100_v4\n"
        "parallelism:\n  tensor: 2\nvllm:\n  gpuMemoryUtilization: 0.8\n"
    )
    result = CliRunner().invoke(app, ["explain", str(spec)])
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("GPU (after weights), one GPU:"))
    assert "x --gpu-memory-utilization 0.8 =" in line and "less weights" in line
    data = json.loads(CliRunner().invoke(app, ["explain", str(spec), "-o", "json"]).stdout)
    assert data["kvCache"]["gpuBudget"]["gpuMemoryUtilization"] == 0.8


def test_the_node_pool_assumption_is_shown_only_where_the_spec_does_not_say():
    """Issue 36: the default node pool's OS disk (EKS: 20 GiB) is said in explain, not first in a fit problem."""
    spec = "name: a\nmodel:\n  id: Qwen/Qwen2-7B-Instruct\nkvCacheOffloading:\n  enabled: false\ninstance:\n  type: g5.xlarge\n"
    (compiled,) = compile_text(spec, "a.yaml")
    assumed = explain.report(compiled.plan)["disk"]["assumption"]
    assert assumed.startswith("the kubelet's ephemeral storage on g5.xlarge is its default node pool's OS disk, 20Gi")
    assert "EKS managed node group default diskSize 20 GiB" in assumed
    (told,) = compile_text(spec.replace("g5.xlarge\n", "g5.xlarge\n  ephemeralStorage: 200Gi\n"), "a.yaml")
    assert explain.report(told.plan)["disk"]["assumption"] is None
