"""Rendering the chart with the real Helm v4 engine (helm-python-sdk, in-process, offline)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import helm_python as helm
from ruamel.yaml import YAML

CHART = Path(__file__).resolve().parent.parent / "charts" / "kvgen"


@cache
def chart() -> "helm.Chart":
    return helm.Chart.load(str(CHART))


def render(values: dict[str, Any], name: str = "release", namespace: str = "default") -> dict[str, str]:
    """Template file -> rendered text (NOTES.txt included)."""
    return chart().render(values, name=name, namespace=namespace)


def objects(values: dict[str, Any], namespace: str = "default") -> list[dict[str, Any]]:
    """Every Kubernetes object Helm renders, parsed (Helm's `# Source:` lines are comments)."""
    out = []
    loader = YAML(typ="safe", pure=True)
    for template, text in sorted(render(values, namespace=namespace).items()):
        if template.endswith("NOTES.txt"):
            continue
        out += [doc for doc in loader.load_all(text) if doc]
    return out


def by_identity(objs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Objects keyed by (kind, name): comparison ignores document order."""
    keyed = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    assert len(keyed) == len(objs), "two objects share a kind and name"
    return keyed
