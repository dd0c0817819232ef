"""How KAITO sizes a preset: the GPUs of one node, its node estimator, its parallelism and its
--gpu-memory-utilization (kaito-project/kaito v0.12; KAITO's tables are data in
charts/kvgen/files/kaito.yaml).

- ``gpu_config``: the GPUs of one node as KAITO sees them. A provisioned ``instanceType`` (NAP)
  is looked up in KAITO's SKU table (pkg/sku, case-insensitive); your own nodes (BYO, kvgen's
  ``--instance``) are read from their labels, i.e. kvgen's instance row; a MIG partition is one
  slice of floor(GB) GiB (pkg/utils/common.go GetMIGGPUConfig); an accelerator partition cuts
  the node to ``count`` GPUs (ScaleGPUConfigToCount).
- ``estimate_nodes``: NodeEstimator.EstimateNodeCount (pkg/workspace/estimator/nodesestimator/
  estimator.go L70-197): the node count comes from the model size and the GPUs' memory, not
  from ``resource.count``, with KAITO's errors.
- ``parallelism``: configureParallelism (pkg/model/interface.go L530-573).
- ``explicit_max_model_len``: ParseExplicitMaxModelLen (pkg/utils/config_parser.go), the line
  scanner KAITO runs over the ConfigMap to give the estimator its context size.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from kvgen.core import quantity
from kvgen.core.errors import KvgenError, quoted
from kvgen.data import catalog

GiB = quantity.GiB


def data() -> dict[str, Any]:
    return catalog.load("kaito.yaml")


class KaitoError(KvgenError):
    """What KAITO's controller or webhook would refuse, in its words (the KAITO reader turns it
    into a problem at the field that caused it)."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message, self.hint = message, hint


@dataclass(frozen=True)
class GpuConfig:
    gpus: int  # GPUs (or MIG slices) of one node the workload uses
    memory: int  # GPU memory of all of them, bytes (KAITO's GPUMem)
    model: str  # KAITO's GPUModel: "" for BYO nodes and MIG slices
    mig: bool = False
    known_sku: bool = True  # False: an instanceType KAITO's SKU table does not have

    @property
    def per_gpu(self) -> int:
        return self.memory // self.gpus if self.gpus else 0


def sku(instance_type: str) -> dict[str, Any] | None:
    """KAITO's SKU row (pkg/sku generalSKUHandler.GetGPUConfigBySKU: case-insensitive)."""
    rows = {k.lower(): v for k, v in data()["skus"].items()}
    return rows.get(instance_type.lower())


def _from_row(row: dict[str, Any]) -> tuple[int, int]:
    gpus = int(row.get("gpus") or 0)
    return gpus, quantity.to_bytes(row.get("gpuMemory") or 0) * gpus


def gpu_config(
    instance_type: str | None, byo_type: str | None, mig_profile: str | None, accelerators: int | None
) -> GpuConfig | None:
    """The GPUs of one node (pkg/workspace/inference/preset_inferences.go getGPUConfig). None: the
    node is unknown to kvgen's catalog (an error elsewhere)."""
    if mig_profile:
        return GpuConfig(1, mig_gib(mig_profile) * GiB, "", mig=True)
    if instance_type:  # NAP: KAITO's SKU table; a type it lacks is sized from kvgen's catalog
        row = sku(instance_type)
        if row is not None:
            return GpuConfig(int(row["gpus"]), quantity.to_bytes(row["gpuMemory"]), str(row["gpuModel"]))
        kv = catalog.instances().get(instance_type)
        if kv is None:
            return None
        gpus, memory = _from_row(kv)
        return GpuConfig(gpus, memory, "", known_sku=False)
    kv = catalog.instances().get(byo_type or "")
    if kv is None:
        return None
    gpus, memory = _from_row(kv)  # BYO: nvidia.com/gpu.count x gpu.memory of the node's labels
    if accelerators:
        if accelerators > gpus:
            raise KaitoError(
                f"partition.count ({accelerators}) exceeds GPUs available on node ({gpus})",
                "lower resource.partition.count, or pick an instance with more GPUs",
            )
        memory, gpus = memory // gpus * accelerators, accelerators
    return GpuConfig(gpus, memory, "")


def mig_gib(profile: str) -> int:
    """'1g.10gb' -> 10: the GiB of GPU memory KAITO gives a slice (floor of the GB in its name)."""
    m = re.fullmatch(r"(\d+)g\.([\d.]+)gb", profile)
    return int(math.floor(float(m.group(2)))) if m else 0


def check_mig_profile(profile: str) -> None:
    """pkg/utils/mig/mig.go ValidateMIGProfile."""
    if not re.fullmatch(r"(\d+)g\.([\d.]+)gb", profile):
        raise KaitoError(f"invalid MIG profile format {quoted(profile)}: expected format like '1g.10gb'")
    known = data()["migProfiles"]
    if profile not in known:
        raise KaitoError(f"unknown MIG profile {quoted(profile)}: must be one of [{' '.join(sorted(known))}]")


