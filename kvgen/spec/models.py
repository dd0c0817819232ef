"""The kvgen spec: typed user models (also the Helm chart's values).

These models are the user-facing layer only; what Kubernetes receives is built elsewhere
(``kvgen.plan`` and ``templates/``). Keys are camelCase. Unknown keys are errors. The JSON
Schema in ``schemas/kvgen.schema.json`` is generated from these models (``kvgen schema``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from kvgen.core import quantity
from kvgen.core.errors import quoted
from kvgen.data import catalog

# Strict, as the JSON Schema (and so Helm) is: no "2" for 2, no true for 1, no 1 for true, no
# " 10Gi". The one coercion JSON Schema makes is kept: a whole float (2.0) is an integer.
MODEL_CONFIG = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=False, frozen=True, strict=True)


def _whole_number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# A positive size with an optional binary or decimal suffix. Exponents and milli-units are
# left out on purpose: the Helm chart parses the same strings in Go templates.
QUANTITY_PATTERN = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)
# The same, but not zero ("0", "0.0Gi"): a Size's schema, so the chart refuses a zero size as kvgen does
# (it rounds any other size up to a whole byte). RE2 has no lookahead: a non-zero digit before or after a point.
POSITIVE_QUANTITY_PATTERN = r"^(0*[1-9][0-9]*(\.[0-9]+)?|0+\.[0-9]*[1-9][0-9]*)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"
# The largest size (1 PiB), kept far from int64 overflow; kvgen.plan.apiserver checks every size.
MAX_SIZE_BYTES = catalog.load("apiserver.yaml")["maxBytes"]
# The largest count of each model and node field (files/apiserver.yaml maxCounts: far above any real
# model, and low enough that the chart's int64 arithmetic cannot overflow).
MAX_COUNT: dict[str, int] = catalog.load("apiserver.yaml")["maxCounts"]


def _check_size(value: Any, zero: bool = False) -> quantity.Size:
    if isinstance(value, quantity.Size):  # already parsed (a spec built from a spec's values)
        return value
    value = _whole_number(value)  # 1073741824.0: an integer to JSON Schema, and so to the chart
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError("must be a size such as 10Gi (a string or a whole number of bytes)")
    text = str(value)
    if text.startswith("-"):
        raise ValueError(
            f"{quantity.shorten(text, quote=False)} is negative; a size must be greater than zero, e.g. 10Gi"
        )
    if not _QUANTITY_RE.match(text):
        raise ValueError(
            f"{quantity.shorten(text)} is not a size; write it as a Kubernetes quantity such as 10Gi, 512Mi or 1T"
        )
    size = quantity.Size.parse(text)  # a QuantityError (a ValueError) for an absurd magnitude
    if size.bytes <= 0 and not (zero and size.bytes == 0):
        raise ValueError("must be greater than zero")
    return size


# A size, parsed here once: the planning modules read .bytes, messages and output the text as
# written (a model dump writes the text back, so a spec's values round-trip unchanged).
Size = Annotated[
    quantity.Size,
    PlainValidator(_check_size),
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": POSITIVE_QUANTITY_PATTERN},
                {"type": "integer", "minimum": 1, "maximum": MAX_SIZE_BYTES},
            ]
        }
    ),
]

# A size that may be zero: an instance row's gpuMemory ("0" when gpus is 0) and localDisk ("0": none), as
# files/instances.yaml writes them, so a row `kvgen catalog` prints loads back from a catalog file.
SizeOrZero = Annotated[
    quantity.Size,
    PlainValidator(lambda value: _check_size(value, zero=True)),
    PlainSerializer(str, return_type=str),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": QUANTITY_PATTERN},
                {"type": "integer", "minimum": 0, "maximum": MAX_SIZE_BYTES},
            ]
        }
    ),
]

# DNS-1035 label: Service names must be one, and kvgen names every object after the spec.
# 52 characters leaves room for "-headless" and for the revision hash in the label of a
# StatefulSet's pods; the worker StatefulSet "<name>-worker" allows 45 (kvgen.plan.apiserver).
NAME_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
NAME_HINT = "use lowercase letters, digits and '-', starting with a letter (a DNS-1035 label)"  # a refused name's
NAMESPACE_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
MIG_PATTERN = r"^[1-9][0-9]*g\.[1-9][0-9]*gb(\+me)?$"
ENV_NAME_PATTERN = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"
MODEL_URI_PATTERN = r"^pvc://[^/]+(/.*)?$"


K8S_MARKER = "x-kvgen-kubernetes-definition"  # replaced by a $ref in kvgen.spec.schema


def k8s(definition: str) -> Any:
    """A Kubernetes object embedded in the spec; its JSON Schema is the Kubernetes definition
    (copied into schemas/kvgen.schema.json by kvgen.spec.schema), and kvgen checks it against the
    target version's schema with the spec's own path."""
    return WithJsonSchema({K8S_MARKER: definition})


PVCSpec = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.PersistentVolumeClaimSpec")]
Toleration = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.Toleration")]
Affinity = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.Affinity")]
EnvVarSource = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.EnvVarSource")]
Volume = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.Volume")]
VolumeMount = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.VolumeMount")]
TopologySpreadConstraint = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.TopologySpreadConstraint")]
PodSecurityContext = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.PodSecurityContext")]
SecurityContext = Annotated[dict[str, Any], k8s("io.k8s.api.core.v1.SecurityContext")]


def _exactly_one_object(*keys: str) -> dict[str, Any]:
    """JSON Schema for "exactly one of these keys holds an object" (Helm enforces it too)."""
    return {"oneOf": [{"required": [k], "properties": {k: {"type": "object"}}} for k in keys]}


class Model(BaseModel):
    model_config = MODEL_CONFIG

    @field_validator("*", mode="before")
    @classmethod
    def _whole_floats(cls, value: Any) -> Any:
        return _whole_number(value)


# ---------------------------------------------------------------- model and instance


class SecretKeyRef(Model):
    """A key of a Kubernetes Secret; kvgen never takes a token literally."""

    name: str = Field(description="Name of the Secret in the spec's namespace.", min_length=1)
    key: str = Field(description="Key inside the Secret that holds the token or key.", min_length=1)


class HFTokenSecretRef(SecretKeyRef):
    """The Secret key vLLM reads its Hugging Face token from."""

    optional: bool | None = Field(
        None,
        description="secretKeyRef.optional: the pod starts without HF_TOKEN when the Secret or key is missing "
        "(KAITO renders its modelAccessSecret so).",
    )


class CacheRetention(Model):
    """The StatefulSet's persistentVolumeClaimRetentionPolicy for the weights' claims."""

    when_deleted: Literal["Retain", "Delete"] = Field(
        "Delete", description="The claims of a deleted StatefulSet (helm uninstall): Delete (default) or Retain."
    )
    when_scaled: Literal["Retain", "Delete"] = Field(
        "Retain",
        description="The claims of pods removed by a scale-down: Retain (default: a scale-up finds them) or Delete.",
    )


AccessMode = Literal["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"]


class CacheClaimTemplate(Model):
    """One claim per pod (StatefulSet volumeClaimTemplates), kept across pod re-creation."""

    storage_class_name: str | None = Field(None, description="StorageClass of the claims. Default: the cluster's.")
    access_modes: list[AccessMode] = Field(
        default_factory=lambda: list[AccessMode](["ReadWriteOnce"]),
        min_length=1,
        description="Access modes of each claim (one pod uses it).",
    )
    size: Size | None = Field(
        None,
        description="Size of each claim. Default: the checkpoint's download bytes plus files/sizing.yaml modelCache "
        "claimSlackPercent and headroomGiB, rounded up to whole GiB; never below the download bytes.",
    )
    retention: CacheRetention = Field(
        default_factory=CacheRetention,
        description="What happens to the claims when the workload is deleted or scaled down.",
    )


class CacheClaim(Model):
    """An existing claim every pod mounts (ReadWriteMany for more than one pod)."""

    name: str = Field(description="Name of an existing PersistentVolumeClaim.", min_length=1)
    path: str | None = Field(
        None, description="Directory inside the claim (subPath). Default: the model id with / as -- (org--name)."
    )


class ModelCache(Model):
    """Exactly one of claimTemplate or claim."""

    model_config = ConfigDict(json_schema_extra=_exactly_one_object("claimTemplate", "claim"))

    claim_template: CacheClaimTemplate | None = Field(
        None, description="One claim per pod: single-node servers become a StatefulSet."
    )
    claim: CacheClaim | None = Field(None, description="One existing claim shared by every pod.")
    download: bool = Field(
        True,
        description="Fill the claim with `hf download` in an init container (files already there are skipped); "
        "false: the files must already be there.",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> ModelCache:
        if (self.claim_template is None) == (self.claim is None):
            both = "both are set" if self.claim is not None else "neither is set"
            raise ValueError(f"exactly one of claimTemplate or claim must be set; {both}")
        return self


# vLLM 0.33 --max-lora-rank's choices (vllm/config/lora.py MaxLoRARanks)
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
LORA_NAME_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?$"
LORA_URI_PATTERN = (
    r"^(hf://[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?|pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[^\s]*)?)$"
)


class LoRAAdapter(Model):
    """A LoRA adapter vLLM loads at start (--lora-modules) and serves under its name."""

    name: str = Field(
        pattern=LORA_NAME_PATTERN,
        max_length=128,
        description="The name clients send as the request's model (vLLM --lora-modules NAME); letters, digits, '.', "
        "'_', '-' and '/', starting and ending with a letter or digit. Not the base model's id.",
    )
    uri: str = Field(
        pattern=LORA_URI_PATTERN,
        description="Where the adapter's files (adapter_config.json and adapter_model.safetensors) are: hf://ORG/REPO, "
        "a Hugging Face repository, fetched the way the weights are (by vLLM at start, or by model.cache's download "
        "into the claim); or pvc://CLAIM/PATH, an existing PersistentVolumeClaim mounted read-only at "
        "/mnt/lora/NAME.",
    )


class LoRA(Model):
    """LoRA adapters served beside the base model (vLLM --enable-lora). docs/lora.md."""

    adapters: list[LoRAAdapter] = Field(
        min_length=1, max_length=32, description="The adapters, each loaded at start under its name."
    )
    max_rank: Literal[1, 8, 16, 32, 64, 128, 256, 320, 512] = Field(
        16,
        description="vLLM --max-lora-rank: the largest adapter rank (vLLM refuses an adapter above it); the GPU buffers "
        "are sized for it. vLLM 0.33 takes 1, 8, 16, 32, 64, 128, 256, 320 or 512.",
    )
    max_loras: int | None = Field(
        None,
        ge=1,
        le=32,
        description="vLLM --max-loras: adapters one batch can use at once, each a GPU slot of maxRank buffers over "
        "every adapted layer, taken from the KV cache. Default: the number of adapters.",
    )
    max_cpu_loras: int | None = Field(
        None,
        ge=1,
        le=64,
        description="vLLM --max-cpu-loras: adapters each vLLM worker keeps in host memory (at least maxLoras). "
        "Default: maxLoras.",
    )


class ModelSpec(Model):
    """The model to serve: looked up in the catalog by id, or described inline."""

    id: str = Field(
        description="Hugging Face model id, e.g. meta-llama/Llama-3.1-8B-Instruct. Catalog models need nothing else. "
        "Where the weights are downloaded from Hugging Face by it (no model.uri, and no model.cache with download: "
        "false) it must be a repo id as huggingface_hub checks one: NAME or NAMESPACE/NAME, each at most 96 letters, "
        "digits, '-', '_' or '.', not starting or ending with '-' or '.', without '--' or '..'. Otherwise it is the "
        "name vLLM serves the model under (--served-model-name), without whitespace or control characters.",
        min_length=1,
    )
    uri: str | None = Field(
        None,
        json_schema_extra={"pattern": MODEL_URI_PATTERN},
        description="Where the weights are, when not downloaded from Hugging Face: pvc://CLAIM[/PATH], an existing "
        "PersistentVolumeClaim holding the model's files (config.json, tokenizer, safetensors) in PATH, as KServe and "
        "llm-d accept. It is mounted read-only at /mnt/models, vLLM serves that directory under the name model.id "
        "(--served-model-name) with HF_HUB_OFFLINE=1, and nothing is downloaded: for air-gapped clusters.",
    )

    config: str | None = Field(
        None,
        min_length=1,
        description="A Hugging Face config.json, or the directory of a downloaded snapshot holding one (and a ModelOpt "
        "checkpoint's hf_quant_config.json beside it), relative to the spec's file: kvgen derives the model's catalog "
        "row from it as the built-in rows are derived (KV-cache geometry, the sizes tensor parallelism must divide, "
        "layer kinds, quantization, weights), for a fine-tune or any model the catalog lacks; fields the spec's "
        "catalog.models sets for model.id win. kvgen render only: the Helm chart cannot read files, so it takes the "
        "row `kvgen catalog import PATH --id MODEL_ID` prints, as values (-f).",
    )

    @field_validator("uri")
    @classmethod
    def _pvc_uri(cls, value: str | None) -> str | None:
        if value is not None and not re.match(MODEL_URI_PATTERN, value):
            raise ValueError(
                f"{quoted(value)} is not pvc://CLAIM[/PATH]: kvgen reads weights from an existing PersistentVolumeClaim, "
                "or downloads model.id from Hugging Face when uri is left out"
            )
        return value

    cache: ModelCache | None = Field(
        None,
        description="Weights that survive a pod's re-creation: a PersistentVolumeClaim (one per pod, or an existing "
        "one) filled once by an init container (`hf download`, HF_TOKEN from hfTokenSecret), mounted read-only at "
        "/mnt/models and served under model.id with HF_HUB_OFFLINE=1. Default: an emptyDir vLLM downloads into.",
    )

    lora: LoRA | None = Field(
        None,
        description="LoRA adapters served beside the model (vLLM --enable-lora, --max-lora-rank, --max-loras, "
        "--max-cpu-loras and --lora-modules); their GPU buffers come out of the KV cache. docs/lora.md.",
    )

    max_model_len: int | None = Field(
        None,
        ge=1,
        le=MAX_COUNT["maxModelLen"],
        description="vLLM --max-model-len: the longest sequence served. Default: the model's own limit when one sequence of it fits the GPU KV cache, else the longest length that does (kvgen then passes --max-model-len and warns).",
    )
    hf_token_secret: HFTokenSecretRef | None = Field(
        None, description="Secret holding a Hugging Face token (exposed to vLLM as HF_TOKEN). Needed for gated models."
    )
    architecture: str | None = Field(
        None, description="Inline model: the vLLM architecture class, e.g. LlamaForCausalLM. Overrides the catalog."
    )
    layers: int | None = Field(None, ge=1, le=MAX_COUNT["layers"], description="Inline model: number of hidden layers.")
    attention_layers: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["attentionLayers"],
        description="Inline model: layers that keep a per-token KV cache (fewer than layers for hybrids). Default: layers.",
    )
    attention_heads: int | None = Field(
        None,
        ge=1,
        le=MAX_COUNT["attentionHeads"],
        description="Inline model: number of attention (query) heads, num_attention_heads; vLLM refuses a "
        "tensor-parallel size that does not divide it.",
    )
    kv_heads: int | None = Field(
        None, ge=1, le=MAX_COUNT["kvHeads"], description="Inline model: number of key/value heads (1 for MLA)."
    )
    head_dim: int | None = Field(
        None,
        ge=1,
        le=MAX_COUNT["headDim"],
        description="Inline model: head dimension (for MLA: kv_lora_rank + qk_rope_head_dim).",
    )
    experts: int | None = Field(
        None, ge=0, le=MAX_COUNT["experts"], description="Inline model: routed experts of a MoE model (0: dense)."
    )
    experts_per_token: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["expertsPerToken"],
        description="Inline model: experts each token is routed to, num_experts_per_tok (0: dense).",
    )
    hidden_size: int | None = Field(None, ge=1, le=MAX_COUNT["hiddenSize"], description="Inline model: hidden_size.")
    intermediate_size: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["intermediateSize"],
        description="Inline model: the MLP width tensor parallelism splits: intermediate_size, or a MoE model's "
        "per-expert moe_intermediate_size.",
    )
    vocab_size: int | None = Field(None, ge=1, le=MAX_COUNT["vocabSize"], description="Inline model: vocab_size.")
    mla: bool | None = Field(None, description="Inline model: multi-head latent attention (DeepSeek-V2/V3 style).")
    hybrid: bool | None = Field(
        None,
        description="Inline model: hybrid Mamba/linear-attention architecture (vLLM IsHybrid). Derived from the architecture "
        "(charts/kvgen/files/hybrid-architectures.yaml); false on a hybrid architecture is an error.",
    )
    multimodal: bool | None = Field(
        None,
        description="Inline model: takes images or audio (its config.json has a vision_config or audio_config). vLLM "
        "then keeps a multimodal processor cache in host memory (--mm-processor-cache-gb, 4 GiB by default), which "
        "kvgen adds to the vLLM container. Overrides the catalog.",
    )
    weights: Size | None = Field(None, description="Inline model: total size of the weight files, e.g. 15Gi.")
    quantization: str | None = Field(
        None,
        description="Inline model: the checkpoint's weight format, a scheme of files/quantization.yaml: bf16, fp16, "
        "fp8, int8, awq, gptq, nvfp4 or mxfp4 (config.json torch_dtype, or quantization_config quant_method). "
        "Default: the catalog row's, else bf16. weights stays the checkpoint's size; --quantization in vllm.extraArgs "
        "on a 16-bit checkpoint shrinks the weights on the GPU only.",
    )
    embedding_parameters: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["embeddingParameters"],
        description="Inline model: parameters of the input embeddings and the lm_head (vocab_size x hidden_size, x 2 "
        "unless tie_word_embeddings), which vLLM's online quantization (--quantization fp8 on a 16-bit checkpoint) "
        "keeps in the model's dtype. Without it (and the catalog row's), online quantization is sized unquantized "
        "(an upper bound), with a warning.",
    )
    sliding_layers: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["slidingLayers"],
        description="Inline model: attention layers with a sliding window (Gemma, gpt-oss); their KV cache holds at most the window.",
    )
    sliding_window: int | None = Field(
        None, ge=1, le=MAX_COUNT["slidingWindow"], description="Inline model: the sliding window, in tokens."
    )


class InstanceSpec(Model):
    """The node type the pods run on: a catalog type, or described inline."""

    type: str | None = Field(
        None,
        description="Cloud instance type, e.g. Standard_NC24ads_A100_v4 or p5.48xlarge. Pods are pinned to it with node.kubernetes.io/instance-type.",
    )
    gpus: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["gpus"],
        description="GPUs (or MIG devices) per node; 0 for a CPU-only node. With a catalog instance.type it must be "
        "the type's own count (or left out): to use a share of the node's GPUs, set the parallel sizes.",
    )
    gpu_model: str | None = Field(
        None,
        description="GPU model name. One of files/instances.yaml gpuModels is planned from the memory that GPU "
        "reports to CUDA, whatever gpuMemory says.",
    )
    gpu_memory: Size | None = Field(
        None,
        description="Memory of one GPU, e.g. 80Gi. For a GPU files/instances.yaml gpuModels knows it is the marketed "
        "size, and kvgen plans from the memory that GPU reports to CUDA (below it, a warning says which); for any "
        "other gpuModel it is taken as the reported figure.",
    )
    memory: Size | None = Field(None, description="Host RAM of the node, e.g. 220Gi.")
    cpu: int | None = Field(None, ge=1, le=MAX_COUNT["cpu"], description="vCPUs of the node.")
    arch: Literal["amd64", "arm64"] | None = Field(None, description="CPU architecture.")
    local_disk: Size | None = Field(
        None, description="Local NVMe / temp disk of the node (informational: the kubelet does not use it by default)."
    )
    ephemeral_storage: Size | None = Field(
        None,
        description="The kubelet's ephemeral storage (its root disk), which holds emptyDir volumes and the model cache. "
        "Default: the instance type's default OS/boot disk on AKS, EKS and GKE. Set it for node pools that put the kubelet on local NVMe.",
    )
    mig: str | None = Field(
        None,
        pattern=MIG_PATTERN,
        description="MIG profile each GPU request uses, e.g. 1g.10gb (nvidia.com/mig-<profile>). Turns offloading off.",
    )


class Parallelism(Model):
    """How the model is split across GPUs and nodes (vLLM's parallel sizes)."""

    tensor: int = Field(1, ge=1, description="--tensor-parallel-size.")
    pipeline: int = Field(1, ge=1, description="--pipeline-parallel-size.")
    data: int = Field(1, ge=1, description="--data-parallel-size (independent replicas inside one server).")
    nodes: int = Field(
        1,
        ge=1,
        le=1024,
        description="Nodes one server spans; more than 1 renders two StatefulSets or a LeaderWorkerSet (multiNode.engine). "
        "At most 1024: every rank's --kv-transfer-config names one LMCache server per node, and the workload "
        "object must stay within the API server's 1.5 MiB (etcd) request limit.",
    )


# ---------------------------------------------------------------- offloading


class EmptyDirTier(Model):
    size: Size = Field(description="sizeLimit of the emptyDir; the same amount is requested as ephemeral-storage.")


class PVCRef(Model):
    name: str = Field(description="Name of an existing PersistentVolumeClaim.", min_length=1)
    path: str | None = Field(None, description="Sub-directory inside the claim (mounted with subPath).")


class PVCTier(Model):
    """Exactly one of spec (one ephemeral claim per pod) or ref (an existing claim)."""

    model_config = ConfigDict(json_schema_extra=_exactly_one_object("spec", "ref"))

    spec: PVCSpec | None = Field(
        None, description="A PersistentVolumeClaimSpec; each pod gets its own claim, deleted with the pod."
    )
    ref: PVCRef | None = Field(
        None, description="An existing claim; use an RWX claim to share the cache across replicas."
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> PVCTier:
        if (self.spec is None) == (self.ref is None):
            both = "both are set" if self.spec is not None else "neither is set"
            raise ValueError(f"exactly one of spec or ref must be set; {both}")
        return self


class FileSystemTier(Model):
    """Exactly one of emptyDir or pvc."""

    model_config = ConfigDict(json_schema_extra=_exactly_one_object("emptyDir", "pvc"))

    empty_dir: EmptyDirTier | None = Field(None, description="Node-local disk that lives as long as the pod.")
    pvc: PVCTier | None = Field(
        None, description="A PersistentVolumeClaim: per-pod ephemeral (spec) or existing (ref)."
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> FileSystemTier:
        if (self.empty_dir is None) == (self.pvc is None):
            both = "both are set" if self.empty_dir is not None else "neither is set"
            raise ValueError(f"exactly one of emptyDir or pvc must be set; {both}")
        return self


class SecondaryTier(Model):
    file_system: FileSystemTier = Field(description="A disk tier; mounted at /mnt/kv-cache-<index>.")


DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DEFAULT_DEVICE_CLASS = "gpu.nvidia.com"


class LMCacheServer(Model):
    """The LMCache MP server of the lmcache backend (docs/gpu-access.md)."""

    gpu_access: Literal["visible-devices", "dra", "in-container"] = Field(
        "visible-devices",
        description=(
            "How the LMCache server reaches vLLM's GPUs. visible-devices: a sidecar with NVIDIA_VISIBLE_DEVICES=all "
            "and no GPU request (needs a container toolkit that honours the variable). dra: vLLM and the sidecar share "
            "one DRA ResourceClaim for the pod's GPUs (Kubernetes 1.34+ and a DRA driver). in-container: no sidecar; "
            "the server runs inside the vLLM container under kvgen's launcher (the vLLM image must contain LMCache)."
        ),
    )
    device_class_name: str = Field(
        DEFAULT_DEVICE_CLASS,
        pattern=DNS_SUBDOMAIN_PATTERN,
        max_length=253,
        description="gpuAccess dra: the DeviceClass the pod's GPUs are claimed from (NVIDIA's DRA driver: gpu.nvidia.com).",
    )
    allow_torch_fallback: bool = Field(
        False,
        description="Start LMCache even when its compiled CUDA kernels (lmcache.cuda_ops) do not load in the image (a "
        "wheel built against another torch: LMCache 0.5.6's PyPI wheel in vllm/vllm-openai:v0.33.0), running LMCache's "
        "slower pure-torch fallback. Default false: the launcher logs the missing symbol and refuses to start.",
    )
    utilization_scope: Literal["pod", "rank"] = Field(
        "pod",
        description="What kvCacheOffloading.cpuMemoryUtilization is a share of. pod (default): the CPU tier is the "
        "pod's available RAM x the utilization, one pool that holds every tensor-parallel rank's chunks (one LMCache "
        "server per pod). rank: KAITO's arithmetic, RAM x utilization / tensor-parallel size (kvgen's KAITO input "
        "sets it, so a KAITO manifest renders what KAITO runs).",
    )


class RemoteTier(Model):
    """A Valkey/Redis server shared by every replica's LMCache server (LMCache's resp L2 adapter)."""

    url: str = Field(
        min_length=1,
        max_length=2048,
        description="redis://HOST[:PORT] or valkey://HOST[:PORT] of an existing Valkey or Redis server (port 6379 by "
        "default), e.g. redis://valkey.cache.svc.cluster.local:6379. No credentials, database or TLS (rediss://): "
        "LMCache 0.5.6's resp adapter speaks plain RESP to database 0.",
    )
    username: str | None = Field(
        None, min_length=1, description="ACL user to AUTH as (the password's user; default: the server's default user)."
    )
    password_secret: SecretKeyRef | None = Field(
        None,
        description="Secret holding the server's password, exposed to the LMCache server as LMCACHE_RESP_PASSWORD "
        "(read by the resp adapter; never written into its command line).",
    )
    capacity: Size | None = Field(
        None,
        description="The share of the server this pod's LMCache may fill (whole GiB, at least 1Gi): LMCache then evicts "
        "its own keys (LRU from 80% full). Default: unbounded, the server's maxmemory-policy evicts (recommended for a "
        "server shared by replicas, whose LMCache servers each count only their own writes).",
    )


class KVCacheOffloading(Model):
    """KV-cache offloading: GPU -> CPU RAM -> disk tiers."""

    # the native backend needs cpu unless offloading is off (JSON Schema form of _native_needs_cpu)
    # and CPUOffloadingSpec has no disk tiers (JSON Schema form of _cpu_spec_has_no_tiers)
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {
                        "properties": {"enabled": {"const": True}, "backend": {"const": "native"}},
                        "required": ["backend"],
                    },
                    "then": {
                        "anyOf": [
                            {"required": ["cpu"], "properties": {"cpu": {"not": {"type": "null"}}}},
                            {
                                "required": ["cpuMemoryUtilization"],
                                "properties": {"cpuMemoryUtilization": {"const": 0}},
                            },
                        ]
                    },
                },
                {
                    "if": {"properties": {"specName": {"const": "CPUOffloadingSpec"}}, "required": ["specName"]},
                    "then": {"properties": {"secondary": {"maxItems": 0}}},
                },
            ]
        }
    )

    enabled: bool = Field(True, description="Offload the KV cache (on by default, as in KAITO).")
    backend: Literal["lmcache", "native"] = Field(
        "lmcache",
        description="lmcache: an LMCache MP server sidecar via LMCacheMPConnector. native: vLLM's OffloadingConnector.",
    )
    cpu_memory_utilization: float | None = Field(
        None,
        ge=0,
        le=1,
        description="lmcache backend: share of the pod's host RAM available at start-up used for the whole CPU tier, "
        "one pool for every tensor-parallel rank of the pod (default 0.5; 0 disables). kvCacheOffloading.lmcache."
        "utilizationScope rank divides it by the tensor-parallel size (KAITO's arithmetic).",
    )
    cpu: Size | None = Field(
        None,
        description="Size of the CPU tier. Required for the native backend; caps the measured size for lmcache.",
    )
    eviction_policy: Literal["lru", "arc"] = Field("lru", description="Eviction policy of the CPU tier.")
    secondary: list[SecondaryTier] = Field(
        default_factory=list, description="Ordered disk tiers after CPU RAM (KServe shape)."
    )
    spec_name: Literal["CPUOffloadingSpec", "TieringOffloadingSpec"] | None = Field(
        None,
        description="native backend: vLLM's offloading spec_name. Default: CPUOffloadingSpec for the CPU tier alone, "
        "TieringOffloadingSpec with secondary tiers. KServe's controller always renders TieringOffloadingSpec "
        "(a CPUOffloadingSpec whose disk tiers are optional); CPUOffloadingSpec takes no secondary tiers.",
    )
    allow_hybrid: bool = Field(
        False,
        description="Keep offloading on for hybrid (Mamba/linear-attention) models. Native backend only; kvgen then enables prefix caching as vLLM requires.",
    )
    remote: RemoteTier | None = Field(
        None,
        description="lmcache backend: a remote tier after the disk tiers, on an existing Valkey or Redis server that "
        "every replica shares (LMCache's resp L2 adapter). The native backend has none: share a ReadWriteMany "
        "pvc.ref secondary tier instead.",
    )
    lmcache: LMCacheServer = Field(
        default_factory=LMCacheServer,
        description="lmcache backend: how the LMCache MP server runs and reaches the GPUs.",
    )

    @model_validator(mode="after")
    def _cpu_spec_has_no_tiers(self) -> KVCacheOffloading:
        if self.spec_name == "CPUOffloadingSpec" and self.secondary:
            raise ValueError(
                "specName CPUOffloadingSpec takes no secondary tiers: use TieringOffloadingSpec (or leave specName out)"
            )
        return self

    @model_validator(mode="after")
    def _native_needs_cpu(self) -> KVCacheOffloading:
        if self.enabled and self.backend == "native" and self.cpu is None and self.cpu_memory_utilization != 0:
            raise ValueError(
                "the native backend needs the size of its CPU tier: set kvCacheOffloading.cpu (e.g. cpu: 10Gi)"
            )
        return self


