"""The context length: what one sequence costs in the GPU KV cache, and the longest that fits.

vLLM 0.33 refuses to start when its KV cache cannot hold one sequence of ``max_model_len``
(``vllm/v1/core/kv_cache_planning.py``: "To serve at least one request with the model's max seq
len..."). kvgen therefore plans the length against the same budget ``kvgen explain`` shows as
"GPU after weights" (:func:`kvgen.plan.sizing.gpu_kv_budget`):

- no ``model.maxModelLen`` in the spec: when one sequence of the model's own limit fits, nothing
  is passed (vLLM serves that limit); otherwise ``--max-model-len`` is the longest length that
  fits, a multiple of the block size, with a warning naming the model's limit;
- ``model.maxModelLen`` set: it must fit, else the render fails with the longest length that does.

What one sequence of ``L`` tokens costs on one GPU, as vLLM sizes it
(``vllm/v1/kv_cache_interface.py``, constants in ``charts/kvgen/files/sizing.yaml`` ``context``):

- a full-attention layer keeps every token: ``L + reserve`` tokens;
- a sliding-window layer keeps ``min(window - 1 + tokens in flight, L) + reserve`` tokens
  (``SlidingWindowSpec.max_admission_blocks_per_request``);
- layers of each kind are padded to vLLM's KV-cache group size when both kinds exist
  (``_get_kv_cache_groups_uniform_page_size``), and a pipeline stage holds its share of them;
- a hybrid model adds a fixed recurrent state per sequence (``hybridStateGiB``).

The Helm chart computes the same in ``templates/plan/_sizing.tpl`` (``kvgen.contextLength``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kvgen.core.errors import Problem
from kvgen.core.quantity import GiB
from kvgen.data import catalog
from kvgen.data.catalog import InstanceInfo, ModelInfo
from kvgen.plan import sizing
from kvgen.spec.models import Spec

_C = catalog.load("sizing.yaml")["context"]
BLOCK_SIZE = _C["blockSize"]
RESERVE_TOKENS = _C["reserveTokens"]
HYBRID_STATE = _C["hybridStateGiB"] * GiB
FIT_CONTEXT = "context-does-not-fit"  # the code of a context length the KV cache cannot hold (explain marks it)


def batched_tokens(spec: Spec, instance: InstanceInfo) -> int:
    """vLLM's max_num_batched_tokens: --max-num-batched-tokens from vllm.extraArgs, else the
    OpenAI server's default for this GPU (EngineArgs.get_batch_defaults)."""
    return sizing.batch_defaults(spec, instance)[0]


@dataclass(frozen=True)
class Cost:
    """What one sequence costs on one GPU: ``full`` and ``sliding`` bytes per token (all layers
    of each kind this GPU holds), the tokens a sliding layer keeps at most, the fixed state."""

    full: int
    sliding: int
    sliding_cap: int | None  # window - 1 + tokens in flight; None: no sliding layers
    state: int

    def bytes_for(self, length: int) -> int:
        kept = min(self.sliding_cap, length) if self.sliding_cap is not None else length
        return self.full * (length + RESERVE_TOKENS) + self.sliding * (kept + RESERVE_TOKENS) + self.state

    def longest(self, budget: int) -> int | None:
        """The longest length (any integer, not rounded) whose sequence fits ``budget``; None
        when there is no per-token cost (no limit from the cache); below 0 when nothing fits."""
        left = budget - self.state
        per_token = self.full + self.sliding
        if per_token == 0:
            return None
        short = left // per_token - RESERVE_TOKENS  # while the window holds the whole sequence
        if self.sliding_cap is None or short <= self.sliding_cap:
            return short
        if self.full == 0:
            return None  # only sliding layers: the cost stops growing at the window
        return (left - self.sliding * (self.sliding_cap + RESERVE_TOKENS)) // self.full - RESERVE_TOKENS


def cost(spec: Spec, model: ModelInfo, instance: InstanceInfo) -> Cost:
    p = spec.parallelism
    full, sliding = model.full_layers, model.sliding_layers
    if full and sliding:  # vLLM groups layers in equal-size groups, padding the last one of each kind
        group = min(full, sliding)
        if 2 * max(full, sliding) < 3 * group:
            group = max(full, sliding)
        full, sliding = math.ceil(full / group) * group, math.ceil(sliding / group) * group
    per_stage = lambda n: math.ceil(n / p.pipeline)  # noqa: E731
    in_flight = max(2, p.pipeline + 1) * batched_tokens(spec, instance)
    return Cost(
        full=per_stage(full) * model.layer_bytes_per_token(True, model.kv_dtype_bytes, p.tensor),
        sliding=per_stage(sliding) * model.layer_bytes_per_token(False, model.kv_dtype_bytes, p.tensor),
        # (the catalog gives every model with sliding layers a window)
        sliding_cap=model.sliding_window - 1 + in_flight if sliding and model.sliding_window is not None else None,
        state=HYBRID_STATE if model.hybrid else 0,
    )


