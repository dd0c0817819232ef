"""Pod settings (spec `pod`, `scheduling.runtimeClassName` / `topologySpreadConstraints`) and the
secure defaults of every pod and container, in kvgen and in the chart alike."""

from __future__ import annotations

import helm
import pytest
from conftest import ROOT, compile_spec, dump, problem_set, run_kvgen, spec, workload

MULTI_NODE = dict(
    model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
    instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    parallelism={"tensor": 16, "nodes": 2},
)


def pods(objects):
    return [o["spec"]["template"] for o in objects if o["kind"] in ("Deployment", "StatefulSet")]


def containers(pod):
    return pod["spec"]["containers"] + pod["spec"].get("initContainers", [])


@pytest.mark.parametrize(
    "values",
    [spec(), spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi"}), spec(**MULTI_NODE)],
    ids=["lmcache-sidecar", "native", "multi-node"],
)
def test_every_pod_and_container_is_secure_by_default(values):
    for objects in (compile_spec(values).objects, helm.objects(values)):
        assert pods(objects)
        for pod in pods(objects):
            assert pod["spec"]["automountServiceAccountToken"] is False
            assert pod["spec"]["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
            assert "serviceAccountName" not in pod["spec"] and "imagePullSecrets" not in pod["spec"]
            for c in containers(pod):
                assert c["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        assert "ServiceAccount" not in {o["kind"] for o in objects}


SETTINGS = spec(
    scheduling={
        "runtimeClassName": "nvidia",
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
            {
                "maxSkew": 2,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"team": "ml"}},
            },
        ],
    },
    pod={
        "labels": {"team": "ml", "example.com/cost-center": "4711"},
        "annotations": {"example.com/owner": "ml-platform"},
        "imagePullSecrets": [{"name": "registry-credentials"}],
        "serviceAccount": {"create": True, "automountToken": True},
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 1000},
        "containerSecurityContext": {"capabilities": {"add": ["IPC_LOCK"]}, "readOnlyRootFilesystem": False},
    },
)


def test_pod_settings_reach_every_pod_in_kvgen_and_the_chart():
    ours = compile_spec(SETTINGS).objects
    assert helm.by_identity(helm.objects(SETTINGS)) == helm.by_identity(ours)
    (account,) = [o for o in ours if o["kind"] == "ServiceAccount"]
    assert account["metadata"] == {"name": "demo", "labels": account["metadata"]["labels"]}
    assert account["automountServiceAccountToken"] is True
    (pod,) = pods(ours)
    s = pod["spec"]
    assert s["serviceAccountName"] == "demo" and s["automountServiceAccountToken"] is True
    assert s["imagePullSecrets"] == [{"name": "registry-credentials"}]
    assert s["runtimeClassName"] == "nvidia"
    # the spec's keys win, kvgen's defaults stay beside them
    assert s["securityContext"] == {
        "seccompProfile": {"type": "RuntimeDefault"},
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "fsGroup": 1000,
    }
    for c in containers(pod):
        assert c["securityContext"] == {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": False,
            "capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]},
        }
    # a constraint without labelSelector spreads this workload's pods; one with it is kept
    zone, host = s["topologySpreadConstraints"]
    assert zone["labelSelector"] == {"matchLabels": workload(compile_spec(SETTINGS))["spec"]["selector"]["matchLabels"]}
    assert host["labelSelector"] == {"matchLabels": {"team": "ml"}}
    assert pod["metadata"]["labels"]["team"] == "ml" and pod["metadata"]["labels"]["example.com/cost-center"] == "4711"
    assert pod["metadata"]["annotations"]["example.com/owner"] == "ml-platform"
    # the selector is kvgen's alone
    assert "team" not in workload(compile_spec(SETTINGS))["spec"]["selector"]["matchLabels"]


def test_a_named_existing_service_account_is_used_without_rendering_one():
    values = spec(pod={"serviceAccount": {"name": "inference"}})
    for objects in (compile_spec(values).objects, helm.objects(values)):
        assert "ServiceAccount" not in {o["kind"] for o in objects}
        assert [p["spec"]["serviceAccountName"] for p in pods(objects)] == ["inference"]


def test_each_rank_of_a_multi_node_server_spreads_its_own_pods():
    values = spec(
        **MULTI_NODE,
        scheduling={
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        },
    )
    ours = compile_spec(values).objects
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(ours)
    leader, worker = pods(ours)
    for pod, role in ((leader, "leader"), (worker, "worker")):
        (c,) = pod["spec"]["topologySpreadConstraints"]
        assert c["labelSelector"]["matchLabels"]["kvgen.dev/node-role"] == role


BAD_SETTINGS = spec(
    scheduling={
        "runtimeClassName": "NVIDIA_runtime",
        "topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "bad key!", "whenUnsatisfiable": "Sometimes"}],
    },
    pod={
        "labels": {"app.kubernetes.io/instance": "other", "team": "a b", "bad key!": "x"},
        "annotations": {"kvgen.dev/kv-cache-offloading": "x", "bad key!": "y"},
        "imagePullSecrets": [{"name": "Registry_Credentials"}],
        "serviceAccount": {"name": "Bad_Account"},
    },
)


def test_bad_pod_settings_are_refused_alike_by_kvgen_and_the_chart():
    ours = problem_set(BAD_SETTINGS)
    assert helm.problems(BAD_SETTINGS) == ours
    paths = {p for p, _m, _h in ours}
    assert paths == {
        "scheduling.runtimeClassName",
        "scheduling.topologySpreadConstraints[0].maxSkew",
        "scheduling.topologySpreadConstraints[0].topologyKey",
        "scheduling.topologySpreadConstraints[0].whenUnsatisfiable",
        "pod.labels.app.kubernetes.io/instance",
        "pod.labels.team",
        "pod.labels.bad key!",
        "pod.annotations.kvgen.dev/kv-cache-offloading",
        "pod.annotations.bad key!",
        "pod.imagePullSecrets[0].name",
        "pod.serviceAccount.name",
    }
    assert any("a label kvgen sets itself" in m for p, m, _h in ours if p == "pod.labels.app.kubernetes.io/instance")


@pytest.mark.heavy
def test_security_contexts_are_checked_against_the_kubernetes_definitions(tmp_path):
    bad = spec(
        pod={
            "securityContext": {"runAsUser": "root", "seccompProfile": {"type": "RuntimeDefault", "extra": 1}},
            "containerSecurityContext": {"capabilities": {"add": "IPC_LOCK"}, "privileged": "no"},
        },
        scheduling={"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname"}]},
    )
    f = tmp_path / "bad.yaml"
    f.write_text(dump(bad))
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1, result.stderr
    for path in (
        "pod.securityContext.runAsUser",
        "pod.securityContext.seccompProfile",
        "pod.containerSecurityContext.capabilities.add",
        "pod.containerSecurityContext.privileged",
        "scheduling.topologySpreadConstraints[0]",
    ):
        assert path in result.stderr, (path, result.stderr)
    assert f"{f}:" in result.stderr  # file:line
    assert "Traceback" not in result.stderr
    with pytest.raises(Exception, match="runAsUser"):  # Helm's schema (the same Kubernetes definitions) refuses it too
        helm.render(bad)


@pytest.mark.heavy
def test_the_hardened_example_renders_a_service_account_and_pull_secret():
    result = run_kvgen("render", str(ROOT / "examples" / "hardened-private-registry.yaml"))
    assert result.returncode == 0, result.stderr
    assert "kind: ServiceAccount" in result.stdout and "registry-credentials" in result.stdout
    assert "runtimeClassName: nvidia" in result.stdout
