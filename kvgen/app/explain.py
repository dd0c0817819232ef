"""`kvgen explain`: the planning view of a spec.

- the decision: offloading on or off, and every capability rule checked;
- the pod's memory budget (model loading, vLLM, the CPU tier, /dev/shm, overhead) against what
  the instance leaves to the pod, and its disk budget against the local disk;
- the capacity of each KV-cache tier (GPU, CPU, each disk tier) in tokens and in full-length
  sequences (``max-model-len``), from the model's KV bytes per token.

``report`` builds plain data: the ``--output json`` form, whose keys are stable (documented in
docs/explain.md); ``render`` lays it out with rich tables and a bar per
budget, in a terminal or into an SVG.

KV bytes per token (shared/reference/runtime.md section 9): standard attention stores K and V,
``layers x KV heads per rank x head dim x 2 x dtype bytes`` per GPU (heads are replicated when
the tensor-parallel size exceeds them); MLA stores one latent of ``kv_lora_rank +
qk_rope_head_dim`` per layer, no factor 2, replicated on every tensor-parallel rank; hybrid
models count their attention layers only. The dtype bytes follow ``--kv-cache-dtype`` in
vllm.extraArgs (``auto``: the model's dtype, 2 bytes; ``fp8``: 1; kvgen.plan.quantization), and
``model.dtypes`` says which were assumed. An offloaded token costs the bytes it
takes on all the pod's GPUs, so every tier is counted in those "pod bytes per token" (every
attention layer, sliding ones included: a lower bound on the tokens a tier holds; for MLA this
counts one copy per rank, a lower bound on what vLLM may store). Full-length sequences in the GPU
tier are counted with what one sequence really costs (kvgen.plan.kvcache: sliding layers keep at most
their window), and ``context`` says which ``--max-model-len`` vLLM is given and why.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any, TextIO

from kvgen.context import run as layout
from kvgen.core import quantity
from kvgen.core.errors import Problem, format_path, sorted_problems
from kvgen.core.quantity import GiB
from kvgen.data import catalog, connector
from kvgen.plan import gpu_access, kvcache, lora, model_source, quantization
from kvgen.plan import sizing as sz
from kvgen.plan.document import document
from kvgen.plan.images import lmcache_image, vllm_image
from kvgen.plan.types import Plan, PlanDocument
from kvgen.spec.models import own_rows

if TYPE_CHECKING:  # rich is imported where it prints
    from rich.console import Console
    from rich.text import Text

    from kvgen.traffic.replay import Replayer

JSON_VERSION = 1


# ----------------------------------------------------------------------------- budgets


_MEMORY_LABELS = {
    ("vllm", "runtime"): "vLLM API server and engine core",
    ("vllm", "model-loading"): "model loading: page cache of the weights (soft: reclaimable, not requested)",
    ("vllm", "cpu-backend-kv"): "KV cache of vLLM's CPU backend",
    ("vllm", "mm-processor-cache"): "multimodal processor cache (--mm-processor-cache-gb, in each process holding one)",
    ("vllm", "lora-adapters"): "LoRA adapters in host memory (--max-cpu-loras in each worker, at maxRank)",
    ("vllm", "shm"): "/dev/shm for NCCL and vLLM's queues",
    ("vllm", "cpu-tier"): "CPU tier (native, in /dev/shm)",
    ("lmcache-mp-server", "cpu-tier"): "CPU tier (LMCache L1)",
    ("lmcache-mp-server", "runtime"): "LMCache server process",
    # gpuAccess in-container: the server's items belong to the vLLM container
    ("vllm", "lmcache-cpu-tier"): "CPU tier (LMCache L1, in the vLLM container)",
    ("vllm", "lmcache-runtime"): "LMCache server process (in the vLLM container)",
}


def _memory_label(plan: Plan, container: str, item: str) -> str:
    gpus = plan.sizing.gpus_per_pod
    if item == "gpu-workers":
        return f"{gpus} GPU worker process{'es' if gpus != 1 else ''}"
    if item in ("rounding", "lmcache-rounding"):
        return "rounded up to a whole GiB"
    if item == "model-loading" and not plan.instance.gpus:
        return "model weights (CPU backend keeps them in RAM)"
    return _MEMORY_LABELS[(container, item)]


def _memory_items(plan: Plan) -> list[dict[str, Any]]:
    """The pod's computed memory item by item, as kvgen.plan.sizing adds it up (before explicit values),
    each under the container that holds it (gpuAccess in-container: the server's are vLLM's);
    ``soft`` items (page cache of the weights) are shown but not requested."""
    out = []
    for i in plan.sizing.memory_items:
        container, item = i.container, i.item
        if plan.in_container and container == "lmcache-mp-server":
            container, item = "vllm", f"lmcache-{item}"
        out.append(
            {
                "container": container,
                "item": item,
                "label": _memory_label(plan, container, item),
                "bytes": int(round(i.bytes)),
                "soft": i.soft,
            }
        )
    return out


def _memory(plan: Plan) -> dict[str, Any]:
    s, inst = plan.sizing, plan.instance
    items = _memory_items(plan)
    containers = []
    for name, size in plan.containers():
        computed = sum(i["bytes"] for i in items if i["container"] == name and not i["soft"])
        containers.append(
            {
                "name": name,
                "requestBytes": size.memory,
                "limitBytes": size.limit,
                "computedBytes": computed,
                "explicit": size.memory != computed,
            }
        )
    request = s.pod_memory
    known = inst.node_known  # an unknown node (no type, no memory): nothing to compare with
    return {
        "nodeMemoryBytes": inst.memory_bytes if known else None,
        "nodeAllocatableBytes": s.node_allocatable if known else None,
        "gpuShare": s.gpu_share,
        "allocatableBytes": s.pod_allocatable if known else None,
        "requestBytes": request,
        "limitBytes": sum(c["limitBytes"] for c in containers),
        "freeBytes": s.pod_allocatable - request if known else None,
        "fits": request <= s.pod_allocatable if known else None,
        "softBytes": sum(i["bytes"] for i in items if i["soft"]),
        "containers": containers,
        "items": items,
    }


def _disk(plan: Plan) -> dict[str, Any]:
    s, inst, spec = plan.sizing, plan.instance, plan.spec
    local = int(inst.local_disk_bytes * s.gpu_share) if inst.local_disk_bytes else None
    kubelet = s.ephemeral_allocatable if inst.ephemeral_bytes else None
    items = [{"item": "model-cache", "label": "model download cache (emptyDir)", "bytes": s.model_cache}]
    claims = []
    if plan.backend:
        caps = list(plan.layout.tier_capacities)
        for i, tier in enumerate(spec.kv_cache_offloading.secondary):
            fs = tier.file_system
            if fs.empty_dir:
                items.append({"item": f"tier-{i}", "label": f"disk tier {i} (emptyDir)", "bytes": caps[i]})
            else:
                claims.append(
                    {
                        "tier": i,
                        "kind": "pvc-spec" if fs.pvc and fs.pvc.spec is not None else "pvc-ref",
                        "claim": fs.pvc.ref.name if fs.pvc and fs.pvc.ref else None,
                        "bytes": caps[i],
                    }
                )
    request = s.pod_ephemeral
    return {
        "weights": _weights(plan),
        "ephemeralStorageBytes": inst.ephemeral_bytes or None,
        "ephemeralStorageSource": None
        if not inst.ephemeral_bytes
        else ("instance.ephemeralStorage" if inst.ephemeral_explicit else "default OS disk"),
        "assumption": _pool_assumption(plan),
        "allocatableBytes": kubelet,
        "localDiskBytes": local,
        "requestBytes": request,
        "freeBytes": None if kubelet is None else kubelet - request,
        "fits": None if kubelet is None else request <= kubelet,
        "items": items,
        "claims": claims,
    }


def _pool_assumption(plan: Plan) -> str | None:
    """What the disk budget assumes of the node pool when the spec does not say (instance.ephemeralStorage): the
    kubelet's ephemeral storage is the OS disk of the cloud's default pool for the type, as its catalog row's
    source gives it (EKS managed node groups: 20 GiB), shown before a pod outgrows it."""
    inst = plan.instance
    if not inst.ephemeral_bytes or inst.ephemeral_explicit or inst.type is None:
        return None
    row = catalog.instances(own_rows(plan.spec).get("instances")).get(inst.type) or {}
    basis = re.search(r"ephemeralStorage: ([^;]*)", str(row.get("source") or ""))
    why = f" ({basis.group(1).strip()})" if basis else ""
    return (
        f"the kubelet's ephemeral storage on {inst.type} is its default node pool's OS disk, "
        f"{quantity.format_bytes(inst.ephemeral_bytes)}{why}; if your node pool's differs, set instance.ephemeralStorage "
        "to its size"
    )


def _weights(plan: Plan) -> dict[str, Any]:
    """Where the weights live and who downloads them: vLLM into the model-cache emptyDir (again on
    every new pod), nobody (model.uri, model.cache with download false), or model.cache's init
    container into a claim that outlives the pod (a warm restart downloads nothing)."""
    spec, m = plan.spec, plan.model
    c = spec.model.cache
    seconds = sz.download_seconds(m)
    if spec.model.uri:
        claim = model_source.model_pvc(spec)
        return {
            "where": "claim",
            "claim": claim[0] if claim else None,
            "claimBytes": None,
            "downloadedBy": None,
            "downloadSeconds": 0,
            "warmRestartDownloads": False,
        }
    if c is None:
        return {
            "where": "emptyDir",
            "claim": None,
            "claimBytes": None,
            "downloadedBy": "vllm",
            "downloadSeconds": seconds,
            "warmRestartDownloads": True,
        }
    return {
        "where": "claim-per-pod" if c.claim_template is not None else "claim",
        "claim": c.claim.name if c.claim is not None else connector.wiring()["modelPvc"]["volume"],
        "claimBytes": sz.weights_claim_size(spec, m) if c.claim_template is not None else None,
        "downloadedBy": "init-container" if c.download else None,
        "downloadSeconds": seconds if c.download else 0,
        "warmRestartDownloads": False,
    }


def _lora_line(lo: dict[str, Any]) -> str:
    names = ", ".join(a["name"] for a in lo["adapters"])
    head = (
        f"LoRA: {len(lo['adapters'])} adapter{'s' if len(lo['adapters']) != 1 else ''} ({names}), "
        f"--max-lora-rank={lo['maxRank']} --max-loras={lo['maxLoras']} --max-cpu-loras={lo['maxCpuLoras']}"
    )
    if not lo["sized"]:
        return head + "; their memory is not sized for this model (see the warnings)"
    return (
        f"{head}: GPU buffers {_size(lo['gpuBytesPerGpu'])} per GPU (preallocated, out of the KV cache above); "
        f"host {_size(lo['hostBytes'])} ({lo['maxCpuLoras']} per worker x {lo['workers']}); "
        f"downloads {_size(lo['downloadBytes'])}"
    )


def _weights_line(w: dict[str, Any]) -> str:
    rate = sz.STARTUP_DOWNLOAD_RATE // 2**20
    if w["where"] == "emptyDir":
        return (
            f"weights: downloaded by vLLM into the model-cache emptyDir (~{w['downloadSeconds']:,} s at {rate} MiB/s, "
            "in the startup probe's budget); every new pod downloads them again"
        )
    where = (
        f"a claim per pod ({w['claim']}-<pod>, {_size(w['claimBytes'])})"
        if w["where"] == "claim-per-pod"
        else f"claim {w['claim']}"
    )
    if w["downloadedBy"] == "init-container":
        how = (
            f"filled by the model-download init container when files are missing (~{w['downloadSeconds']:,} s at "
            f"{rate} MiB/s, not in the startup probe's budget; the init container has no deadline)"
        )
    else:
        how = "already there (nothing is downloaded)"
    return f"weights: on {where}, {how}; warm restart: no download"


# ----------------------------------------------------------------------------- KV capacity


def _tier(
    name: str, kind: str, nbytes: int | None, per_token: int, max_len: int | None, **extra: Any
) -> dict[str, Any]:
    tokens = None if nbytes is None or not per_token else nbytes // per_token
    sequences = None if tokens is None or not max_len else tokens // max_len
    return {"tier": name, "kind": kind, "bytes": nbytes, "tokens": tokens, "sequences": sequences, **extra}


def _cpu_share(plan: Plan) -> dict[str, Any]:
    """The lmcache CPU tier measured when the pod starts: what share of which RAM (docs/sizing.md "The CPU
    tier at tensor parallel"); nothing for a tier of a fixed size."""
    s = plan.sizing
    if plan.backend != "lmcache" or s.utilization is None:
        return {"measuredAtStart": False}
    share = f"the pod's available RAM x {sz.number(s.utilization)}"
    if plan.spec.kv_cache_offloading.lmcache.utilization_scope == "rank":
        share += f" / {plan.spec.parallelism.tensor} tensor ranks (KAITO's arithmetic)"
    return {"measuredAtStart": True, "share": share}


def _gpu_budget(plan: Plan) -> dict[str, Any] | None:
    """Every input of the GPU tier's bytes on one GPU (kvgen.plan.sizing.gpu_kv_inputs), so that "GPU (after
    weights)" can be reproduced from explain; None where the GPU memory is unknown."""
    inputs = sz.gpu_kv_inputs(plan.spec, plan.model, plan.instance)
    if inputs is None:
        return None
    usable, items = inputs
    return {
        "reportedBytes": plan.instance.gpu_usable_bytes,
        "gpuMemoryUtilization": plan.spec.vllm.gpu_memory_utilization,
        "usableBytes": usable,
        "nonKvBytes": items,
        "kvBudgetPercent": sz.KV_BUDGET_PERCENT,
        "kvBytes": sz.gpu_kv_budget(plan.spec, plan.model, plan.instance),
    }


def kv_view(plan: Plan) -> dict[str, Any]:
    spec, s, m = plan.spec, plan.sizing, plan.model
    p = spec.parallelism
    per_rank = m.kv_bytes_per_token(m.kv_dtype_bytes, p.tensor)  # all layers, one tensor-parallel rank
    gpus = s.gpus_per_pod
    # the bytes one token takes on all of this pod's GPUs (pipeline stages hold 1/pp of the layers)
    pod_bytes = per_rank * max(gpus, 1) // p.pipeline if gpus else per_rank
    ctx = plan.context_length
    max_len = ctx.served
    per_gpu = s.gpu_kv_cache // gpus if gpus else 0
    seq_bytes = ctx.sequence_bytes()
    tiers = []
    if gpus:
        known = plan.instance.gpu_memory_known
        gpu = _tier(
            "gpu", "gpu", s.gpu_kv_cache if known else None, pod_bytes, max_len, perGpuBytes=per_gpu if known else None
        )
        gpu["sequences"] = per_gpu // seq_bytes if seq_bytes and known else None  # what one sequence really costs
        tiers.append(gpu)
    else:
        tiers.append(_tier("cpu-backend", "cpu-backend", sz.CPU_BACKEND_KV_SPACE_GIB * GiB, pod_bytes, max_len))
    if plan.backend:
        tiers.append(
            _tier(
                "cpu",
                plan.backend,
                s.cpu_tier,
                pod_bytes,
                max_len,
                **_cpu_share(plan),
            )
        )
        caps = list(plan.layout.tier_capacities)
        for i, tier in enumerate(spec.kv_cache_offloading.secondary):
            fs = tier.file_system
            kind = "emptyDir" if fs.empty_dir else ("pvc-spec" if fs.pvc and fs.pvc.spec is not None else "pvc-ref")
            tiers.append(_tier(f"disk-{i}", kind, caps[i], pod_bytes, max_len, path=connector.tier_path(i)))
        r = spec.kv_cache_offloading.remote
        if r is not None and plan.backend == "lmcache":  # shared by the replicas; unbounded without a capacity
            cap = r.capacity.bytes // GiB * GiB if r.capacity else None
            tiers.append(_tier("remote", "resp", cap, pod_bytes, max_len, url=r.url, shared=True))
    gpu_tier = tiers[0]
    return {
        "dtypeBytes": m.kv_dtype_bytes,
        "bytesPerTokenPerGpu": per_rank,
        "podBytesPerToken": pod_bytes,
        "maxModelLen": max_len,
        "gpuBytesPerGpu": per_gpu if not gpus or plan.instance.gpu_memory_known else None,
        "gpuTokens": (per_gpu // per_rank if per_rank else 0) if not gpus or plan.instance.gpu_memory_known else None,
        "cpuLargerThanGpu": (s.cpu_tier > s.gpu_kv_cache)
        if plan.backend and gpus and plan.instance.gpu_memory_known
        else None,
        "tiers": tiers,
        "totalTokens": sum(t["tokens"] or 0 for t in tiers) if all(t["tokens"] is not None for t in tiers) else None,
        "gpuTierTokens": gpu_tier["tokens"],
        "gpuBudget": _gpu_budget(plan),
        "context": {
            "modelMaxLen": ctx.model_max,
            "requested": ctx.requested,
            "fits": ctx.fits,
            "served": ctx.served,
            "flag": ctx.flag,
            "planned": ctx.flag is not None and ctx.requested is None,
            "budgetBytesPerGpu": ctx.budget,
            "sequenceBytesPerGpu": seq_bytes,
            "fullBytesPerToken": ctx.cost.full,
            "slidingBytesPerToken": ctx.cost.sliding,
            "slidingTokensKept": ctx.cost.sliding_cap,
            "stateBytes": ctx.cost.state,
        },
    }


def _routing(plan: Plan, doc: PlanDocument, kv: dict[str, Any]) -> dict[str, Any]:
    """How requests reach the replicas (routing.mode) and the path of a cache hit, from the request to
    recompute (docs/routing.md)."""
    spec = plan.spec
    r = spec.routing
    most = spec.autoscaling.max_replicas if spec.autoscaling is not None else spec.replicas
    out: dict[str, Any] = {"mode": r.mode, "replicas": most, "picker": None}
    built = layout.build(doc, spec)
    service = f"Service {built['service']['name']}"
    if r.mode == "gateway":
        c = built["routing"]
        parents = ", ".join(p["name"] for p in c["route"]["parentRefs"])
        route = f"Gateway {parents} -> HTTPRoute {c['route']['name']}"
        if "picker" not in c:
            (backend,) = c["route"]["backendRefs"]
            out["path"] = f"{route} -> {backend['kind']} {backend['name']}: " + (
                f"kube-proxy spreads requests over {most} server(s), whatever their prefix"
                if backend["kind"] == "Service"
                else "its own Endpoint Picker (routing.gateway.poolRef) chooses a server per request"
            )
        else:
            config = json.loads(c["picker"]["config"])
            profiles = {p["name"]: p for p in config["schedulingProfiles"]}
            # a decode server of a prefill/decode pair: the decode profile picks the server, the prefill profile
            # the prefill server its routing sidecar sends the prompt to first
            profile = profiles.get("decode") or next(iter(profiles.values()))
            (prefix,) = [p["parameters"] for p in config["plugins"] if p["type"] == "approx-prefix-cache-producer"] or [
                {}
            ]
            out["path"] = (
                f"{route} -> InferencePool {c['pool']['name']}: the Endpoint "
                f"Picker {c['picker']['names']['deployment']} chooses one of {most} server(s) per request"
            )
            if "prefill" in profiles:
                out["path"] += (
                    " and a prefill server of the pair, to which the server's routing sidecar sends the prompt first"
                )
            out["picker"] = {
                "name": c["picker"]["names"]["deployment"],
                "image": c["picker"]["image"],
                "replicas": c["picker"]["replicas"],
                "failureMode": c["pool"]["failureMode"],
                "scorers": {p["pluginRef"]: p["weight"] for p in profile["plugins"] if "weight" in p},
                "prefillScorers": (
                    {p["pluginRef"]: p["weight"] for p in profiles["prefill"]["plugins"] if "weight" in p}
                    if "prefill" in profiles
                    else None
                ),
                "blockSizeTokens": prefix.get("blockSizeTokens"),
                "lruCapacityPerServer": prefix.get("lruCapacityPerServer"),
                "scrapes": ["vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"],
                # --metrics-endpoint-auth=false: its /metrics needs no TokenReview, so no ClusterRoleBinding
                "clusterScopedObjects": [],
            }
    elif r.mode == "sessionAffinity":
        timeout = r.session_affinity.timeout_seconds if r.session_affinity is not None else 10800
        out["path"] = f"{service} (sessionAffinity ClientIP, {timeout} s): a client IP stays on one of {most} server(s)"
    else:
        out["path"] = f"{service}: kube-proxy spreads requests over {most} server(s), whatever their prefix"
    affinity = {
        "gateway": "the picker sends a prompt to the server it last sent the prefix to (prefix-cache scorer)",
        "sessionAffinity": "a client's requests reach the server that served it before",
        "none": "none: each replica holds a 1/N share of the hot prefixes",
    }["none" if r.mode == "gateway" and r.gateway is not None and r.gateway.backend == "service" else r.mode]
    hits = [{"step": "routing", "where": affinity}]
    names = {"gpu": "GPU prefix cache (vLLM)", "cpu-backend": "CPU-backend KV (vLLM)"}
    for t in kv["tiers"]:
        where = names.get(t["tier"]) or (
            f"CPU RAM ({t['kind']})"
            if t["tier"] == "cpu"
            else f"shared tier ({t['kind']} at {t['url']}, all replicas)"
            if t["tier"] == "remote"
            else f"disk {t['tier'][5:]} ({t['kind']})"
        )
        hits.append({"step": t["tier"], "where": where, "tokens": t["tokens"]})
    hits.append({"step": "recompute", "where": "recompute (prefill on the GPU)"})
    out["hitPath"] = hits
    return out


# ----------------------------------------------------------------------------- report


def _gpu_access(plan: Plan) -> dict[str, Any] | None:
    """How the LMCache server reaches vLLM's GPUs, what that requires, and the image it runs."""
    a = plan.gpu_access
    if a is None:
        return None
    server = vllm_image(plan) if plan.in_container else lmcache_image(plan)
    return {
        "mode": a.mode,
        "summary": " ".join(a.summary.split()),
        "requirement": " ".join(a.requirement.split()),
        "deviceClassName": a.device_class_name,
        "minKubeVersion": gpu_access.modes()[a.mode].get("minKubeVersion"),
        "serverImage": server,
        "sameImageAsVllm": server == vllm_image(plan),
    }


def _problems(problems: list[Problem]) -> list[dict[str, Any]]:
    """Why the pod does not fit its node: the problems kvgen.plan.sizing and kvgen.plan.kvcache found
    (their ``code`` says which budget line does not fit), as validate prints them."""
    return [
        {
            "code": p.code,
            "path": format_path(p.path),
            "location": str(p.location) if p.location else None,
            "message": p.message,
            "hint": p.hint,
        }
        for p in sorted_problems(problems)
    ]


def report(
    plan: Plan,
    conversion: Any = None,
    source: str | None = None,
    problems: list[Problem] | None = None,
    trace: Replayer | None = None,
) -> dict[str, Any]:
    """The explain data of one plan; ``problems``: why it does not fit its node (a plan built with
    keep_unfit), each marking the budget line that does not fit in the text view; ``trace``: a trace's
    replays, through the plan's tiers (kvgen.app.trace_sizing), as the report's ``trace``."""
    s, d, m, i = plan.sizing, plan.decision, plan.model, plan.instance
    p = plan.spec.parallelism
    memory_rows = [
        {"item": CONTAINERS_IN_MODE.get((name, plan.in_container), name), "bytes": size.memory}
        for name, size in plan.containers()
    ]
    input_info: dict[str, Any] = {"file": source, "format": "native", "apiVersion": None, "kind": None, "warnings": []}
    if conversion is not None:
        input_info.update(
            {
                "format": conversion.dialect,
                "apiVersion": conversion.api_version,
                "kind": conversion.kind,
                "warnings": [w.render() for w in conversion.warnings],
                "notes": list(conversion.notes),
            }
        )
    kv = kv_view(plan)
    doc = document(plan)
    dt = quantization.dtypes(plan.spec, m)
    dtypes = {
        "weights": {
            "checkpoint": dt.checkpoint,
            "onGpu": dt.gpu_scheme,
            "online": dt.online,
            "onlineUnsized": dt.unsized_online,
            "bitsPerParameter": dt.bits_per_parameter,
            "modelDtypeBytes": dt.dtype_bytes,
        },
        "kvCache": {"dtype": dt.kv_cache_dtype, "bytes": dt.kv_bytes},
    }
    return {
        "version": JSON_VERSION,
        "name": plan.spec.name,
        "namespace": plan.spec.namespace,
        "input": input_info,
        "model": {
            "id": m.id,
            "architecture": m.architecture,
            "hybrid": m.hybrid,
            "mla": m.mla,
            "multimodal": m.multimodal,
            "weightsBytes": m.weights_bytes,
            "gpuWeightsBytes": m.gpu_weights_bytes,
            "layers": m.layers,
            "attentionLayers": m.attention_layers,
            "kvHeads": m.kv_heads,
            "headDim": m.head_dim,
            "maxModelLen": m.max_model_len,
            "slidingLayers": m.sliding_layers,
            "slidingWindow": m.sliding_window,
            "dtypes": dtypes,
        },
        "instance": {
            "type": i.type,
            "gpus": i.gpus,
            "gpuMemoryBytes": i.gpu_memory_bytes,
            "gpuReportedBytes": i.gpu_usable_bytes,  # as CUDA reports it: what vLLM x gpuMemoryUtilization
            "memoryBytes": i.memory_bytes,
            "localDiskBytes": i.local_disk_bytes,
            "ephemeralStorageBytes": i.ephemeral_bytes or None,
            "arch": i.arch,
            "mig": i.mig,
        },
        "parallelism": {"tensor": p.tensor, "pipeline": p.pipeline, "data": p.data, "nodes": p.nodes},
        "decision": {
            "offloading": "enabled" if d.enabled else "disabled",
            "backend": plan.backend,
            "reasonCode": d.reason_code,
            "reason": d.reason,
            "rules": [{"code": r.code, "matched": r.matched, "reason": r.reason} for r in d.checked],
        },
        "gpuAccess": _gpu_access(plan),
        "sizing": {
            "gpusPerPod": s.gpus_per_pod,
            "nodeAllocatableBytes": s.node_allocatable if i.node_known else None,
            "podAllocatableBytes": s.pod_allocatable if i.node_known else None,
            "cpuTierBytes": s.cpu_tier,
            "cpuTierUtilization": s.utilization,
            # what the utilization is a share of: the pod's RAM for the whole tier, or one tensor rank's (KAITO)
            "cpuTierUtilizationScope": plan.spec.kv_cache_offloading.lmcache.utilization_scope
            if s.utilization is not None
            else None,
            "podMemoryBytes": s.pod_memory,
            "memory": memory_rows,
            "shmBytes": s.shm,
            "modelCacheBytes": s.model_cache,
            "emptyDirTierBytes": s.tiers_ephemeral,
            "podEphemeralBytes": s.pod_ephemeral,
        },
        "memory": _memory(plan),
        "disk": _disk(plan),
        "kvCache": kv,
        "routing": _routing(plan, doc, kv),
        "lora": _lora(plan),
        "warnings": list(doc["warnings"]),  # the same as kvgen render prints, and the chart's NOTES.txt
        "fits": not problems,
        "problems": _problems(problems or []),  # why the pod does not fit its node (kvgen explain exits 1)
        "plan": doc,  # every decision, as the chart's plan writes it too (kvgen.plan.document)
    } | (_trace(plan, kv, trace) if trace is not None else {})


def _lora(plan: Plan) -> dict[str, Any] | None:
    """model.lora: the adapters and what they take (kvgen.plan.lora): the GPU buffers on the busiest GPU (out
    of the KV cache; None: not sized), the host cache of the pod's workers, the downloads."""
    spec = plan.spec
    if spec.model.lora is None:
        return None
    workers = max(1, plan.sizing.gpus_per_pod)
    return {
        "adapters": lora.adapters(spec),
        "maxRank": spec.model.lora.max_rank,
        "maxLoras": lora.max_loras(spec),
        "maxCpuLoras": lora.max_cpu_loras(spec),
        "sized": lora.sized(plan.model),
        "gpuBytesPerGpu": lora.gpu_bytes(spec, plan.model),
        "workers": workers,
        "hostBytes": lora.host_bytes(spec, plan.model, workers),
        "downloadBytes": lora.download_bytes(spec, plan.model),
    }


def _trace(plan: Plan, kv: dict[str, Any], trace: Replayer) -> dict[str, Any]:
    from kvgen.app import trace_sizing  # loaded for --trace only

    return {"trace": trace_sizing.report(plan, kv, trace, kv_view)}


# ----------------------------------------------------------------------------- user text, shown safely

# A report's strings carry user text (a model id or instance type named in a catalog, an input's file
# name, a claim, an image, a URL) into the text view: a terminal, where ESC starts an escape sequence
# (it can recolour, move the cursor, rewrite the window title) and rich drops only some controls,
# and an SVG, where XML 1.0 forbids every control but tab, newline and CR. So the text view shows
# each of these characters as a visible Python-style escape, \x1b or \udcff, never raw:
# - C0 controls (NUL to US), DEL, and C1 controls (U+0080 to U+009F); tab and newline only outside
#   kvgen's messages (warnings, problems), whose layout they are ("\n    hint: ...");
# - lone surrogates (U+D800 to U+DFFF): a file name that is not UTF-8, as Python decodes it;
# - U+FFFE and U+FFFF, which no XML document may hold;
# - the bidirectional controls (Unicode's Bidi_Control: U+061C, U+200E, U+200F, U+202A to U+202E,
#   U+2066 to U+2069), which reorder what the terminal shows of the line after them ("Trojan Source").
# The backslash itself is left as it is: "\x1b" in the view is either those four characters or an
# escaped ESC; --output json says which.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff{_BIDI}]")
_UNSAFE_IN_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff{_BIDI}]")  # tab and newline too
_LAYOUT = frozenset({"warnings", "problems"})  # report keys below which strings are kvgen's messages
# XML 1.0's Char production, negated: what may not appear in the SVG at all
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escaped(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text: str, layout: bool = False) -> str:
    """``text`` with every character a terminal or an SVG must not get raw escaped (see above);
    ``layout``: tab and newline kept (kvgen's own messages)."""
    return (_UNSAFE if layout else _UNSAFE_IN_LINE).sub(_escaped, text)


# rich markup (rich.markup.RE_TAGS): a tag is "[" and a lowercase letter, "#", "/" or "@", up to the
# next "]" with no "[" between; backslashes before it escape it (each pair prints one backslash).
_TAG = re.compile(r"(\\*)(\[[a-z#/@][^\[]*?\])")
_OPEN_TAG = re.compile(r"\[[a-z#/@][^\[\]]*\Z")  # a tag begun, closed by nothing in the text
_TRAILING_BACKSLASHES = re.compile(r"\\+\Z")
_END = "[dim][/dim]"  # an empty span: prints nothing, ends what the text left open


def markup_text(text: str) -> str:
    """``text`` as rich markup that prints as itself wherever the view puts it between its own markup:
    its tags escaped (a model id holding "[/x]" would stop the view with a MarkupError, "[bold]" would
    vanish); and, as rich.markup.escape does not, neither a "[" left open (a "]" later on the line, in
    another user string, would close it into a tag) nor trailing backslashes (they would escape the
    view's next tag) reach past its end: an empty span after them ends them."""
    out = _TAG.sub(lambda m: m[1] * 2 + "\\" + m[2], text)
    if _OPEN_TAG.search(out) or _TRAILING_BACKSLASHES.search(out):
        out = out + out[len(out.rstrip("\\")) :] + _END  # the trailing backslashes doubled: before a tag
    return out


def _shown(node: Any, layout: bool = False) -> Any:
    """A report (or part of one) as the text view prints it: every string visible and markup_text."""
    if isinstance(node, str):
        return markup_text(visible(node, layout))
    if isinstance(node, dict):
        return {_shown(k): _shown(v, layout or k in _LAYOUT) for k, v in node.items()}
    if isinstance(node, list):
        return [_shown(v, layout) for v in node]
    return node


# ----------------------------------------------------------------------------- text


_STYLES = {
    "runtime": "cyan",
    "gpu-workers": "blue",
    "model-loading": "magenta",
    "shm": "yellow",
    "mm-processor-cache": "red",
    "lora-adapters": "bright_red",
    "cpu-tier": "green",
    "rounding": "grey50",
    "cpu-backend-kv": "green",
    "model-cache": "magenta",
}
_SHORT = {  # legend names of the bar segments
    ("vllm", "runtime"): "vLLM",
    ("vllm", "gpu-workers"): "GPU workers",
    ("vllm", "model-loading"): "model",
    ("vllm", "mm-processor-cache"): "MM cache",
    ("vllm", "lora-adapters"): "LoRA",
    ("vllm", "shm"): "/dev/shm",
    ("vllm", "cpu-tier"): "CPU tier",
    ("vllm", "cpu-backend-kv"): "CPU-backend KV",
    ("lmcache-mp-server", "cpu-tier"): "CPU tier (L1)",
    ("lmcache-mp-server", "runtime"): "LMCache server",
    ("vllm", "lmcache-cpu-tier"): "CPU tier (L1)",
    ("vllm", "lmcache-runtime"): "LMCache server",
}


def _size(n: int | float | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / GiB:,.1f} GiB"


def _count(n: int | None) -> str:
    return "unknown" if n is None else f"{n:,}"


def _bar(segments: list[tuple[str, int, str]], capacity: int | None, width: int = 48) -> Text:
    """A stacked bar: each segment's share of ``capacity``; the rest is free space."""
    from rich.text import Text

    used = sum(b for _label, b, _style in segments)
    if not capacity:
        return Text(f"{_size(used)} (the instance's capacity is unknown)")
    scale = max(capacity, used, 1)
    text = Text()
    cells = 0
    for _label, nbytes, style in segments:
        n = round(width * nbytes / scale)
        n = min(n, width - cells)
        text.append("█" * n, style=style)
        cells += n
    text.append("░" * (width - cells), style="grey35")
    share = used / capacity
    style = "bold red" if used > capacity else ("yellow" if share > 0.9 else "green")
    text.append(f"  {_size(used)} of {_size(capacity)} ({share:.0%})", style=style)
    if used > capacity:
        text.append("  does not fit", style="bold red")
    return text


def _legend(segments: list[tuple[str, int, str]]) -> Text:
    from rich.text import Text

    text = Text("       ")
    seen = set()
    for label, nbytes, style in segments:
        if not nbytes or (label, style) in seen:
            continue
        seen.add((label, style))
        text.append("■ ", style=style)
        text.append(f"{label}  ")
    text.rstrip()
    return text


CONTAINERS = {"vllm": "vLLM container", "lmcache-mp-server": "LMCache MP server sidecar"}
CONTAINERS_IN_MODE = {  # (container, gpuAccess in-container) -> label
    ("vllm", False): "vLLM container",
    ("vllm", True): "vLLM container (with the LMCache server)",
    ("lmcache-mp-server", False): "LMCache MP server sidecar",
}


MARK = "✗"  # a budget line that does not fit


def _unfit(r: dict[str, Any], code: str) -> list[dict[str, Any]]:
    """The problems of one report that say its ``code`` line does not fit."""
    return [p for p in r["problems"] if p["code"] == code]


def _print_problems(console: Console, problems: list[dict[str, Any]]) -> None:
    """Under a table with a line marked as not fitting: each problem's text (the message is markup_text:
    it may hold brackets)."""
    from rich.text import Text

    for p in problems:
        console.print(Text.from_markup(f"{MARK} {p['message']}", style="bold red"))


def render(reports: list[dict[str, Any]], console: Console) -> None:
    """Print the reports on a rich Console (a terminal, or a recording one for --svg); their strings
    as _shown makes them (no raw control character, no markup of the user's)."""
    from rich.table import Table
    from rich.text import Text

    for r in map(_shown, reports):
        d = r["decision"]
        where = r["instance"]["type"] or "a custom node"
        if d["offloading"] == "enabled":
            state = f"[green]enabled[/] ({d['backend']} backend)"
        else:
            state = f"[red]disabled[/]: {d['reasonCode']} - {d['reason']}"
        console.print(f"[bold]{r['name']}[/]: {r['model']['id']} on {where}: KV-cache offloading {state}")
        if r["problems"]:
            n = len(r["problems"])
            console.print(
                Text(f"{MARK} does not fit: {n} problem{'s' if n != 1 else ''}, the lines marked {MARK}", "bold red")
            )
        if r["gpuAccess"]:
            a = r["gpuAccess"]
            console.print(f"  LMCache GPU access: [bold]{a['mode']}[/]: {a['summary']}", highlight=False)
            console.print(f"  requires: {a['requirement']}", highlight=False)
            console.print(
                f"  LMCache server image: {a['serverImage']}"
                f"{' (the vLLM image)' if a['sameImageAsVllm'] else ' [yellow](not the vLLM image)[/]'}",
                highlight=False,
            )
        w, kvd = r["model"]["dtypes"]["weights"], r["model"]["dtypes"]["kvCache"]
        online = f", quantized online by --quantization {w['online']}" if w["online"] else ""
        if w["onlineUnsized"]:
            online = (
                f", sized unquantized (an upper bound: --quantization {w['onlineUnsized']} quantizes online, but "
                "model.embeddingParameters is not set)"
            )
        console.print(
            f"  dtypes: weights {w['checkpoint']} checkpoint ({_size(r['model']['weightsBytes'])}), {w['onGpu']} on the "
            f"GPUs{online}: {w['bitsPerParameter']:g} bits per parameter ({_size(r['model']['gpuWeightsBytes'])}); "
            f"KV cache {kvd['dtype']}: {kvd['bytes']} byte{'s' if kvd['bytes'] != 1 else ''} per element",
            highlight=False,
        )
        if r["input"]["format"] != "native":
            console.print(f"  from {r['input']['apiVersion']} {r['input']['kind']} in {r['input']['file']}")

        rules = Table(title="Capability rules (first match decides)", title_justify="left")
        rules.add_column("rule")
        rules.add_column("matched")
        rules.add_column("what it means")
        for rule in d["rules"]:
            rules.add_row(rule["code"], "[red]yes[/]" if rule["matched"] else "no", rule["reason"])
        console.print(rules)

        mem = r["memory"]
        table = Table(
            title=f"Sizing: memory budget of one pod ({r['sizing']['gpusPerPod']} GPU(s))", title_justify="left"
        )
        table.add_column("item")
        table.add_column("size", justify="right")
        memory_unfit = _unfit(r, sz.FIT_MEMORY)
        # the item the hint says to lower: the CPU tier (kvCacheOffloading.cpu / cpuMemoryUtilization)
        tier_unfit = any(p["path"].startswith("kvCacheOffloading.") for p in memory_unfit)
        for c in mem["containers"]:
            for item in mem["items"]:
                if item["container"] == c["name"] and item["bytes"]:
                    size = _size(item["bytes"])
                    label = f"  {item['label']}"
                    if tier_unfit and item["item"].removeprefix("lmcache-") == "cpu-tier":
                        label = f"[bold red]{MARK}[/] {item['label']}"
                    table.add_row(label, f"[grey50]({size})[/]" if item["soft"] else size)
            note = " (explicit resources; computed: " + _size(c["computedBytes"]) + ")" if c["explicit"] else ""
            limit = f", limit {_size(c['limitBytes'])}" if c["limitBytes"] != c["requestBytes"] else ""
            label = (
                "vLLM container (with the LMCache server)"
                if c["name"] == "vllm" and (r["gpuAccess"] or {}).get("mode") == "in-container"
                else CONTAINERS.get(c["name"], c["name"])
            )
            table.add_row(f"[bold]{label} memory{note}{limit}[/]", f"[bold]{_size(c['requestBytes'])}[/]")
        node = (
            f"node RAM {_size(mem['nodeMemoryBytes'])}, allocatable {_size(mem['nodeAllocatableBytes'])}; "
            f"this pod's share ({mem['gpuShare']:.0%})"
        )
        if memory_unfit:
            table.add_row(f"[bold red]{MARK} {node}[/]", f"[bold red]{_size(mem['allocatableBytes'])}[/]")
        else:
            table.add_row(node, _size(mem["allocatableBytes"]))
        console.print(table)
        _print_problems(console, memory_unfit)
        if any(c["explicit"] for c in mem["containers"]):
            segments = [
                (CONTAINERS.get(c["name"], c["name"]), c["requestBytes"], "cyan" if c["name"] == "vllm" else "green")
                for c in mem["containers"]
            ]
        else:
            segments = [
                (
                    _SHORT.get((i["container"], i["item"]), "rounding"),
                    i["bytes"],
                    "bright_cyan"
                    if i["item"] == "lmcache-runtime" or (i["container"], i["item"]) == ("lmcache-mp-server", "runtime")
                    else _STYLES.get(i["item"].removeprefix("lmcache-"), "white"),
                )
                for i in mem["items"]
                if not i["soft"]
            ]
        console.print(Text("memory ") + _bar(segments, mem["allocatableBytes"]))
        console.print(_legend(segments))

        disk = r["disk"]
        dt = Table(title="Disk budget (the kubelet's ephemeral storage)", title_justify="left")
        dt.add_column("item")
        dt.add_column("size", justify="right")
        for item in disk["items"]:
            dt.add_row(item["label"], _size(item["bytes"]))
        disk_unfit = _unfit(r, sz.FIT_DISK)
        if disk_unfit:
            dt.add_row(
                f"[bold red]{MARK} ephemeral-storage requested[/]", f"[bold red]{_size(disk['requestBytes'])}[/]"
            )
        else:
            dt.add_row("[bold]ephemeral-storage requested[/]", f"[bold]{_size(disk['requestBytes'])}[/]")
        source = (
            f" ({disk['ephemeralStorageSource']} {_size(disk['ephemeralStorageBytes'])}, less 10%)"
            if disk["ephemeralStorageBytes"]
            else ""
        )
        dt.add_row(f"kubelet ephemeral storage for this pod{source}", _size(disk["allocatableBytes"]))
        if disk["localDiskBytes"]:
            dt.add_row(
                "local NVMe / temp disk for this pod (not the kubelet's by default)", _size(disk["localDiskBytes"])
            )
        for claim in disk["claims"]:
            what = f"claim {claim['claim']}" if claim["claim"] else "one ephemeral claim per pod"
            dt.add_row(f"disk tier {claim['tier']} ({what}, not local disk)", _size(claim["bytes"]))
        console.print(dt)
        if disk["assumption"]:
            console.print(Text(f"assumes: {disk['assumption']}", style="dim"), highlight=False)
        _print_problems(console, disk_unfit)
        segments = [
            (
                "model cache" if i["item"] == "model-cache" else f"disk tier {i['item'][5:]}",
                i["bytes"] or 0,
                _STYLES.get(i["item"], "blue"),
            )
            for i in disk["items"]
        ]
        console.print(Text("disk   ") + _bar(segments, disk["allocatableBytes"]))
        console.print(_legend(segments))
        console.print(_weights_line(disk["weights"]), highlight=False)

        kv = r["kvCache"]
        max_len = kv["maxModelLen"]
        per_gpu = f"; {kv['bytesPerTokenPerGpu']:,} per GPU" if r["sizing"]["gpusPerPod"] else ""
        kt = Table(
            title=f"KV-cache capacity ({kv['podBytesPerToken']:,} bytes per token in this pod{per_gpu})",
            title_justify="left",
        )
        kt.add_column("tier")
        kt.add_column("size", justify="right")
        kt.add_column("tokens", justify="right")
        kt.add_column(f"sequences of {max_len:,} tokens" if max_len else "full-length sequences", justify="right")
        labels = {"gpu": "GPU (after weights)", "cpu-backend": "CPU (vLLM CPU backend)"}
        weights_unfit = _unfit(r, sz.FIT_WEIGHTS)
        for t in kv["tiers"]:
            label = labels.get(t["tier"]) or (
                f"CPU RAM ({t['kind']}{', measured at start-up: ' + t['share'] if t.get('measuredAtStart') else ''})"
                if t["tier"] == "cpu"
                else f"remote, shared: {t['kind']} at {t['url']}"
                if t["tier"] == "remote"
                else f"disk {t['tier'][5:]}: {t['kind']} at {t['path']}"
            )
            if t["tier"] == "gpu" and weights_unfit:
                kt.add_row(
                    f"[bold red]{MARK} {label}[/]", _size(t["bytes"]), _count(t["tokens"]), _count(t["sequences"])
                )
            else:
                kt.add_row(label, _size(t["bytes"]), _count(t["tokens"]), _count(t["sequences"]))
        console.print(kt)
        if kv.get("gpuBudget"):
            g = kv["gpuBudget"]
            spent = ", ".join(f"{k} {_size(v)}" for k, v in g["nonKvBytes"].items())
            console.print(
                f"GPU (after weights), one GPU: {_size(g['reportedBytes'])} reported x --gpu-memory-utilization "
                f"{g['gpuMemoryUtilization']:g} = {_size(g['usableBytes'])}, less {spent}, x {g['kvBudgetPercent']}% "
                f"= {_size(g['kvBytes'])}",
                highlight=False,
            )
        if r.get("lora"):
            console.print(_lora_line(r["lora"]), highlight=False)
        _print_problems(console, weights_unfit)
        ctx = kv["context"]
        context_unfit = _unfit(r, kvcache.FIT_CONTEXT)
        if context_unfit:  # the context length below does not fit: instead of saying how it does
            for p in context_unfit:
                console.print(Text.from_markup(f"{MARK} context: {p['message']}", style="bold red"))
        elif ctx["planned"]:
            console.print(
                f"context: --max-model-len={ctx['flag']:,} (the model supports {ctx['modelMaxLen']:,}; "
                f"one sequence of that does not fit the KV cache)",
                highlight=False,
            )
        elif ctx["requested"]:
            fits = f"; up to {ctx['fits']:,} would fit" if ctx["fits"] else ""
            console.print(f"context: {ctx['served']:,} tokens (model.maxModelLen{fits})", highlight=False)
        elif ctx["served"] and ctx["fits"] is None and r["sizing"]["gpusPerPod"]:
            console.print(
                f"context: {ctx['served']:,} tokens (the model's own limit; the GPU memory is unknown, so vLLM "
                "checks that one sequence fits)",
                highlight=False,
            )
        elif ctx["served"]:
            console.print(
                f"context: {ctx['served']:,} tokens (the model's own limit: one sequence of it fits the KV cache)",
                highlight=False,
            )
        rt = r["routing"]
        console.print(f"routing ({rt['mode']}): {rt['path']}", highlight=False)
        if rt["picker"]:
            pk = rt["picker"]
            weights = ", ".join(f"{k} {v}" for k, v in pk["scorers"].items())
            console.print(
                f"  picker: {pk['image']} x{pk['replicas']} ({weights}; prefix blocks of {pk['blockSizeTokens']} "
                f"tokens, {pk['lruCapacityPerServer']:,} per server); --metrics-endpoint-auth=false: no "
                "cluster-scoped object",
                highlight=False,
            )
        console.print(
            "cache hit path: " + " -> ".join(h["where"] for h in rt["hitPath"]),
            highlight=False,
        )
        if "trace" in r:
            _print_trace(console, r["trace"])
        for w in r["input"]["warnings"]:
            console.print(f"[yellow]input[/]: {w}", highlight=False)
        for w in r["warnings"]:
            console.print(f"[yellow]warning[/]: {w}", highlight=False)
        console.print()


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _print_trace(console: Console, t: dict[str, Any]) -> None:
    """The --trace section: what each tier serves, the curve as bars, routing, and the recommendation."""
    from rich.table import Table

    per_s = f", {t['requests'] / t['durationSeconds']:.1f} requests/s" if t["durationSeconds"] else ""
    console.print(
        f"trace {t['source']}: {t['requests']:,} requests, {t['inputTokens']:,} prompt tokens over "
        f"{t['durationSeconds']:,.0f} s{per_s}; blocks of {t['blockSize']} tokens",
        highlight=False,
    )
    table = Table(title="Trace: prompt tokens each tier serves (per pod, prefix semantics, LRU)", title_justify="left")
    for col, justify in (
        ("tier", "left"),
        ("capacity (tokens)", "right"),
        ("serves", "right"),
        ("tokens/s saved", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for tier in t["tiers"]:
        cap = "unbounded" if tier["capacityTokens"] is None else f"{tier['capacityTokens']:,}"
        rate = "-" if tier["tokensPerSecond"] is None else f"{tier['tokensPerSecond']:,.0f}"
        table.add_row(tier["tier"], cap, _pct(tier["hitRatio"]), rate)
    table.add_row("recomputed", "", _pct(t["recomputeRatio"]), "")
    table.add_row("[bold]all tiers[/]", "", f"[bold]{_pct(t['hitRatio'])}[/]", "")
    table.add_row("unbounded cache", "", _pct(t["maxHitRatio"]), "")
    console.print(table)
    curve = Table(title="Trace: hit ratio of one LRU cache against its capacity", title_justify="left")
    curve.add_column("capacity (tokens)", justify="right")
    curve.add_column("hit ratio", justify="right")
    curve.add_column("")
    best = t["maxHitRatio"] or 1
    points = t["curve"][:: max(1, len(t["curve"]) // 16)]
    for p in points + [q for q in t["curve"][-1:] if q is not points[-1]]:
        bar = "#" * round(40 * p["hitRatio"] / best)
        curve.add_row(f"{p['capacityTokens']:,}", _pct(p["hitRatio"]), bar)
    console.print(curve)
    need = ", ".join(
        f"{float(k):.0%} of the maximum at {v:,} tokens" if v is not None else f"{float(k):.0%}: not reached"
        for k, v in t["capacityFor"].items()
    )
    console.print(f"one cache reaches {need}", highlight=False)
    for r in t["routing"]:
        console.print(
            f"  routing {r['mode']} over {r['replicas']} replicas: {_pct(r['hitRatio'])}"
            f" (busiest replica: {_pct(r['busiestShare'])} of the prompt tokens)",
            highlight=False,
        )
    rec = t["recommendation"]
    if rec["action"] == "change":
        what = ", ".join(f"{c['path']}: {c['value']}" for c in rec["changes"])
        e = rec["expected"]
        console.print(
            f"[bold]recommendation[/]: set {what}: {_pct(e['hitRatio'])}, {e['shareOfMax']:.0%} of the maximum",
            highlight=False,
        )
    elif rec["action"] == "routing":
        modes = ", ".join(rec["modes"]) or "none of the modes"
        console.print(f"[bold]recommendation[/]: {rec['why']}; routing that reaches it: {modes}", highlight=False)
        if "sharedTier" in rec:
            sh = rec["sharedTier"]
            console.print(
                f"  or a shared tier (kvCacheOffloading.remote) holding {sh['capacityTokens']:,} tokens: "
                f"{_size(sh['bytes'])}, remote.capacity {sh['valuePerReplica']} per replica",
                highlight=False,
            )
    else:
        console.print(f"recommendation: nothing to change: {rec['why']}", highlight=False)
    changed = rec["action"] == "change"
    expected = rec["expected"]["hitRatio"] if changed else t["hitRatio"]
    console.print(
        f"to watch it in the cluster: metrics.expectedHitRatio: {round(expected, 3)}{' with the change' if changed else ''}, "
        "and metrics.dashboard and metrics.prometheusRule (docs/operations.md)",
        highlight=False,
    )
    for n in t["notes"]:
        console.print(f"  note: {n}", highlight=False)


PLAIN_WIDTH = 100_000  # not a terminal: as wide as any line of the view, so nothing is wrapped


def text_console(stream: TextIO | None = None) -> Console:
    """The Console the text view prints on: on a terminal, its width (rich's own behaviour); into a
    pipe or a file, no wrapping (rich would wrap at 80 columns there) unless $COLUMNS asks for a
    width, no colour, and no padding at the end of a line."""
    from rich.console import Console

    stream = stream if stream is not None else sys.stdout
    isatty = getattr(stream, "isatty", None)
    # no highlighter: rich's ReprHighlighter would style the digits of a model id (gemma-3-12b-it)
    # apart from the rest; the view's own markup says what is emphasised
    if (isatty is not None and isatty()) or os.environ.get("COLUMNS", "").strip().isdigit():
        return Console(file=stream, highlight=False)
    return Console(file=stream, highlight=False, width=PLAIN_WIDTH, soft_wrap=True)


def print_text(reports: list[dict[str, Any]]) -> None:
    render(reports, text_console())


def _svg_format() -> str:
    """rich's SVG template without its @font-face rules: they fetch Fira Code from a CDN, which
    a pull request's viewer should not (the font family stays, with monospace after it)."""
    import inspect
    import re

    from rich.console import Console

    default = inspect.signature(Console.export_svg).parameters["code_format"].default
    return re.sub(r"\s*@font-face\s*\{\{.*?\}\}", "", default, flags=re.S)


def save_svg(reports: list[dict[str, Any]], path: str, width: int = 120) -> None:
    """Record the text view and write it as an SVG (to paste into a pull request): self-contained,
    no external font links."""
    import io

    from rich.console import Console

    console = Console(
        record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor", highlight=False
    )
    render(reports, console)
    svg = console.export_svg(title="kvgen explain", code_format=_svg_format())
    # render shows no such character; kept out here too, so that the file is XML whatever it holds
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(_NOT_XML.sub(_escaped, svg))


__all__ = ["markup_text", "report", "render", "print_text", "save_svg", "visible"]
