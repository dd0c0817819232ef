"""Context-length planning: vLLM must never refuse to start for lack of KV room.

vLLM 0.33 refuses to start when its KV cache cannot hold one sequence of max_model_len
(kv_cache_planning.py). kvgen plans the length against the GPU KV budget `kvgen explain` shows
("GPU after weights"); each case below is computed by hand from the catalogs and
charts/kvgen/files/sizing.yaml, and the chart must give the same command line.

The budget of one GPU (sizing.gpu_kv_budget), what vLLM 0.33's profiling leaves (sizing.yaml gpu.vllmProfile):
    usable  = GPU bytes x gpuMemoryUtilization (parts per million), rounded down
    left    = usable - non_kv (below: the weights of the busiest rank, the larger of one layer's activations
              over max_num_batched_tokens and the sampler's logits, the penalties' counts, 0.15 GiB, CUDA graphs)
    budget  = left x 90%
A sequence of L tokens costs, per GPU:
    full-attention bytes/token x (L + 256) + sliding bytes/token x (min(window - 1 + in flight, L) + 256)
    (+ 1 GiB of recurrent state for a hybrid model)
and the planned length is the longest L that fits, rounded down to a multiple of 16.
"""

from __future__ import annotations

import helm
import pytest
from conftest import compile_spec, container, spec
from gpu_profile import non_kv

from kvgen.app import explain
from kvgen.core.errors import SpecError

GiB = 1024**3
# one A100 80GB as CUDA reports it (81,050 MiB, not 80 GiB: instances.yaml gpuModels) x gpuMemoryUtilization 0.92
A100 = 81050 * 1024**2 * 920_000 // 1_000_000
assert A100 == 78_188_118_016


def flag(c) -> int | None:
    found = [a for a in container(c, "vllm")["args"] if a.startswith("--max-model-len=")]
    return int(found[0].split("=")[1]) if found else None


def same_in_chart(data: dict) -> None:
    ours = helm.by_identity([o for o in compile_spec(data).objects])
    theirs = helm.by_identity(helm.objects(data))
    assert theirs == ours


# ----------------------------------------------------------------------------- dense


def test_dense_qwen3_32b_on_one_a100_serves_the_longest_context_that_fits():
    """Qwen3-32B (64 layers, 8 KV heads x 128, 62 GiB, 40960 tokens) on Standard_NC24ads_A100_v4."""
    budget = (A100 - non_kv(62 * GiB, 5120, 25600, 151936, 64)) * 90 // 100
    assert budget == 8_878_249_832  # KAITO's flat 2.3 GiB + 5% of the weights left 5,236,127,171
    per_token = 64 * 2 * 8 * 128 * 2  # layers x (K, V) x KV heads x head dim x bf16
    assert per_token == 262_144
    longest = budget // per_token - 256
    assert longest // 16 * 16 == 33_600
    data = spec(model={"id": "Qwen/Qwen3-32B"})
    c = compile_spec(data)
    assert flag(c) == 33_600
    assert c.plan.context_length.budget == budget and c.plan.context_length.fits == 33_600
    (warning,) = [w for w in c.plan.warnings if "--max-model-len" in w]
    assert "supports 40960 tokens" in warning and "--max-model-len=33600" in warning
    # one more block would not fit: vLLM would refuse it
    assert c.plan.context_length.cost.bytes_for(33_600) <= budget < c.plan.context_length.cost.bytes_for(33_600 + 16)
    same_in_chart(data)


def test_a_spec_length_that_does_not_fit_names_the_longest_that_does():
    with pytest.raises(SpecError) as err:
        compile_spec(spec(model={"id": "Qwen/Qwen3-32B", "maxModelLen": 36864}))
    (problem,) = err.value.problems
    assert problem.path == ("model", "maxModelLen")
    assert "36864 tokens do not fit the GPU KV cache of Standard_NC24ads_A100_v4" in problem.message
    assert "at most 33600" in problem.hint
    # one that fits is passed as written, without a warning
    c = compile_spec(spec(model={"id": "Qwen/Qwen3-32B", "maxModelLen": 16384}))
    assert flag(c) == 16_384 and not any("--max-model-len" in w for w in c.plan.warnings)


