"""model.lora (issue 37): LoRA adapters served beside the model, on both faces: vLLM 0.33's own flags
(every adapter in one --lora-modules), the adapters fetched the way the weights are, the GPU buffers
vLLM preallocates taken from the KV cache, the adapters each worker keeps in host memory, the
downloads, and what no schema says (kvgen/plan/lora.py, templates/plan/_lora.tpl)."""

from __future__ import annotations

import json

import helm
import pytest
from conftest import compile_spec, container, problem_set, spec, workload
from parity import assert_same_plan

from kvgen.core.errors import SpecError
from kvgen.plan import lora, sizing
from kvgen.spec.models import Spec

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
ADAPTERS = [
    {"name": "sql", "uri": "hf://acme/llama-3.1-8b-sql-lora"},
    {"name": "support-tone", "uri": "pvc://lora-adapters/support-tone"},
]
NATIVE = {"backend": "native", "cpu": "8Gi"}


def lora_spec(lo=None, model=None, **top):
    m = {"id": LLAMA, "lora": {"adapters": ADAPTERS, "maxRank": 16, "maxLoras": 4, **(lo or {})}, **(model or {})}
    return spec(**{"model": m, "instance": {"type": "g6e.xlarge"}, "kvCacheOffloading": NATIVE, **top})


def _plan(values):
    return compile_spec(values).plan


def _model():
    return _plan(lora_spec()).model


def test_llama_8b_buffers_are_the_bytes_vllm_allocates():
    """Hand-checked for Llama-3.1-8B (h 4096, 32 layers, 32 heads x 128, 8 KV heads, I 14336, V 128256, bf16)
    at 4 slots x rank 16, TP 1: per decoder layer qkv A 3x4096 + B 4096+1024+1024, o A 4096 + B 4096, gate_up
    A 2x4096 + B 2x14336, down A 14336 + B 4096 = 81,920 elements per slot and rank unit; x 32 layers =
    2,621,440; embed_tokens A 128256 + B 4096 and lm_head A 4096 + B 128256 = 264,704; x 4 x 16 x 2 bytes =
    369,426,432 bytes. vLLM 0.33's own LRUCacheLoRAModelManager over LlamaForCausalLM built on the meta
    device summed its lora_a_stacked/lora_b_stacked tensors to the same 369,426,432 (and 260,374,528 per
    rank at TP 2, where q, o's input, gate_up and down's input are split and the vocabulary is not)."""
    one = Spec.model_validate(lora_spec())
    assert lora.gpu_bytes(one, _model()) == 369_426_432
    tp2 = Spec.model_validate(lora_spec(parallelism={"tensor": 2}))
    assert lora.gpu_bytes(tp2, _model()) == 260_374_528
    # linear in slots x rank: 1 slot at rank 8 is 1/8 of it
    small = Spec.model_validate(lora_spec({"maxRank": 8, "maxLoras": 1}))
    assert lora.gpu_bytes(small, _model()) == 369_426_432 // 8


def test_the_buffers_come_out_of_the_kv_cache_on_both_faces():
    """vLLM loads the buffers with the weights, inside the memory profile that sizes the KV cache
    (gpu_worker.py determine_available_memory): the KV budget is smaller by exactly them."""
    with_lora = Spec.model_validate(lora_spec())
    without = Spec.model_validate(spec(model={"id": LLAMA}, instance={"type": "g6e.xlarge"}, kvCacheOffloading=NATIVE))
    inst = _plan(lora_spec()).instance
    items = sizing.gpu_non_kv(with_lora, _model(), inst)
    assert items is not None and items["lora"] == 369_426_432
    assert sizing.gpu_non_kv(without, _model(), inst) | {"lora": 369_426_432} == items
    drop = sizing.gpu_kv_budget(without, _model(), inst) - sizing.gpu_kv_budget(with_lora, _model(), inst)
    assert abs(drop - 369_426_432 * sizing.KV_BUDGET_PERCENT / 100) <= 1  # the 90% hold-back, rounded down
    doc = assert_same_plan(lora_spec())
    assert doc["lora"]["gpuBytes"] == 369_426_432
    # host: 4 adapters (maxCpuLoras = maxLoras) at rank 16 on every linear module, 16-bit, one worker
    assert doc["lora"]["hostBytes"] == 4 * 16 * 32 * 81_920 * 2


