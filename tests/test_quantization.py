"""Weights and KV bytes from the checkpoint's quantization and vLLM's dtype flags
(charts/kvgen/files/quantization.yaml, kvgen/plan/quantization.py, the chart's
templates/plan/_quantization.tpl): the numbers, the 70B-in-FP8-on-one-GPU case on both faces, and the
problems of flags kvgen cannot size; online quantization of a model without embeddingParameters sized
unquantized, with a warning."""

from __future__ import annotations

import helm
import pytest
from conftest import compile_spec, container, dump, problem_set, run_kvgen, spec

from kvgen.app import explain
from kvgen.core.quantity import GiB
from kvgen.data import catalog
from kvgen.plan import quantization

LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"
FP8_70B = spec(
    model={"id": LLAMA_70B},
    vllm={"gpuMemoryUtilization": 0.95, "extraArgs": ["--quantization=fp8", "--kv-cache-dtype=fp8"]},
    kvCacheOffloading={"backend": "lmcache", "cpu": "64Gi"},
)


def _with_args(*args: str) -> dict:
    out = spec(**{k: v for k, v in FP8_70B.items() if k in ("model", "kvCacheOffloading")})
    out["vllm"] = {"gpuMemoryUtilization": 0.95, "extraArgs": list(args)}
    return out


def test_every_catalog_row_names_a_known_checkpoint_quantization():
    schemes = quantization.table()["schemes"]
    rows = catalog.load("models.yaml")["models"]
    for model_id, row in rows.items():
        assert row.get("quantization") in schemes, model_id
        if "embeddingParameters" in row:
            assert isinstance(row["embeddingParameters"], int) and row["embeddingParameters"] > 0, model_id
    # the pre-quantized checkpoints of the catalog say so (their `weights` is the quantized size)
    assert rows["openai/gpt-oss-120b"]["quantization"] == "mxfp4"
    assert rows["deepseek-ai/DeepSeek-V3"]["quantization"] == "fp8"


def test_every_scheme_has_its_sizes_and_a_source():
    q = quantization.table()
    for name, scheme in q["schemes"].items():
        assert scheme["source"] and scheme["weightBits"] in (4, 8, 16), name
        assert (scheme["groupSize"] is None) == (scheme["scaleBits"] == 0), name
    for value, target in q["online"].items():
        assert target in q["schemes"] and value in q["vllmQuantizationMethods"]
    for value, schemes in q["checkpoint"].items():
        assert value in q["vllmQuantizationMethods"] and set(schemes) <= set(q["schemes"])
    assert set(q["kvCacheDtypes"]) <= set(q["vllmKvCacheDtypes"])


@pytest.mark.parametrize(
    ("scheme", "parameters", "expected"),
    [
        ("bf16", 1000, 2000),
        ("fp8", 1000, 1000),
        ("int8", 1000, 1000),
        # 4 bits + a 16-bit scale and a 4-bit zero per 128: 64 + 2.5 bytes, rounded up
        ("awq", 128, 67),
        ("gptq", 1280, 665),
        # 4 bits + an fp8 scale per 16: 8 + 1 bytes
        ("nvfp4", 16, 9),
        # 4 bits + an e8m0 scale per 32: 16 + 1 bytes
        ("mxfp4", 32, 17),
    ],
)
def test_bytes_of_a_scheme_by_hand(scheme, parameters, expected):
    assert quantization.scheme_bytes(quantization.table()["schemes"][scheme], parameters) == expected


def test_fp8_kv_bytes_match_vllm_page_size_arithmetic():
    """vLLM 0.33 vllm/v1/kv_cache_interface.py AttentionSpec (lines 586-601): page_size_bytes =
    num_heads x num_states x (head_size + head_size_v) x get_dtype_size(dtype), num_states = block_size
    for a plain attention layer; --kv-cache-dtype fp8 is torch.uint8 (vllm/utils/torch_utils.py
    STR_DTYPE_TO_TORCH_DTYPE): 1 byte. Llama-3.1-70B at TP 1: 8 KV heads x 16 x (128 + 128) x 1 = 32768
    bytes per block of 16 tokens per layer, 2048 per token per layer, 80 layers."""
    plan = compile_spec(FP8_70B).plan
    m = plan.model
    page_size_bytes = 8 * 16 * (128 + 128) * 1
    assert m.kv_dtype_bytes == 1
    assert m.layer_bytes_per_token(True, m.kv_dtype_bytes, 1) * 16 == page_size_bytes == 32768
    assert explain.report(plan)["kvCache"]["bytesPerTokenPerGpu"] == 80 * page_size_bytes // 16 == 163840


