"""What the weights and the KV cache cost in bytes: the checkpoint's quantization and vLLM's dtype flags.

The numbers are data, in ``charts/kvgen/files/quantization.yaml`` (the Helm chart's
``templates/plan/_quantization.tpl`` reads the same file and computes the same):

- a catalog row (or an inline model) says the checkpoint's weight format (``quantization``: bf16,
  fp8, awq, ...); ``weights`` is always the checkpoint's size, what is downloaded and read;
- ``--quantization`` in ``vllm.extraArgs`` on a 16-bit checkpoint quantizes it online (vLLM 0.33:
  linear and MoE-expert layers only; the embeddings and the lm_head, ``embeddingParameters``, stay
  in the model's dtype): the weights on the GPU shrink, the download does not. On a pre-quantized
  checkpoint it names the checkpoint's method (the weights keep their size) or vLLM refuses it;
- ``--dtype float32`` doubles a 16-bit checkpoint's weights on the GPU and the ``auto`` KV cache;
- ``--kv-cache-dtype`` sets the bytes of a cached K/V element (auto: the model's dtype);
- ``--load-format dummy`` downloads no weights (vLLM initialises them at random).

Each value kvgen cannot size (or vLLM 0.33 would refuse) is a problem at ``vllm.extraArgs[i]``. Online
quantization of a model without ``embeddingParameters`` is sized unquantized (the checkpoint's size, an upper
bound: what kvgen did before it read ``--quantization``), with a warning (:func:`warnings`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kvgen.core.errors import Problem, quoted
from kvgen.data import catalog
from kvgen.data.catalog import ModelInfo
from kvgen.spec.models import Spec

EXTRA_ARGS = ("vllm", "extraArgs")


def table() -> dict[str, Any]:
    return catalog.load("quantization.yaml")


def arg_at(spec: Spec, *names: str) -> tuple[int, str] | None:
    """(index, value) of the last vllm.extraArgs token naming one of ``names`` (--name=value or
    --name value, underscores read as dashes); None when absent. The chart's kvgen.extraArgAt."""
    args = list(spec.vllm.extra_args)
    found = None
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name.replace("_", "-") in names:
            found = (i, value if eq else (args[i + 1] if i + 1 < len(args) else ""))
        elif not arg.startswith("--") and arg[:2] in names and len(arg) > 2:
            found = (i, arg[2:])  # argparse's short option with its value attached: -qfp8
    return found


