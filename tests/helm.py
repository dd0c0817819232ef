"""Rendering the chart with the real Helm v4 engine (helm-python-sdk, in-process, offline)."""

from __future__ import annotations

import json
import re
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
    return parse_objects(render(values, namespace=namespace, kube_version=kube_version))


def parse_objects(rendered: dict[str, str]) -> list[dict[str, Any]]:
    """The objects of a render (template -> text), NOTES.txt left out."""
    out = []
    loader = YAML(typ="safe", pure=True)
    for template, text in sorted(rendered.items()):
        if template.endswith("NOTES.txt"):
            continue
        out += [doc for doc in loader.load_all(text) if doc]
    return out


def by_identity(objs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Objects keyed by (kind, name): comparison ignores document order."""
    keyed = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    assert len(keyed) == len(objs), "two objects share a kind and name"
    return keyed


_PROBLEM_LINE = re.compile(r"^  (?P<path>.+?): (?P<message>.*?)(?: \(hint: (?P<hint>.*)\))?$")


def problems(values: dict[str, Any], kube_version: str = "1.33") -> set[tuple[str, str, str | None]]:
    """The problems the chart's templates fail with (kvgen.context lists them one a line,
    "  path: message (hint: hint)"), as (path, message, hint); a rendered chart has none. Values
    Helm's schema refuses raise HelmValuesError."""
    try:
        render(values, kube_version=kube_version)
    except helm.HelmRenderError as err:
        found = {(m["path"], m["message"], m["hint"]) for m in map(_PROBLEM_LINE.match, str(err).splitlines()) if m}
        assert found, str(err)
        return found
    return set()


def notes(values: dict[str, Any], kube_version: str = "1.33") -> str:
    """The rendered NOTES.txt."""
    return next(text for name, text in render(values, kube_version=kube_version).items() if name.endswith("NOTES.txt"))


def notes_warnings(text: str) -> list[str]:
    """The warnings NOTES.txt lists ("Warning: ..." lines), in order."""
    return [line.removeprefix("Warning: ") for line in text.splitlines() if line.startswith("Warning: ")]
