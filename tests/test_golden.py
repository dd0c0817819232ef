"""Every example renders to exactly its committed golden file, and every object is valid
Kubernetes 1.33 (checked here with kubernetes-validate's own entry point, independent of
kvgen's cached validator). Regenerate goldens only with scripts/regenerate."""

from __future__ import annotations

import kubernetes_validate
from ruamel.yaml import YAML

from conftest import EXAMPLES, GOLDEN, ROOT
from kvgen.compiler import compile_text


def test_there_are_enough_examples():
    assert len(EXAMPLES) >= 16
    assert sorted(p.name for p in GOLDEN.glob("*.yaml")) == sorted(p.name for p in EXAMPLES)


def test_render_equals_golden(example):
    rendered = "".join(r.yaml for r in compile_text(example.read_text(), str(example)))
    golden = (GOLDEN / example.name).read_text()
    assert rendered == golden, f"{example.name} differs from golden/; if intended, run scripts/regenerate and review the diff"


def test_golden_objects_are_valid_kubernetes_1_33(example):
    docs = [d for d in YAML(typ="safe", pure=True).load_all((GOLDEN / example.name).read_text()) if d]
    assert docs
    for doc in docs:
        kubernetes_validate.validate(doc, "1.33.0", strict=True)


def test_render_is_deterministic(example):
    first = "".join(r.yaml for r in compile_text(example.read_text(), str(example)))
    second = "".join(r.yaml for r in compile_text(example.read_text(), str(example)))
    assert first == second


def test_examples_point_editors_at_the_schema(example):
    assert example.read_text().startswith("# yaml-language-server: $schema=../schemas/kvgen.schema.json\n")
    assert (ROOT / "schemas" / "kvgen.schema.json").is_file()
