"""The spec's JSON Schema, generated from the pydantic models.

``schemas/kvgen.schema.json`` is this output, committed; a test fails when it is stale
(regenerate with ``kvgen schema > schemas/kvgen.schema.json``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema

from kvgen.spec.models import K8S_MARKER, Spec


class _Generator(GenerateJsonSchema):
    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        out = super().generate(schema, mode=mode)
        out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        return out


def _strip_titles(node: Any) -> Any:
    """pydantic adds a title per property; they repeat the key and only add noise."""
    if isinstance(node, dict):
        return {
            k: _strip_titles(v)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str) and "properties" not in node)
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


# Kubernetes definitions embedded in the spec are copied from this version's schemas.
EMBEDDED_K8S_VERSION = "1.33"
_K8S_REF = re.compile(r"^(?:/api/_definitions\.json|https://kubernetes\.io/api/_definitions\.json)?#/\$defs/(.+)$")


def _k8s_definitions(names: set[str]) -> dict[str, Any]:
    """The named Kubernetes definitions and everything they reference, refs made local."""
    from kvgen.data import kube

    all_defs = json.loads((kube.schema_dir(EMBEDDED_K8S_VERSION) / "_definitions.json").read_text())["$defs"]
    out: dict[str, Any] = {}

    def localize(node: Any) -> Any:
        if isinstance(node, dict):
            res = {}
            for k, v in node.items():
                if k == "$ref" and isinstance(v, str) and (m := _K8S_REF.match(v)):
                    todo.append(m[1])
                    res[k] = f"#/$defs/{m[1]}"
                else:
                    res[k] = localize(v)
            return res
        if isinstance(node, list):
            return [localize(v) for v in node]
        return node

    todo = sorted(names)
    while todo:
        name = todo.pop()
        if name not in out:
            out[name] = None  # placeholder against cycles
            out[name] = localize(all_defs[name])
    return dict(sorted(out.items()))


def _link_k8s(node: Any, found: set[str]) -> Any:
    """Replace kvgen's Kubernetes-definition markers with $refs, collecting their names."""
    if isinstance(node, dict):
        if K8S_MARKER in node:
            found.add(node[K8S_MARKER])
            rest = {k: v for k, v in node.items() if k != K8S_MARKER}
            return {"$ref": f"#/$defs/{node[K8S_MARKER]}", **rest}
        return {k: _link_k8s(v, found) for k, v in node.items()}
    if isinstance(node, list):
        return [_link_k8s(v, found) for v in node]
    return node


def spec_schema() -> dict[str, Any]:
    found: set[str] = set()
    schema = _link_k8s(_strip_titles(Spec.model_json_schema(by_alias=True, schema_generator=_Generator)), found)
    schema["$defs"].update(_k8s_definitions(found))
    return schema


def schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=False) + "\n"


# The spec's top-level required keys, which the chart's schema leaves to its templates: Helm checks
# values.schema.json before any template runs (and in `helm lint` without values), and the
# templates report them missing in kvgen's words, from templates/validate.yaml.
CHART_CHECKS_REQUIRED = ("model", "instance")


# Helm passes `global` to every chart, a subchart included (its parent's global values), and
# checks it against the subchart's values.schema.json: the chart's schema accepts it, any object,
# and the templates read only global.imageRegistry (images.registry's chart-only spelling, checked
# by the templates as images.registry is). kvgen's own spec does not: a spec file is no umbrella chart's
# values, and a key kvgen would ignore there is a mistake it reports.
HELM_GLOBAL = {
    "type": "object",
    "description": "Helm's global values, passed to kvgen when it is a subchart of an umbrella chart; kvgen "
    "reads global.imageRegistry alone, the chart's spelling of images.registry (used when that is unset), and "
    "ignores the rest (the Helm chart only: kvgen render refuses global).",
}


def values_schema() -> dict[str, Any]:
    """charts/kvgen/values.schema.json: the spec's schema without top-level required keys, so that
    `helm lint charts/kvgen --strict` passes without values (the templates' checks are lenient there),
    and with Helm's `global` (HELM_GLOBAL), so that kvgen works as a subchart."""
    schema = spec_schema()
    assert tuple(schema.pop("required")) == CHART_CHECKS_REQUIRED
    assert "global" not in schema["properties"]
    schema["properties"] = {**schema["properties"], "global": HELM_GLOBAL}
    return _open_kvgen_objects(schema)


