"""routing (docs/routing.md): how requests reach the replicas. The checks of the section (a prefill/decode
pair's among them), its warning, and the prefix scorer's parameters the picker's config carries. The chart's
counterpart is templates/plan/_routing.tpl (kvgen.checkRouting, kvgen.checkDecodePair, kvgen.checkGatewayRoute,
kvgen.routingWarnings, kvgen.routingPrefix).
"""

from __future__ import annotations

import re

from kvgen.core.errors import Problem, quoted
from kvgen.data import catalog, flags
from kvgen.plan import kvcache
from kvgen.plan.types import Plan
from kvgen.spec.models import RoutingGateway, Spec

# vLLM 0.33's switch that turns its GPU prefix cache off (engine/arg_utils.py --enable-prefix-caching,
# a BooleanOptionalAction): the prefix scorer would route to a cache that is not there
NO_PREFIX_CACHING = "--no-enable-prefix-caching"

# What Gateway API's HTTPRoute (v1.5.1, the CRD vendored in files/crds, sources.yaml) refuses in what the
# route carries from routing.gateway, so that kvgen refuses it at its spec path instead of rendering it.
# spec.hostnames[]: the Hostname type's pattern and maxLength (as vendored; a test keeps them equal)
HOSTNAME_PATTERN = r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
HOSTNAME_MAX_LENGTH = 253
# spec.rules[].matches[].path: the CRD's CEL rules (x-kubernetes-validations, which the vendored schema
# leaves out) for a match of type Exact or PathPrefix, in its order: (test, operand, the CRD's message)
PATH_RULES = (
    ("startsWith", "/", "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"),
    ("notContains", "//", "must not contain '//' when type one of ['Exact', 'PathPrefix']"),
    ("notContains", "/./", "must not contain '/./' when type one of ['Exact', 'PathPrefix']"),
    ("notContains", "/../", "must not contain '/../' when type one of ['Exact', 'PathPrefix']"),
    ("notContains", "%2f", "must not contain '%2f' when type one of ['Exact', 'PathPrefix']"),
    ("notContains", "%2F", "must not contain '%2F' when type one of ['Exact', 'PathPrefix']"),
    ("notContains", "#", "must not contain '#' when type one of ['Exact', 'PathPrefix']"),
    ("notEndsWith", "/..", "must not end with '/..' when type one of ['Exact', 'PathPrefix']"),
    ("notEndsWith", "/.", "must not end with '/.' when type one of ['Exact', 'PathPrefix']"),
    (
        "matches",
        r"^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$",
        "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) "
        "for types ['Exact', 'PathPrefix']",
    ),
)
# spec.parentRefs: the CRD's CEL rules on references to one parent (same group, kind, name and namespace)
SECTION_NAME_MISSING = "sectionName must be specified when parentRefs includes 2 or more references to the same parent"
SECTION_NAME_REPEATED = "sectionName must be unique when parentRefs includes 2 or more references to the same parent"


def _go_regex(pattern: str) -> re.Pattern[str]:
    """A ^...$ pattern as Go's RE2 (the API server's, CEL's and Helm's) reads it: $ is the end of the text
    (Python's $ also matches before a final newline)."""
    return re.compile(pattern.removesuffix("$") + r"\Z")


_HOSTNAME = _go_regex(HOSTNAME_PATTERN)
_PATH_TESTS = {
    "startsWith": lambda v, x: v.startswith(x),
    "notContains": lambda v, x: x not in v,
    "notEndsWith": lambda v, x: not v.endswith(x),
    "matches": lambda v, x: _go_regex(x).match(v) is not None,
}
PATH_HINT = (
    "write the path as clients send it, normalised, e.g. /v1: no '//', '/./' or '/../' and no trailing '/.' or "
    "'/..', no '%2F', '#' or '?', and only URL path characters (others %-encoded)"
)


