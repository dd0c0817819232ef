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
    return schema


def values_schema_text() -> str:
    return json.dumps(values_schema(), indent=2, sort_keys=False) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(values_schema_text() if sys.argv[1:] == ["values"] else schema_text())
