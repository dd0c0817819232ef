"""Issue 36: kvgen diff says what a spec change does (decisions, memory, disk, tiers, tokens, objects)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from kvgen.app.cli import app

EXAMPLE = ROOT / "examples" / "trace-sizing.yaml"


def kvgen(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def doubled(tmp_path) -> Path:
    f = tmp_path / "changed.yaml"
    f.write_text(EXAMPLE.read_text().replace("cpuMemoryUtilization: 0.5", "cpuMemoryUtilization: 0.7"))
    return f


@pytest.mark.heavy
def test_the_tier_and_memory_change_of_an_example_is_said_in_words(doubled):
    result = kvgen("diff", str(EXAMPLE), str(doubled))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "qwen2-7b-trace-sized: pod memory: 530.0 GiB -> 730.0 GiB" in lines
    assert "qwen2-7b-trace-sized: KV-cache tier cpu: 500.0 GiB -> 700.1 GiB (9,363,126 -> 13,108,388 tokens)" in lines
    changed = [ln for ln in lines if "object changed: Deployment qwen2-7b-trace-sized" in ln]
    assert changed and "resources.limits.memory" in changed[0]
    data = json.loads(kvgen("diff", str(EXAMPLE), str(doubled), "-o", "json").stdout)
    (spec,) = data["specs"]
    tier = next(c for c in spec["changes"] if c["section"] == "tiers")
    assert tier["old"] == {"bytes": 536919146496, "tokens": 9363126} and tier["new"]["tokens"] == 13108388
    assert spec["objects"]["added"] == [] and spec["only"] is None
    md = kvgen("diff", str(EXAMPLE), str(doubled), "-o", "markdown").stdout
    assert "| KV-cache tier cpu | 500.0 GiB, 9,363,126 tokens | 700.1 GiB, 13,108,388 tokens |" in md


def test_objects_added_removed_and_a_decision_are_named(tmp_path):
    native = ROOT / "examples" / "native-arc-eviction.yaml"
    off = tmp_path / "off.yaml"
    off.write_text(
        native.read_text()
        .replace("  evictionPolicy: arc\n", "  evictionPolicy: arc\n  enabled: false\n")
        .replace("  prometheusRule: true", "  prometheusRule: false")
    )
    result = kvgen("diff", str(native), str(off))
    assert result.exit_code == 0, result.output
    assert "llama-8b-arc: KV-cache offloading: enabled -> disabled" in result.stdout
    assert "llama-8b-arc: object removed: PrometheusRule llama-8b-arc-kv-cache" in result.stdout
    assert "llama-8b-arc: KV-cache tier cpu: removed" in result.stdout
    same = kvgen("diff", str(native), str(native))
    assert same.stdout == "llama-8b-arc: no change\n"


def test_a_spec_only_on_one_side_is_said(tmp_path):
    renamed = tmp_path / "renamed.yaml"
    renamed.write_text(EXAMPLE.read_text().replace("name: qwen2-7b-trace-sized", "name: qwen2-7b-other"))
    out = kvgen("diff", str(EXAMPLE), str(renamed)).stdout.splitlines()
    assert out == [f"qwen2-7b-trace-sized: only in {EXAMPLE}", f"qwen2-7b-other: only in {renamed}"]


def test_a_spec_against_its_git_revision(tmp_path, doubled):
    repo = tmp_path / "repo"
    repo.mkdir()
    spec = repo / "spec.yaml"
    spec.write_text(EXAMPLE.read_text())
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "spec.yaml"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=repo, check=True)
    spec.write_text(doubled.read_text())
    result = kvgen("diff", str(spec), "--against", "HEAD", "-o", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["old"] == f"{spec}@HEAD"
    assert any(c["what"] == "pod memory" for c in data["specs"][0]["changes"])
    missing = kvgen("diff", str(spec), "--against", "no-such-rev")
    assert missing.exit_code == 2 and "--against no-such-rev" in missing.stderr


def test_the_arguments_are_one_pair_or_one_spec_and_a_revision():
    assert kvgen("diff", str(EXAMPLE)).exit_code == 2
    assert kvgen("diff", str(EXAMPLE), str(EXAMPLE), "--against", "HEAD").exit_code == 2


def test_a_side_with_problems_fails_with_them(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("tensor: 4", "tensor: 3"))
    result = kvgen("diff", str(EXAMPLE), str(bad))
    assert result.exit_code == 1
    assert "parallelism.tensor" in result.stderr


def test_docs_name_every_key_of_the_json():
    docs = (ROOT / "docs" / "diff.md").read_text()
    for key in (
        "old",
        "new",
        "specs",
        "name",
        "only",
        "changes",
        "objects",
        "section",
        "what",
        "unit",
        "added",
        "removed",
        "changed",
        "paths",
        "more",
    ):
        assert f"`{key}`" in docs or f"`{key}[]`" in docs, key
