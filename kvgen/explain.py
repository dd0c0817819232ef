"""`kvgen explain`: why offloading is on or off, and what the pod will take.

``report`` builds plain data (also the ``--output json`` form); ``print_text`` lays it out
with rich tables.
"""

from __future__ import annotations

from typing import Any

from kvgen import quantity
from kvgen.plan import Plan
from kvgen.sizing import GiB


def _gib(n: int) -> float:
    return round(n / GiB, 2)


def report(plan: Plan) -> dict[str, Any]:
    s, d, m, i = plan.sizing, plan.decision, plan.model, plan.instance
    bpt = m.kv_bytes_per_token(tensor_parallel=plan.spec.parallelism.tensor)
    gpu_kv_per_gpu = s.gpu_kv_cache // s.gpus_per_pod if s.gpus_per_pod else 0
    memory = [
        {"item": "vLLM container", "bytes": s.vllm.memory},
    ]
    if s.lmcache:
        memory.append({"item": "LMCache MP server sidecar", "bytes": s.lmcache.memory})
    return {
        "name": plan.spec.name,
        "model": {"id": m.id, "architecture": m.architecture, "hybrid": m.hybrid, "mla": m.mla, "weightsBytes": m.weights_bytes},
        "instance": {
            "type": i.type, "gpus": i.gpus, "gpuMemoryBytes": i.gpu_memory_bytes, "memoryBytes": i.memory_bytes,
            "localDiskBytes": i.local_disk_bytes, "arch": i.arch, "mig": i.mig,
        },
        "decision": {
            "offloading": "enabled" if d.enabled else "disabled",
            "backend": plan.backend,
            "reasonCode": d.reason_code,
            "reason": d.reason,
            "rules": [{"code": r.code, "matched": r.matched, "reason": r.reason} for r in d.checked],
        },
        "sizing": {
            "gpusPerPod": s.gpus_per_pod,
            "nodeAllocatableBytes": s.node_allocatable,
            "podAllocatableBytes": s.pod_allocatable,
            "cpuTierBytes": s.cpu_tier,
            "cpuTierUtilization": s.utilization,
            "podMemoryBytes": s.pod_memory,
            "memory": memory,
            "shmBytes": s.shm,
            "modelCacheBytes": s.model_cache,
            "emptyDirTierBytes": s.tiers_ephemeral,
            "podEphemeralBytes": s.pod_ephemeral,
        },
        "kvCache": {
            "bytesPerTokenPerGpu": bpt,
            "gpuBytesPerGpu": gpu_kv_per_gpu,
            "gpuTokens": gpu_kv_per_gpu // bpt if bpt else 0,
        },
        "warnings": plan.warnings,
    }


def print_text(reports: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for r in reports:
        d = r["decision"]
        state = f"[green]enabled[/] ({d['backend']} backend)" if d["offloading"] == "enabled" else f"[red]disabled[/]: {d['reasonCode']} - {d['reason']}"
        console.print(f"[bold]{r['name']}[/]: {r['model']['id']} on {r['instance']['type'] or 'a custom node'}: KV-cache offloading {state}")
        rules = Table(title="Capability rules (first match decides)", show_lines=False)
        rules.add_column("rule")
        rules.add_column("matched")
        rules.add_column("what it means")
        for rule in d["rules"]:
            rules.add_row(rule["code"], "yes" if rule["matched"] else "no", rule["reason"])
        console.print(rules)
        s = r["sizing"]
        size = Table(title="Sizing")
        size.add_column("item")
        size.add_column("size", justify="right")
        size.add_row("node allocatable memory", f"{_gib(s['nodeAllocatableBytes'])} GiB")
        size.add_row(f"this pod's share ({s['gpusPerPod']} GPU(s))", f"{_gib(s['podAllocatableBytes'])} GiB")
        for item in s["memory"]:
            size.add_row(f"  {item['item']} memory", f"{_gib(item['bytes'])} GiB")
        if s["cpuTierBytes"]:
            how = f" (utilization {s['cpuTierUtilization']})" if s["cpuTierUtilization"] is not None else ""
            size.add_row(f"  of which CPU tier{how}", f"{_gib(s['cpuTierBytes'])} GiB")
        size.add_row("/dev/shm", f"{_gib(s['shmBytes'])} GiB")
        size.add_row("model cache (ephemeral)", f"{_gib(s['modelCacheBytes'])} GiB")
        if s["emptyDirTierBytes"]:
            size.add_row("emptyDir disk tiers (ephemeral)", f"{_gib(s['emptyDirTierBytes'])} GiB")
        size.add_row("pod ephemeral storage", f"{_gib(s['podEphemeralBytes'])} GiB")
        console.print(size)
        kv = r["kvCache"]
        console.print(
            f"KV cache: {kv['bytesPerTokenPerGpu']} bytes per token per GPU; about "
            f"{_gib(kv['gpuBytesPerGpu'])} GiB ({kv['gpuTokens']:,} tokens) of GPU KV cache per GPU"
        )
        for w in r["warnings"]:
            console.print(f"[yellow]warning[/]: {w}")
        console.print()


__all__ = ["report", "print_text", "quantity"]
