"""Strict Kubernetes schema checks, from the schemas kubernetes-validate ships.

``kubernetes_validate.validate`` rebuilds its validator on every call and stops at the first
error. kvgen validates every object it renders, so it builds one Draft 2020-12 validator per
(kind, apiVersion, Kubernetes version) from the same shipped files, caches it, and reports
every error. Custom resources (PodMonitor, ServiceMonitor, ScaledObject) are validated the same
way against their CRDs' schemas, vendored into charts/kvgen/files/crds by scripts/vendor-crds
(strict: no unknown field; metadata is the version's ObjectMeta). The same definitions check the Kubernetes objects a spec embeds (a PVC spec,
tolerations, affinity) so that their errors carry the spec's own path.

Two validators, one schema. Every object is first checked by a compiled jsonschema-rs
validator of a self-contained copy of its schema: the definitions it reaches, references made
local, descriptions left out (kept in kvgen.core.diskcache, keyed by the hash of the shipped files).
Only an object it refuses goes through the jsonschema (Python) validator of the shipped files,
which lists every error with its path and message as before.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvgen.core import diskcache
from kvgen.core.errors import KvgenError, quoted

if TYPE_CHECKING:  # for annotations only; the functions import them when first called
    import jsonschema
    import jsonschema_rs
    from referencing import Registry

SUPPORTED_MIN = (1, 28)  # native sidecars (initContainers[].restartPolicy) need 1.28+


def _default_version() -> str:
    """charts/kvgen/files/kubernetes.json defaultVersion: the one default of kvgen and the chart."""
    import json

    from kvgen.core import paths

    version = json.loads((paths.files_dir() / "kubernetes.json").read_text(encoding="utf-8"))["defaultVersion"]
    assert isinstance(version, str), "kubernetes.json: defaultVersion is a string such as '1.33'"
    return version


DEFAULT_VERSION = _default_version()


class UnsupportedVersion(KvgenError, ValueError):
    pass


@cache
def _root() -> Path:
    # found, not imported: importing kubernetes_validate imports jsonschema and PyYAML (~120 ms)
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise UnsupportedVersion("kubernetes-validate is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "kubernetes-json-schema"


@cache
def shipped_versions() -> tuple[str, ...]:
    found = set()
    for entry in _root().iterdir():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+-local-strict", entry.name)
        if m:
            found.add((int(m[1]), int(m[2])))
    return tuple(f"{a}.{b}" for a, b in sorted(found))


def schema_dir(version: str) -> Path:
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    if not m:
        raise UnsupportedVersion(f"{quoted(version)} is not a Kubernetes version such as 1.33")
    major, minor = int(m[1]), int(m[2])
    if (major, minor) < SUPPORTED_MIN:
        raise UnsupportedVersion(f"Kubernetes {major}.{minor} is too old: kvgen's native sidecars need 1.28 or newer")
    if f"{major}.{minor}" not in shipped_versions():
        raise UnsupportedVersion(
            f"no schemas for Kubernetes {major}.{minor}; supported: {', '.join(v for v in shipped_versions() if tuple(map(int, v.split('.'))) >= SUPPORTED_MIN)}"
        )
    return _root() / f"v{major}.{minor}.0-local-strict"


@cache
def _crd_files() -> dict[str, Path]:
    """The vendored custom resource schemas (charts/kvgen/files/crds, scripts/vendor-crds) by file name."""
    from kvgen.core import paths

    folder = paths.files_dir() / "crds"
    return {p.name: p for p in folder.glob("*.json")} if folder.is_dir() else {}


def crd_file(kind: str, api_version: str) -> Path | None:
    """The vendored schema of a custom resource kind (``podmonitor-monitoring.coreos.com-v1.json``), if any."""
    return _crd_files().get(f"{kind.lower()}-{api_version.replace('/', '-')}.json")


def _kind_file(kind: str, api_version: str, version: str) -> Path:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)  # apps/v1 -> apps-v1
    path = schema_dir(version) / f"{kind.lower()}-{group_version}.json"
    if path.is_file():
        return path
    crd = crd_file(kind, api_version) if "." in api_version.partition("/")[0] else None
    if crd is None:
        raise UnsupportedVersion(f"no schema for {kind} {api_version} in Kubernetes {version}")
    return crd


# ---------------------------------------------------------------- messages: jsonschema (Python)


@cache
def _registry(version: str) -> tuple[Registry[Any], Any]:
    from referencing import Registry, Resource

    defs = json.loads((schema_dir(version) / "_definitions.json").read_text())
    resource = Resource.from_contents(defs)
    return resource @ Registry(), defs


@cache
def _validator(kind: str, api_version: str, version: str) -> jsonschema.Draft202012Validator:
    import jsonschema
    from referencing import Resource

    schema = json.loads(_kind_file(kind, api_version, version).read_text())
    registry, _ = _registry(version)
    return jsonschema.Draft202012Validator(schema, registry=Resource.from_contents(schema) @ registry)


@cache
def _definition_validator(name: str, version: str) -> jsonschema.Draft202012Validator:
    import jsonschema

    registry, defs = _registry(version)
    schema = {"$ref": f"https://kubernetes.io/api/_definitions.json#/$defs/{name}"}
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _format(errors: Iterator[Any]) -> list[tuple[tuple[str | int, ...], str]]:
    out = []
    for e in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        out.append((tuple(e.absolute_path), e.message))
    return out


# ---------------------------------------------------------------- verdicts: jsonschema-rs

_REF = re.compile(r"^(?:/api/_definitions\.json|https://kubernetes\.io/api/_definitions\.json)?#/\$defs/(.+)$")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")  # name -> schema
_SCHEMA_ONE = ("items", "additionalProperties", "not")  # a schema (or a boolean)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")  # schemas
_DATA = (
    "type",
    "enum",
    "required",
    "format",
    "default",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "$schema",
)


class SchemaShapeError(KvgenError, ValueError):
    """A keyword the pruning does not know: it would not know whether it holds a schema."""


def prune(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``schema`` made self-contained: the definitions it reaches (transitively) under
    ``$defs``, every reference local, descriptions and x-kubernetes-* annotations left out.
    Validates exactly as ``schema`` does against ``defs``."""
    reached: dict[str, Any] = {}
    todo: list[str] = []

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node  # true / false
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k == "$ref":
                m = _REF.match(v)
                if m is None:
                    raise SchemaShapeError(f"unexpected $ref {v!r}")
                todo.append(m[1])
                out[k] = f"#/$defs/{m[1]}"
            elif k in _SCHEMA_MAPS:
                out[k] = {name: walk(sub) for name, sub in v.items()}
            elif k in _SCHEMA_ONE:
                out[k] = walk(v)
            elif k in _SCHEMA_LISTS:
                out[k] = [walk(sub) for sub in v]
            elif k in _DATA:
                out[k] = v
            elif k in ("description", "$id") or k.startswith("x-kubernetes-"):
                continue
            else:
                raise SchemaShapeError(f"unexpected keyword {k!r}")
        return out

    top = walk(schema)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached[name] = None  # against cycles
            reached[name] = walk(defs[name])
    top.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    top["$defs"] = dict(sorted(reached.items()))
    return top


