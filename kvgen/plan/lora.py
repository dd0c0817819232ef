"""model.lora: the LoRA adapters vLLM 0.33 serves beside the model. Where each adapter's files are
(files/runtime.yaml wiring.lora), the flags that load them, what they take (files/sizing.yaml lora):
the GPU buffers vLLM preallocates out of the KV cache, the adapters each worker keeps in host memory,
the downloads, and what no schema can say about them. The chart's twin: templates/plan/_lora.tpl."""

from __future__ import annotations

import json
import re
from typing import Any

from kvgen.core.errors import Problem, quoted
from kvgen.data import catalog, connector
from kvgen.data.catalog import ModelInfo
from kvgen.plan import model_source
from kvgen.spec.models import Spec

_C = catalog.load("sizing.yaml")["lora"]
BUFFER_BYTES = _C["bufferBytesPerElement"]
SAVED_BYTES = _C["savedBytesPerElement"]
# the vLLM options model.lora sets (vllm/engine/arg_utils.py LoRAConfig group, entrypoints/common/cli_args.py)
FLAGS = (
    "--enable-lora",
    "--no-enable-lora",
    "--disable-lora",
    "--max-lora-rank",
    "--max-loras",
    "--max-cpu-loras",
    "--lora-modules",
)


def wiring() -> dict[str, Any]:
    return connector.wiring()["lora"]


def dir_name(name: str) -> str:
    """An adapter's directory: its name with characters other than letters, digits, '.', '_' and '-' made
    '-' (KServe's sanitizeLoRAPathSegment, workload_lora.go)."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)


def max_loras(spec: Spec) -> int:
    lora = spec.model.lora
    assert lora is not None
    return lora.max_loras if lora.max_loras is not None else len(lora.adapters)


def max_cpu_loras(spec: Spec) -> int:
    lora = spec.model.lora
    assert lora is not None
    return lora.max_cpu_loras if lora.max_cpu_loras is not None else max_loras(spec)


def sources(spec: Spec) -> list[dict[str, Any]]:
    """Each distinct uri once, in the adapters' order: {uri, dir (its first adapter's), n (its index
    among the uris of its scheme)}."""
    lora = spec.model.lora
    if lora is None:
        return []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    counts = {"hf": 0, "pvc": 0}
    for a in lora.adapters:
        if a.uri in seen:
            continue
        seen.add(a.uri)
        scheme = a.uri.partition("://")[0]
        out.append({"uri": a.uri, "scheme": scheme, "dir": dir_name(a.name), "n": counts[scheme]})
        counts[scheme] += 1
    return out


def _path(spec: Spec, src: dict[str, Any]) -> str:
    """Where vLLM reads the adapter: a claim's mount, a directory on the weights' claim (model.cache),
    or the repo id vLLM downloads."""
    w = wiring()
    if src["scheme"] == "pvc":
        return f"{w['mountRoot']}/{src['dir']}"
    if spec.model.cache is not None:
        return f"{model_source.model_dir(spec)}/{w['cacheDir']}/{src['dir']}"
    return str(src["uri"]).removeprefix("hf://")


def adapters(spec: Spec) -> list[dict[str, str]]:
    """--lora-modules' items: {name, path} for each adapter, in the spec's order."""
    lora = spec.model.lora
    if lora is None:
        return []
    paths = {s["uri"]: _path(spec, s) for s in sources(spec)}
    return [{"name": a.name, "path": paths[a.uri]} for a in lora.adapters]


def args(spec: Spec) -> list[str]:
    """The flags vLLM gets: every limit written out, and every adapter in one --lora-modules (repeating
    the flag replaces its list: entrypoints/common/cli_args.py LoRAParserAction), each a JSON object
    (name=path would break on a '=' or ',' in either)."""
    lora = spec.model.lora
    if lora is None:
        return []
    items = [json.dumps(a, separators=(",", ":")) for a in adapters(spec)]
    return [
        "--enable-lora",
        f"--max-lora-rank={lora.max_rank}",
        f"--max-loras={max_loras(spec)}",
        f"--max-cpu-loras={max_cpu_loras(spec)}",
        "--lora-modules",
        *items,
    ]


def volumes(spec: Spec) -> list[dict[str, Any]]:
    """The pod's volumes of pvc:// adapters: the claim, read-only."""
    w = wiring()
    out = []
    for s in sources(spec):
        if s["scheme"] == "pvc":
            claim = str(s["uri"]).removeprefix("pvc://").partition("/")[0]
            out.append(
                {
                    "name": f"{w['volumePrefix']}{s['n']}",
                    "persistentVolumeClaim": {"claimName": claim, "readOnly": True},
                }
            )
    return out