class Disaggregation(Model):
    role: Literal["none", "prefill", "decode"] = Field(
        "none",
        description="Prefill/decode disaggregation role: NixlConnector hands the KV cache over. The lmcache backend is then "
        "off (no local cache server); the native backend keeps its tiers, NIXL and its OffloadingConnector in a MultiConnector.",
    )
    decode_server: str | None = Field(
        None,
        max_length=63,
        pattern=NAME_PATTERN,
        description="Role prefill: the name of the decode server of the pair whose routing.mode gateway sends each "
        "request's prefill here (its picker's prefill profile). The pods carry that server's pool label; both specs "
        "need the same namespace and service.port.",
    )


# ---------------------------------------------------------------- images, runtime, resources


class Image(Model):
    repository: str | None = Field(None, description="Image repository.", min_length=1)
    tag: str | None = Field(None, description="Image tag.", min_length=1)
    digest: str | None = Field(
        None, pattern=r"^sha256:[0-9a-f]{64}$", description="Image digest; when set the image is pulled by digest."
    )
    pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = Field(
        None,
        description="imagePullPolicy of the containers running this image. Unset: none is written, and Kubernetes "
        "defaults it (Always for the tag latest or no tag, else IfNotPresent). images.lmcache inherits images.vllm's.",
    )


