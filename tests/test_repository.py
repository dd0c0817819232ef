"""The project's identity, configured once: the repository URL of pyproject's [project.urls] is the
one every README, doc, example, chart field, workflow and image name uses; no placeholder host or
organisation is left for a user to trip over; the license is the one the package declares."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from conftest import ROOT
from ruamel.yaml import YAML

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SOURCE = PYPROJECT["project"]["urls"]["Source"]
OWNER = re.fullmatch(r"https://github\.com/([^/]+)/kvgen", SOURCE)[1]  # type: ignore[index]

# What a user reads or runs: docs, examples, the chart, the CI entries, images and scripts.
SHIPPED_GLOBS = (
    "*.md",
    "docs/**/*.md",
    "examples/**/*.yaml",
    "examples/**/*.md",
    "charts/kvgen/*.yaml",
    "charts/kvgen/README.md",
    "charts/kvgen/files/runtime.yaml",
    ".pre-commit-hooks.yaml",
    "action.yml",
    "ci/**/*.yml",
    ".github/**/*.yml",
    "images/**/*",
    "scripts/*",
    "tools/*.py",
)
PLACEHOLDERS = re.compile(r"\bOWNER/|YOUR-ORG|\bregistry\.example\.com|\bREGISTRY/|\bexample\.com/[a-z]")


def shipped() -> list[Path]:
    return sorted({p for g in SHIPPED_GLOBS for p in ROOT.glob(g) if p.is_file() and p.suffix not in (".json", ".tgz")})


def test_no_placeholder_host_or_org_is_left():
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in shipped()
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if PLACEHOLDERS.search(line)
    ]
    assert found == []


def test_the_placeholder_check_sees_one():
    assert PLACEHOLDERS.search("pipx install git+https://github.com/OWNER/kvgen.git")
    assert PLACEHOLDERS.search("image: registry.example.com/kvgen/vllm-lmcache:1")
    assert not PLACEHOLDERS.search("deviceClassName: gpu.example.com")  # a DRA class name, not a host


def test_every_repository_and_registry_mention_is_the_configured_one():
    github = re.compile(r"github(?:usercontent)?\.com/([A-Za-z0-9_.-]+)/kvgen\b")
    ghcr = re.compile(r"ghcr\.io/([A-Za-z0-9_.-]+)/(?:kvgen|vllm-lmcache|charts)\b")
    owners = {
        (m[1], f"{p.relative_to(ROOT)}")
        for p in shipped()
        for pattern in (github, ghcr)
        for m in pattern.finditer(p.read_text(errors="replace"))
    }
    assert {o for o, _ in owners} == {OWNER}, sorted(owners)
    assert len(owners) > 10  # README, chart, examples, docs all name it


def test_the_chart_and_the_package_name_the_same_project():
    chart = YAML(typ="safe").load((ROOT / "charts" / "kvgen" / "Chart.yaml").read_text())
    assert chart["home"] == SOURCE and SOURCE in chart["sources"]
    assert chart["icon"] == f"https://raw.githubusercontent.com/{OWNER}/kvgen/main/charts/kvgen/icon.svg"
    assert chart["maintainers"] and all(m["name"] for m in chart["maintainers"])
    urls = PYPROJECT["project"]["urls"]
    assert urls["Homepage"] == SOURCE and urls["Issues"] == f"{SOURCE}/issues"


def test_the_license_file_is_the_apache_2_0_text_the_package_declares():
    text = (ROOT / "LICENSE").read_text()
    assert PYPROJECT["project"]["license"] == "Apache-2.0" and PYPROJECT["project"]["license-files"] == ["LICENSE"]
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text and text.count("\n") > 190  # the full text, not a stub
    chart = YAML(typ="safe").load((ROOT / "charts" / "kvgen" / "Chart.yaml").read_text())
    assert chart["annotations"]["artifacthub.io/license"] == "Apache-2.0"
