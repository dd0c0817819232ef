"""`kvgen catalog`: what the catalog holds, listed and shown, filtered by GPU and GPU memory, as text,
json or yaml, with --catalog files merged as render merges them."""

from __future__ import annotations

import json
import os

import pytest
from conftest import ROOT, run_kvgen
from ruamel.yaml import YAML

from kvgen.data import catalog

ONPREM = str(ROOT / "examples" / "catalogs" / "onprem.yaml")
load = YAML(typ="safe", pure=True).load


def _ok(*args: str, env: dict | None = None) -> str:
    result = run_kvgen("catalog", *args, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.heavy
def test_models_lists_every_model_with_its_sizing_fields():
    out = _ok("models").splitlines()
    assert out[0].split() == ["MODEL", "WEIGHTS", "QUANTIZATION", "LAYERS", "KV", "HEADS", "CONTEXT"]
    rows = {line.split()[0]: line.split()[1:] for line in out[1:]}
    assert sorted(rows) == sorted(catalog.models())
    assert rows["meta-llama/Llama-3.1-8B-Instruct"] == ["15Gi", "bf16", "32", "8", "131072"]
    assert rows["openai/gpt-oss-120b"][:2] == ["61Gi", "mxfp4"]


@pytest.mark.heavy
def test_models_show_each_checkpoints_quantization_in_the_table_and_json():
    """The checkpoint's quantization (models.yaml `quantization`) is a column and a field of every
    row; a catalog file's row without one says bf16, the format render plans it with."""
    table = {line.split()[0]: line.split()[2] for line in _ok("models").splitlines()[1:]}
    listed = {m["name"]: m for m in json.loads(_ok("models", "-o", "json", "--catalog", ONPREM))}
    for name, row in catalog.models().items():
        assert table[name] == row["quantization"] == listed[name]["quantization"], name
    assert {"bf16", "fp8", "mxfp4"} <= set(table.values())
    own = listed["acme/support-llama-3.1-8b"]
    in_file = load((ROOT / "examples" / "catalogs" / "onprem.yaml").read_text())["catalog"]["models"]
    assert "quantization" not in in_file["acme/support-llama-3.1-8b"]
    assert own["quantization"] == "bf16"
    assert load(_ok("models", "-o", "yaml", "--catalog", ONPREM)) == list(listed.values())


@pytest.mark.heavy
def test_instances_lists_every_type_with_its_gpus_memory_and_disk():
    out = _ok("instances").splitlines()
    assert out[0].split() == ["INSTANCE", "GPUS", "GPU", "MODEL", "GPU", "MEMORY", "HOST", "RAM", "LOCAL", "DISK"]
    names = [line.split()[0] for line in out[1:]]
    assert names == sorted(catalog.instances())
    (row,) = [line for line in out if line.startswith("Standard_NC24ads_A100_v4 ")]
    assert row.split() == ["Standard_NC24ads_A100_v4", "1", "NVIDIA", "A100", "80GB", "PCIe", "80Gi", "220Gi", "960Gi"]


@pytest.mark.heavy
def test_json_is_every_field_sorted_by_name():
    models = json.loads(_ok("models", "-o", "json"))
    assert [m["name"] for m in models] == sorted(catalog.models())
    first = models[0]
    assert list(first)[0] == "name" and {"architecture", "layers", "kvHeads", "headDim", "weights"} <= set(first)
    instances = json.loads(_ok("instances", "-o", "json"))
    assert [i["name"] for i in instances] == sorted(catalog.instances())
    assert _ok("instances", "-o", "json") == _ok("instances", "-o", "json")  # deterministic
    assert load(_ok("models", "-o", "yaml")) == models


@pytest.mark.heavy
def test_instances_filter_by_gpu_model_and_gpu_memory():
    a100 = json.loads(_ok("instances", "--gpu", "a100", "-o", "json"))
    assert a100 and all("a100" in i["gpuModel"].lower() for i in a100)
    assert {i["name"] for i in a100} == {
        n for n, r in catalog.instances().items() if "A100" in str(r.get("gpuModel") or "")
    }
    big = json.loads(_ok("instances", "--min-gpu-memory", "80Gi", "-o", "json"))
    assert "p5.48xlarge" in {i["name"] for i in big} and "g5.12xlarge" not in {i["name"] for i in big}
    assert all(i["gpus"] > 0 for i in big)
    both = json.loads(_ok("instances", "--gpu", "A100", "--min-gpu-memory", "80Gi", "-o", "json"))
    assert {i["name"] for i in both} == {i["name"] for i in a100} & {i["name"] for i in big}
    assert "Standard_NC24ads_A100_v4" in {i["name"] for i in both} and "a2-highgpu-1g" not in {i["name"] for i in both}
    bad = run_kvgen("catalog", "instances", "--min-gpu-memory", "lots")
    assert bad.returncode == 2 and "--min-gpu-memory 'lots' is not a quantity" in bad.stderr


@pytest.mark.heavy
def test_show_prints_one_row_as_a_catalog_file_holds_it():
    shown = load(_ok("show", "g5.12xlarge"))
    assert shown == {
        "catalog": {"instances": {"g5.12xlarge": json.loads(json.dumps(catalog.instances()["g5.12xlarge"]))}}
    }
    model = json.loads(_ok("show", "meta-llama/Llama-3.1-8B-Instruct", "-o", "json"))
    assert model["catalog"]["models"]["meta-llama/Llama-3.1-8B-Instruct"]["kvHeads"] == 8


@pytest.mark.heavy
def test_show_of_an_unknown_name_fails_with_a_near_typo_only():
    typo = run_kvgen("catalog", "show", "g5.12xlage")
    assert typo.returncode == 1 and typo.stdout == ""
    assert "'g5.12xlage' is neither a model nor an instance type of the catalog" in typo.stderr
    assert "did you mean 'g5.12xlarge'?" in typo.stderr
    other = run_kvgen("catalog", "show", "mistralai/Mixtral-8x7B-Instruct-v0.1")
    assert other.returncode == 1 and "did you mean" not in other.stderr
    assert "`kvgen catalog models` and `kvgen catalog instances` list what the catalog holds" in other.stderr


@pytest.mark.heavy
def test_catalog_files_are_merged_as_render_merges_them():
    assert "dgx-a100-80g" not in _ok("instances")
    listed = json.loads(_ok("instances", "--catalog", ONPREM, "--gpu", "A100-SXM4", "-o", "json"))
    assert [i["name"] for i in listed] == ["dgx-a100-80g"]
    assert listed[0]["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8"}
    assert "acme/support-llama-3.1-8b" in _ok("models", env={"KVGEN_CATALOG": ONPREM})
    shown = load(_ok("show", "acme/support-llama-3.1-8b", "--catalog", ONPREM))
    assert shown["catalog"]["models"]["acme/support-llama-3.1-8b"]["weights"] == "15Gi"


@pytest.mark.heavy
def test_the_catalog_subcommands_complete_in_the_shell():
    env = {"_KVGEN_COMPLETE": "complete_bash", "COMP_WORDS": "kvgen catalog ", "COMP_CWORD": "2"}
    result = run_kvgen(env={**os.environ, **env})
    assert result.stdout.split() == ["models", "instances", "show", "import"]
    env = {"_KVGEN_COMPLETE": "complete_bash", "COMP_WORDS": "kvgen catalog show g5.1", "COMP_CWORD": "3"}
    assert run_kvgen(env={**os.environ, **env}).stdout.split() == ["g5.12xlarge", "g5.16xlarge"]


def _as_catalog_file(rows: list[dict], prefix: str = "") -> str:
    """Printed rows pasted into a catalog file, each under its name (with ``prefix``: a new row)."""
    table = {f"{prefix}{row['name']}": {k: v for k, v in row.items() if k != "name"} for row in rows}
    return json.dumps({"catalog": {"instances": table}})  # JSON is YAML: a catalog file as it is


@pytest.mark.heavy
def test_every_printed_instance_row_pastes_back_into_a_catalog_file_as_the_same_row(tmp_path):
    """What `kvgen catalog instances -o yaml` prints for EVERY row (a CPU type's gpuMemory "0" and
    localDisk "0" included) is a catalog file's row: pasted under its own name or as a new type, it
    loads and lists as the very same row."""
    printed = load(_ok("instances", "-o", "yaml"))
    assert len(printed) == len(catalog.instances())
    assert any(row["gpus"] == 0 and row["gpuMemory"] == "0" for row in printed)  # the CPU rows are there
    same, copies = tmp_path / "same.yaml", tmp_path / "copies.yaml"
    same.write_text(_as_catalog_file(printed))
    copies.write_text(_as_catalog_file(printed, "copy-of-"))
    assert load(_ok("instances", "-o", "yaml", "--catalog", str(same))) == printed
    relisted = {row["name"]: row for row in load(_ok("instances", "-o", "yaml", "--catalog", str(copies)))}
    for row in printed:
        assert relisted[f"copy-of-{row['name']}"] == {**row, "name": f"copy-of-{row['name']}"}
        assert relisted[row["name"]] == row
