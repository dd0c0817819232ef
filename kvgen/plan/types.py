"""The plan of one spec: the resolved model and node, the capability decision, the sizes and the
context length, with the facts derived from them that the context and explain read. Built by
``kvgen.plan.build``; the chart's twin is the state dict ``kvgen.plan`` fills (templates/plan/_plan.tpl).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from kvgen.core.errors import Problem
from kvgen.data.catalog import InstanceInfo, ModelInfo
from kvgen.plan.gpu_access import GpuAccess
from kvgen.plan.kvcache import ContextLength
from kvgen.plan.rules import Decision
from kvgen.plan.sizing import ContainerSize as ContainerSize
from kvgen.plan.sizing import Sizing
from kvgen.spec.models import Spec

# Multi-node servers: rank 0 ("leader") runs the API server, ranks 1.. ("worker") run headless.
WORKER_SUFFIX = "-worker"  # the StatefulSet of ranks 1..


@dataclass
class Facts:
    """Every decision of kvgen/plan/ the layout reads beyond the plan's own fields, made once when the plan
    is built (kvgen.plan.build.layout_facts): the plan document (kvgen.plan.document) carries them to the
    layout. A field that does not apply to the plan is None (or empty)."""

    # images: the vLLM container's (and its tag, the version label), the LMCache sidecar's, the picker's
    vllm_image: str
    vllm_tag: str
    vllm_pull_policy: str | None
    lmcache_image: str | None
    lmcache_pull_policy: str | None
    picker_image: str | None
    routing_sidecar_image: str | None  # a decode server in routing.mode gateway: llm-d's pd-sidecar
    # the weights: served from a mounted directory, downloaded into a claim by an init container
    model_local: bool
    model_dir: str
    model_mount: dict[str, Any] | None
    model_volume: dict[str, Any] | None
    downloads: bool
    download_args: list[str]
    cache_path: str | None
    weights_claim_size: int | None  # model.cache.claimTemplate without a size: the claim kvgen sizes
    extra_args: list[str]  # vllm.extraArgs as vLLM gets them (model.cache: without --revision)
    # the GPUs (gpuAccess), the pod's settings, the remote tier
    gpu_env: list[dict[str, Any]]
    gpu_claim_name: str
    tolerations: list[dict[str, Any]]
    pod_security_context: dict[str, Any]
    container_security_context: dict[str, Any]
    service_account_name: str | None
    remote_adapter: dict[str, Any] | None
    remote_env: list[dict[str, Any]]
    # sizes and timings beyond the containers': the disk tiers' known capacities (bytes), the startup probe's
    # threshold, the download's expected time, the picker's prefix index
    tier_capacities: list[int | None]
    startup_failure_threshold: int
    download_seconds: int
    cpu_backend_kv_space_gib: int
    lmcache_server_overhead: int
    lmcache_l1_init_gib: int
    download_cpu: str
    download_memory: int
    block_size_tokens: int | None
    lru_capacity: int | None
    lora: dict[str, Any] | None  # model.lora: kvgen.plan.lora's flags, volumes, mounts and downloads


@dataclass
class Plan:
    spec: Spec
    model: ModelInfo
    instance: InstanceInfo
    decision: Decision
    sizing: Sizing
    gpus_per_pod: int
    context_length: ContextLength
    warnings: list[str] = field(default_factory=list)
    gpu_access: GpuAccess | None = None  # how the LMCache server reaches the GPUs (lmcache backend)
    # why the pod does not fit its node (sizing's and the context length's problems, FIT_CODES): render
    # refuses such a plan with them, kvgen explain shows its budget
    problems: list[Problem] = field(default_factory=list)
    k8s_version: str = ""  # the Kubernetes version (major.minor) the objects are for (kube_target.resolve)
    facts: Facts | None = None  # set by kvgen.plan.build.build once the plan is complete

    @property
    def layout(self) -> Facts:
        """The facts the layout reads (build always sets them)."""
        assert self.facts is not None, "a plan is complete only after kvgen.plan.build.build"
        return self.facts

    @property
    def backend(self) -> str | None:
        return self.spec.kv_cache_offloading.backend if self.decision.enabled else None

    @property
    def multi_node(self) -> bool:
        return self.spec.parallelism.nodes > 1

    @property
    def lws(self) -> bool:
        """A multi-node server rendered as a LeaderWorkerSet (multiNode.engine leaderworkerset)."""
        return self.multi_node and self.spec.multi_node.engine == "leaderworkerset"

    @property
    def in_container(self) -> bool:
        return self.gpu_access is not None and self.gpu_access.mode == "in-container"

    @property
    def sidecar(self) -> bool:
        return self.gpu_access is not None and not self.in_container

    @property
    def server_size(self) -> ContainerSize:
        """The LMCache server's share (gpu_access is set only for the lmcache backend, which sizes it)."""
        assert self.sizing.lmcache is not None, "no LMCache server in this plan"
        return self.sizing.lmcache

    def containers(self) -> list[tuple[str, ContainerSize]]:
        """The containers as rendered, with their sizes: in-container mode has no sidecar, and
        the vLLM container then holds the server's share too."""
        s = self.sizing
        if self.in_container:
            return [("vllm", with_server(s.vllm, self.server_size))]
        out = [("vllm", s.vllm)]
        if s.lmcache is not None:
            out.append(("lmcache-mp-server", s.lmcache))
        return out


