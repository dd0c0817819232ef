"""KServe ``spec.router`` (kserve v0.20.0, pkg/apis/serving/v1alpha2/llm_inference_service_types.go
RouterSpec :359) read into kvgen's ``routing`` section.

- ``gateway`` + ``route`` + ``scheduler`` (KServe's managed Gateway route, HTTPRoute and scheduler)
  become ``routing.mode: gateway``: ``gateway.parentRefs`` from ``gateway.refs``, or KServe's
  default Gateway ``kserve/kserve-ingress-gateway`` for ``gateway: {}``
  (config/configmap/inferenceservice.yaml:307); ``picker.replicas`` from ``scheduler.replicas``;
  ``picker.failureMode`` FailOpen as KServe's ``kserve-config-llm-scheduler`` sets it (or the
  pool spec's ``endpointPickerRef.failureMode``); the scorer weights are kvgen's defaults, which
  are KServe's default profile (scheduler.go:554-588).
- What kvgen cannot carry (a scheduler config, template, labels or annotations, an existing pool,
  the user's own HTTPRoute, a custom route spec, traffic groups, an Ingress) is warned at its path
  with what kvgen renders instead.
- The combinations KServe's webhook rejects (llm_inference_service_validation.go) are errors.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Path, shown
from kvgen.input.dialects.core import SpecBuilder, Tracker, integer, mapping

# KServe's default Gateway: GlobalConfig.IngressGatewayName/Namespace (pkg/constants/constants.go:193)
DEFAULT_GATEWAY = {"name": "kserve-ingress-gateway", "namespace": "kserve"}
FAIL_MODES = ("FailOpen", "FailClose")
INSTEAD = "kvgen renders its own InferencePool, Endpoint Picker and HTTPRoute (routing.mode gateway, docs/routing.md)"


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


def _key(ref: dict[str, Any], namespace: str) -> tuple[str, str, str]:
    return (str(ref.get("name")), str(ref.get("namespace") or namespace), str(ref.get("sectionName") or ""))


def convert(t: Tracker, b: SpecBuilder, value: Any, path: Path, name: str, namespace: str, prefill: bool) -> None:
    """Read ``spec.router`` at ``path`` into ``b``'s routing section (or warn why not)."""
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
            "not carried over: kvgen renders no Ingress; with spec.router.gateway, route and scheduler it renders "
            "an HTTPRoute to an InferencePool (routing.mode gateway)",
        )
    if http.get("refs") is not None:
        t.warn(
            (*http_path, "refs"),
            "not carried over: kvgen does not attach to your own HTTPRoute; " + INSTEAD,
        )
    if http.get("spec") is not None:
        t.warn(
            (*http_path, "spec"),
            "not carried over: a custom HTTPRoute spec; kvgen renders its own HTTPRoute (one PathPrefix rule "
            "to the InferencePool, routing.gateway)",
        )
    for key in ("group", "weight"):
        if route is not None and key in route:
            t.warn((*path, "route", key), "not carried over: kvgen renders no traffic groups (one HTTPRoute rule)")
    if sched is not None:
        spath = (*path, "scheduler")
        for key, what in (
            (
                "config",
                "the scheduler config; kvgen renders its own EndpointPickerConfig (KServe's default profile's "
                "scorers, routing.picker.scorers)",
            ),
            (
                "template",
                "the scheduler pod template; kvgen renders its own picker Deployment (llm-d router "
                "v0.9.0, no tokenizer sidecar)",
            ),
            ("labels", "the scheduler pod's labels; kvgen labels its picker itself"),
            ("annotations", "the scheduler pod's annotations"),
        ):
            if key in sched:
                t.warn((*spath, key), f"not carried over: {what}")
        pool = mapping(t, (*spath, "pool"), sched.get("pool"))
        if pool.get("ref") is not None:
            t.warn(
                (*spath, "pool", "ref"),
                "not carried over: kvgen does not use an existing InferencePool; " + INSTEAD,
            )
        pool_spec = mapping(t, (*spath, "pool", "spec"), pool.get("spec"))
        epp = mapping(t, (*spath, "pool", "spec", "endpointPickerRef"), pool_spec.get("endpointPickerRef"))
        mode = epp.get("failureMode")
        mode_path = (*spath, "pool", "spec", "endpointPickerRef", "failureMode")
        if mode is not None and mode not in FAIL_MODES:
            t.error(mode_path, f"{shown(mode)} is not a failure mode", "use FailOpen or FailClose")
            ok = False
        for key in pool_spec:
            if key != "endpointPickerRef":
                t.warn(
                    (*spath, "pool", "spec", key),
                    "not carried over: kvgen renders its own InferencePool (the Service's pods, target port "
                    "service.port)",
                )
        for key in epp:
            if key != "failureMode":
                t.warn(
                    (*spath, "pool", "spec", "endpointPickerRef", key),
                    "not carried over: kvgen's InferencePool points at its own picker Service",
                )

    if not ok:
        return
    if prefill:
        t.warn(
            path,
            "not carried over: with spec.prefill KServe renders a prefill/decode scheduler profile, which kvgen "
            "does not (routing.mode gateway is refused for a prefill/decode pair); kvgen renders a ClusterIP "
            "Service per role",
        )
        return
    missing = [k for k, v in (("gateway", gateway), ("route", route), ("scheduler", sched)) if v is None]
    if missing and "ingress" in router and route is None and gateway is None:
        return
    if missing:
        t.warn(
            path,
            f"not carried over: without spec.router.{' and spec.router.'.join(missing)} KServe renders no managed "
            "HTTPRoute to an InferencePool and its scheduler; kvgen renders a ClusterIP Service (routing.mode gateway "
            "needs all three)",
        )
        return

    b.set(("routing", "mode"), "gateway", path, use=False)
    t.use((*path, "route"))
    t.use((*path, "gateway"))
    t.use((*path, "scheduler"))
    if gw_refs:
        for ref, rpath in gw_refs:
            parent = {"name": str(ref["name"])}
            if ref.get("namespace"):
                parent["namespace"] = str(ref["namespace"])
            if ref.get("sectionName"):
                parent["sectionName"] = str(ref["sectionName"])
            b.append(("routing", "gateway", "parentRefs"), parent, rpath)
    else:
        b.set(("routing", "gateway", "parentRefs"), [dict(DEFAULT_GATEWAY)], (*path, "gateway"), use=False)
        b.note(
            "routing.gateway.parentRefs kserve/kserve-ingress-gateway: KServe's default Gateway for gateway: {} "
            "(ingressGatewayName in the inferenceservice-config ConfigMap); change it if your cluster's differs"
        )
        # KServe installs that Gateway with gatewayClassName istio: Istio calls the picker over TLS, which
        # needs the DestinationRule of provider istio (without it FailOpen routes with no prefix awareness)
        b.set(("routing", "gateway", "provider"), "istio", (*path, "gateway"), use=False)
        b.note(
            "routing.gateway.provider istio: KServe's default Gateway is an Istio one; the DestinationRule lets "
            "it call the picker over TLS (set provider none for another implementation)"
        )
    sched = sched or {}
    replicas = integer(t, (*path, "scheduler", "replicas"), sched["replicas"]) if "replicas" in sched else None
    if replicas is not None:
        b.set(("routing", "picker", "replicas"), replicas, (*path, "scheduler", "replicas"))
    if mode is not None:
        b.set(("routing", "picker", "failureMode"), mode, mode_path)
    else:
        b.set(("routing", "picker", "failureMode"), "FailOpen", (*path, "scheduler"), use=False)
    b.note(
        f"routing: kvgen names its objects {name}-pool (InferencePool), {name}-epp (picker Deployment, Service, "
        f"ServiceAccount, Role, RoleBinding, ConfigMap) and {name} (HTTPRoute); KServe's controller names them "
        f"{name}-inference-pool, {name}-kserve-router-scheduler (Deployment), {name}-epp-service, {name}-epp-sa, "
        f"{name}-epp-role, {name}-epp-rb and {name}-kserve-route"
    )
    b.note(
        "routing: not rendered as KServe does: the picker's tokenizer sidecar, the system:auth-delegator "
        "ClusterRoleBinding (kvgen's picker serves /metrics without auth, no cluster-scoped object), the HTTPRoute's "
        "/<namespace>/<name>/v1 and publishers/ path rules and the catch-all rules to the workload Service (kvgen's "
        "route has one PathPrefix / rule to the InferencePool), and the scheduler config migrations"
    )


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
