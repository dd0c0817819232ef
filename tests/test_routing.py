"""routing (docs/routing.md, issue 25): the Service's session affinity, and the gateway mode's
InferencePool, Endpoint Picker and HTTPRoute, on both faces; the picker's flags and config checked
against the pinned llm-d router's own source and sample configs (tests/data/routing/, each with its
source)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import helm
import pytest
from conftest import ROOT, compile_spec, problem_set, spec
from kserve_inputs import KSERVE_DEFAULT_PROFILE, KSERVE_PD_SIDECAR_COMMAND, kserve_pd_config
from parity import assert_same_render
from ruamel.yaml import YAML

from kvgen.data import catalog, kube

DATA = Path(__file__).parent / "data" / "routing"
FACTS = json.loads((DATA / "llm-d-router-v0.9.0.json").read_text(encoding="utf-8"))
SAMPLES = sorted((DATA / "llm-d-router-v0.9.0").glob("*.yaml"))
SIDECAR = json.loads((DATA / "llm-d-router-v0.9.0-pd-sidecar.json").read_text(encoding="utf-8"))
load = YAML(typ="safe", pure=True).load

GATEWAY: dict[str, Any] = {"mode": "gateway", "gateway": {"parentRefs": [{"name": "inference-gateway"}]}}
LMCACHE_TIERS = {"cpu": "48Gi", "secondary": [{"fileSystem": {"emptyDir": {"size": "200Gi"}}}]}


def routed(**routing: Any) -> dict[str, Any]:
    return spec(replicas=3, routing={**copy.deepcopy(GATEWAY), **routing})


def of_kind(objs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return found


def picker_config(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return json.loads(of_kind(objs, "ConfigMap", "demo-epp")["data"]["config.json"])


def picker_args(objs: list[dict[str, Any]]) -> list[str]:
    (c,) = of_kind(objs, "Deployment", "demo-epp")["spec"]["template"]["spec"]["containers"]
    return c["args"]


# ----------------------------------------------------------------------------- against upstream


def test_the_facts_are_of_the_pinned_picker():
    pin = catalog.runtime()["picker"]["image"]
    assert pin["repository"] == "ghcr.io/llm-d/llm-d-router-endpoint-picker"
    assert pin["tag"] == FACTS["tag"]
    assert len(FACTS["commit"]) == 40
    assert "--metrics-endpoint-auth" in FACTS["flags"]  # what lets kvgen skip the TokenReview binding


@pytest.mark.parametrize("replicas", [1, 2])
def test_every_picker_flag_is_one_the_pinned_router_reads(replicas):
    """Each argument names a flag of llm-d-router v0.9.0's flag set (pkg/epp/server/options.go AddFlags,
    read from its source into the fixture), none of them deprecated."""
    args = picker_args(compile_spec(routed(picker={"replicas": replicas})).objects)
    names = [a.split("=", 1)[0] for a in args]
    unknown = [n for n in names if n not in FACTS["flags"]]
    assert not unknown, f"not flags of llm-d-router {FACTS['tag']}: {unknown}"
    assert not set(names) & set(FACTS["deprecatedFlags"])
    assert "--metrics-endpoint-auth=false" in args
    assert ("--ha-enable-leader-election" in args) == (replicas > 1)


def config_problems(config: dict[str, Any]) -> list[str]:
    """What the llm-d router's loader would refuse in an EndpointPickerConfig, as far as the facts
    tell: a plugin type its registry lacks, a pluginRef to no declared plugin, a parameter its
    config struct has no field for (the loader decodes parameters strictly)."""
    out = []
    declared = {p.get("name", p["type"]) for p in config.get("plugins", [])}
    for p in config.get("plugins", []):
        if p["type"] not in FACTS["pluginTypes"]:
            out.append(f"plugin type {p['type']} is not registered")
        fields = FACTS["parameters"].get(p["type"], {}).get("fields")
        if fields is not None and set(p.get("parameters") or {}) - set(fields):
            out.append(f"{p['type']}: unknown parameters {sorted(set(p['parameters']) - set(fields))}")
    for profile in config.get("schedulingProfiles", []):
        for ref in profile["plugins"]:
            if ref["pluginRef"] not in declared:
                out.append(f"profile {profile['name']}: pluginRef {ref['pluginRef']} is not declared")
    return out


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_the_check_accepts_upstreams_own_samples(sample):
    """The check is upstream's contract: every sample config the pinned router ships passes it."""
    assert config_problems(load(sample.read_text(encoding="utf-8"))) == []


