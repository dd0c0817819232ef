"""Operations objects (docs/operations.md):
probe timings and the Deployment's progress deadline, the PodDisruptionBudget, the Prometheus
Operator monitors, KEDA or an HPA. Each through kvgen's commands and the chart (the real Helm
engine), which must render the same objects."""

from __future__ import annotations

import json

import helm
import helm_python
import pytest
from conftest import compile_spec, container, dump, problem_set, run_kvgen, spec
from ruamel.yaml import YAML

from kvgen.data import kube

MULTI_NODE = {
    "model": {"id": "Qwen/Qwen3-32B"},
    "parallelism": {"tensor": 2, "nodes": 2},
    "instance": {"type": "Standard_NC24ads_A100_v4"},
}
KEDA = {"maxReplicas": 4, "keda": {"serverAddress": "http://prometheus.monitoring:9090"}}
HPA_METRIC = {
    "type": "Pods",
    "pods": {"metric": {"name": "vllm_num_requests_waiting"}, "target": {"type": "AverageValue", "averageValue": "5"}},
}


def both(values: dict) -> list[dict]:
    """kvgen's objects, after checking the chart renders the same ones."""
    ours = compile_spec(values).objects
    theirs = helm.objects(values)
    assert helm.by_identity(theirs) == helm.by_identity(ours)
    for obj in ours:  # strictly valid, custom resources included
        assert kube.validate_object(obj) == [], obj["kind"]
    return ours


def of_kind(objs: list[dict], k: str) -> list[dict]:
    return [o for o in objs if o["kind"] == k]


def vllm_probes(objs: list[dict]) -> dict:
    deployment = [o for o in objs if o["kind"] in ("Deployment", "StatefulSet")][0]
    (c,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "vllm"]
    return {k: c[k] for k in ("startupProbe", "readinessProbe", "livenessProbe")}


def both_problems(values: dict) -> set:
    ours = problem_set(values)
    assert helm.problems(values) == ours
    return ours


# ----------------------------------------------------------------------------- probes


def test_default_probes_survive_a_saturated_server():
    objs = both(spec())
    probes = vllm_probes(objs)
    assert {name: p["timeoutSeconds"] for name, p in probes.items()} == {
        "startupProbe": 5,
        "readinessProbe": 5,
        "livenessProbe": 10,
    }
    assert probes["startupProbe"]["periodSeconds"] * probes["startupProbe"]["failureThreshold"] == 1800
    # the rollout deadline covers the startup budget (30 min) plus 600 s to schedule and pull
    (deployment,) = of_kind(objs, "Deployment")
    assert deployment["spec"]["progressDeadlineSeconds"] == 1800 + 600