class Images(Model):
    """Runtime images; unset fields take the pins in charts/kvgen/files/runtime.yaml."""

    vllm: Image = Field(
        default_factory=Image,
        description="The vLLM OpenAI server image. Default: vllm/vllm-openai at the pinned version; with the lmcache "
        "backend kvgen's runtime image ghcr.io/kvgen-dev/vllm-lmcache:<kvgen version> (that vLLM with LMCache built "
        "against its torch, so LMCache's CUDA kernels load; images/Dockerfile).",
    )
    lmcache: Image = Field(
        default_factory=Image,
        description=(
            "The image of the LMCache MP server sidecar. Unset: the vLLM image, whose LMCache the connector imports, so "
            "client and server versions match. Fields set here replace the vLLM image's; kvgen warns that both images "
            "must carry the same LMCache version."
        ),
    )
    vllm_cpu: Image = Field(
        default_factory=Image, description="vLLM's CPU build, used on nodes without GPUs (pinned per architecture)."
    )
    registry: str | None = Field(
        None,
        min_length=1,
        description="A registry (host[:port], optionally with a path, e.g. mirror.gcr.io or harbor.internal:5000/proxy) that replaces "
        "the registry of every image kvgen renders, as Bitnami's global.imageRegistry: a repository whose first "
        "component is a registry host (it holds '.' or ':', or is localhost) has that component replaced, any other "
        "(a Docker Hub name such as vllm/vllm-openai) is prefixed. For air-gapped clusters with a mirror. The Helm "
        "chart also takes Helm's global.imageRegistry for it when this is unset.",
    )


