"""KServe's spec.router, its scheduler and LoRA routing held to KServe's own tests (issue 37).

Each test mirrors one KServe test and cites it as kserve/kserve@aaac4e29 FILE:LINES "NAME": FILE under
pkg/controller/v1alpha2/llmisvc/ unless the path says otherwise. LLMInferenceService YAML (v1alpha2 and
v1alpha1) goes through kvgen, and the test asserts on the objects kvgen renders; where kvgen renders
differently from KServe's controller on purpose, the docstring says how. The native specs these inputs
become render alike on the chart face (the last tests).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import helm
import pytest
from conftest import compile_spec, problem_set, run_kvgen, spec
from kserve_inputs import kserve_pd_config
from parity import assert_same_render
from ruamel.yaml import YAML

from kvgen.app.compiler import InputErrors, compile_inputs
from kvgen.data import kube
from kvgen.input.dialects import Options

DATA = Path(__file__).parent / "data" / "kserve"
INSTANCE = "Standard_NC24ads_A100_v4"
N, NS = "facebook-opt-125m", "llm-test"
HEADER = "X-Gateway-Model-Name"
POOL_V1 = "inference.networking.k8s.io"


def llmisvc(router: str, *, version: str = "v1alpha2", namespace: str | None = NS, extra: str = "") -> str:
    meta = f"  name: {N}\n" + (f"  namespace: {namespace}\n" if namespace else "")
    body = (
        f"apiVersion: serving.kserve.io/{version}\nkind: LLMInferenceService\nmetadata:\n{meta}spec:\n"
        "  model:\n    uri: hf://Qwen/Qwen2.5-7B-Instruct\n  replicas: 2\n"
    )
    if router:
        body += "  router:\n" + textwrap.indent(textwrap.dedent(router), "    ")
    return body + textwrap.indent(textwrap.dedent(extra), "  ")


def compile_svc(text: str):
    return compile_inputs([("svc.yaml", text)], options=Options(INSTANCE))


def objects(router: str, **kw: Any) -> list[dict[str, Any]]:
    (c,) = compile_svc(llmisvc(router, **kw)).compiled
    return c.objects


def warnings(router: str, **kw: Any) -> list[str]:
    return [w.render() for w in compile_svc(llmisvc(router, **kw)).input_warnings]


def of_kind(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return found


def names(objs: list[dict[str, Any]], kind: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs if o["kind"] == kind)


def backend_refs(route: dict[str, Any]) -> list[dict[str, Any]]:
    return [ref for rule in route["spec"]["rules"] for ref in rule["backendRefs"]]


def header_values(route: dict[str, Any]) -> list[str]:
    return [
        h["value"]
        for rule in route["spec"]["rules"]
        for m in rule["matches"]
        for h in m.get("headers", [])
        if h["name"] == HEADER
    ]


def rule(route: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [r for r in route["spec"]["rules"] if r.get("name") == name]
    return found


def picker_profile(objs: list[dict[str, Any]], configmap: str) -> list[tuple[str, int | None]]:
    config = json.loads(of_kind(objs, "ConfigMap", configmap)["data"]["config.json"])
    (profile,) = config["schedulingProfiles"]
    declared = {p["type"] for p in config["plugins"]}
    assert {p["pluginRef"] for p in profile["plugins"]} <= declared  # every ref is declared
    return [(p["pluginRef"], p.get("weight")) for p in profile["plugins"]]


MANAGED = "gateway: {}\nroute: {}\nscheduler: {}\n"
# the core group left out, as KServe's route preset writes it (the API server defaults it to "")
SERVICE = {"kind": "Service", "name": f"{N}-kserve-workload-svc", "port": 8000, "weight": 1}
DEFAULT_PARENT = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "kserve-ingress-gateway",
    "namespace": "kserve",
}
DEFAULT_PROFILE = [
    ("queue-scorer", 2),
    ("kv-cache-utilization-scorer", 2),
    ("prefix-cache-scorer", 3),
    ("no-hit-lru-scorer", 2),
    ("max-score-picker", None),
]


# ------------------------------------------------------------------ names, backends and parents


def test_managed_gateway_route_and_scheduler_with_kserves_names_ports_and_backends():
    """kserve/kserve@aaac4e29 controller_int_test.go:794-868 "should create routes pointing to the default
    gateway when both are managed": parentRef kserve-ingress-gateway, the catch-all backendRef the Service
    <n>-kserve-workload-svc:8000 weight 1, the InferencePool backendRef <n>-inference-pool, the pool itself,
    and the EPP Service <n>-epp-service with ports grpc 9002, grpc-health 9003, metrics 9090. KServe's fourth
    port, zmq 5557, is the precise prefix index's KV-event socket, which kvgen's picker (approximate prefix
    index) does not serve, so kvgen's Service has three. KServe starts the route on the v1alpha2 pool group
    and moves to v1 when the Gateway accepts it (controller_int_migration_test.go:40-330); a static render
    cannot watch the Gateway, and kvgen names the v1 pool it renders."""
    objs = objects(MANAGED)
    route = of_kind(objs, "HTTPRoute", f"{N}-kserve-route")
    assert route["spec"]["parentRefs"] == [DEFAULT_PARENT]
    refs = backend_refs(route)
    assert SERVICE in refs
    pool_ref = {"group": POOL_V1, "kind": "InferencePool", "name": f"{N}-inference-pool", "port": 8000, "weight": 1}
    assert pool_ref in refs
    assert names(objs, "InferencePool") == [f"{N}-inference-pool"]
    epp = of_kind(objs, "Service", f"{N}-epp-service")
    assert [(p["name"], p["port"]) for p in epp["spec"]["ports"]] == [
        ("grpc", 9002),
        ("grpc-health", 9003),
        ("metrics", 9090),
    ]
    pool = of_kind(objs, "InferencePool")
    assert pool["spec"]["endpointPickerRef"]["name"] == f"{N}-epp-service"
    assert pool["spec"]["endpointPickerRef"]["port"] == {"number": 9002}


def test_the_objects_carry_kserves_child_names():
    """kserve/kserve@aaac4e29 controller_int_test.go:61-219 "should create a basic single node deployment
    with just base refs" (status.workloads: service <n>-kserve-workload-svc, scheduler
    <n>-kserve-router-scheduler) and controller_int_stop_test.go:212-346 "should delete scheduler resources
    when stop annotation is set" (<n>-kserve-router-scheduler, <n>-epp-service, <n>-inference-pool,
    <n>-epp-sa); the Role and RoleBinding as scheduler.go:778,800 name them, the HTTPRoute as router.go:241.
    kvgen keeps its own name for the server's Deployment (<n>, KServe's <n>-kserve) and names the picker's
    config ConfigMap <n>-epp-config (KServe passes the config inline and renders none)."""
    objs = objects(MANAGED)
    assert names(objs, "Deployment") == [N, f"{N}-kserve-router-scheduler"]
    assert names(objs, "Service") == [f"{N}-epp-service", f"{N}-kserve-workload-svc"]
    assert names(objs, "ServiceAccount") == [f"{N}-epp-sa"]
    assert names(objs, "Role") == [f"{N}-epp-role"]
    binding = of_kind(objs, "RoleBinding")
    assert binding["metadata"]["name"] == f"{N}-epp-rb"
    assert binding["roleRef"]["name"] == f"{N}-epp-role"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": f"{N}-epp-sa"}]
    picker = of_kind(objs, "Deployment", f"{N}-kserve-router-scheduler")
    assert picker["spec"]["template"]["spec"]["serviceAccountName"] == f"{N}-epp-sa"
    assert f"--pool-name={N}-inference-pool" in picker["spec"]["template"]["spec"]["containers"][0]["args"]
    assert names(objs, "HTTPRoute") == [f"{N}-kserve-route"]


def test_a_referenced_inferencepool_is_the_routes_backend_and_nothing_is_rendered_for_it():
    """kserve/kserve@aaac4e29 controller_int_test.go:870-925 "should use referenced external InferencePool":
    the backendRef InferencePool <ref> (group inference.networking.k8s.io, port 8000, weight 1) beside the
    catch-all Service backendRef, parentRef the default gateway; config_merge.go:299 merges no scheduler
    preset, so no pool, picker, Service, ServiceAccount, Role or RoleBinding of the scheduler exists."""
    objs = objects("gateway: {}\nroute: {}\nscheduler: {pool: {ref: {name: my-pool}}}\n")
    route = of_kind(objs, "HTTPRoute")
    refs = backend_refs(route)
    assert {"group": POOL_V1, "kind": "InferencePool", "name": "my-pool", "port": 8000, "weight": 1} in refs
    assert SERVICE in refs
    assert {r["name"] for r in refs} == {"my-pool", f"{N}-kserve-workload-svc"}
    assert route["spec"]["parentRefs"] == [DEFAULT_PARENT]
    assert not [o for o in objs if o["kind"] in ("InferencePool", "Role", "RoleBinding", "ServiceAccount", "ConfigMap")]
    assert names(objs, "Deployment") == [N]


def test_without_a_scheduler_every_rule_goes_to_the_workload_service():
    """kserve/kserve@aaac4e29 controller_int_test.go:983-1040 "should create routes pointing to workload
    service when no scheduler is configured": a Service backendRef <n>-kserve-workload-svc, no InferencePool
    backendRef, the Service selecting the workload's pods, and no <n>-inference-pool (config_merge.go:429-444
    rewrites every default pool backendRef to the Service, port 8000 and weight kept)."""
    objs = objects("gateway: {}\nroute: {}\n")
    route = of_kind(objs, "HTTPRoute", f"{N}-kserve-route")
    refs = backend_refs(route)
    assert refs and all(r == SERVICE for r in refs)
    assert route["spec"]["parentRefs"] == [DEFAULT_PARENT]
    assert not [o for o in objs if o["kind"] == "InferencePool"]
    service = of_kind(objs, "Service", f"{N}-kserve-workload-svc")
    pod_labels = of_kind(objs, "Deployment", N)["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert warnings("gateway: {}\nroute: {}\n") == []


def test_a_custom_route_spec_is_named_and_kserves_route_rendered():
    """kserve/kserve@aaac4e29 controller_int_test.go:1042-1085 "should create HTTPRoute with defined spec":
    KServe uses the user's route spec as written. kvgen renders its own route (KServe's managed one) and
    says so at route.http.spec."""
    router = (
        "gateway: {}\nroute: {http: {spec: {rules: [{backendRefs: [{name: my-inference-service}]}]}}}\nscheduler: {}\n"
    )
    got = warnings(router)
    assert any(": spec.router.route.http.spec: not carried over: a custom HTTPRoute spec" in w for w in got), got
    assert of_kind(objects(router), "HTTPRoute", f"{N}-kserve-route")["spec"]["rules"] == preset_rules(N, NS, N)


def test_your_own_httproute_means_no_managed_route():
    """kserve/kserve@aaac4e29 controller_int_test.go:1087-1163 "should delete managed HTTPRoute when ref is
    defined": with route.http.refs there is no managed HTTPRoute."""
    router = "gateway: {refs: [{name: my-gw, namespace: infra}]}\nroute: {http: {refs: [{name: my-route}]}}\n"
    objs = objects(router)
    assert not [o for o in objs if o["kind"] == "HTTPRoute"]
    assert names(objs, "Service") == [f"{N}-kserve-workload-svc"]  # your route's backend, by KServe's name
    got = warnings(router)
    assert any(": spec.router.route.http.refs: not carried over" in w for w in got)
    assert any(
        ": spec.router: not carried over: with route.http.refs KServe renders no managed HTTPRoute" in w for w in got
    )


