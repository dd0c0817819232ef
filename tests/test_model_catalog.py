"""files/models.yaml: every row has exactly the fields its header lists, with sane values; the rows
come from the Hugging Face config.json fixtures in tests/fixtures/hf-configs (scripts/catalog-models
--check), each naming its fixture; hybrid agrees with hybrid-architectures.yaml; the parameter count
the script derives weights from matches checkpoints of known size; and every row renders through
kvgen on an instance it fits (a sample alike through the chart)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import helm
import pytest
from conftest import ROOT, compile_spec, spec

from kvgen.core import quantity
from kvgen.data import catalog
from kvgen.spec.models import ModelSpec
from tools import catalog_models as cm

GiB = 1024**3
REQUIRED = {
    "architecture",
    "layers",
    "attentionLayers",
    "attentionHeads",
    "kvHeads",
    "headDim",
    "experts",
    "expertsPerToken",
    "hiddenSize",
    "intermediateSize",
    "vocabSize",
    "mla",
    "hybrid",
    "multimodal",
    "slidingLayers",
    "slidingWindow",
    "weights",
    "quantization",
    "embeddingParameters",
    "maxModelLen",
    "source",
}
OPTIONAL = {"fullKvHeads", "fullHeadDim"}
ROWS = catalog.load("models.yaml")["models"]
TEXT = cm.MODELS.read_text(encoding="utf-8")
_, HAND_KEPT = cm.split(TEXT)
GENERATED = cm.generated_rows()
FIXTURES = {f.model_id: f for f in cm.fixtures()}


def _header_fields() -> set[str]:
    """The fields the file's header documents (`#   name   type   meaning`)."""
    head = TEXT.partition("\ngated:")[0]
    return set(re.findall(r"^#   ([a-zA-Z]+)\s+(?:string|int|bool)", head, re.M)) - {"pattern", "source"} | {"source"}


def test_the_header_lists_the_fields_the_rows_have():
    assert _header_fields() == REQUIRED | OPTIONAL


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_row_has_exactly_the_header_fields_with_sane_values(name):
    row = ROWS[name]
    assert REQUIRED <= set(row) <= REQUIRED | OPTIONAL, set(row) ^ REQUIRED
    positive = ("layers", "attentionHeads", "kvHeads", "headDim", "hiddenSize", "intermediateSize", "vocabSize")
    for key in (*positive, "maxModelLen", "embeddingParameters"):
        assert isinstance(row[key], int) and not isinstance(row[key], bool) and row[key] > 0, key
    for key in ("experts", "expertsPerToken"):
        assert isinstance(row[key], int) and not isinstance(row[key], bool) and row[key] >= 0, key
    assert (row["expertsPerToken"] == 0) == (row["experts"] == 0) and row["expertsPerToken"] <= row["experts"]
    # the embeddings (and the lm_head unless tied) are vocabSize x hiddenSize
    assert row["embeddingParameters"] in (row["vocabSize"] * row["hiddenSize"] * k for k in (1, 2))
    if not row["mla"]:
        assert row["attentionHeads"] % row["kvHeads"] == 0, "query heads come in groups of the KV heads"
    assert 0 < row["attentionLayers"] <= row["layers"]
    assert row["attentionLayers"] == row["layers"] or row["hybrid"], "only hybrid models skip KV layers"
    assert 0 <= row["slidingLayers"] <= row["attentionLayers"]
    assert (row["slidingWindow"] is None) == (row["slidingLayers"] == 0)
    if row["mla"]:
        assert row["kvHeads"] == 1
    assert row["quantization"] in catalog.load("quantization.yaml")["schemes"]
    weights = quantity.to_bytes(row["weights"])
    assert weights > 0 and re.fullmatch(r"[0-9]+(Gi|Mi)", row["weights"])
    # the embeddings alone (16-bit) fit in the checkpoint
    assert row["embeddingParameters"] * (1 if row["quantization"] != "bf16" else 2) <= weights * 1.01
    assert isinstance(row["source"], str) and row["source"]


@pytest.mark.parametrize("name", sorted(ROWS))
def test_hybrid_agrees_with_the_captured_vllm_classes(name):
    hybrids = set(catalog.load("hybrid-architectures.yaml")["architectures"])
    assert ROWS[name]["hybrid"] == (ROWS[name]["architecture"] in hybrids)


