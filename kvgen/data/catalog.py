"""The data kvgen shares with the Helm chart: models, instances, runtime pins, rules.

All of it lives as YAML under ``charts/kvgen/files/`` and is read once per process, parsed
once per content (kvgen.core.diskcache keeps the parsed form, keyed by the file's hash). A spec
names a catalog model or instance by key, may override any of its fields inline, or may
describe one the catalog does not know.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic.alias_generators import to_camel

from kvgen.core import quantity
from kvgen.core.errors import Problem, near_typo, quoted
from kvgen.data.files import load as load
from kvgen.data.files import parse_yaml as parse_yaml

# rows from --catalog FILE / KVGEN_CATALOG (kvgen.input.user_catalog), merged over the files' rows
_overlay: dict[str, dict[str, dict[str, Any]]] = {"models": {}, "instances": {}}
_merged: dict[str, dict[str, dict[str, Any]]] = {}


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` over ``base``, maps merged key by key (as Helm merges values files)."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def merge_rows(table: dict[str, dict[str, Any]], rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A table with ``rows`` merged over it: a new key adds a row, a known one replaces the fields it sets."""
    if not rows:
        return table
    out = dict(table)
    for key, row in rows.items():
        out[key] = deep_merge(out.get(key) or {}, row)
    return out