def test_no_router_no_route():
    """kserve/kserve@aaac4e29 controller_int_test.go:1263-1327 DescribeTable "owned resources should be
    deleted" (router nil: no managed HTTPRoute); the workload Service keeps KServe's name."""
    objs = objects("")
    assert not [o for o in objs if o["kind"] in ("HTTPRoute", "InferencePool")]
    assert names(objs, "Service") == [f"{N}-kserve-workload-svc"]


def test_a_custom_gateway_is_the_only_parent():
    """kserve/kserve@aaac4e29 controller_int_test.go:1330-1438 "should not require default gateway when
    custom gateway is specified": route and gateway.refs without a scheduler, parentRef {name, namespace} of
    the custom Gateway and no other."""
    route = of_kind(objects("gateway: {refs: [{name: my-gw, namespace: infra}]}\nroute: {}\n"), "HTTPRoute")
    assert route["spec"]["parentRefs"] == [
        {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "my-gw", "namespace": "infra"}
    ]


def test_a_section_name_is_propagated_to_the_parent_ref():
    """kserve/kserve@aaac4e29 controller_int_test.go:1440-1502 "should propagate SectionName to managed
    HTTPRoute ParentRef": parentRef {name, namespace, sectionName: https}."""
    router = "gateway: {refs: [{name: my-gw, namespace: infra, sectionName: https}]}\nroute: {}\n"
    (parent,) = of_kind(objects(router), "HTTPRoute")["spec"]["parentRefs"]
    assert (parent["name"], parent["namespace"], parent["sectionName"]) == ("my-gw", "infra", "https")