class EnvVar(Model):
    name: str = Field(pattern=ENV_NAME_PATTERN, description="Variable name.")
    value: str | None = Field(None, description="Literal value (no secrets: use valueFrom).")
    value_from: EnvVarSource | None = Field(None, description="A Kubernetes EnvVarSource.")


# An argument holds no DEL, C1 control or byte order mark: Helm's toJson writes them raw, and a YAML
# reader (kubectl's included) refuses the chart's output. kvgen escapes them; both refuse them here.
_UNWRITABLE = "\x7f-\x9f\ufeff"


def _check_argument(value: Any) -> Any:
    if isinstance(value, str) and re.search(f"[{_UNWRITABLE}]", value):
        raise ValueError(
            f"{quantity.shorten(value)} holds a DEL, C1 control or byte order mark character, which the chart "
            "cannot write as YAML; remove it"
        )
    return value


Argument = Annotated[
    str, BeforeValidator(_check_argument), WithJsonSchema({"type": "string", "pattern": f"^[^{_UNWRITABLE}]*$"})
]


class EnvFromRef(Model):
    name: str = Field(min_length=1, description="Name of the ConfigMap or Secret in the namespace.")
    optional: bool | None = Field(None, description="The pod starts without it when it is missing.")


class EnvFromSource(Model):
    """Exactly one of configMapRef or secretRef: every key of it becomes a variable (a Secret's values
    stay in the Secret; kvgen never writes them)."""

    model_config = ConfigDict(json_schema_extra=_exactly_one_object("configMapRef", "secretRef"))

    prefix: str | None = Field(
        None, pattern=ENV_NAME_PATTERN, description="Prefix put before every variable name of the source."
    )
    config_map_ref: EnvFromRef | None = Field(None, description="A ConfigMap whose keys become variables.")
    secret_ref: EnvFromRef | None = Field(None, description="A Secret whose keys become variables.")

    @model_validator(mode="after")
    def _exactly_one(self) -> EnvFromSource:
        if (self.config_map_ref is None) == (self.secret_ref is None):
            both = "both are set" if self.config_map_ref is not None else "neither is set"
            raise ValueError(f"exactly one of configMapRef or secretRef must be set; {both}")
        return self


class VLLMSettings(Model):
    gpu_memory_utilization: float = Field(
        0.92, gt=0, le=1, description="--gpu-memory-utilization (vLLM 0.33 default 0.92)."
    )
    extra_args: list[Argument] = Field(default_factory=list, description="Extra vLLM serve arguments, appended last.")
    env: list[EnvVar] = Field(default_factory=list, description="Extra environment variables for the vLLM container.")
    env_from: list[EnvFromSource] = Field(
        default_factory=list,
        description="envFrom of the vLLM container: ConfigMaps and Secrets whose keys become variables (Kubernetes "
        "EnvFromSource: configMapRef or secretRef {name, optional}, and a prefix). Variables of vllm.env and kvgen's "
        "own win over them.",
    )
    volume_mounts: list[VolumeMount] = Field(
        default_factory=list,
        description="Extra volumeMounts of the vLLM container (Kubernetes VolumeMount), each of a volume in pod.volumes; "
        "kvgen's own mount paths (/dev/shm, /root/.cache, /opt/kvgen, /mnt/models, /mnt/kv-cache-N) are refused.",
    )


CPU_PATTERN = r"^([0-9]+(\.[0-9]+)?|[0-9]+m)$"


def _check_cpu_quantity(value: Any) -> quantity.Cpu:
    if isinstance(value, quantity.Cpu):  # already parsed (a spec built from a spec's values)
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("must be a CPU quantity such as 4, 0.5 or 500m")
    if not isinstance(value, str) and not value > 0:
        raise ValueError(f"{value!r} is not a CPU quantity greater than 0")
    text = str(value)
    if not re.match(CPU_PATTERN, text):
        raise ValueError(f"{quantity.shorten(text)} is not a CPU quantity such as 4, 0.5 or 500m")
    return quantity.Cpu.parse(text)


# A CPU quantity, parsed here once (.millicores); the text as written goes to messages and output.
CPU = Annotated[
    quantity.Cpu,
    PlainValidator(_check_cpu_quantity),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": CPU_PATTERN}, {"type": "number", "exclusiveMinimum": 0}]}),
]


class ResourceList(Model):
    cpu: CPU | None = Field(None, description="CPU cores, e.g. 4 or 500m.")
    memory: Size | None = Field(None, description="Memory, e.g. 64Gi.")
    ephemeral_storage: Size | None = Field(
        None, alias="ephemeral-storage", description="Ephemeral storage, e.g. 120Gi."
    )


class ContainerResources(Model):
    requests: ResourceList = Field(
        default_factory=ResourceList, description="Explicit requests; they win over computed ones."
    )
    limits: ResourceList = Field(
        default_factory=ResourceList, description="Explicit limits; they win over computed ones."
    )


class Resources(Model):
    """Explicit sizes. Anything set here wins over what kvgen computes."""

    vllm: ContainerResources = Field(default_factory=ContainerResources, description="The vLLM container.")
    lmcache_server: ContainerResources = Field(
        default_factory=ContainerResources,
        description="The lmcache-mp-server sidecar; with gpuAccess in-container, the LMCache server's share of the vLLM container (memory and ephemeral storage are added to it).",
    )
    extra: dict[str, Annotated[int, BeforeValidator(_whole_number), Field(ge=1)]] = Field(
        default_factory=dict,
        description="Extended resources of the vLLM container beside its GPUs, requested and limited alike: RDMA "
        "devices for multi-node servers, e.g. {vpc.amazonaws.com/efa: 4} (AWS EFA) or {rdma/ib: 1} "
        "(an RDMA device plugin). Names are domain-prefixed; GPUs (nvidia.com/gpu, nvidia.com/mig-*) are kvgen's.",
    )
    shm: Size | None = Field(None, description="sizeLimit of the /dev/shm emptyDir.")
    model_cache: Size | None = Field(None, description="sizeLimit of the model download cache emptyDir.")


