"""A catalog row from a Hugging Face config.json: the KV-cache geometry, the sizes tensor parallelism must
divide, the layer kinds, the checkpoint's quantization and its weights, each computed from the config.

One derivation for three users: tools/catalog_models.py writes the built-in rows of
charts/kvgen/files/models.yaml from the fixtures in tests/fixtures/hf-configs/; `kvgen catalog import PATH`
prints the row of any config.json (a fine-tune, a model the catalog lacks) for a catalog file or Helm values;
and ``model.config`` in a spec has kvgen read one beside the spec. A config it cannot size (an unknown
checkpoint format or layer pattern, a key it needs missing) raises CatalogError with the reason: a row is
never guessed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from kvgen.core.errors import KvgenError
from kvgen.core.quantity import GiB
from kvgen.data import catalog

# transformers' default tie_word_embeddings where a config leaves it out: True for PretrainedConfig
# and the Gemma configs, False for the configs of the other families here.
TIED_BY_DEFAULT = ("gemma",)
# torch_dtype / dtype -> quantization.yaml scheme
DTYPES = {"bfloat16": "bf16", "float16": "fp16"}


class CatalogError(KvgenError):
    """A config.json this derivation cannot turn into a row: the message says why."""


# ---------------------------------------------------------------- the config's fields


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's config: text_config (llm_config) of a multimodal model, else the config itself."""
    inner = config.get("text_config") or config.get("llm_config")
    if isinstance(inner, dict):
        return {**{k: v for k, v in config.items() if k in ("tie_word_embeddings",)}, **inner}
    return config


def head_dim(tc: dict[str, Any]) -> int:
    for key in ("head_dim", "attention_head_dim"):
        if tc.get(key):
            return int(tc[key])
    return int(tc["hidden_size"]) // int(tc["num_attention_heads"])


def is_mla(tc: dict[str, Any]) -> bool:
    return tc.get("kv_lora_rank") is not None


def layer_kinds(tc: dict[str, Any]) -> list[str]:
    """Per decoder layer: "full", "sliding" or "none" (no per-token KV cache: Mamba / linear attention)."""
    n = int(tc["num_hidden_layers"])
    pattern = tc.get("hybrid_override_pattern")
    if isinstance(pattern, str):  # Nemotron-H: '*' attention, M Mamba, - MLP, E MoE
        if len(pattern) != n:
            raise CatalogError(f"hybrid_override_pattern has {len(pattern)} layers, num_hidden_layers {n}")
        return ["full" if c == "*" else "none" for c in pattern]
    types = tc.get("layer_types")
    window = tc.get("sliding_window")
    if isinstance(types, list):
        if len(types) != n:
            raise CatalogError(f"layer_types has {len(types)} layers, num_hidden_layers {n}")
        kinds = {"full_attention": "full", "sliding_attention": "sliding", "linear_attention": "none"}
        if any(t not in kinds for t in types):
            raise CatalogError(f"unknown layer_types {sorted(set(types) - set(kinds))}")
        return [kinds[t] for t in types]
    if tc.get("full_attention_interval"):  # Qwen3-Next without layer_types
        step = int(tc["full_attention_interval"])
        return ["full" if (i + 1) % step == 0 else "none" for i in range(n)]
    if str(tc.get("model_type")) == "gemma2" and window:  # Gemma 2: even layers sliding, odd full
        return ["sliding" if i % 2 == 0 else "full" for i in range(n)]
    if tc.get("sliding_window_pattern") and window:  # Gemma 3: every Nth layer full
        step = int(tc["sliding_window_pattern"])
        return ["full" if (i + 1) % step == 0 else "sliding" for i in range(n)]
    if window and tc.get("use_sliding_window") is not False and int(window) < max_model_len(tc):
        return ["sliding"] * n  # Mistral v0.1-style: every layer windowed
    return ["full"] * n


def max_model_len(tc: dict[str, Any]) -> int:
    return int(tc["max_position_embeddings"])


def hybrid_architectures() -> set[str]:
    return set(catalog.load("hybrid-architectures.yaml")["architectures"])


def schemes() -> dict[str, Any]:
    """The checkpoint formats kvgen sizes (files/quantization.yaml), by name."""
    return dict(catalog.load("quantization.yaml")["schemes"])