def test_a_model_whose_full_context_fits_gets_no_flag():
    """Llama-3.1-8B on one A100: (78,188,118,016 - 15 GiB - 2.3 GiB - 5%) x 90% = 52.9 GB, room for
    ~404k tokens of 128 KiB: its own 131072 fit, and vLLM is left to serve them (golden files stay)."""
    c = compile_spec(spec())
    assert flag(c) is None and c.plan.context_length.served == 131_072
    assert c.plan.context_length.cost.bytes_for(131_072) <= c.plan.context_length.budget


# ----------------------------------------------------------------------------- MLA


def test_mla_deepseek_v3_is_not_sharded_across_tensor_parallel_ranks():
    """DeepSeek-V3 (MLA, 61 layers x (512 + 64), 642 GiB, 163840 tokens) on Standard_ND96isr_H200_v5,
    TP 8, gpuMemoryUtilization 0.68: each rank holds the whole latent."""
    usable = 143155 * 1024**2 * 680_000 // 1_000_000  # an H200 reports 143,155 MiB (instances.yaml gpuModels)
    assert usable == 102_074_050_150
    # an H200 (141 GB, not an A100) runs 8192 batched tokens and 1024 sequences; 8 of 256 experts a token,
    # each 2048 wide
    budget = (usable - non_kv(642 * GiB, 7168, 2048, 129280, 61, tp=8, k=8, n=8192, seqs=1024)) * 90 // 100
    per_token = 61 * 576 * 2  # no K/V factor 2, not divided by TP
    assert per_token == 70_272
    assert (budget // per_token - 256) // 16 * 16 == 161_168
    data = spec(
        model={"id": "deepseek-ai/DeepSeek-V3"},
        instance={"type": "Standard_ND96isr_H200_v5"},
        parallelism={"tensor": 8},
        vllm={"gpuMemoryUtilization": 0.68},
    )
    c = compile_spec(data)
    assert flag(c) == 161_168
    same_in_chart(data)


# ----------------------------------------------------------------------------- sliding window


def test_sliding_window_gemma_4_31b_costs_its_sliding_layers_at_most_the_window():
    """gemma-4-31B-it (50 sliding layers of 16 KV x 256, window 1024; 10 full layers of 4 KV x 512;
    59 GiB; 262144 tokens) on one A100. In flight: 2 batches x 2048 tokens (an A100's default)."""
    budget = (A100 - non_kv(59 * GiB, 5376, 21504, 262144, 60)) * 90 // 100
    assert budget == 11_420_389_382
    full = 10 * 2 * 4 * 512 * 2  # 81,920 bytes per token
    sliding = 50 * 2 * 16 * 256 * 2  # 819,200 bytes per token while a token is inside the window
    kept = 1024 - 1 + 2 * 2048  # 5119 tokens a sliding layer keeps at most
    # costed as full attention (the old way), only 12,416 tokens would fit
    assert (budget // (full + sliding) - 256) // 16 * 16 == 12_416
    longest = (budget - sliding * (kept + 256)) // full - 256
    assert longest // 16 * 16 == 85_392
    data = spec(model={"id": "google/gemma-4-31B-it"})
    c = compile_spec(data)
    assert flag(c) == 85_392
    same_in_chart(data)


def test_sliding_window_gemma_4_12b_serves_its_full_context():
    """gemma-4-12B-it (40 sliding layers of 8 KV x 256, 8 full of 2 KV x 512, 23 GiB, 262144
    tokens) on one A100: with the window costed, four full-length sequences fit; costed as full
    attention, not one did (the issue's "0 full-length sequences")."""
    budget = (A100 - non_kv(23 * GiB, 3840, 15360, 262144, 48)) * 90 // 100
    assert budget == 46_366_040_134
    full, sliding, kept = 8 * 2 * 2 * 512 * 2, 40 * 2 * 8 * 256 * 2, 1024 - 1 + 2 * 2048
    one = full * (262_144 + 256) + sliding * (kept + 256)
    assert one == 10_359_603_200 and budget // one == 4
    assert budget // ((full + sliding) * 262_144) == 0
    c = compile_spec(spec(model={"id": "google/gemma-4-12B-it"}))
    assert flag(c) is None
    (gpu,) = [t for t in explain.report(c.plan)["kvCache"]["tiers"] if t["tier"] == "gpu"]
    assert gpu["sequences"] == 4


def test_max_num_batched_tokens_in_extra_args_widens_what_a_sliding_layer_keeps():
    data = spec(model={"id": "google/gemma-4-31B-it"}, vllm={"extraArgs": ["--max-num-batched-tokens=16384"]})
    c = compile_spec(data)
    kept = 1024 - 1 + 2 * 16384  # 33791 tokens: longer than what fits, so every layer costs the whole sequence
    assert c.plan.context_length.cost.sliding_cap == kept
    # 16384 batched tokens also widen the activations vLLM profiles: one layer over 16384 tokens
    budget = (A100 - non_kv(59 * GiB, 5376, 21504, 262144, 60, n=16384)) * 90 // 100
    assert flag(c) == (budget // (81_920 + 819_200) - 256) // 16 * 16
    same_in_chart(data)


# ----------------------------------------------------------------------------- hybrid


def test_hybrid_qwen3_5_27b_counts_attention_layers_and_a_fixed_state():
    """Qwen3.5-27B (64 layers, 1 in 4 full attention: 16 layers of 4 KV x 256; 52 GiB: 27.76B parameters
    in bf16, derived from its config.json; 262144 tokens) on one A100: the 48 linear-attention layers keep a fixed state per sequence, budgeted
    as 1 GiB (sizing.yaml context.hybridStateGiB)."""
    budget = (A100 - non_kv(52 * GiB, 5120, 17408, 248320, 64)) * 90 // 100
    assert budget == 18_186_616_270
    per_token = 16 * 2 * 4 * 256 * 2
    assert per_token == 65_536
    longest = (budget - 1 * GiB) // per_token - 256
    assert longest // 16 * 16 == 260_864
    data = spec(model={"id": "Qwen/Qwen3.5-27B"})
    c = compile_spec(data)
    assert flag(c) == 260_864 and c.plan.context_length.cost.state == GiB
    same_in_chart(data)


# ----------------------------------------------------------------------------- CPU backend and the shared budget


def test_cpu_backend_plans_against_vllm_cpu_kvcache_space():
    """Llama-3.2-1B (16 layers x 8 KV x 64) on a CPU node: VLLM_CPU_KVCACHE_SPACE=4 GiB holds
    exactly 131072 tokens of 32 KiB, but vLLM keeps one block back: 4 GiB // 32768 - 256."""
    c = compile_spec(spec(model={"id": "meta-llama/Llama-3.2-1B-Instruct"}, instance={"type": "Standard_D16s_v5"}))
    assert flag(c) == 4 * GiB // (16 * 2 * 8 * 64 * 2) - 256  # 130_816


def test_explain_gpu_tier_and_context_planning_share_one_budget():
    for data in (
        spec(model={"id": "Qwen/Qwen3-32B"}),
        spec(instance={"type": "Standard_NC96ads_A100_v4"}, parallelism={"tensor": 4}),
    ):
        c = compile_spec(data)
        report = explain.report(c.plan)
        (gpu,) = [t for t in report["kvCache"]["tiers"] if t["tier"] == "gpu"]
        assert gpu["bytes"] == c.plan.context_length.budget * c.plan.sizing.gpus_per_pod
        assert gpu["perGpuBytes"] == report["kvCache"]["context"]["budgetBytesPerGpu"] == c.plan.context_length.budget


def test_no_context_fits_is_an_error_not_a_flag():
    # gemma-4-31B on one A100 at 0.78 with 1024 sequences: the weights (59 GiB) and 2.3 GiB fit 66,289,926,144
    # bytes (81,050 MiB as CUDA reports it x 0.78), but the sampler's 1024 x 262,144 logits and the penalties'
    # counts on top leave nothing
    assert 81050 * 1024**2 * 780_000 // 1_000_000 - non_kv(59 * GiB, 5376, 21504, 262144, 60, seqs=1024) < 0
    with pytest.raises(SpecError) as err:
        compile_spec(
            spec(
                model={"id": "google/gemma-4-31B-it"},
                vllm={"gpuMemoryUtilization": 0.78, "extraArgs": ["--max-num-seqs=1024"]},
            )
        )
    assert any("not even 16 tokens" in p.message for p in err.value.problems)