@pytest.mark.heavy
def test_flags_mounts_and_downloads_are_the_same_on_both_faces():
    values = lora_spec()
    compiled = compile_spec(values)
    ours = helm.by_identity(compiled.objects)
    theirs = helm.by_identity(helm.objects(values))
    assert theirs == ours, helm.first_difference(ours, theirs)
    vllm = container(compiled, "vllm")
    args = vllm["args"]
    start = args.index("--enable-lora")
    assert args[start : start + 7] == [
        "--enable-lora",
        "--max-lora-rank=16",
        "--max-loras=4",
        "--max-cpu-loras=4",
        "--lora-modules",  # once: repeating it replaces the list (vLLM's LoRAParserAction)
        '{"name":"sql","path":"acme/llama-3.1-8b-sql-lora"}',  # a repo id vLLM downloads at start
        '{"name":"support-tone","path":"/mnt/lora/support-tone"}',
    ]
    assert args.count("--lora-modules") == 1
    pod = workload(compiled)["spec"]["template"]["spec"]
    assert {"name": "lora-adapter-0", "persistentVolumeClaim": {"claimName": "lora-adapters", "readOnly": True}} in pod[
        "volumes"
    ]
    assert {
        "name": "lora-adapter-0",
        "mountPath": "/mnt/lora/support-tone",
        "readOnly": True,
        "subPath": "support-tone",
    } in vllm["volumeMounts"]


def test_defaults_are_one_slot_per_adapter_and_as_many_in_host_memory():
    values = lora_spec()
    del values["model"]["lora"]["maxLoras"], values["model"]["lora"]["maxRank"]
    args = container(compile_spec(values), "vllm")["args"]
    assert ["--max-lora-rank=16", "--max-loras=2", "--max-cpu-loras=2"] == [
        a for a in args if a.startswith(("--max-lora-rank", "--max-loras", "--max-cpu-loras"))
    ]
    assert_same_plan(values)


@pytest.mark.heavy
def test_with_model_cache_an_init_container_fetches_each_hf_adapter_onto_the_claim():
    """model.cache serves offline (HF_HUB_OFFLINE=1), so vLLM cannot download an adapter: an init container
    per hf:// adapter (`hf download` of the adapter files only) puts it beside the weights on the claim."""
    values = lora_spec(model={"cache": {"claim": {"name": "weights"}}})
    compiled = compile_spec(values)
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compiled.objects)
    pod = workload(compiled)["spec"]["template"]["spec"]
    names = [c["name"] for c in pod["initContainers"]]
    assert names[:2] == ["model-download", "lora-download-0"]
    fetch = pod["initContainers"][1]
    directory = "/mnt/models/meta-llama--Llama-3.1-8B-Instruct/lora/sql"
    assert fetch["command"] == ["hf", "download"]
    assert fetch["args"] == [
        "acme/llama-3.1-8b-sql-lora",
        f"--local-dir={directory}",
        "--include=adapter_config.json",
        "--include=adapter_model.*",
    ]
    assert fetch["volumeMounts"] == pod["initContainers"][0]["volumeMounts"]  # the weights' claim, writable
    assert json.dumps({"name": "sql", "path": directory}, separators=(",", ":")) in container(compiled, "vllm")["args"]
    assert_same_plan(values)


def test_the_downloads_are_sized_into_the_model_cache():
    with_lora = Spec.model_validate(lora_spec())
    per_adapter = 16 * 32 * 81_920 * 4  # rank 16, every linear module, float32 as PEFT saves it
    assert lora.download_bytes(with_lora, _model()) == per_adapter  # one hf:// adapter; the pvc:// one is mounted
    assert sizing.downloaded_by_vllm(with_lora, _model()) == _model().download_bytes + per_adapter


def test_the_host_cache_is_a_memory_item_of_every_worker():
    doc = assert_same_plan(
        lora_spec(
            {"maxCpuLoras": 6},
            parallelism={"tensor": 2},
            instance={"type": "g6e.12xlarge", "ephemeralStorage": "100Gi"},
        )
    )
    assert doc["lora"]["hostBytes"] == 2 * 6 * 16 * 32 * 81_920 * 2  # 2 workers x 6 adapters


PROBLEMS = [
    (
        {"adapters": [{"name": LLAMA, "uri": "hf://acme/x-lora"}]},
        {},
        "model.lora.adapters[0].name",
        "is the model's own id",
    ),
    (
        {"adapters": [{"name": "a", "uri": "hf://acme/x-lora"}, {"name": "a", "uri": "hf://acme/y-lora"}]},
        {},
        "model.lora.adapters[1].name",
        "names adapters[0] too",
    ),
    (
        {"adapters": [{"name": "a/b", "uri": "hf://acme/x-lora"}, {"name": "a-b", "uri": "hf://acme/y-lora"}]},
        {},
        "model.lora.adapters[1].name",
        "both become the directory a-b",
    ),
    (
        {"adapters": ADAPTERS, "maxLoras": 4, "maxCpuLoras": 2},
        {},
        "model.lora.maxCpuLoras",
        "is below maxLoras (4)",
    ),
    (
        {"adapters": ADAPTERS},
        {"uri": "pvc://models/llama"},
        "model.lora.adapters[0].uri",
        "model.uri serves the model offline",
    ),
]