def quantization(config: dict[str, Any], quant: dict[str, Any] | None, schemes: set[str]) -> str:
    """The checkpoint's scheme: its quantization_config (or ModelOpt hf_quant_config.json), else its dtype."""
    algo = None
    if quant is not None:
        algo = str(quant["quantization"]["quant_algo"])
    qc = config.get("quantization_config") or text_config(config).get("quantization_config")
    if algo is None and isinstance(qc, dict):
        method = str(qc.get("quant_method", ""))
        if method in ("fp8", "mxfp4", "awq", "gptq"):
            algo = method
        elif method == "modelopt":
            algo = str(qc.get("quant_algo", ""))
        elif method == "compressed-tensors":
            algo = _compressed_tensors(qc)
        else:
            raise CatalogError(f"quantization_config quant_method {method!r} is not mapped to a scheme")
    if algo is not None:
        scheme = _mixed(config, quant) if algo == "MIXED_PRECISION" else _algo_scheme(algo)
    else:
        dtype = config.get("torch_dtype") or config.get("dtype") or text_config(config).get("torch_dtype")
        dtype = dtype or text_config(config).get("dtype")
        scheme = DTYPES.get(str(dtype), "")
    if scheme not in schemes:
        raise CatalogError(f"checkpoint format {scheme or 'unknown'!r} is not a scheme of quantization.yaml")
    return scheme


def _compressed_tensors(qc: dict[str, Any]) -> str:
    weights = [g["weights"] for g in (qc.get("config_groups") or {}).values() if g.get("weights")]
    if not weights:
        raise CatalogError("compressed-tensors quantization_config without weight groups")
    w = weights[0]
    bits, kind = int(w["num_bits"]), w.get("type")
    if bits == 8:
        return "fp8" if kind == "float" else "int8"
    if bits == 4:
        return "nvfp4" if kind == "float" else "gptq"
    raise CatalogError(f"compressed-tensors {bits}-bit {kind} weights are not a scheme of quantization.yaml")


def mixed_schemes(quant: dict[str, Any] | None) -> dict[tuple[int, str], str]:
    """A ModelOpt MIXED_PRECISION checkpoint's scheme per (layer, part) from its quantized_layers."""
    layers = ((quant or {}).get("quantization") or {}).get("quantized_layers") or {}
    out: dict[tuple[int, str], str] = {}
    for name, layer in layers.items():
        match = _LAYER_MODULE.search(name)
        if not match or match.group(1) == "*":
            continue
        rest = match.group(2)
        kind = (
            "attn"
            if rest.startswith(("self_attn", "linear_attn", "mixer"))
            else "shared"
            if rest.startswith("mlp.shared_expert")
            else "mlp"
        )
        out[(int(match.group(1)), kind)] = _algo_scheme(str(layer["quant_algo"]))
    return out