def test_the_check_refuses_what_the_router_would():
    bad = {
        "plugins": [{"type": "prefix-cache-scorerr"}, {"type": "approx-prefix-cache-producer", "parameters": {"x": 1}}],
        "schedulingProfiles": [{"name": "default", "plugins": [{"pluginRef": "queue-scorer"}]}],
    }
    assert len(config_problems(bad)) == 3


@pytest.mark.parametrize(
    "values",
    [
        routed(),
        spec(replicas=3, kvCacheOffloading=LMCACHE_TIERS, routing=GATEWAY),
        routed(picker={"scorers": {"noHitLru": 0, "queue": 5}}),
        spec(replicas=2, kvCacheOffloading={"backend": "native", "cpu": "100Gi"}, routing=GATEWAY),
    ],
    ids=["default", "lmcache-tiers", "weights", "native"],
)
@pytest.mark.heavy
def test_the_picker_config_is_shaped_as_upstreams_samples(values):
    config = picker_config(compile_spec(values).objects)
    samples = [load(p.read_text(encoding="utf-8")) for p in SAMPLES]
    assert {(s["apiVersion"], s["kind"]) for s in samples} == {(config["apiVersion"], config["kind"])}
    assert set(config) <= set().union(*samples)
    assert config_problems(config) == []
    # every plugin kvgen declares is one the upstream samples use
    assert {p["type"] for p in config["plugins"]} <= {p["type"] for s in samples for p in s["plugins"]}


def test_default_weights_are_kserves_default_profile():
    """KServe v0.20's default scheduler profile (pkg/controller/v1alpha2/llmisvc/scheduler.go
    schedulerConfigText; asserted by its TestSchedulerConfigTextDefault): queue 2, kv-cache-utilization 2,
    prefix-cache 3, no-hit-lru 2, then the max-score picker."""
    (profile,) = picker_config(compile_spec(routed()).objects)["schedulingProfiles"]
    assert [(p["pluginRef"], p.get("weight")) for p in profile["plugins"]] == KSERVE_DEFAULT_PROFILE


def test_a_zero_weight_leaves_the_scorer_out():
    config = picker_config(compile_spec(routed(picker={"scorers": {"prefixCache": 0}})).objects)
    types = [p["type"] for p in config["plugins"]]
    assert "prefix-cache-scorer" not in types and "approx-prefix-cache-producer" not in types


def producer(values: dict[str, Any]) -> dict[str, Any]:
    (p,) = [
        p for p in picker_config(compile_spec(values).objects)["plugins"] if p["type"] == "approx-prefix-cache-producer"
    ]
    return p["parameters"]


def test_the_prefix_block_follows_lmcaches_chunk_or_vllms_block():
    assert producer(spec(replicas=2, kvCacheOffloading=LMCACHE_TIERS, routing=GATEWAY))["blockSizeTokens"] == 256
    # vLLM's 16-token block, raised to the router's floor of 64 (approximateprefix/plugin.go:50,110)
    native = spec(replicas=2, kvCacheOffloading={"backend": "native", "cpu": "100Gi"}, routing=GATEWAY)
    assert producer(native)["blockSizeTokens"] == 64
    assert producer(routed(picker={"blockSizeTokens": 128}))["blockSizeTokens"] == 128
    assert producer(routed())["autoTune"] is False


