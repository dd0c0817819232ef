"""Issue 33: catalog rows (a spec's own catalog:, a --catalog file, a file given with helm -f) and model ids,
checked before they reach the pod, by kvgen (kvgen.data.catalog, kvgen.input.user_catalog) and the chart
(kvgen.resolveModel, kvgen.resolveInstance) in the same words, at the same paths:

1. a row's nodeSelector is copied into the pod: label keys and values, as the API server validates a pod's
   nodeSelector (ValidatePodSpec: ValidateLabels), in the words of scheduling.nodeSelector;
2. every size of a row (instance gpuMemory, memory, localDisk, ephemeralStorage; model weights) is within kvgen's
   bound of 1 PiB (files/apiserver.yaml maxBytes), in the words of the spec's own sizes;
3. model.id is a Hugging Face repo id (huggingface_hub 2.4.0 validate_repo_id, its words) where the weights are
   downloaded by it, else a name without whitespace or control characters (model.uri, model.cache with
   download: false serve a claim under it); a catalog row's key is such a name."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import unicodedata

import contract_support as cs
import helm
import pytest
from conftest import ROOT, compile_spec, dump, problem_set, problem_triples, spec

from kvgen.core.errors import SpecError, format_path, quoted
from kvgen.data import catalog
from kvgen.input import user_catalog
from kvgen.plan import apiserver
from kvgen.spec.models import MAX_COUNT

ROW = {
    "cloud": "onprem",
    "gpus": 1,
    "gpuModel": "NVIDIA A100-SXM4-80GB",
    "gpuMemory": "80Gi",
    "memory": "256Gi",
    "cpu": 32,
    "arch": "amd64",
    "localDisk": "1Ti",
    "ephemeralStorage": "500Gi",
    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1"},
}
MODEL_ROW = {
    "architecture": "LlamaForCausalLM",
    "layers": 32,
    "kvHeads": 8,
    "headDim": 128,
    "weights": "15Gi",
    "maxModelLen": 131072,
}
INLINE = {k: v for k, v in MODEL_ROW.items() if k != "maxModelLen"}


def both(values: dict) -> set:
    """kvgen's problems, which must be the chart's."""
    ours = problem_set(values)
    assert helm.problems(values) == ours
    return ours


def on_node(row: dict, **more) -> dict:
    return spec(catalog={"instances": {"my-node": row}}, instance={"type": "my-node"}, **more)


def key_problem(path: str, key: str) -> tuple:
    return (path, f"{quoted(key)} is not {apiserver.what('labelKey')} (ValidatePodSpec: ValidateLabels)", None)


def value_problem(path: str, value: str) -> tuple:
    return (path, f"{quoted(value)} is not {apiserver.what('labelValue')} (ValidatePodSpec: ValidateLabels)", None)


def size_problem(path: str, text: str) -> tuple:
    return (
        path,
        f"{text} is above kvgen's bound of 1Pi for any size (sizes near 8 EiB overflow the 64-bit integers "
        "Kubernetes and Helm compute with)",
        "use at most 1Pi",
    )


# ----------------------------------------------------------------------------- 1. nodeSelector

SELECTOR = "catalog.instances.my-node.nodeSelector"


@pytest.mark.heavy
@pytest.mark.parametrize(
    "selector, expected",
    [
        ({"bad key!": "a"}, {key_problem(f"{SELECTOR}.bad key!", "bad key!")}),
        ({"pool": "gpu pool"}, {value_problem(f"{SELECTOR}.pool", "gpu pool")}),
        ({"pool": "x" * 64}, {value_problem(f"{SELECTOR}.pool", "x" * 64)}),
        ({"pool": "-gpu"}, {value_problem(f"{SELECTOR}.pool", "-gpu")}),
        ({"Nvidia.COM/gpu": "a"}, {key_problem(f"{SELECTOR}.Nvidia.COM/gpu", "Nvidia.COM/gpu")}),  # prefix: lowercase
        ({"a/b/c": "a"}, {key_problem(f"{SELECTOR}.a/b/c", "a/b/c")}),
        ({"nvidia.com/": "a"}, {key_problem(f"{SELECTOR}.nvidia.com/", "nvidia.com/")}),
        ({"k" * 64: "a"}, {key_problem(f"{SELECTOR}.{'k' * 64}", "k" * 64)}),
        (
            {"pool\t": "a\x1b[2J"},
            {key_problem(f"{SELECTOR}.pool\t", "pool\t"), value_problem(f"{SELECTOR}.pool\t", "a\x1b[2J")},
        ),
    ],
)
def test_a_rows_node_selector_is_refused_as_a_pods_would_be(selector, expected):
    """The row's nodeSelector went into the pod unchecked: a Deployment the API server refuses."""
    assert both(on_node({**ROW, "nodeSelector": selector})) == expected
    # a row that is not the node in use is checked too: a catalog is refused whole
    assert both(spec(catalog={"instances": {"my-node": {**ROW, "nodeSelector": selector}}})) == expected