def test_every_row_comes_from_a_fixture_or_is_marked_hand_kept():
    assert set(ROWS) == set(GENERATED) | set(HAND_KEPT)
    assert not set(GENERATED) & set(HAND_KEPT)
    for name in GENERATED:
        fixture = FIXTURES[name]
        assert f"tests/fixtures/hf-configs/{fixture.name}.json" in ROWS[name]["source"], name
        assert (cm.FIXTURES / f"{fixture.name}.json").is_file()
        assert ("weights derived" in ROWS[name]["source"]) != bool(fixture.source.get("weights")), name


def test_at_least_sixty_rows_of_the_kinds_users_deploy():
    rows = ROWS.values()
    assert len(ROWS) >= 60
    assert sum(r["mla"] for r in rows) >= 3 and sum(r["hybrid"] for r in rows) >= 5
    assert sum(r["multimodal"] for r in rows) >= 5 and sum(r["slidingLayers"] > 0 for r in rows) >= 5
    assert {r["quantization"] for r in rows} >= {"bf16", "fp8", "nvfp4", "mxfp4"}


# (attentionHeads, experts) of rows whose config.json says so: num_attention_heads (of the text_config of a
# multimodal model; MLA's query heads) and the routed experts, under the key each architecture uses
KNOWN_HEADS_AND_EXPERTS = {
    "meta-llama/Llama-3.1-70B-Instruct": (64, 0),  # dense
    "Qwen/Qwen3-30B-A3B": (32, 128),  # num_experts
    "deepseek-ai/DeepSeek-V3": (128, 256),  # MLA; n_routed_experts (its shared expert not counted)
    "mistralai/Mixtral-8x7B-v0.1": (32, 8),  # num_local_experts
    "openai/gpt-oss-120b": (64, 128),  # num_local_experts
    "google/gemma-4-26B-A4B": (16, 128),  # text_config num_experts
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (32, 128),  # hybrid; n_routed_experts
    "Qwen/Qwen3.5-35B-A3B": (16, 256),  # multimodal: text_config
    "nvidia/Gemma-4-31B-IT-NVFP4": (32, 0),  # dense Gemma 4: num_experts null
}


@pytest.mark.parametrize("name", sorted(KNOWN_HEADS_AND_EXPERTS))
def test_attention_heads_and_experts_are_the_configs(name):
    assert (ROWS[name]["attentionHeads"], ROWS[name]["experts"]) == KNOWN_HEADS_AND_EXPERTS[name]
    assert (GENERATED[name]["attentionHeads"], GENERATED[name]["experts"]) == KNOWN_HEADS_AND_EXPERTS[name]


def test_every_row_has_attention_heads_and_experts_and_the_model_info_reads_them():
    assert all("attentionHeads" in row and "experts" in row for row in ROWS.values())
    moe = {name for name, row in ROWS.items() if row["experts"]}
    assert {"Qwen/Qwen3-Next-80B-A3B-Instruct", "moonshotai/Kimi-K2-Instruct"} <= moe
    info, problems = catalog.resolve_model(ModelSpec.model_validate({"id": "Qwen/Qwen3-30B-A3B"}))
    assert not problems and info is not None and (info.attention_heads, info.experts) == (32, 128)


# (hiddenSize, intermediateSize, expertsPerToken, vocabSize) of rows whose config.json says so: hidden_size and
# vocab_size of the language model; the MLP width tensor parallelism splits, a routed expert's for a MoE model (the
# key its vLLM FusedMoE reads); num_experts_per_tok / top_k_experts, 0 for a dense model
KNOWN_SIZES = {
    "meta-llama/Llama-3.1-70B-Instruct": (8192, 28672, 0, 128256),  # dense: intermediate_size
    "Qwen/Qwen3-32B": (5120, 25600, 0, 151936),
    "Qwen/Qwen3-30B-A3B": (2048, 768, 8, 151936),  # moe_intermediate_size (intermediate_size 6144 unused)
    "deepseek-ai/DeepSeek-V3": (7168, 2048, 8, 129280),  # moe_intermediate_size, not its dense layers' 18432
    "mistralai/Mixtral-8x7B-v0.1": (4096, 14336, 2, 32000),  # experts sized by intermediate_size
    "openai/gpt-oss-120b": (2880, 2880, 4, 201088),  # intermediate_size; num_experts_per_tok / experts_per_token
    "MiniMaxAI/MiniMax-M2.5": (3072, 1536, 8, 200064),  # intermediate_size
    "google/gemma-4-26B-A4B": (2816, 704, 8, 262144),  # text_config; top_k_experts; not its dense MLP's 2112
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": (2688, 1856, 6, 131072),  # hybrid MoE
    "nvidia/Nemotron-H-56B-Base-8K": (8192, 32768, 0, 131072),  # hybrid: its '-' MLP layers
    "Qwen/Qwen3.5-35B-A3B": (2048, 512, 8, 248320),  # multimodal: text_config, no intermediate_size
}


