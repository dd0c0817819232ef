"""KServe ``spec.router`` (kserve aaac4e29, pkg/apis/serving/v1alpha2/llm_inference_service_types.go
RouterSpec; the controller in pkg/controller/v1alpha2/llmisvc/) read into kvgen's ``routing`` section, so
that kvgen renders what KServe's controller renders (tests/test_kserve_router_parity.py, test by test).

- KServe input gets KServe's object names (``routing.naming: kserve``, :func:`naming`), where they fit in
  63 characters unhashed.
- A managed route (``route`` without ``http.refs``), with or without ``gateway`` and ``scheduler``, is
  ``routing.mode: gateway`` with KServe's route preset's rules (``gateway.rules: kserve``, ``modelName``
  from ``spec.model.name``; kvgen's own rule without ``metadata.namespace``, which its paths name).
  ``gateway.refs`` are the ``parentRefs`` (sectionName kept), else KServe's default Gateway
  ``kserve/kserve-ingress-gateway`` (config/configmap/inferenceservice.yaml) behind Istio.
- The backend: no ``scheduler``, the workload Service (``gateway.backend: service``, config_merge.go:429-444);
  ``scheduler.pool.ref``, that pool (``gateway.poolRef``, config_merge.go:446-459); else kvgen's pool and
  picker with ``scheduler.replicas`` and the pool spec's failure mode (a v1alpha1 pool spec converted as
  KServe's webhook converts it: FailClose when its extensionRef sets none).
- What kvgen does not render (a scheduler config, template, labels, annotations, the tokenizer, the user's
  own HTTPRoute, a custom route spec, traffic groups, an Ingress, a prefill/decode pair routed without kvgen's
  picker) is warned at its path with what kvgen renders instead.
- With ``spec.prefill`` and kvgen's picker: the decode spec's picker has KServe's prefill/decode profiles and its
  pods llm-d's routing sidecar (the layout's, docs/routing.md); the prefill spec joins its pool
  (``disaggregation.decodeServer``, set by kserve.py).
- The combinations KServe's webhook rejects (llm_inference_service_validation.go) are errors.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Path, shown
from kvgen.input.dialects.core import SpecBuilder, Tracker, integer, mapping

# KServe's default Gateway: GlobalConfig.IngressGatewayName/Namespace (pkg/constants/constants.go:193)
DEFAULT_GATEWAY = {"name": "kserve-ingress-gateway", "namespace": "kserve"}
FAIL_MODES = ("FailOpen", "FailClose")
INSTEAD = "kvgen renders KServe's managed HTTPRoute only (routing.mode gateway, docs/routing.md)"


def _refs(t: Tracker, path: Path, value: Any) -> list[tuple[dict[str, Any], Path]]:
    if value is None:
        return []
    if not isinstance(value, list):
        t.error(path, "must be a list of references ({name, namespace})")
        return []
    out = []
    for i, ref in enumerate(value):
        rpath = (*path, i)
        if not isinstance(ref, dict) or not ref.get("name"):
            t.error(rpath, "a reference needs a name")
            continue
        out.append((ref, rpath))
    return out


def naming(t: Tracker, b: SpecBuilder, name: str) -> None:
    """routing.naming kserve: KServe's controller's object names, where they fit in 63 characters unhashed."""
    if not name:
        return
    if len(name) + len(KSERVE_LONGEST_SUFFIX) > KSERVE_NAME_MAX:
        t.warn(
            ("metadata", "name"),
            f"kvgen names the objects its own way ({name}, {name}-epp, {name}-pool): KServe's controller shortens "
            f"names over {KSERVE_NAME_MAX} characters ({name}{KSERVE_LONGEST_SUFFIX}) with an MD5 hash, which kvgen "
            "does not reproduce",
            f"a name of at most {KSERVE_NAME_MAX - len(KSERVE_LONGEST_SUFFIX)} characters keeps KServe's names",
            covers=False,
        )
        return
    b.set(("routing", "naming"), "kserve", ("metadata", "name"), use=False)


def _key(ref: dict[str, Any], namespace: str) -> tuple[str, str, str]:
    return (str(ref.get("name")), str(ref.get("namespace") or namespace), str(ref.get("sectionName") or ""))


# KServe's controller's names (kmeta.ChildName, plain NAME+suffix up to 63 characters, hashed beyond):
# routing.naming kserve; the longest one kvgen renders is the scheduler's Deployment
KSERVE_NAME_MAX = 63
KSERVE_LONGEST_SUFFIX = "-kserve-router-scheduler"
# v1alpha1 scheduler.pool.spec is GIE's v1alpha2 InferencePoolSpec (kserve aaac4e29
# pkg/apis/gie/v1alpha2pool/inferencepool_types.go:73-101), converted to v1 by the conversion webhook
# (inferencepool_conversion.go:33-63, :237-268): a missing extensionRef.failureMode becomes FailClose, a
# missing portNumber 9002
V1ALPHA1_POOL_KEYS = ("selector", "targetPortNumber", "extensionRef")
V1ALPHA1_FAILURE_MODE = "FailClose"


def _pool_spec(t: Tracker, spath: Path, pool: dict[str, Any], v1alpha1: bool) -> tuple[str | None, Path | None, bool]:
    """scheduler.pool.spec: the failure mode it sets (v1alpha1's converted as KServe's webhook converts it), its
    path, and whether it is valid; every other field warned at its path."""
    ppath = (*spath, "pool", "spec")
    pool_spec = mapping(t, ppath, pool.get("spec"))
    legacy = v1alpha1 and any(k in pool_spec for k in V1ALPHA1_POOL_KEYS)
    ref_key = "extensionRef" if legacy else "endpointPickerRef"
    epp = mapping(t, (*ppath, ref_key), pool_spec.get(ref_key))
    mode = epp.get("failureMode")
    mode_path: Path | None = (*ppath, ref_key, "failureMode")
    if mode is not None and mode not in FAIL_MODES:
        t.error((*ppath, ref_key, "failureMode"), f"{shown(mode)} is not a failure mode", "use FailOpen or FailClose")
        return None, None, False
    if legacy and ref_key in pool_spec and mode is None:
        # inferencepool_conversion.go:237-268: the v1 endpointPickerRef's failureMode defaults to FailClose
        mode, mode_path = V1ALPHA1_FAILURE_MODE, (*ppath, ref_key)
    own = (
        "kvgen renders its own InferencePool (the Service's pods, target port service.port)"
        if not legacy
        else "kvgen renders its own InferencePool (the Service's pods, target port service.port); the v1alpha1 "
        "pool spec converts to v1 as selector.matchLabels, targetPorts[0].number and endpointPickerRef"
    )
    for key in pool_spec:
        if key != ref_key:
            t.warn((*ppath, key), f"not carried over: {own}")
    for key in epp:
        if key != "failureMode":
            t.warn(
                (*ppath, ref_key, key),
                "not carried over: kvgen's InferencePool points at its own picker Service (routing.naming kserve: "
                "NAME-epp-service, port 9002)",
            )
    return mode, mode_path, True


def convert(
    t: Tracker,
    b: SpecBuilder,
    value: Any,
    path: Path,
    name: str,
    namespace: str,
    prefill: bool,
    *,
    model_name: str | None = None,
    namespace_given: bool = True,
    v1alpha1: bool = False,
) -> bool:
    """Read ``spec.router`` at ``path`` into ``b``'s routing section (or warn why not). ``model_name``: KServe's
    spec.model.name when it is not metadata.name; ``namespace_given``: metadata.namespace is set (KServe's route
    names it in its paths); ``v1alpha1``: the resource is serving.kserve.io/v1alpha1 (its pool spec's shape).
    True when kvgen's picker is rendered (a prefill/decode pair is then routed by its prefill/decode profiles)."""
    router = mapping(t, path, value)
    route_v, gateway_v, sched_v = router.get("route"), router.get("gateway"), router.get("scheduler")
    route = mapping(t, (*path, "route"), route_v) if route_v is not None else None
    gateway = mapping(t, (*path, "gateway"), gateway_v) if gateway_v is not None else None
    sched = mapping(t, (*path, "scheduler"), sched_v) if sched_v is not None else None
    http = mapping(t, (*path, "route", "http"), (route or {}).get("http"))
    http_path = (*path, "route", "http")
    ok = _validate(t, router, route, gateway, sched, http, path, namespace)

    gw_refs = _refs(t, (*path, "gateway", "refs"), (gateway or {}).get("refs"))
    if "ingress" in router:
        t.warn(
            (*path, "ingress"),
            "not carried over: kvgen renders no Ingress; with spec.router.route it renders an HTTPRoute (routing.mode "
            "gateway)",
        )
    if http.get("refs") is not None:
        t.warn(
            (*http_path, "refs"),
            "not carried over: kvgen does not attach to your own HTTPRoute; " + INSTEAD,
        )
    if http.get("spec") is not None:
        t.warn(
            (*http_path, "spec"),
            "not carried over: a custom HTTPRoute spec; kvgen renders KServe's managed route (routing.gateway.rules "
            "kserve)",
        )
    for key in ("group", "weight"):
        if route is not None and key in route:
            t.warn((*path, "route", key), "not carried over: kvgen renders no traffic groups (one HTTPRoute)")
    pool_ref: tuple[str, Path] | None = None
    mode: str | None = None
    mode_path: Path | None = None
    if sched is not None:
        spath = (*path, "scheduler")
        for key, what in (
            (
                "config",
                "the scheduler config; kvgen renders its own EndpointPickerConfig (KServe's default profile's "
                "scorers, routing.picker.scorers; the approximate prefix index, not the precise one with its "
                "token-producer)",
            ),
            (
                "template",
                "the scheduler pod template; kvgen renders its own picker Deployment (llm-d router v0.9.0)",
            ),
            ("labels", "the scheduler pod's labels; kvgen labels its picker itself"),
            ("annotations", "the scheduler pod's annotations"),
            (
                "tokenizer",
                "the tokenizer KServe runs for precise prefix-cache scoring (NAME-tokenizer); kvgen's picker "
                "scores prefixes approximately (approx-prefix-cache-producer) and renders no tokenizer",
            ),
        ):
            if key in sched:
                t.warn((*spath, key), f"not carried over: {what}")
        pool = mapping(t, (*spath, "pool"), sched.get("pool"))
        ref = pool.get("ref")
        if ref is not None:
            ref_path = (*spath, "pool", "ref")
            if isinstance(ref, dict) and isinstance(ref.get("name"), str) and ref["name"]:
                pool_ref = (ref["name"], (*ref_path, "name"))
                for key in ref:
                    if key != "name":
                        t.warn(
                            (*ref_path, key), "not carried over: the route's backend names the pool in its namespace"
                        )
            else:
                t.error(ref_path, "needs the InferencePool's name", "set ref.name")
                ok = False
        mode, mode_path, valid = _pool_spec(t, spath, pool, v1alpha1)
        ok = ok and valid

    if not ok:
        return False
    if prefill and (route is None or http.get("refs") is not None or sched is None or pool_ref is not None):
        t.warn(
            path,
            "not carried over: kvgen routes a prefill/decode pair only through the picker it renders (a managed "
            "route with a scheduler, no pool.ref), with KServe's prefill/decode profiles and the decode pod's "
            "routing sidecar; kvgen renders a ClusterIP Service per role",
        )
        return False
    if route is None or http.get("refs") is not None:
        if "ingress" in router and route is None and gateway is None:
            return False
        why = (
            "without spec.router.route KServe renders no managed HTTPRoute"
            if route is None
            else "with route.http.refs KServe renders no managed HTTPRoute"
        )
        t.warn(
            path,
            f"not carried over: {why}; kvgen renders a ClusterIP Service (routing.mode gateway needs the route: it "
            "renders no InferencePool or picker without one)",
        )
        return False

    b.set(("routing", "mode"), "gateway", path, use=False)
    t.use((*path, "route"))
    t.use((*path, "gateway"))
    if gw_refs:
        for ref, rpath in gw_refs:
            parent = {"name": str(ref["name"])}
            if ref.get("namespace"):
                parent["namespace"] = str(ref["namespace"])
            if ref.get("sectionName"):
                parent["sectionName"] = str(ref["sectionName"])
            b.append(("routing", "gateway", "parentRefs"), parent, rpath)
    else:
        # gateway {} or none: the route preset's parentRef (config-llm-router-route.yaml:27-33)
        src = (*path, "gateway") if gateway is not None else (*path, "route")
        b.set(("routing", "gateway", "parentRefs"), [dict(DEFAULT_GATEWAY)], src, use=False)
        b.note(
            "routing.gateway.parentRefs kserve/kserve-ingress-gateway: KServe's default Gateway for gateway: {} "
            "(ingressGatewayName in the inferenceservice-config ConfigMap); change it if your cluster's differs"
        )
        # KServe installs that Gateway with gatewayClassName istio: Istio calls the picker over TLS, which
        # needs the DestinationRule of provider istio (without it FailOpen routes with no prefix awareness)
        if sched is not None and pool_ref is None:
            b.set(("routing", "gateway", "provider"), "istio", src, use=False)
            b.note(
                "routing.gateway.provider istio: KServe's default Gateway is an Istio one; the DestinationRule lets "
                "it call the picker over TLS (set provider none for another implementation)"
            )
    # KServe's route preset: its rules name the namespace; without metadata.namespace kvgen cannot
    if namespace_given:
        b.set(("routing", "gateway", "rules"), "kserve", (*path, "route"), use=False)
        if model_name is not None:
            b.set(("routing", "gateway", "modelName"), model_name, ("spec", "model", "name"), use=False)
    else:
        t.warn(
            (*path, "route"),
            "KServe's managed route names the namespace in its paths (/NAMESPACE/NAME/v1/..., "
            "/publishers/NAMESPACE/models/MODEL/...); without metadata.namespace kvgen renders its own rule "
            "(PathPrefix / to the same backend)",
            "set metadata.namespace for KServe's rules",
            covers=False,
        )
    sched = sched or {}
    if sched_v is None:
        # config_merge.go:429-444: without a scheduler every rule goes to the workload Service
        b.set(("routing", "gateway", "backend"), "service", (*path, "route"), use=False)
        return False
    t.use((*path, "scheduler"))
    if pool_ref is not None:
        # config_merge.go:446-459: the route's InferencePool backends name the pool; no scheduler is rendered
        b.set(("routing", "gateway", "poolRef"), pool_ref[0], pool_ref[1])
        if "replicas" in sched:
            t.warn(
                (*path, "scheduler", "replicas"),
                "not carried over: with pool.ref KServe (and kvgen) render no scheduler; the existing pool's picker "
                "has its own replicas",
            )
        return False
    replicas = integer(t, (*path, "scheduler", "replicas"), sched["replicas"]) if "replicas" in sched else None
    if replicas is not None:
        b.set(("routing", "picker", "replicas"), replicas, (*path, "scheduler", "replicas"))
    if mode is not None and mode_path is not None:
        b.set(("routing", "picker", "failureMode"), mode, mode_path)
    else:
        b.set(("routing", "picker", "failureMode"), "FailOpen", (*path, "scheduler"), use=False)
    b.note(
        f"routing: kvgen's picker reads its EndpointPickerConfig from the ConfigMap {name}-epp-config (KServe passes "
        "it inline, --config-text, and renders no ConfigMap); its pods are labelled as kvgen labels its picker, not "
        "with KServe's app.kubernetes.io/component: llminferenceservice-router-scheduler"
    )
    b.note(
        "routing: not rendered as KServe does: the picker's tokenizer, the system:auth-delegator "
        "ClusterRoleBinding (kvgen's picker serves /metrics without auth, no cluster-scoped object), the zmq port "
        "5557 (KV events of the precise prefix index, which kvgen's approximate index does not use), the TLS "
        "between the Gateway and the picker's certificate Secret, and the scheduler config migrations"
    )
    if prefill:
        b.note(
            "routing: prefill/decode as KServe renders it (its P/D scheduler profiles, the decode pod's routing sidecar "
            "with vLLM on 8001, the sidecar's Role on pods and InferencePools); kvgen pins the sidecar of its picker's "
            "llm-d-router release (v0.9.0; KServe deploys v0.10.0), names the v1 InferencePool group kvgen renders "
            "(KServe: inference.networking.x-k8s.io) and serves it without TLS (--secure-proxy=false), its token "
            "mounted in the sidecar only"
        )
    return True


def _validate(
    t: Tracker,
    router: dict[str, Any],
    route: dict[str, Any] | None,
    gateway: dict[str, Any] | None,
    sched: dict[str, Any] | None,
    http: dict[str, Any],
    path: Path,
    namespace: str,
) -> bool:
    """KServe's webhook checks (llm_inference_service_validation.go); False when one fails."""
    before = len(t.errors)
    http_path = (*path, "route", "http")
    if http.get("refs") is not None and http.get("spec") is not None:  # :153-163
        t.error(
            http_path,
            "refs and spec are mutually exclusive (KServe's webhook rejects both): refs attaches to your own "
            "HTTPRoute, spec makes a managed one",
            "keep one",
        )
    gw_refs = (gateway or {}).get("refs")
    if http.get("refs") and gateway is not None and not gw_refs:  # :165-176
        t.error(
            (*http_path, "refs"),
            "your own HTTPRoute (route.http.refs) with a managed Gateway (gateway: {}) is rejected by KServe's webhook",
            "name the Gateway in spec.router.gateway.refs, or use route: {} for a managed HTTPRoute",
        )
    spec_v = http.get("spec")
    spec: dict[str, Any] = spec_v if isinstance(spec_v, dict) else {}
    parents = spec.get("parentRefs")
    if isinstance(parents, list) and parents and isinstance(gw_refs, list) and gw_refs:  # :178-200
        ours = {_key(r, namespace) for r in gw_refs if isinstance(r, dict)}
        theirs = {_key(r, namespace) for r in parents if isinstance(r, dict)}
        if ours != theirs:
            t.error(
                (*http_path, "spec", "parentRefs"),
                "conflicts with spec.router.gateway.refs (KServe's webhook rejects parentRefs that name other "
                "Gateways or listeners)",
                "make them name the same Gateways, or drop one",
            )
    if sched is not None:  # validateSchedulerConfig :364-418
        spath = (*path, "scheduler")
        replicas = sched.get("replicas")
        if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas <= 0:  # :373-375
            t.error((*spath, "replicas"), f"must be at least 1, not {replicas}", "remove it for one scheduler")
        if "config" in sched:
            cpath = (*spath, "config")
            config = sched["config"] if isinstance(sched["config"], dict) else {}
            inline, ref = config.get("inline"), config.get("ref")
            if inline is None and ref is None:  # :383-389
                t.error(cpath, "needs inline or ref", "give one, or remove config for KServe's default")
            elif inline is not None and ref is not None:  # :391-397
                t.error(cpath, "inline and ref are mutually exclusive", "keep one")
            elif inline is not None and len(str(inline)) < 3:  # :399-405
                t.error((*cpath, "inline"), "is too short to be a scheduler config (KServe wants at least 3 bytes)")
            elif ref is not None and not (isinstance(ref, dict) and ref.get("name")):  # :407-414
                t.error((*cpath, "ref"), "needs a ConfigMap name", "set ref.name")
        pool_v = sched.get("pool")
        pool: dict[str, Any] = pool_v if isinstance(pool_v, dict) else {}
        if pool.get("spec") is not None and pool.get("ref") is not None:  # types :482-490
            t.error((*spath, "pool"), "spec and ref are mutually exclusive", "keep one")
    if route is not None:  # validateTrafficFields :851-900
        group, weight = route.get("group"), route.get("weight")
        if "ingress" in router and (group is not None or weight is not None):
            t.error((*path, "route"), "group and weight are for Gateway routes, not with spec.router.ingress")
        if weight is not None and group is None:
            t.error((*path, "route", "weight"), "needs route.group", "set both, or neither")
        if group is not None and weight is None:
            t.error((*path, "route", "group"), "needs route.weight", "set both, or neither")
        if group is not None and http.get("refs") is not None:
            t.error((*path, "route", "group"), "a traffic group cannot be used with route.http.refs")
    if route is not None and "ingress" in router:  # RouterSpec :359: Ingress or Gateway API
        t.error(path, "route and ingress are mutually exclusive", "use route and gateway (Gateway API) or ingress")
    return len(t.errors) == before