def mounts(spec: Spec) -> list[dict[str, Any]]:
    """vLLM's read-only mounts of pvc:// adapters: the claim's path at <mountRoot>/<dir>."""
    w = wiring()
    out = []
    for s in sources(spec):
        if s["scheme"] == "pvc":
            sub = str(s["uri"]).removeprefix("pvc://").partition("/")[2].strip("/")
            m: dict[str, Any] = {"name": f"{w['volumePrefix']}{s['n']}", "mountPath": _path(spec, s), "readOnly": True}
            if sub:
                m["subPath"] = sub
            out.append(m)
    return out


def downloads(spec: Spec) -> list[dict[str, Any]]:
    """model.cache with download: an init container per hf:// adapter, `hf download` of its adapter files
    into its directory on the weights' claim: {name, args}."""
    if not model_source.downloads(spec):
        return []
    w = wiring()
    out = []
    for s in sources(spec):
        if s["scheme"] == "hf":
            out.append(
                {
                    "name": f"{w['downloadContainer']}{s['n']}",
                    "args": [
                        str(s["uri"]).removeprefix("hf://"),
                        f"--local-dir={_path(spec, s)}",
                        *(f"--include={p}" for p in w["include"]),
                    ],
                }
            )
    return out


# ----------------------------------------------------------------------------- sizes


def sized(model: ModelInfo) -> bool:
    """kvgen knows the buffers of a dense model with standard attention and the geometry in its row."""
    return bool(
        model.hidden_size
        and model.intermediate_size
        and model.vocab_size
        and model.attention_heads
        and not model.experts
        and not model.mla
        and not model.hybrid
        and (model.full_kv_heads or model.kv_heads) == model.kv_heads
        and (model.full_head_dim or model.head_dim) == model.head_dim
    )


def _adapter_elements(spec: Spec, model: ModelInfo) -> int:
    """One adapter at maxRank on every linear module of every layer, unsharded (sizing.yaml lora)."""
    lora = spec.model.lora
    assert lora is not None
    h, i = model.hidden_size or 0, model.intermediate_size or 0
    q, kv = (model.attention_heads or 0) * model.head_dim, model.kv_heads * model.head_dim
    return lora.max_rank * model.layers * (7 * h + 2 * q + 2 * kv + 3 * i)