def with_server(vllm: ContainerSize, server: ContainerSize) -> ContainerSize:
    """gpuAccess in-container: one container sized as the vLLM container plus the LMCache
    server's share (its L1 and process; explicit resources.lmcacheServer memory and ephemeral
    storage included). Its CPU is the vLLM container's: the server's threads share it."""
    memory = vllm.memory + server.memory
    limit = vllm.limit + server.limit
    ephemeral_limit = None
    if vllm.ephemeral_limit is not None or server.ephemeral_limit is not None:
        ephemeral_limit = sum(
            e if e is not None else r
            for e, r in ((vllm.ephemeral_limit, vllm.ephemeral), (server.ephemeral_limit, server.ephemeral))
        )
    return ContainerSize(
        cpu=vllm.cpu,
        memory=memory,
        ephemeral=vllm.ephemeral + server.ephemeral,
        memory_limit=limit if limit != memory else None,
        cpu_limit=vllm.cpu_limit,
        ephemeral_limit=ephemeral_limit,
    )


# ----------------------------------------------------------------------------- the plan document
# The plan as plain JSON data (kvgen.plan.document writes it, the chart's kvgen.planDocument too; docs/plan.md)

_STRICT = ConfigDict(extra="forbid", strict=True)
KubeObject = dict[str, Any]


@with_config(_STRICT)
class ModelRow(TypedDict):
    """The model's catalog row as resolved (built-in, own or inline) and as vLLM's dtype flags make it."""

    id: str
    architecture: str
    layers: int
    attentionLayers: int
    kvHeads: int
    headDim: int
    mla: bool
    hybrid: bool
    multimodal: bool
    quantization: str
    weightsBytes: int  # the checkpoint's
    gpuWeightsBytes: int  # on the GPUs, as the dtype flags make them
    kvDtypeBytes: int
    maxModelLen: NotRequired[int]
    slidingLayers: int
    slidingWindow: NotRequired[int]


@with_config(_STRICT)
class InstanceRow(TypedDict):
    """The node's catalog row as resolved."""

    type: NotRequired[str]
    gpus: int
    gpuModel: NotRequired[str]
    gpuMemoryBytes: int  # 0: unknown
    gpuUsableBytes: int  # what CUDA reports, what vLLM multiplies by gpuMemoryUtilization
    memoryBytes: int  # 0: unknown
    arch: str
    localDiskBytes: int
    ephemeralBytes: int  # 0: unknown
    mig: NotRequired[str]
    nodeSelector: NotRequired[dict[str, str]]  # a row that is not a cloud instance type selects its nodes so
    cloudType: bool


@with_config(_STRICT)
class RuleChecked(TypedDict):
    code: str
    matched: bool


@with_config(_STRICT)
class DecisionDoc(TypedDict):
    enabled: bool
    code: NotRequired[str]  # the first rule that matched (offloading off)
    reason: NotRequired[str]
    rules: list[RuleChecked]  # every rule of files/rules.yaml, in order


@with_config(_STRICT)
class GpuAccessDoc(TypedDict):
    mode: str
    summary: str  # files/gpu-access.yaml: what the mode does
    requirement: str  # and what the cluster needs for it
    deviceClassName: NotRequired[str]  # dra
    claimName: str  # dra: the pod's claim
    env: list[KubeObject]  # what both containers get in this mode


@with_config(_STRICT)
class ContextLengthDoc(TypedDict):
    flag: NotRequired[int]  # the --max-model-len kvgen passes
    fits: NotRequired[int]  # the longest length that fits
    perTokenBytes: int  # KV bytes of one token on one GPU


@with_config(_STRICT)
class ContainerSizeDoc(TypedDict):
    cpu: NotRequired[str]
    memory: int
    limit: int
    ephemeral: int
    cpuLimit: NotRequired[str]
    ephemeralLimit: NotRequired[int]