def test_no_section_name_when_unspecified():
    """kserve/kserve@aaac4e29 controller_int_test.go:1504-1548 "should not set SectionName on managed
    HTTPRoute ParentRef when unspecified": every parentRef has no sectionName."""
    router = "gateway: {refs: [{name: my-gw, namespace: infra}]}\nroute: {}\n"
    parents = of_kind(objects(router), "HTTPRoute")["spec"]["parentRefs"]
    assert [p["name"] for p in parents] == ["my-gw"] and all("sectionName" not in p for p in parents)


def test_gateway_refs_become_parent_refs():
    """kserve/kserve@aaac4e29 config_merge_test.go:2444-2562 TestToParentRefs: group
    gateway.networking.k8s.io and kind Gateway set, no namespace when the ref has none ("gateway ref with
    empty namespace"), sectionName copied ("gateway ref with sectionName targets specific listener"), mixed
    refs kept in order."""
    router = "gateway: {refs: [{name: a}, {name: b, namespace: infra, sectionName: https}]}\nroute: {}\n"
    assert of_kind(objects(router), "HTTPRoute")["spec"]["parentRefs"] == [
        {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "a"},
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "b",
            "namespace": "infra",
            "sectionName": "https",
        },
    ]


def test_gateway_refs_replace_the_presets_parent_only_when_given():
    """kserve/kserve@aaac4e29 config_merge_test.go:2564-2632 TestParentRefRewritingGuard: the preset's
    parentRef (the default Gateway) is replaced only when gateway refs are given."""
    without = of_kind(objects("route: {}\n"), "HTTPRoute")["spec"]["parentRefs"]
    with_refs = of_kind(objects("gateway: {refs: [{name: g}]}\nroute: {}\n"), "HTTPRoute")["spec"]["parentRefs"]
    assert without == [DEFAULT_PARENT]
    assert [p["name"] for p in with_refs] == ["g"]


# ------------------------------------------------------------------ the route preset's rules


def preset_rules(name: str, namespace: str, model: str) -> list[dict[str, Any]]:
    """KServe's route preset (tests/data/kserve, verbatim) with its Go template rendered for one service."""
    text = (DATA / "config-llm-router-route.yaml").read_text(encoding="utf-8")
    for placeholder, value in (
        ("{{ ChildName .ObjectMeta.Name `-inference-pool` }}", f"{name}-inference-pool"),
        ("{{ ChildName .ObjectMeta.Name `-kserve-workload-svc` }}", f"{name}-kserve-workload-svc"),
        ("{{ .ObjectMeta.Namespace }}", namespace),
        ("{{ .ObjectMeta.Name }}", name),
        ("{{ .Spec.Model.Name }}", model),
        ("{{ .GlobalConfig.ModelBasedRoutingHeaderName }}", HEADER),
        ("{{ .GlobalConfig.IngressGatewayName }}", "kserve-ingress-gateway"),
        ("{{ .GlobalConfig.IngressGatewayNamespace }}", "kserve"),
    ):
        text = text.replace(placeholder, value)
    assert "{{" not in text
    return YAML(typ="safe").load(text)["spec"]["router"]["route"]["http"]["spec"]["rules"]


def test_kserves_route_is_its_presets_rules():
    """kserve/kserve@aaac4e29 config_presets_test.go:42-630 TestPresetFiles (every preset renders;
    config-llm-router-route.yaml's rules are not pinned there, so this holds kvgen's rules to the preset
    itself, rendered for one service); crdvalidation/config_presets_test.go:51-102 (the presets pass the CRD
    schema): the route validates against Gateway API v1.5.1's HTTPRoute."""
    route = of_kind(objects(MANAGED), "HTTPRoute")
    assert route["spec"]["rules"] == preset_rules(N, NS, N)
    assert kube.validate_object(route, "1.33") == []


def test_the_model_name_is_spec_model_name():
    """kserve/kserve@aaac4e29 config-llm-router-route.yaml (.Spec.Model.Name in the publisher paths and
    header values; llm_inference_service_defaults.go:32-34 defaults it to metadata.name)."""
    text = llmisvc(MANAGED).replace(
        "    uri: hf://Qwen/Qwen2.5-7B-Instruct", "    uri: hf://Qwen/Qwen2.5-7B-Instruct\n    name: opt"
    )
    (c,) = compile_svc(text).compiled
    assert of_kind(c.objects, "HTTPRoute")["spec"]["rules"] == preset_rules(N, NS, "opt")


def test_model_routing_rules_are_present_by_default():
    """kserve/kserve@aaac4e29 controller_model_based_routing_int_test.go:130-154 (model-based routing is on
    by default: the model-routing rules and the header match for the base model) and
    config_merge_model_routing_test.go:27-46 TestParseModelBasedRoutingMode (default enabled). kvgen renders
    the rules always; KServe's switches that strip them (config_merge_model_routing_test.go:48-183,
    the int test's other contexts) have no kvgen equivalent."""
    route = of_kind(objects(MANAGED), "HTTPRoute")
    assert len(rule(route, "v1-model-routing")["matches"]) == 8
    assert header_values(route) == [f"publishers/{NS}/models/{N}"] * 9


def test_without_a_namespace_kvgen_renders_its_own_rule_and_says_why():
    """config-llm-router-route.yaml's paths name .ObjectMeta.Namespace: without metadata.namespace kvgen
    cannot write them (kubectl chooses the namespace), and warns at spec.router.route."""
    route = of_kind(objects(MANAGED, namespace=None), "HTTPRoute")
    (only,) = route["spec"]["rules"]
    assert only["matches"] == [{"path": {"type": "PathPrefix", "value": "/"}}]
    assert any(
        "spec.router.route: KServe's managed route names the namespace" in w for w in warnings(MANAGED, namespace=None)
    )


# ------------------------------------------------------------------ LoRA in routing (native specs: kvgen's
# model.lora; KServe's spec.model.lora is read into it by kserve.py)

LORA = {"adapters": [{"name": "lora-adapter-b", "uri": "hf://org/b"}, {"name": "lora-adapter-a", "uri": "hf://org/a"}]}


