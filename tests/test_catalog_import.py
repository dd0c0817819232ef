"""Issue 36: `kvgen catalog import PATH --id ORG/NAME`: the catalog row of any model from its config.json, derived
as the built-in rows are (kvgen.data.hf_config, which tools/catalog_models.py now uses too), for kvgen --catalog
and helm -f alike; a config it cannot size is refused with the reason."""

from __future__ import annotations

import json

import helm
import pytest
from conftest import ROOT
from ruamel.yaml import YAML
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.data import catalog

FIXTURES = ROOT / "tests" / "fixtures" / "hf-configs"
SPEC = "name: {name}\nmodel:\n  id: {model}\ninstance:\n  type: Standard_NC24ads_A100_v4\n"


def kvgen(*args: str):
    return CliRunner().invoke(app, list(args))


def explained(tmp_path, model: str, *extra: str) -> dict:
    spec = tmp_path / f"{model.replace('/', '-')}.yaml"
    spec.write_text(SPEC.format(name="llama", model=model))
    result = kvgen("explain", str(spec), "-o", "json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.heavy
def test_a_fine_tune_from_its_config_sizes_as_its_base_model_on_both_faces(tmp_path):
    # a fine-tune's config.json is its base model's: a snapshot directory of it, under another id
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "config.json").write_bytes((FIXTURES / "meta-llama--Llama-3.1-8B-Instruct.json").read_bytes())
    result = kvgen("catalog", "import", str(snapshot), "--id", "acme/llama-3.1-8b-support")
    assert result.exit_code == 0, result.output
    row_file = tmp_path / "catalog.yaml"
    row_file.write_text(result.stdout)
    row = YAML(typ="safe").load(result.stdout)["catalog"]["models"]["acme/llama-3.1-8b-support"]
    base = catalog.models()["meta-llama/Llama-3.1-8B-Instruct"]
    for key in ("architecture", "layers", "kvHeads", "headDim", "attentionHeads", "quantization", "maxModelLen"):
        assert row[key] == base[key], key
    tuned = explained(tmp_path, "acme/llama-3.1-8b-support", "--catalog", str(row_file))
    original = explained(tmp_path, "meta-llama/Llama-3.1-8B-Instruct")
    assert tuned["kvCache"]["bytesPerTokenPerGpu"] == original["kvCache"]["bytesPerTokenPerGpu"]
    assert tuned["model"]["weightsBytes"] == original["model"]["weightsBytes"]
    assert tuned["kvCache"]["tiers"] == original["kvCache"]["tiers"]
    # the chart takes the same file as values
    values = {
        **YAML(typ="safe").load(row_file.read_text()),
        **YAML(typ="safe").load(SPEC.format(name="llama", model="acme/llama-3.1-8b-support")),
    }
    kinds = [o["kind"] for o in helm.objects(values)]
    assert "Deployment" in kinds


@pytest.mark.heavy
def test_every_fixture_imports_as_its_built_in_row(tmp_path):
    # one derivation: what import prints is the generated row, less its source; each fixture as a snapshot
    # directory holds it (config.json, and a ModelOpt checkpoint's hf_quant_config.json beside it)
    built_in = catalog.models()
    for path in sorted(FIXTURES.glob("*.json")):
        if path.name.endswith(".hf_quant_config.json"):
            continue
        model_id = path.stem.replace("--", "/", 1)
        snapshot = tmp_path / path.stem
        snapshot.mkdir()
        (snapshot / "config.json").write_bytes(path.read_bytes())
        quant = FIXTURES / f"{path.stem}.hf_quant_config.json"
        if quant.exists():
            (snapshot / "hf_quant_config.json").write_bytes(quant.read_bytes())
        result = kvgen("catalog", "import", str(snapshot), "--id", model_id)
        assert result.exit_code == 0, (path.name, result.output)
        row = YAML(typ="safe").load(result.stdout)["catalog"]["models"][model_id]
        expected = dict(built_in[model_id])
        if "weights derived" not in expected["source"]:  # a published size: import derives one instead
            expected.pop("weights")
            row.pop("weights")
        assert {k: v for k, v in row.items() if k != "source"} == {
            k: v for k, v in expected.items() if k != "source"
        }, path.name


def test_a_config_kvgen_cannot_size_is_refused_with_the_reason(tmp_path):
    odd = tmp_path / "config.json"
    odd.write_text(json.dumps({"architectures": ["OddForCausalLM"], "num_hidden_layers": 2, "torch_dtype": "bfloat16"}))
    result = kvgen("catalog", "import", str(odd), "--id", "acme/odd")
    assert result.exit_code == 1
    assert "cannot size this architecture: the config has no 'num_attention_heads'" in result.stderr
    assert result.stdout == ""
    quantized = json.loads((FIXTURES / "meta-llama--Llama-3.1-8B-Instruct.json").read_text())
    quantized["quantization_config"] = {"quant_method": "bitsandbytes"}
    odd.write_text(json.dumps(quantized))
    result = kvgen("catalog", "import", str(odd), "--id", "acme/odd")
    assert result.exit_code == 1 and "quant_method 'bitsandbytes' is not mapped to a scheme" in result.stderr
    odd.write_text("[1, 2]")
    assert "not a config.json" in kvgen("catalog", "import", str(odd), "--id", "acme/odd").stderr
    missing = kvgen("catalog", "import", str(tmp_path / "nope"), "--id", "acme/odd")
    assert missing.exit_code == 1 and f"config.json: cannot read {tmp_path / 'nope'}: No such file" in missing.stderr