def test_the_index_grows_with_the_servers_tiers():
    small = producer(spec(replicas=2, kvCacheOffloading={"cpu": "48Gi"}, routing=GATEWAY))["lruCapacityPerServer"]
    big = producer(spec(replicas=2, kvCacheOffloading=LMCACHE_TIERS, routing=GATEWAY))["lruCapacityPerServer"]
    assert 0 < small < big
    assert producer(routed(picker={"lruCapacityPerServer": 5000}))["lruCapacityPerServer"] == 5000


def test_the_sidecar_facts_are_of_the_pinned_sidecar_of_the_pickers_release():
    """runtime.yaml picker.sidecar: llm-d's pd-sidecar from the picker's own release (the prefill header both
    read is one constant of that release), its entrypoint and KV connector as the facts read them."""
    rt = catalog.runtime()["picker"]
    pin = rt["sidecar"]
    assert pin["image"]["repository"] == SIDECAR["image"] == "ghcr.io/llm-d/llm-d-router-disagg-sidecar"
    assert pin["image"]["tag"] == SIDECAR["tag"] == rt["image"]["tag"] == FACTS["tag"]
    assert SIDECAR["commit"] == FACTS["commit"] and SIDECAR["repository"] == FACTS["repository"]
    assert pin["command"] == SIDECAR["entrypoint"]
    assert pin["kvConnector"] in SIDECAR["kvConnectors"]["values"]
    assert set(SIDECAR["deprecatedFlags"]) <= set(SIDECAR["flags"])


def test_kserves_sidecar_command_names_flags_the_pinned_sidecar_defines():
    """KServe's decode template (config-llm-decode-template.yaml:278-284) passes only flags v0.9.0's pd-sidecar
    defines, none deprecated, and its ports are the sidecar's defaults (options.go:91-92): the flags a
    rendered sidecar would take."""
    names = [a.split("=", 1)[0] for a in KSERVE_PD_SIDECAR_COMMAND[1:]]
    assert [n for n in names if n not in SIDECAR["flags"]] == []
    assert not set(names) & set(SIDECAR["deprecatedFlags"])
    assert "--port=" + SIDECAR["defaults"]["--port"][0] in KSERVE_PD_SIDECAR_COMMAND
    assert "--vllm-port=" + SIDECAR["defaults"]["--vllm-port"][0] in KSERVE_PD_SIDECAR_COMMAND
    # KServe names the v1alpha2 pool group; the sidecar reads either (allowlist.go:46-49)
    assert "inference.networking.x-k8s.io" in SIDECAR["poolGroups"]
    assert "inference.networking.k8s.io" in SIDECAR["poolGroups"]


@pytest.mark.parametrize("lora", [False, True])
def test_kserves_prefill_decode_profiles_load_in_the_pinned_picker(lora):
    """KServe's P/D EndpointPickerConfig (scheduler.go:540-591) as the pinned picker's loader reads it: every
    plugin type registered in llm-d-router v0.9.0, every pluginRef declared, the profile handler's
    parameters fields of its config struct."""
    assert config_problems(kserve_pd_config(lora)) == []


# ----------------------------------------------------------------------------- objects


def test_routing_none_renders_todays_objects():
    assert compile_spec(spec(routing={"mode": "none"})).objects == compile_spec(spec()).objects