@pytest.mark.parametrize(("lo", "model", "path", "words"), PROBLEMS)
def test_what_no_schema_says_is_refused_alike(lo, model, path, words):
    values = spec(model={"id": LLAMA, "lora": lo, **model}, instance={"type": "g6e.xlarge"}, kvCacheOffloading=NATIVE)
    ours = problem_set(values)
    assert any(p == path and words in m for p, m, _ in ours), ours
    assert helm.problems(values) == ours


@pytest.mark.parametrize("flag", ["--enable-lora", "--max-loras=2", "--lora-modules=a=/x", "--disable-lora"])
def test_lora_flags_in_extra_args_are_refused_beside_model_lora(flag):
    values = lora_spec(vllm={"extraArgs": [flag]})
    ours = problem_set(values)
    name = flag.partition("=")[0]
    assert (
        "vllm.extraArgs",
        f"{name} is set by kvgen from model.lora",
        "remove it from vllm.extraArgs; model.lora writes the LoRA flags",
    ) in ours
    assert helm.problems(values) == ours


def test_a_model_kvgen_cannot_size_warns_and_takes_nothing():
    """MoE, MLA and hybrid models have other LoRA layers (vllm/lora/layers/fused_moe.py ...): kvgen says it
    does not size them instead of guessing."""
    values = spec(
        model={"id": "Qwen/Qwen3-30B-A3B", "lora": {"adapters": ADAPTERS}},
        instance={"type": "p4d.24xlarge", "ephemeralStorage": "300Gi"},
        parallelism={"tensor": 4},
        kvCacheOffloading=NATIVE,
    )
    doc = assert_same_plan(values)
    assert "gpuBytes" not in doc["lora"] and doc["lora"]["hostBytes"] == 0
    assert any(
        w.startswith("model.lora: kvgen does not size the LoRA buffers of Qwen/Qwen3-30B-A3B") for w in doc["warnings"]
    )


def test_enable_lora_without_model_lora_warns_that_nothing_is_sized():
    values = spec(model={"id": LLAMA}, vllm={"extraArgs": ["--enable-lora"]}, kvCacheOffloading=NATIVE)
    doc = assert_same_plan(values)
    assert any(w.startswith("vllm.extraArgs --enable-lora: the LoRA buffers") for w in doc["warnings"])


def test_lmcache_is_turned_off_for_model_lora_too():
    """Rule lora-adapters (LMCache keys by token ids only) holds for model.lora, not only --enable-lora."""
    values = lora_spec()
    values["kvCacheOffloading"] = {"backend": "lmcache"}
    doc = assert_same_plan(values)
    assert doc["decision"]["enabled"] is False and doc["decision"]["code"] == "lora-adapters"


def test_explain_shows_the_lora_memory():
    from conftest import dump

    from kvgen.app import explain
    from kvgen.app.compiler import compile_text

    (compiled,) = compile_text(dump(lora_spec()), "spec.yaml")
    report = explain.report(compiled.plan)
    lo = report["lora"]
    assert lo["gpuBytesPerGpu"] == 369_426_432 and lo["maxLoras"] == 4 and lo["maxCpuLoras"] == 4
    assert report["kvCache"]["gpuBudget"]["nonKvBytes"]["lora"] == 369_426_432
    (host,) = [i for i in report["memory"]["items"] if i["item"] == "lora-adapters"]
    assert host["bytes"] == lo["hostBytes"] == 4 * 16 * 32 * 81_920 * 2
    with pytest.raises(SpecError):
        compile_spec(lora_spec({"maxCpuLoras": 1}))


def test_the_explain_line_docs_lora_quotes_is_what_explain_prints():
    """docs/lora.md quotes explain's LoRA line for examples/lora-adapters.yaml; the text view prints it."""
    import io
    from pathlib import Path

    from conftest import ROOT

    from kvgen.app import explain
    from kvgen.app.compiler import compile_text

    example = ROOT / "examples" / "lora-adapters.yaml"
    (compiled,) = compile_text(example.read_text(), str(example))
    out = io.StringIO()
    explain.render([explain.report(compiled.plan)], explain.text_console(out))
    docs = Path(ROOT / "docs" / "lora.md").read_text()
    (quoted,) = [x for x in docs.splitlines() if x.startswith("LoRA: ")]
    # the console wraps long lines: compare with runs of whitespace made one space
    assert " ".join(quoted.split()) in " ".join(out.getvalue().split()), out.getvalue()