def kserve_like(lora: dict[str, Any] | None = None, **gateway: Any) -> dict[str, Any]:
    """The native spec a KServe input becomes (routing.naming kserve, rules kserve), with model.lora."""
    values = spec(
        name="base-model",
        namespace=NS,
        replicas=2,
        routing={
            "naming": "kserve",
            "mode": "gateway",
            "gateway": {
                "parentRefs": [{"name": "kserve-ingress-gateway", "namespace": "kserve"}],
                "rules": "kserve",
                **gateway,
            },
        },
    )
    if lora is not None:
        values["model"] = {**values["model"], "lora": lora}
    return values


def test_the_route_matches_every_adapter_by_its_model_name_header():
    """kserve/kserve@aaac4e29 controller_int_test.go:1220-1259 "should expand HTTPRoute with LoRA adapter
    header matches": X-Gateway-Model-Name matches for publishers/<ns>/models/{base-model, lora-adapter-a,
    lora-adapter-b}."""
    route = of_kind(compile_spec(kserve_like(LORA)).objects, "HTTPRoute")
    assert set(header_values(route)) == {
        f"publishers/{NS}/models/{m}" for m in ("base-model", "lora-adapter-a", "lora-adapter-b")
    }


def test_lora_matches_expand_as_kserve_expands_them():
    """kserve/kserve@aaac4e29 config_merge_lora_test.go:72-273 TestExpandLoRAAdapterMatches: the base
    matches first, then per base match one copy per adapter in name order ("order is stable": alpha before
    zebra), the namespace in the value, 8 endpoints x 2 adapters = 16 more, the header-only catch-all 1+2,
    path-only rules untouched; no adapters: the rules unchanged. (Its nil-name and empty-header cases cannot
    occur: kvgen's adapters have names, and the header is KServe's default.)"""
    plain = of_kind(compile_spec(kserve_like()).objects, "HTTPRoute")
    route = of_kind(compile_spec(kserve_like(LORA)).objects, "HTTPRoute")
    assert plain["spec"]["rules"] == preset_rules("base-model", NS, "base-model")
    base = rule(plain, "v1-model-routing")["matches"]
    matches = rule(route, "v1-model-routing")["matches"]
    assert len(matches) == 8 + 8 * 2
    assert matches[:8] == base
    expected = [
        {"path": m["path"], "headers": [{"type": "Exact", "name": HEADER, "value": f"publishers/{NS}/models/{a}"}]}
        for m in base
        for a in ("lora-adapter-a", "lora-adapter-b")
    ]
    assert matches[8:] == expected
    catch_all = rule(route, "v1-catch-all-model-routing")["matches"]
    assert [m["headers"][0]["value"] for m in catch_all] == [
        f"publishers/{NS}/models/{m}" for m in ("base-model", "lora-adapter-a", "lora-adapter-b")
    ]
    for name in ("v1-completions-path", "v1-chat-completions-publisher-path", "v1-catch-all-path"):
        assert rule(route, name) == rule(plain, name)


def test_more_adapters_than_gateway_api_takes_are_refused_at_the_adapters():
    """Gateway API v1.5.1 apis/v1/httproute_types.go:126-130, :208-210 (64 matches per rule, 128 per route),
    which KServe does not check: from 8 adapters its v1-model-routing rule holds 8 x (1 + N) > 64 matches and
    the CRD rejects the route. kvgen refuses at model.lora.adapters, on both faces."""
    values = kserve_like({"adapters": [{"name": f"a{i}", "uri": "hf://org/a"} for i in range(8)]})
    found = problem_set(values)
    assert {p for p, _m, _h in found} == {"model.lora.adapters"}
    ((_p, message, _h),) = found
    assert "holds 72 matches in one rule" in message and "at most 64 matches per rule" in message
    assert helm.problems(values) == found
    assert not problem_set(kserve_like({"adapters": [{"name": f"a{i}", "uri": "hf://org/a"} for i in range(7)]}))


def test_the_lora_affinity_scorer_comes_first_at_weight_4_only_with_adapters():
    """kserve/kserve@aaac4e29 scheduler_test.go:36-112 TestSchedulerConfigTextLoRA: with adapters
    lora-affinity-scorer is declared and refNames[0] with weight 4; without model.lora there is none. (An
    empty adapter list is refused by kvgen's spec, minItems 1.)"""
    configmap = "base-model-epp-config"
    assert picker_profile(compile_spec(kserve_like(LORA)).objects, configmap) == [
        ("lora-affinity-scorer", 4),
        *DEFAULT_PROFILE,
    ]
    assert picker_profile(compile_spec(kserve_like()).objects, configmap) == DEFAULT_PROFILE


def test_kvgens_own_route_names_each_adapter_in_a_rule_of_its_own():
    """kvgen's rules prefix with model.lora (docs/routing.md): KServe's expansion (config_merge.go:603-642)
    on kvgen's one-rule route: a second rule, the same path prefix and backend, one match per adapter's name
    (what a body-based router puts in X-Gateway-Model-Name), so that this route wins over another route on
    the same Gateway and path for those names."""
    values = spec(
        replicas=2, routing={"mode": "gateway", "gateway": {"parentRefs": [{"name": "gw"}], "pathPrefix": "/v1"}}
    )
    values["model"] = {**values["model"], "lora": LORA}
    c = compile_spec(values)
    assert helm.by_identity(helm.objects_and_context(values)[0]) == helm.by_identity(c.objects)  # the chart's too
    route = of_kind(c.objects, "HTTPRoute")
    first, second = route["spec"]["rules"]
    assert first["backendRefs"] == second["backendRefs"]
    assert second["matches"] == [
        {"path": {"type": "PathPrefix", "value": "/v1"}, "headers": [{"type": "Exact", "name": HEADER, "value": a}]}
        for a in ("lora-adapter-a", "lora-adapter-b")
    ]


def test_kserve_lora_input_routes_its_adapters():
    """kserve/kserve@aaac4e29 controller_int_test.go:1220-1259 through the KServe dialect: spec.model.lora
    read by kserve.py, its adapters matched in the route under KServe's names (publishers/<ns>/models/<name>,
    which vLLM serves: the dialect adds each alias), and the picker scoring by adapter."""
    extra = (
        "model:\n  uri: hf://Qwen/Qwen2.5-7B-Instruct\n  lora:\n    adapters:\n"
        "      - {name: lora-adapter-b, uri: hf://org/b}\n      - {name: lora-adapter-a, uri: hf://org/a}\n"
    )
    text = llmisvc(MANAGED).replace("  model:\n    uri: hf://Qwen/Qwen2.5-7B-Instruct\n", textwrap.indent(extra, "  "))
    (c,) = compile_svc(text).compiled
    route = of_kind(c.objects, "HTTPRoute")
    values = header_values(route)
    for name in ("lora-adapter-a", "lora-adapter-b"):
        assert f"publishers/{NS}/models/{name}" in values
        assert f"publishers/{NS}/models/{name}" in [a.name for a in c.spec.model.lora.adapters]
    assert picker_profile(c.objects, f"{N}-epp-config")[0] == ("lora-affinity-scorer", 4)
    # each adapter once, as KServe expands its adapters: the alias vLLM also serves is that match, not another
    assert not [v for v in values if v.count("publishers/") > 1]
    (rule,) = [r for r in route["spec"]["rules"] if r.get("name") == "v1-model-routing"]
    assert len(rule["matches"]) == 8 * 3  # 8 endpoint paths x (the model + 2 adapters)


