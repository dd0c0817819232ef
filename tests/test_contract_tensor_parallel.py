"""files/tensor-parallel.yaml held to vLLM 0.33 itself (the contract venv): kvgen refuses exactly the
tensor-parallel sizes vLLM's own functions refuse, in vLLM's words, for every catalog model; the messages
are the ones vLLM's source raises; the architectures whose MoE blocks refuse more ranks than experts are
the ones its registry loads from a module that says so (issue 32 finding 9)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import contract_support as cs
import pytest

from kvgen.data import catalog
from kvgen.plan import tensor_parallel
from kvgen.spec.models import ModelSpec

pytestmark = pytest.mark.contract

SIZES = range(1, 17)
DATA = (1, 3)

# vLLM's own arithmetic: QKVParallelLinear's split or replication of the KV heads, the padded vocabulary,
# the MLP (dense, or a MoE layer's experts over tensor x data ranks), each through vllm.distributed.utils.divide,
# whose AssertionError carries the message; the attention heads' check is in ModelConfig (source, below)
PROBE = r"""
import json, sys, importlib.util
from pathlib import Path
from vllm.distributed.utils import divide
from vllm.model_executor.layers.vocab_parallel_embedding import DEFAULT_VOCAB_PADDING_SIZE, pad_vocab_size

def refused(n, d):
    try:
        divide(n, d)
    except AssertionError as exc:
        return str(exc)
    return None

out = {"padding": DEFAULT_VOCAB_PADDING_SIZE, "root": importlib.util.find_spec("vllm").submodule_search_locations[0], "cases": {}}
for mid, m, tp, data in json.load(sys.stdin):
    found = []
    if not m["mla"]:
        kv = m["kvHeads"]
        found.append(refused(kv, tp) if kv >= tp else refused(tp, kv))
    if m.get("vocabSize"):
        found.append(refused(pad_vocab_size(m["vocabSize"], DEFAULT_VOCAB_PADDING_SIZE), tp))
    if m.get("intermediateSize"):
        found.append(refused(m["intermediateSize"], tp if not m["experts"] else tp * data))
    out["cases"][f"{mid} {tp} {data}"] = [f for f in found if f]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def vllm_verdicts() -> dict:
    python = cs.contract_python_or_skip()
    cases = [(mid, row, tp, data) for mid, row in sorted(catalog.models().items()) for tp in SIZES for data in DATA]
    result = subprocess.run([python, "-c", PROBE], input=json.dumps(cases), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_kvgen_refuses_what_vllms_own_functions_refuse_for_every_catalog_model(vllm_verdicts):
    assert vllm_verdicts["padding"] == tensor_parallel.table()["checks"]["vocab"]["padding"]
    checks = tensor_parallel.table()["checks"]
    refused = 0
    for mid in sorted(catalog.models()):
        model, problems = catalog.resolve_model(ModelSpec(id=mid))
        assert model is not None and not problems, mid
        for tp in SIZES:
            for data in DATA:
                ours = tensor_parallel.refusals(model, tp, data)
                theirs = list(vllm_verdicts["cases"][f"{mid} {tp} {data}"])
                if model.attention_heads and model.attention_heads % tp:  # ModelConfig's check, first
                    theirs.insert(0, checks["attentionHeads"]["message"].format(heads=model.attention_heads, tp=tp))
                ours = [r for r in ours if not r.startswith("Tensor parallel size")]  # the MoE blocks' check: below
                assert ours == theirs, (mid, tp, data)
                refused += bool(ours)
    assert refused > 100  # the sweep refuses sizes: it is not vacuous


def test_the_messages_are_the_ones_vllm_raises(vllm_verdicts):
    root = Path(vllm_verdicts["root"])
    checks = tensor_parallel.table()["checks"]
    model_py = (root / "config" / "model.py").read_text(encoding="utf-8")
    # ModelConfig.verify_with_parallel_config: the f-string's pieces, in order, one statement
    heads = re.search(
        r'f"Total number of attention heads \(\{total_num_attention_heads\}\)"\s*'
        r'" must be divisible by tensor parallel size "\s*f"\(\{tensor_parallel_size\}\)\."',
        model_py,
    )
    assert heads, "ModelConfig's attention-heads message changed"
    assert checks["attentionHeads"]["message"] == (
        "Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."
    )
    utils = (root / "distributed" / "utils.py").read_text(encoding="utf-8")
    assert 'f"{numerator} is not divisible by {denominator}"' in utils
    for name in ("kvHeads", "vocab", "intermediate"):
        assert checks[name]["message"] == "{numerator} is not divisible by {denominator}"
    moe = (root / "model_executor" / "models" / "qwen3_moe.py").read_text(encoding="utf-8")
    assert re.search(
        r'f"Tensor parallel size \{self\.tp_size\} is greater than "\s*f"the number of experts \{config\.num_experts\}\."',
        moe,
    )
    assert checks["expertsAboveTensorParallel"]["message"] == (
        "Tensor parallel size {tp} is greater than the number of experts {experts}."
    )


def test_the_architectures_that_refuse_more_ranks_than_experts_are_vllms(vllm_verdicts):
    root = Path(vllm_verdicts["root"]) / "model_executor" / "models"
    says = {
        f.stem
        for f in root.glob("*.py")
        if re.search(
            r'Tensor parallel size \{self\.tp_size\} is greater than "\s*f"the number of experts',
            f.read_text(encoding="utf-8"),
        )
    }
    registry = (root / "registry.py").read_text(encoding="utf-8")
    archs = sorted(
        a for a, module, _cls in re.findall(r'"(\w+)":\s*\(\s*"(\w+)",\s*"(\w+)"\s*\)', registry) if module in says
    )
    assert "Qwen3MoeForCausalLM" in archs and "MixtralForCausalLM" not in archs
    assert sorted(tensor_parallel.table()["checks"]["expertsAboveTensorParallel"]["architectures"]) == archs
