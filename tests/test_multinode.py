"""A server spanning several nodes (docs/multi-node.md): one LMCache server per node, every
vLLM rank told all of them in node-rank order (lmcache.mp.server_urls), each server reachable from
the other pods; and the LeaderWorkerSet's restart policy, chosen knowingly. Both faces: kvgen's
objects and the chart's.

The pods are named as their controllers name them, from the rendered objects alone: a StatefulSet's
pod <name>-<ordinal> in the subdomain spec.serviceName (a headless Service of that name selecting it);
a LeaderWorkerSet group's leader <lws>-<group>, workers <lws>-<group>-<index>, in the subdomain <lws>
(lws v0.10.0 pkg/controllers/pod_controller.go, pkg/webhooks/pod_webhook.go)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from typing import Any

import contract_check
import contract_support as cs
import helm
import pytest
from conftest import ROOT, compile_spec, spec

from kvgen.data import catalog

NODES = 4
MULTI = dict(
    model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
    instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    parallelism={"tensor": 16, "nodes": NODES},
)
# DeepSeek-V3: MLA, whose one writer per LMCache server is the first rank of each node
MLA = dict(
    name="deepseek-v3-mla",
    model={"id": "deepseek-ai/DeepSeek-V3"},
    instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    parallelism={"tensor": 16, "nodes": 2},
)
LMCACHE_PORT = catalog.runtime()["wiring"]["lmcache"]["port"]

FACES: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    "kvgen": lambda values: compile_spec(values).objects,
    "chart": helm.objects,
}


def _pods(objects: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """(pod hostname, subdomain, pod template, what a controller injects) of every pod of one server
    (group 0 of a LeaderWorkerSet), in node-rank order (a StatefulSet pod's rank: its ordinal, the
    pod-index label NODE_RANK reads)."""
    out = []
    for obj in objects:
        if obj["kind"] == "StatefulSet":
            s = obj["spec"]
            start = (s.get("ordinals") or {}).get("start", 0)
            for ordinal in range(start, start + s["replicas"]):
                out.append(
                    (
                        f"{obj['metadata']['name']}-{ordinal}",
                        s["serviceName"],
                        s["template"],
                        {"NODE_RANK": str(ordinal)},
                    )
                )
        elif obj["kind"] == "LeaderWorkerSet":
            name, t = obj["metadata"]["name"], obj["spec"]["leaderWorkerTemplate"]
            assert "networkConfig" not in obj["spec"], "subdomainPolicy Shared: the subdomain is the LWS's name"
            leader = f"{name}-0.{name}.{obj['metadata'].get('namespace', 'default')}"
            for index in range(t["size"]):
                template = t["leaderTemplate"] if index == 0 else t["workerTemplate"]
                injected = {
                    contract_check.LWS_LEADER_ADDRESS: leader,
                    contract_check.LWS_WORKER_INDEX: str(index),
                    contract_check.LWS_GROUP_INDEX_FIELD: "0",
                }
                out.append((f"{name}-0" if index == 0 else f"{name}-0-{index}", name, template, injected))
    return out


def _container(template: dict[str, Any], name: str) -> dict[str, Any]:
    (c,) = [
        c for c in [*template["spec"].get("initContainers", []), *template["spec"]["containers"]] if c["name"] == name
    ]
    return c


def _expanded_args(c: dict[str, Any], workload: dict[str, Any], injected: dict[str, str]) -> list[str]:
    return [contract_check.expand_env(a, c, workload, injected) for a in c["args"]]


def _kv_extra(args: list[str]) -> dict[str, Any]:
    (kv,) = [a.split("=", 1)[1] for a in args if a.startswith("--kv-transfer-config=")]
    return json.loads(kv)["kv_connector_extra_config"]


def _server_argv(template: dict[str, Any]) -> list[str]:
    """The `lmcache server ...` command line of a pod: the sidecar's, or in-container the launcher's."""
    spec_ = template["spec"]
    sidecars = [c for c in spec_.get("initContainers", []) if c["name"] == "lmcache-mp-server"]
    args = (sidecars[0] if sidecars else _container(template, "vllm"))["args"]
    server = args[args.index("--") + 1 :]
    return server[: server.index("--then")] if "--then" in server else server


def _option(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize("access", ["visible-devices", "in-container"])
@pytest.mark.parametrize("engine", ["statefulset", "leaderworkerset"])
@pytest.mark.parametrize("face", FACES)
def test_every_rank_names_every_nodes_server_in_node_rank_order(face, engine, access):
    """LMCache 0.5.6 gives worker rank r the server server_urls[r // (world_size / len(server_urls))],
    and vLLM numbers the ranks node by node: entry i must be node i's pod, which runs its own server
    bound beyond loopback (rank 0's scheduler looks up every entry)."""
    values = spec(**MULTI, multiNode={"engine": engine}, kvCacheOffloading={"lmcache": {"gpuAccess": access}})
    objects = FACES[face](values)
    pods = _pods(objects)
    assert len(pods) == NODES
    expected = [f"tcp://{host}.{subdomain}:{LMCACHE_PORT}" for host, subdomain, _t, _i in pods]
    for rank, (host, subdomain, template, injected) in enumerate(pods):
        vllm = _container(template, "vllm")
        if engine == "statefulset":  # NODE_RANK is the pod-index label, the pod's ordinal
            (node_rank,) = [e for e in vllm["env"] if e["name"] == "NODE_RANK"]
            assert node_rank["valueFrom"] == {"fieldRef": {"fieldPath": contract_check.POD_INDEX_FIELD}}
        args = _expanded_args(vllm, {}, injected)
        assert [a for a in args if a.startswith("--node-rank=")] == [f"--node-rank={rank}"]
        extra = _kv_extra(args)
        assert extra.get("lmcache.mp.server_urls") == expected, host
        assert "lmcache.mp.host" not in extra  # the connector reads server_urls first; one way only
        assert expected[rank].startswith(f"tcp://{host}.{subdomain}:")  # its own node's server
        server = _server_argv(template)
        assert _option(server, "--host") == "0.0.0.0"  # the scheduler in rank 0's pod reaches it
        assert _option(server, "--port") == str(LMCACHE_PORT)
    if engine == "statefulset":  # the subdomain resolves: a headless Service selecting every pod
        (svc,) = [o for o in objects if o["kind"] == "Service" and o["spec"].get("clusterIP") == "None"]
        assert {subdomain for _h, subdomain, _t, _i in pods} == {svc["metadata"]["name"]}
        assert svc["spec"]["publishNotReadyAddresses"] is True
        for _h, _s, template, _i in pods:
            assert svc["spec"]["selector"].items() <= template["metadata"]["labels"].items()


@pytest.mark.parametrize("face", FACES)
def test_an_mla_model_across_nodes_reads_its_own_nodes_server(face):
    """DeepSeek-V3 (MLA) over two nodes: two servers, the rank-0 pod's first."""
    objects = FACES[face](spec(**MLA))
    pods = _pods([o for o in objects if o["kind"] == "StatefulSet"])
    (host, subdomain, template, _i), (worker, _s, _t, _w) = pods
    extra = _kv_extra(_container(template, "vllm")["args"])
    assert extra["lmcache.mp.server_urls"] == [
        f"tcp://deepseek-v3-mla-0.deepseek-v3-mla-headless:{LMCACHE_PORT}",
        f"tcp://deepseek-v3-mla-worker-1.deepseek-v3-mla-headless:{LMCACHE_PORT}",
    ]
    assert (host, worker) == ("deepseek-v3-mla-0", "deepseek-v3-mla-worker-1")


@pytest.mark.parametrize("face", FACES)
def test_the_lws_group_index_comes_from_the_pods_label(face):
    """Kubernetes expands $(VAR) from the container's own env only: the group's index is copied from
    the label the LWS controller gives every pod of the group."""
    objects = FACES[face](spec(**MULTI, multiNode={"engine": "leaderworkerset"}))
    (lws,) = [o for o in objects if o["kind"] == "LeaderWorkerSet"]
    for role in ("leaderTemplate", "workerTemplate"):
        vllm = _container(lws["spec"]["leaderWorkerTemplate"][role], "vllm")
        env = {e["name"]: e for e in vllm["env"]}
        assert env["KVGEN_LWS_GROUP_INDEX"]["valueFrom"] == {
            "fieldRef": {"fieldPath": contract_check.LWS_GROUP_INDEX_FIELD}
        }
        urls = _kv_extra(vllm["args"])["lmcache.mp.server_urls"]
        assert urls[0] == f"tcp://demo-$(KVGEN_LWS_GROUP_INDEX).demo:{LMCACHE_PORT}"
        assert urls[1:] == [f"tcp://demo-$(KVGEN_LWS_GROUP_INDEX)-{i}.demo:{LMCACHE_PORT}" for i in range(1, NODES)]


@pytest.mark.parametrize("face", FACES)
def test_a_single_node_server_stays_on_loopback(face):
    objects = FACES[face](spec())
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    t = deployment["spec"]["template"]
    assert _kv_extra(_container(t, "vllm")["args"]) == {
        "lmcache.mp.host": "tcp://127.0.0.1",
        "lmcache.mp.port": LMCACHE_PORT,
    }
    assert _option(_server_argv(t), "--host") == "127.0.0.1"


@pytest.mark.parametrize("face", FACES)
def test_the_leaderworkerset_restart_policy_is_the_recorded_choice(face):
    """RecreateGroupOnPodRestart, chosen knowingly and recorded with its reason: a restarted vLLM rank
    cannot rejoin the running groups, and LWS v0.10 counts the LMCache sidecar's restarts too."""
    chosen = catalog.runtime()["wiring"]["lws"]["restartPolicy"]
    assert chosen == "RecreateGroupOnPodRestart"
    objects = FACES[face](spec(**MULTI, multiNode={"engine": "leaderworkerset"}))
    (lws,) = [o for o in objects if o["kind"] == "LeaderWorkerSet"]
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == chosen
    section = (ROOT / "docs" / "multi-node.md").read_text(encoding="utf-8")
    why = section.split("The LeaderWorkerSet's restart policy, chosen knowingly", 1)[1]
    for reason in (
        "cannot rejoin",
        "`None`",
        "ContainerRestarted",
        "LMCache sidecar",
        "emptyDirs",
        "model.uri: pvc://",
        "RecreateGroupAfterStart",
    ):
        assert reason in why, reason


def test_the_multi_node_doc_warns_that_the_servers_are_reachable_and_why_they_must_be():
    section = (ROOT / "docs" / "multi-node.md").read_text(encoding="utf-8")
    for words in (
        "lmcache.mp.server_urls",
        "--host 0.0.0.0",
        "no authentication",
        "NetworkPolicy",
        "lmcache_mp_connector.py",
    ):
        assert words in section, words


ROUTING = ROOT / "tests" / "contract" / "lmcache_routing.py"
ROUTED = {  # (spec, the rendered first group's server_urls are read from its leader pod)
    "dense-lws-2": spec(
        **{**MULTI, "parallelism": {"tensor": 16, "nodes": 2}}, multiNode={"engine": "leaderworkerset"}
    ),
    "dense-sts-4": spec(**MULTI),
    "mla-sts-2": spec(**MLA),
    "mla-lws-2": spec(**MLA, multiNode={"engine": "leaderworkerset"}),
}


@pytest.mark.contract
def test_lmcache_routes_every_rank_to_its_own_pods_server_and_every_lookup_can_hit(tmp_path):
    """In the contract venv, LMCache 0.5.6's own ParallelStrategy and lookup fan-out, fed the rendered
    server_urls: every rank reaches the server of its own pod (the one its KV caches are registered
    with over CUDA IPC), and each server holds every KV rank the scheduler's lookup asks it for, for a
    dense model (each node's ranks) and an MLA model (one writer per server). With the single loopback
    server kvgen rendered before, LMCache counted one server for the whole world: the lookup asked
    rank 0's server for every node's ranks."""
    python = cs.contract_python_or_skip()
    cases = []
    for case, values in ROUTED.items():
        c = compile_spec(values)
        (host, _s, template, injected), *_ = _pods(c.objects)
        urls = _kv_extra(_expanded_args(_container(template, "vllm"), {}, injected))["lmcache.mp.server_urls"]
        p = c.plan.spec.parallelism
        cases.append(
            {
                "id": case,
                "server_urls": urls,
                "tp": p.tensor,
                "nodes": p.nodes,
                "mla": c.plan.model.mla,
                "pods": [f"tcp://{h}.{s}:{LMCACHE_PORT}" for h, s, _t, _i in _pods(c.objects)],
            }
        )
    batch, output = tmp_path / "cases.json", tmp_path / "routes.json"
    batch.write_text(json.dumps({"cases": cases}), encoding="utf-8")
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "LMCACHE_DISABLE_BANNER": "1", "PYTHONPATH": ""}
    run = subprocess.run(
        [python, str(ROUTING), str(batch), str(output)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    routes = json.loads(output.read_text(encoding="utf-8"))
    for case in cases:
        servers = routes[case["id"]]
        assert list(servers) == case["pods"], case["id"]  # one server per node, in node-rank order
        for node, (url, s) in enumerate(servers.items()):
            assert s["nodes"] == [node], (case["id"], url)  # only its own pod's ranks reach it
            assert s["lookup"] and set(s["lookup"]) <= set(s["written"]), (case["id"], url, s)


@pytest.mark.parametrize(
    "offloading, uri, warned",
    [
        ({}, None, True),  # the sidecar, weights in the emptyDir
        ({"lmcache": {"gpuAccess": "in-container"}}, None, False),  # no sidecar: a server restart is vLLM's
        ({}, "pvc://models/llama-70b", False),  # weights on a claim survive the group's recreation
        ({"enabled": False}, None, False),
    ],
)
def test_a_leaderworkerset_with_the_sidecar_warns_that_its_restart_recreates_the_group(offloading, uri, warned):
    model = {"id": "meta-llama/Llama-3.1-70B-Instruct", **({"uri": uri} if uri else {})}
    values = spec(**{**MULTI, "model": model}, multiNode={"engine": "leaderworkerset"}, kvCacheOffloading=offloading)
    ours = [w for w in compile_spec(values).plan.warnings if "recreates the whole group" in w]
    assert len(ours) == int(warned)
    if warned:
        assert "model.uri pvc://" in ours[0] and "LMCache sidecar" in ours[0]
    assert [w for w in helm.notes_warnings(helm.notes(values)) if "recreates the whole group" in w] == ours