def gpu_bytes(spec: Spec, model: ModelInfo) -> int | None:
    """The stacked A and B buffers on the busiest GPU (the last pipeline stage: its layers and the lm_head;
    with one stage the embedding too), sizing.yaml lora; None without model.lora or for a model kvgen does
    not size."""
    lora = spec.model.lora
    if lora is None or not sized(model):
        return None
    t, pp = spec.parallelism.tensor, spec.parallelism.pipeline
    h, i, v = model.hidden_size or 0, model.intermediate_size or 0, model.vocab_size or 0
    q = (model.attention_heads or 0) * model.head_dim
    kv_rank = max(1, model.kv_heads // t) * model.head_dim
    layer = 7 * h + 2 * (q // t) + 2 * kv_rank + 3 * (i // t)
    edges = (v + h) * (2 if pp == 1 else 1)
    return max_loras(spec) * lora.max_rank * BUFFER_BYTES * (-(-model.layers // pp) * layer + edges)


def host_bytes(spec: Spec, model: ModelInfo, workers: int) -> int:
    """maxCpuLoras adapters in each worker's host memory (sizing.yaml lora); 0 without model.lora or for a
    model kvgen does not size."""
    if spec.model.lora is None or not sized(model):
        return 0
    return workers * max_cpu_loras(spec) * _adapter_elements(spec, model) * BUFFER_BYTES


def download_bytes(spec: Spec, model: ModelInfo) -> int:
    """What the hf:// adapters download (each distinct one once, saved in float32); 0 for a model kvgen
    does not size."""
    if spec.model.lora is None or not sized(model):
        return 0
    hf = sum(1 for s in sources(spec) if s["scheme"] == "hf")
    return hf * _adapter_elements(spec, model) * SAVED_BYTES


# ----------------------------------------------------------------------------- checks


def check(spec: Spec) -> list[Problem]:
    """What no schema can say about model.lora (the chart's kvgen.checkLora says the same)."""
    lora = spec.model.lora
    out: list[Problem] = []
    if lora is None:
        return out
    base = ("model", "lora")
    seen: dict[str, int] = {}
    dirs: dict[str, str] = {}
    for n, a in enumerate(lora.adapters):
        path = (*base, "adapters", n, "name")
        if a.name == spec.model.id:
            out.append(
                Problem(
                    path,
                    f"{quoted(a.name)} is the model's own id: a request for it would reach the base model",
                    "name the adapter apart from model.id",
                )
            )
        if a.name in seen:
            out.append(
                Problem(
                    path,
                    f"{quoted(a.name)} names adapters[{seen[a.name]}] too; vLLM refuses a second adapter under one name",
                    "give each adapter its own name",
                )
            )
            continue
        seen[a.name] = n
        d = dir_name(a.name)
        if d in dirs and dirs[d] != a.uri:
            out.append(
                Problem(
                    path,
                    f"{quoted(a.name)} and {quoted(next(k for k in seen if dir_name(k) == d))} both become the directory {d} "
                    f"({wiring()['mountRoot']}/{d}), with other uris",
                    "rename one (characters other than letters, digits, '.', '_' and '-' become '-')",
                )
            )
        dirs.setdefault(d, a.uri)
        if a.uri.startswith("hf://") and spec.model.uri:
            out.append(
                Problem(
                    (*base, "adapters", n, "uri"),
                    f"{quoted(a.uri)} is downloaded from Hugging Face, and model.uri serves the model offline "
                    "(HF_HUB_OFFLINE=1): vLLM could not fetch it",
                    "put the adapter's files on a claim and use pvc://CLAIM/PATH",
                )
            )
    if lora.max_cpu_loras is not None and lora.max_cpu_loras < max_loras(spec):
        out.append(
            Problem(
                (*base, "maxCpuLoras"),
                f"{lora.max_cpu_loras} is below maxLoras ({max_loras(spec)}); vLLM 0.33 refuses it "
                "(max_cpu_loras must be >= max_loras: vllm/config/lora.py)",
                f"raise it to at least {max_loras(spec)}, or leave it out",
            )
        )
    flagged = sorted({a.partition("=")[0].replace("_", "-") for a in spec.vllm.extra_args} & set(FLAGS))
    for flag in flagged:
        out.append(
            Problem(
                ("vllm", "extraArgs"),
                f"{flag} is set by kvgen from model.lora",
                "remove it from vllm.extraArgs; model.lora writes the LoRA flags",
            )
        )
    return out


def warnings(spec: Spec, model: ModelInfo) -> list[str]:
    """LoRA whose memory kvgen cannot size: model.lora on a MoE, MLA or hybrid model (or a row without the
    geometry), and --enable-lora in vllm.extraArgs without model.lora."""
    out = []
    if spec.model.lora is not None and not sized(model):
        out.append(
            f"model.lora: kvgen does not size the LoRA buffers of {spec.model.id} (only dense models with standard "
            "attention and hiddenSize, intermediateSize, vocabSize and attentionHeads in their row): vLLM takes them "
            "from the KV cache at start, and the host cache and downloads are not counted"
        )
    enabled = {a.partition("=")[0].replace("_", "-") for a in spec.vllm.extra_args} & {"--enable-lora"}
    if spec.model.lora is None and enabled:
        out.append(
            "vllm.extraArgs --enable-lora: the LoRA buffers vLLM preallocates (out of the KV cache) and the adapters "
            "in host memory are not sized; set model.lora (adapters, maxRank, maxLoras) instead"
        )
    return out