def gateway_problems(g: RoutingGateway) -> list[Problem]:
    """What Gateway API's HTTPRoute CRD refuses in routing.gateway: a hostname that is not its Hostname, a
    path its CEL rules refuse (quoting their messages), and references to one Gateway that its parentRefs
    rules refuse. The chart's twin is in kvgen.checkRouting."""
    out = []
    for i, host in enumerate(g.hostnames):
        if not _HOSTNAME.match(host):
            message = (
                f"{quoted(host)} is not a hostname Gateway API's HTTPRoute takes: lowercase letters, digits, '-' "
                "and '.', each label beginning and ending with a letter or digit, and a wildcard only as a "
                "leading '*.' label"
            )
        elif len(host) > HOSTNAME_MAX_LENGTH:
            message = (
                f"the hostname is longer than {HOSTNAME_MAX_LENGTH} characters, the most Gateway API's HTTPRoute takes"
            )
        else:
            continue
        out.append(
            Problem(
                ("routing", "gateway", "hostnames", i),
                message,
                "write a host name as clients send it, e.g. llm.example.com or *.example.com (no scheme, port, "
                "path or trailing dot)",
            )
        )
    path = g.path_prefix
    for test, operand, crd_message in PATH_RULES:
        if not _PATH_TESTS[test](path, operand):
            out.append(
                Problem(
                    ("routing", "gateway", "pathPrefix"),
                    f"{quoted(path)} is refused by Gateway API's HTTPRoute, whose rule for a path match says: {crd_message}",
                    PATH_HINT,
                )
            )
    refs = g.parent_refs
    for j, ref in enumerate(refs):
        for i in range(j):
            other = refs[i]
            if (other.name, other.namespace or "") != (ref.name, ref.namespace or ""):
                continue
            if (other.section_name is None) != (ref.section_name is None):
                message, hint = SECTION_NAME_MISSING, "give each reference to that Gateway a sectionName (a listener)"
            elif other.section_name == ref.section_name:
                message, hint = (
                    SECTION_NAME_REPEATED,
                    "remove the repeated reference, or give each reference to that Gateway its own sectionName",
                )
            else:
                continue
            gateway = quoted(ref.name) + (f" in namespace {quoted(ref.namespace)}" if ref.namespace else "")
            out.append(
                Problem(
                    ("routing", "gateway", "parentRefs", j),
                    f"names the Gateway {gateway} as parentRefs[{i}] does, and Gateway API's HTTPRoute says: {message}",
                    hint,
                )
            )
            break
    return out


# KServe's kserve-config-llm-router-route (config/llmisvcconfig/config-llm-router-route.yaml at kserve
# aaac4e29): its model-routing rule holds 8 path matches per model name (4 endpoints, with and without a
# trailing '/'), its route 19 matches for the base model and 9 more per LoRA adapter (8 in v1-model-routing,
# 1 in v1-catch-all-model-routing; config_merge.go expandLoRAAdapterMatches :603-642)
KSERVE_MODEL_ROUTING_MATCHES = 8
KSERVE_ROUTE_MATCHES = 19
# Gateway API v1.5.1 HTTPRoute (apis/v1/httproute_types.go): at most 64 matches in a rule, 128 in a route
MAX_RULE_MATCHES = 64
MAX_ROUTE_MATCHES = 128


def kserve_adapters(spec: Spec) -> list[str]:
    """rules kserve: the adapters KServe's route matches, each as publishers/<namespace>/models/<name>; an adapter
    already named so is that alias of another (KServe input serves both names, as KServe's --lora-modules
    does), matched with it."""
    lora = spec.model.lora
    alias = f"publishers/{spec.namespace}/models/"
    return [a.name for a in lora.adapters if not a.name.startswith(alias)] if lora is not None else []


