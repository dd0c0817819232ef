"""Issue 36: `model.config: PATH` in a spec. A model described only by its Hugging Face config.json (a file, or a
snapshot directory, relative to the spec) is sized as the catalog would size it: the row is derived as the
built-in rows are (kvgen.data.hf_config). A config kvgen cannot read or size is refused at model.config with the
reason; the chart refuses the key (it cannot read files) with the command that gives it the row; a replayed run
is replayed only while the config holds the same bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import helm
import pytest
from conftest import ROOT
from typer.testing import CliRunner

from kvgen.app.cli import app

FIXTURES = ROOT / "tests" / "fixtures" / "hf-configs"
BASE = "meta-llama/Llama-3.1-8B-Instruct"
SPEC = "name: tuned\nmodel:\n  id: {model}\n{extra}instance:\n  type: Standard_NC24ads_A100_v4\n"


def snapshot(tmp_path, name: str = "snapshot"):
    """A fine-tune's snapshot: its base model's config.json (and what else a snapshot holds) under another id."""
    directory = tmp_path / name
    directory.mkdir()
    (directory / "config.json").write_bytes((FIXTURES / "meta-llama--Llama-3.1-8B-Instruct.json").read_bytes())
    (directory / "tokenizer.json").write_text("{}")
    return directory


def explain(spec_path, *extra: str) -> dict:
    result = CliRunner().invoke(app, ["explain", str(spec_path), "-o", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def failed(spec_path, command: str = "validate") -> str:
    result = CliRunner().invoke(app, [command, str(spec_path)])
    assert result.exit_code == 1, result.output
    return result.stderr


def test_a_fine_tune_from_its_config_renders_as_its_base_model(tmp_path):
    snapshot(tmp_path)
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text(SPEC.format(model="acme/llama-3.1-8b-support", extra="  config: snapshot\n"))
    base = tmp_path / "base.yaml"
    base.write_text(SPEC.format(model=BASE, extra=""))
    ours, theirs = explain(tuned), explain(base)
    assert ours["kvCache"]["bytesPerTokenPerGpu"] == theirs["kvCache"]["bytesPerTokenPerGpu"]
    assert ours["model"]["weightsBytes"] == theirs["model"]["weightsBytes"]
    assert ours["kvCache"]["tiers"] == theirs["kvCache"]["tiers"]
    result = CliRunner().invoke(app, ["render", str(tuned)])
    assert result.exit_code == 0, result.output
    assert "--served-model-name" not in result.stdout or "acme/llama-3.1-8b-support" in result.stdout
    assert "acme/llama-3.1-8b-support" in result.stdout


def test_the_path_is_the_spec_files_and_a_config_json_file_is_taken_too(tmp_path, monkeypatch):
    (tmp_path / "models").mkdir()
    directory = snapshot(tmp_path / "models")
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = specs / "tuned.yaml"
    spec.write_text(SPEC.format(model="acme/tuned", extra=f"  config: ../models/{directory.name}/config.json\n"))
    monkeypatch.chdir(ROOT)  # not the spec's directory
    assert explain(spec)["model"]["weightsBytes"] == explain_base(tmp_path)["model"]["weightsBytes"]


def explain_base(tmp_path) -> dict:
    base = tmp_path / "base.yaml"
    base.write_text(SPEC.format(model=BASE, extra=""))
    return explain(base)


def test_the_specs_own_catalog_row_wins_field_by_field(tmp_path):
    snapshot(tmp_path)
    spec = tmp_path / "tuned.yaml"
    spec.write_text(
        SPEC.format(model="acme/tuned", extra="  config: snapshot\n")
        + "catalog:\n  models:\n    acme/tuned:\n      weights: 20Gi\n"
    )
    assert explain(spec)["model"]["weightsBytes"] == 20 * 1024**3


def test_a_config_that_cannot_be_read_is_refused_at_model_config(tmp_path):
    spec = tmp_path / "tuned.yaml"
    spec.write_text(SPEC.format(model="acme/tuned", extra="  config: nowhere\n"))
    text = failed(spec)
    assert f"{spec}:4:3: model.config: cannot read {tmp_path / 'nowhere'}: No such file or directory" in text
    assert "hint: name a Hugging Face config.json" in text
    (tmp_path / "nowhere").write_text("not json")
    assert "model.config: cannot read" in failed(spec)
    (tmp_path / "nowhere").write_text("[1, 2]")
    assert "is not a config.json: it holds a JSON object" in failed(spec)


def test_a_config_kvgen_cannot_size_is_refused_with_the_reason(tmp_path):
    config = json.loads((FIXTURES / "meta-llama--Llama-3.1-8B-Instruct.json").read_text())
    del config["num_hidden_layers"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    spec = tmp_path / "tuned.yaml"
    spec.write_text(SPEC.format(model="acme/tuned", extra="  config: config.json\n"))
    text = failed(spec, "render")
    assert "model.config:" in text and "cannot size this architecture: the config has no 'num_hidden_layers'" in text


def test_the_chart_refuses_model_config_with_the_command_that_gives_it_the_row():
    values = {"model": {"id": "acme/tuned", "config": "snapshot"}, "instance": {"type": "Standard_NC24ads_A100_v4"}}
    found = helm.problems(values)
    assert (
        "model.config",
        "the Helm chart cannot read a file: model.config is for kvgen render, which reads it beside the spec",
        "run `kvgen catalog import snapshot --id acme/tuned > row.yaml`, pass the row with -f row.yaml and leave "
        "model.config out",
    ) in found


@pytest.mark.heavy
def test_a_replayed_run_notices_a_changed_config(tmp_path):
    directory = snapshot(tmp_path)
    spec = tmp_path / "tuned.yaml"
    spec.write_text(SPEC.format(model="acme/tuned", extra="  config: snapshot\n"))
    env = {**os.environ, "KVGEN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("KVGEN_REPLAY", None)

    def explain_text() -> str:
        run = subprocess.run(
            [sys.executable, "-m", "kvgen", "explain", str(spec), "-o", "json"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    first = explain_text()
    assert explain_text() == first  # replayed (or run again: the same bytes either way)
    assert list((tmp_path / "cache" / "runs").glob("*.json")), "the run was not recorded"
    config = json.loads((directory / "config.json").read_text())
    config["num_hidden_layers"] = 16
    (directory / "config.json").write_text(json.dumps(config))
    changed = json.loads(explain_text())
    assert changed["kvCache"]["bytesPerTokenPerGpu"] == json.loads(first)["kvCache"]["bytesPerTokenPerGpu"] // 2