def test_llama_70b_in_fp8_fits_one_80gb_gpu_with_twice_the_tokens():
    # without quantization it does not fit: 132 GiB of bf16 weights on one 80 GB GPU
    assert any("of weights per GPU" in m for _p, m, _h in problem_set(_with_args("--kv-cache-dtype=fp8")))
    fp8 = compile_spec(FP8_70B).plan
    m = fp8.model
    parameters = 132 * GiB // 2
    embeddings = 128256 * 8192 * 2
    assert m.embedding_parameters == embeddings
    # online fp8: linear layers 1 byte, embeddings and lm_head kept in bf16; the download stays bf16
    assert m.gpu_weights_bytes == embeddings * 2 + (parameters - embeddings)
    assert m.download_bytes == m.weights_bytes == 132 * GiB
    assert fp8.sizing.model_cache == 134 * GiB
    auto = compile_spec(_with_args("--quantization=fp8")).plan
    kv8, kv16 = explain.report(fp8)["kvCache"], explain.report(auto)["kvCache"]
    assert kv16["dtypeBytes"] == 2 and kv8["dtypeBytes"] == 1
    assert kv16["bytesPerTokenPerGpu"] == 2 * kv8["bytesPerTokenPerGpu"]
    cpu8, cpu16 = (next(t for t in kv["tiers"] if t["tier"] == "cpu") for kv in (kv8, kv16))
    assert cpu8["bytes"] == cpu16["bytes"] == 64 * GiB and cpu8["tokens"] == 2 * cpu16["tokens"]
    assert kv8["gpuTokens"] in (2 * kv16["gpuTokens"], 2 * kv16["gpuTokens"] + 1)  # each rounded down
    # the planned --max-model-len follows the KV dtype (about double: the reserve is per sequence)
    assert fp8.context_length.flag and auto.context_length.flag
    assert 2 * auto.context_length.flag - 256 <= fp8.context_length.flag <= 2 * auto.context_length.flag + 512
    dtypes = explain.report(fp8)["model"]["dtypes"]
    assert dtypes == {
        "weights": {
            "checkpoint": "bf16",
            "onGpu": "fp8",
            "online": "fp8",
            "onlineUnsized": None,
            "bitsPerParameter": 8,
            "modelDtypeBytes": 2,
        },
        "kvCache": {"dtype": "fp8", "bytes": 1},
    }


def _max_model_len(args: list[str]) -> int:
    (flag,) = [a for a in args if a.startswith("--max-model-len=")]
    return int(flag.split("=", 1)[1])


@pytest.mark.heavy
def test_both_faces_plan_the_same_fp8_context():
    for values in (FP8_70B, _with_args("--quantization=fp8")):
        ours = container(compile_spec(values), "vllm")
        theirs = next(
            c
            for o in helm.objects(values)
            if o["kind"] == "Deployment"
            for c in o["spec"]["template"]["spec"]["containers"]
            if c["name"] == "vllm"
        )
        assert _max_model_len(ours["args"]) == _max_model_len(theirs["args"])
        assert ours["resources"] == theirs["resources"]
    fp8 = _max_model_len(container(compile_spec(FP8_70B), "vllm")["args"])
    auto = _max_model_len(container(compile_spec(_with_args("--quantization=fp8")), "vllm")["args"])
    assert fp8 > 2 * auto - 256


