"""The plan as a document: every decision of one spec, as plain JSON data with camelCase keys.

It is the contract between planning and everything after it: the chart's plan writes the same
document (``kvgen.planDocument``, templates/plan/_document.tpl) and the tests compare the two key by
key for every example and for generated specs; ``kvgen explain -o json`` carries it as ``plan``.
``PlanDocument`` (kvgen.plan.types) types it; ``document(plan)`` writes it from a complete plan (kvgen.plan.build).

The rules the context keeps (kvgen/context/types.py) hold here too: absent is a key left out (never
null), a boolean is always present, and Kubernetes pieces (an env var, a toleration, a volume) pass
through as data. Sizes are bytes, as integers; CPU quantities are their text.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Problem, format_path
from kvgen.plan.sizing import ContainerSize
from kvgen.plan.types import ContainerSizeDoc, Plan, PlanDocument, ProblemDoc

VERSION = 1


def _present(out: dict[str, Any], **items: Any) -> None:
    """Set the items that are not None (absent is a key left out)."""
    out.update({k: v for k, v in items.items() if v is not None})


def container_size(size: ContainerSize) -> ContainerSizeDoc:
    out: dict[str, Any] = {"memory": size.memory, "limit": size.limit, "ephemeral": size.ephemeral}
    _present(
        out,
        cpu=size.cpu.text if size.cpu else None,
        cpuLimit=size.cpu_limit.text if size.cpu_limit else None,
        ephemeralLimit=size.ephemeral_limit,
    )
    return out  # type: ignore[return-value]


def problem(p: Problem) -> ProblemDoc:
    out: dict[str, Any] = {"path": format_path(p.path), "message": p.message}
    _present(out, hint=p.hint, code=p.code)
    return out  # type: ignore[return-value]


def document(plan: Plan) -> PlanDocument:
    """The plan's document (plan.build has set plan.facts)."""
    m, i, d, s, f = plan.model, plan.instance, plan.decision, plan.sizing, plan.layout
    model: dict[str, Any] = {
        "id": m.id,
        "architecture": m.architecture,
        "layers": m.layers,
        "attentionLayers": m.attention_layers,
        "kvHeads": m.kv_heads,
        "headDim": m.head_dim,
        "mla": m.mla,
        "hybrid": m.hybrid,
        "multimodal": m.multimodal,
        "quantization": m.quantization,
        "weightsBytes": m.weights_bytes,
        "gpuWeightsBytes": m.gpu_weights_bytes,
        "kvDtypeBytes": m.kv_dtype_bytes,
        "slidingLayers": m.sliding_layers,
    }
    _present(model, maxModelLen=m.max_model_len, slidingWindow=m.sliding_window)
    instance: dict[str, Any] = {
        "gpus": i.gpus,
        "gpuMemoryBytes": i.gpu_memory_bytes,
        "gpuUsableBytes": i.gpu_usable_bytes,
        "memoryBytes": i.memory_bytes,
        "arch": i.arch,
        "localDiskBytes": i.local_disk_bytes,
        "ephemeralBytes": i.ephemeral_bytes,
        "cloudType": i.cloud_type,
    }
    _present(instance, type=i.type, gpuModel=i.gpu_model, mig=i.mig, nodeSelector=dict(i.node_selector) or None)
    decision: dict[str, Any] = {
        "enabled": d.enabled,
        "rules": [{"code": r.code, "matched": r.matched} for r in d.checked],
    }
    _present(decision, code=d.reason_code, reason=d.reason)
    containers = dict(plan.containers())
    sizes: dict[str, Any] = {
        "vllm": container_size(containers["vllm"]),
        "shm": s.shm,
        "modelCache": s.model_cache,
        "cpuTier": s.cpu_tier,
        "tiers": [{} if c is None else {"capacity": c} for c in f.tier_capacities],
        "startupFailureThreshold": f.startup_failure_threshold,
        "downloadSeconds": f.download_seconds,
    }
    _present(
        sizes,
        lmcacheServer=container_size(s.lmcache) if plan.gpu_access is not None and s.lmcache is not None else None,
        l1Cap=s.l1_cap,
        utilization=s.utilization,
        weightsClaim=f.weights_claim_size,
    )
    images: dict[str, Any] = {"vllm": f.vllm_image, "vllmTag": f.vllm_tag}
    _present(
        images,
        vllmPullPolicy=f.vllm_pull_policy,
        lmcache=f.lmcache_image,
        lmcachePullPolicy=f.lmcache_pull_policy,
        picker=f.picker_image,
        routingSidecar=f.routing_sidecar_image,
    )
    weights: dict[str, Any] = {
        "local": f.model_local,
        "dir": f.model_dir,
        "downloads": f.downloads,
        "extraArgs": list(f.extra_args),
    }
    weights["claimTemplate"] = plan.spec.model.cache is not None and plan.spec.model.cache.claim_template is not None
    _present(
        weights,
        downloadArgs=list(f.download_args) if f.downloads else None,
        cachePath=f.cache_path,
        mount=f.model_mount,
        volume=f.model_volume,
    )
    cost = plan.context_length.cost
    context: dict[str, Any] = {"perTokenBytes": cost.full + cost.sliding}
    _present(context, flag=plan.context_length.flag, fits=plan.context_length.fits)
    out: dict[str, Any] = {
        "version": VERSION,
        "kubeVersion": plan.k8s_version,
        "model": model,
        "instance": instance,
        "gpusPerPod": plan.gpus_per_pod,
        "decision": decision,
        "contextLength": context,
        "sizes": sizes,
        "images": images,
        "weights": weights,
        "tolerations": list(f.tolerations),
        "podSecurityContext": dict(f.pod_security_context),
        "containerSecurityContext": dict(f.container_security_context),
        "warnings": list(plan.warnings),
        "problems": [problem(p) for p in plan.problems],
    }
    if plan.gpu_access is not None:
        a = plan.gpu_access
        access: dict[str, Any] = {
            "mode": a.mode,
            "summary": a.summary,
            "requirement": a.requirement,
            "claimName": f.gpu_claim_name,
            "env": list(f.gpu_env),
        }
        sizes["launcherReserve"] = f.lmcache_server_overhead + (s.vllm.limit if plan.in_container else 0)
        _present(access, deviceClassName=plan.gpu_access.device_class_name)
        out["gpuAccess"] = access
    if f.block_size_tokens is not None and f.lru_capacity is not None:
        out["routing"] = {"blockSizeTokens": f.block_size_tokens, "lruCapacityPerServer": f.lru_capacity}
    if f.lora is not None:
        out["lora"] = f.lora
    if f.remote_adapter is not None:
        out["remote"] = {"adapter": dict(f.remote_adapter), "env": list(f.remote_env)}
    _present(out, backend=plan.backend, serviceAccountName=f.service_account_name)
    return out  # type: ignore[return-value]
