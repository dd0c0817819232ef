"""Rendering the chart with the real Helm v4 engine (helm-python-sdk, in-process, offline)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import helm_python as helm
from ruamel.yaml import YAML

CHART = Path(__file__).resolve().parent.parent / "charts" / "kvgen"


@cache
def chart() -> "helm.Chart":
    return helm.Chart.load(str(CHART))


def render(values: dict[str, Any], name: str = "release", namespace: str = "default", kube_version: str = "1.33") -> dict[str, str]:
    """Template file -> rendered text (NOTES.txt included), as `helm template --kube-version`
    renders it. The default is kvgen's (1.33), so both are compared for the same cluster;
    Helm's own default is the Kubernetes version it was built against.

    Chart.render does not take a Kubernetes version, so this calls the library's render entry
    point with the option `helm template --kube-version` sets (helm-python-sdk 0.2.2)."""
    from helm_python import _native

    opts = {"name": name, "namespace": namespace, "kube_version": f"v{kube_version}.0"}
    return json.loads(_native.call_string("helm_render", chart()._raw(), json.dumps(values), json.dumps(opts)))


def objects(values: dict[str, Any], namespace: str = "default", kube_version: str = "1.33") -> list[dict[str, Any]]:
    """Every Kubernetes object Helm renders, parsed (Helm's `# Source:` lines are comments)."""
    out = []
    loader = YAML(typ="safe", pure=True)
    for template, text in sorted(render(values, namespace=namespace, kube_version=kube_version).items()):
        if template.endswith("NOTES.txt"):
            continue
        out += [doc for doc in loader.load_all(text) if doc]
    return out


def by_identity(objs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Objects keyed by (kind, name): comparison ignores document order."""
    keyed = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    assert len(keyed) == len(objs), "two objects share a kind and name"
    return keyed
