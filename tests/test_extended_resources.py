"""resources.extra: RDMA devices (EFA, InfiniBand) beside the GPUs, in the vLLM container's
requests and limits, in kvgen and in the chart alike."""

from __future__ import annotations

import helm
from conftest import compile_spec, problem_set, spec

MULTI_NODE_EFA = spec(
    model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
    instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    parallelism={"tensor": 16, "nodes": 2},
    resources={"extra": {"vpc.amazonaws.com/efa": 32, "rdma/ib": 1}},
)


def test_every_rank_requests_and_limits_the_rdma_devices_beside_its_gpus():
    ours = compile_spec(MULTI_NODE_EFA).objects
    assert helm.by_identity(helm.objects(MULTI_NODE_EFA)) == helm.by_identity(ours)
    ranks = [o for o in ours if o["kind"] == "StatefulSet"]
    assert len(ranks) == 2
    for sts in ranks:
        (vllm,) = sts["spec"]["template"]["spec"]["containers"]
        for part in ("requests", "limits"):
            r = vllm["resources"][part]
            assert r["vpc.amazonaws.com/efa"] == 32 and r["rdma/ib"] == 1 and r["nvidia.com/gpu"] == 8, r
        # the LMCache sidecar takes no devices
        for side in sts["spec"]["template"]["spec"].get("initContainers", []):
            assert "vpc.amazonaws.com/efa" not in side["resources"]["requests"]


def test_names_that_are_no_extended_resource_or_are_kvgens_gpus_are_refused_alike():
    values = spec(
        resources={
            "extra": {
                "nvidia.com/gpu": 2,
                "nvidia.com/mig-1g.10gb": 1,
                "efa": 1,
                "example.kubernetes.io/x": 1,
                "bad/na me": 1,
            }
        }
    )
    ours = problem_set(values)
    assert helm.problems(values) == ours
    assert {p for p, _m, _h in ours} == {f"resources.extra.{k}" for k in values["resources"]["extra"]}
    assert problem_set(spec(resources={"extra": {"rdma/ib": 0}}))  # a count of at least 1


def test_a_whole_float_count_is_a_count_in_both_as_json_schema_reads_it():
    values = spec(resources={"extra": {"rdma/ib": 2.0}})
    (vllm,) = [
        c
        for o in compile_spec(values).objects
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
    ]
    assert vllm["resources"]["limits"]["rdma/ib"] == 2
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compile_spec(values).objects)