def test_probe_timings_are_configurable_and_the_deadline_follows_the_startup_budget():
    values = spec(
        probes={
            "startup": {"failureThreshold": 360},
            "readiness": {"timeoutSeconds": 12, "periodSeconds": 15},
            "liveness": {"failureThreshold": 6},
        }
    )
    objs = both(values)
    probes = vllm_probes(objs)
    assert probes["startupProbe"] == {
        "httpGet": {"path": "/health", "port": "http"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 360,
    }
    assert probes["readinessProbe"]["timeoutSeconds"] == 12 and probes["readinessProbe"]["periodSeconds"] == 15
    assert probes["livenessProbe"]["failureThreshold"] == 6 and probes["livenessProbe"]["timeoutSeconds"] == 10
    assert of_kind(objs, "Deployment")[0]["spec"]["progressDeadlineSeconds"] == 10 * 360 + 600


@pytest.mark.heavy
def test_ranks_above_zero_have_no_probes_and_statefulsets_no_deadline():
    objs = both(spec(**MULTI_NODE, probes={"startup": {"failureThreshold": 200}}))
    leader, worker = of_kind(objs, "StatefulSet")
    assert vllm_probes([leader])["startupProbe"]["failureThreshold"] == 200
    (c,) = worker["spec"]["template"]["spec"]["containers"]
    assert not {"startupProbe", "readinessProbe", "livenessProbe"} & set(c)
    assert "progressDeadlineSeconds" not in leader["spec"]


@pytest.mark.heavy
def test_a_bad_probe_value_is_refused_with_its_path(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(dump(spec(probes={"readiness": {"timeoutSeconds": 0}, "startup": {"bogus": 1}})))
    result = run_kvgen("render", str(path))
    assert result.returncode == 1 and result.stdout == ""
    assert (
        "probes.readiness.timeoutSeconds" in result.stderr
        and "probes.startup.bogus: unknown key 'bogus'" in result.stderr
    )
    with pytest.raises(Exception, match="timeoutSeconds"):
        helm.render(spec(probes={"readiness": {"timeoutSeconds": 0}}))


# ----------------------------------------------------------------------------- disruption budget


@pytest.mark.heavy
@pytest.mark.parametrize(
    "values, expected",
    [
        (spec(), None),  # one replica: nothing to protect
        (spec(replicas=3), 1),  # on by default
        (spec(replicas=3, disruptionBudget={"enabled": False}), None),
        (spec(disruptionBudget={"enabled": True}), 1),
        (spec(replicas=4, disruptionBudget={"maxUnavailable": "25%"}), "25%"),
        (spec(replicas=4, disruptionBudget={"maxUnavailable": 2}), 2),
        (spec(autoscaling=KEDA), 1),  # up to 4 replicas
        (spec(autoscaling={**KEDA, "maxReplicas": 1}), None),
    ],
    ids=["one-replica", "three", "disabled", "forced", "percent", "two", "autoscaled", "autoscaled-to-one"],
)
def test_a_disruption_budget_when_there_can_be_several_replicas(values, expected):
    objs = both(values)
    pdbs = of_kind(objs, "PodDisruptionBudget")
    if expected is None:
        assert pdbs == []
        return
    (pdb,) = pdbs
    assert pdb["spec"]["maxUnavailable"] == expected
    pod_labels = workload_of(objs)["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()


def workload_of(objs):
    return [o for o in objs if o["kind"] in ("Deployment", "StatefulSet")][0]


def test_a_bad_max_unavailable_is_refused():
    values = spec(disruptionBudget={"maxUnavailable": "half"})
    with pytest.raises(Exception, match="maxUnavailable"):
        compile_spec(values)
    with pytest.raises(Exception, match="maxUnavailable"):
        helm.render(values)


# ----------------------------------------------------------------------------- metrics


def lmcache_argv(c: dict) -> list[str]:
    return c["args"][c["args"].index("--") :]


def test_a_pod_monitor_scrapes_vllm_and_the_lmcache_server():
    objs = both(spec(metrics={"podMonitor": True, "labels": {"release": "prometheus"}, "interval": "15s"}))
    (monitor,) = of_kind(objs, "PodMonitor")
    assert monitor["spec"]["podMetricsEndpoints"] == [
        {"port": "http", "path": "/metrics", "interval": "15s"},
        {"port": "lmcache-http", "path": "/metrics", "interval": "15s"},
    ]
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    pod = workload_of(objs)["spec"]["template"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (sidecar,) = pod["spec"]["initContainers"]
    assert sidecar["ports"] == [{"name": "lmcache-http", "containerPort": 8080, "protocol": "TCP"}]
    argv = lmcache_argv(sidecar)
    assert argv[argv.index("--http-host") + 1] == "0.0.0.0"  # else it listens on 127.0.0.1 only
    (vllm,) = pod["spec"]["containers"]
    assert [p["name"] for p in vllm["ports"]] == ["http"]  # vLLM serves /metrics on its API port


def test_without_monitors_the_lmcache_server_stays_on_loopback():
    c = compile_spec(spec())
    sidecar = container(c, "lmcache-mp-server")
    assert "ports" not in sidecar and "--http-host" not in sidecar["args"]
    assert not of_kind(c.objects, "PodMonitor") and not of_kind(c.objects, "ServiceMonitor")


def test_lmcache_server_scraping_can_be_turned_off():
    objs = both(spec(metrics={"podMonitor": True, "lmcacheServer": False}))
    (monitor,) = of_kind(objs, "PodMonitor")
    assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["http"]
    (sidecar,) = workload_of(objs)["spec"]["template"]["spec"]["initContainers"]
    assert "ports" not in sidecar and "--http-host" not in sidecar["args"]


def test_in_container_the_vllm_container_names_the_lmcache_port():
    objs = both(spec(metrics={"podMonitor": True}, kvCacheOffloading={"lmcache": {"gpuAccess": "in-container"}}))
    (vllm,) = workload_of(objs)["spec"]["template"]["spec"]["containers"]
    assert [p["name"] for p in vllm["ports"]] == ["http", "lmcache-http"]
    assert vllm["args"][vllm["args"].index("--http-host") + 1] == "0.0.0.0"


def test_without_an_lmcache_server_only_vllm_is_scraped():
    objs = both(spec(metrics={"podMonitor": True}, kvCacheOffloading={"backend": "native", "cpu": "20Gi"}))
    (monitor,) = of_kind(objs, "PodMonitor")
    assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["http"]


def test_a_service_monitor_scrapes_vllm_through_the_service():
    objs = both(spec(metrics={"serviceMonitor": True}))
    (monitor,) = of_kind(objs, "ServiceMonitor")
    (service,) = of_kind(objs, "Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "30s"}]
    assert [p["name"] for p in service["spec"]["ports"]] == ["http"]  # LMCache's unauthenticated API stays off it


def test_a_multi_node_pod_monitor_scrapes_rank_zero_only():
    objs = both(spec(**MULTI_NODE, metrics={"podMonitor": True}))
    (monitor,) = of_kind(objs, "PodMonitor")
    assert monitor["spec"]["selector"]["matchLabels"]["kvgen.dev/node-role"] == "leader"


def test_a_bad_interval_is_refused():
    with pytest.raises(Exception, match="interval"):
        compile_spec(spec(metrics={"interval": "soon"}))
    with pytest.raises(Exception, match="interval"):
        helm.render(spec(metrics={"interval": "soon"}))


# ----------------------------------------------------------------------------- autoscaling


def test_keda_scales_the_deployment_on_vllms_queue():
    objs = both(
        spec(
            namespace="llm",
            autoscaling={**KEDA, "minReplicas": 0, "keda": {**KEDA["keda"], "threshold": "3", "cooldownPeriod": 600}},
        )
    )
    (deployment,) = of_kind(objs, "Deployment")
    assert "replicas" not in deployment["spec"]  # KEDA sets them
    (so,) = of_kind(objs, "ScaledObject")
    assert so["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"}
    assert (so["spec"]["minReplicaCount"], so["spec"]["maxReplicaCount"], so["spec"]["cooldownPeriod"]) == (0, 4, 600)
    assert "pollingInterval" not in so["spec"]
    (trigger,) = so["spec"]["triggers"]
    assert trigger == {
        "type": "prometheus",
        "metadata": {
            "serverAddress": "http://prometheus.monitoring:9090",
            "query": 'sum(vllm:num_requests_waiting{namespace="llm",pod=~"demo-[a-z0-9]+-[a-z0-9]+"})',
            "threshold": "3",
        },
    }
    assert not of_kind(objs, "HorizontalPodAutoscaler")


def test_keda_takes_a_query_of_your_own():
    objs = both(
        spec(autoscaling={**KEDA, "keda": {**KEDA["keda"], "query": "sum(rate(x[1m]))", "pollingInterval": 15}})
    )
    (so,) = of_kind(objs, "ScaledObject")
    assert so["spec"]["triggers"][0]["metadata"]["query"] == "sum(rate(x[1m]))" and so["spec"]["pollingInterval"] == 15


def test_an_hpa_scales_the_deployment_on_the_metrics_given():
    objs = both(spec(autoscaling={"minReplicas": 2, "maxReplicas": 6, "hpa": {"metrics": [HPA_METRIC]}}))
    (hpa,) = of_kind(objs, "HorizontalPodAutoscaler")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"], hpa["spec"]["metrics"]) == (2, 6, [HPA_METRIC])
    assert "replicas" not in of_kind(objs, "Deployment")[0]["spec"]
    assert not of_kind(objs, "ScaledObject")


def test_without_autoscaling_the_deployment_keeps_its_replicas():
    assert of_kind(both(spec(replicas=2)), "Deployment")[0]["spec"]["replicas"] == 2


@pytest.mark.parametrize(
    "autoscaling, path, message",
    [
        ({**KEDA, "minReplicas": 5}, "autoscaling.minReplicas", "5 is above autoscaling.maxReplicas (4)"),
        (
            {"minReplicas": 0, "maxReplicas": 3, "hpa": {"metrics": [HPA_METRIC]}},
            "autoscaling.minReplicas",
            "an HPA cannot scale to zero: minReplicas must be at least 1",
        ),
    ],
)
def test_inconsistent_autoscaling_is_refused_by_both(autoscaling, path, message):
    problems = both_problems(spec(autoscaling=autoscaling))
    assert {(p, m) for p, m, _h in problems} == {(path, message)}


def test_a_multi_node_server_is_not_autoscaled():
    problems = both_problems(spec(**MULTI_NODE, autoscaling=KEDA))
    assert {(p, m) for p, m, _h in problems} == {
        (
            "autoscaling",
            "a server spanning 2 nodes is one pair of StatefulSets (rank 0 and ranks 1..); kvgen does not autoscale it",
        )
    }


@pytest.mark.heavy
def test_exactly_one_autoscaler(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(dump(spec(autoscaling={**KEDA, "hpa": {"metrics": [HPA_METRIC]}})))
    result = run_kvgen("validate", str(path))
    assert result.returncode == 1 and "exactly one of keda or hpa must be set; both are set" in result.stderr
    # the chart's values schema refuses both (oneOf keda / hpa): two matched, then none
    with pytest.raises(
        helm_python.HelmValuesError, match=r"at '/autoscaling': 'oneOf' failed, subschemas 0, 1 matched"
    ):
        helm.render(spec(autoscaling={**KEDA, "hpa": {"metrics": [HPA_METRIC]}}))
    with pytest.raises(helm_python.HelmValuesError, match=r"at '/autoscaling': 'oneOf' failed, none matched"):
        helm.render(spec(autoscaling={"maxReplicas": 2}))


def test_a_bad_hpa_metric_is_refused_with_its_path():
    problems = problem_set(
        spec(autoscaling={"maxReplicas": 2, "hpa": {"metrics": [{"type": "Pods", "pods": {"bogus": 1}}]}})
    )
    assert any(p == "autoscaling.hpa.metrics[0].pods" for p, _m, _h in problems), problems


@pytest.mark.heavy
def test_the_example_renders_every_operations_object_through_the_cli():
    result = run_kvgen("render", "examples/metrics-pdb-keda.yaml")
    assert result.returncode == 0, result.stderr
    objs = [d for d in YAML(typ="safe", pure=True).load_all(result.stdout) if d]
    kinds = [o["kind"] for o in objs]
    assert {"PodDisruptionBudget", "PodMonitor", "ScaledObject"} <= set(kinds)
    assert "replicas" not in of_kind(objs, "Deployment")[0]["spec"]
    assert json.dumps(of_kind(objs, "Deployment")[0]["spec"]["progressDeadlineSeconds"]) == "4200"


@pytest.mark.heavy
def test_a_monitor_label_the_api_server_would_refuse_is_refused_by_both():
    problems = both_problems(spec(metrics={"podMonitor": True, "labels": {"bad key!": "x", "ok": "no spaces"}}))
    assert {p for p, _m, _h in problems} == {"metrics.labels.bad key!", "metrics.labels.ok"}


def test_zero_replicas_stay_zero():
    """replicas: 0 is rendered (an absent replicas would mean 1), unless an autoscaler owns them."""
    assert of_kind(both(spec(replicas=0)), "Deployment")[0]["spec"]["replicas"] == 0


def test_an_argument_the_chart_cannot_write_as_yaml_is_refused_by_both():
    """Helm's toJson writes DEL raw, and YAML readers (kubectl's too) refuse it: found by the fuzz test."""
    values = spec(vllm={"extraArgs": ["--served-model-name=demo\x7f"]})
    with pytest.raises(Exception, match=r"vllm.extraArgs\[0\]: .* holds a DEL, C1 control or byte order mark"):
        compile_spec(values)
    with pytest.raises(Exception, match="extraArgs"):
        helm.render(values)