def _sizes(row: dict[str, object]) -> tuple[object, ...]:
    return tuple(row[k] for k in ("hiddenSize", "intermediateSize", "expertsPerToken", "vocabSize"))


@pytest.mark.parametrize("name", sorted(KNOWN_SIZES))
def test_hidden_intermediate_experts_per_token_and_vocab_sizes_are_the_configs(name):
    assert _sizes(ROWS[name]) == _sizes(GENERATED[name]) == KNOWN_SIZES[name]
    tc = cm.text_config(FIXTURES[name].config)
    assert (tc["hidden_size"], tc["vocab_size"]) == (KNOWN_SIZES[name][0], KNOWN_SIZES[name][3])


def test_every_row_has_the_sizes_and_the_model_info_reads_them():
    assert all({"hiddenSize", "intermediateSize", "expertsPerToken", "vocabSize"} <= set(row) for row in ROWS.values())
    for name in HAND_KEPT:  # filled by hand: the row's source names where each comes from
        assert all(f in ROWS[name]["source"] for f in ("hiddenSize", "intermediateSize", "vocabSize")), name
    info, problems = catalog.resolve_model(ModelSpec.model_validate({"id": "Qwen/Qwen3-30B-A3B"}))
    assert not problems and info is not None
    assert (info.hidden_size, info.intermediate_size, info.experts_per_token, info.vocab_size) == (2048, 768, 8, 151936)


def test_a_row_of_your_own_without_the_sizes_leaves_them_unknown():
    own = {"architecture": "LlamaForCausalLM", "layers": 2, "kvHeads": 2, "headDim": 64, "weights": "1Gi"}
    info, problems = catalog.resolve_model(ModelSpec.model_validate({"id": "me/tiny"}), {"me/tiny": own})
    assert not problems and info is not None
    assert (info.hidden_size, info.intermediate_size, info.experts_per_token, info.vocab_size) == (None, None, 0, None)


def test_sources_yaml_names_a_repository_path_and_commit_for_every_fixture():
    sources = cm.load_yaml(cm.FIXTURES / "SOURCES.yaml")["fixtures"]
    assert set(sources) == {f.name for f in FIXTURES.values()}
    for name, where in sources.items():
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", where["repo"]) and where["path"], name
        assert re.fullmatch(r"[0-9a-f]{40}", where["commit"]) and where["how"] in ("copied", "transcribed"), name
        assert bool(where.get("weights")) == bool(where.get("weightsSource")), name


