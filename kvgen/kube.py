"""Strict Kubernetes schema checks, from the schemas kubernetes-validate ships.

``kubernetes_validate.validate`` rebuilds its validator on every call and stops at the first
error. kvgen validates every object it renders, so it builds one Draft 2020-12 validator per
(kind, apiVersion, Kubernetes version) from the same shipped files, caches it, and reports
every error. The same definitions check the Kubernetes objects a spec embeds (a PVC spec,
tolerations, affinity) so that their errors carry the spec's own path.
"""

from __future__ import annotations

import importlib.resources as ir
import json
import re
from functools import cache
from typing import Any, Iterator

import jsonschema
from referencing import Registry, Resource

from kvgen.errors import KvgenError

SUPPORTED_MIN = (1, 28)  # native sidecars (initContainers[].restartPolicy) need 1.28+
DEFAULT_VERSION = "1.33"


class UnsupportedVersion(KvgenError, ValueError):
    pass


def _root():
    return ir.files("kubernetes_validate") / "kubernetes-json-schema"


@cache
def shipped_versions() -> tuple[str, ...]:
    found = set()
    for entry in _root().iterdir():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+-local-strict", entry.name)
        if m:
            found.add((int(m[1]), int(m[2])))
    return tuple(f"{a}.{b}" for a, b in sorted(found))


def schema_dir(version: str):
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    if not m:
        raise UnsupportedVersion(f"{version!r} is not a Kubernetes version such as 1.33")
    major, minor = int(m[1]), int(m[2])
    if (major, minor) < SUPPORTED_MIN:
        raise UnsupportedVersion(f"Kubernetes {major}.{minor} is too old: kvgen's native sidecars need 1.28 or newer")
    if f"{major}.{minor}" not in shipped_versions():
        raise UnsupportedVersion(
            f"no schemas for Kubernetes {major}.{minor}; supported: {', '.join(v for v in shipped_versions() if tuple(map(int, v.split('.'))) >= SUPPORTED_MIN)}"
        )
    return _root() / f"v{major}.{minor}.0-local-strict"


@cache
def _registry(version: str) -> tuple[Registry, dict[str, Any]]:
    defs = json.loads((schema_dir(version) / "_definitions.json").read_text())
    resource = Resource.from_contents(defs)
    return resource @ Registry(), defs


@cache
def _validator(kind: str, api_version: str, version: str) -> jsonschema.Draft202012Validator:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)  # apps/v1 -> apps-v1
    path = schema_dir(version) / f"{kind.lower()}-{group_version}.json"
    if not path.is_file():
        raise UnsupportedVersion(f"no schema for {kind} {api_version} in Kubernetes {version}")
    schema = json.loads(path.read_text())
    registry, _ = _registry(version)
    return jsonschema.Draft202012Validator(schema, registry=Resource.from_contents(schema) @ registry)


@cache
def _definition_validator(name: str, version: str) -> jsonschema.Draft202012Validator:
    registry, defs = _registry(version)
    schema = {"$ref": f"https://kubernetes.io/api/_definitions.json#/$defs/{name}"}
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _format(errors: Iterator[jsonschema.ValidationError]) -> list[tuple[tuple, str]]:
    out = []
    for e in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        out.append((tuple(e.absolute_path), e.message))
    return out


def validate_object(obj: dict[str, Any], version: str = DEFAULT_VERSION) -> list[tuple[tuple, str]]:
    """All strict-schema errors of one object as (path in the object, message)."""
    return _format(_validator(obj["kind"], obj["apiVersion"], version).iter_errors(obj))


def validate_definition(name: str, data: Any, version: str = DEFAULT_VERSION) -> list[tuple[tuple, str]]:
    """Errors of ``data`` against one definition, e.g. io.k8s.api.core.v1.Toleration."""
    return _format(_definition_validator(name, version).iter_errors(data))
