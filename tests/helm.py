"""Rendering the chart with the real Helm v4 engine (helm-python-sdk, in-process, offline)."""

from __future__ import annotations

import atexit
import json
import re
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import helm_python as helm
from ruamel.yaml import YAML

CHART = Path(__file__).resolve().parent.parent / "charts" / "kvgen"


@cache
def chart() -> helm.Chart:
    return _session_chart(helm.Chart.load(str(CHART)))


def _session_chart(c: helm.Chart) -> helm.Chart:
    _SESSION_CHARTS[id(c)] = c
    return c


# Added to a copy of the chart: the context (kvgen.context) and the plan document (kvgen.planJson) as JSON,
# beside the objects.
CONTEXT_TEMPLATE = "kvgen-context.json"
PLAN_TEMPLATE = "kvgen-plan.json"


@cache
def context_chart(replaced: tuple[tuple[str, str], ...] = ()) -> helm.Chart:
    """A copy of the chart with one more template that prints the context, and files of the chart
    (path relative to it, text) replaced."""
    tmp = Path(tempfile.mkdtemp(prefix="kvgen-chart-"))
    atexit.register(shutil.rmtree, tmp, True)
    root = tmp / "kvgen"
    shutil.copytree(CHART, root)
    (root / "templates" / CONTEXT_TEMPLATE).write_text('{{ include "kvgen.context" . }}\n', encoding="utf-8")
    (root / "templates" / PLAN_TEMPLATE).write_text('{{ include "kvgen.planJson" . }}\n', encoding="utf-8")
    for name, text in replaced:
        (root / name).write_text(text, encoding="utf-8")
    return _session_chart(helm.Chart.load(str(root)))


def render(
    values: dict[str, Any],
    name: str | None = None,
    namespace: str = "default",
    kube_version: str = "1.33",
    chart_: helm.Chart | None = None,
) -> dict[str, str]:
    """Template file -> rendered text (NOTES.txt included), as `helm template --kube-version`
    renders it. The default is kvgen's (1.33), so both are compared for the same cluster;
    Helm's own default is the Kubernetes version it was built against.

    Chart.render does not take a Kubernetes version, so this calls the library's render entry
    point with the option `helm template --kube-version` sets (helm-python-sdk 0.2.2)."""
    if name is None:  # the release kvgen's output corresponds to: named as the spec
        name = values.get("name") if isinstance(values, dict) and isinstance(values.get("name"), str) else "release"
    opts = json.dumps({"name": name, "namespace": namespace, "kube_version": f"v{kube_version}.0"})
    return dict(_render_once(chart_ or chart(), json.dumps(values), opts))


_RENDERS: dict[tuple[int, str, str], dict[str, str] | Exception] = {}
_SESSION_CHARTS: dict[int, helm.Chart] = {}  # chart() and context_chart()'s: loaded once, never changed


def _render_once(the_chart: helm.Chart, values: str, opts: str) -> dict[str, str]:
    """A render is a pure function of the chart, the values and the options: with one of the
    session's charts, each is rendered once a test process, its result (or Helm's error) kept for
    the next test that asks. A chart a test loads itself is rendered every time."""
    from helm_python import _native

    key = (id(the_chart), values, opts)
    if _SESSION_CHARTS.get(id(the_chart)) is not the_chart:
        return json.loads(_native.call_string("helm_render", the_chart._raw(), values, opts))
    if key not in _RENDERS:
        try:
            _RENDERS[key] = json.loads(_native.call_string("helm_render", the_chart._raw(), values, opts))
        except Exception as err:
            _RENDERS[key] = err
    found = _RENDERS[key]
    if isinstance(found, Exception):
        raise found.with_traceback(None)
    return found


