"""An unknown key in the chart's values fails as it does in kvgen: at its spec path, in kvgen's
words ("unknown key 'kvCacheOffloding'"), with kvgen's hint ("did you mean 'kvCacheOffloading'?",
else the allowed keys), every one at once, from templates/validate.yaml (values.schema.json leaves
unknown keys of kvgen's objects to the templates: Helm's validator would say only "at '':
additional properties 'kvCacheOffloding' not allowed"). Types, enums and ranges stay the schema's."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import helm
import helm_cli
import helm_python
import pytest
from conftest import EXAMPLES, ROOT, kube_version_of, problem_set
from ruamel.yaml import YAML

BASE: dict[str, Any] = YAML(typ="safe").load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text())


def _with(**changes: Any) -> dict[str, Any]:
    values = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = values
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return values


TYPOS = {
    "top level": _with(kvCacheOffloding={"cpuMemoryUtilization": 0.25}),
    "nested": _with(model__revison="main"),
    "inside a list item": _with(
        kvCacheOffloading__secondary=[
            {"fileSystem": {"emptyDir": {"size": "10Gi"}}},
            {"fileSystem": {"emptyDir": {"size": "1Gi", "sizeLimit": "1Gi"}}},
        ]
    ),
    "inside a map of objects": _with(catalog={"instances": {"Standard_X": {"ephemeralStorag": "2Ti"}}}),
    "several at once": _with(modle={"id": "x"}, vllm__extraArg=["--x"], service__tpye="ClusterIP"),
}


@pytest.mark.parametrize("case", sorted(TYPOS))
def test_an_unknown_key_is_the_same_problem_in_the_chart_and_in_kvgen(case: str) -> None:
    values = TYPOS[case]
    ours = problem_set(values)
    assert ours and all(message.startswith("unknown key ") for _path, message, _hint in ours)
    assert helm.problems(values) == ours


def test_the_typo_of_the_issue_names_its_path_and_what_was_meant() -> None:
    assert helm.problems(TYPOS["top level"]) == {
        ("kvCacheOffloding", "unknown key 'kvCacheOffloding'", "did you mean 'kvCacheOffloading'?")
    }
    assert helm.problems(TYPOS["inside a list item"]) == {
        (
            "kvCacheOffloading.secondary[1].fileSystem.emptyDir.sizeLimit",
            "unknown key 'sizeLimit'",
            "did you mean 'size'?",
        )
    }


def test_helms_global_stays_the_charts_own() -> None:
    assert helm.problems(_with(**{"global": {"storageClass": "x", "team": {"name": "ml"}}})) == set()


def test_a_wrong_type_is_still_helms_schema_error() -> None:
    with pytest.raises(helm_python.HelmValuesError):
        helm.render(_with(replicas="two"))


@pytest.mark.heavy
def test_the_real_helm_cli_lists_every_unknown_key_with_its_path(tmp_path: Path) -> None:
    values = _with(
        kvCacheOffloding={"cpuMemoryUtilization": 0.25},
        model__revison="main",
        kvCacheOffloading__secondary=[{"fileSystem": {"emptyDir": {"size": "10Gi", "sise": "1Gi"}}}],
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps(values))
    result = helm_cli.run("template", "x", str(helm.CHART), "-f", str(spec))
    assert result.returncode != 0
    assert "additional properties" not in result.stderr
    for line in (
        "kvgen: 3 problem(s) in the values; nothing was rendered:",
        "  kvCacheOffloding: unknown key 'kvCacheOffloding' (hint: did you mean 'kvCacheOffloading'?)",
        "  kvCacheOffloading.secondary[0].fileSystem.emptyDir.sise: unknown key 'sise' (hint: did you mean 'size'?)",
        "  model.revison: unknown key 'revison' (hint: allowed keys: id, uri, ",
    ):
        assert line in result.stderr, result.stderr


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_helm_lint_strict_still_passes_on_the_examples(example: Path) -> None:
    result = helm_cli.run(
        "lint", str(helm.CHART), "--strict", "-f", str(example), "--kube-version", kube_version_of(example)
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_keys_file_is_generated_from_the_spec_schema() -> None:
    from kvgen.spec.schema import spec_keys_text

    assert (helm.CHART / "files" / "spec-keys.json").read_text() == spec_keys_text()