@pytest.mark.heavy
def test_a_row_over_a_built_in_one_is_checked_and_a_prefixed_key_is_a_label_key():
    built_in = spec(catalog={"instances": {"nvidia-dgx-h100": {"nodeSelector": {"gpu pool": "x"}}}})
    assert both(built_in) == {key_problem("catalog.instances.nvidia-dgx-h100.nodeSelector.gpu pool", "gpu pool")}
    # the legitimate rows: NVIDIA GPU feature discovery's prefixed keys, an empty value (a label value too)
    values = on_node({**ROW, "nodeSelector": {**ROW["nodeSelector"], "example.com/pool": ""}})
    assert both(values) == set()
    ours = helm.by_identity(compile_spec(values).objects)
    assert helm.by_identity(helm.objects(values)) == ours
    (workload,) = [o for o in ours.values() if o["kind"] == "Deployment"]
    assert workload["spec"]["template"]["spec"]["nodeSelector"] == {**ROW["nodeSelector"], "example.com/pool": ""}


# ----------------------------------------------------------------------------- 2. sizes


@pytest.mark.heavy
@pytest.mark.parametrize("field", ["gpuMemory", "memory", "localDisk", "ephemeralStorage"])
@pytest.mark.parametrize("size", ["9Ei", "2Pi", "1125899906842625", "1.5P"])
def test_every_size_of_an_instance_row_is_within_kvgens_bound(field, size):
    """memory: 9Ei sized a ~903 PiB sidecar; the chart refused it for another reason (its int64 sizes)."""
    assert both(on_node({**ROW, field: size})) == {size_problem(f"catalog.instances.my-node.{field}", size)}


@pytest.mark.heavy
def test_model_weights_of_a_row_are_within_kvgens_bound_and_1pi_is_not_above_it():
    values = spec(catalog={"models": {"acme/m": {**MODEL_ROW, "weights": "9Ei"}}}, model={"id": "acme/m"})
    assert both(values) == {size_problem("catalog.models.acme/m.weights", "9Ei")}
    # a built-in row's weights replaced, by a row that is not the model in use
    values = spec(catalog={"models": {"Qwen/Qwen3-8B": {"weights": "8E"}}})
    assert both(values) == {size_problem("catalog.models.Qwen/Qwen3-8B.weights", "8E")}
    # the bound itself is a size (an informational one: the node's local disk)
    assert not [p for p in both(on_node({**ROW, "localDisk": "1Pi"})) if p[0].startswith("catalog.")]


# a model's and a node's counts: files/apiserver.yaml maxCounts, in the schema of both faces
MODEL_COUNTS = sorted(set(MAX_COUNT) - {"gpus", "cpu"})


def _refused_alike(values: dict, path: str, bound: int) -> None:
    """kvgen refuses the count at its path, and the chart's templates refuse it too, in kvgen's words
    (files/spec-checks.json: the bound, checked before any of the chart's arithmetic reads the count)."""
    assert problem_set(values) == {(path, f"Input should be less than or equal to {bound}", None)}
    assert helm.problems(values) == problem_set(values)