def budget(spec: Spec, model: ModelInfo, instance: InstanceInfo) -> int:
    """KV-cache bytes of one GPU (or of vLLM's CPU backend: VLLM_CPU_KVCACHE_SPACE, exact)."""
    if not instance.gpus:
        return sizing.CPU_BACKEND_KV_SPACE_GIB * GiB
    return sizing.gpu_kv_budget(spec, model, instance)


@dataclass
class ContextLength:
    model_max: int | None  # the model's own limit (catalog maxModelLen)
    requested: int | None  # the spec's model.maxModelLen
    fits: int | None  # the longest length that fits, a block multiple, capped at model_max; None: no limit known
    served: int | None  # what vLLM serves
    flag: int | None  # the --max-model-len kvgen passes; None: none
    budget: int  # KV-cache bytes per GPU
    cost: Cost
    warnings: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def sequence_bytes(self) -> int | None:
        return self.cost.bytes_for(self.served) if self.served else None


def _gib(n: int) -> str:
    return f"{n / GiB:.2f} GiB"


def context_length(spec: Spec, model: ModelInfo, instance: InstanceInfo) -> ContextLength:
    c = cost(spec, model, instance)
    room = budget(spec, model, instance)
    if not instance.gpu_memory_known:  # GPUs of unknown memory: vLLM finds the length; the spec's is passed as written
        requested = spec.model.max_model_len
        return ContextLength(model.max_model_len, requested, None, requested or model.max_model_len, requested, room, c)
    longest = c.longest(room)
    model_max = model.max_model_len
    fits = None if longest is None else max(0, longest) // BLOCK_SIZE * BLOCK_SIZE
    if fits is not None and model_max:
        fits = min(fits, model_max)
    elif fits is None:
        fits = model_max
    requested = spec.model.max_model_len
    out = ContextLength(model_max, requested, fits, requested or model_max, requested, room, c)
    where = instance.type or "the instance"
    if instance.gpus:
        what, room_text = f"the GPU KV cache of {where}", f"{_gib(room)} per GPU is there (after the weights)"
        more = "raise parallelism.tensor or vllm.gpuMemoryUtilization, or pick an instance with larger GPUs"
    else:
        what, room_text = "the KV cache of vLLM's CPU backend", f"VLLM_CPU_KVCACHE_SPACE gives {_gib(room)}"
        more = "use a smaller model"
    if fits is not None and fits < BLOCK_SIZE:
        out.problems.append(
            Problem(
                ("model", "maxModelLen") if requested else ("parallelism", "tensor"),
                f"not even {BLOCK_SIZE} tokens of {model.id} fit {what} ({room_text}); vLLM would refuse to start",
                more,
                code=FIT_CONTEXT,
            )
        )
        return out
    if requested:
        if fits is not None and requested > fits and not (model_max and requested > model_max):
            out.problems.append(
                Problem(
                    ("model", "maxModelLen"),
                    f"{requested} tokens do not fit {what}: one sequence of {model.id} needs "
                    f"{_gib(c.bytes_for(requested))} and {room_text}; vLLM would refuse to start",
                    f"set model.maxModelLen to at most {fits}; or {more}",
                    code=FIT_CONTEXT,
                )
            )
        return out
    if model_max is None:
        out.served = None
        out.warnings.append(
            f"{model.id} is not in the catalog: kvgen does not know its context length and cannot check that one "
            f"sequence fits the KV cache (at most {fits} tokens would); set model.maxModelLen"
            if fits
            else f"{model.id} is not in the catalog: kvgen does not know its context length; set model.maxModelLen"
        )
        return out
    if fits is not None and fits < model_max:
        out.flag = out.served = fits
        out.warnings.append(
            f"{model.id} supports {model_max} tokens, but one sequence of that needs {_gib(c.bytes_for(model_max))} of "
            f"{what} and {room_text}: kvgen passes --max-model-len={fits}, the longest that fits "
            f"(set model.maxModelLen to choose a length{'; for the full one, ' + more if instance.gpus else ''})"
        )
    return out