def _is_k8s(name: str) -> bool:
    return name.startswith("io.k8s.")


def _open(node: Any) -> Any:
    """``node`` without ``additionalProperties: false`` (its nested objects too)."""
    if isinstance(node, dict):
        return {k: _open(v) for k, v in node.items() if not (k == "additionalProperties" and v is False)}
    if isinstance(node, list):
        return [_open(v) for v in node]
    return node


def _open_kvgen_objects(schema: dict[str, Any]) -> dict[str, Any]:
    """kvgen's own objects (the top level and its $defs, not the embedded Kubernetes definitions)
    without ``additionalProperties: false``: Helm's schema validator words an unknown key as
    "at '': additional properties 'kvCacheOffloding' not allowed", without the key's path or a
    suggestion, and stops the render there; the templates report it instead, in kvgen's words,
    from files/spec-keys.json (``spec_keys``). Every type, enum and range check stays here."""
    defs = schema["$defs"]
    return _open({k: v for k, v in schema.items() if k != "$defs"}) | {
        "$defs": {name: d if _is_k8s(name) else _open(d) for name, d in defs.items()}
    }


ROOT_KEYS = "$root"


def spec_keys() -> dict[str, Any]:
    """charts/kvgen/files/spec-keys.json: the keys each of kvgen's closed objects allows, in the
    spec's order, and where each leads: ``Def`` (an object), ``[]Def`` (a list of them), ``{}Def``
    (a map of them); ``$root`` is the top level. The chart's templates (kvgen.checkKeys) report an
    unknown key with its path and kvgen's hint, as kvgen.input.spec_errors does."""
    schema = spec_schema()
    table: dict[str, Any] = {}

    def child(node: Any, inline_name: str) -> str | None:
        if not isinstance(node, dict):
            return None
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            return None if _is_k8s(name) else name
        for branch in node.get("anyOf", []) + node.get("oneOf", []):
            found = child(branch, inline_name)
            if found:
                return found
        if isinstance(node.get("items"), dict):
            inner = child(node["items"], inline_name)
            return f"[]{inner}" if inner else None
        if isinstance(node.get("additionalProperties"), dict):
            inner = child(node["additionalProperties"], inline_name)
            return f"{{}}{inner}" if inner else None
        if "properties" in node and node.get("additionalProperties") is False:
            add(inline_name, node)
            return inline_name
        return None

    def add(name: str, node: dict[str, Any]) -> None:
        if name in table or node.get("additionalProperties") is not False:
            return
        entry: dict[str, Any] = {"keys": list(node.get("properties", {})), "children": {}}
        table[name] = entry
        for key, sub in node.get("properties", {}).items():
            found = child(sub, f"{name}.{key}")
            if found:
                entry["children"][key] = found

    add(ROOT_KEYS, schema)
    for name, definition in schema["$defs"].items():
        if not _is_k8s(name):
            add(name, definition)
    return dict(sorted(table.items()))


def spec_keys_text() -> str:
    return json.dumps(spec_keys(), indent=2, sort_keys=False) + "\n"


def values_schema_text() -> str:
    return json.dumps(values_schema(), indent=2, sort_keys=False) + "\n"


def values_defaults() -> dict[str, Any]:
    """charts/kvgen/files/values-defaults.json: the keys the chart's values.yaml gives a value (not null),
    as a tree (each key's own such keys; {} for a leaf). Helm deletes a key the user sets to null when
    the chart's values.yaml has it (chartutil's coalescing), so the chart would render without the
    default: both faces refuse that null (kvgen.plan.validate, the chart's kvgen.checkNulledDefaults).
    Read from the repository's values.yaml, so regenerated with it (scripts/regenerate)."""
    from ruamel.yaml import YAML

    from kvgen.core import paths

    values = YAML(typ="safe", pure=True).load((paths.files_dir().parent / "values.yaml").read_text(encoding="utf-8"))

    def tree(node: dict[str, Any]) -> dict[str, Any]:
        return {k: tree(v) if isinstance(v, dict) else {} for k, v in node.items() if v is not None}

    return tree(values)


def values_defaults_text() -> str:
    return json.dumps(values_defaults(), indent=2, sort_keys=False) + "\n"


if __name__ == "__main__":
    import sys

    texts = {"values": values_schema_text, "keys": spec_keys_text, "defaults": values_defaults_text}
    sys.stdout.write(texts.get(sys.argv[1] if sys.argv[1:] else "", schema_text)())