BAD = {
    "unknown-method": (_with_args("--quantization=fp4"), 0, "vLLM 0.33 has no quantization method 'fp4'"),
    "pre-quantized-method-on-bf16": (
        _with_args("--kv-cache-dtype=fp8", "--quantization", "awq"),
        1,
        "--quantization awq reads a pre-quantized checkpoint (awq)",
    ),
    "online-method-kvgen-cannot-size": (
        _with_args("-q=mxfp8"),
        0,
        "kvgen cannot size --quantization mxfp8",
    ),
    "kv-dtype-kvgen-cannot-size": (
        _with_args("--kv-cache-dtype=nvfp4"),
        0,
        "kvgen cannot size --kv-cache-dtype nvfp4",
    ),
    "unknown-kv-dtype": (_with_args("--kv-cache-dtype=fp4"), 0, "vLLM 0.33 has no KV-cache dtype 'fp4'"),
    "mismatched-method-on-a-quantized-checkpoint": (
        spec(model={"id": "openai/gpt-oss-20b"}, vllm={"extraArgs": ["--quantization=awq"]}),
        0,
        "openai/gpt-oss-20b is a mxfp4 checkpoint; vLLM refuses --quantization awq",
    ),
    "unknown-inline-quantization": (
        spec(model={"id": LLAMA_70B, "quantization": "int3"}),
        None,
        "unknown checkpoint quantization 'int3'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_flag_kvgen_cannot_size_is_a_problem_with_a_hint_on_both_faces(case):
    values, index, words = BAD[case]
    ours = problem_set(values)
    path = f"vllm.extraArgs[{index}]" if index is not None else "model.quantization"
    assert any(p == path and words in m and h for p, m, h in ours), ours
    assert helm.problems(values) == ours


def test_a_pre_quantized_checkpoint_keeps_its_size_and_an_inline_model_says_its_quantization():
    oss = compile_spec(spec(model={"id": "openai/gpt-oss-20b"}, vllm={"extraArgs": ["--quantization=mxfp4"]})).plan
    assert oss.model.gpu_weights_bytes == oss.model.weights_bytes
    inline = {
        "id": "acme/llama-like-70b-awq",
        "architecture": "LlamaForCausalLM",
        "layers": 80,
        "kvHeads": 8,
        "headDim": 128,
        "weights": "38Gi",
        "quantization": "awq",
    }
    plan = compile_spec(spec(model={**inline, "maxModelLen": 8192})).plan
    assert plan.model.quantization == "awq" and plan.model.gpu_weights_bytes == 38 * GiB
    assert explain.report(plan)["model"]["dtypes"]["weights"]["bitsPerParameter"] == 4 + 20 / 128


def test_dtype_float32_doubles_the_weights_and_the_auto_kv_cache():
    plan = compile_spec(spec(vllm={"extraArgs": ["--dtype=float32"]})).plan
    assert plan.model.gpu_weights_bytes == 2 * plan.model.weights_bytes
    assert plan.model.kv_dtype_bytes == 4


def test_load_format_dummy_downloads_nothing():
    values = spec(vllm={"extraArgs": ["--load-format", "dummy"]})
    plan = compile_spec(values).plan
    assert plan.model.download_bytes == 0 and plan.sizing.model_cache == 2 * GiB
    ours = container(compile_spec(values), "vllm")["resources"]
    theirs = next(
        c["resources"]
        for o in helm.objects(values)
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
        if c["name"] == "vllm"
    )
    assert ours == theirs


# ------------------------------------------- online quantization without embeddingParameters: a warning

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
HF_TOKEN = {"hfTokenSecret": {"name": "hf", "key": "token"}}  # no gated-model warning
# Every built-in row has embeddingParameters: a fine-tune of Llama 3.1 8B described in the spec's own
# catalog without them is the model kvgen cannot size for online quantization.
FINETUNE = "my-org/llama-3.1-8b-finetune"
FINETUNE_ROW = {
    k: v
    for k, v in catalog.load("models.yaml")["models"][LLAMA_8B].items()
    if k not in ("embeddingParameters", "source")
}
WARNINGS_KEY = catalog.runtime()["wiring"]["annotations"]["warnings"]
UNSIZED_WARNING = (
    f"vllm.extraArgs[1]: --quantization fp8 quantizes {FINETUNE} online; kvgen sizes its GPU weights unquantized, "
    "as without the flag (an upper bound), since it does not know how many of its parameters are embeddings and "
    "lm_head, which vLLM does not quantize: set model.embeddingParameters (vocab_size x hidden_size, x 2 unless "
    "tie_word_embeddings) for the fp8 size"
)


def _llama_8b(*args: str, utilization: float = 0.92, **model: object) -> dict:
    vllm = {"gpuMemoryUtilization": utilization, "extraArgs": list(args)}
    return spec(model={"id": FINETUNE, **model}, vllm=vllm, catalog={"models": {FINETUNE: FINETUNE_ROW}})


def _workloads(objects: list[dict]) -> dict:
    return {(o["kind"], o["metadata"]["name"]): o for o in objects if o["kind"] == "Deployment"}


def test_online_fp8_without_embedding_parameters_renders_unquantized_with_a_warning_on_both_faces():
    assert catalog.load("models.yaml")["models"][LLAMA_8B]["embeddingParameters"] == 128256 * 4096 * 2
    # a GPU share too small for the full context: kvgen plans --max-model-len from the room after the weights
    values = _llama_8b("--enable-prefix-caching", "--quantization=fp8", utilization=0.3)
    without = compile_spec(_llama_8b("--enable-prefix-caching", utilization=0.3))
    plain = without.plan
    c = compile_spec(values)
    # the GPU weights as without the flag (the checkpoint's bf16 size: the upper bound kvgen used before)
    assert c.plan.model.gpu_weights_bytes == plain.model.gpu_weights_bytes == c.plan.model.weights_bytes
    assert c.plan.context_length.flag == plain.context_length.flag
    flag = _max_model_len(container(c, "vllm")["args"])
    assert flag == _max_model_len(container(without, "vllm")["args"]) == plain.context_length.flag
    assert c.plan.warnings == [*plain.warnings, UNSIZED_WARNING]
    objs, notes = helm.objects_and_warnings(values)
    assert notes == c.plan.warnings
    assert _workloads(objs) == _workloads(c.objects)
    (workload,) = _workloads(objs).values()
    assert workload["metadata"]["annotations"][WARNINGS_KEY] == "\n".join(c.plan.warnings)
    assert (
        f"--max-model-len={flag}"
        in next(ct for ct in workload["spec"]["template"]["spec"]["containers"] if ct["name"] == "vllm")["args"]
    )


@pytest.mark.heavy
def test_online_fp8_without_embedding_parameters_warns_on_stderr_and_strict_refuses_it_on_both_faces():
    values = _llama_8b("--enable-prefix-caching", "--quantization=fp8")
    result = run_kvgen("render", "-", input=dump(values))
    assert result.returncode == 0, result.stderr
    assert f"--quantization fp8 quantizes {FINETUNE} online" in result.stderr
    strict = run_kvgen("render", "--strict", "-", input=dump(values))
    assert strict.returncode == 1 and strict.stdout == ""
    assert f"error: <stdin>: demo: {UNSIZED_WARNING}" in strict.stderr
    ours = problem_set({**values, "strict": True})
    assert {(p, m) for p, m, _h in ours} == {("strict", UNSIZED_WARNING)}
    assert helm.problems({**values, "strict": True}) == ours


def test_online_fp8_with_embedding_parameters_on_a_catalog_row_is_sized_and_does_not_warn():
    embeddings = 128256 * 4096 * 2
    values = _llama_8b("--quantization=fp8", embeddingParameters=embeddings)
    c = compile_spec(values)
    parameters = c.plan.model.weights_bytes // 2
    assert c.plan.model.gpu_weights_bytes == embeddings * 2 + (parameters - embeddings)
    assert c.plan.warnings == []
    objs, notes = helm.objects_and_warnings(values)
    assert notes == [] and _workloads(objs) == _workloads(c.objects)


@pytest.mark.heavy
def test_explain_says_the_weights_are_sized_unquantized():
    plan = compile_spec(_llama_8b("--quantization=fp8")).plan
    assert explain.report(plan)["model"]["dtypes"]["weights"] == {
        "checkpoint": "bf16",
        "onGpu": "bf16",
        "online": None,
        "onlineUnsized": "fp8",
        "bitsPerParameter": 16,
        "modelDtypeBytes": 2,
    }
    result = run_kvgen("explain", "-", input=dump(_llama_8b("--quantization=fp8")))
    assert result.returncode == 0, result.stderr
    (line,) = [ln for ln in result.stdout.splitlines() if "dtypes:" in ln]
    assert "bf16 on the GPUs, sized unquantized (an upper bound: --quantization fp8 quantizes online" in line
    assert "quantized online by" not in line and "16 bits per parameter" in line


@pytest.mark.heavy
def test_the_short_option_with_its_value_attached_is_read_as_vllm_reads_it():
    """Issue 33: vLLM's argparse reads -qfp8 as --quantization fp8; the flag check let it through, but the
    sizing ignored it and refused Llama-3.1-70B on one A100 as not fitting (140 GiB of bf16 weights)."""

    sizes = set()
    for args in (["-qfp8"], ["--quantization=fp8"], ["-q", "fp8"]):
        values = spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            vllm={"extraArgs": args},
            kvCacheOffloading={"enabled": False},
        )
        c = compile_spec(values)
        sizes.add(c.plan.model.gpu_weights_bytes)
        assert helm.by_identity(helm.objects(values)) == helm.by_identity(c.objects)
    assert len(sizes) == 1 and sizes.pop() < 70 * 1024**3