@pytest.mark.heavy
@pytest.mark.parametrize("field", MODEL_COUNTS)
@pytest.mark.parametrize("value", ["above", 1e308], ids=["bound+1", "1e308"])
def test_a_models_count_is_within_kvgens_bound_on_both_faces(field, value):
    """Found by the fuzzer (issue 33): a catalog row's kvHeads: 1e+308 was refused by kvgen for not fitting and
    rendered by the chart with its int64 arithmetic overflowed (at TP 2: "2 is not divisible by
    -9223372036854775808"). Every count now has a bound that keeps the chart's products in int64."""
    bound = MAX_COUNT[field]
    count = bound + 1 if value == "above" else value
    row = {**MODEL_ROW, field: count}
    _refused_alike(
        spec(catalog={"models": {"acme/m": row}}, model={"id": "acme/m"}), f"catalog.models.acme/m.{field}", bound
    )
    if field not in ("fullKvHeads", "fullHeadDim"):  # a catalog row's fields only
        inline = spec(model={"id": "acme/m", **INLINE, field: count})
        _refused_alike(inline, f"model.{field}", bound)


@pytest.mark.heavy
@pytest.mark.parametrize("field", ["gpus", "cpu"])
def test_a_nodes_count_is_within_kvgens_bound_on_both_faces(field):
    bound = MAX_COUNT[field]
    _refused_alike(on_node({**ROW, field: 1e308}), f"catalog.instances.my-node.{field}", bound)
    inline = spec(instance={"gpus": 1, "gpuMemory": "80Gi", "memory": "256Gi", "cpu": 32, field: bound + 1})
    _refused_alike(inline, f"instance.{field}", bound)


def test_the_bounds_hold_every_built_in_row_and_keep_a_token_times_a_length_in_int64():
    for name, row in catalog.models().items():
        for field in MODEL_COUNTS:
            value = getattr(row, "".join("_" + c.lower() if c.isupper() else c for c in field), None)
            assert not isinstance(value, int) or value <= MAX_COUNT[field], (name, field)
    per_token = 2 * MAX_COUNT["kvHeads"] * MAX_COUNT["headDim"] * 4 * MAX_COUNT["layers"]
    assert per_token * (MAX_COUNT["maxModelLen"] + MAX_COUNT["slidingWindow"]) < 2**63


@pytest.mark.heavy
def test_a_row_refused_leaves_nothing_planned_from_it():
    """Several problems at once, each at its path, and none of the planning that a refused row would feed."""
    row = {**ROW, "memory": "9Ei", "ephemeralStorage": "8Ei", "nodeSelector": {"pool": "a b"}}
    assert both(on_node(row)) == {
        size_problem("catalog.instances.my-node.memory", "9Ei"),
        size_problem("catalog.instances.my-node.ephemeralStorage", "8Ei"),
        value_problem(f"{SELECTOR}.pool", "a b"),
    }


# ----------------------------------------------------------------------------- 3. model.id

HF_FORM = "Repo id must be in the form 'repo_name' or 'namespace/repo_name'"
HF_CHARS = (
    "Repo id must use alphanumeric chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and the "
    "maximum length is 96"
)
HF_DOUBLES = "Cannot have -- or .. in repo_id"
HF_GIT = "Repo_id cannot end by '.git'"
HF_HINT = (
    "write the model's id on the Hub, e.g. Qwen/Qwen3-8B; weights that are not on the Hub are served from a claim, "
    "under any name (model.uri: pvc://CLAIM[/PATH], or model.cache with download: false)"
)
NOT_HF = [
    ("acme/x y", HF_CHARS),
    ("a b", HF_CHARS),
    ("acme/x\n", HF_CHARS),
    ("acme/\x1b[2Jx", HF_CHARS),
    ("acme/x\u00a0y", HF_CHARS),
    ("café/x", HF_CHARS),  # ASCII only
    ("-acme/x", HF_CHARS),
    ("acme/x.", HF_CHARS),
    (".hidden", HF_CHARS),
    ("acme/" + "x" * 97, HF_CHARS),
    ("acme/", HF_CHARS),
    ("/x", HF_CHARS),
    ("datasets/acme/x", HF_FORM),
    ("acme/../x", HF_FORM),
    ("acme/x..y", HF_DOUBLES),
    ("acme--corp/x", HF_DOUBLES),
    ("acme/x.git", HF_GIT),
    ("--trust-remote-code", HF_CHARS),  # vllm serve's positional model, read as a flag
]