def model_file_size(model_id: str) -> str | None:
    """KAITO's modelFileSize for a model (its catalog), else kvgen's weights: as written."""
    sizes = {k.lower(): v for k, v in data()["modelFileSize"].items()}
    if model_id.lower() in sizes:
        return str(sizes[model_id.lower()])
    row = catalog.models().get(model_id)
    return str(row["weights"]) if row else None


def bytes_per_token(model_id: str) -> int | None:
    """presets/workspace/generator/generator.go calculateKVCacheTokenSize: every hidden layer;
    2 x KV heads x head dim x 2 bytes, or for MLA (kv_lora_rank + qk_rope_head_dim) x 2 bytes."""
    row = catalog.models().get(model_id)
    if row is None:
        return None
    layers, head_dim = int(row["layers"]), int(row["headDim"])
    if row.get("mla"):
        return head_dim * layers * 2
    return 2 * int(row["kvHeads"]) * head_dim * layers * 2


def explicit_max_model_len(text: str) -> int | None:
    """pkg/utils/config_parser.go ParseExplicitMaxModelLen: a line scanner, not YAML. Inside the
    block of a line starting 'vllm:', the first line starting 'max-model-len:' with a positive
    whole number (strconv.Atoi); anything else there (4k, auto, 0) is no value."""
    in_vllm, base = False, ""
    for line in text.split("\n"):
        trim = line.strip()
        if not in_vllm:
            if trim.startswith("vllm:"):
                in_vllm = True
                base = line[: len(line) - len(line.lstrip(" \t"))] + "  "
            continue
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if trim and not trim.startswith("#") and len(indent) < len(base):
            break
        if trim.startswith("max-model-len:"):
            value = trim[len("max-model-len:") :].strip()
            if re.fullmatch(r"[+-]?\d+", value) and int(value) > 0:
                return int(value)
            break
    return None


def estimate_nodes(
    size: str, bpt: int, gpu: GpuConfig, context: int | None, requested: int = 0, profile: str | None = None
) -> int:
    """NodeEstimator.EstimateNodeCount (estimator.go L130-197), its float arithmetic step by step."""
    c = data()["estimator"]
    n = requested if requested > 0 else 1
    ctx = context if context and context > 0 else int(c["defaultContextSize"])
    if gpu.memory == 0 or gpu.gpus <= 0:
        return n
    model = float(quantity.to_bytes(size)) * c["weightExpansionFactor"]
    per_gpu = float(gpu.memory // gpu.gpus)
    available = per_gpu * c["gpuMemoryUtilization"]
    kv_cache = float(ctx * bpt) / float(gpu.gpus)
    fixed = c["baseOverheadGiB"] * GiB + kv_cache
    if available <= fixed:
        raise KaitoError(
            f"GPU memory {per_gpu:.0f} bytes is too small, needs at least {fixed / GiB:.1f} GB overhead"
            f" (base: {c['baseOverheadGiB']:.1f}GB + KV Cache: {kv_cache / GiB:.1f} GB)",
            "pick an instance with larger GPUs, or a smaller max-model-len in the ConfigMap's vllm section",
        )
    per_gpu_room = (available - fixed) / (1 + c["overheadWeightFactor"])
    min_gpus = int(model / per_gpu_room) + 1
    n = (min_gpus + gpu.gpus - 1) // gpu.gpus
    if gpu.mig and n > 1:
        overhead = fixed + c["overheadWeightFactor"] * model
        raise KaitoError(
            f"model needs {(model + overhead) / GiB:.1f}GB (weights {model / GiB:.1f}GB + overhead {overhead / GiB:.1f}GB)"
            f" but MIG profile {profile} only provides {per_gpu / GiB:.0f}GB"
            f" ({available / GiB:.1f}GB available after vLLM gpu-memory-utilization)",
            "pick a larger MIG profile",
        )
    return n


def parallelism(nodes: int, gpu: GpuConfig, size: str) -> dict[str, int]:
    """configureParallelism (interface.go L530-573): one node whose every GPU holds the model twice
    is data parallel (modelFitsOnSingleGPU, on the file size without expansion); otherwise
    tensor parallel over every GPU of the node, and pipeline parallel over the nodes."""
    if nodes <= 1 and gpu.gpus > 1 and quantity.to_bytes(size) * gpu.gpus * 2 < gpu.memory:
        return {"data": gpu.gpus}
    out = {"tensor": gpu.gpus} if gpu.gpus > 1 or nodes > 1 else {}
    if nodes > 1:
        out.update(pipeline=nodes, nodes=nodes)
    return out


def gpu_memory_utilization(gpu: GpuConfig | None) -> float:
    """interface.go L420-426: KAITO's value for the SKU's GPU model, else its default."""
    table = data()["gpuMemoryUtilization"]
    if gpu is not None and gpu.model in table["byGpuModel"]:
        return float(table["byGpuModel"][gpu.model])
    return float(table["default"])


__all__ = [
    "GpuConfig",
    "KaitoError",
    "bytes_per_token",
    "check_mig_profile",
    "estimate_nodes",
    "explicit_max_model_len",
    "gpu_config",
    "gpu_memory_utilization",
    "mig_gib",
    "model_file_size",
    "parallelism",
    "sku",
]
