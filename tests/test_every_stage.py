"""Every independent problem of a spec in one run (issue 36): a problem found by the schema, the catalog,
vLLM's flags or the node fit does not hide the others, on both faces. Planning goes on past an unknown key
and past a refused value in a section it does without (kvgen.spec.sections INDEPENDENT), with that key left
out; a later stage's problem at a refused path is not reported (it would be the default's)."""

from __future__ import annotations

import subprocess
import sys

import helm
import helm_python
import pytest
from conftest import problem_triples
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text
from kvgen.core.errors import SpecError, format_path

# a spec wrong at every stage the chart's templates see: an unknown key, a flag vLLM refuses, a port the pod
# binds twice, an autoscaling range upside down, and a 70B model on one A100 (the node fit)
EVERY_STAGE = {
    "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
    "instance": {"type": "Standard_NC24ads_A100_v4"},
    "kvCacheOffloding": {"cpu": "10Gi"},
    "vllm": {"extraArgs": ["--no-such-flag"]},
    "autoscaling": {"minReplicas": 3, "maxReplicas": 2, "keda": {"serverAddress": "http://prometheus:9090"}},
}
EXPECTED_PATHS = {
    "kvCacheOffloding",  # the schema (an unknown key)
    "vllm.extraArgs[0]",  # vLLM's flags
    "autoscaling.minReplicas",  # the spec's structure
    "parallelism.tensor",  # the node fit: the weights, and no room for a KV cache
}


def dump(data: dict) -> str:
    import io

    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, out)
    return out.getvalue()


def cli_problems(data: dict) -> set[tuple[str, str, str | None]]:
    with pytest.raises(SpecError) as err:
        compile_text(dump(data), "spec.yaml")
    return problem_triples(err.value)


def paths(triples: set[tuple[str, str, str | None]]) -> set[str]:
    return {path for path, _message, _hint in triples}


def test_kvgen_lists_a_problem_of_every_stage_in_one_run():
    found = cli_problems({"name": "demo", **EVERY_STAGE})
    assert paths(found) == EXPECTED_PATHS, sorted(found)
    fit = [m for p, m, _h in found if p == "parallelism.tensor"]
    assert any("needs 132.0 GiB of weights per GPU" in m for m in fit), fit


@pytest.mark.heavy
def test_the_chart_lists_the_same_problems_in_one_run():
    """The chart's templates go on past an unknown key, a refused flag and the spec's structure to the node
    fit, as kvgen does: the same problems, word for word."""
    ours = cli_problems({"name": "demo", **EVERY_STAGE})
    theirs = helm.problems(EVERY_STAGE)
    assert paths(theirs) == EXPECTED_PATHS, sorted(theirs)
    assert theirs == ours


@pytest.mark.heavy
def test_schema_problems_do_not_hide_the_others_on_either_face():
    """The issue's spec: `name: Bad_Name`, `replicas: -1`, `--no-such-flag` and a 70B model on one A100. The chart's
    schema leaves bounds, lengths, patterns and literals to its templates (files/spec-checks.json), which report
    them in kvgen's words and go on, as kvgen does."""
    refused = {"name": "Bad_Name", "replicas": -1, "service": {"port": 99999}, "vllm": {**EVERY_STAGE["vllm"]}}
    refused["vllm"]["env"] = [{"name": "bad name", "value": "x"}]
    found = cli_problems({**EVERY_STAGE, **refused})
    assert paths(found) == EXPECTED_PATHS | {"name", "replicas", "service.port", "vllm.env[0].name"}, sorted(found)
    assert helm.problems({**EVERY_STAGE, **refused}) == found