class Scheduling(Model):
    node_selector: dict[str, str] = Field(default_factory=dict, description="Extra node labels the pods require.")
    tolerations: list[Toleration] = Field(default_factory=list, description="Pod tolerations.")
    affinity: Affinity = Field(default_factory=dict, description="Pod affinity.")
    priority_class_name: str | None = Field(None, description="Pod priorityClassName.")
    runtime_class_name: str | None = Field(
        None,
        description="Pod runtimeClassName: the RuntimeClass whose handler runs the containers (on GPU clusters often "
        "nvidia, the NVIDIA container runtime, when it is not the node's default).",
    )
    topology_spread_constraints: list[TopologySpreadConstraint] = Field(
        default_factory=list,
        description="Pod topologySpreadConstraints (Kubernetes TopologySpreadConstraint). A constraint without "
        "labelSelector spreads the pods of this workload: kvgen fills in the pod's selector labels.",
    )
    scheduler_name: str | None = Field(
        None,
        description="Pod schedulerName of every pod kvgen renders (the Deployment's, or every rank of a multi-node "
        "server): a scheduler other than the default, e.g. volcano or kai-scheduler for gang scheduling (their "
        "queue and group labels go in pod.labels and pod.annotations). Unset: Kubernetes' default-scheduler. "
        "Kueue needs none: it admits workloads by their kueue.x-k8s.io/queue-name label.",
    )


class ImagePullSecret(Model):
    name: str = Field(
        min_length=1, description="Name of a Secret of type kubernetes.io/dockerconfigjson in the namespace."
    )


class ServiceAccount(Model):
    """The pod's ServiceAccount."""

    create: bool = Field(False, description="Render a ServiceAccount (named name, default the spec's name).")
    name: str | None = Field(
        None,
        min_length=1,
        description="serviceAccountName of the pods. Unset: the spec's name when create is true, else the "
        "namespace's default ServiceAccount.",
    )
    automount_token: bool = Field(
        False,
        description="automountServiceAccountToken: mount an API token into the pods. Off by default: vLLM and "
        "LMCache never call the Kubernetes API.",
    )


