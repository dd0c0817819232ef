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
    return _strip_checks(_open_kvgen_objects(schema))


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


# ------------------------------------------------------------------ the checks the chart's templates make
#
# Helm validates values.schema.json before any template runs, and stops there: a value out of range would
# hide every problem the templates find (the catalog, vLLM's flags, the node fit). So the checks of one value
# that pydantic makes with its own words (a bound, a length, a pattern, a set of literals) leave the chart's
# schema for files/spec-checks.json, which the templates' key walk (kvgen.checkKeys) applies in kvgen's words:
# every problem in one run on both faces (issue 36). Types, required keys, the embedded Kubernetes
# definitions and the checks of kvgen's own validators stay in the schema, for Helm.

_BOUNDS = (("le", "Le", 1), ("lt", "Lt", 0), ("ge", "Ge", -1), ("gt", "Gt", 0))  # pydantic-core's order
_SCHEMA_KEYWORDS = {
    "ge": ("minimum",),
    "gt": ("exclusiveMinimum",),
    "le": ("maximum",),
    "lt": ("exclusiveMaximum",),
    "minLength": ("minLength",),
    "maxLength": ("maxLength",),
    "pattern": ("pattern",),
    "enum": ("enum", "const"),
    "minItems": ("minItems",),
    "maxItems": ("maxItems",),
}


def _pydantic_message(annotation: Any, bad: Any) -> str:
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(annotation).validate_python(bad)
    except ValidationError as exc:
        return str(exc.errors(include_url=False)[0]["msg"])
    raise AssertionError(f"{bad!r} passes {annotation}")


def _unwrap_optional(annotation: Any) -> Any:
    import types
    import typing

    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else None
    return annotation


def _field_checks(name: str, field: Any, root: bool) -> list[dict[str, Any]]:
    """The checks of one field the templates make, in the order pydantic makes them (the first that fails is
    the field's one problem), each with pydantic's message (or, for a pattern and a list's length, its form)."""
    import typing
    from typing import Annotated

    import annotated_types as at

    from kvgen.spec.models import NAME_HINT

    base = _unwrap_optional(field.annotation)
    if base is None:
        return []
    meta = {type(m).__name__: m for m in field.metadata}
    pattern = next((m.pattern for m in field.metadata if getattr(m, "pattern", None)), None)
    out: list[dict[str, Any]] = []
    if typing.get_origin(base) is typing.Literal:
        message = _pydantic_message(base, "\x00")
        out.append({"check": "enum", "values": list(typing.get_args(base)), "message": message})
    elif base in (int, float):
        for check, kind, step in _BOUNDS:
            if kind in meta:
                bound = getattr(meta[kind], check)
                message = _pydantic_message(Annotated[base, meta[kind]], bound + step)
                out.append({"check": check, "bound": bound, "message": message})
    elif base is str:
        if "MinLen" in meta:
            n = meta["MinLen"].min_length
            message = _pydantic_message(Annotated[str, at.MinLen(n)], "x" * (n - 1))
            out.append({"check": "minLength", "bound": n, "message": message})
        if "MaxLen" in meta:
            n = meta["MaxLen"].max_length
            message = _pydantic_message(Annotated[str, at.MaxLen(n)], "x" * (n + 1))
            out.append({"check": "maxLength", "bound": n, "message": message})
        if pattern:
            out.append({"check": "pattern", "pattern": pattern, "hint": NAME_HINT if root and name == "name" else ""})
    elif typing.get_origin(base) is list:
        for check, kind, attr, size in (
            ("minItems", "MinLen", "min_length", -1),
            ("maxItems", "MaxLen", "max_length", 1),
        ):
            if kind in meta:
                n = getattr(meta[kind], attr)
                message = _pydantic_message(Annotated[list[int], meta[kind]], [0] * (n + size))
                out.append({"check": check, "bound": n, "format": message.rsplit(" not ", 1)[0] + " not %d"})
    return out


def _models() -> dict[str, type[Any]]:
    """Spec and every model reachable from its fields, by the name of its schema definition ($root: Spec)."""
    import typing

    from pydantic import BaseModel

    found: dict[str, type[Any]] = {}

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            name = ROOT_KEYS if annotation is Spec else annotation.__name__
            if name in found:
                return
            found[name] = annotation
            for field in annotation.model_fields.values():
                visit(field.annotation)
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(Spec)
    return found


def spec_checks() -> dict[str, Any]:
    """charts/kvgen/files/spec-checks.json: for each of kvgen's closed objects (spec-keys.json's names), the
    checks of its keys the chart's schema leaves to the templates, each key's default (what kvgen plans with
    when a refused value is left out), and ``$independent``: the sections planning does without
    (kvgen.spec.sections INDEPENDENT), where a refused value does not stop it."""
    from kvgen.spec.sections import INDEPENDENT

    closed = spec_keys()
    table: dict[str, Any] = {}
    for name, model in sorted(_models().items()):
        if name not in closed:
            continue
        own: dict[str, Any] = {}
        decorators = model.__pydantic_decorators__.field_validators.values()
        shaped = {f for d in decorators if d.info.mode != "after" for f in d.info.fields if f != "*"}
        for attr, field in model.model_fields.items():
            checks = [] if attr in shaped else _field_checks(attr, field, model is Spec)
            if checks:
                default = None if field.is_required() else field.get_default(call_default_factory=True)
                own[field.alias or attr] = {"checks": checks, "default": _plain(default)}
        if own:
            table[name] = own
    return {"$independent": sorted(".".join(map(str, p)) for p in INDEPENDENT), **table}


def _plain(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value if value is None or isinstance(value, (bool, int, float, str, list, dict)) else str(value)


def spec_checks_text() -> str:
    return json.dumps(spec_checks(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def _strip_checks(schema: dict[str, Any]) -> dict[str, Any]:
    """The chart's schema without the keywords of spec_checks (the templates make those checks)."""
    table = spec_checks()

    def strip(node: Any, keywords: set[str]) -> Any:
        if not isinstance(node, dict):
            return node
        out = {k: v for k, v in node.items() if k not in keywords}
        if "anyOf" in out:
            out["anyOf"] = [strip(branch, keywords) for branch in out["anyOf"]]
        return out

    for name, keys in table.items():
        if name.startswith("$") and name != ROOT_KEYS:
            continue
        node = schema if name == ROOT_KEYS else schema["$defs"][name]
        for key, entry in keys.items():
            keywords = {kw for c in entry["checks"] for kw in _SCHEMA_KEYWORDS[c["check"]]}
            node["properties"][key] = strip(node["properties"][key], keywords)
    return schema


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

    texts = {
        "values": values_schema_text,
        "keys": spec_keys_text,
        "defaults": values_defaults_text,
        "checks": spec_checks_text,
    }
    sys.stdout.write(texts.get(sys.argv[1] if sys.argv[1:] else "", schema_text)())