def hf_problem(model_id: str, words: str) -> tuple:
    message = (
        f"{quoted(model_id)} is not a Hugging Face repo id, yet the weights are downloaded from Hugging Face by it: "
        f'huggingface_hub refuses it ("{words}"; validate_repo_id)'
    )
    return ("model.id", message, HF_HINT)


def name_problem(model_id: str) -> tuple:
    message = (
        f"{quoted(model_id)} holds whitespace or a control character; vLLM serves the model under this name "
        "(--served-model-name), which clients send in every request"
    )
    return ("model.id", message, "name the model without whitespace or control characters, e.g. acme/support-llama")


@pytest.mark.heavy
@pytest.mark.parametrize("model_id, words", NOT_HF)
def test_a_model_downloaded_by_its_id_needs_a_hugging_face_repo_id(model_id, words):
    """vLLM (and model.cache's `hf download`) download the model by model.id: one huggingface_hub refuses passed,
    spaces, '..', control characters and all. Described inline or not, nothing else is looked up for it."""
    expected = {hf_problem(model_id, words)}
    assert both(spec(model={"id": model_id})) == expected
    assert both(spec(model={"id": model_id, **INLINE})) == expected
    assert both(spec(model={"id": model_id, **INLINE, "cache": {"claimTemplate": {}}})) == expected


LOCAL = [
    {"uri": "pvc://weights/m"},
    {"cache": {"claim": {"name": "weights", "path": "m"}, "download": False}},
]


@pytest.mark.heavy
@pytest.mark.parametrize("source", LOCAL, ids=["uri", "cache-without-download"])
def test_a_model_served_from_a_claim_is_named_by_its_id_without_whitespace_or_control_characters(source):
    """model.uri, or model.cache with download: false: vLLM serves the claim's files under model.id, which need
    not be a repo id (the Hugging Face rule would refuse legitimate names of your own), but is never blank."""
    for model_id in ("my model", "acme/m\tv2", "acme/m\x1b[2J", "acme/x\u00a0y", "acme/x\u3000y"):
        assert both(spec(model={"id": model_id, **INLINE, **source})) == {name_problem(model_id)}, model_id
    for model_id in ("acme/m[bold]", "my-model.git", "acme--corp/m", "org/team/m", "Qwen/Qwen3-8B"):
        assert both(spec(model={"id": model_id, **INLINE, **source})) == set(), model_id


@pytest.mark.heavy
def test_legitimate_ids_are_accepted_and_every_built_in_row_passes():
    assert both(spec(model={"id": "Qwen/Qwen3-8B"})) == set()
    assert both(spec(model={"id": "acme/support_llama-3.1.8b", **INLINE})) == set()
    assert both(spec(model={"id": "gpt2", **INLINE})) == set()
    assert [m for m in catalog.models() if catalog.hf_repo_id_problem(m)] == []
    assert catalog.check_rows({"models": catalog.models(), "instances": catalog.instances()}) == []


@pytest.mark.heavy
@pytest.mark.parametrize("key", ["acme/x y", "acme/x\ty", "acme/x\u3000y", " acme/x"])
def test_a_catalog_rows_key_holds_no_whitespace_or_control_character(key):
    """A row's key is the model.id that names it: checked as a name (a row may serve weights of your own),
    so a key with markup or '..' is a row, one with whitespace never could be named."""
    message = (
        f"{quoted(key)} holds whitespace or a control character, which no model id may (model.id names this row by it)"
    )
    expected = {(f"catalog.models.{key}", message, "key the row by the model's Hugging Face id, e.g. Qwen/Qwen3-8B")}
    assert both(spec(catalog={"models": {key: MODEL_ROW}})) == expected
    fine = spec(catalog={"models": {"acme/m[bold]..v2": MODEL_ROW}}, model={"id": "acme/m[bold]..v2", **LOCAL[0]})
    assert both(fine) == set()