def route_matches(spec: Spec) -> tuple[int, int]:
    """The HTTPRoute's largest rule's matches and all its matches, as the layout renders the route."""
    g = spec.routing.gateway
    lora = spec.model.lora
    adapters = len(lora.adapters) if lora is not None else 0
    if g is not None and g.rules == "kserve":
        adapters = len(kserve_adapters(spec))
        per_rule = KSERVE_MODEL_ROUTING_MATCHES * (1 + adapters)
        return per_rule, KSERVE_ROUTE_MATCHES + (KSERVE_MODEL_ROUTING_MATCHES + 1) * adapters
    return max(1, adapters), 1 + adapters


def backend_problems(spec: Spec, g: RoutingGateway) -> list[Problem]:
    """routing.gateway's backend, existing pool and rules against what they leave out or need."""
    r, out = spec.routing, []
    if r.picker is not None and (g.backend == "service" or g.pool_ref is not None):
        why = (
            "routing.gateway.backend service renders none (the route goes to the Service)"
            if g.backend == "service"
            else "with routing.gateway.poolRef kvgen renders none (the existing pool has its own)"
        )
        out.append(
            Problem(
                ("routing", "picker"),
                f"routing.picker configures the Endpoint Picker kvgen renders, and {why}",
                "leave routing.picker out, or routing.gateway.backend and poolRef",
            )
        )
    if g.pool_ref is not None and g.backend == "service":
        out.append(
            Problem(
                ("routing", "gateway", "poolRef"),
                "an existing InferencePool is a backend of routing.gateway.backend pool, and the backend is service",
                "set routing.gateway.backend: pool, or leave poolRef out",
            )
        )
    if g.rules == "kserve":
        if spec.namespace is None:
            out.append(
                Problem(
                    ("routing", "gateway", "rules"),
                    "rules kserve's paths name the namespace (/NAMESPACE/NAME/v1/..., /publishers/NAMESPACE/models/...), "
                    "and the spec has none",
                    "set namespace, or routing.gateway.rules: prefix",
                )
            )
        if g.path_prefix != "/":
            out.append(
                Problem(
                    ("routing", "gateway", "pathPrefix"),
                    "routing.gateway.pathPrefix is the path of rules prefix; rules kserve has KServe's paths",
                    "leave pathPrefix out, or set routing.gateway.rules: prefix",
                )
            )
    elif g.model_name is not None:
        out.append(
            Problem(
                ("routing", "gateway", "modelName"),
                "routing.gateway.modelName names the model in rules kserve's paths and headers, and the rules are prefix",
                "set routing.gateway.rules: kserve, or leave modelName out",
            )
        )
    per_rule, per_route = route_matches(spec)
    lora = spec.model.lora
    adapters = len(lora.adapters) if lora is not None else 0
    if g.rules == "kserve":
        adapters = len(kserve_adapters(spec))
    for count, limit, where in ((per_rule, MAX_RULE_MATCHES, "rule"), (per_route, MAX_ROUTE_MATCHES, "route")):
        if count > limit:
            out.append(
                Problem(
                    ("model", "lora", "adapters"),
                    f"with {adapters} adapters the HTTPRoute of routing.gateway.rules {g.rules} holds {count} matches "
                    f"in one {where}, and Gateway API's HTTPRoute takes at most {limit} matches per {where}",
                    "serve at most 7 adapters with rules kserve (8 matches each in its model-routing rule), or set "
                    "routing.gateway.rules: prefix",
                )
            )
    return out


# routing.naming kserve: KServe's controller's names (kmeta.ChildName, kserve aaac4e29 workload.go:178-180,
# scheduler.go:392 schedulerDeploymentName): the longest suffix of the objects rendered; knative's ChildName
# shortens a name over 63 characters with an MD5 hash, which the chart (Sprig has no MD5) cannot reproduce
KSERVE_NAME_MAX = 63
KSERVE_SERVICE_SUFFIX = "-kserve-workload-svc"
KSERVE_PICKER_SUFFIX = "-kserve-router-scheduler"


