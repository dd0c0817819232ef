"""Every example renders to exactly its committed golden file, and every object is valid
Kubernetes (1.33, or the version the example's `# kube-version:` header names; checked here with
kubernetes-validate's own entry point, independent of kvgen's cached validator). Regenerate
goldens only with scripts/regenerate."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import DEFAULT_KUBE, EXAMPLES, GOLDEN, ROOT, kube_version_of, run_kvgen, validate_strictly
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text


def test_there_are_enough_examples():
    assert len(EXAMPLES) >= 16
    assert sorted(p.name for p in GOLDEN.glob("*.yaml")) == sorted(p.name for p in EXAMPLES)


def test_render_equals_golden(example):
    rendered = "".join(r.yaml for r in compile_text(example.read_text(), str(example), kube_version_of(example)))
    golden = (GOLDEN / example.name).read_text()
    assert rendered == golden, (
        f"{example.name} differs from golden/; if intended, run scripts/regenerate and review the diff"
    )


@pytest.mark.heavy
def test_golden_objects_are_valid_kubernetes(example):
    docs = [d for d in YAML(typ="safe", pure=True).load_all((GOLDEN / example.name).read_text()) if d]
    assert docs
    for doc in docs:
        validate_strictly(doc, f"{kube_version_of(example)}.0")


@pytest.mark.heavy
def test_only_examples_that_need_a_newer_kubernetes_name_one():
    """The DRA example needs 1.34 (resource.k8s.io/v1) and says so in its kubeVersion, so a reader
    runs `kvgen render` on it, and on every other example, as is: its golden is that render."""
    newer = {p.name: kube_version_of(p) for p in EXAMPLES if kube_version_of(p) != DEFAULT_KUBE}
    assert newer == {"lmcache-dra.yaml": "1.34"}
    for name in newer:
        result = run_kvgen("render", "--quiet", str(ROOT / "examples" / name))
        assert result.returncode == 0 and result.stdout == (GOLDEN / name).read_text(), result.stderr


def _render_batches() -> list[list[str]]:
    """`kvgen render` command lines that print every example once: examples of one Kubernetes
    version together, and specs that name the same objects (stdout refuses them together) apart."""
    batches: list[tuple[str, set[str], list[str]]] = []
    for example in EXAMPLES:
        version = kube_version_of(example)
        (name,) = {c.spec.object_name for c in compile_text(example.read_text(), str(example), version)}
        batch = next((b for b in batches if b[0] == version and name not in b[1]), None)
        if batch is None:
            batches.append(batch := (version, set(), []))
        batch[1].add(name)
        batch[2].append(str(example))
    return [["render", "--quiet", "--kube-version", version, *paths] for version, _names, paths in batches]


@pytest.mark.heavy
def test_render_is_deterministic_across_processes(tmp_path):
    """Every example rendered in two separate processes with different PYTHONHASHSEED (string
    hashing: set and dict order of str keys) gives the same bytes. Each process has its own empty
    cache directory, so neither can reuse what the other recorded (a replayed run, the emitter's
    memo): both compile."""
    batches = _render_batches()
    outputs = []
    for seed in ("0", "4242"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("KVGEN_")}
        env |= {"PYTHONHASHSEED": seed, "KVGEN_CACHE_DIR": str(tmp_path / f"cache-{seed}")}
        out = b""
        for argv in batches:
            proc = subprocess.run([sys.executable, "-m", "kvgen", *argv], capture_output=True, env=env, cwd=tmp_path)
            assert proc.returncode == 0, proc.stderr.decode()
            out += proc.stdout
        outputs.append(out)
    assert len(outputs[0]) > 10_000 and outputs[0] == outputs[1]


def test_examples_point_editors_at_the_schema(example):
    assert example.read_text().startswith("# yaml-language-server: $schema=../schemas/kvgen.schema.json\n")
    assert (ROOT / "schemas" / "kvgen.schema.json").is_file()
