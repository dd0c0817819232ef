"""How big everything must be: container memory, /dev/shm, ephemeral storage, the CPU tier.

One module. Every constant is named here and defined, with where it comes from, in
``charts/kvgen/files/sizing.yaml`` (the Helm chart reads the same file). The plan is computed from the
node's allocatable memory (what the kubelet leaves to pods), the pod's share of the node's
GPUs, the model's weights and the offloading spec. Explicit values in ``spec.resources``
always win; when they look too small a warning says so. A pod that cannot fit its node is
an error that says what to change.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from kvgen.core import quantity
from kvgen.core.errors import Problem
from kvgen.core.quantity import GiB, MiB
from kvgen.data import catalog
from kvgen.data.catalog import InstanceInfo, ModelInfo
from kvgen.plan import lora
from kvgen.plan.rules import Decision
from kvgen.spec.models import ContainerResources, FileSystemTier, Spec, own_rows

_C = catalog.load("sizing.yaml")  # every constant, with its source, lives in that file

KUBE_RESERVED_BANDS: tuple[tuple[float, float], ...] = tuple(
    (b["gib"] * GiB if b["gib"] is not None else math.inf, b["share"]) for b in _C["kubeReserved"]["bands"]
)
EVICTION_THRESHOLD = _C["kubeReserved"]["evictionThresholdMiB"] * MiB

VLLM_POD_OVERHEAD = _C["vllm"]["podOverheadGiB"] * GiB
VLLM_PER_GPU_OVERHEAD = _C["vllm"]["perGpuOverheadGiB"] * GiB
MODEL_LOADING_FACTOR = _C["vllm"]["modelLoadingFactor"]
CPU_BACKEND_KV_SPACE_GIB = _C["vllm"]["cpuBackendKvSpaceGiB"]
VLLM_CPU_PER_GPU = _C["vllm"]["cpuPerGpu"]
VLLM_CPU_BASE = _C["vllm"]["cpuBase"]
CPU_REQUEST_CEILING = _C["vllm"]["cpuRequestCeiling"]

NATIVE_CPU_TIER_FACTOR = _C["native"]["cpuTierFactor"]
NATIVE_HYBRID_CPU_TIER_FACTOR = _C["native"]["hybridCpuTierFactor"]

LMCACHE_SERVER_OVERHEAD = _C["lmcache"]["serverOverheadGiB"] * GiB
LMCACHE_SERVER_CPU = quantity.Cpu.parse(str(_C["lmcache"]["serverCpu"]))  # parsed once, at import
LMCACHE_L1_INIT_GIB = _C["lmcache"]["l1InitGiB"]
DEFAULT_CPU_MEMORY_UTILIZATION = _C["lmcache"]["defaultCpuMemoryUtilization"]

SHM_BASE = _C["shm"]["baseGiB"] * GiB
SHM_PER_EXTRA_GPU = _C["shm"]["perExtraGpuGiB"] * GiB

MODEL_CACHE_HEADROOM = _C["modelCache"]["headroomGiB"] * GiB
CLAIM_SLACK_PERCENT = _C["modelCache"]["claimSlackPercent"]
DOWNLOAD_CPU = str(_C["modelCache"]["downloadCpu"])
DOWNLOAD_MEMORY = _C["modelCache"]["downloadMemoryGiB"] * GiB

GPU_BASE_OVERHEAD = int(_C["gpu"]["baseOverheadGiB"] * GiB)
GPU_OVERHEAD_WEIGHT_PERCENT = _C["gpu"]["overheadWeightPercent"]
KV_BUDGET_PERCENT = _C["gpu"]["kvBudgetPercent"]
FITTING_MODEL_SHARE = _C["gpu"]["fittingModelShare"]  # of a GPU's usable memory, for a model a hint names

EPHEMERAL_EVICTION_PERCENT = _C["ephemeral"]["evictionPercent"]

MM_PROCESSOR_CACHE_GIB = _C["multimodal"]["processorCacheGiB"]

STARTUP_DOWNLOAD_RATE = _C["startup"]["downloadMiBPerSecond"] * MiB  # bytes per second
STARTUP_LOAD_RATE = _C["startup"]["loadMiBPerSecond"] * MiB
STARTUP_ENGINE_SECONDS = _C["startup"]["engineSeconds"]
STARTUP_FLOOR_SECONDS = _C["startup"]["floorSeconds"]


def downloaded_by_vllm(spec: Spec, model: ModelInfo) -> int:
    """The bytes vLLM downloads at start into the model-cache emptyDir, its hf:// LoRA adapters with it:
    none when the weights are on a claim (model.uri, or model.cache, which an init container fills before
    vLLM starts)."""
    if spec.model.uri or spec.model.cache is not None:
        return 0
    return model.download_bytes + lora.download_bytes(spec, model)


def download_seconds(model: ModelInfo) -> int:
    """The checkpoint's download at sizing.yaml's rate, whole seconds rounded up."""
    return -(-model.download_bytes // STARTUP_DOWNLOAD_RATE)


def weights_claim_size(spec: Spec, model: ModelInfo) -> int:
    """model.cache.claimTemplate's size in bytes: the spec's, else the checkpoint's download bytes
    with sizing.yaml's slack, plus the model cache's headroom, rounded up to whole GiB."""
    c = spec.model.cache
    if c is not None and c.claim_template is not None and c.claim_template.size is not None:
        return c.claim_template.size.bytes
    slacked = -(-(model.download_bytes + lora.download_bytes(spec, model)) * (100 + CLAIM_SLACK_PERCENT) // 100)
    return round_up_gib(slacked + MODEL_CACHE_HEADROOM)


def startup_budget(spec: Spec, model: ModelInfo) -> int:
    """Seconds vLLM may take to first answer /health: the weights downloaded (none from a claim:
    model.uri, or model.cache, filled by an init container before vLLM starts) and read at
    sizing.yaml's rates, plus the engine's start, at least the floor. Whole seconds, each part
    rounded up (the chart's kvgen.startupProbe does the same)."""
    downloaded = downloaded_by_vllm(spec, model)
    seconds = (
        -(-downloaded // STARTUP_DOWNLOAD_RATE) + -(-model.download_bytes // STARTUP_LOAD_RATE) + STARTUP_ENGINE_SECONDS
    )
    return max(STARTUP_FLOOR_SECONDS, seconds)


def startup_failure_threshold(spec: Spec, model: ModelInfo) -> int:
    """vLLM's startupProbe failureThreshold: the spec's, else the sized budget over periodSeconds (rounded up)."""
    startup = spec.probes.startup
    if startup.failure_threshold is not None:
        return startup.failure_threshold
    return -(-startup_budget(spec, model) // startup.period_seconds)


def extra_arg(spec: Spec, *names: str) -> str | None:
    """The value vllm.extraArgs gives the option ``names`` (--name=value or --name value, with
    underscores or dashes; the last one wins, as in argparse); None when it is not there. The
    chart's kvgen.extraArg reads the same."""
    args = list(spec.vllm.extra_args)
    found = None
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name.replace("_", "-") in names:
            found = value if eq else (args[i + 1] if i + 1 < len(args) else "")
    return found


@dataclass(frozen=True)
class MMCache:
    """vLLM 0.33's multimodal processor cache: ``bytes`` of one cache, held by ``holders``
    processes; ``in_shm``: one shared-memory ring in /dev/shm (--mm-processor-cache-type shm)."""

    bytes: int = 0
    holders: int = 0
    in_shm: bool = False

    @property
    def total(self) -> int:
        return self.bytes * self.holders


def mm_processor_cache(spec: Spec, model: ModelInfo) -> MMCache:
    """The multimodal processor cache of a model that takes images (sizing.yaml multimodal):
    mm_processor_cache_gb (--mm-processor-cache-gb, default 4; 0 disables it). With one API
    server and no data parallelism the engine core holds it (lru) or one shared-memory ring in
    /dev/shm does (--mm-processor-cache-type shm); with more API servers (--api-server-count, by
    default parallelism.data) every API server holds a full one and the type is not used."""
    if not model.multimodal:
        return MMCache()
    value = extra_arg(spec, "--mm-processor-cache-gb") or ""
    # a value vLLM would refuse is reported by the extraArgs check; the default stands here
    gib_ = float(value) if re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", value) else float(MM_PROCESSOR_CACHE_GIB)
    size = int(gib_ * GiB)
    if not size:
        return MMCache()
    servers = extra_arg(spec, "--api-server-count", "-asc") or ""
    count = int(servers) if re.fullmatch(r"[0-9]+", servers) else spec.parallelism.data
    ipc = max(1, count) == 1 and spec.parallelism.data == 1  # factories.py _get_cache_type: IPC caching
    return MMCache(size, max(1, count), ipc and extra_arg(spec, "--mm-processor-cache-type") == "shm")


def kube_reserved(memory: int) -> int:
    reserved = 0.0
    left: float = memory
    for band, share in KUBE_RESERVED_BANDS:
        take = min(left, band)
        reserved += take * share
        left -= take
        if left <= 0:
            break
    return math.ceil(reserved)


def allocatable_memory(memory: int) -> int:
    """Memory the kubelet leaves to pods on a node with ``memory`` bytes of RAM."""
    return memory - kube_reserved(memory) - EVICTION_THRESHOLD


def round_up_gib(n: float) -> int:
    return math.ceil(n / GiB) * GiB


def ephemeral_allocatable(disk: int) -> int:
    """Ephemeral storage the kubelet leaves to pods on a disk of ``disk`` bytes (its hard
    eviction threshold nodefs.available<10% held back)."""
    return disk - disk * EPHEMERAL_EVICTION_PERCENT // 100


_P = _C["gpu"]["vllmProfile"]
NON_TORCH = int(_P["nonTorchGiB"] * GiB)
CUDA_GRAPH_BASE = int(_P["cudaGraphBaseGiB"] * GiB)
CUDA_GRAPH_PER_LAYER = int(_P["cudaGraphPerLayerGiB"] * GiB)


def batch_defaults(spec: Spec, instance: InstanceInfo) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) vLLM 0.33 runs with: vllm.extraArgs', else the OpenAI server's
    defaults for this GPU (EngineArgs.get_batch_defaults; sizing.yaml context.batchedTokens)."""
    model = (instance.gpu_model or "").lower()
    band = next(
        b
        for b in _C["context"]["batchedTokens"]
        if instance.gpu_memory_bytes >= b["minGpuGiB"] * GiB
        and not (b.get("notGpuModel") and b["notGpuModel"] in model)
    )
    tokens = extra_arg(spec, "--max-num-batched-tokens")
    seqs = extra_arg(spec, "--max-num-seqs")
    return (
        int(tokens) if tokens and tokens.isdigit() else int(band["tokens"]),
        int(seqs) if seqs and seqs.isdigit() else int(band["seqs"]),
    )


def gpu_non_kv(spec: Spec, model: ModelInfo, instance: InstanceInfo) -> dict[str, int] | None:
    """What vLLM 0.33's profiling charges outside the KV cache on its busiest GPU (the last pipeline stage:
    the lm_head, the sampler and the received hidden states), item by item (sizing.yaml gpu.vllmProfile);
    None when the model row lacks the geometry (hiddenSize, intermediateSize, vocabSize)."""
    if not (model.hidden_size and model.intermediate_size and model.vocab_size):
        return None
    p = spec.parallelism
    tp, pp = p.tensor, p.pipeline
    n, seqs = batch_defaults(spec, instance)
    h, v, b = model.hidden_size, model.vocab_size, _P["activationBytes"]
    embedding = v * h * 2  # the input embedding or the lm_head, kept 16-bit
    body = model.gpu_weights_bytes - (model.embedding_parameters or 0) * 2
    if pp == 1:
        weights = model.gpu_weights_bytes // tp
    else:  # the last stage: its share of the layers and the lm_head
        weights = max(0, body) // (pp * tp) + embedding // tp
    width = model.intermediate_size * max(1, model.experts_per_token)
    layer = n * b * (_P["mlpLive"] * width // tp + _P["hiddenLive"] * h)
    rows = min(n, seqs)
    sampler = rows * v * _P["samplerBytesPerLogit"] + n * h * b
    persistent = seqs * v * _P["penaltyBytesPerLogit"] + (2 * n * h * b if pp > 1 else 0)
    eager = "--enforce-eager" in {a.partition("=")[0].replace("_", "-") for a in spec.vllm.extra_args}
    graphs = 0 if eager else CUDA_GRAPH_BASE + CUDA_GRAPH_PER_LAYER * (-(-model.layers // pp))
    out = {
        "weights": weights,
        "activations": max(layer, sampler),
        "persistent": persistent,
        "nonTorch": NON_TORCH,
        "cudaGraphs": graphs,
    }
    buffers = lora.gpu_bytes(spec, model)
    if buffers is not None:  # model.lora: preallocated with the weights, inside the profiled memory
        out["lora"] = buffers
    return out


def gpu_kv_inputs(spec: Spec, model: ModelInfo, instance: InstanceInfo) -> tuple[int, dict[str, int]] | None:
    """What gpu_kv_budget subtracts from what: (GPU memory as the device reports it x gpuMemoryUtilization, in
    integer arithmetic: the utilization in parts per million, rounded half up as the chart's floor(x + 0.5); the
    charges outside the KV cache on the busiest GPU, item by item: gpu_non_kv's, or for a model row without the
    geometry KAITO's estimate as weights and overhead, 2.3 GiB + 5% of the weights). None without known GPUs.
    kvgen explain shows them (kvCache.gpuBudget)."""
    if not instance.gpus or not instance.gpu_memory_known:
        return None
    p = spec.parallelism
    ppm = math.floor(spec.vllm.gpu_memory_utilization * 1_000_000 + 0.5)
    usable = instance.gpu_usable_bytes * ppm // 1_000_000
    items = gpu_non_kv(spec, model, instance)
    if items is None:
        weights = model.gpu_weights_bytes // (p.tensor * p.pipeline)
        items = {"weights": weights, "overhead": GPU_BASE_OVERHEAD + weights * GPU_OVERHEAD_WEIGHT_PERCENT // 100}
    return usable, items


def gpu_kv_budget(spec: Spec, model: ModelInfo, instance: InstanceInfo) -> int:
    """The KV-cache bytes kvgen plans with on ONE GPU: GPU memory as the device reports it (instances.yaml
    gpuModels; vLLM requests that total x gpu_memory_utilization) x gpuMemoryUtilization, less what vLLM 0.33's
    profiling charges outside the KV cache on its busiest GPU (gpu_non_kv), and a 10% hold-back
    (sizing.yaml gpu.kvBudgetPercent). A model row without the geometry falls back to KAITO's overhead estimate
    (the weights this GPU holds, 2.3 GiB + 5% of them). kvgen explain's "GPU after weights" and the
    context-length planning (kvgen.plan.kvcache) both use it. Integer arithmetic (the utilization in parts per
    million) so that the Helm chart gets the same bytes; the inputs: gpu_kv_inputs."""
    inputs = gpu_kv_inputs(spec, model, instance)
    if inputs is None:
        return 0
    usable, items = inputs
    return max(0, usable - sum(items.values())) * KV_BUDGET_PERCENT // 100


@dataclass(frozen=True)
class ContainerSize:
    """Computed sizes set memory request = limit (pinned and shared memory cannot be
    reclaimed, so a container must never be scheduled on less than it will use) and no CPU
    limit (throttling a serving engine only adds latency). Explicit values replace either."""

    cpu: quantity.Cpu  # the output writes its text
    memory: int  # memory request
    ephemeral: int  # ephemeral-storage request (0: none)
    memory_limit: int | None = None  # None: equal to the request
    cpu_limit: quantity.Cpu | None = None
    ephemeral_limit: int | None = None

    @property
    def limit(self) -> int:
        return self.memory_limit if self.memory_limit is not None else self.memory


@dataclass(frozen=True)
class MemoryItem:
    """One part of a container's computed memory (``kvgen explain`` shows them)."""

    container: str  # vllm | lmcache-mp-server
    item: str  # runtime, gpu-workers, model-loading, cpu-backend-kv, mm-processor-cache, lora-adapters, shm, cpu-tier,
    # rounding
    bytes: float
    soft: bool = False  # reclaimable page cache: shown by explain, not requested


def _rounded(items: list[MemoryItem]) -> int:
    """The container's memory: its hard items summed in order, rounded up to a whole GiB; the
    rounding is appended as an item of its own, so the hard items add up to the result."""
    total = sum(i.bytes for i in items if not i.soft)
    rounded = round_up_gib(total)
    items.append(MemoryItem(items[0].container, "rounding", rounded - total))
    return rounded


@dataclass
class Sizing:
    gpus_per_pod: int
    gpu_share: float  # this pod's share of the node (GPUs per pod / GPUs per node)
    node_allocatable: int
    pod_allocatable: int  # node allocatable x share
    cpu_tier: int  # bytes of the CPU tier (native: cpu_bytes_to_use; lmcache: planned L1)
    l1_cap: int | None  # lmcache: the explicit cap the launcher applies (kvCacheOffloading.cpu)
    utilization: float | None  # lmcache: the share of available RAM the launcher uses
    shm: int
    model_cache: int
    tiers_ephemeral: int  # emptyDir tier sizes, summed
    ephemeral_allocatable: int  # the kubelet's ephemeral storage for this pod (0: unknown)
    vllm: ContainerSize
    lmcache: ContainerSize | None
    gpu_kv_cache: int  # the GPU KV-cache budget of the whole pod (gpu_kv_budget x its GPUs)
    memory_items: list[MemoryItem] = field(default_factory=list)  # computed, before explicit values
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # the pod cannot fit its node

    @property
    def pod_memory(self) -> int:
        return self.vllm.memory + (self.lmcache.memory if self.lmcache else 0)

    @property
    def pod_ephemeral(self) -> int:
        return self.vllm.ephemeral + (self.lmcache.ephemeral if self.lmcache else 0)


def gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB"


def number(x: float) -> str:
    """A number as Go's %v prints it (the chart's kvgen.number): 0.92, 1."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _override(value: quantity.Size | None, computed: int) -> int:
    return value.bytes if value is not None else computed


def utilization_divisor(spec: Spec) -> int:
    """What the lmcache backend divides the pod's RAM x cpuMemoryUtilization by: 1 (utilizationScope pod,
    the default: one LMCache server per pod holds every tensor-parallel rank's chunks in one pool), or the
    tensor-parallel size (utilizationScope rank: KAITO's arithmetic, which the KAITO input keeps)."""
    return spec.parallelism.tensor if spec.kv_cache_offloading.lmcache.utilization_scope == "rank" else 1


def size(spec: Spec, model: ModelInfo, instance: InstanceInfo, decision: Decision, gpus_per_pod: int) -> Sizing:
    o = spec.kv_cache_offloading
    res = spec.resources
    p = spec.parallelism
    warnings: list[str] = []

    share = gpus_per_pod / instance.gpus if instance.gpus else 1.0
    node_alloc = allocatable_memory(instance.memory_bytes) if instance.node_known else 0  # 0: unknown
    pod_alloc = int(node_alloc * share)
    weights_per_node = model.weights_bytes / p.nodes

    backend = o.backend if decision.enabled else None
    tiers = [t.file_system for t in o.secondary] if decision.enabled else []
    tiers_ephemeral = sum(t.empty_dir.size.bytes for t in tiers if t.empty_dir)

    # CPU tier
    cpu_tier, l1_cap, utilization = 0, None, None
    unsized: list[Problem] = []
    if backend == "native":
        assert o.cpu is not None, "the spec refuses native offloading without kvCacheOffloading.cpu"
        cpu_tier = o.cpu.bytes
    elif backend == "lmcache":
        l1_cap = o.cpu.bytes if o.cpu is not None else None
        if l1_cap is not None and o.cpu_memory_utilization is None:
            utilization = None  # an absolute size: no measurement
            cpu_tier = l1_cap
        else:
            utilization = (
                o.cpu_memory_utilization if o.cpu_memory_utilization is not None else DEFAULT_CPU_MEMORY_UTILIZATION
            )
            if not instance.node_known:
                unsized.append(
                    Problem(
                        ("kvCacheOffloading", "cpuMemoryUtilization"),
                        "the lmcache backend sizes its CPU tier as a share of the node's RAM, and the spec names no node",
                        "set instance.type (or instance.memory), or an absolute kvCacheOffloading.cpu without cpuMemoryUtilization",
                    )
                )
            cpu_tier = int(pod_alloc * utilization / utilization_divisor(spec))
            if l1_cap is not None:
                cpu_tier = min(cpu_tier, l1_cap)
        cpu_tier = (cpu_tier // MiB) * MiB

    # /dev/shm
    shm_base = SHM_BASE + SHM_PER_EXTRA_GPU * max(0, gpus_per_pod - 1)  # NCCL and vLLM's queues
    shm = shm_base
    factor = NATIVE_HYBRID_CPU_TIER_FACTOR if model.hybrid else NATIVE_CPU_TIER_FACTOR
    if backend == "native":
        shm += int(cpu_tier * factor)
    mm = mm_processor_cache(spec, model)
    if mm.in_shm:  # the multimodal cache's shared-memory ring
        shm += mm.total
    shm = _override(res.shm, round_up_gib(shm))

    # model cache
    # every node downloads the whole checkpoint, even when it loads only its pipeline stage;
    # nothing is downloaded from a claim (model.uri, model.cache)
    downloaded = downloaded_by_vllm(spec, model)
    model_cache = _override(res.model_cache, round_up_gib(downloaded + MODEL_CACHE_HEADROOM))

    # vLLM container: the sum of its items, in this order (the chart adds them in the same order)
    items = [MemoryItem("vllm", "runtime", VLLM_POD_OVERHEAD)]
    if instance.gpus:
        items += [
            MemoryItem("vllm", "gpu-workers", VLLM_PER_GPU_OVERHEAD * gpus_per_pod),
            # page cache of the weights read while loading: reclaimable, so not requested
            MemoryItem("vllm", "model-loading", weights_per_node * MODEL_LOADING_FACTOR, soft=True),
        ]
    else:
        items += [
            MemoryItem("vllm", "model-loading", model.weights_bytes),
            MemoryItem("vllm", "cpu-backend-kv", CPU_BACKEND_KV_SPACE_GIB * GiB),
        ]
    if mm.total:  # the multimodal processor cache, in each process that holds one (or once, in /dev/shm)
        items.append(MemoryItem("vllm", "mm-processor-cache", mm.total))
    adapters = lora.host_bytes(spec, model, max(1, gpus_per_pod))
    if adapters:  # model.lora: maxCpuLoras adapters in every worker's pinned memory
        items.append(MemoryItem("vllm", "lora-adapters", adapters))
    items.append(MemoryItem("vllm", "shm", shm_base))
    if backend == "native":
        items.append(MemoryItem("vllm", "cpu-tier", cpu_tier * factor))
    vllm_mem = _rounded(items)
    cpu_req = VLLM_CPU_BASE + VLLM_CPU_PER_GPU * gpus_per_pod
    if instance.cpu:
        cpu_req = min(cpu_req, max(1, int(instance.cpu * share * CPU_REQUEST_CEILING)))
    vllm_eph = model_cache + (tiers_ephemeral if backend == "native" else 0)
    vllm = _apply_overrides("vllm", ContainerSize(quantity.Cpu.cores(cpu_req), vllm_mem, vllm_eph), res.vllm, warnings)

    lmcache = None
    if backend == "lmcache":
        lm_items = [
            MemoryItem("lmcache-mp-server", "cpu-tier", cpu_tier),
            MemoryItem("lmcache-mp-server", "runtime", LMCACHE_SERVER_OVERHEAD),
        ]
        lm_mem = _rounded(lm_items)
        items += lm_items
        lmcache = _apply_overrides(
            "lmcacheServer", ContainerSize(LMCACHE_SERVER_CPU, lm_mem, tiers_ephemeral), res.lmcache_server, warnings
        )

    # GPU KV cache, for explain, the context length and the "does offloading pay off" warning
    gpu_kv = gpu_kv_budget(spec, model, instance) * gpus_per_pod
    eph_alloc = ephemeral_allocatable(instance.ephemeral_bytes)

    sizing = Sizing(
        gpus_per_pod=gpus_per_pod,
        gpu_share=share,
        node_allocatable=node_alloc,
        pod_allocatable=pod_alloc,
        cpu_tier=cpu_tier,
        l1_cap=l1_cap,
        utilization=utilization,
        shm=shm,
        model_cache=model_cache,
        tiers_ephemeral=tiers_ephemeral,
        ephemeral_allocatable=int(eph_alloc * share),
        vllm=vllm,
        lmcache=lmcache,
        gpu_kv_cache=gpu_kv,
        memory_items=items,
        warnings=warnings,
    )
    sizing.problems = unsized + _check_fit(spec, model, instance, sizing, decision)
    _advise(spec, sizing, decision, tiers)
    sizing.warnings += _pool_disk_warning(instance, sizing)
    unchecked = [
        what
        for what, known in (("memory", instance.node_known), ("GPU memory", instance.gpu_memory_known))
        if not known
    ]
    if unchecked:
        sizing.warnings.append(
            f"node fit not checked: the instance gives no {' and no '.join(unchecked)}, so kvgen cannot check that the pod "
            f"fits its node{' or that the weights fit the GPUs' if not instance.gpu_memory_known else ''}; name the node "
            "with instance.type (or describe it: memory, gpuMemory)"
        )
    return sizing


def _apply_overrides(
    name: str, computed: ContainerSize, explicit: ContainerResources, warnings: list[str]
) -> ContainerSize:
    req, lim = explicit.requests, explicit.limits
    if req.memory is not None:
        memory = req.memory.bytes
    elif lim.memory is not None:
        memory = min(computed.memory, lim.memory.bytes)
    else:
        memory = computed.memory
    memory_limit = lim.memory.bytes if lim.memory is not None else max(memory, computed.memory)
    if memory_limit < computed.memory:
        warnings.append(
            f"resources.{name}: memory limit {quantity.format_bytes(memory_limit)} is below the "
            f"{quantity.format_bytes(computed.memory)} kvgen computes for this container; it may be OOM-killed"
        )
    # A computed request never exceeds an explicit limit (the API server refuses a request
    # above its limit): like memory above, cpu and ephemeral-storage are lowered to it.
    eph = _override(req.ephemeral_storage, computed.ephemeral)
    if req.ephemeral_storage is None and lim.ephemeral_storage is not None:
        eph = min(eph, lim.ephemeral_storage.bytes)
    if (req.ephemeral_storage is not None or lim.ephemeral_storage is not None) and eph < computed.ephemeral:
        warnings.append(
            f"resources.{name}: ephemeral-storage {quantity.format_bytes(eph)} is below the "
            f"{quantity.format_bytes(computed.ephemeral)} of its emptyDir volumes; the kubelet may evict the pod"
        )
    cpu = req.cpu or computed.cpu
    if req.cpu is None and lim.cpu is not None and cpu.millicores > lim.cpu.millicores:
        cpu = lim.cpu
    return ContainerSize(
        cpu=cpu,
        memory=memory,
        ephemeral=eph,
        memory_limit=memory_limit if memory_limit != memory else None,
        cpu_limit=lim.cpu,
        ephemeral_limit=lim.ephemeral_storage.bytes if lim.ephemeral_storage is not None else None,
    )


# the codes of the problems _check_fit finds: the plan is complete, the pod does not fit its node
# (kvgen explain shows the budget with the line that does not fit marked)
FIT_MEMORY = "pod-memory-does-not-fit"
FIT_DISK = "pod-disk-does-not-fit"
FIT_WEIGHTS = "weights-do-not-fit-the-gpus"


def _check_fit(spec: Spec, model: ModelInfo, instance: InstanceInfo, s: Sizing, decision: Decision) -> list[Problem]:
    """Why the pod cannot fit its node (memory, the kubelet's disk, the GPUs), if it cannot. Each
    check needs what it compares with; an unknown one is skipped (plan warns: node fit not checked)."""
    problems: list[Problem] = []
    where = instance.type or "the instance"
    o = spec.kv_cache_offloading
    if instance.node_known and s.pod_memory > s.pod_allocatable:
        lead = f"the pod needs {gib(s.pod_memory)} of memory (vLLM {gib(s.vllm.memory)}"
        if s.lmcache:
            lead += f", LMCache server {gib(s.lmcache.memory)}"
        share = f" ({s.gpus_per_pod} of its {instance.gpus} GPUs)" if s.gpu_share < 1 else ""
        message = f"{lead}) but {where} leaves {gib(s.pod_allocatable)} to it{share}"
        if decision.enabled and s.cpu_tier:
            room = s.pod_allocatable - (s.pod_memory - s.cpu_tier)
            if o.backend == "native":
                path, hint = (
                    ("kvCacheOffloading", "cpu"),
                    f"lower kvCacheOffloading.cpu to at most {quantity.format_bytes(max(0, room) // GiB * GiB)}, or pick an instance with more RAM",
                )
            elif s.utilization is not None and s.l1_cap is None:
                path, hint = ("kvCacheOffloading", "cpuMemoryUtilization"), _utilization_hint(spec, s)
            else:
                path, hint = (
                    ("kvCacheOffloading", "cpu"),
                    f"lower kvCacheOffloading.cpu to at most {quantity.format_bytes(max(0, room - LMCACHE_SERVER_OVERHEAD) // GiB * GiB)}, or pick an instance with more RAM",
                )
        else:
            path, hint = ("instance", "type"), "pick an instance with more RAM, or lower resources.*.memory"
        problems.append(Problem(path, message, hint, code=FIT_MEMORY))
    if instance.ephemeral_bytes and s.pod_ephemeral > ephemeral_allocatable(instance.ephemeral_bytes) * s.gpu_share:
        disk = "instance.ephemeralStorage" if instance.ephemeral_explicit else "the OS disk of a default node pool"
        share = f", {s.gpus_per_pod} of its {instance.gpus} GPUs" if s.gpu_share < 1 else ""
        nvme = f" ({where} has {gib(instance.local_disk_bytes)} of local NVMe)" if instance.local_disk_bytes else ""
        message = (
            f"the pod needs {gib(s.pod_ephemeral)} of ephemeral storage (model cache {gib(s.model_cache)}, "
            f"emptyDir tiers {gib(s.tiers_ephemeral)}) but the kubelet of {where} has {gib(s.ephemeral_allocatable)} "
            f"for it ({gib(instance.ephemeral_bytes)}: {disk}, less the kubelet's 10% eviction threshold{share}); "
            "the pod would stay Pending"
        )
        if s.tiers_ephemeral:
            path = ("kvCacheOffloading", "secondary")
            hint = (
                f"move the emptyDir tiers to a pvc.spec tier on a local-NVMe storage class{nvme}, or set "
                "instance.ephemeralStorage if the node pool puts the kubelet on NVMe"
            )
        else:
            path = ("instance", "ephemeralStorage")
            least = quantity.format_bytes(_least_disk(s.pod_ephemeral, s.gpus_per_pod, instance.gpus))
            hint = (
                f"give the node pool an OS disk of at least {least} (or a pool that puts the kubelet on NVMe) and "
                f"set instance.ephemeralStorage to {least}, or pick an instance with fewer GPUs per node"
            )
        problems.append(Problem(path, message, hint, code=FIT_DISK))
    if instance.gpus and instance.gpu_memory_known:
        per_gpu_weights = model.gpu_weights_bytes / (spec.parallelism.tensor * spec.parallelism.pipeline)
        usable = instance.gpu_usable_bytes * spec.vllm.gpu_memory_utilization
        if per_gpu_weights + GPU_BASE_OVERHEAD > usable:
            problems.append(
                Problem(
                    ("parallelism", "tensor"),
                    f"{model.id} needs {gib(int(per_gpu_weights))} of weights per GPU at tensor {spec.parallelism.tensor} x pipeline "
                    f"{spec.parallelism.pipeline}, but a GPU of {where} offers {gib(int(usable))} "
                    f"(gpuMemoryUtilization {number(spec.vllm.gpu_memory_utilization)})",
                    _weights_hint(spec, model, instance, usable),
                    code=FIT_WEIGHTS,
                )
            )
    return problems


def _utilization_hint(spec: Spec, s: Sizing) -> str:
    """The largest kvCacheOffloading.cpuMemoryUtilization (in hundredths) whose CPU tier fits beside
    vLLM: the LMCache server is the tier plus its overhead, rounded up to a whole GiB, in what vLLM
    leaves of the pod's memory; offloading off when no share of it fits (the chart: the same)."""
    left = s.pod_allocatable - s.vllm.memory
    tier = (left // GiB) * GiB - LMCACHE_SERVER_OVERHEAD
    hundredths = tier * utilization_divisor(spec) * 100 // s.pod_allocatable if tier > 0 else 0
    if hundredths > 0:
        value = f"{hundredths // 100}.{hundredths % 100:02d}"
        return f"set kvCacheOffloading.cpuMemoryUtilization to {value} (the largest share that fits), or pick an instance with more RAM"
    if left >= 0:
        return (
            f"set kvCacheOffloading.enabled to false (vLLM leaves {gib(max(0, left))}, too little for the LMCache "
            "server and a CPU tier), or pick an instance with more RAM"
        )
    return "pick an instance with more RAM, or lower resources.*.memory"


def _least_disk(pod_ephemeral: int, gpus_per_pod: int, node_gpus: int) -> int:
    """The smallest whole-GiB disk whose kubelet (less its eviction threshold), for this pod's share of
    the node's GPUs, holds ``pod_ephemeral`` bytes."""
    need = -(-pod_ephemeral * node_gpus // gpus_per_pod) if node_gpus and gpus_per_pod else pod_ephemeral
    disk = -(-need * 100 // ((100 - EPHEMERAL_EVICTION_PERCENT) * GiB)) * GiB
    return disk if ephemeral_allocatable(disk) >= need else disk + GiB


def _weights_hint(spec: Spec, model: ModelInfo, instance: InstanceInfo, usable: float) -> str:
    """The weights do not fit the GPUs: the smallest tensor-parallel size of the node's GPUs they fit
    at, else the largest catalog model (its checkpoint's size) that fills at most FITTING_MODEL_SHARE
    of the GPUs the spec uses (ties: the first id), else larger GPUs."""
    p = spec.parallelism
    tensor = p.tensor * 2
    while tensor * p.pipeline <= instance.gpus:
        if model.gpu_weights_bytes / (tensor * p.pipeline) + GPU_BASE_OVERHEAD <= usable:
            return f"set parallelism.tensor to {tensor}, or pick an instance with larger GPUs"
        tensor *= 2
    best, best_bytes = None, 0
    rows = catalog.models(own_rows(spec).get("models"))
    for mid in sorted(rows):
        weights = rows[mid].get("weights")
        if mid == model.id or weights is None:
            continue
        size = weights.bytes if isinstance(weights, quantity.Size) else quantity.to_bytes(weights)
        if size > best_bytes and size / (p.tensor * p.pipeline) <= usable * FITTING_MODEL_SHARE:
            best, best_bytes = mid, size
    if best is not None:
        return (
            f"set model.id to {best} (the largest catalog model whose {quantity.format_bytes(best_bytes)} of weights "
            f"leave room for a KV cache), or pick an instance with larger GPUs"
        )
    return "raise parallelism.tensor or parallelism.pipeline, or pick an instance with larger GPUs"


def _pool_disk_warning(instance: InstanceInfo, s: Sizing) -> list[str]:
    """Issue 36: the kubelet's disk of a catalog type is the OS disk of the cloud's default node pool (EKS: 20
    GiB), which the spec did not state: said on the render that relies on it for more than half of its room,
    before a smaller disk leaves the pod Pending. (A pod it does not hold is a problem, FIT_DISK.)"""
    if not instance.ephemeral_bytes or instance.ephemeral_explicit:
        return []
    room = ephemeral_allocatable(instance.ephemeral_bytes) * s.gpu_share
    if not room / 2 < s.pod_ephemeral <= room:
        return []
    return [
        f"the pod's {gib(s.pod_ephemeral)} of ephemeral storage is {s.pod_ephemeral / room:.0%} of what the kubelet of "
        f"{instance.type or 'the instance'} has for it ({gib(s.ephemeral_allocatable)}), taken from the OS disk of a "
        f"default node pool ({gib(instance.ephemeral_bytes)}); on a node pool with a smaller OS disk the pod stays "
        "Pending: set instance.ephemeralStorage to your node pool's"
    ]


def _advise(spec: Spec, s: Sizing, decision: Decision, tiers: list[FileSystemTier]) -> None:
    if not decision.enabled:
        return
    # explain's cpuLargerThanGpu: False on a GPU node whose CPU tier does not exceed the GPU KV cache
    if s.gpus_per_pod and s.cpu_tier <= s.gpu_kv_cache:
        s.warnings.append(
            f"the CPU tier ({gib(s.cpu_tier)}) is not larger than the GPU KV cache (~{gib(s.gpu_kv_cache)}); "
            "offloading then mostly mirrors what the GPU already holds"
        )
    if spec.kv_cache_offloading.backend == "native" and any(t.empty_dir for t in tiers):
        s.warnings.append(
            "vLLM's fs tier has no size bound: when it outgrows an emptyDir's sizeLimit the kubelet evicts the pod; "
            "size the emptyDir generously or use a pvc tier"
        )