def values_of(path: Path, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """A spec file as Helm values (keys in ``drop`` left out)."""
    values = YAML(typ="safe", pure=True).load(path.read_text())
    for key in drop:
        values.pop(key, None)
    return values


HELM_ONLY = "/templates/tests/"  # `helm test`'s pod: Helm's, not kvgen's output


def _objects(rendered: dict[str, str], helm_only: bool = False) -> list[dict[str, Any]]:
    """The objects of kvgen's output (helm_only: those of the templates only Helm renders)."""
    out = []
    loader = YAML(typ="safe", pure=True)
    for template, text in sorted(rendered.items()):
        if template.endswith(("NOTES.txt", CONTEXT_TEMPLATE, PLAN_TEMPLATE)) or (HELM_ONLY in template) != helm_only:
            continue
        out += [doc for doc in loader.load_all(text) if doc]
    return out


CHART_LABEL = "helm.sh/chart"
MANAGED_BY = "app.kubernetes.io/managed-by"


@cache
def chart_label() -> str:
    meta = YAML(typ="safe", pure=True).load((CHART / "Chart.yaml").read_text())
    return f"{meta['name']}-{meta['version']}"


def as_kvgen(node: Any, values: dict[str, Any], namespace: str) -> Any:
    """Objects or a context Helm rendered (release named as the spec), as kvgen renders them: what
    only Helm adds is checked and taken out: the helm.sh/chart label, managed-by Helm (kvgen's is
    kvgen) and, when the values set no namespace, the release namespace (kvgen writes none)."""

    def walk(n: Any) -> Any:
        if isinstance(n, list):
            return [walk(v) for v in n]
        if not isinstance(n, dict):
            return n
        out = {k: walk(v) for k, v in n.items()}
        if CHART_LABEL in out:
            assert out.pop(CHART_LABEL) == chart_label()
        if out.get(MANAGED_BY) == "Helm":
            out[MANAGED_BY] = "kvgen"
        return out

    own_namespace = isinstance(values, dict) and values.get("namespace") is not None
    extras = (values.get("extraObjects") or []) if isinstance(values, dict) else []
    node = walk(node)
    for item in node if isinstance(node, list) else [node]:
        if item in extras:  # the values' extraObjects, verbatim: Helm adds no namespace to them
            continue
        meta = item.get("metadata", item)  # an object's metadata, or the context itself
        if not own_namespace:
            assert meta.pop("namespace") == namespace
    return node


def raw_objects(
    values: dict[str, Any], name: str | None = None, namespace: str = "default", kube_version: str = "1.33"
) -> list[dict[str, Any]]:
    """Every Kubernetes object Helm renders, parsed (Helm's `# Source:` lines are comments), as Helm
    renders them: with its labels and the release namespace."""
    return _objects(render(values, name=name, namespace=namespace, kube_version=kube_version))


def hook_objects(values: dict[str, Any], name: str | None = None, namespace: str = "default") -> list[dict[str, Any]]:
    """The objects of templates/tests/ (`helm test`), which kvgen does not render."""
    return _objects(render(values, name=name, namespace=namespace), helm_only=True)


def objects(values: dict[str, Any], namespace: str = "default", kube_version: str = "1.33") -> list[dict[str, Any]]:
    """Every Kubernetes object Helm renders for a release named as the spec, in kvgen's form (as_kvgen)."""
    return as_kvgen(raw_objects(values, namespace=namespace, kube_version=kube_version), values, namespace)


def objects_and_warnings(
    values: dict[str, Any], namespace: str = "default", kube_version: str = "1.33"
) -> tuple[list[dict[str, Any]], list[str]]:
    """objects, and the warnings NOTES.txt prints (notes_warnings), of one render."""
    rendered = render(values, namespace=namespace, kube_version=kube_version)
    (notes_text,) = [t for name, t in rendered.items() if name.endswith("NOTES.txt")]
    return as_kvgen(_objects(rendered), values, namespace), notes_warnings(notes_text)


def objects_and_context(
    values: dict[str, Any],
    namespace: str = "default",
    kube_version: str = "1.33",
    replaced: tuple[tuple[str, str], ...] = (),
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The objects and the context (kvgen.context) of one render, from a copy of the chart, in
    kvgen's form (as_kvgen)."""
    objs, context, _warnings = objects_context_and_warnings(values, namespace, kube_version, replaced)
    return objs, context


def objects_context_and_warnings(
    values: dict[str, Any],
    namespace: str = "default",
    kube_version: str = "1.33",
    replaced: tuple[tuple[str, str], ...] = (),
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """objects_and_context, and the warnings NOTES.txt prints (notes_warnings), of one render."""
    rendered = render(values, namespace=namespace, kube_version=kube_version, chart_=context_chart(replaced))
    (text,) = [t for name, t in rendered.items() if name.endswith(CONTEXT_TEMPLATE)]
    (notes_text,) = [t for name, t in rendered.items() if name.endswith("NOTES.txt")]
    return (
        as_kvgen(_objects(rendered), values, namespace),
        as_kvgen(json.loads(text), values, namespace),
        notes_warnings(notes_text),
    )


def context_plan_and_warnings(
    values: dict[str, Any], namespace: str = "default", kube_version: str = "1.33"
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The context, the plan document and NOTES.txt's warnings of one render, the objects left unread
    (the property tests: the objects are laid out from the context by templates that exist once)."""
    rendered = render(values, namespace=namespace, kube_version=kube_version, chart_=context_chart())
    (context,) = [t for name, t in rendered.items() if name.endswith(CONTEXT_TEMPLATE)]
    (plan_text,) = [t for name, t in rendered.items() if name.endswith(PLAN_TEMPLATE)]
    (notes_text,) = [t for name, t in rendered.items() if name.endswith("NOTES.txt")]
    return as_kvgen(json.loads(context), values, namespace), dict(json.loads(plan_text)), notes_warnings(notes_text)


def plan(
    values: dict[str, Any],
    namespace: str = "default",
    kube_version: str = "1.33",
    replaced: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    """The chart's plan document (kvgen.planJson) of one render, from the same copy of the chart as the context."""
    rendered = render(values, namespace=namespace, kube_version=kube_version, chart_=context_chart(replaced))
    (text,) = [t for name, t in rendered.items() if name.endswith(PLAN_TEMPLATE)]
    return dict(json.loads(text))


def first_difference(ours: Any, theirs: Any, path: str = "") -> str | None:
    """The first place two contexts differ, by key path ("workloads[0].pod.vllm.args[3]: ..."), or
    None. Numbers compare by value (Helm's JSON has no integer type)."""
    where = path or "(the context)"
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs)):
            sub = f"{path}.{key}" if path else key
            if key not in theirs:
                return f"{sub}: kvgen has {ours[key]!r}, the chart leaves it out"
            if key not in ours:
                return f"{sub}: the chart has {theirs[key]!r}, kvgen leaves it out"
            found = first_difference(ours[key], theirs[key], sub)
            if found:
                return found
        return None
    if isinstance(ours, list) and isinstance(theirs, list):
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(ours) != len(theirs):
            return f"{where}: kvgen has {len(ours)} items, the chart {len(theirs)}"
        return None
    same_number = (
        all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (ours, theirs)) and ours == theirs
    )
    if same_number or (type(ours) is type(theirs) and ours == theirs):
        return None
    return f"{where}: kvgen {ours!r}, the chart {theirs!r}"


def by_identity(objs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Objects keyed by (kind, name): comparison ignores document order."""
    keyed = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    assert len(keyed) == len(objs), "two objects share a kind and name"
    return keyed


_PROBLEM_LINE = re.compile(r"^  (?P<path>.+?): (?P<message>.*?)(?: \(hint: (?P<hint>.*)\))?$")


def problems(
    values: dict[str, Any], kube_version: str = "1.33", namespace: str = "default"
) -> set[tuple[str, str, str | None]]:
    """The problems the chart's templates fail with (kvgen.context lists them one a line,
    "  path: message (hint: hint)"), as (path, message, hint); a rendered chart has none. Values
    Helm's schema refuses raise HelmValuesError."""
    try:
        render(values, namespace=namespace, kube_version=kube_version)
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