@cache
def _definitions_digest(version: str) -> str:
    """The SHA-256 of the version's _definitions.json (read once per process)."""
    return diskcache.key("k8s-definitions", (schema_dir(version) / "_definitions.json").read_bytes())


@cache
def _definitions(version: str) -> dict[str, Any]:
    return json.loads((schema_dir(version) / "_definitions.json").read_bytes())["$defs"]


def _pruned(version: str, kind_source: bytes, name: str) -> dict[str, Any]:
    """The pruned schema of a kind file's bytes (name "") or of one definition, from disk cache."""

    def build() -> dict[str, Any]:
        schema = json.loads(kind_source) if not name else {"$ref": f"#/$defs/{name}"}
        return prune(schema, _definitions(version))

    return diskcache.cached("k8s-schema", (name.encode(), kind_source, _definitions_digest(version).encode()), build)


@cache
def _fast(kind: str, api_version: str, version: str) -> jsonschema_rs.Validator:
    import jsonschema_rs

    schema = _pruned(version, _kind_file(kind, api_version, version).read_bytes(), "")
    return jsonschema_rs.validator_for(schema, validate_formats=False)


@cache
def _fast_definition(name: str, version: str) -> jsonschema_rs.Validator:
    import jsonschema_rs

    return jsonschema_rs.validator_for(_pruned(version, b"", name), validate_formats=False)


def _valid(validator: Any, data: Any) -> bool:
    try:
        return validator.is_valid(data)
    except (ValueError, TypeError, OverflowError):  # a value JSON has no exact form for: ask jsonschema
        return False