def _mixed(config: dict[str, Any], quant: dict[str, Any] | None) -> str:
    """A MIXED_PRECISION checkpoint's row scheme: the one that holds most of its quantized parameters."""
    per_part = mixed_schemes(quant)
    if not per_part:
        raise CatalogError("MIXED_PRECISION hf_quant_config.json without quantized_layers")
    held: dict[str, int] = {}
    for part in decoder_parts(text_config(config)):
        scheme = per_part.get((part.layer, part.kind)) if part.layer is not None else None
        if scheme:
            held[scheme] = held.get(scheme, 0) + part.params
    return sorted(held.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _algo_scheme(algo: str) -> str:
    """A ModelOpt quant_algo (FP8, NVFP4, W4A16_NVFP4, ...) or quant_method as a quantization.yaml scheme."""
    low = algo.lower()
    return "nvfp4" if "nvfp4" in low else "fp8" if low.startswith("fp8") else low


def tied(config: dict[str, Any]) -> bool:
    tc = text_config(config)
    for c in (tc, config):
        if "tie_word_embeddings" in c:
            return bool(c["tie_word_embeddings"])
    return str(config.get("model_type", "")).startswith(TIED_BY_DEFAULT)


def embedding_parameters(config: dict[str, Any]) -> int:
    tc = text_config(config)
    return int(tc["vocab_size"]) * int(tc["hidden_size"]) * (1 if tied(config) else 2)


# ---------------------------------------------------------------- parameter count


def _mlp(h: int, inter: int, gated: bool = True) -> int:
    return (3 if gated else 2) * h * inter


def attention_parameters(tc: dict[str, Any]) -> int:
    """One attention layer's projections (q, k, v, o), MLA's low-rank ones included."""
    h, nh = int(tc["hidden_size"]), int(tc["num_attention_heads"])
    if is_mla(tc):
        nope, rope, vd = int(tc["qk_nope_head_dim"]), int(tc["qk_rope_head_dim"]), int(tc["v_head_dim"])
        kv_lora = int(tc["kv_lora_rank"])
        q_lora = tc.get("q_lora_rank")
        q = h * int(q_lora) + int(q_lora) * nh * (nope + rope) if q_lora else h * nh * (nope + rope)
        return q + h * (kv_lora + rope) + kv_lora * nh * (nope + vd) + nh * vd * h
    d = head_dim(tc)
    nkv = int(tc.get("num_key_value_heads") or nh)
    q = h * nh * d * (2 if tc.get("attn_output_gate") else 1)
    return q + 2 * h * nkv * d + nh * d * h


def linear_attention_parameters(tc: dict[str, Any]) -> int:
    """One Gated DeltaNet layer (Qwen3-Next / Qwen3.5): q, k, v, z, b, a projections, conv, out."""
    h = int(tc["hidden_size"])
    key = int(tc["linear_num_key_heads"]) * int(tc["linear_key_head_dim"])
    value = int(tc["linear_num_value_heads"]) * int(tc["linear_value_head_dim"])
    conv = (2 * key + value) * int(tc.get("linear_conv_kernel_dim", 4))
    return h * (2 * key + 2 * value + 2 * int(tc["linear_num_value_heads"])) + conv + value * h


def mamba_parameters(tc: dict[str, Any]) -> int:
    """One Mamba-2 mixer (Nemotron-H): in_proj (x, z, B, C, dt), conv, out_proj."""
    h = int(tc["hidden_size"])
    inner = int(tc["mamba_num_heads"]) * int(tc["mamba_head_dim"])
    bc = 2 * int(tc["n_groups"]) * int(tc["ssm_state_size"])
    return h * (2 * inner + bc + int(tc["mamba_num_heads"])) + (inner + bc) * int(tc.get("conv_kernel", 4)) + inner * h


def routed_experts(tc: dict[str, Any]) -> int:
    """The routed experts of a MoE model, 0 for a dense one. The key depends on the architecture: n_routed_experts
    (DeepSeek-V3 / Kimi K2, Nemotron-H), num_local_experts (Mixtral, gpt-oss, MiniMax-M2), num_experts (Qwen MoE,
    Qwen3-Next / Qwen3.5, Gemma 4; null on a dense Gemma 4). Shared experts are not counted."""
    return int(tc.get("n_routed_experts") or tc.get("num_local_experts") or tc.get("num_experts") or 0)


def expert_intermediate(tc: dict[str, Any]) -> int:
    """One routed expert's MLP width, the one vLLM's FusedMoE is built with: moe_intermediate_size (DeepSeek-V3 /
    Kimi K2, Qwen MoE, Qwen3-Next / Qwen3.5, Nemotron-H, Gemma 4, which also reads expert_intermediate_size), else
    intermediate_size (Mixtral, gpt-oss, MiniMax-M2 and Llama 4 size their experts by it)."""
    return int(tc.get("moe_intermediate_size") or tc.get("expert_intermediate_size") or tc["intermediate_size"])


def experts_per_token(tc: dict[str, Any]) -> int:
    """The routed experts each token goes to, 0 for a dense model: num_experts_per_tok (DeepSeek-V3 / Kimi K2, Qwen
    MoE, Qwen3-Next / Qwen3.5, Mixtral, gpt-oss, MiniMax-M2, Nemotron-H), top_k_experts (Gemma 4)."""
    if not routed_experts(tc):
        return 0
    for key in ("num_experts_per_tok", "top_k_experts", "experts_per_token"):
        if tc.get(key):
            return int(tc[key])
    raise CatalogError("a MoE config without num_experts_per_tok / top_k_experts")


def mlp_intermediate(tc: dict[str, Any]) -> int:
    """The MLP width tensor parallelism splits: a routed expert's (expert_intermediate) for a MoE model, whose dense
    layers and shared experts it leaves out; else the MLP's intermediate_size, that of the MLP layers of a hybrid
    model; 0 for a hybrid without MLP layers (a Nemotron-H pattern with no '-' or 'E')."""
    if routed_experts(tc):
        return expert_intermediate(tc)
    pattern = tc.get("hybrid_override_pattern")
    if isinstance(pattern, str) and not set(pattern) & {"-", "E"}:
        return 0
    return dense_intermediate(tc)


def moe_parts(tc: dict[str, Any], gated: bool = True) -> dict[str, int]:
    """One MoE block: routed experts ("mlp"), shared experts ("shared") and the router ("other")."""
    h = int(tc["hidden_size"])
    experts = routed_experts(tc)
    inter = expert_intermediate(tc)
    latent = tc.get("moe_latent_size")
    width = int(latent) if latent else h
    shared = 0
    size = tc.get("shared_expert_intermediate_size") or tc.get("moe_shared_expert_intermediate_size")
    if size:
        shared = _mlp(h, int(size), gated)
    elif tc.get("n_shared_experts"):
        shared = int(tc["n_shared_experts"]) * _mlp(h, inter, gated)
    if str(tc.get("model_type", "")).startswith("llama4"):
        shared += _mlp(h, int(tc["intermediate_size"]))  # Llama 4's shared expert
    routed = experts * _mlp(width, inter, gated) + (2 * h * width if latent else 0)
    return {"mlp": routed, "shared": shared, "other": h * experts}


def is_moe_layer(tc: dict[str, Any], i: int) -> bool:
    if not routed_experts(tc):
        return False
    if i < int(tc.get("first_k_dense_replace") or 0) or i in (tc.get("mlp_only_layers") or ()):
        return False
    step = int(tc.get("interleave_moe_layer_step") or tc.get("decoder_sparse_step") or 1)
    return (i + 1) % step == 0


def dense_intermediate(tc: dict[str, Any]) -> int:
    return int(tc.get("intermediate_size_mlp") or tc["intermediate_size"])


@dataclass(frozen=True)
class Part:
    """Parameters of one part of one decoder layer (layer None: a multi-token-prediction layer)."""

    layer: int | None
    # "attn" (attention, linear attention or Mamba mixer), "mlp" (the MLP or the routed experts), "shared"
    # (shared experts), "dense" (Gemma 4's MLP beside its experts), "other" (norms, routers)
    kind: str
    params: int


def _layer(i: int | None, attn: int, mlp: dict[str, int], h: int) -> list[Part]:
    parts = [Part(i, "attn", attn), *(Part(i, k, v) for k, v in mlp.items() if v)]
    return [*parts, Part(i, "other", 2 * h)]


def decoder_parts(tc: dict[str, Any]) -> list[Part]:
    """The decoder layers (and the MTP layers a checkpoint ships too), without the embeddings."""
    h = int(tc["hidden_size"])
    n = int(tc["num_hidden_layers"])
    pattern = tc.get("hybrid_override_pattern")
    parts: list[Part] = []
    if isinstance(pattern, str):  # Nemotron-H: one mixer or MLP per layer, relu2 (ungated) MLPs
        dense = {"mlp": _mlp(h, int(tc["intermediate_size"]), gated=False)}

        def block(i: int | None, c: str) -> list[Part]:
            if c == "M":
                return [Part(i, "attn", mamba_parameters(tc)), Part(i, "other", h)]
            if c == "*":
                return [Part(i, "attn", attention_parameters(tc)), Part(i, "other", h)]
            mlp = dense if c == "-" else moe_parts(tc, gated=False)
            return [*(Part(i, k, v) for k, v in mlp.items() if v), Part(i, "other", h)]

        for i, c in enumerate(pattern):
            parts += block(i, c)
        mtp = tc.get("mtp_hybrid_override_pattern")
        if isinstance(mtp, str) and tc.get("num_nextn_predict_layers"):
            for _ in range(int(tc["num_nextn_predict_layers"])):
                parts += [p for c in mtp for p in block(None, c)] + [Part(None, "other", 2 * h * h)]
        return parts
    kinds = layer_kinds(tc)
    for i in range(n):
        mixer = linear_attention_parameters(tc) if kinds[i] == "none" else attention_parameters(tc)
        if is_moe_layer(tc, i):
            mlp = moe_parts(tc)
            if tc.get("enable_moe_block"):  # Gemma 4 MoE: a dense MLP (its `mlp`) beside the experts
                mlp["dense"] = _mlp(h, int(tc["intermediate_size"]))
        else:
            mlp = {"mlp": _mlp(h, dense_intermediate(tc))}
        parts += _layer(i, mixer, mlp, h)
    mtp_layers = int(tc.get("num_nextn_predict_layers") or tc.get("mtp_num_hidden_layers") or 0)
    for _ in range(mtp_layers):  # DeepSeek / Qwen3.5 MTP: a decoder layer (MoE where the model has experts)
        mlp = moe_parts(tc) if is_moe_layer(tc, n) else {"mlp": _mlp(h, dense_intermediate(tc))}
        parts += _layer(None, attention_parameters(tc), mlp, h) + [Part(None, "other", 2 * h * h + 2 * h)]
    return parts


def decoder_parameters(tc: dict[str, Any]) -> int:
    return sum(p.params for p in decoder_parts(tc))


def vision_parameters(config: dict[str, Any]) -> int:
    """A ViT encoder's blocks (attention 4 h^2 + MLP 2 h x intermediate per block) and its projector."""
    vc = config.get("vision_config")
    if not isinstance(vc, dict):
        return 0
    h = int(vc.get("hidden_size") or vc.get("embed_dim") or vc.get("width") or 0)
    depth = int(vc.get("depth") or vc.get("num_hidden_layers") or vc.get("num_layers") or 0)
    inter = int(vc.get("intermediate_size") or 4 * h)
    out = int(vc.get("out_hidden_size") or vc.get("projection_dim") or text_config(config)["hidden_size"])
    return depth * (4 * h * h + 2 * h * inter) + h * out * 4


def parameters(config: dict[str, Any]) -> tuple[int, int]:
    """(all parameters, those kept 16-bit in a quantized checkpoint: embeddings, lm_head, vision encoder)."""
    tc = text_config(config)
    embeddings = embedding_parameters(config)
    vision = vision_parameters(config)
    return embeddings + decoder_parameters(tc) + vision + int(tc["hidden_size"]), embeddings + vision


def excluded_modules(config: dict[str, Any], quant: dict[str, Any] | None) -> list[str]:
    """The modules a quantized checkpoint keeps unquantized (ModelOpt exclude_modules, quantization_config
    modules_to_not_convert / ignore)."""
    if quant is not None:
        return [str(m) for m in quant["quantization"].get("exclude_modules") or ()]
    qc = config.get("quantization_config") or text_config(config).get("quantization_config") or {}
    for key in ("modules_to_not_convert", "ignore", "ignored_layers", "exclude_modules"):
        if qc.get(key):
            return [str(m) for m in qc[key]]
    return []


_LAYER_MODULE = re.compile(r"(?:^|\.)layers\.(\d+|\*)\.(.+)$")


def is_excluded(part: Part, excluded: list[str], experts_beside_mlp: bool = False) -> bool:
    """Whether the checkpoint keeps this part unquantized: norms and routers always; else an excluded module of
    its layer (or of every layer: `layers.*.`, `*.`) that is its attention / Mamba mixer, its shared expert or its
    whole MLP; an MTP layer when `mtp` modules are excluded."""
    if part.kind == "other":
        return True
    for name in excluded:
        if part.layer is None:
            if name.startswith("mtp"):
                return True
            continue
        rest = name[2:] if name.startswith("*.") else None
        match = _LAYER_MODULE.search(name)
        if match and match.group(1) in ("*", str(part.layer)):
            rest = match.group(2)
        if rest is None:
            continue
        if part.kind == "attn" and rest.startswith(("self_attn", "linear_attn", "mixer")):
            return True
        if part.kind == "shared" and rest.startswith("mlp.shared_expert") and not rest.endswith("_gate"):
            return True
        if part.kind in ("mlp", "shared", "dense") and rest.rstrip("*") in ("mlp", "block_sparse_moe"):
            # Gemma 4 keeps its experts beside `mlp` (its dense MLP), the others under it
            return part.kind == "dense" or not experts_beside_mlp

    return False


def _bytes(params: int, scheme: dict[str, Any]) -> int:
    group = scheme["groupSize"] or 1
    return math.ceil(params * (int(scheme["weightBits"]) * group + int(scheme["scaleBits"])) / (8 * group))


def weights_bytes(
    config: dict[str, Any],
    scheme: dict[str, Any],
    excluded: list[str] | None = None,
    per_part: dict[tuple[int, str], dict[str, Any]] | None = None,
) -> int:
    """The checkpoint's bytes: quantized parts at the scheme's bits (a MIXED_PRECISION checkpoint: each part at
    its own, per_part), the rest (embeddings, lm_head, vision encoder, norms, routers and the modules the
    checkpoint excludes from quantization) at 16 bits."""
    tc = text_config(config)
    sixteen = embedding_parameters(config) + vision_parameters(config) + int(tc["hidden_size"])
    quantized: dict[int, int] = {}  # id(scheme) -> parameters
    by_id = {id(scheme): scheme}
    for part in decoder_parts(tc):
        if not scheme["sixteenBit"] and is_excluded(part, excluded or [], bool(tc.get("enable_moe_block"))):
            sixteen += part.params
            continue
        own = (per_part or {}).get((part.layer, part.kind)) if part.layer is not None else None
        chosen = own or scheme
        by_id[id(chosen)] = chosen
        quantized[id(chosen)] = quantized.get(id(chosen), 0) + part.params
    return sixteen * 2 + sum(_bytes(n, by_id[k]) for k, n in quantized.items())


def derive(
    config: dict[str, Any],
    quant: dict[str, Any] | None = None,
    weights: str | None = None,
    weights_source: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """A catalog row from a Hugging Face config.json (and a ModelOpt hf_quant_config.json), and the notes of how
    its figures were found. ``weights``: the published checkpoint size where it is known (its source in
    ``weights_source``), else derived from the parameter count and the checkpoint's scheme. Raises CatalogError
    for a config it cannot size (an unknown checkpoint format, a layer pattern it does not know, a missing key)."""
    try:
        return _derive(config, quant, weights, weights_source)
    except CatalogError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ZeroDivisionError) as exc:
        missing = f"the config has no {exc.args[0]!r}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise CatalogError(f"cannot size this architecture: {missing}") from None


def _derive(
    config: dict[str, Any], quant: dict[str, Any] | None, weights: str | None, weights_source: str | None
) -> tuple[dict[str, Any], list[str]]:
    hybrids, known = hybrid_architectures(), schemes()
    tc = text_config(config)
    arch = str(config["architectures"][0])
    kinds = layer_kinds(tc)
    attention = [k for k in kinds if k != "none"]
    sliding = kinds.count("sliding")
    mla = is_mla(tc)
    scheme = quantization(config, quant, set(known))
    notes = []
    out: dict[str, Any] = {
        "architecture": arch,
        "layers": int(tc["num_hidden_layers"]),
        "attentionLayers": len(attention),
        "attentionHeads": int(tc["num_attention_heads"]),
        "kvHeads": 1 if mla else int(tc.get("num_key_value_heads") or tc["num_attention_heads"]),
        "headDim": int(tc["kv_lora_rank"]) + int(tc["qk_rope_head_dim"]) if mla else head_dim(tc),
        "experts": routed_experts(tc),
        "expertsPerToken": experts_per_token(tc),
        "hiddenSize": int(tc["hidden_size"]),
        "intermediateSize": mlp_intermediate(tc),
        "vocabSize": int(tc["vocab_size"]),
        "mla": mla,
        "hybrid": arch in hybrids,
        "multimodal": isinstance(config.get("vision_config"), dict) or isinstance(config.get("audio_config"), dict),
        "slidingLayers": sliding,
        "slidingWindow": int(tc["sliding_window"]) if sliding else None,
    }
    if tc.get("global_head_dim") and sliding:  # Gemma 4: the full-attention layers' own geometry
        full_kv = int(tc.get("num_global_key_value_heads") or out["kvHeads"])
        if full_kv != out["kvHeads"]:
            out["fullKvHeads"] = full_kv
        if int(tc["global_head_dim"]) != out["headDim"]:
            out["fullHeadDim"] = int(tc["global_head_dim"])
    if weights:
        out["weights"] = str(weights)
        notes.append(f"weights: {weights_source}")
    else:
        per_part = {k: known[v] for k, v in mixed_schemes(quant).items() if v in known}
        size = weights_bytes(config, known[scheme], excluded_modules(config, quant), per_part)
        out["weights"] = f"{max(1, math.ceil(size / GiB))}Gi"
        total, _ = parameters(config)
        kept = (
            ""
            if known[scheme]["sixteenBit"]
            else ", embeddings, lm_head, norms, routers"
            + (", vision encoder" if vision_parameters(config) else "")
            + " and the modules it excludes from quantization kept 16-bit"
        )
        notes.append(
            f"weights derived: {total / 1e9:.2f}B parameters from the config at {scheme}{kept}"
            f" = {size / GiB:.2f}GiB, rounded up"
        )
    out["quantization"] = scheme
    out["embeddingParameters"] = embedding_parameters(config)
    out["maxModelLen"] = max_model_len(tc)
    if quant and quant["quantization"].get("quant_algo") == "MIXED_PRECISION":
        notes.append(
            f"ModelOpt MIXED_PRECISION: {scheme} holds most of its quantized parameters (the row's scheme);"
            " each layer sized at its own scheme"
        )
    if tc.get("attention_chunk_size"):
        notes.append(
            f"chunked local attention ({tc['attention_chunk_size']} tokens) on some layers is costed as full attention"
        )
    return out, notes