@pytest.mark.heavy
def test_models_yaml_is_what_the_fixtures_give():
    """scripts/catalog-models --check: the committed rows are the fixtures' (run it to regenerate)."""
    run = subprocess.run([str(ROOT / "scripts" / "catalog-models"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr


@pytest.mark.heavy
def test_check_fails_on_a_stale_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fixture changed after the rows were generated: --check fails and shows the row's diff."""
    folder = tmp_path / "hf-configs"
    shutil.copytree(cm.FIXTURES, folder)
    path = folder / "Qwen--Qwen3-8B.json"
    config = json.loads(path.read_text())
    config["num_key_value_heads"] = 4
    path.write_text(json.dumps(config))
    monkeypatch.setattr(cm, "FIXTURES", folder)
    assert cm.main(["--check"]) == 1
    assert cm.generated_rows(folder)["Qwen/Qwen3-8B"]["kvHeads"] == 4


def test_a_hand_kept_row_that_gets_a_fixture_is_refused():
    rows = dict(GENERATED)
    name = sorted(HAND_KEPT)[0]
    rows[name] = dict(ROWS[name])
    with pytest.raises(cm.CatalogError, match="hand-kept rows that now have a fixture"):
        cm.generate(TEXT, rows)


def test_the_generator_keeps_header_gated_list_and_hand_kept_rows_verbatim():
    head, kept = cm.split(TEXT)
    new = cm.generate(TEXT, GENERATED)
    assert new.startswith(head) and all(block in new for block in kept.values())


# Checkpoints of known size (bytes) or parameter count: the count the script derives weights from
# must be within TOLERANCE of them. 16-bit checkpoints: bytes / 2 = parameters.
TOLERANCE = 0.03
KNOWN_PARAMETERS = {
    # KAITO model_catalog.yaml sizes (GiB) of 16-bit checkpoints
    "meta-llama/Llama-3.1-8B-Instruct": 14.96 * GiB / 2,
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": 58.82 * GiB / 2,
    "microsoft/Phi-4-mini-instruct": 7.15 * GiB / 2,
    # keras-hub qwen3 presets' parameter counts
    "Qwen/Qwen3-8B": 8_190_735_360,
    "Qwen/Qwen3-32B": 32_762_123_264,
    "Qwen/Qwen2.5-72B": 72_706_203_648,
}
# Sizes of quantized checkpoints (GiB), compared with the derived weights: KAITO's DeepSeek-V3-0324 (the
# same FP8 layout); gpt-oss-20b's top-level shards (4.79 + 4.8 + 4.17 GB), whose attention and router the
# checkpoint keeps 16-bit (quantization_config modules_to_not_convert): all-MXFP4 would be 7% short
KNOWN_WEIGHTS = {"deepseek-ai/DeepSeek-V3": 641.30, "openai/gpt-oss-20b": 12.81}


@pytest.mark.parametrize("name", sorted(KNOWN_PARAMETERS))
def test_the_parameter_formula_matches_checkpoints_of_known_size(name):
    total, _ = cm.parameters(FIXTURES[name].config)
    assert abs(total / KNOWN_PARAMETERS[name] - 1) < TOLERANCE, (total, KNOWN_PARAMETERS[name])


@pytest.mark.parametrize("name", sorted(KNOWN_WEIGHTS))
def test_derived_weights_match_quantized_checkpoints_of_known_size(name):
    """Quantized parts at the scheme's bits, embeddings and what the checkpoint excludes at 16 bits."""
    schemes = catalog.load("quantization.yaml")["schemes"]
    fixture = FIXTURES[name]
    excluded = cm.excluded_modules(fixture.config, fixture.quant)
    derived = cm.weights_bytes(fixture.config, schemes[ROWS[name]["quantization"]], excluded) / GiB
    assert abs(derived / KNOWN_WEIGHTS[name] - 1) < TOLERANCE, derived


# ---------------------------------------------------------------- every row renders

# (instance, GPUs, GiB of GPU memory in all), smallest first
INSTANCES = [("g6e.xlarge", 1, 48), ("g6e.12xlarge", 4, 192), ("p5.48xlarge", 8, 640), ("p6-b200.48xlarge", 8, 1432)]


def _fitting(name: str) -> dict[str, object]:
    """A small spec serving the row on the smallest instance whose GPUs hold its weights with room for KV."""
    weights = quantity.to_bytes(ROWS[name]["weights"]) / GiB
    instance, gpus = next((i, g) for i, g, memory in INSTANCES if weights * 1.25 + 4 * g <= memory)
    return spec(
        model={"id": name, "maxModelLen": min(ROWS[name]["maxModelLen"], 8192)},
        instance={"type": instance, "ephemeralStorage": "3000Gi"},
        parallelism={"tensor": gpus},
        kvCacheOffloading={"cpu": "8Gi"},
    )


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_every_generated_row_renders_through_kvgen(name):
    compiled = compile_spec(_fitting(name))
    assert any(o["kind"] in ("Deployment", "StatefulSet") for o in compiled.objects)


PARITY_SAMPLE = [
    "moonshotai/Kimi-K2-Instruct",  # MLA, fp8
    "Qwen/Qwen3.5-35B-A3B",  # hybrid, multimodal
    "nvidia/Gemma-4-31B-IT-NVFP4",  # sliding + full geometry, nvfp4
    "Qwen/Qwen3-30B-A3B",  # MoE
]


@pytest.mark.heavy
@pytest.mark.parametrize("name", PARITY_SAMPLE)
def test_a_sample_of_new_rows_renders_alike_on_both_faces(name):
    values = _fitting(name)
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compile_spec(values).objects)


def test_the_docs_count_the_models():
    """docs/catalog.md says how many models the catalog has, and of which kinds: it stays the count."""
    text = " ".join((ROOT / "docs" / "catalog.md").read_text().split())
    said = re.search(
        r"(\d+) models: (\d+) generated from .*? and (\d+) hand-kept rows .*? Among them (\d+) MLA models .*?, "
        r"(\d+) hybrid .*?, (\d+) multimodal models, (\d+) with sliding-window layers .*? and (\d+) pre-quantized",
        text,
    )
    assert said, "docs/catalog.md lost its count of models"
    schemes = catalog.load("quantization.yaml")["schemes"]
    rows = ROWS.values()
    assert [int(n) for n in said.groups()] == [
        len(ROWS),
        len(GENERATED),
        len(HAND_KEPT),
        sum(r["mla"] for r in rows),
        sum(r["hybrid"] for r in rows),
        sum(r["multimodal"] for r in rows),
        sum(r["slidingLayers"] > 0 for r in rows),
        sum(not schemes[r["quantization"]]["sixteenBit"] for r in rows),
    ]


def test_the_modules_a_checkpoint_excludes_from_quantization_stay_16_bit():
    """ModelOpt exclude_modules / modules_to_not_convert name a layer's attention, shared expert or MLP, per
    layer or for every layer; a router (`mlp.gate`) is not the MLP; Gemma 4's `mlp` is the dense MLP beside its
    experts."""
    attn, experts, shared = cm.Part(3, "attn", 1), cm.Part(3, "mlp", 1), cm.Part(3, "shared", 1)
    assert cm.is_excluded(attn, ["model.layers.*.self_attn"]) and cm.is_excluded(attn, ["model.layers.3.self_attn*"])
    assert not cm.is_excluded(attn, ["model.layers.4.self_attn*"]) and not cm.is_excluded(attn, ["lm_head"])
    assert cm.is_excluded(cm.Part(3, "attn", 1), ["backbone.layers.3.mixer.in_proj"])
    assert cm.is_excluded(shared, ["*.mlp.shared_expert.*"]) and not cm.is_excluded(
        shared, ["model.layers.3.mlp.shared_expert_gate"]
    )
    assert not cm.is_excluded(experts, ["model.layers.3.mlp.gate"]) and cm.is_excluded(experts, ["model.layers.3.mlp*"])
    assert not cm.is_excluded(experts, ["model.language_model.layers.3.mlp*"], experts_beside_mlp=True)
    assert cm.is_excluded(cm.Part(3, "dense", 1), ["model.language_model.layers.3.mlp*"], experts_beside_mlp=True)
    assert cm.is_excluded(cm.Part(None, "mlp", 1), ["mtp*"]) and cm.is_excluded(cm.Part(3, "other", 1), [])


def test_a_mixed_precision_checkpoint_is_sized_layer_by_layer():
    """nvidia/Qwen3.6-27B-NVFP4 (ModelOpt MIXED_PRECISION): FP8 linear attention, NVFP4 MLPs. The row's scheme
    is the one holding most parameters (NVFP4, by count of layers it would be FP8); its weights lie between
    all-NVFP4 and all-FP8."""
    name = "nvidia/Qwen3.6-27B-NVFP4"
    fixture, schemes = FIXTURES[name], catalog.load("quantization.yaml")["schemes"]
    per_part = cm.mixed_schemes(fixture.quant)
    assert set(per_part.values()) == {"fp8", "nvfp4"} and ROWS[name]["quantization"] == "nvfp4"
    excluded = cm.excluded_modules(fixture.config, fixture.quant)
    mixed = cm.weights_bytes(fixture.config, schemes["nvfp4"], excluded, {k: schemes[v] for k, v in per_part.items()})
    low, high = (cm.weights_bytes(fixture.config, schemes[s], excluded) for s in ("nvfp4", "fp8"))
    assert low < mixed < high
    assert ROWS[name]["weights"] == f"{math.ceil(mixed / GiB)}Gi"