def naming_problems(spec: Spec) -> list[Problem]:
    """routing.naming kserve with a name KServe's controller would shorten with a hash."""
    r = spec.routing
    if r.naming != "kserve":
        return []
    suffix = KSERVE_SERVICE_SUFFIX
    g = r.gateway
    if r.mode == "gateway" and g is not None and g.backend == "pool" and g.pool_ref is None:
        suffix = KSERVE_PICKER_SUFFIX
    longest = (spec.name or "") + suffix
    if len(longest) <= KSERVE_NAME_MAX:
        return []
    return [
        Problem(
            ("routing", "naming"),
            f"KServe's controller names an object {longest} ({len(longest)} characters); over {KSERVE_NAME_MAX} it "
            "shortens the name with an MD5 hash (knative kmeta.ChildName), which kvgen does not reproduce",
            f"shorten name to at most {KSERVE_NAME_MAX - len(suffix)} characters, or set routing.naming: kvgen",
        )
    ]


def pair_problems(spec: Spec) -> list[Problem]:
    """A decode server in routing.mode gateway (a prefill/decode pair): its picker's prefill/decode profiles
    and the routing sidecar in front of vLLM need kvgen's own picker, a single-node pod and a free port."""
    r, out = spec.routing, []
    g = r.gateway
    if g is not None and (g.backend == "service" or g.pool_ref is not None):
        key = "backend" if g.backend == "service" else "poolRef"
        out.append(
            Problem(
                ("routing", "gateway", key),
                "a decode server routes through the picker kvgen renders, whose prefill/decode profiles send each "
                "request's prefill to a prefill server; "
                + ("the Service" if key == "backend" else "an existing InferencePool's picker")
                + " would leave the prefill servers out",
                "set routing.gateway.backend: pool and leave poolRef out",
            )
        )
    if r.picker is not None and "scorers" in r.picker.model_fields_set:
        out.append(
            Problem(
                ("routing", "picker", "scorers"),
                "a decode server's picker has KServe's prefill/decode profiles, whose scorers and weights are fixed",
                "leave routing.picker.scorers out",
            )
        )
    if spec.parallelism.nodes > 1:
        out.append(
            Problem(
                ("parallelism", "nodes"),
                "the routing sidecar of a decode server in routing.mode gateway runs in a single-node pod; kvgen "
                "does not render it for a server spanning several nodes",
                "serve the decode server on one node, or set routing.mode none",
            )
        )
    vllm_port = int(catalog.runtime()["picker"]["sidecar"]["vllmPort"])
    if spec.service.port == vllm_port:
        out.append(
            Problem(
                ("service", "port"),
                f"a decode server in routing.mode gateway moves vLLM to port {vllm_port}, behind the routing sidecar "
                "that listens on service.port",
                f"set service.port to another port than {vllm_port}, e.g. 8000",
            )
        )
    return out