@pytest.mark.heavy
def test_the_rules_are_the_charts_and_huggingface_hubs():
    """The chart matches the pattern kvgen does, and refuses the characters kvgen does: Unicode's Cc, Zs, Zl, Zp
    (every character str.isspace() calls whitespace among them)."""
    template = (ROOT / "charts/kvgen/templates/plan/_resolve.tpl").read_text()
    assert f'regexMatch "{catalog.HF_REPO_ID}" $mid' in template
    assert template.count("regexMatch `[\\p{Cc}\\p{Z}]`") == 2
    for words in (catalog.HF_FORM, catalog.HF_CHARS, catalog.HF_DOUBLES, catalog.HF_GIT):
        assert f'"{words}"' in template
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    refused = set(re.findall(catalog.NAME_REFUSED, every))
    assert refused == {c for c in every if unicodedata.category(c) in ("Cc", "Zs", "Zl", "Zp")}
    assert {c for c in every if c.isspace()} <= refused


@pytest.mark.contract
def test_the_words_are_huggingface_hubs_own():
    """huggingface_hub 2.4.0 (the contract venv's, the vLLM image's) refuses exactly the ids kvgen refuses, each
    with the words kvgen quotes."""
    python = cs.contract_python_or_skip()
    ids = [m for m, _w in NOT_HF] + ["Qwen/Qwen3-8B", "gpt2", "a_/_b", "a" * 96, "x/" + "y" * 96, "a-_.b/c"]
    code = (
        "import json, sys\n"
        "from huggingface_hub.utils import validate_repo_id\n"
        "out = []\n"
        "for i in json.load(sys.stdin):\n"
        "    try:\n"
        "        validate_repo_id(i); out.append(None)\n"
        "    except Exception as e:\n"
        "        out.append(str(e))\n"
        "print(json.dumps(out))\n"
    )
    run = subprocess.run([python, "-c", code], input=json.dumps(ids), capture_output=True, text=True, check=True)
    for model_id, theirs in zip(ids, json.loads(run.stdout), strict=True):
        ours = catalog.hf_repo_id_problem(model_id)
        assert (ours is None) == (theirs is None), (model_id, theirs)
        assert ours is None or theirs.startswith(ours), (model_id, theirs)


# ----------------------------------------------------------------------------- a --catalog file (helm -f FILE)


def _line_of(text: str, needle: str) -> int:
    (n,) = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return n


@pytest.mark.heavy
def test_a_catalog_file_is_refused_with_file_and_line_as_helm_f_refuses_it():
    """kvgen --catalog FILE names each problem's file:line; the same file given with helm -f is the values'
    catalog, refused by the chart in the same words at the same paths."""
    rows = {
        "models": {"acme/x y": MODEL_ROW, "acme/big": {**MODEL_ROW, "weights": "9Ei"}},
        "instances": {"my-node": {**ROW, "memory": "8Ei", "nodeSelector": {"gpu pool": "a b"}}},
    }
    text = dump({"catalog": rows})
    with pytest.raises(SpecError) as refused:
        user_catalog.parse(text, "own.yaml")
    ours = problem_triples(refused.value)
    assert ours == {
        (
            "catalog.models.acme/x y",
            f"{quoted('acme/x y')} holds whitespace or a control character, which no model "
            "id may (model.id names this row by it)",
            "key the row by the model's Hugging Face id, e.g. Qwen/Qwen3-8B",
        ),
        size_problem("catalog.models.acme/big.weights", "9Ei"),
        size_problem("catalog.instances.my-node.memory", "8Ei"),
        key_problem(f"{SELECTOR}.gpu pool", "gpu pool"),
        value_problem(f"{SELECTOR}.gpu pool", "a b"),
    }
    assert helm.problems(spec(catalog=copy.deepcopy(rows))) == ours
    where = {format_path(p.path): (p.location.file, p.location.line) for p in refused.value.problems}
    assert where["catalog.models.acme/big.weights"] == ("own.yaml", _line_of(text, "9Ei"))
    assert where["catalog.instances.my-node.memory"] == ("own.yaml", _line_of(text, "8Ei"))
    assert where[f"{SELECTOR}.gpu pool"] == ("own.yaml", _line_of(text, "gpu pool"))
    assert "own.yaml:" in str(refused.value) and f"{SELECTOR}.gpu pool: 'gpu pool' is not a label key" in str(
        refused.value
    )
    # the example catalog file is legitimate, and loads
    assert user_catalog.parse((ROOT / "examples/catalogs/onprem.yaml").read_text(), "onprem.yaml")
