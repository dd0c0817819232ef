"""vLLM 0.33's checks on the tensor-parallel size (``files/tensor-parallel.yaml``): a size that one of them
refuses stops vLLM before it serves, so kvgen refuses it first, at ``parallelism.tensor``, with vLLM's own
words. The chart's counterpart is ``kvgen.checkTensorParallel`` (templates/plan/_tensorparallel.tpl).

Each check reads one piece of the model's geometry (files/models.yaml); a model row of your own without that
piece skips the check rather than guess.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Problem
from kvgen.data import catalog
from kvgen.data.catalog import ModelInfo
from kvgen.spec.models import Spec

PATH = ("parallelism", "tensor")
# vllm.extraArgs flags that turn expert parallelism on or off (the last one wins, as in argparse)
EP_ON = ("--enable-expert-parallel", "-ep")
EP_OFF = ("--disable-expert-parallel", "--no-enable-expert-parallel")
LARGEST_HINTED = 64  # the sizes a hint lists go up to this


def table() -> dict[str, Any]:
    return catalog.load("tensor-parallel.yaml")


def expert_parallel(spec: Spec) -> bool:
    """Whether vllm.extraArgs turns on vLLM's expert parallelism (each rank then holds whole experts)."""
    on = False
    for arg in spec.vllm.extra_args:
        name = arg.partition("=")[0].replace("_", "-")
        if name in EP_ON:
            on = True
        elif name in EP_OFF:
            on = False
    return on


def _padded(n: int, to: int) -> int:
    return -(-n // to) * to


def refusals(model: ModelInfo, tp: int, data: int = 1, ep: bool = False) -> list[str]:
    """vLLM's messages for every check ``tp`` fails (in the order vLLM meets them); none when it passes."""
    checks = table()["checks"]
    out: list[str] = []

    def divides(numerator: int, denominator: int, check: str) -> None:
        if numerator % denominator:
            out.append(checks[check]["message"].format(numerator=numerator, denominator=denominator))

    if model.attention_heads and model.attention_heads % tp:
        out.append(checks["attentionHeads"]["message"].format(heads=model.attention_heads, tp=tp))
    if (
        model.experts
        and tp > model.experts
        and model.architecture in checks["expertsAboveTensorParallel"]["architectures"]
    ):
        out.append(checks["expertsAboveTensorParallel"]["message"].format(tp=tp, experts=model.experts))
    if not model.mla:
        kv = model.kv_heads  # split over the ranks at or above tp, replicated below it
        if kv >= tp:
            divides(kv, tp, "kvHeads")
        else:
            divides(tp, kv, "kvHeads")
    if model.vocab_size:
        divides(_padded(model.vocab_size, checks["vocab"]["padding"]), tp, "vocab")
    if model.intermediate_size:
        if not model.experts:
            divides(model.intermediate_size, tp, "intermediate")
        elif not ep:  # a MoE layer's experts split over tensor x data ranks
            divides(model.intermediate_size, tp * data, "intermediate")
    return out


def sizes_that_pass(model: ModelInfo, data: int = 1, ep: bool = False) -> list[int]:
    return [t for t in range(1, LARGEST_HINTED + 1) if not refusals(model, t, data, ep)]


def check(spec: Spec, model: ModelInfo) -> list[Problem]:
    p = spec.parallelism
    if p.tensor == 1:
        return []
    ep = expert_parallel(spec)
    found = refusals(model, p.tensor, p.data, ep)
    if not found:
        return []
    ok = ", ".join(str(t) for t in sizes_that_pass(model, p.data, ep))
    version = table()["source"]["version"]
    return [
        Problem(
            PATH,
            f"vLLM {version} refuses tensor-parallel size {p.tensor} for {model.id}: " + " ".join(found),
            f"use a tensor-parallel size vLLM accepts for this model ({ok}), and pipeline parallelism for the rest",
        )
    ]
