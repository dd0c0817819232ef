"""The project's own examples/ validates as one batch and renders as one tree (README "The
examples"): every spec under its own name in its directory, the KAITO seeds without two copies of
one ConfigMap, and the tree without seeds/ (their objects are their native twins') free of any
object defined twice, as `kubectl apply -k` requires."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, run_kvgen
from ruamel.yaml import YAML

EXAMPLES = ROOT / "examples"


@pytest.mark.heavy
def test_the_examples_validate_as_one_batch_seeds_included() -> None:
    result = run_kvgen("validate", "--kube-version", "1.34", str(EXAMPLES))
    assert result.returncode == 0, result.stderr
    assert "defined twice" not in result.stderr


@pytest.mark.heavy
def test_the_examples_render_as_one_tree_and_without_seeds_define_each_object_once(tmp_path: Path) -> None:
    everything = run_kvgen("render", "-q", "--kube-version", "1.34", str(EXAMPLES), "-o", str(tmp_path / "all"))
    assert everything.returncode == 0, everything.stderr
    assert (tmp_path / "all" / "seeds" / "kustomization.yaml").is_file()

    result = run_kvgen(
        "render", "-q", "--kube-version", "1.34", "--exclude", "seeds", str(EXAMPLES), "-o", str(tmp_path / "out")
    )
    assert result.returncode == 0, result.stderr
    ids = Counter(
        (doc["apiVersion"], doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"])
        for path in sorted((tmp_path / "out").glob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in YAML(typ="safe").load_all(path.read_text())
        if doc
    )
    assert [i for i, n in ids.items() if n > 1] == []
    specs = [p for p in EXAMPLES.glob("*.yaml") if "model:" in p.read_text()]
    rendered = [p for p in (tmp_path / "out").glob("*.yaml") if p.name != "kustomization.yaml"]
    assert len(rendered) == len(specs)
