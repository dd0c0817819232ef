"""The `lora-adapters` rule's premise, held against the installed upstream code (contract tier): LMCache 0.5.6's
scheduler-side lookup takes no LoRA adapter (a prefix is looked up by its token ids and cache salt:
lmcache/integration/vllm/vllm_multi_process_adapter.py LMCacheMPSchedulerAdapter.maybe_submit_lookup_request),
while vLLM 0.33's block hashes, which its OffloadingConnector keys by, carry the adapter
(vllm/v1/core/kv_cache_utils.py generate_block_hash_extra_keys -> _gen_lora_extra_hash_keys). Should either
change, the rule (charts/kvgen/files/rules.yaml) must be read again."""

from __future__ import annotations

import json
import subprocess

import contract_support as cs
import pytest

pytestmark = pytest.mark.contract

PROBE = r"""
import inspect, json
from lmcache.integration.vllm.vllm_multi_process_adapter import LMCacheMPSchedulerAdapter
from vllm.v1.core import kv_cache_utils
params = list(inspect.signature(LMCacheMPSchedulerAdapter.maybe_submit_lookup_request).parameters)
extra = inspect.getsource(kv_cache_utils.generate_block_hash_extra_keys)
lora = inspect.getsource(kv_cache_utils._gen_lora_extra_hash_keys)
print(json.dumps({"lookup": params, "extra_uses_lora": "_gen_lora_extra_hash_keys(request)" in extra,
                  "lora_keys_name_the_adapter": "lora_request.lora_name" in lora}))
"""


def test_lmcache_looks_up_without_the_adapter_and_vllm_hashes_with_it():
    python = cs.contract_python_or_skip()
    run = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, check=True, timeout=300)
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["lookup"] == ["self", "request_id", "token_ids", "cache_salt", "request_configs", "reserve_last_token"]
    assert not any("lora" in p or "adapter" in p for p in found["lookup"])
    assert found["extra_uses_lora"] and found["lora_keys_name_the_adapter"]