def test_helm_refuses_a_value_of_the_wrong_type_first():
    """What stays Helm's: a value of the wrong type (the templates could not read it) stops the chart before any
    template runs, every such value listed by Helm's validator; kvgen lists it with the rest."""
    with pytest.raises(helm_python.HelmValuesError) as err:
        helm.problems({**EVERY_STAGE, "replicas": "three", "service": {"port": "http"}})
    text = str(err.value)
    assert "/replicas" in text and "/service/port" in text
    found = cli_problems({"name": "demo", **EVERY_STAGE, "replicas": "three"})
    assert {"replicas", "vllm.extraArgs[0]", "parallelism.tensor"} <= paths(found), sorted(found)


@pytest.mark.heavy
def test_an_unknown_model_does_not_hide_the_flags_or_the_routing():
    spec = {**EVERY_STAGE, "model": {"id": "no-such-org/no-such-model"}}
    found = cli_problems({"name": "demo", **spec})
    assert {"model.id", "vllm.extraArgs[0]", "kvCacheOffloding"} <= paths(found), sorted(found)
    assert helm.problems(spec) == found


@pytest.mark.heavy
def test_a_problem_at_a_refused_key_is_not_reported_again():
    """service.port refused by the schema is left at its default; the port check does not speak of it, and a
    size above the API server's bound is not sized again (the pod's memory would be its consequence)."""
    found = cli_problems({"name": "demo", **EVERY_STAGE, "service": {"port": 99999}})
    assert [m for p, m, _h in found if p == "service.port"] == ["Input should be less than or equal to 65535"]
    huge = {
        "name": "demo",
        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
        "instance": {"type": "Standard_NC24ads_A100_v4"},
        "kvCacheOffloading": {"backend": "native", "cpu": "8Ei"},
        "vllm": {"extraArgs": ["--no-such-flag"]},
    }
    found = cli_problems(huge)
    assert [m for p, m, _h in found if p == "kvCacheOffloading.cpu"] == [
        "8Ei is above kvgen's bound of 1Pi for any size (sizes near 8 EiB overflow the 64-bit integers Kubernetes "
        "and Helm compute with)"
    ]
    assert "vllm.extraArgs[0]" in paths(found)
    assert helm.problems({k: v for k, v in huge.items() if k != "name"}) == found


@pytest.mark.heavy
@pytest.mark.parametrize(
    "refused",
    [
        {"kvCacheOffloading": {"backend": "native", "cpu": "10Gi", "evictionPolicy": "fifo"}},
        {"parallelism": {"tensor": 0}},
        {"model": {"id": "meta-llama/Llama-3.1-70B-Instruct", "maxModelLen": -5}},
    ],
    ids=["kv-cache", "parallelism", "model"],
)
def test_a_refused_value_planning_depends_on_stops_at_the_schema_on_both_faces(refused):
    """A refused value that changes what planning decides or sizes is not replaced by its default: the spec's
    other problems would be the default's. Validation stops at the schema's problems there, on both faces."""
    found = cli_problems({"name": "demo", **EVERY_STAGE, **refused})
    assert "parallelism.tensor" not in paths(found) or "parallelism" in refused, sorted(found)
    assert "vllm.extraArgs[0]" not in paths(found), sorted(found)
    assert helm.problems({**EVERY_STAGE, **refused}) == found


def test_a_missing_required_key_stops_at_the_schema():
    spec = {k: v for k, v in EVERY_STAGE.items() if k != "instance"}
    found = cli_problems({"name": "demo", **spec})
    assert paths(found) == {"instance", "kvCacheOffloding"}, sorted(found)


@pytest.mark.heavy
def test_validate_lists_every_stage_with_file_and_line(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(dump({**EVERY_STAGE, "name": "Bad_Name", "replicas": -1}))
    run = subprocess.run(
        [sys.executable, "-m", "kvgen", "validate", str(spec)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 1, run.stderr
    assert "kvgen: 7 problems found; nothing was written" in run.stderr, run.stderr
    for path in EXPECTED_PATHS | {"name", "replicas"}:
        assert f": {path}: " in run.stderr, (path, run.stderr)
    assert f"{spec}:" in run.stderr and format_path(("vllm", "extraArgs", 0)) in run.stderr