@with_config(_STRICT)
class TierDoc(TypedDict):
    capacity: NotRequired[int]  # bytes, where kvgen knows it (an emptyDir's size, a claim template's request)


@with_config(_STRICT)
class Sizes(TypedDict):
    vllm: ContainerSizeDoc  # the vLLM container as rendered (in-container: with the LMCache server's share)
    lmcacheServer: NotRequired[ContainerSizeDoc]  # the LMCache server's share (the lmcache backend)
    launcherReserve: NotRequired[int]  # what the launcher leaves to others in its cgroup: the server's process
    # (and vLLM's limit in-container)
    shm: int
    modelCache: int
    cpuTier: int
    l1Cap: NotRequired[int]  # lmcache: the explicit cap the launcher applies
    utilization: NotRequired[float]  # lmcache: the share of available RAM the launcher uses
    tiers: list[TierDoc]  # the disk tiers, while offloading is on
    weightsClaim: NotRequired[int]  # model.cache.claimTemplate without a size: the claim kvgen sizes
    startupFailureThreshold: int
    downloadSeconds: int


@with_config(_STRICT)
class Images(TypedDict):
    vllm: str
    vllmTag: str
    vllmPullPolicy: NotRequired[str]
    lmcache: NotRequired[str]  # the LMCache sidecar's (gpuAccess other than in-container)
    lmcachePullPolicy: NotRequired[str]
    picker: NotRequired[str]  # routing.mode gateway
    routingSidecar: NotRequired[str]  # a decode server in routing.mode gateway: the prefill/decode sidecar


@with_config(_STRICT)
class Weights(TypedDict):
    local: bool  # vLLM serves a mounted directory
    dir: str  # that directory
    downloads: bool  # an init container downloads them into a claim
    downloadArgs: NotRequired[list[str]]
    cachePath: NotRequired[str]  # model.cache.claim: the claim's sub-path
    mount: NotRequired[KubeObject]  # vLLM's read-only mount of them
    volume: NotRequired[KubeObject]  # the pod's volume of them (a claim template's is the StatefulSet's)
    claimTemplate: bool  # model.cache.claimTemplate: a claim per pod, a StatefulSet
    extraArgs: list[str]  # vllm.extraArgs as vLLM gets them (model.cache: without --revision)


@with_config(_STRICT)
class RoutingDoc(TypedDict):
    """routing.mode gateway with the prefix-cache scorer: the picker's prefix index."""

    blockSizeTokens: int
    lruCapacityPerServer: int


@with_config(_STRICT)
class LoraDownloadDoc(TypedDict):
    name: str  # the init container's
    args: list[str]  # `hf download`'s


@with_config(_STRICT)
class LoraDoc(TypedDict):
    """model.lora (kvgen.plan.lora): what vLLM gets and where the adapters are."""

    args: list[str]  # --enable-lora ... --lora-modules ITEM...
    volumes: list[KubeObject]  # pvc:// adapters' claims
    mounts: list[KubeObject]  # their read-only mounts in the vLLM container
    downloads: list[LoraDownloadDoc]  # model.cache with download: an init container per hf:// adapter
    gpuBytes: NotRequired[int]  # the buffers on the busiest GPU (absent: not sized)
    hostBytes: int  # the adapters the pod's workers keep in host memory (0: not sized)


@with_config(_STRICT)
class RemoteDoc(TypedDict):
    adapter: KubeObject  # the --l2-adapter object (the password stays in the environment)
    env: list[KubeObject]


@with_config(_STRICT)
class ProblemDoc(TypedDict):
    path: str
    message: str
    hint: NotRequired[str]
    code: NotRequired[str]


@with_config(_STRICT)
class PlanDocument(TypedDict):
    version: int
    kubeVersion: str  # the Kubernetes version (major.minor) the objects are for
    model: ModelRow
    instance: InstanceRow
    gpusPerPod: int
    decision: DecisionDoc
    backend: NotRequired[str]  # offloading on: lmcache or native
    gpuAccess: NotRequired[GpuAccessDoc]  # the lmcache backend: how its server reaches the GPUs
    contextLength: ContextLengthDoc
    sizes: Sizes
    images: Images
    weights: Weights
    tolerations: list[KubeObject]
    podSecurityContext: KubeObject
    containerSecurityContext: KubeObject
    serviceAccountName: NotRequired[str]
    routing: NotRequired[RoutingDoc]
    lora: NotRequired[LoraDoc]
    remote: NotRequired[RemoteDoc]
    warnings: list[str]
    problems: list[ProblemDoc]  # why the pod does not fit its node (render refuses; explain shows)
