"""vLLM 0.33's GPU memory outside the KV cache, by hand (the tests' own arithmetic, not kvgen's): what its
profiling run charges on one GPU (v1/worker/gpu_worker.py determine_available_memory), in the terms of
charts/kvgen/files/sizing.yaml gpu.vllmProfile, from the numbers of a model's config.json."""

from __future__ import annotations

GiB = 1024**3


def non_kv(weights: int, hidden: int, inter: int, vocab: int, layers: int, *, tp=1, k=0, n=2048, seqs=256) -> int:
    """What vLLM 0.33 charges outside the KV cache on one GPU (no pipeline parallel), by hand from the model's
    config.json: weights / TP; max(one layer's MLP (3 x intermediate x experts per token / TP) and 4 hidden
    tensors over n tokens, 2 bytes each; the sampler's min(n, seqs) x vocab logits at 12 bytes plus n hidden
    states); the penalties' seqs x vocab int32 counts; 0.15 GiB; CUDA graphs 0.05 GiB + 0.013 GiB a layer.
    n, seqs: vLLM's defaults below 70 GiB and on an A100 (2048, 256)."""
    activations = max(n * 2 * (3 * inter * max(1, k) // tp + 4 * hidden), min(n, seqs) * vocab * 12 + n * hidden * 2)
    graphs = int(0.05 * GiB) + int(0.013 * GiB) * layers
    return weights // tp + activations + seqs * vocab * 4 + int(0.15 * GiB) + graphs