def test_session_affinity_pins_a_client_to_a_replica():
    objs = compile_spec(
        spec(replicas=2, routing={"mode": "sessionAffinity", "sessionAffinity": {"timeoutSeconds": 600}})
    ).objects
    svc = of_kind(objs, "Service")
    assert svc["spec"]["sessionAffinity"] == "ClientIP"
    assert svc["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 600}}
    default = of_kind(compile_spec(spec(replicas=2, routing={"mode": "sessionAffinity"})).objects, "Service")
    assert default["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] == 10800


def test_gateway_renders_the_pool_its_picker_and_the_route():
    objs = compile_spec(routed()).objects
    pool = of_kind(objs, "InferencePool")
    assert pool["spec"]["selector"]["matchLabels"] == of_kind(objs, "Service", "demo")["spec"]["selector"]
    assert pool["spec"]["targetPorts"] == [{"number": 8000}]
    assert pool["spec"]["endpointPickerRef"] == {
        "kind": "Service",
        "name": "demo-epp",
        "port": {"number": 9002},
        "failureMode": "FailOpen",
    }
    route = of_kind(objs, "HTTPRoute")
    assert route["spec"]["parentRefs"] == [
        {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "inference-gateway"}
    ]
    assert route["spec"]["rules"][0]["backendRefs"][0]["kind"] == "InferencePool"
    role = of_kind(objs, "Role")
    assert not any("leases" in r["resources"] for r in role["rules"])
    assert not [o for o in objs if o["kind"].startswith("Cluster")]  # namespaced only (--metrics-endpoint-auth=false)
    picker = of_kind(objs, "Deployment", "demo-epp")
    assert picker["spec"]["strategy"] == {"type": "Recreate"}
    # the picker's pods are not the servers': neither Service selects the other's
    assert of_kind(objs, "Service", "demo-epp")["spec"]["selector"] != pool["spec"]["selector"]["matchLabels"]


def test_more_than_one_picker_elects_a_leader():
    objs = compile_spec(routed(picker={"replicas": 2})).objects
    role = of_kind(objs, "Role")
    assert any(r["resources"] == ["leases"] and r["apiGroups"] == ["coordination.k8s.io"] for r in role["rules"])
    (c,) = of_kind(objs, "Deployment", "demo-epp")["spec"]["template"]["spec"]["containers"]
    assert c["readinessProbe"]["grpc"]["service"] == "readiness"
    assert c["livenessProbe"]["grpc"]["service"] == "liveness"


def test_a_multi_node_server_routes_to_its_leaders_only():
    """Only rank 0 of a server serves the API: the pool selects it, not the headless ranks."""
    for engine in ("statefulset", "leaderworkerset"):
        values = routed()
        values.update(
            replicas=1 if engine == "statefulset" else 2,
            parallelism={"tensor": 16, "nodes": 2},
            multiNode={"engine": engine},
            instance={"type": "p5.48xlarge"},
        )
        objs = compile_spec(values).objects
        selector = of_kind(objs, "InferencePool")["spec"]["selector"]["matchLabels"]
        assert selector == of_kind(objs, "Service", "demo")["spec"]["selector"]
        assert "leader" in json.dumps(selector) or "worker-index" in json.dumps(selector), selector


def test_the_objects_are_validated_against_the_vendored_crds():
    objs = compile_spec(routed()).objects
    for o in objs:
        if o["kind"] in ("InferencePool", "HTTPRoute"):
            assert kube.validate_object(o, "1.33") == []
    pool = copy.deepcopy(of_kind(objs, "InferencePool"))
    pool["spec"]["targetPorts"] = [{"number": "8000"}]
    pool["spec"]["endpointPickerRef"]["failureMode"] = "Maybe"
    assert len(kube.validate_object(pool, "1.33")) == 2
    route = copy.deepcopy(of_kind(objs, "HTTPRoute"))
    route["spec"]["rules"][0]["backendRef"] = []
    assert kube.validate_object(route, "1.33")


def test_the_route_times_out_as_the_inferencepool_charts_do_and_the_pool_leaves_app_protocol_out():
    """Issue 32 (5): with no timeout Envoy Gateway cuts a generation at its 15 s default (504); the GIE and
    llm-d charts set 300s. appProtocol http is the CRD's default and exists only from GIE v1.4's CRDs."""
    objs = compile_spec(routed()).objects
    (rule,) = of_kind(objs, "HTTPRoute")["spec"]["rules"]
    assert rule["timeouts"] == {"request": catalog.runtime()["picker"]["defaultRequestTimeout"]} == {"request": "300s"}
    assert "appProtocol" not in of_kind(objs, "InferencePool")["spec"]
    (rule,) = of_kind(
        compile_spec(routed(gateway={**GATEWAY["gateway"], "requestTimeout": "1h"})).objects, "HTTPRoute"
    )["spec"]["rules"]
    assert rule["timeouts"] == {"request": "1h"}
    assert not [o for o in objs if o["kind"] in ("DestinationRule", "HealthCheckPolicy", "GCPBackendPolicy")]


def test_behind_istio_the_picker_is_called_over_tls_without_verifying_its_certificate():
    """Issue 32 (4): the picker serves gRPC with a self-signed certificate; without the inferencepool charts'
    DestinationRule Istio's call fails and FailOpen routes with no prefix awareness, silently."""
    values = routed(gateway={**GATEWAY["gateway"], "provider": "istio"})
    objs = compile_spec({**values, "namespace": "llm"}).objects
    rule = of_kind(objs, "DestinationRule")
    service = of_kind(objs, "Service", "demo-epp")
    assert rule["apiVersion"] == "networking.istio.io/v1"
    assert rule["spec"] == {
        "host": f"{service['metadata']['name']}.llm.svc.cluster.local",
        "trafficPolicy": {"tls": {"mode": "SIMPLE", "insecureSkipVerify": True}},
    }
    assert (
        of_kind(compile_spec(values).objects, "DestinationRule")["spec"]["host"] == "demo-epp"
    )  # the rule's namespace
    assert kube.validate_object(rule, "1.33") == []
    broken = copy.deepcopy(rule)
    broken["spec"]["trafficPolicy"]["tls"]["mode"] = "LOOSE"
    assert kube.validate_object(broken, "1.33")  # the vendored Istio CRD (files/crds)


def test_on_gke_the_pool_gets_its_health_check_and_backend_policies():
    objs = compile_spec(routed(gateway={**GATEWAY["gateway"], "provider": "gke"})).objects
    target = {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "demo-pool"}
    health, backend = of_kind(objs, "HealthCheckPolicy"), of_kind(objs, "GCPBackendPolicy")
    assert health["spec"] == {
        "targetRef": target,
        "default": {
            "timeoutSec": 2,
            "checkIntervalSec": 2,
            "config": {"type": "HTTP", "httpHealthCheck": {"requestPath": "/health", "port": 8000}},
        },
    }
    assert backend["spec"] == {"targetRef": target, "default": {"timeoutSec": 300, "logging": {"enabled": True}}}
    assert "timeouts" not in of_kind(objs, "HTTPRoute")["spec"]["rules"][0]  # GKE's timeout is the policy's
    assert kube.validate_object(health, "1.33") == [] and kube.validate_object(backend, "1.33") == []


def test_kserve_input_on_its_default_gateway_is_behind_istio():
    """KServe's seed (spec.router gateway: {}) routes through KServe's default Gateway, an Istio one."""
    from kvgen.app import compiler

    text = (ROOT / "examples" / "seeds" / "kserve-qwen2-7b.yaml").read_text(encoding="utf-8")
    (compiled,) = compiler.compile_text(text, "kserve-qwen2-7b.yaml")
    assert of_kind(compiled.objects, "DestinationRule")["spec"]["trafficPolicy"]["tls"]["mode"] == "SIMPLE"
    assert compiled.spec.routing.gateway is not None and compiled.spec.routing.gateway.provider == "istio"


# ----------------------------------------------------------------------------- both faces

FACES = {
    "gateway": routed(),
    "gateway-options": routed(
        picker={
            "replicas": 3,
            "failureMode": "FailClose",
            "scorers": {"queue": 1, "noHitLru": 0},
            "blockSizeTokens": 512,
        },
        gateway={
            "parentRefs": [{"name": "gw", "namespace": "infra", "sectionName": "https"}],
            "hostnames": ["llm.example.com"],
            "pathPrefix": "/v1",
            "requestTimeout": "300s",
        },
    ),
    "gateway-lmcache-tiers": spec(replicas=3, kvCacheOffloading=LMCACHE_TIERS, routing=GATEWAY),
    "gateway-native": spec(replicas=2, kvCacheOffloading={"backend": "native", "cpu": "100Gi"}, routing=GATEWAY),
    "gateway-registry": {**routed(), "images": {"registry": "registry.example.com"}},
    "gateway-istio": {**routed(gateway={**GATEWAY["gateway"], "provider": "istio"}), "namespace": "llm"},
    "gateway-istio-no-namespace": routed(gateway={**GATEWAY["gateway"], "provider": "istio"}),
    "gateway-gke": routed(gateway={**GATEWAY["gateway"], "provider": "gke"}),
    "gateway-gke-timeout": routed(gateway={**GATEWAY["gateway"], "provider": "gke", "requestTimeout": "10m"}),
    "session-affinity": spec(
        replicas=2, routing={"mode": "sessionAffinity", "sessionAffinity": {"timeoutSeconds": 60}}
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(FACES))
def test_both_faces_render_routing_alike(case):
    assert_same_render(FACES[case])


PROBLEMS = {
    "all-at-once": spec(
        replicas=2,
        routing={
            "mode": "none",
            "gateway": {"parentRefs": [{"name": "gw"}]},
            "picker": {"replicas": 2},
            "sessionAffinity": {},
        },
    ),
    "gateway-needs-parent-refs": spec(replicas=2, routing={"mode": "gateway"}),
    "gateway-and-no-prefix-cache": spec(
        replicas=2, routing=GATEWAY, vllm={"extraArgs": ["--max-num-seqs=8", "--no_enable_prefix_caching"]}
    ),
    "gateway-on-a-prefill-server": spec(replicas=2, routing=GATEWAY, disaggregation={"role": "prefill"}),
}


@pytest.mark.parametrize("case", sorted(PROBLEMS))
def test_bad_routing_is_the_same_problem_on_both_faces(case):
    ours = problem_set(PROBLEMS[case])
    assert ours, "kvgen accepts this spec"
    assert helm.problems(PROBLEMS[case]) == ours


def test_every_misplaced_field_is_reported_at_once():
    paths = {p for p, _m, _h in problem_set(PROBLEMS["all-at-once"])}
    assert paths == {"routing.gateway", "routing.picker", "routing.sessionAffinity"}
    (found,) = problem_set(PROBLEMS["gateway-and-no-prefix-cache"])
    assert found[0] == "vllm.extraArgs[1]" and "--no-enable-prefix-caching" in found[2]
    assert {p for p, _m, _h in problem_set(PROBLEMS["gateway-needs-parent-refs"])} == {"routing.gateway.parentRefs"}


@pytest.mark.parametrize("mode", ["gateway", "sessionAffinity"])
def test_routing_one_replica_warns_alike(mode):
    values = spec(routing=GATEWAY if mode == "gateway" else {"mode": mode})
    warnings = compile_spec(values).plan.warnings
    assert [w for w in warnings if w.startswith(f"routing.mode {mode} with one replica")]
    assert helm.notes_warnings(helm.notes(values)) == warnings
    assert not [w for w in compile_spec({**values, "replicas": 2}).plan.warnings if w.startswith("routing.")]


def test_the_example_validates_and_routes_three_replicas():
    objs = compile_spec(load((ROOT / "examples" / "routing-gateway.yaml").read_text(encoding="utf-8"))).objects
    assert of_kind(objs, "Deployment", "llama-8b-routed")["spec"]["replicas"] == 3
    assert {o["kind"] for o in objs} >= {"InferencePool", "HTTPRoute", "Role", "RoleBinding"}
