"""KServe's spec.router becomes kvgen's routing section (issue 25).

Each test names the KServe v0.20.0 test or source line it mirrors; paths are under
pkg/controller/v1alpha2/llmisvc/ unless said otherwise. The webhook is
pkg/apis/serving/v1alpha2/llm_inference_service_validation.go.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from conftest import run_kvgen
from kserve_inputs import KSERVE_DEFAULT_PROFILE
from ruamel.yaml import YAML

from kvgen.app.compiler import InputErrors, compile_inputs
from kvgen.data import kube
from kvgen.input.dialects import Options

HEAD = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: qwen
  namespace: llm
spec:
  model:
    uri: hf://Qwen/Qwen2.5-7B-Instruct
  replicas: 3
"""
MANAGED = "router: {gateway: {}, route: {}, scheduler: {}}\n"


def text(body: str) -> str:
    return HEAD + textwrap.indent(textwrap.dedent(body), "  ")


def compile_svc(body: str):
    return compile_inputs([("svc.yaml", text(body))], options=Options("Standard_NC24ads_A100_v4"))


def objects(body: str) -> list[dict[str, Any]]:
    (c,) = compile_svc(body).compiled
    return c.objects


def of_kind(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return found


def warnings(body: str) -> list[str]:
    return [w.render() for w in compile_svc(body).input_warnings]


def problems(body: str) -> list[str]:
    with pytest.raises(InputErrors) as exc:
        compile_svc(body)
    return [p.render() for e in exc.value.errors for p in e.problems]


def test_managed_gateway_route_and_scheduler_render_the_pool_picker_and_route_on_kserves_default_gateway():
    """controller_int_test.go:795 "should create routes pointing to the default gateway when both are
    managed": gateway {} is kserve/kserve-ingress-gateway (config/configmap/inferenceservice.yaml:307);
    config-llm-scheduler.yaml:8-24 sets endpointPickerRef failureMode FailOpen; scheduler_test.go:391
    TestSchedulerConfigTextDefault's weights (queue 2, kv-cache-utilization 2, prefix-cache 3, no-hit-lru 2).
    The routing objects validate against the vendored CRDs."""
    objs = objects(MANAGED)
    route = of_kind(objs, "HTTPRoute")
    assert route["spec"]["parentRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "kserve-ingress-gateway",
            "namespace": "kserve",
        }
    ]
    pool = of_kind(objs, "InferencePool")
    assert pool["spec"]["endpointPickerRef"]["failureMode"] == "FailOpen"
    config = json.loads(of_kind(objs, "ConfigMap", "qwen-epp-config")["data"]["config.json"])
    (profile,) = config["schedulingProfiles"]
    assert [(p["pluginRef"], p.get("weight")) for p in profile["plugins"]] == KSERVE_DEFAULT_PROFILE
    for o in (route, pool):
        assert kube.validate_object(o, "1.33") == [], o["kind"]
    assert warnings(MANAGED) == []


def test_gateway_refs_are_the_routes_parents_with_their_listener():
    """controller_int_test.go:1330-1548 "Custom Gateway Reference" (sectionName propagated, :1442/1506)."""
    objs = objects(
        "router:\n  gateway: {refs: [{name: my-gw, namespace: infra, sectionName: https}]}\n  route: {}\n  scheduler: {}\n"
    )
    (parent,) = of_kind(objs, "HTTPRoute")["spec"]["parentRefs"]
    assert (parent["name"], parent["namespace"], parent["sectionName"]) == ("my-gw", "infra", "https")


def test_scheduler_replicas_above_one_elect_a_leader():
    """controller_int_scheduler_config_test.go:749 "should inject --ha-enable-leader-election when
    replicas > 1" (scheduler.go:407-414)."""
    objs = objects("router: {gateway: {}, route: {}, scheduler: {replicas: 2}}\n")
    picker = of_kind(objs, "Deployment", "qwen-kserve-router-scheduler")
    assert picker["spec"]["replicas"] == 2
    (c,) = picker["spec"]["template"]["spec"]["containers"]
    assert "--ha-enable-leader-election" in c["args"]


def test_the_pool_specs_failure_mode_is_kept():
    """config-llm-scheduler.yaml:8-24: router.scheduler.pool.spec.endpointPickerRef.failureMode."""
    body = "router:\n  gateway: {}\n  route: {}\n  scheduler: {pool: {spec: {endpointPickerRef: {failureMode: FailClose}}}}\n"
    assert of_kind(objects(body), "InferencePool")["spec"]["endpointPickerRef"]["failureMode"] == "FailClose"


def test_what_kvgen_cannot_carry_is_named_at_its_path_all_at_once():
    """controller_int_scheduler_config_test.go:46 (inline config), controller_int_test.go:1088
    (route.http.refs): kvgen renders its own picker config, and no route for your own HTTPRoute, and says
    so for each field."""
    body = """\
    router:
      gateway: {refs: [{name: my-gw, namespace: infra}]}
      route: {http: {refs: [{name: my-route}]}}
      scheduler:
        config: {inline: {apiVersion: x}}
        template: {containers: [{name: main}]}
    """
    got = warnings(body)
    for expected in (
        "svc.yaml:12:20: spec.router.route.http.refs: not carried over: kvgen does not attach to your own HTTPRoute",
        "svc.yaml:14:7: spec.router.scheduler.config: not carried over: the scheduler config",
        "svc.yaml:15:7: spec.router.scheduler.template: not carried over: the scheduler pod template",
        "svc.yaml:10:3: spec.router: not carried over: with route.http.refs KServe renders no managed HTTPRoute",
    ):
        assert sum(w.startswith(expected) for w in got) == 1, (expected, got)
    assert len(got) == 4, got