class PodSettings(Model):
    """Pod-level settings a platform team sets: identity, registry credentials, labels, security."""

    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Extra pod labels. Keys kvgen sets itself (app.kubernetes.io/*, kvgen.dev/*) are refused.",
    )
    annotations: dict[str, str] = Field(
        default_factory=dict, description="Extra pod annotations. Keys kvgen sets itself are refused."
    )
    volumes: list[Volume] = Field(
        default_factory=list,
        description="Extra pod volumes (Kubernetes Volume), mounted with vllm.volumeMounts; kvgen's own volume names "
        "(dshm, model-cache, lmcache-launcher, model-weights, kv-cache-secondary-N) are refused.",
    )
    image_pull_secrets: list[ImagePullSecret] = Field(
        default_factory=list, description="Pod imagePullSecrets ({name}) for private registries."
    )
    service_account: ServiceAccount = Field(
        default_factory=ServiceAccount, description="The pods' ServiceAccount and its token."
    )
    security_context: PodSecurityContext = Field(
        default_factory=dict,
        description="Pod securityContext (Kubernetes PodSecurityContext), merged over kvgen's default "
        "{seccompProfile: {type: RuntimeDefault}}; a key set here wins (maps merge, lists are replaced).",
    )
    termination_grace_period_seconds: int | None = Field(
        None,
        ge=0,
        le=3600,
        description="terminationGracePeriodSeconds: how long the kubelet waits after SIGTERM before it kills the "
        "containers. Unset: none is written (Kubernetes' 30 s), and vLLM aborts its requests at SIGTERM. To let vLLM "
        "finish them, pass vllm.extraArgs --shutdown-timeout=N and set this above N. With an LMCache server, "
        "kvgen's launcher forwards SIGTERM and kills what still runs after --grace-period seconds (25 by default, "
        "under Kubernetes' 30); set here, the launcher gets --grace-period of this value less 5 (at least 1).",
    )
    container_security_context: SecurityContext = Field(
        default_factory=dict,
        description="securityContext of every container (Kubernetes SecurityContext), merged over kvgen's default "
        "{allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}; a key set here wins (maps merge, lists "
        "are replaced), e.g. capabilities: {add: [IPC_LOCK]} for RDMA.",
    )


class MultiNode(Model):
    """How a server spanning several nodes (parallelism.nodes > 1) is rendered (docs/multi-node.md)."""

    engine: Literal["statefulset", "leaderworkerset"] = Field(
        "statefulset",
        description="statefulset: two StatefulSets (rank 0 and ranks 1..) and a headless Service; one server, "
        "replicas 1. leaderworkerset: one LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, the LWS controller must be "
        "installed), a group of parallelism.nodes pods per replica, restarted together.",
    )


def _check_int_or_percent(value: Any) -> int | str:
    """An IntOrString of a rollout: a whole number of pods (an int32) or a percentage such as 25%."""
    value = _whole_number(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2147483647:
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-9]+%", value):
        return value
    shown = quoted(value) if isinstance(value, str) else str(value)
    raise ValueError(f"{shown} is not a number of pods (0 to 2147483647) or a percentage such as 25%")


IntOrPercent = Annotated[
    int | str,
    PlainValidator(_check_int_or_percent),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 2147483647},
                {"type": "string", "pattern": r"^[0-9]+%$"},
            ]
        }
    ),
]


class RollingUpdate(Model):
    max_surge: IntOrPercent | None = Field(
        None,
        description="maxSurge: pods above replicas a rollout may create (a number or a percentage). Unset: 0, so a "
        "rollout never needs GPUs beyond the replicas'.",
    )
    max_unavailable: IntOrPercent | None = Field(
        None, description="maxUnavailable: pods a rollout may take down at once (a number or a percentage). Unset: 1."
    )


class DeploymentStrategy(Model):
    """The Deployment's rollout (apps/v1 DeploymentStrategy)."""

    type: Literal["RollingUpdate", "Recreate"] = Field(
        "RollingUpdate",
        description="RollingUpdate: replace pods a few at a time (rollingUpdate). Recreate: stop every pod, then "
        "start the new ones (a downtime, no GPU beyond the replicas').",
    )
    rolling_update: RollingUpdate | None = Field(
        None, description="type RollingUpdate: maxSurge and maxUnavailable; Recreate takes none."
    )


class DeploymentSettings(Model):
    """The Deployment of a single-node server."""

    strategy: DeploymentStrategy | None = Field(
        None,
        description="The Deployment's strategy. Unset: RollingUpdate with maxSurge 0 and maxUnavailable 1 (a "
        "rollout needs no GPU beyond the replicas'). A server spanning several nodes (parallelism.nodes > 1) is no "
        "Deployment and refuses it: its StatefulSets and LeaderWorkerSet roll out one pod (group) at a time.",
    )


class ServicePort(Model):
    """One more port of the Service (ServicePort)."""

    name: str = Field(
        min_length=1,
        description="Port name, an IANA service name (at most 15 lowercase letters, digits and '-'); not http, "
        "the API's.",
    )
    port: int = Field(ge=1, le=65535, description="The Service's port; not service.port.")
    target_port: Annotated[int, Field(ge=1, le=65535)] | Annotated[str, Field(min_length=1)] | None = Field(
        None,
        description="The pod's port: a number or a container port name (http is vLLM's API). Default: port. Not a "
        "port kvgen's own processes bind (the LMCache server's, torch.distributed's, NIXL's).",
    )
    protocol: Literal["TCP", "UDP", "SCTP"] = Field("TCP", description="Protocol.")


class Service(Model):
    port: int = Field(8000, ge=1, le=65535, description="Port of the OpenAI-compatible API.")
    type: Literal["ClusterIP", "NodePort", "LoadBalancer"] = Field("ClusterIP", description="Service type.")
    api_key_secret: SecretKeyRef | None = Field(
        None,
        description="Secret holding an API key that vLLM then requires of every /v1 request (exposed to vLLM as "
        "VLLM_API_KEY). Set it for a LoadBalancer or NodePort Service.",
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Extra labels on the Service's metadata (not its selector), over commonLabels. Keys kvgen sets "
        "itself (app.kubernetes.io/*, helm.sh/chart, kvgen.dev/*) are refused.",
    )
    annotations: dict[str, str] = Field(
        default_factory=dict,
        description="Annotations on the Service, over commonAnnotations: a cloud load balancer's settings, e.g. "
        "service.beta.kubernetes.io/aws-load-balancer-scheme: internal. Keys kvgen sets itself are refused.",
    )
    load_balancer_class: str | None = Field(
        None,
        min_length=1,
        description="spec.loadBalancerClass: the load balancer implementation, e.g. service.k8s.aws/nlb (a label "
        "key). Only with type LoadBalancer, as the API server requires.",
    )
    external_traffic_policy: Literal["Cluster", "Local"] | None = Field(
        None,
        description="spec.externalTrafficPolicy: Local keeps the client's source IP and skips the second hop. Only "
        "with type NodePort or LoadBalancer, as the API server requires.",
    )
    extra_ports: list[ServicePort] = Field(
        default_factory=list,
        description="More ports of the Service, after http (the API): e.g. 80 to targetPort http for clients "
        "that expect it. Names and ports must be unique (ValidateService).",
    )
    load_balancer_source_ranges: list[str] | None = Field(
        None,
        min_length=1,
        description="spec.loadBalancerSourceRanges: the CIDRs the cloud load balancer admits, e.g. [10.0.0.0/8]. "
        "Only with type LoadBalancer, as the API server requires.",
    )


# ---------------------------------------------------------------- operations: probes, PDB, metrics, autoscaling


class Probe(Model):
    initial_delay_seconds: int | None = Field(
        None,
        ge=0,
        le=3600,
        description="initialDelaySeconds: seconds after the container starts before the first probe. Unset: none "
        "is written (Kubernetes' 0).",
    )
    period_seconds: int = Field(ge=1, le=3600, description="periodSeconds: how often the kubelet probes.")
    timeout_seconds: int = Field(
        ge=1, le=3600, description="timeoutSeconds: how long one probe may take (a saturated vLLM answers slowly)."
    )


class StartupProbe(Probe):
    """Until vLLM first answers /health (downloading and loading the weights): period x failures
    is the start-up budget; the Deployment's progressDeadlineSeconds follows it. By default the
    budget is sized from the model's weights (docs/operations.md)."""

    period_seconds: int = Field(10, ge=1, le=3600, description="periodSeconds.")
    timeout_seconds: int = Field(5, ge=1, le=3600, description="timeoutSeconds.")
    failure_threshold: int | None = Field(
        None,
        ge=1,
        le=100000,
        description="failureThreshold. Default: the start-up budget sized from the model's weights (downloaded, "
        "unless model.uri, and read at the rates of files/sizing.yaml startup, plus the engine's start; never below "
        "30 minutes) divided by periodSeconds. Set it to choose the budget yourself.",
    )


class ReadinessProbe(Probe):
    """Takes the pod out of the Service while /health fails."""

    period_seconds: int = Field(5, ge=1, le=3600, description="periodSeconds.")
    timeout_seconds: int = Field(5, ge=1, le=3600, description="timeoutSeconds.")
    failure_threshold: int = Field(3, ge=1, le=100000, description="failureThreshold: failures in a row that count.")


class LivenessProbe(Probe):
    """Restarts vLLM when /health keeps failing (a dead engine answers 503)."""

    period_seconds: int = Field(10, ge=1, le=3600, description="periodSeconds.")
    timeout_seconds: int = Field(10, ge=1, le=3600, description="timeoutSeconds.")
    failure_threshold: int = Field(3, ge=1, le=100000, description="failureThreshold: failures in a row that count.")


class Probes(Model):
    """vLLM's HTTP probes on /health (rank 0 of a multi-node server)."""

    startup: StartupProbe = Field(default_factory=StartupProbe, description="The startup probe.")
    readiness: ReadinessProbe = Field(default_factory=ReadinessProbe, description="The readiness probe.")
    liveness: LivenessProbe = Field(default_factory=LivenessProbe, description="The liveness probe.")


PERCENT_PATTERN = r"^[0-9]+%$"
DURATION_PATTERN = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"


class DisruptionBudget(Model):
    enabled: bool | None = Field(
        None,
        description="Render a PodDisruptionBudget (policy/v1). Unset: on when there can be more than one replica "
        "(replicas > 1, or autoscaling.maxReplicas > 1).",
    )
    max_unavailable: Annotated[int, Field(ge=0, le=2147483647)] | Annotated[str, Field(pattern=PERCENT_PATTERN)] = (
        Field(
            1,
            description="maxUnavailable: pods a voluntary disruption (a node drain) may take at once; a number or a percentage.",
        )
    )


class Metrics(Model):
    pod_monitor: bool = Field(
        False,
        description="Render a PodMonitor (monitoring.coreos.com/v1) scraping vLLM's /metrics on its http port and, "
        "with lmcacheServer, the LMCache MP server's /metrics on its HTTP port (lmcache-http).",
    )
    service_monitor: bool = Field(
        False,
        description="Render a ServiceMonitor (monitoring.coreos.com/v1) scraping vLLM's /metrics through the Service.",
    )
    interval: str = Field(
        "30s", min_length=1, pattern=DURATION_PATTERN, description="Scrape interval, a Prometheus duration."
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Extra labels on the monitors, e.g. {release: prometheus} for a Prometheus selecting monitors by label.",
    )
    lmcache_server: bool = Field(
        True,
        description="With podMonitor and the lmcache backend's server: also scrape it. Its HTTP API (health, /metrics, "
        "admin endpoints, without authentication) then listens on the pod IP (--http-host 0.0.0.0) instead of 127.0.0.1; "
        "restrict it with a NetworkPolicy, or set false.",
    )
    dashboard: bool = Field(
        False,
        description="Render a ConfigMap <name>-dashboard holding a Grafana dashboard of this server (what each KV-cache "
        "tier serves as vLLM's and LMCache's metrics say, the planned capacities, expectedHitRatio), labelled for "
        "Grafana's dashboard sidecar (dashboardLabels). Its JSON is also charts/kvgen/files/dashboard.json, to import.",
    )
    dashboard_labels: dict[str, str] = Field(
        default_factory=lambda: {"grafana_dashboard": "1"},
        description="Labels of the dashboard's ConfigMap: the label Grafana's sidecar watches (kube-prometheus-stack: "
        "grafana_dashboard: '1').",
    )
    prometheus_rule: bool = Field(
        False,
        description="Render a PrometheusRule (monitoring.coreos.com/v1) <name>-kv-cache with alerts on the KV-cache "
        "tiers: the GPU KV cache full and preempting, the CPU tier full and thrashing, LMCache errors, the hit ratio "
        "far below expectedHitRatio. Labelled with metrics.labels (a Prometheus selecting rules by label).",
    )
    expected_hit_ratio: Annotated[float, Field(ge=0, le=1)] | None = Field(
        None,
        description="The share of prompt tokens the KV-cache tiers are expected to serve, as kvgen explain --trace "
        "predicts it for this spec (trace.hitRatio): the dashboard draws it beside the observed ratio, and the "
        "PrometheusRule alerts when the observed ratio stays below half of it.",
    )


class KedaAutoscaler(Model):
    """A KEDA ScaledObject (keda.sh/v1alpha1) with one Prometheus trigger."""

    server_address: str = Field(
        min_length=1, description="The Prometheus server KEDA queries, e.g. http://prometheus-operated.monitoring:9090."
    )
    query: str | None = Field(
        None,
        min_length=1,
        description='PromQL giving the load to scale on. Unset: sum(vllm:num_requests_waiting{namespace="NAMESPACE",'
        'pod=~"NAME-[a-z0-9]+-[a-z0-9]+"}), the requests queued in this Deployment\'s vLLM servers; without a '
        "namespace in the spec, no namespace matcher (set one, or this query, when several namespaces run a server "
        "of this name).",
    )
    threshold: Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?$")] = Field(
        "5",
        description="Target value of the query per replica (KEDA divides it by the replicas), a number as a string.",
    )
    polling_interval: int | None = Field(
        None, ge=1, le=2147483647, description="pollingInterval in seconds (KEDA's default 30)."
    )
    cooldown_period: int | None = Field(
        None, ge=1, le=2147483647, description="cooldownPeriod in seconds before scaling to zero (KEDA's default 300)."
    )


MetricSpec = Annotated[dict[str, Any], k8s("io.k8s.api.autoscaling.v2.MetricSpec")]


class HpaAutoscaler(Model):
    """A HorizontalPodAutoscaler (autoscaling/v2)."""

    metrics: list[MetricSpec] = Field(
        min_length=1,
        description="autoscaling/v2 metrics (Resource, Pods, Object or External), e.g. a Pods metric of "
        "vllm:num_requests_waiting served by a custom metrics adapter.",
    )


class Autoscaling(Model):
    """Exactly one of keda or hpa. The Deployment then has no replicas: the autoscaler sets them."""

    model_config = ConfigDict(json_schema_extra=_exactly_one_object("keda", "hpa"))

    min_replicas: int = Field(1, ge=0, le=2147483647, description="Fewest replicas (0 lets KEDA scale to zero).")
    max_replicas: int = Field(ge=1, le=2147483647, description="Most replicas.")
    keda: KedaAutoscaler | None = Field(None, description="A KEDA ScaledObject on vLLM's queue (Prometheus trigger).")
    hpa: HpaAutoscaler | None = Field(None, description="A HorizontalPodAutoscaler.")

    @model_validator(mode="after")
    def _exactly_one(self) -> Autoscaling:
        if (self.keda is None) == (self.hpa is None):
            both = "both are set" if self.keda is not None else "neither is set"
            raise ValueError(f"exactly one of keda or hpa must be set; {both}")
        return self


# ---------------------------------------------------------------- routing (docs/routing.md)


class SessionAffinity(Model):
    timeout_seconds: int = Field(
        10800, ge=1, le=86400, description="sessionAffinityConfig.clientIP.timeoutSeconds (Kubernetes' default 10800)."
    )


class RoutingScorers(Model):
    """The picker's scorer weights (0 leaves a scorer out). Defaults: KServe v0.20's default profile."""

    queue: int = Field(2, ge=0, le=100, description="queue-scorer: fewer requests waiting (vllm:num_requests_waiting).")
    kv_cache_utilization: int = Field(
        2, ge=0, le=100, description="kv-cache-utilization-scorer: more free GPU KV cache (vllm:kv_cache_usage_perc)."
    )
    prefix_cache: int = Field(
        3, ge=0, le=100, description="prefix-cache-scorer: the longest prefix the picker last sent to a server."
    )
    no_hit_lru: int = Field(
        2,
        ge=0,
        le=100,
        description="no-hit-lru-scorer: a request with no cached prefix goes to the server least recently given one.",
    )


class RoutingPicker(Model):
    """The Endpoint Picker (llm-d router, files/runtime.yaml picker)."""

    replicas: int = Field(
        1,
        ge=1,
        le=16,
        description="Picker replicas; above 1 they elect a leader (--ha-enable-leader-election, a leases Role).",
    )
    failure_mode: Literal["FailOpen", "FailClose"] = Field(
        "FailOpen",
        description="endpointPickerRef.failureMode: FailOpen (the GIE chart's and KServe's) routes on without the picker.",
    )
    scorers: RoutingScorers = Field(default_factory=RoutingScorers, description="Scorer weights.")
    block_size_tokens: int | None = Field(
        None,
        ge=64,
        description="Prefix hash block in tokens. Unset: the LMCache chunkSize with the lmcache backend, else vLLM's block "
        "size raised to the picker's floor of 64.",
    )
    lru_capacity_per_server: int | None = Field(
        None,
        ge=1,
        description="Prefix blocks the picker remembers per server. Unset: what the server's GPU, CPU and disk tiers hold "
        "(an estimate, docs/routing.md).",
    )


class GatewayParentRef(Model):
    name: str = Field(
        pattern=NAME_PATTERN.replace("[a-z]", "[a-z0-9]", 1), max_length=253, description="The Gateway's name."
    )
    namespace: str | None = Field(
        None, pattern=NAMESPACE_PATTERN, max_length=63, description="The Gateway's namespace. Unset: the route's."
    )
    section_name: str | None = Field(
        None,
        pattern=NAME_PATTERN.replace("[a-z]", "[a-z0-9]", 1),
        max_length=253,
        description="A listener of the Gateway.",
    )


class RoutingGateway(Model):
    parent_refs: list[GatewayParentRef] = Field(
        min_length=1,
        max_length=32,
        description="The Gateways the HTTPRoute attaches to (they must support InferencePool).",
    )
    hostnames: list[str] = Field(default_factory=list, max_length=16, description="HTTPRoute hostnames.")
    path_prefix: str = Field("/", pattern=r"^/[^\s]*$", max_length=1024, description="The path the route matches.")
    request_timeout: str | None = Field(
        None,
        pattern=r"^([0-9]{1,5}(h|m|s|ms)){1,4}$",
        description="HTTPRoute timeouts.request, e.g. 600s. Unset: 300s, as the GIE and llm-d charts set it (Envoy "
        "Gateway's own default, 15s, cuts long generations), and none with provider gke (its GCPBackendPolicy's "
        "timeoutSec: 300).",
    )
    backend: Literal["pool", "service"] = Field(
        "pool",
        description="Where the HTTPRoute sends requests: pool (an InferencePool and its Endpoint Picker, or the "
        "existing pool poolRef names) or service (the server's Service, no pool and no picker: what KServe renders "
        "for spec.router.route without a scheduler).",
    )
    pool_ref: str | None = Field(
        None,
        pattern=NAME_PATTERN.replace("[a-z]", "[a-z0-9]", 1),
        max_length=253,
        description="An existing InferencePool (inference.networking.k8s.io/v1) in the route's namespace: the "
        "HTTPRoute's backend, and kvgen renders no pool and no picker (KServe's scheduler.pool.ref). Only with "
        "backend pool.",
    )
    rules: Literal["prefix", "kserve"] = Field(
        "prefix",
        description="The HTTPRoute's rules: prefix (one PathPrefix pathPrefix rule, and with model.lora a rule "
        "matching each adapter's name in the X-Gateway-Model-Name header) or kserve (the twelve rules of KServe's "
        "kserve-config-llm-router-route: /NAMESPACE/NAME/v1/... and /publishers/NAMESPACE/models/MODEL/... paths "
        "rewritten to /v1/..., the model-routing header rules with one match per adapter, the catch-alls to the "
        "Service). kserve needs the spec's namespace.",
    )
    model_name: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(/[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)*$",
        max_length=128,
        description="rules kserve: MODEL in its /publishers/NAMESPACE/models/MODEL paths and header values "
        "(KServe's spec.model.name). Unset: the spec's name, as KServe defaults it to metadata.name.",
    )
    provider: Literal["none", "istio", "gke"] = Field(
        "none",
        description="The Gateway's implementation, where the objects differ (the GIE chart's provider.name): istio "
        "adds a DestinationRule that calls the picker over TLS without verifying its self-signed certificate "
        "(without it Istio's call fails and FailOpen routes with no prefix awareness); gke adds the InferencePool's "
        "HealthCheckPolicy and GCPBackendPolicy. none: Envoy Gateway, kgateway, agentgateway and NGINX Gateway Fabric, "
        "which need nothing more.",
    )


class Routing(Model):
    """How requests reach the replicas: none (the Service), sessionAffinity (ClientIP on the Service) or gateway
    (an InferencePool, its Endpoint Picker and an HTTPRoute). docs/routing.md."""

    mode: Literal["none", "sessionAffinity", "gateway"] = Field("none", description="The routing mode.")
    naming: Literal["kvgen", "kserve"] = Field(
        "kvgen",
        description="Object names: kvgen (the Service NAME, the InferencePool NAME-pool, the picker's objects NAME-epp, "
        "the HTTPRoute NAME) or kserve, as KServe's controller names them (kmeta.ChildName): the Service "
        "NAME-kserve-workload-svc, the InferencePool NAME-inference-pool, the picker's Deployment "
        "NAME-kserve-router-scheduler, Service NAME-epp-service (ports grpc, grpc-health, metrics), ServiceAccount "
        "NAME-epp-sa, Role NAME-epp-role (leases always), RoleBinding NAME-epp-rb, its config NAME-epp-config, the "
        "HTTPRoute NAME-kserve-route. KServe input sets kserve, so that NetworkPolicies, dashboards and alerts "
        "written for KServe's objects still find them.",
    )
    session_affinity: SessionAffinity | None = Field(None, description="mode sessionAffinity: its timeout.")
    picker: RoutingPicker | None = Field(None, description="mode gateway: the Endpoint Picker.")
    gateway: RoutingGateway | None = Field(None, description="mode gateway: the HTTPRoute (required).")


# ---------------------------------------------------------------- your own catalog rows


class CatalogModel(Model):
    """A model row, as in files/models.yaml: a new model (architecture, layers, kvHeads, headDim and
    weights required) or fields replacing a built-in row's."""

    architecture: str | None = Field(None, description="vLLM architecture class (config.json architectures[0]).")
    layers: int | None = Field(None, ge=1, le=MAX_COUNT["layers"], description="num_hidden_layers.")
    attention_layers: int | None = Field(
        None, ge=0, le=MAX_COUNT["attentionLayers"], description="Layers with a per-token KV cache. Default: layers."
    )
    attention_heads: int | None = Field(
        None,
        ge=1,
        le=MAX_COUNT["attentionHeads"],
        description="num_attention_heads (query heads, MLA models too): vLLM's tensor-parallel size divides it.",
    )
    kv_heads: int | None = Field(None, ge=1, le=MAX_COUNT["kvHeads"], description="num_key_value_heads (MLA: 1).")
    head_dim: int | None = Field(
        None, ge=1, le=MAX_COUNT["headDim"], description="Head dimension (MLA: kv_lora_rank + qk_rope_head_dim)."
    )
    experts: int | None = Field(
        None, ge=0, le=MAX_COUNT["experts"], description="Routed experts of a MoE model, 0 for a dense one."
    )
    experts_per_token: int | None = Field(
        None, ge=0, le=MAX_COUNT["expertsPerToken"], description="num_experts_per_tok (0: dense)."
    )
    hidden_size: int | None = Field(None, ge=1, le=MAX_COUNT["hiddenSize"], description="hidden_size.")
    intermediate_size: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["intermediateSize"],
        description="The MLP width tensor parallelism splits (a MoE model's per-expert width).",
    )
    vocab_size: int | None = Field(None, ge=1, le=MAX_COUNT["vocabSize"], description="vocab_size.")
    mla: bool | None = Field(None, description="DeepSeek-style MLA.")
    hybrid: bool | None = Field(None, description="Hybrid Mamba / linear-attention model.")
    multimodal: bool | None = Field(None, description="Takes images or audio (vLLM's multimodal processor cache).")
    sliding_layers: int | None = Field(
        None, ge=0, le=MAX_COUNT["slidingLayers"], description="Attention layers with a sliding window."
    )
    sliding_window: int | None = Field(
        None, ge=1, le=MAX_COUNT["slidingWindow"], description="Their window, in tokens."
    )
    full_kv_heads: int | None = Field(
        None, ge=1, le=MAX_COUNT["fullKvHeads"], description="KV heads of full-attention layers where they differ."
    )
    full_head_dim: int | None = Field(
        None, ge=1, le=MAX_COUNT["fullHeadDim"], description="Head dim of full-attention layers where it differs."
    )
    weights: Size | None = Field(None, description="Size of the weights vLLM loads, e.g. 16Gi.")
    quantization: str | None = Field(None, description="The checkpoint's weight format (files/quantization.yaml).")
    embedding_parameters: int | None = Field(
        None,
        ge=0,
        le=MAX_COUNT["embeddingParameters"],
        description="Input embeddings + lm_head parameters (kept 16-bit by online quantization).",
    )
    max_model_len: int | None = Field(None, ge=1, le=MAX_COUNT["maxModelLen"], description="The model's token limit.")
    source: str | None = Field(None, description="Where the numbers come from.")


class CatalogInstance(Model):
    """A node type row, as in files/instances.yaml: a new type (gpus, memory, and gpuMemory for GPUs
    required) or fields replacing a built-in row's. A type with a nodeSelector, or cloud: false, is
    not a cloud instance type: its pods are not pinned with node.kubernetes.io/instance-type (your
    own nodes do not carry it) but use the nodeSelector."""

    cloud: Literal["azure", "aws", "gcp", "oci", "onprem", False] | None = Field(
        None,
        description="azure, aws, gcp or oci; onprem for your own nodes, which a nodeSelector selects; false for "
        "your own nodes (no instance-type pin).",
    )
    gpus: int | None = Field(None, ge=0, le=MAX_COUNT["gpus"], description="GPUs per node.")
    gpu_model: str | None = Field(
        None,
        description="GPU model name. One of files/instances.yaml gpuModels plans from the memory that GPU reports to "
        "CUDA rather than gpuMemory.",
    )
    gpu_memory: SizeOrZero | None = Field(None, description='Memory of one GPU ("0" when gpus is 0).')
    memory: Size | None = Field(None, description="Host RAM.")
    cpu: int | None = Field(None, ge=1, le=MAX_COUNT["cpu"], description="CPUs.")
    arch: Literal["amd64", "arm64"] | None = Field(None, description="CPU architecture.")
    local_disk: SizeOrZero | None = Field(None, description='Local NVMe (informational; "0": none).')
    ephemeral_storage: Size | None = Field(None, description="The kubelet's ephemeral storage on these nodes.")
    node_selector: dict[str, str] | None = Field(
        None,
        description="Labels that select these nodes, used instead of node.kubernetes.io/instance-type: label keys "
        "and values, as the API server validates a pod's nodeSelector.",
    )
    source: str | None = Field(None, description="Where the numbers come from.")


class Catalog(Model):
    """Rows merged over the built-in catalog (files/models.yaml, files/instances.yaml), field by field."""

    models: dict[str, CatalogModel] = Field(default_factory=dict, description="Model rows by Hugging Face id.")
    instances: dict[str, CatalogInstance] = Field(default_factory=dict, description="Node type rows by type name.")


class Spec(Model):
    """A kvgen spec: one vLLM deployment with KV-cache offloading."""

    model_config = ConfigDict(
        **MODEL_CONFIG,
        title="kvgen spec",
        json_schema_extra={"$id": "https://kvgen.dev/schemas/kvgen.schema.json"},
    )

    name: str | None = Field(
        None,
        pattern=NAME_PATTERN,
        max_length=52,
        description="Name of every rendered object (DNS-1035 label, at most 52 characters; at most 45 when "
        "parallelism.nodes > 1), an explicit override of the release name, as fullnameOverride (set both, they "
        "must agree). Unset: the Helm chart names the objects after the release (fullnameOverride, nameOverride, as "
        "`helm create` does); kvgen, which has no release, uses fullnameOverride and otherwise requires it.",
    )
    fullname_override: str | None = Field(
        None,
        pattern=NAME_PATTERN,
        max_length=52,
        description="Helm chart: the objects' name when name is unset, instead of one made from the release name.",
    )
    name_override: str | None = Field(
        None,
        pattern=NAME_PATTERN,
        max_length=52,
        description="Helm chart: replaces the chart name in <release>-<chart>, the objects' name when neither name "
        "nor fullnameOverride is set. kvgen ignores it.",
    )
    namespace: str | None = Field(
        None,
        pattern=NAMESPACE_PATTERN,
        max_length=63,
        description="Namespace of every object. Unset: the Helm chart uses the release namespace (helm -n); kvgen "
        "writes no metadata.namespace (kustomize or Argo CD place the objects) unless given --namespace. Set, it "
        "must agree with helm -n (other than default, which Helm cannot tell from no -n) and kvgen --namespace.",
    )
    model: ModelSpec = Field(description="The model to serve.")
    instance: InstanceSpec = Field(description="The node type.")
    replicas: int = Field(1, ge=0, description="Number of vLLM servers.")
    parallelism: Parallelism = Field(
        default_factory=Parallelism, description="Tensor, pipeline and data parallel sizes."
    )
    kv_cache_offloading: KVCacheOffloading = Field(
        default_factory=KVCacheOffloading, description="KV-cache offloading to CPU RAM and disk."
    )
    disaggregation: Disaggregation = Field(default_factory=Disaggregation, description="Prefill/decode disaggregation.")
    images: Images = Field(default_factory=Images, description="Runtime images (pinned by default).")
    vllm: VLLMSettings = Field(default_factory=VLLMSettings, description="vLLM server settings.")
    resources: Resources = Field(default_factory=Resources, description="Explicit resource values; they always win.")
    scheduling: Scheduling = Field(default_factory=Scheduling, description="Node selection.")
    pod: PodSettings = Field(
        default_factory=PodSettings,
        description="Pod settings: labels, annotations, imagePullSecrets, ServiceAccount, securityContext.",
    )
    multi_node: MultiNode = Field(
        default_factory=MultiNode, description="How a server spanning several nodes is rendered."
    )
    deployment: DeploymentSettings = Field(
        default_factory=DeploymentSettings, description="The Deployment of a single-node server: its strategy."
    )
    service: Service = Field(default_factory=Service, description="The Service in front of vLLM.")
    routing: Routing = Field(default_factory=Routing, description="How requests reach the replicas (docs/routing.md).")
    catalog: Catalog | None = Field(
        None,
        description="Your own models and node types, merged over the built-in catalog (kvgen also takes them with "
        "--catalog FILE or KVGEN_CATALOG; Helm with -f FILE).",
    )
    probes: Probes = Field(default_factory=Probes, description="vLLM's startup, readiness and liveness probes.")
    disruption_budget: DisruptionBudget = Field(
        default_factory=DisruptionBudget, description="The PodDisruptionBudget of the servers' pods."
    )
    metrics: Metrics = Field(default_factory=Metrics, description="Prometheus Operator monitors.")
    autoscaling: Autoscaling | None = Field(
        None, description="Scale the Deployment with KEDA or an HPA; replicas is then left to it."
    )
    common_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels on every object kvgen renders and on its pod templates (as Bitnami charts' "
        "commonLabels), never in a selector: a team or cost-centre label. Keys kvgen sets itself "
        "(app.kubernetes.io/*, helm.sh/chart, kvgen.dev/*) are refused; pod.labels, service.labels and "
        "metrics.labels win over them on their objects.",
    )
    common_annotations: dict[str, str] = Field(
        default_factory=dict,
        description="Annotations on every object kvgen renders (as Bitnami charts' commonAnnotations), not on pod "
        "templates (a change there would restart every server; use pod.annotations). Keys kvgen sets itself are "
        "refused; service.annotations win over them on the Service.",
    )
    extra_objects: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Kubernetes objects of your own rendered with the server, after kvgen's objects and in the "
        "order written (as Bitnami charts' extraObjects): a NetworkPolicy, a ConfigMap that vllm.envFrom reads. "
        "Each is written verbatim: no templating (the Helm chart does not run tpl on them, so both faces give the "
        "same bytes), no commonLabels or commonAnnotations, and no namespace added (unset, kubectl, Helm or Argo "
        "CD put it in the release namespace). Each needs apiVersion, kind and metadata.name (a v1 List: each of "
        "its items, which kubectl and Helm create one by one); kvgen refuses a "
        "Secret with data or stringData (create it outside kvgen and reference it), one of kvgen's own objects, "
        "two alike, and a metadata.namespace other than the spec's. kvgen validates a kind it has a schema for "
        "(Kubernetes' built-in kinds, the LeaderWorkerSet, KEDA and Prometheus Operator CRDs) as strictly as its "
        "own objects, and warns about any other kind (the Helm chart leaves the schema check to the API server).",
    )
    strict: bool = Field(
        False,
        description="Warnings are errors: kvgen and the Helm chart refuse the spec, listing every warning as a "
        "problem at strict (kvgen render --strict does the same for every spec).",
    )
    kube_version: str | None = Field(
        None,
        pattern=r"^1\.[0-9]+$",
        description='The Kubernetes version (major.minor, a quoted string such as "1.34") of the cluster this spec '
        "is written for: kvgen renders and validates for it when no --kube-version is given, and so does the Helm "
        "chart under helm template without --kube-version. A version given on the command line (or the cluster's, "
        "under helm install) that is older is a problem naming both; a newer one is used. Unset: kvgen's default "
        "(charts/kvgen/files/kubernetes.json).",
    )

    @field_validator("kube_version", mode="before")
    @classmethod
    def _version_is_text(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(
                f'a Kubernetes version is a string: quote it, kubeVersion: "{value}" (YAML reads an unquoted 1.30 '
                "as the number 1.3)"
            )
        return value

    @property
    def object_name(self) -> str:
        """The objects' name. kvgen.plan.validate sets ``name`` (the spec's, else fullnameOverride) before a
        spec is planned, and refuses a spec with neither, so a planned spec always has one."""
        assert self.name is not None, "validate_spec resolves the name before planning"
        return self.name


def own_rows(spec: Spec) -> dict[str, dict[str, dict[str, Any]]]:
    """The spec's own catalog rows, keyed as the catalog files are (camelCase), with their values as
    validated: sizes stay parsed (quantity.Size), where a model dump would write their text back."""
    if spec.catalog is None:
        return {}
    return {
        table: {
            key: {
                f.alias or name: v
                for name, f in type(row).model_fields.items()
                if (v := getattr(row, name)) is not None
            }
            for key, row in getattr(spec.catalog, table).items()
        }
        for table in ("models", "instances")
    }
