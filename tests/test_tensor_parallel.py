"""vLLM 0.33's tensor-parallel checks (files/tensor-parallel.yaml), refused by kvgen and the chart alike at
parallelism.tensor with vLLM's words (issue 32 finding 9: tensor 3 for Llama-3.1-70B validated, though vLLM
refuses it). tests/test_contract_tensor_parallel.py holds the rules to vLLM itself."""

from __future__ import annotations

import helm
import pytest
from conftest import compile_spec, spec

from kvgen.core.errors import SpecError
from kvgen.data import catalog
from kvgen.plan import tensor_parallel
from kvgen.spec.models import ModelSpec

pytestmark = pytest.mark.heavy


def refused(values: dict) -> tuple[str, str]:
    """The one problem both faces report, as (message, hint)."""
    with pytest.raises(SpecError) as exc:
        compile_spec(values)
    (problem,) = exc.value.problems
    assert problem.path == ("parallelism", "tensor")
    assert helm.problems(values) == {("parallelism.tensor", problem.message, problem.hint)}
    return problem.message, problem.hint or ""


def test_tensor_3_for_llama_70b_is_refused_in_vllms_words():
    message, hint = refused(
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": "1Ti"},
            parallelism={"tensor": 3},
        )
    )
    assert message == (
        "vLLM 0.33.0 refuses tensor-parallel size 3 for meta-llama/Llama-3.1-70B-Instruct: "
        "Total number of attention heads (64) must be divisible by tensor parallel size (3). "
        "8 is not divisible by 3 28672 is not divisible by 3"
    )
    assert "(1, 2, 4, 8, 16, 32, 64)" in hint


def test_kv_heads_replicated_below_the_size_must_divide_it():
    """Qwen2.5-7B: 28 heads divide by 7, but its 4 KV heads are replicated over 7 ranks, which vLLM's
    QKVParallelLinear refuses (divide(7, 4)); 14 ranks likewise; 4 ranks split them."""
    message, hint = refused(
        spec(
            model={"id": "Qwen/Qwen2.5-7B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": "1Ti"},
            parallelism={"tensor": 7},
        )
    )
    assert "7 is not divisible by 4" in message and "attention heads" not in message
    assert hint.startswith("use a tensor-parallel size vLLM accepts for this model (1, 2, 4")
    model, _ = catalog.resolve_model(ModelSpec(id="Qwen/Qwen2.5-7B-Instruct"))
    assert "14 is not divisible by 4" in tensor_parallel.refusals(model, 14)


def test_a_moe_block_refuses_more_ranks_than_experts_and_expert_parallel_keeps_experts_whole():
    inline = {
        "id": "example/tiny-moe",
        "architecture": "Qwen3MoeForCausalLM",
        "layers": 4,
        "attentionHeads": 16,
        "kvHeads": 8,
        "headDim": 64,
        "experts": 4,
        "expertsPerToken": 2,
        "intermediateSize": 96,
        "weights": "2Gi",
    }
    values = spec(model=inline, instance={"type": "p5.48xlarge", "ephemeralStorage": "1Ti"}, parallelism={"tensor": 8})
    message, _ = refused(values)
    assert message.endswith(": Tensor parallel size 8 is greater than the number of experts 4.")
    # the experts' MLP splits over tensor x data ranks (vLLM's FusedMoE flattens them) unless expert parallel
    model, _ = catalog.resolve_model(ModelSpec(id="Qwen/Qwen3-30B-A3B"))
    assert tensor_parallel.refusals(model, 2, data=5) == ["768 is not divisible by 10"]
    assert tensor_parallel.refusals(model, 2, data=5, ep=True) == []
    values = spec(
        model={"id": "Qwen/Qwen3-30B-A3B"},
        instance={"type": "p5.48xlarge", "ephemeralStorage": "1Ti"},
        parallelism={"tensor": 2, "data": 4},
        vllm={"extraArgs": ["--enable-expert-parallel"]},
    )
    compile_spec(values)  # 768 / 8 divides anyway; the flag is read
    assert tensor_parallel.expert_parallel(compile_spec(values).spec)
    off = spec(**{**values, "vllm": {"extraArgs": ["-ep", "--no-enable-expert-parallel"]}})
    assert not tensor_parallel.expert_parallel(compile_spec(off).spec)


def test_a_row_without_the_geometry_skips_the_checks_it_needs():
    inline = {
        "id": "example/no-geometry",
        "architecture": "LlamaForCausalLM",
        "layers": 4,
        "kvHeads": 8,
        "headDim": 64,
        "weights": "2Gi",
    }
    # 3 does not divide 8 KV heads: that check has what it needs; the others are skipped, not guessed
    message, _ = refused(
        spec(model=inline, instance={"type": "p5.48xlarge", "ephemeralStorage": "1Ti"}, parallelism={"tensor": 3})
    )
    assert message.endswith(": 8 is not divisible by 3")
    compile_spec(
        spec(model=inline, instance={"type": "p5.48xlarge", "ephemeralStorage": "1Ti"}, parallelism={"tensor": 4})
    )