# ------------------------------------------------------------------ the scheduler


def test_the_default_profile_is_kserves():
    """kserve/kserve@aaac4e29 scheduler_test.go:392-439 TestSchedulerConfigTextDefault (queue 2, kv-cache
    utilization 2, prefix cache 3, no-hit LRU 2, max-score-picker; every ref declared) and
    controller_int_scheduler_config_test.go:403-444 "should use default scheduler config when no config is
    specified (non-prefill)" (the scheduler <n>-kserve-router-scheduler, its profile default). kvgen's
    config is in the ConfigMap <n>-epp-config, mounted at /config."""
    objs = objects(MANAGED)
    assert picker_profile(objs, f"{N}-epp-config") == DEFAULT_PROFILE
    config = json.loads(of_kind(objs, "ConfigMap", f"{N}-epp-config")["data"]["config.json"])
    assert [p["name"] for p in config["schedulingProfiles"]] == ["default"]
    picker = of_kind(objs, "Deployment", f"{N}-kserve-router-scheduler")
    assert picker["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == f"{N}-epp-config"


@pytest.mark.parametrize("replicas,flag", [("2", True), ("1", False), (None, False), ("3", True)])
def test_leader_election_with_more_than_one_scheduler(replicas, flag):
    """kserve/kserve@aaac4e29 controller_int_scheduler_config_test.go:750-959 "Leader election flag
    injection": --ha-enable-leader-election with replicas 2, none with 1 or unset, exactly once with 3; the
    Deployment is Recreate (scheduler.go:399-408)."""
    sched = f"{{replicas: {replicas}}}" if replicas else "{}"
    picker = of_kind(
        objects(f"gateway: {{}}\nroute: {{}}\nscheduler: {sched}\n"), "Deployment", f"{N}-kserve-router-scheduler"
    )
    (c,) = picker["spec"]["template"]["spec"]["containers"]
    assert c["args"].count("--ha-enable-leader-election") == (1 if flag else 0)
    assert picker["spec"]["replicas"] == int(replicas or 1)
    assert picker["spec"]["strategy"] == {"type": "Recreate"}


def test_the_scheduler_role_grants_leases():
    """kserve/kserve@aaac4e29 controller_int_scheduler_config_test.go:963-1044 "should create scheduler role
    with leases permission for leader election" (one replica): Role <n>-epp-role with coordination.k8s.io
    leases get/list/watch/create/update/patch/delete, llm-d.ai inferenceobjectives and
    inferencemodelrewrites, inference.networking.k8s.io inferencepools. KServe also grants
    inferenceobjectives and inferencemodels in inference.networking.k8s.io, which GIE v1 does not define
    (they are inference.networking.x-k8s.io's, which kvgen's Role grants as the llm-d router's chart does)."""
    role = of_kind(objects(MANAGED), "Role", f"{N}-epp-role")

    def granted(group: str) -> set[str]:
        return {res for r in role["rules"] if group in r["apiGroups"] for res in r["resources"]}

    (leases,) = [r for r in role["rules"] if "leases" in r["resources"]]
    assert leases["apiGroups"] == ["coordination.k8s.io"]
    assert set(leases["verbs"]) == {"get", "list", "watch", "create", "update", "patch", "delete"}
    assert {"inferenceobjectives", "inferencemodelrewrites"} <= granted("llm-d.ai")
    assert "inferencepools" in granted(POOL_V1)
    assert {"inferenceobjectives", "inferencemodelrewrites"} <= granted("inference.networking.x-k8s.io")


def test_the_pool_selects_the_workloads_pods():
    """kserve/kserve@aaac4e29 controller_int_scheduler_config_test.go:1746-1834 "should create
    InferencePool with default workload labels that AMD pods can match": the pool's matchLabels are the
    workload Service's selector (kvgen's labels, not KServe's three), which the server's pods carry."""
    objs = objects(MANAGED)
    selector = of_kind(objs, "InferencePool")["spec"]["selector"]["matchLabels"]
    assert selector == of_kind(objs, "Service", f"{N}-kserve-workload-svc")["spec"]["selector"]
    assert selector.items() <= of_kind(objs, "Deployment", N)["spec"]["template"]["metadata"]["labels"].items()


def test_the_scheduler_gets_the_workloads_pull_secrets():
    """kserve/kserve@aaac4e29 controller_int_scheduler_config_test.go:1380-1573 "Scheduler SA credential
    propagation": the scheduler's ServiceAccount <n>-epp-sa gets the main workload's imagePullSecrets. kvgen
    gives the picker's pod the spec's pod.imagePullSecrets (what the KServe dialect reads from the pod
    template), its image coming from the same registry (images.registry); the SA's annotations (a cloud
    workload identity) are not propagated: kvgen's picker needs no cloud credentials."""
    values = kserve_like()
    values["pod"] = {"imagePullSecrets": [{"name": "regcred"}]}
    c = compile_spec(values)
    picker = of_kind(c.objects, "Deployment", "base-model-kserve-router-scheduler")
    assert picker["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    assert helm.by_identity(helm.objects_and_context(values)[0]) == helm.by_identity(c.objects)


@pytest.mark.parametrize("replicas", [0, -1])
def test_scheduler_replicas_below_one_are_refused(replicas):
    """kserve/kserve@aaac4e29 validation_int_test.go:582-645 "scheduler replicas validation": 0 and -1
    rejected ("scheduler replicas must be greater than zero"); 1, 2 and unset accepted."""
    with pytest.raises(InputErrors) as exc:
        compile_svc(llmisvc(f"gateway: {{}}\nroute: {{}}\nscheduler: {{replicas: {replicas}}}\n"))
    got = [p.render() for e in exc.value.errors for p in e.problems]
    assert any(": spec.router.scheduler.replicas: must be at least 1" in p for p in got), got
    for accepted in ("{replicas: 1}", "{replicas: 2}", "{}"):
        objs = objects(f"gateway: {{}}\nroute: {{}}\nscheduler: {accepted}\n")
        assert names(objs, "Deployment") == [N, f"{N}-kserve-router-scheduler"]


def test_the_scheduler_config_and_an_explicit_picker_port_are_named_not_carried():
    """kserve/kserve@aaac4e29 controller_int_scheduler_config_test.go:47-136 "should use inline scheduler
    config in the scheduler deployment", :215-312 (a ConfigMap ref), scheduler_test.go:186-390
    TestPreserveSchedulerConfig (inline over the template's flag over the default), and
    controller_int_scheduler_config_test.go:1843-1905 "should not override explicitly set EPP port": kvgen
    renders its own EndpointPickerConfig and picker Service on 9002, and says so at each path; the tokenizer
    of the precise prefix scorer too (tokenizer.go:84-92)."""
    got = warnings(
        "gateway: {}\nroute: {}\nscheduler:\n  config: {ref: {name: my-config}}\n  tokenizer: {}\n"
        "  pool: {spec: {endpointPickerRef: {port: {number: 8080}}}}\n"
    )
    for path in (
        "spec.router.scheduler.config: not carried over: the scheduler config",
        "spec.router.scheduler.tokenizer: not carried over: the tokenizer KServe runs for precise prefix-cache scoring",
        "spec.router.scheduler.pool.spec.endpointPickerRef.port: not carried over",
    ):
        assert sum(f": {path}" in w for w in got) == 1, (path, got)


# kvgen's data plugins beside KServe's (the picker's metrics source and extractor, the approximate prefix index)
KVGEN_DATA_PLUGINS = {"metrics-data-source", "core-metrics-extractor", "approx-prefix-cache-producer"}
GATEWAY = {"mode": "gateway", "gateway": {"parentRefs": [{"name": "gw"}]}}


def decode_server(lora: bool = False, **extra: Any) -> dict[str, Any]:
    """A decode server of a prefill/decode pair in routing.mode gateway (its prefill server: prefill_server())."""
    values = spec(replicas=2, **{"routing": GATEWAY, **extra})
    values["disaggregation"] = {"role": "decode"}
    if lora:
        values["model"] = {**values["model"], "lora": {"adapters": [{"name": "a", "uri": "hf://org/a"}]}}
    return values


def prefill_server() -> dict[str, Any]:
    values = spec(replicas=2, name="demo-prefill")
    values["disaggregation"] = {"role": "prefill", "decodeServer": "demo"}
    return values


def decode_pair_config(lora: bool) -> dict[str, Any]:
    objs = compile_spec(decode_server(lora)).objects
    return json.loads(of_kind(objs, "ConfigMap", "demo-epp")["data"]["config.json"])


def test_the_prefill_decode_profiles_are_kserves():
    """kserve/kserve@aaac4e29 scheduler_test.go:564-610 TestSchedulerConfigTextPD: with spec.prefill the
    config declares disagg-headers-handler, prefill-filter, decode-filter, the queue, kv-cache-utilization,
    active-request and prefix-cache scorers, max-score-picker, always-disagg-pd-decider and
    disagg-profile-handler (deciders.prefill always-disagg-pd-decider); profile prefill is [prefill-filter,
    prefix-cache 3, queue 2, kv-cache-utilization 2, max-score-picker], profile decode [decode-filter,
    active-request 2, prefix-cache 3, max-score-picker]. kvgen's config is KServe's plus its data plugins."""
    config = decode_pair_config(lora=False)
    want = kserve_pd_config()
    got_plugins = [p for p in config["plugins"] if p["type"] not in KVGEN_DATA_PLUGINS]
    assert got_plugins == want["plugins"]
    assert config["schedulingProfiles"] == want["schedulingProfiles"]
    assert {p["type"] for p in config["plugins"]} - {p["type"] for p in want["plugins"]} == KVGEN_DATA_PLUGINS


@pytest.mark.parametrize("lora", [False, True])
def test_with_adapters_the_lora_scorer_follows_each_profiles_filter(lora):
    """kserve/kserve@aaac4e29 scheduler_test.go:114-184 TestSchedulerConfigTextPDLoRA: two profiles; with
    adapters lora-affinity-scorer is declared and second in each profile (after its filter) at weight 4;
    without them it is nowhere."""
    config = decode_pair_config(lora=lora)
    types = [p["type"] for p in config["plugins"]]
    profiles = config["schedulingProfiles"]
    assert len(profiles) == 2
    for profile in profiles:
        refs = profile["plugins"]
        if lora:
            assert "lora-affinity-scorer" in types
            assert refs[1] == {"pluginRef": "lora-affinity-scorer", "weight": 4}
        else:
            assert "lora-affinity-scorer" not in [r["pluginRef"] for r in refs]
    assert ("lora-affinity-scorer" in types) == lora
    assert config["schedulingProfiles"] == kserve_pd_config(lora)["schedulingProfiles"]


PD_SVC = "prefill:\n  replicas: 1\n"


def test_kserve_prefill_with_a_managed_scheduler_renders_the_prefill_decode_config():
    """kserve/kserve@aaac4e29 controller_int_scheduler_config_test.go:446-497 "should use prefill/decode scheduler
    config when prefill is configured": managed route, gateway and scheduler with spec.prefill; the scheduler
    <n>-kserve-router-scheduler's config has disagg-headers-handler, prefill-filter, decode-filter,
    disagg-profile-handler, the profiles prefill and decode, kv-cache-utilization-scorer and active-request-scorer.
    Through the KServe dialect: the decode spec (NAME) has the picker, the prefill spec (NAME-prefill) joins its
    pool."""
    out = compile_svc(llmisvc(MANAGED, extra=PD_SVC))
    decode, prefill = out.compiled
    assert of_kind(decode.objects, "Deployment", f"{N}-kserve-router-scheduler")
    config = json.loads(of_kind(decode.objects, "ConfigMap", f"{N}-epp-config")["data"]["config.json"])
    types = {p["type"] for p in config["plugins"]}
    assert {"disagg-headers-handler", "prefill-filter", "decode-filter", "disagg-profile-handler"} <= types
    assert {"kv-cache-utilization-scorer", "active-request-scorer"} <= types
    assert [p["name"] for p in config["schedulingProfiles"]] == ["prefill", "decode"]
    assert prefill.spec.disaggregation.decode_server == N
    assert not [w for w in out.input_warnings if ": spec.router: " in w.render()]
    # the pool selects both roles' pods, each labelled with its role (llm-d.ai/role, the picker's filters)
    pool = of_kind(decode.objects, "InferencePool")
    for c, role in ((decode, "decode"), (prefill, "prefill")):
        labels = [
            o
            for o in c.objects
            if o["kind"] == "Deployment" and o["metadata"]["name"] != f"{N}-kserve-router-scheduler"
        ][0]["spec"]["template"]["metadata"]["labels"]
        assert pool["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert labels["llm-d.ai/role"] == role


def test_kserve_prefill_without_kvgens_picker_is_not_routed_and_says_so():
    """A prefill/decode pair routed without kvgen's picker (no scheduler: every rule to the Service; pool.ref: an
    existing pool's picker) would leave the prefill servers out: not carried over, warned at spec.router."""
    for router in ("gateway: {}\nroute: {}\n", "gateway: {}\nroute: {}\nscheduler: {pool: {ref: {name: p}}}\n"):
        out = compile_svc(llmisvc(router, extra=PD_SVC))
        assert all(o["kind"] not in ("InferencePool", "HTTPRoute") for c in out.compiled for o in c.objects)
        (w,) = [w.render() for w in out.input_warnings if ": spec.router: " in w.render()]
        assert "only through the picker it renders" in w
        assert out.compiled[1].spec.disaggregation.decode_server is None


def test_the_decode_pod_has_kserves_routing_sidecar():
    """kserve/kserve@aaac4e29 config/llmisvcconfig/config-llm-decode-template.yaml:240-300: the init container
    llm-d-routing-sidecar, restartPolicy Always, /app/pd-sidecar on 8000 with --vllm-port=8001
    --kv-connector=nixlv2 --enable-ssrf-protection=true --inference-pool=<ns>/<n>-inference-pool, vLLM on 8001
    (:168), GET /health probes on 8000; its Role on pods and InferencePools (workload.go:40-45) under KServe's names
    (workload_single_node.go:430,471,486). kvgen's pinned sidecar (llm-d-router v0.9.0) takes every flag given."""
    (decode, _prefill) = compile_svc(llmisvc(MANAGED, extra=PD_SVC)).compiled
    pod = of_kind(decode.objects, "Deployment", N)["spec"]["template"]["spec"]
    (sidecar,) = pod["initContainers"]
    assert sidecar["name"] == "llm-d-routing-sidecar" and sidecar["restartPolicy"] == "Always"
    assert sidecar["image"] == "ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0"
    assert sidecar["command"] == ["/app/pd-sidecar"]
    args = sidecar["args"]
    for flag in ("--port=8000", "--vllm-port=8001", "--kv-connector=nixlv2", "--enable-ssrf-protection=true"):
        assert flag in args
    assert f"--inference-pool=$(POD_NAMESPACE)/{N}-inference-pool" in args
    facts = json.loads((Path(__file__).parent / "data" / "routing" / "llm-d-router-v0.9.0-pd-sidecar.json").read_text())
    names = [a.split("=", 1)[0] for a in args]
    assert set(names) <= set(facts["flags"]) and not set(names) & set(facts["deprecatedFlags"])
    assert sidecar["ports"] == [{"name": "routing", "containerPort": 8000, "protocol": "TCP"}]
    assert sidecar["livenessProbe"]["httpGet"] == {"path": "/health", "port": "routing"}
    (vllm,) = pod["containers"]
    assert "--port=8001" in vllm["args"] and vllm["ports"][0]["containerPort"] == 8001
    # the token in the sidecar only
    assert pod["automountServiceAccountToken"] is False and pod["serviceAccountName"] == f"{N}-kserve"
    assert {m["mountPath"] for m in sidecar["volumeMounts"]} == {"/var/run/secrets/kubernetes.io/serviceaccount"}
    assert not [m for m in vllm["volumeMounts"] if "serviceaccount" in m["mountPath"]]
    role = of_kind(decode.objects, "Role", f"{N}-kserve-role")
    assert [(r["apiGroups"], r["resources"], r["verbs"]) for r in role["rules"]] == [
        ([""], ["pods"], ["get", "list", "watch"]),
        (["inference.networking.k8s.io"], ["inferencepools"], ["get", "list", "watch"]),
    ]
    binding = of_kind(decode.objects, "RoleBinding", f"{N}-kserve-rb")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": f"{N}-kserve"}]
    assert of_kind(decode.objects, "ServiceAccount", f"{N}-kserve")


PAIR_CASES = {
    "decode": decode_server(),
    "decode-lora": decode_server(lora=True),
    "decode-kserve-names": decode_server(routing={**GATEWAY, "naming": "kserve"}, namespace="llm"),
    "decode-own-service-account": decode_server(pod={"serviceAccount": {"name": "mine"}}),
    "decode-picker-replicas": decode_server(routing={**GATEWAY, "picker": {"replicas": 2}}),
    "prefill": prefill_server(),
}


@pytest.mark.parametrize("case", sorted(PAIR_CASES))
def test_both_faces_render_a_prefill_decode_pair_alike(case):
    """kvgen and the chart render a native prefill/decode pair in gateway mode object for object: the routing
    sidecar's RBAC bound to the pods' own ServiceAccount when pod.serviceAccount names one (none rendered)."""
    values = PAIR_CASES[case]
    c = compile_spec(values)
    assert helm.by_identity(helm.objects_and_context(values)[0]) == helm.by_identity(c.objects)
    accounts = [o["metadata"]["name"] for o in c.objects if o["kind"] == "ServiceAccount"]
    if case == "decode-own-service-account":
        assert "mine" not in accounts
        (binding,) = [
            o for o in c.objects if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "demo-routing-sidecar"
        ]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "mine"}]
    elif case.startswith("decode"):
        assert {"demo-routing-sidecar", "demo-kserve"} & set(accounts)


PAIR_BAD = {
    "prefill-in-gateway-mode": ({**prefill_server(), "routing": GATEWAY}, "routing.mode"),
    "decode-to-the-service": (
        decode_server(routing={"mode": "gateway", "gateway": {"parentRefs": [{"name": "gw"}], "backend": "service"}}),
        "routing.gateway.backend",
    ),
    "decode-to-an-existing-pool": (
        decode_server(routing={"mode": "gateway", "gateway": {"parentRefs": [{"name": "gw"}], "poolRef": "p"}}),
        "routing.gateway.poolRef",
    ),
    "decode-scorers": (
        decode_server(routing={**GATEWAY, "picker": {"scorers": {"queue": 1}}}),
        "routing.picker.scorers",
    ),
    "decode-on-vllms-port": (decode_server(service={"port": 8001}), "service.port"),
    "decode-role-label": (decode_server(pod={"labels": {"llm-d.ai/role": "both"}}), "pod.labels.llm-d.ai/role"),
    "prefill-pool-label": (
        {**prefill_server(), "pod": {"labels": {"kvgen.dev/inference-pool": "x"}}},
        "pod.labels.kvgen.dev/inference-pool",
    ),
    "decode-server-without-prefill": (
        {**spec(replicas=2), "disaggregation": {"role": "decode", "decodeServer": "x"}},
        "disaggregation.decodeServer",
    ),
}


@pytest.mark.parametrize("case", sorted(PAIR_BAD))
def test_what_a_pair_cannot_render_is_refused_alike_on_both_faces(case):
    values, path = PAIR_BAD[case]
    found = problem_set(values)
    assert path in {p for p, _m, _h in found}, found
    assert helm.problems(values) == found


# ------------------------------------------------------------------ v1alpha1


def test_a_v1alpha1_pool_spec_is_converted():
    """kserve/kserve@aaac4e29 pkg/apis/serving/v1alpha1/llm_inference_service_conversion_test.go:275-346
    TestLLMInferenceServiceConversion_PreservesInferencePoolSpec (selector app=vllm, targetPortNumber 8000,
    extensionRef my-epp:9002 FailClose converted to v1): the failure mode is kept; the selector, target port
    and picker reference are kvgen's own, each named at its v1alpha1 path."""
    router = (
        "gateway: {}\nroute: {}\nscheduler:\n  pool:\n    spec:\n      selector: {app: vllm}\n"
        "      targetPortNumber: 8000\n      extensionRef: {name: my-epp, portNumber: 9002, failureMode: FailClose}\n"
    )
    objs = objects(router, version="v1alpha1")
    assert of_kind(objs, "InferencePool")["spec"]["endpointPickerRef"]["failureMode"] == "FailClose"
    got = warnings(router, version="v1alpha1")
    for key in ("selector", "targetPortNumber", "extensionRef.name", "extensionRef.portNumber"):
        assert sum(f": spec.router.scheduler.pool.spec.{key}: not carried over" in w for w in got) == 1, (key, got)


def test_a_v1alpha1_extension_ref_without_a_failure_mode_fails_closed():
    """kserve/kserve@aaac4e29 pkg/apis/gie/v1alpha2pool/inferencepool_conversion.go:237-268 (the v1
    endpointPickerRef's failureMode defaults to FailClose, unlike the preset's FailOpen), which the v1alpha1
    conversion (llm_inference_service_conversion.go:535-551) applies."""
    router = "gateway: {}\nroute: {}\nscheduler: {pool: {spec: {extensionRef: {name: my-epp}}}}\n"
    assert (
        of_kind(objects(router, version="v1alpha1"), "InferencePool")["spec"]["endpointPickerRef"]["failureMode"]
        == "FailClose"
    )
    assert (
        of_kind(objects(MANAGED, version="v1alpha1"), "InferencePool")["spec"]["endpointPickerRef"]["failureMode"]
        == "FailOpen"
    )


def test_a_v1alpha1_pool_ref_is_kept():
    """kserve/kserve@aaac4e29 pkg/apis/serving/v1alpha1/llm_inference_service_conversion_test.go:348-392
    TestLLMInferenceServiceConversion_PreservesPoolRef: a ref-only pool stays a ref."""
    objs = objects("gateway: {}\nroute: {}\nscheduler: {pool: {ref: {name: my-pool}}}\n", version="v1alpha1")
    assert "my-pool" in {r["name"] for r in backend_refs(of_kind(objs, "HTTPRoute"))}
    assert not [o for o in objs if o["kind"] == "InferencePool"]


# ------------------------------------------------------------------ both faces


FACES = {
    "managed": kserve_like(),
    "managed-lora": kserve_like(LORA),
    "service": kserve_like(backend="service"),
    "pool-ref": kserve_like(poolRef="my-pool"),
    "kvgen-service": spec(
        replicas=2, routing={"mode": "gateway", "gateway": {"parentRefs": [{"name": "gw"}], "backend": "service"}}
    ),
    "naming-only": spec(replicas=2, routing={"naming": "kserve"}),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(FACES))
def test_both_faces_render_kserves_routing_alike(case):
    assert_same_render(FACES[case])


BAD = {
    "picker-without-a-picker": (kserve_like(backend="service"), "routing.picker", "backend service renders none"),
    "rules-kserve-without-namespace": (kserve_like(), "routing.gateway.rules", "the spec has none"),
    "name-too-long-for-kserve": ({**kserve_like(), "name": "a" * 40}, "routing.naming", "MD5 hash"),
    "model-name-with-prefix-rules": (
        spec(replicas=2, routing={"mode": "gateway", "gateway": {"parentRefs": [{"name": "gw"}], "modelName": "m"}}),
        "routing.gateway.modelName",
        "the rules are prefix",
    ),
}
BAD["picker-without-a-picker"][0]["routing"]["picker"] = {"replicas": 2}
del BAD["rules-kserve-without-namespace"][0]["namespace"]


@pytest.mark.parametrize("case", sorted(BAD))
def test_what_cannot_render_is_the_same_problem_on_both_faces(case):
    """routing.gateway's backend, rules and modelName, and routing.naming kserve's names (kvgen's own checks,
    docs/routing.md), refused at their path alike by kvgen and the chart."""
    values, path, words = BAD[case]
    ours = problem_set(values)
    ((where, message, _h),) = ours
    assert where == path and words in message
    assert helm.problems(values) == ours


@pytest.mark.heavy
def test_explain_names_the_routes_backend(tmp_path):
    """kvgen's own: `kvgen explain` follows the route to the backend it renders (the Service, or the pool
    poolRef names), and with the Service the cache hit path has no prefix routing."""

    path = tmp_path / "svc.yaml"
    path.write_text(llmisvc("route: {}\n"))
    result = run_kvgen("explain", str(path), "--instance", INSTANCE)
    assert result.returncode == 0, result.stderr
    assert (
        f"HTTPRoute {N}-kserve-route -> Service {N}-kserve-workload-svc: kube-proxy spreads requests" in result.stdout
    )
    assert "cache hit path: none: each replica holds a 1/N share" in result.stdout
    path.write_text(llmisvc("route: {}\nscheduler: {pool: {ref: {name: shared-pool}}}\n"))
    result = run_kvgen("explain", str(path), "--instance", INSTANCE)
    assert "-> InferencePool shared-pool: its own Endpoint Picker (routing.gateway.poolRef)" in result.stdout