def use_rows(rows: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Merge these rows ({"models": {...}, "instances": {...}}) over the built-in catalog for the
    rest of the process (the CLI's --catalog files)."""
    _overlay["models"] = merge_rows(_overlay["models"], rows.get("models") or {})
    _overlay["instances"] = merge_rows(_overlay["instances"], rows.get("instances") or {})
    _merged.clear()


def _table(name: str, file: str) -> dict[str, dict[str, Any]]:
    if name not in _merged:
        _merged[name] = merge_rows(load(file)[name], _overlay[name])
    return _merged[name]


def models(extra: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Model rows by id: the built-in catalog, --catalog rows, then ``extra`` (a spec's catalog)."""
    return merge_rows(_table("models", "models.yaml"), extra or {})


def instances(extra: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    return merge_rows(_table("instances", "instances.yaml"), extra or {})


def gated(model_id: str) -> bool:
    """Whether Hugging Face gates the model's files (models.yaml `gated:` patterns)."""
    import re

    return any(re.search(row["pattern"], model_id) for row in load("models.yaml").get("gated") or ())


def runtime() -> dict[str, Any]:
    return load("runtime.yaml")


def rules() -> list[dict[str, Any]]:
    return load("rules.yaml")["rules"]


def hybrid_architectures() -> dict[str, str]:
    """vLLM architectures whose class implements IsHybrid (captured from vLLM by
    scripts/capture-contract), each with the class the registry loads."""
    return load("hybrid-architectures.yaml")["architectures"]


@dataclass(frozen=True)
class ModelInfo:
    id: str
    architecture: str
    layers: int
    attention_layers: int
    kv_heads: int
    head_dim: int
    mla: bool
    hybrid: bool
    weights_bytes: int
    max_model_len: int | None
    sliding_layers: int = 0  # attention layers with a sliding window (part of attention_layers)
    sliding_window: int | None = None  # their window, in tokens
    full_kv_heads: int | None = None  # full-attention layers' geometry when it differs (Gemma 4)
    full_head_dim: int | None = None
    # num_attention_heads (query heads) and routed MoE experts, which the tensor-parallel size must fit (vLLM refuses
    # heads % TP != 0 and experts < TP); None / 0 where a row of your own catalog leaves them out
    attention_heads: int | None = None
    experts: int = 0
    # the language model's hidden_size, the MLP width tensor parallelism splits (a routed expert's for a MoE model),
    # the experts each token is routed to and vocab_size: what vLLM 0.33's profiling run holds in activations and
    # what its TP checks divide; None / 0 where a row of your own catalog leaves them out
    hidden_size: int | None = None
    intermediate_size: int | None = None
    experts_per_token: int = 0
    vocab_size: int | None = None
    multimodal: bool = False  # takes images/audio: vLLM keeps a multimodal processor cache in host memory
    quantization: str = "bf16"  # the checkpoint's weight format: a scheme of files/quantization.yaml
    embedding_parameters: int | None = (
        None  # input embeddings + lm_head: kept in the model dtype by online quantization
    )
    # what the vLLM flags of the spec make of it (kvgen.plan.quantization.apply): the weights' bytes on the
    # GPUs (None: the checkpoint's size), the downloaded bytes (None: the checkpoint's), the KV dtype's bytes
    gpu_weights: int | None = None
    downloaded_weights: int | None = None
    kv_dtype_bytes: int = 2

    @property
    def gpu_weights_bytes(self) -> int:
        """The weights' bytes in GPU memory (all GPUs together)."""
        return self.weights_bytes if self.gpu_weights is None else self.gpu_weights

    @property
    def download_bytes(self) -> int:
        """The bytes downloaded into the model cache (the checkpoint, unless --load-format dummy)."""
        return self.weights_bytes if self.downloaded_weights is None else self.downloaded_weights

    @property
    def full_layers(self) -> int:
        """Attention layers that keep every token (full attention)."""
        return self.attention_layers - self.sliding_layers

    def layer_bytes_per_token(self, full: bool, dtype_bytes: int = 2, tensor_parallel: int = 1) -> int:
        """KV-cache bytes one token takes in one attention layer on one GPU (vLLM
        kv_cache_interface.py). Standard attention: 2 (K and V) x KV heads per rank x head dim x
        dtype; heads are replicated when TP exceeds them. MLA: one latent vector of head_dim, no
        factor 2, replicated on every rank (runtime.md section 9). Full-attention layers use
        fullKvHeads / fullHeadDim where the model sets them."""
        heads = self.full_kv_heads if full and self.full_kv_heads else self.kv_heads
        dim = self.full_head_dim if full and self.full_head_dim else self.head_dim
        if self.mla:
            return dim * dtype_bytes
        return 2 * max(1, heads // tensor_parallel) * dim * dtype_bytes

    def kv_bytes_per_token(self, dtype_bytes: int = 2, tensor_parallel: int = 1) -> int:
        """KV-cache bytes one token takes on one GPU in every attention layer, sliding ones
        included (what a token costs while it is inside every window)."""
        return self.full_layers * self.layer_bytes_per_token(
            True, dtype_bytes, tensor_parallel
        ) + self.sliding_layers * self.layer_bytes_per_token(False, dtype_bytes, tensor_parallel)


@dataclass(frozen=True)
class InstanceInfo:
    type: str | None
    gpus: int
    gpu_model: str | None
    gpu_memory_bytes: int
    memory_bytes: int
    cpu: int | None
    arch: str
    local_disk_bytes: int
    mig: str | None
    # the memory a GPU reports to CUDA (instances.yaml gpuModels), what vLLM multiplies by
    # gpu_memory_utilization; 0: the gpuMemory as given (a spec's own figure, a MIG profile, an unlisted model)
    gpu_reported_bytes: int = 0
    ephemeral_bytes: int = 0  # the kubelet's ephemeral storage (the OS/boot disk by default); 0: unknown
    ephemeral_explicit: bool = False  # set by the spec's instance.ephemeralStorage
    # a row with a nodeSelector (or cloud: false) is not a cloud instance type: its nodes carry no
    # node.kubernetes.io/instance-type, so pods select them with the row's nodeSelector instead
    node_selector: dict[str, str] = dataclasses.field(default_factory=dict)
    cloud_type: bool = True
    # memory_bytes 0: the node is unknown (no type, no memory); gpu_memory_bytes 0 with gpus: the GPUs' memory is

    @property
    def node_known(self) -> bool:
        return self.memory_bytes > 0

    @property
    def gpu_usable_bytes(self) -> int:
        """Device memory as the GPU reports it (vLLM's total_memory): what planning multiplies by
        gpuMemoryUtilization."""
        return self.gpu_reported_bytes or self.gpu_memory_bytes

    @property
    def gpu_memory_known(self) -> bool:
        return self.gpus == 0 or self.gpu_memory_bytes > 0


def _bytes(value: Any) -> int:
    """A row's size: the spec's own was parsed when the spec was validated (a quantity.Size); a
    catalog file's text is parsed once per process."""
    return value.bytes if isinstance(value, quantity.Size) else _file_bytes(value)


@cache
def _file_bytes(value: str | int) -> int:
    return quantity.to_bytes(value)


MODEL_FIELDS = ("architecture", "layers", "kv_heads", "head_dim", "weights")
INSTANCE_FIELDS = ("gpus", "memory")

# the hints of an unknown model or instance type (the chart's kvgen.resolveModel / kvgen.resolveInstance say the same)
UNKNOWN_MODEL_HINT = (
    "describe it inline (model.architecture, model.layers, model.kvHeads, model.headDim, model.weights; see "
    "`kvgen schema`) or under catalog.models in the spec or in a catalog file (kvgen --catalog FILE, helm -f FILE); "
    "`kvgen catalog models` lists the models kvgen knows"
)
UNKNOWN_INSTANCE_HINT = (
    "describe the node inline (instance.gpus, instance.gpuMemory, instance.memory, instance.cpu, instance.arch, "
    "instance.localDisk) or under catalog.instances in the spec or in a catalog file (kvgen --catalog FILE, helm -f "
    "FILE); `kvgen catalog instances` lists the types kvgen knows"
)


def _did_you_mean(close: str | None) -> str:
    """The start of an unknown name's hint: a near typo's correction (kvgen.core.errors.near_typo), if any."""
    return f"did you mean {quoted(close)}? if not, " if close is not None else ""


# ----------------------------------------------------------------------------- rows of your own, checked
#
# A spec's catalog: rows (here, in resolve_model / resolve_instance) and a --catalog file's (kvgen.input.user_catalog,
# with file:line) are checked before they are used; the chart's kvgen.resolveModel / kvgen.resolveInstance check the
# values' catalog (the spec's, and a file given with helm -f) alike, in the same words. The built-in rows are kvgen's.

# every size of a row: kvgen's bound on any size (files/apiserver.yaml maxBytes), as the spec's own sizes have
MODEL_ROW_SIZES = ("weights",)
INSTANCE_ROW_SIZES = ("gpuMemory", "memory", "localDisk", "ephemeralStorage")

# A Hugging Face repo id as huggingface_hub 2.4.0 validates it (utils/_validators.py validate_repo_id: vLLM's
# download and `hf download` run it): "name" or "namespace/name", each 1 to 96 of letters, digits, '-', '_' and '.',
# starting and ending with a letter, digit or '_' (its REPO_ID_REGEX \b[\w\-.]{1,96}\b, ASCII); no "--" or "..";
# not ending in ".git". The chart's kvgen.resolveModel matches the same pattern. Each refusal quotes its words.
HF_REPO_ID = r"^([A-Za-z0-9_]([-A-Za-z0-9_.]{0,94}[A-Za-z0-9_])?/)?[A-Za-z0-9_]([-A-Za-z0-9_.]{0,94}[A-Za-z0-9_])?$"
HF_FORM = "Repo id must be in the form 'repo_name' or 'namespace/repo_name'"
HF_CHARS = (
    "Repo id must use alphanumeric chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and the "
    "maximum length is 96"
)
HF_DOUBLES = "Cannot have -- or .. in repo_id"
HF_GIT = "Repo_id cannot end by '.git'"
HF_ID_HINT = (
    "write the model's id on the Hub, e.g. Qwen/Qwen3-8B; weights that are not on the Hub are served from a claim, "
    "under any name (model.uri: pvc://CLAIM[/PATH], or model.cache with download: false)"
)
# What no model name may hold, whichever way the weights come: whitespace and control characters (Unicode's
# Cc, Zs, Zl and Zp; the chart's [\p{Cc}\p{Z}]). vLLM serves the model under model.id (--served-model-name).
NAME_REFUSED = r"[\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
NAME_HINT = "name the model without whitespace or control characters, e.g. acme/support-llama"


def hf_repo_id_problem(model_id: str) -> str | None:
    """huggingface_hub's words for a model id it refuses, in validate_repo_id's order; None for a repo id."""
    import re

    if model_id.count("/") > 1:
        return HF_FORM
    if not re.fullmatch(HF_REPO_ID, model_id):
        return HF_CHARS
    if "--" in model_id or ".." in model_id:
        return HF_DOUBLES
    if model_id.endswith(".git"):
        return HF_GIT
    return None


def downloads_by_id(spec_model: Any) -> bool:
    """Whether the weights are downloaded from Hugging Face by model.id (vLLM's download, or model.cache's `hf
    download`): neither model.uri nor model.cache with download: false (kvgen.plan.model_source)."""
    cache_ = spec_model.cache
    return not spec_model.uri and (cache_ is None or cache_.download)


def check_model_id(spec_model: Any) -> list[Problem]:
    """model.id as its mode reads it: a Hugging Face repo id where the model is downloaded by it, else a name
    (--served-model-name) without whitespace or control characters."""
    import re

    mid = spec_model.id
    if downloads_by_id(spec_model):
        words = hf_repo_id_problem(mid)
        if words is None:
            return []
        message = (
            f"{quoted(mid)} is not a Hugging Face repo id, yet the weights are downloaded from Hugging Face by it: "
            f'huggingface_hub refuses it ("{words}"; validate_repo_id)'
        )
        return [Problem(("model", "id"), message, HF_ID_HINT)]
    if re.search(NAME_REFUSED, mid):
        message = (
            f"{quoted(mid)} holds whitespace or a control character; vLLM serves the model under this name "
            "(--served-model-name), which clients send in every request"
        )
        return [Problem(("model", "id"), message, NAME_HINT)]
    return []


def _size_text(value: Any) -> str:
    return value.text if isinstance(value, quantity.Size) else str(value)


def _row_sizes(base: tuple[str, ...], row: dict[str, Any], fields: tuple[str, ...]) -> list[Problem]:
    """A row's sizes above kvgen's bound (kvgen.plan.apiserver: the same words as the spec's sizes)."""
    bound = load("apiserver.yaml")
    out = []
    for key in fields:
        value = row.get(key)
        if value is not None and _bytes(value) > bound["maxBytes"]:
            text = bound["maxBytesText"]
            out.append(
                Problem(
                    (*base, key),
                    f"{_size_text(value)} is above kvgen's bound of {text} for any size (sizes near 8 EiB overflow "
                    "the 64-bit integers Kubernetes and Helm compute with)",
                    f"use at most {text}",
                )
            )
    return out


def check_model_rows(rows: dict[str, dict[str, Any]] | None) -> list[Problem]:
    """Model rows of your own (catalog.models): each key a model id without whitespace or control characters (a
    row may serve local weights under a name of your own: model.id is checked as a Hugging Face id where it is
    downloaded by it), each size within kvgen's bound."""
    import re

    out: list[Problem] = []
    for key, row in (rows or {}).items():
        base = ("catalog", "models", key)
        if re.search(NAME_REFUSED, key):
            out.append(
                Problem(
                    base,
                    f"{quoted(key)} holds whitespace or a control character, which no model id may (model.id names "
                    "this row by it)",
                    "key the row by the model's Hugging Face id, e.g. Qwen/Qwen3-8B",
                )
            )
        out += _row_sizes(base, row, MODEL_ROW_SIZES)
    return out


def check_instance_rows(rows: dict[str, dict[str, Any]] | None) -> list[Problem]:
    """Instance rows of your own (catalog.instances): the nodeSelector copied into the pod, label keys and values as
    the API server validates a pod's nodeSelector (ValidatePodSpec: ValidateLabels; the words of the spec's
    scheduling.nodeSelector), and each size within kvgen's bound."""
    from kvgen.data import formats as apiserver  # its rule table is read only where rows are checked

    out: list[Problem] = []
    for key, row in (rows or {}).items():
        base = ("catalog", "instances", key)
        for label, value in (row.get("nodeSelector") or {}).items():
            at = (*base, "nodeSelector", label)
            if not apiserver.is_label_key(label):
                message = f"{quoted(label)} is not {apiserver.what('labelKey')} (ValidatePodSpec: ValidateLabels)"
                out.append(Problem(at, message, None))
            if isinstance(value, str) and not apiserver.is_label_value(value):
                message = f"{quoted(value)} is not {apiserver.what('labelValue')} (ValidatePodSpec: ValidateLabels)"
                out.append(Problem(at, message, None))
        out += _row_sizes(base, row, INSTANCE_ROW_SIZES)
    return out


def check_rows(rows: dict[str, dict[str, dict[str, Any]]]) -> list[Problem]:
    """Every problem of a catalog's rows ({"models": ..., "instances": ...}), each at its catalog.* path."""
    return check_model_rows(rows.get("models")) + check_instance_rows(rows.get("instances"))


def resolve_model(
    spec_model: Any, extra: dict[str, dict[str, Any]] | None = None
) -> tuple[ModelInfo | None, list[Problem]]:
    """The model to plan with, and the problems: model.id as its mode reads it first (nothing else is looked up
    for an id refused), then the spec's own rows (``extra``), which leave no model to plan with when refused."""
    refused = check_model_id(spec_model)
    if refused:
        return None, refused
    own = check_model_rows(extra)
    info, problems = _resolve_model(spec_model, extra)
    return (None, own + problems) if own else (info, problems)


def _resolve_model(
    spec_model: Any, extra: dict[str, dict[str, Any]] | None = None
) -> tuple[ModelInfo | None, list[Problem]]:
    """Merge catalog row and inline fields. Returns (info, problems as (path, message, hint)).
    ``extra``: the spec's own catalog rows."""
    table = models(extra)
    row = table.get(spec_model.id)
    merged: dict[str, Any] = dict(row or {})
    for field in (
        "architecture",
        "layers",
        "attention_layers",
        "attention_heads",
        "kv_heads",
        "head_dim",
        "experts",
        "experts_per_token",
        "hidden_size",
        "intermediate_size",
        "vocab_size",
        "mla",
        "hybrid",
        "weights",
        "sliding_layers",
        "sliding_window",
        "multimodal",
        "quantization",
        "embedding_parameters",
    ):
        value = getattr(spec_model, field)
        if value is not None:
            merged[to_camel(field)] = value
    missing = [f for f in MODEL_FIELDS if merged.get(to_camel(f)) is None]
    if missing:
        names = ", ".join(f"model.{to_camel(f)}" for f in missing)
        if row is None:
            message = (
                f"model {quoted(spec_model.id)} is not in the catalog and is not described inline (missing {names})"
            )
            hint = _did_you_mean(near_typo(spec_model.id, table)) + UNKNOWN_MODEL_HINT
        else:
            message = f"missing {names}"
            hint = None
        return None, [Problem(("model", "id"), message, hint)]
    layers = int(merged["layers"])
    architecture = str(merged["architecture"])
    # hybrid follows the architecture (vLLM's IsHybrid classes); a spec cannot switch it off
    hybrid_arch = architecture in hybrid_architectures()
    problems = []
    if spec_model.hybrid is False and hybrid_arch:
        problems.append(
            Problem(
                ("model", "hybrid"),
                f"{architecture} is a hybrid architecture (vLLM {hybrid_architectures()[architecture]} implements IsHybrid); "
                "hybrid: false cannot change how vLLM runs it",
                "remove model.hybrid (kvgen derives it from the architecture)",
            )
        )
    attention = merged.get("attentionLayers")
    attention_layers = int(attention if attention is not None else layers)
    sliding_layers = int(merged.get("slidingLayers") or 0)
    window = merged.get("slidingWindow")
    if sliding_layers > attention_layers:
        problems.append(
            Problem(
                ("model", "slidingLayers"),
                f"{sliding_layers} sliding layers are more than the {attention_layers} attention layers",
                None,
            )
        )
    if sliding_layers and not window:
        problems.append(
            Problem(
                ("model", "slidingWindow"),
                "slidingLayers is set but the window is not",
                "set model.slidingWindow (tokens)",
            )
        )
    info = ModelInfo(
        id=spec_model.id,
        architecture=architecture,
        layers=layers,
        attention_layers=attention_layers,
        kv_heads=int(merged["kvHeads"]),
        head_dim=int(merged["headDim"]),
        mla=bool(merged.get("mla", False)),
        hybrid=hybrid_arch or bool(merged.get("hybrid", False)),
        weights_bytes=_bytes(merged["weights"]),
        max_model_len=merged.get("maxModelLen"),
        sliding_layers=sliding_layers if window else 0,
        sliding_window=int(window) if window and sliding_layers else None,
        full_kv_heads=merged.get("fullKvHeads"),
        full_head_dim=merged.get("fullHeadDim"),
        attention_heads=merged.get("attentionHeads"),
        experts=int(merged.get("experts") or 0),
        hidden_size=merged.get("hiddenSize"),
        intermediate_size=merged.get("intermediateSize"),
        experts_per_token=int(merged.get("expertsPerToken") or 0),
        vocab_size=merged.get("vocabSize"),
        multimodal=bool(merged.get("multimodal", False)),
        quantization=str(merged["quantization"]) if merged.get("quantization") is not None else "bf16",
        embedding_parameters=merged.get("embeddingParameters"),
    )
    if info.quantization not in load("quantization.yaml")["schemes"]:
        problems.append(
            Problem(
                ("model", "quantization"),
                f"unknown checkpoint quantization {quoted(info.quantization)}",
                "use one of " + ", ".join(sorted(load("quantization.yaml")["schemes"])) + " (files/quantization.yaml)",
            )
        )
    if spec_model.max_model_len and info.max_model_len and spec_model.max_model_len > info.max_model_len:
        problems.append(
            Problem(
                ("model", "maxModelLen"),
                f"{spec_model.max_model_len} is longer than {spec_model.id}'s limit of {info.max_model_len} tokens",
                f"use at most {info.max_model_len}",
            )
        )
    return info, problems


def gpu_reported_memory(gpu_model: str | None, gpu_memory: int) -> int:
    """The total a GPU of ``gpu_model`` reports to CUDA (instances.yaml gpuModels): its reading in
    MiB, or its share of ``gpu_memory``; 0 when the model is not listed."""
    row = (load("instances.yaml").get("gpuModels") or {}).get(gpu_model or "")
    if not row or not gpu_memory:
        return 0
    if row.get("mib") is not None:
        return int(row["mib"]) * quantity.MiB
    return int(gpu_memory * float(row["share"]))


def mig_memory(profile: str) -> int:
    """'3g.40gb' -> 40 GB of device memory (MIG profiles name decimal gigabytes)."""
    return int(profile.split(".")[1].removesuffix("+me").removesuffix("gb")) * 10**9


def gpus_contradict_type(type_: str, gpus: int, node_gpus: int) -> Problem:
    """instance.gpus that is not the catalog type's GPU count (the chart's kvgen.resolveInstance: the same)."""
    return Problem(
        ("instance", "gpus"),
        f"instance.type {quoted(type_)} is a node with {node_gpus} GPUs, but instance.gpus says {gpus}: the pod would "
        f"be scheduled onto a node with {node_gpus} GPUs and sized for all of it",
        f"to use {gpus} of its {node_gpus} GPUs, leave instance.gpus out and set the parallel sizes to {gpus} GPUs "
        f"(e.g. parallelism.tensor: {gpus}): the pod then gets {gpus}/{node_gpus} of the node's memory, CPU and disk; "
        f"for a node with {gpus} GPUs, describe it without instance.type (instance.gpus, gpuModel, gpuMemory, memory) "
        "or add a catalog row",
    )


def resolve_instance(
    spec_instance: Any, extra: dict[str, dict[str, Any]] | None = None
) -> tuple[InstanceInfo | None, list[Problem]]:
    """The node to plan with, and the problems; the spec's own rows (``extra``) are checked first, and leave no
    node to plan with when refused."""
    own = check_instance_rows(extra)
    info, problems = _resolve_instance(spec_instance, extra)
    return (None, own + problems) if own else (info, problems)


def _resolve_instance(
    spec_instance: Any, extra: dict[str, dict[str, Any]] | None = None
) -> tuple[InstanceInfo | None, list[Problem]]:
    table = instances(extra)
    row = table.get(spec_instance.type) if spec_instance.type else None
    merged: dict[str, Any] = dict(row or {})
    for field in ("gpus", "gpu_model", "gpu_memory", "memory", "cpu", "arch", "local_disk", "mig", "ephemeral_storage"):
        value = getattr(spec_instance, field)
        if value is not None:
            merged[to_camel(field)] = value
    # a catalog type is one node: instance.gpus cannot make it another (issue 32: a 2-GPU pod selected and
    # budgeted as the whole 8-GPU node); a MIG profile's gpus counts MIG devices, not the node's GPUs
    if row is not None and spec_instance.gpus is not None and row.get("gpus") is not None and not merged.get("mig"):
        if int(spec_instance.gpus) != int(row["gpus"]):
            return None, [gpus_contradict_type(spec_instance.type, int(spec_instance.gpus), int(row["gpus"]))]
    # a node described without a type and without memory is unknown (KServe names none): the pod is
    # rendered from the GPUs given, and the checks that need the node's memory are skipped
    unknown_node = not spec_instance.type and merged.get("memory") is None
    missing = [f for f in INSTANCE_FIELDS if merged.get(to_camel(f)) is None and not (unknown_node and f == "memory")]
    # a catalog row's gpuMemory "0" (a CPU type's) is no GPU's memory: missing when the node has GPUs
    no_gpu_memory = not merged.get("gpuMemory") or not _bytes(merged["gpuMemory"])
    if merged.get("gpus") and no_gpu_memory and not merged.get("mig") and not unknown_node:
        missing.append("gpu_memory")
    if missing:
        names = ", ".join(f"instance.{to_camel(f)}" for f in missing)
        if spec_instance.type and row is None:
            message = f"unknown instance type {quoted(spec_instance.type)} (missing {names})"
            hint = _did_you_mean(near_typo(spec_instance.type, table)) + UNKNOWN_INSTANCE_HINT
            return None, [Problem(("instance", "type"), message, hint)]
        return None, [
            Problem(("instance",), f"describe the node: missing {names}", "or set instance.type to a catalog type")
        ]
    mig = merged.get("mig")
    gpu_memory = mig_memory(mig) if mig else _bytes(merged.get("gpuMemory") or 0)
    info = InstanceInfo(
        type=spec_instance.type,
        gpus=int(merged["gpus"]),
        gpu_model=merged.get("gpuModel"),
        gpu_memory_bytes=gpu_memory,
        # a known GPU as the device reports it (a MIG profile is its own size); a spec's gpuMemory for a
        # known gpuModel is its marketed size too: planning from it would inflate the GPU KV cache
        gpu_reported_bytes=0 if mig else gpu_reported_memory(merged.get("gpuModel"), gpu_memory),
        memory_bytes=_bytes(merged["memory"]) if merged.get("memory") is not None else 0,
        cpu=int(merged["cpu"]) if merged.get("cpu") is not None else None,
        arch=str(merged.get("arch") or "amd64"),
        local_disk_bytes=_bytes(merged["localDisk"]) if merged.get("localDisk") else 0,
        mig=mig,
        ephemeral_bytes=_bytes(merged["ephemeralStorage"]) if merged.get("ephemeralStorage") else 0,
        ephemeral_explicit=spec_instance.ephemeral_storage is not None,
        node_selector=dict((row or {}).get("nodeSelector") or {}),
        cloud_type=not (row and (row.get("cloud") is False or row.get("nodeSelector"))),
    )
    return info, []
