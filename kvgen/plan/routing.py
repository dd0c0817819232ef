"""routing (docs/routing.md): how requests reach the replicas. The checks of the section, its warning,
and the prefix scorer's parameters the picker's config carries. The chart's counterpart is
templates/plan/_routing.tpl (kvgen.checkRouting, kvgen.routingWarnings, kvgen.routingPrefix).
"""

from __future__ import annotations

from kvgen.core.errors import Problem
from kvgen.data import catalog, flags
from kvgen.plan import kvcache
from kvgen.plan.types import Plan
from kvgen.spec.models import Spec

# vLLM 0.33's switch that turns its GPU prefix cache off (engine/arg_utils.py --enable-prefix-caching,
# a BooleanOptionalAction): the prefix scorer would route to a cache that is not there
NO_PREFIX_CACHING = "--no-enable-prefix-caching"


def check(spec: Spec) -> list[Problem]:
    """The section's fields against its mode, and what the gateway mode cannot work with."""
    r, out = spec.routing, []
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
    if spec.disaggregation.role != "none":
        out.append(
            Problem(
                ("routing", "mode"),
                f"routing.mode gateway picks among equal servers; a {spec.disaggregation.role} server of a "
                "prefill/decode pair needs a picker profile that pairs them, which kvgen does not render",
                "set routing.mode none (or sessionAffinity) for a prefill/decode pair",
            )
        )
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
