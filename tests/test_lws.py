"""multiNode.engine leaderworkerset: a multi-node server as one LeaderWorkerSet
(leaderworkerset.x-k8s.io/v1) beside today's StatefulSet pair, with the same pods, validated against
the LWS CRD's schema (charts/kvgen/files/crds, lws v0.10.0), rendered alike by the chart."""

from __future__ import annotations

import copy

import contract_check
import helm
import pytest
from conftest import ROOT, compile_spec, problem_set, spec

from kvgen.data import kube

MULTI = dict(
    model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
    instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    parallelism={"tensor": 16, "nodes": 2},
)


def lws_spec(**overrides):
    return spec(**{**MULTI, "multiNode": {"engine": "leaderworkerset"}, **overrides})


def kinds(c):
    return [o["kind"] for o in c.objects]


def the(c, kind):
    (obj,) = [o for o in c.objects if o["kind"] == kind]
    return obj


def test_one_leaderworkerset_replaces_the_statefulset_pair_and_the_headless_service():
    c = compile_spec(lws_spec(replicas=3))
    assert "StatefulSet" not in kinds(c)
    assert [o["metadata"]["name"] for o in c.objects if o["kind"] == "Service"] == [
        "demo"
    ]  # LWS makes the headless one
    lws = the(c, "LeaderWorkerSet")
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert lws["spec"]["replicas"] == 3
    t = lws["spec"]["leaderWorkerTemplate"]
    assert t["size"] == 2 and t["restartPolicy"] == "RecreateGroupOnPodRestart"
    # the API Service selects the leaders, which serve the API
    assert the(c, "Service")["spec"]["selector"]["kvgen.dev/node-role"] == "leader"
    assert t["leaderTemplate"]["metadata"]["labels"]["kvgen.dev/node-role"] == "leader"
    assert t["workerTemplate"]["metadata"]["labels"]["kvgen.dev/node-role"] == "worker"


def _normalized(pod_spec):
    """A pod spec with what differs by engine on purpose taken out: how ranks find each other and
    every node's LMCache server (lmcache.mp.server_urls: tests/test_multinode.py)."""
    pod = copy.deepcopy(pod_spec)
    for c in [*pod.get("initContainers", []), *pod["containers"]]:
        c["args"] = [
            a
            for a in c.get("args", [])
            if not a.startswith(("--node-rank=", "--master-addr=", "--kv-transfer-config="))
        ]
        c["env"] = [e for e in c.get("env", []) if e["name"] not in ("NODE_RANK", "KVGEN_LWS_GROUP_INDEX")]
    return pod


@pytest.mark.parametrize("access", ["visible-devices", "in-container"])
def test_the_leader_and_worker_pods_are_the_statefulset_pairs(access):
    offloading = {"lmcache": {"gpuAccess": access}}
    sts = compile_spec(spec(**MULTI, kvCacheOffloading=offloading))
    lws = compile_spec(lws_spec(kvCacheOffloading=offloading))
    leader, worker = [o for o in sts.objects if o["kind"] == "StatefulSet"]
    t = the(lws, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    assert _normalized(t["leaderTemplate"]["spec"]) == _normalized(leader["spec"]["template"]["spec"])
    assert _normalized(t["workerTemplate"]["spec"]) == _normalized(worker["spec"]["template"]["spec"])
    assert t["leaderTemplate"]["metadata"] == leader["spec"]["template"]["metadata"]


def test_ranks_come_from_what_the_lws_controller_injects():
    c = compile_spec(lws_spec())
    lines = {(cl.workload, cl.kind): cl.argv for cl in contract_check.command_lines(c.objects, "x")}
    leader, worker = lines[("demo/leader", "vllm")], lines[("demo/worker", "vllm")]
    assert "--node-rank=0" in leader and "--headless" not in leader
    assert "--node-rank=1" in worker and "--headless" in worker
    assert "--master-addr=demo-0.demo.default" in leader and "--master-addr=demo-0.demo.default" in worker
    vllm = the(c, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    assert "--node-rank=$(LWS_WORKER_INDEX)" in vllm["args"] and "--master-addr=$(LWS_LEADER_ADDRESS)" in vllm["args"]
    assert "NODE_RANK" not in [e["name"] for e in vllm.get("env", [])]


def test_the_rendered_leaderworkerset_is_checked_against_the_crd_schema():
    lws = the(compile_spec(lws_spec()), "LeaderWorkerSet")
    assert kube.validate_object(lws) == []
    bad = copy.deepcopy(lws)
    bad["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "Always"
    bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["argz"] = []
    errors = dict(kube.validate_object(bad))
    assert "'Always' is not one of" in errors[("spec", "leaderWorkerTemplate", "restartPolicy")]
    assert (
        "'argz' was unexpected" in errors[("spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers", 0)]
    )


def test_replicas_beyond_one_need_the_leaderworkerset_engine():
    problems = problem_set(spec(**MULTI, replicas=2))
    (hint,) = [h for p, _m, h in problems if p == "replicas"]
    assert "multiNode.engine: leaderworkerset" in hint
    assert problem_set(lws_spec(replicas=2)) == set()


def test_the_name_bound_follows_the_statefulsets_lws_makes():
    """The LWS controller names each group's worker StatefulSet <name>-<group>: 45 characters and
    10 replicas leave 48, within the 52 a StatefulSet's name may have."""
    assert problem_set(lws_spec(name="a" * 45, replicas=10)) == set()
    (problem,) = [p for p in problem_set(lws_spec(name="a" * 50, replicas=1000)) if p[0] == "name"]
    assert "'" + "a" * 50 + "-999'" in problem[1]


@pytest.mark.parametrize(
    "values",
    [
        lws_spec(replicas=2),
        lws_spec(kvCacheOffloading={"lmcache": {"gpuAccess": "in-container"}}),
        lws_spec(kvCacheOffloading={"backend": "native", "cpu": "100Gi"}),
    ],
    ids=["replicas-2", "in-container", "native"],
)
def test_the_chart_renders_the_same_leaderworkerset(values):
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compile_spec(values).objects)


@pytest.mark.heavy
def test_the_chart_refuses_what_kvgen_refuses():
    for values in (spec(**MULTI, replicas=2), lws_spec(name="a" * 50, replicas=1000)):
        ours = problem_set(values)
        assert ours and helm.problems(values) == ours


def test_the_multi_node_doc_says_when_to_pick_which_engine():
    section = (ROOT / "docs" / "multi-node.md").read_text(encoding="utf-8")
    assert "multiNode.engine" in section and "RecreateGroupOnPodRestart" in section and "replicas" in section
