"""files/quantization.yaml held to the pinned vLLM itself (the contract venv): the --quantization and
--kv-cache-dtype values it lists are vLLM 0.33's own, each KV dtype's bytes are torch's, and one FP8-KV
case of kvgen's KV bytes per token equals vLLM's own page-size arithmetic
(vllm/v1/kv_cache_interface.py AttentionSpec.page_size_bytes)."""

from __future__ import annotations

import json
import subprocess

import contract_support as cs
import pytest
from conftest import compile_spec, spec

from kvgen.plan import quantization

pytestmark = pytest.mark.contract

PROBE = r"""
import json
from typing import get_args
from vllm.config.cache import CacheDType
from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
from vllm.utils.torch_utils import STR_DTYPE_TO_TORCH_DTYPE, get_dtype_size
from vllm.v1.kv_cache_interface import FullAttentionSpec

dtype = STR_DTYPE_TO_TORCH_DTYPE["fp8"]
page = FullAttentionSpec(block_size=16, num_kv_heads=8, head_size=128, dtype=dtype).page_size_bytes
print(json.dumps({
    "methods": list(QUANTIZATION_METHODS),
    "kvDtypes": list(get_args(CacheDType)),
    "sizes": {k: get_dtype_size(v) for k, v in STR_DTYPE_TO_TORCH_DTYPE.items()},
    "page": page,
}))
"""


@pytest.fixture(scope="module")
def vllm_facts() -> dict:
    python = cs.contract_python_or_skip()
    result = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_quantization_lists_are_vllms(vllm_facts):
    q = quantization.table()
    assert q["vllmQuantizationMethods"] == vllm_facts["methods"]
    assert q["vllmKvCacheDtypes"] == vllm_facts["kvDtypes"]
    for name, size in q["kvCacheDtypes"].items():
        if size is not None:
            assert vllm_facts["sizes"][name] == size, name


def test_fp8_kv_page_of_llama_70b_is_vllms(vllm_facts):
    plan = compile_spec(
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            vllm={"gpuMemoryUtilization": 0.95, "extraArgs": ["--quantization=fp8", "--kv-cache-dtype=fp8"]},
        )
    ).plan
    # one layer, TP 1, a block of 16 tokens: kvgen's bytes per token x the block size
    assert plan.model.layer_bytes_per_token(True, plan.model.kv_dtype_bytes, 1) * 16 == vllm_facts["page"]