@pytest.mark.parametrize(
    "router,path,message",
    [
        # :153-163
        (
            "{gateway: {refs: [{name: g}]}, route: {http: {refs: [{name: r}], spec: {}}}, scheduler: {}}",
            "spec.router.route.http",
            "refs and spec are mutually exclusive",
        ),
        # :165-176
        ("{gateway: {}, route: {http: {refs: [{name: r}]}}}", "spec.router.route.http.refs", "with a managed Gateway"),
        # :178-200; llm_inference_service_validation_test.go:160 "different sectionName - same gateway otherwise"
        (
            "{gateway: {refs: [{name: g, sectionName: a}]}, route: {http: {spec: {parentRefs: [{name: g, sectionName: b}]}}}}",
            "spec.router.route.http.spec.parentRefs",
            "conflicts with spec.router.gateway.refs",
        ),
        ("{gateway: {}, route: {}, scheduler: {replicas: 0}}", "spec.router.scheduler.replicas", "must be at least 1"),
        ("{scheduler: {config: {}}}", "spec.router.scheduler.config", "needs inline or ref"),  # :383-389
        (
            "{scheduler: {config: {inline: {a: b}, ref: {name: c}}}}",
            "spec.router.scheduler.config",
            "inline and ref are mutually exclusive",
        ),  # :391-397
        ("{scheduler: {config: {inline: ab}}}", "spec.router.scheduler.config.inline", "too short"),  # :399-405
        ("{scheduler: {config: {ref: {key: k}}}}", "spec.router.scheduler.config.ref", "needs a ConfigMap name"),
        ("{gateway: {}, route: {weight: 10}}", "spec.router.route.weight", "needs route.group"),  # :851-900
        ("{gateway: {}, route: {group: a}}", "spec.router.route.group", "needs route.weight"),
    ],
)
def test_combinations_kserves_webhook_rejects_are_errors_at_their_path(router, path, message):
    """llm_inference_service_validation.go validateRouterCrossFieldConstraints :130-203,
    validateSchedulerConfig :364-418, validateTrafficFields :851-900."""
    got = problems(f"router: {router}\n")
    assert any(f": {path}: " in p and message in p for p in got), got


def test_without_a_scheduler_kserve_routes_to_the_workload_service():
    """controller_int_test.go:984 "should create routes pointing to workload service when no scheduler
    is configured": the route, and no InferencePool (issue 37; tests/test_kserve_router_parity.py holds
    the rest)."""
    body = "router: {gateway: {}, route: {}}\n"
    objs = objects(body)
    assert not [o for o in objs if o["kind"] == "InferencePool"]
    assert of_kind(objs, "HTTPRoute")["metadata"]["name"] == "qwen-kserve-route"
    assert warnings(body) == []


def test_prefill_decode_router_routes_the_pair():
    """scheduler.go:540-591: with spec.prefill KServe's scheduler runs its P/D profiles; kvgen renders them in
    the decode server's picker, and the prefill server (NAME-prefill) joins its pool (disaggregation.decodeServer)."""
    out = compile_svc(MANAGED + "prefill: {replicas: 1}\n")
    decode, prefill = out.compiled
    assert [o["kind"] for o in decode.objects].count("InferencePool") == 1
    assert all(o["kind"] != "InferencePool" for o in prefill.objects)
    assert prefill.spec.disaggregation.decode_server == "qwen"
    assert not any(": spec.router: not carried over" in w.render() for w in out.input_warnings)


@pytest.mark.heavy
def test_convert_names_the_objects_kserves_controller_would_create(tmp_path):
    """scheduler.go:1612-1614 (<name>-kserve-router-scheduler), :299-354 (<name>-inference-pool),
    types_func.go:38-45 (<name>-epp-service), router.go:241 (<name>-kserve-route)."""
    (tmp_path / "svc.yaml").write_text(text(MANAGED))
    result = run_kvgen("convert", str(tmp_path / "svc.yaml"), "--instance", "Standard_NC24ads_A100_v4")
    assert result.returncode == 0, result.stderr
    assert "ConfigMap qwen-epp-config (KServe passes it inline" in result.stdout
    assert "the picker's tokenizer" in result.stdout and "system:auth-delegator" in result.stdout
    (doc,) = [d for d in YAML(typ="safe").load_all(result.stdout) if d]
    assert doc["routing"] == {
        "naming": "kserve",
        "mode": "gateway",
        "gateway": {
            "parentRefs": [{"name": "kserve-ingress-gateway", "namespace": "kserve"}],
            "provider": "istio",
            "rules": "kserve",
        },
        "picker": {"failureMode": "FailOpen"},
    }