def check(spec: Spec) -> list[Problem]:
    """The section's fields against its mode, and what the gateway mode cannot work with."""
    r, out = spec.routing, []
    role = spec.disaggregation.role
    if spec.disaggregation.decode_server is not None and role != "prefill":
        out.append(
            Problem(
                ("disaggregation", "decodeServer"),
                f"names the decode server a prefill server joins, and disaggregation.role is {role}",
                "set disaggregation.role: prefill, or leave decodeServer out",
            )
        )
    for key, field, mode in (
        ("sessionAffinity", r.session_affinity, "sessionAffinity"),
        ("picker", r.picker, "gateway"),
        ("gateway", r.gateway, "gateway"),
    ):
        if field is not None and r.mode != mode:
            out.append(
                Problem(
                    ("routing", key),
                    f"routing.{key} applies to routing.mode {mode}, but the mode is {r.mode}",
                    f"set routing.mode: {mode}, or leave routing.{key} out",
                )
            )
    if (role == "decode" and r.mode == "gateway") or (role == "prefill" and spec.disaggregation.decode_server):
        # pod.labels win over kvgen's on the pod template: the pair's labels must be kvgen's
        for key in catalog.runtime()["wiring"]["pairLabels"].values():
            if key in spec.pod.labels:
                out.append(
                    Problem(
                        ("pod", "labels", key),
                        f"{quoted(key)} is a label kvgen sets on the pods of a prefill/decode pair in routing.mode "
                        "gateway (the pool's selector, the picker's role filters)",
                        "remove it from pod.labels",
                    )
                )
    out += naming_problems(spec)
    if r.mode != "gateway":
        return out
    if r.gateway is None:
        out.append(
            Problem(
                ("routing", "gateway", "parentRefs"),
                "required with routing.mode gateway: the Gateway the HTTPRoute attaches to",
                "name your Gateway, e.g. routing.gateway.parentRefs: [{name: inference-gateway}]",
            )
        )
    else:
        out += gateway_problems(r.gateway)
        out += backend_problems(spec, r.gateway)
    if spec.disaggregation.role == "prefill":
        out.append(
            Problem(
                ("routing", "mode"),
                "a prefill server of a prefill/decode pair is picked by its decode server's picker (the prefill "
                "profile); it has no route or picker of its own",
                "set routing.mode none here and disaggregation.decodeServer to the decode server's name, whose spec "
                "has routing.mode gateway",
            )
        )
    elif spec.disaggregation.role == "decode":
        out += pair_problems(spec)
    for i, arg in enumerate(spec.vllm.extra_args):
        if flags.flag_name(arg) == NO_PREFIX_CACHING:
            out.append(
                Problem(
                    ("vllm", "extraArgs", i),
                    f"{NO_PREFIX_CACHING} turns vLLM's prefix cache off, and routing.mode gateway routes each "
                    "request to the server that holds its prefix",
                    f"remove {NO_PREFIX_CACHING}, or set routing.mode none",
                )
            )
    return out


def warnings(spec: Spec) -> list[str]:
    """Routing with a single server: nothing to choose between."""
    r = spec.routing
    most = spec.autoscaling.max_replicas if spec.autoscaling is not None else spec.replicas
    if r.mode == "none" or most > 1:
        return []
    return [
        f"routing.mode {r.mode} with one replica: every request reaches the same server; routing keeps the "
        "caches warm from 2 replicas on"
    ]


def block_size_tokens(plan: Plan) -> int:
    """The prefix hash block: routing.picker.blockSizeTokens, else LMCache's chunk (the unit its CPU and disk
    tiers store) with the lmcache backend, else vLLM's block; at least the picker's floor (it raises a
    smaller one)."""
    picker = plan.spec.routing.picker
    if picker is not None and picker.block_size_tokens is not None:
        return picker.block_size_tokens
    rt = catalog.runtime()
    size = rt["wiring"]["lmcache"]["chunkSize"] if plan.backend == "lmcache" else kvcache.BLOCK_SIZE
    return max(size, rt["picker"]["minBlockSizeTokens"])


def lru_capacity(plan: Plan, disk_bytes: int) -> int:
    """Blocks the picker remembers per server: routing.picker.lruCapacityPerServer, else the tokens the
    server's GPU KV cache, CPU tier and disk tiers of known size hold, over the block (an estimate: a
    token's bytes on one GPU times the pod's GPUs). The picker's own default when kvgen cannot say."""
    picker = plan.spec.routing.picker
    if picker is not None and picker.lru_capacity_per_server is not None:
        return picker.lru_capacity_per_server
    cost = plan.context_length.cost
    per_token = (cost.full + cost.sliding) * max(plan.gpus_per_pod, 1)
    total = plan.sizing.gpu_kv_cache + (plan.sizing.cpu_tier + disk_bytes if plan.backend is not None else 0)
    blocks = total // per_token // block_size_tokens(plan) if per_token else 0
    return blocks if blocks > 0 else int(catalog.runtime()["picker"]["defaultLruCapacityPerServer"])
