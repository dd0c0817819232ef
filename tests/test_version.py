"""One version: kvgen/__init__.py is the source; the package, `kvgen --version`, Chart.yaml and
every copy in the README, docs and examples follow it (tools/set_version.py)."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT
from ruamel.yaml import YAML

from kvgen import __version__
from kvgen.data import catalog
from tools import set_version


def test_every_copy_of_the_version_is_the_source():
    assert set_version.stale() == []


def test_the_copies_are_found_where_users_read_them():
    where = {(f, what) for f, _, _, what in set_version.found()}
    # the chart's two fields, and at least one copy for each way of installing kvgen
    assert ("charts/kvgen/Chart.yaml", "the chart's version") in where
    assert ("charts/kvgen/Chart.yaml", "the chart's appVersion") in where
    files = {f for f, _ in where}
    assert {"README.md", "examples/flux/gemma-4-12b-helmrelease.yaml", "examples/lmcache-in-container.yaml"} <= files


def test_the_package_and_the_chart_carry_the_source_version():
    assert importlib.metadata.version("kvgen") == __version__  # hatch's dynamic version: kvgen/__init__.py
    chart = YAML(typ="safe").load((ROOT / "charts" / "kvgen" / "Chart.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == __version__


def test_kvgen_version_names_kvgen_and_the_pinned_runtimes():
    out = subprocess.run(
        [sys.executable, "-m", "kvgen", "--version"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    rt = catalog.runtime()
    assert out == f"kvgen {__version__} (vLLM {rt['vllm']['version']}, LMCache {rt['lmcache']['version']})\n"


@pytest.fixture
def repo_copy(tmp_path):
    """The files set-version reads and writes, copied (the real tree is never touched)."""
    for rel in (
        "kvgen/__init__.py",
        "charts/kvgen/Chart.yaml",
        "charts/kvgen/README.md",
        "README.md",
        ".pre-commit-hooks.yaml",
        "action.yml",
    ):
        if (ROOT / rel).exists():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, tmp_path / rel)
    for folder in ("docs", "examples", "ci", "images"):
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path


@pytest.mark.heavy
def test_set_version_rewrites_every_copy_and_leaves_no_old_one(repo_copy):
    before = set_version.found(repo_copy)
    changed = set_version.set_version("9.8.7", repo_copy)
    after = set_version.found(repo_copy)
    assert set_version.source_version(repo_copy) == "9.8.7"
    assert {v for _, _, v, _ in after} == {"9.8.7"}
    assert [(f, line, what) for f, line, _, what in before] == [(f, line, what) for f, line, _, what in after]
    assert {
        "charts/kvgen/Chart.yaml",
        "README.md",
        "action.yml",
        "images/Dockerfile",
        "images/kvgen.Dockerfile",
    } <= set(changed)


def test_a_copy_left_behind_is_named_with_file_and_line(repo_copy):
    chart = repo_copy / "charts" / "kvgen" / "Chart.yaml"
    chart.write_text(chart.read_text().replace(f'appVersion: "{__version__}"', 'appVersion: "0.0.9"'))
    (problem,) = set_version.stale(repo_copy)
    line = next(i for i, t in enumerate(chart.read_text().splitlines(), 1) if t.startswith("appVersion"))
    assert (
        problem
        == f"charts/kvgen/Chart.yaml:{line}: the chart's appVersion is 0.0.9, kvgen/__init__.py says {__version__}"
    )


def test_set_version_refuses_what_is_not_a_release_version(repo_copy):
    with pytest.raises(SystemExit, match="'v1.2' is not a release version"):
        set_version.set_version("v1.2", repo_copy)
    assert set_version.source_version(repo_copy) == __version__