def scheme_bytes(scheme: dict[str, Any], parameters: int) -> int:
    """Bytes of ``parameters`` stored in ``scheme``: weight bits plus a scale per group, rounded up."""
    group = int(scheme["groupSize"] or 1)
    bits = int(scheme["weightBits"]) * group + (int(scheme["scaleBits"]) if scheme["groupSize"] else 0)
    return -(-parameters * bits // (8 * group))


@dataclasses.dataclass(frozen=True)
class Dtypes:
    """The dtype assumptions of a plan (kvgen explain shows them)."""

    checkpoint: str  # the checkpoint's scheme
    gpu_scheme: str  # the scheme the quantized layers have on the GPU
    online: str | None  # the --quantization value that quantizes online, if any (and kvgen sizes it)
    unsized_online: str | None  # the --quantization value that quantizes online, sized at the checkpoint's size
    bits_per_parameter: float  # of the quantized layers on the GPU, scales included
    dtype_bytes: int  # --dtype: the model's (activation, unquantized weight) dtype
    kv_cache_dtype: str
    kv_bytes: int


def dtypes(spec: Spec, model: ModelInfo) -> Dtypes:
    q = table()
    dtype = arg_at(spec, "--dtype")
    dtype_bytes = int(q["dtypes"].get(dtype[1] if dtype else "auto") or 2)
    quant = arg_at(spec, "--quantization", "-q")
    online = quant[1] if quant and quant[1] in q["online"] and q["schemes"][model.quantization]["sixteenBit"] else None
    unsized = online if online and model.embedding_parameters is None else None
    online = None if unsized else online
    gpu_scheme = q["online"][online] if online else model.quantization
    s = q["schemes"][gpu_scheme]
    if s["sixteenBit"]:
        bits = 8.0 * dtype_bytes
    else:
        bits = int(s["weightBits"]) + (int(s["scaleBits"]) / int(s["groupSize"]) if s["groupSize"] else 0)
    kv = arg_at(spec, "--kv-cache-dtype")
    kv_name = kv[1] if kv else "auto"
    kv_bytes = q["kvCacheDtypes"].get(kv_name)
    return Dtypes(
        model.quantization, gpu_scheme, online, unsized, bits, dtype_bytes, kv_name, int(kv_bytes or dtype_bytes)
    )


def warnings(spec: Spec, model: ModelInfo) -> list[str]:
    """The warning of online quantization kvgen sizes unquantized (the model has no ``embeddingParameters``).
    The chart's kvgen.warnings says the same."""
    d = dtypes(spec, model)
    quant = arg_at(spec, "--quantization", "-q")
    if d.unsized_online is None or quant is None:
        return []
    return [
        f"{'.'.join(EXTRA_ARGS)}[{quant[0]}]: --quantization {d.unsized_online} quantizes {model.id} online; kvgen "
        "sizes its GPU weights unquantized, as without the flag (an upper bound), since it does not know how many of "
        "its parameters are embeddings and lm_head, which vLLM does not quantize: set model.embeddingParameters "
        f"(vocab_size x hidden_size, x 2 unless tie_word_embeddings) for the {table()['online'][d.unsized_online]} size"
    ]


def apply(spec: Spec, model: ModelInfo) -> tuple[ModelInfo, list[Problem]]:
    """The model with its GPU weights, downloaded bytes and KV dtype bytes as the spec's vLLM
    flags make them, and the problems of flags kvgen cannot size."""
    q = table()
    problems: list[Problem] = []
    scheme = q["schemes"].get(model.quantization)
    if scheme is None:  # reported where the model was resolved
        return model, problems
    quant = arg_at(spec, "--quantization", "-q")
    if quant is not None:
        index, value = quant
        where = (*EXTRA_ARGS, index)
        sizable = ", ".join(sorted(set(q["online"]) | set(q["checkpoint"])))
        if value not in q["vllmQuantizationMethods"]:
            problems.append(
                Problem(
                    where,
                    f"vLLM 0.33 has no quantization method {quoted(value)}",
                    f"use one kvgen can size: {sizable}; or remove it (vLLM reads a pre-quantized checkpoint's own "
                    "quantization_config)",
                )
            )
        elif scheme["sixteenBit"] and value in q["online"]:
            pass  # sized below; without embeddingParameters unquantized, with a warning (warnings)
        elif scheme["sixteenBit"]:
            problems.append(
                Problem(
                    where,
                    f"--quantization {value} reads a pre-quantized checkpoint ({', '.join(q['checkpoint'][value])})"
                    if value in q["checkpoint"]
                    else f"kvgen cannot size --quantization {value} (vLLM 0.33 accepts it; files/quantization.yaml "
                    "has no bytes for it)",
                    f"{model.id} is a {model.quantization} checkpoint: quantize it online with "
                    f"{', '.join(sorted(q['online']))}, or serve a checkpoint quantized with that method (model.id and "
                    "model.quantization)",
                )
            )
        elif model.quantization not in q["checkpoint"].get(value, []):
            problems.append(
                Problem(
                    where,
                    f"{model.id} is a {model.quantization} checkpoint; vLLM refuses --quantization {value} on it (the "
                    "checkpoint's quantization_config names its method)",
                    "remove --quantization (vLLM reads the checkpoint's method)",
                )
            )
    kv = arg_at(spec, "--kv-cache-dtype")
    if kv is not None and kv[1] not in q["kvCacheDtypes"]:
        known = ", ".join(sorted(q["kvCacheDtypes"]))
        problems.append(
            Problem(
                (*EXTRA_ARGS, kv[0]),
                f"kvgen cannot size --kv-cache-dtype {kv[1]} (it packs scales into the KV page)"
                if kv[1] in q["vllmKvCacheDtypes"]
                else f"vLLM 0.33 has no KV-cache dtype {quoted(kv[1])}",
                f"use one of {known}",
            )
        )
    if problems:
        return model, problems
    d = dtypes(spec, model)
    gpu = model.weights_bytes
    if scheme["sixteenBit"]:
        parameters = model.weights_bytes // 2
        if d.online and model.embedding_parameters is not None:
            embeddings = min(parameters, model.embedding_parameters)
            gpu = embeddings * d.dtype_bytes + scheme_bytes(q["schemes"][d.gpu_scheme], parameters - embeddings)
        else:
            gpu = parameters * d.dtype_bytes
    load_format = arg_at(spec, "--load-format")
    downloaded = 0 if load_format is not None and load_format[1] == "dummy" else None
    return dataclasses.replace(model, gpu_weights=gpu, downloaded_weights=downloaded, kv_dtype_bytes=d.kv_bytes), []


__all__ = ["Dtypes", "apply", "arg_at", "dtypes", "scheme_bytes", "table", "warnings"]