def validate_object(obj: dict[str, Any], version: str = DEFAULT_VERSION) -> list[tuple[tuple[str | int, ...], str]]:
    """All strict-schema errors of one object as (path in the object, message)."""
    if _valid(_fast(obj["kind"], obj["apiVersion"], version), obj):
        return []
    return _format(_validator(obj["kind"], obj["apiVersion"], version).iter_errors(obj))


def validate_definition(
    name: str, data: Any, version: str = DEFAULT_VERSION
) -> list[tuple[tuple[str | int, ...], str]]:
    """Errors of ``data`` against one definition, e.g. io.k8s.api.core.v1.Toleration."""
    if _valid(_fast_definition(name, version), data):
        return []
    return _format(_definition_validator(name, version).iter_errors(data))


# ---------------------------------------------------------------- the kinds kvgen has a schema for

KINDS_FILE = "kube-kinds.json"  # charts/kvgen/files: read by kvgen and by the chart (extraObjects)


def supported_versions() -> tuple[str, ...]:
    """The Kubernetes versions kvgen renders for: the shipped ones from SUPPORTED_MIN on."""
    return tuple(v for v in shipped_versions() if tuple(map(int, v.split("."))) >= SUPPORTED_MIN)


def kinds_table() -> dict[str, Any]:
    """charts/kvgen/files/kube-kinds.json (scripts/regenerate): every "apiVersion kind" kvgen has a
    schema for, with the Kubernetes versions that have it: [first, last], null for the oldest or the
    newest version kvgen supports (a vendored CRD: [null, null]). Only a schema whose apiVersion and
    kind are exactly those (the file's own enums) and that validate_object finds counts."""
    versions = supported_versions()
    seen: dict[str, list[str]] = {}
    for version in versions:
        for path in sorted(schema_dir(version).glob("*.json")):
            props = json.loads(path.read_bytes()).get("properties", {})
            api_versions = props.get("apiVersion", {}).get("enum") or []
            kinds = props.get("kind", {}).get("enum") or []
            for api_version in api_versions:
                for kind in kinds:
                    try:
                        found = _kind_file(kind, api_version, version)
                    except UnsupportedVersion:
                        continue
                    if found == path and "metadata" in props:
                        seen.setdefault(f"{api_version} {kind}", []).append(version)
    table: dict[str, Any] = {}
    for key, present in seen.items():
        first, last = versions.index(present[0]), versions.index(present[-1])
        assert present == list(versions[first : last + 1]), f"{key}: not in every version from {present[0]} on"
        table[key] = [None if first == 0 else present[0], None if last == len(versions) - 1 else present[-1]]
    for name, path in _crd_files().items():
        props = json.loads(path.read_bytes())["properties"]
        for api_version in props["apiVersion"]["enum"]:
            for kind in props["kind"]["enum"]:
                assert crd_file(kind, api_version) == path, name
                table[f"{api_version} {kind}"] = [None, None]
    return {
        "about": "Every apiVersion and kind kvgen validates an object of (extraObjects) against a schema, "
        "with the first and last Kubernetes version that has it (null: every supported version from the oldest, "
        "or up to the newest and beyond). Generated by scripts/regenerate (python -m kvgen.data.kube) from the "
        "schemas kubernetes-validate ships and the vendored CRDs (files/crds); read by kvgen and by the chart.",
        "kinds": dict(sorted(table.items())),
    }


def kinds_text() -> str:
    """kinds_table as written to files/kube-kinds.json: one kind a line."""
    table = kinds_table()
    rows = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in table["kinds"].items())
    return f'{{\n  "about": {json.dumps(table["about"])},\n  "kinds": {{\n{rows}\n  }}\n}}\n'


@cache
def _kinds() -> dict[str, list[str | None]]:
    from kvgen.core import paths

    kinds: dict[str, list[str | None]] = json.loads((paths.files_dir() / KINDS_FILE).read_text(encoding="utf-8"))[
        "kinds"
    ]
    return kinds


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def has_schema(api_version: str, kind: str, version: str = DEFAULT_VERSION) -> bool:
    """Whether kvgen validates an object of this apiVersion and kind for Kubernetes ``version``
    (files/kube-kinds.json; the chart's kvgen.hasSchema reads the same table)."""
    span = _kinds().get(f"{api_version} {kind}")
    if span is None:
        return False
    first, last = span
    return (first is None or _minor(version) >= _minor(first)) and (last is None or _minor(version) <= _minor(last))


if __name__ == "__main__":
    import sys

    sys.stdout.write(kinds_text())
