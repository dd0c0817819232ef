"""Oracles for tests/test_fuzz.py: rules the Kubernetes API server (and a CRD's CEL rules) hold every
rendered object to, read off the output and written here independently of kvgen's own checks.

- ``api_server_problems``: apimachinery's ValidateObjectMeta (metadata.name's format by kind,
  metadata.namespace, label keys and values, annotation keys) and, for every pod spec a built-in kind
  (or a LeaderWorkerSet) holds, ValidatePodSpec's container names (DNS-1123 labels, unique across
  containers, initContainers and ephemeralContainers), volumes (unique names, exactly one source: the
  fields of kubernetes-validate's io.k8s.api.core.v1.Volume schema but its name) and
  ValidateResourceRequirements (a request within its limit; an extended resource's or hugepages'
  request equal to its limit, and a limit given). A ``kind: List`` is checked item by item.
- ``httproute_problems``: Gateway API v1.5.1's HTTPRoute rules on spec.hostnames (the vendored CRD's
  pattern and maxLength), spec.rules[].matches[].path (the CEL rules tests/test_routing_refusals.py
  quotes, UPSTREAM_PATH_CEL) and spec.parentRefs (UPSTREAM_PARENT_REFS_CEL, transcribed there as
  ``_cel_parent_refs``).

Patterns are matched as the API server matches them (Go's regexp, RE2; the JSON schema's pattern as
ECMA-262 does): ``$`` is the end of the text, never "before a final newline" as Python's ``$``.
"""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

from test_routing_refusals import UPSTREAM_PATH_CEL, _cel_parent_refs, _parsed, vendored_route_schema

# apimachinery/pkg/util/validation
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _full(pattern: re.Pattern[str], value: Any) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def is_dns1123_label(value: Any) -> bool:
    return _full(DNS1123_LABEL, value) and len(value) <= 63


def is_dns1123_subdomain(value: Any) -> bool:
    return _full(DNS1123_SUBDOMAIN, value) and len(value) <= 253


def is_dns1035_label(value: Any) -> bool:
    return _full(DNS1035_LABEL, value) and len(value) <= 63


def is_path_segment_name(value: Any) -> bool:
    """path.IsValidPathSegmentName (RBAC objects' names): not . or .., no / or %."""
    return isinstance(value, str) and value not in (".", "..") and "/" not in value and "%" not in value


def is_qualified_name(value: Any) -> bool:
    """IsQualifiedName: [DNS-1123 subdomain "/"] name of at most 63 characters."""
    if not isinstance(value, str):
        return False
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or not is_dns1123_subdomain(prefix)):
        return False
    return _full(QUALIFIED_NAME, name) and len(name) <= 63


def is_label_value(value: Any) -> bool:
    return _full(LABEL_VALUE, value) and len(value) <= 63


# metadata.name: ValidateObjectMeta's name function, by kind (NameIsDNSSubdomain unless listed; custom
# resources too: the apiextensions-apiserver validates theirs as DNS subdomains)
NAME_RULES = {
    "Service": (is_dns1035_label, "a DNS-1035 label"),
    "Namespace": (is_dns1123_label, "a DNS-1123 label"),
    "Role": (is_path_segment_name, "a path segment"),
    "RoleBinding": (is_path_segment_name, "a path segment"),
    "ClusterRole": (is_path_segment_name, "a path segment"),
    "ClusterRoleBinding": (is_path_segment_name, "a path segment"),
}
NOT_OBJECTS = {"List"}  # kind: List (and *List) hold items, no metadata of their own to validate


# --- quantities (apimachinery resource.ParseQuantity), on their own ------------------------------------

_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?")
_SUFFIX = {
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}


def quantity(value: Any) -> Decimal | None:
    """A Kubernetes quantity's value, or None when it is none (strict validation refuses those)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    m = _QUANTITY.fullmatch(value)
    if m is None:
        return None
    try:
        number, suffix = Decimal(m[1]), m[2] or ""
        return number * (_SUFFIX[suffix] if suffix in _SUFFIX else Decimal("1" + suffix.lower()))
    except InvalidOperation:
        return None


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: a native resource but hugepages; an extended resource (a domain
    outside kubernetes.io) is not."""
    if name.startswith("hugepages-"):
        return False
    domain = name.split("/", 1)[0] if "/" in name else ""
    extended = bool(domain) and domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")
    return not extended and not name.startswith("requests.")


# --- pods -------------------------------------------------------------------------------------------------


@cache
def volume_sources() -> frozenset[str]:
    import kubernetes_validate

    path = os.path.join(
        os.path.dirname(kubernetes_validate.__file__),
        "kubernetes-json-schema",
        "v1.33.0-local-strict",
        "volume-v1.json",
    )
    with open(path, encoding="utf-8") as f:
        return frozenset(json.load(f)["properties"]) - {"name"}


def _dig(node: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


POD_TEMPLATES: dict[
    str, list[tuple[str, ...]]
] = {  # kind -> where its pod templates are ({metadata, spec}); a Pod is its own
    "Pod": [()],
    "PodTemplate": [("template",)],
    "Deployment": [("spec", "template")],
    "StatefulSet": [("spec", "template")],
    "DaemonSet": [("spec", "template")],
    "ReplicaSet": [("spec", "template")],
    "ReplicationController": [("spec", "template")],
    "Job": [("spec", "template")],
    "CronJob": [("spec", "jobTemplate", "spec", "template")],
    "LeaderWorkerSet": [
        ("spec", "leaderWorkerTemplate", "leaderTemplate"),
        ("spec", "leaderWorkerTemplate", "workerTemplate"),
    ],
}


def _metadata_problems(meta: Any, where: str, name_rule: tuple | None) -> list[str]:
    bad: list[str] = []
    if not isinstance(meta, dict):
        return bad
    if name_rule is not None:
        fits, what = name_rule
        if not fits(meta.get("name")):
            bad.append(f"{where}.name {meta.get('name')!r} is not {what}")
    if "namespace" in meta and meta["namespace"] is not None and not is_dns1123_label(meta["namespace"]):
        bad.append(f"{where}.namespace {meta['namespace']!r} is not a DNS-1123 label")
    for key, value in (meta.get("labels") or {}).items():
        if not is_qualified_name(key):
            bad.append(f"{where}.labels key {key!r} is not a qualified name")
        if not is_label_value(value):
            bad.append(f"{where}.labels[{key!r}] value {value!r} is not a label value")
    for key in meta.get("annotations") or {}:
        if not is_qualified_name(key):
            bad.append(f"{where}.annotations key {key!r} is not a qualified name")
    return bad


def _resources_problems(res: Any, where: str) -> list[str]:
    bad: list[str] = []
    if not isinstance(res, dict):
        return bad
    requests, limits = res.get("requests") or {}, res.get("limits") or {}
    for name in sorted(set(requests) | set(limits)):
        request, limit = quantity(requests.get(name)), quantity(limits.get(name))
        if not _overcommit_allowed(name):
            if name in requests and name not in limits:
                bad.append(f"{where} {name}: a request without a limit (not overcommittable)")
            elif request is not None and limit is not None and request != limit:
                bad.append(f"{where} {name}: request {requests[name]} differs from limit {limits[name]}")
        elif request is not None and limit is not None and request > limit:
            bad.append(f"{where} {name}: request {requests[name]} > limit {limits[name]}")
    return bad


def _pod_spec_problems(pod: Any, where: str) -> list[str]:
    bad: list[str] = []
    if not isinstance(pod, dict):
        return bad
    names: set[str] = set()
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(pod.get(group) or []):
            if not isinstance(c, dict):
                continue
            at = f"{where}.{group}[{i}]"
            name = c.get("name")
            if not is_dns1123_label(name):
                bad.append(f"{at}.name {name!r} is not a DNS-1123 label")
            elif name in names:
                bad.append(f"{at}.name {name!r}: two containers of the pod have this name")
            if isinstance(name, str):
                names.add(name)
            bad += _resources_problems(c.get("resources"), f"{at}.resources")
    volumes: set[Any] = set()
    for i, v in enumerate(pod.get("volumes") or []):
        if not isinstance(v, dict):
            continue
        at = f"{where}.volumes[{i}]"
        if v.get("name") in volumes:
            bad.append(f"{at}.name {v.get('name')!r}: two volumes have this name")
        volumes.add(v.get("name"))
        sources = sorted(k for k in volume_sources() if v.get(k) is not None)
        if len(sources) != 1:
            bad.append(f"{at} {v.get('name')!r}: {len(sources)} volume sources {sources}, not exactly one")
    return bad


def api_server_problems(obj: Any, where: str = "") -> list[str]:
    """What the API server's validation refuses in one rendered object (a List's items each)."""
    if not isinstance(obj, dict):
        return [f"{where or 'a document'}: {obj!r} is no object"]
    where = where or f"{obj.get('kind')} {_dig(obj, 'metadata', 'name')!r}"
    untyped = [key for key in ("apiVersion", "kind") if not (isinstance(obj.get(key), str) and obj.get(key))]
    if untyped:  # kubectl and the API server decode no object without them
        return [f"{where}: {key} {obj.get(key)!r} is no non-empty string" for key in untyped]
    kind: str = obj["kind"]
    if kind in NOT_OBJECTS or (isinstance(kind, str) and kind.endswith("List") and "items" in obj):
        return [
            p for i, item in enumerate(obj.get("items") or []) for p in api_server_problems(item, f"{where}.items[{i}]")
        ]
    bad = _metadata_problems(
        obj.get("metadata"), f"{where} metadata", NAME_RULES.get(kind, (is_dns1123_subdomain, "a DNS-1123 subdomain"))
    )
    for path in POD_TEMPLATES.get(kind, []):
        template = _dig(obj, *path) if path else obj
        if not isinstance(template, dict):
            continue
        at = ".".join((where, *path)) if path else where
        if path:
            bad += _metadata_problems(template.get("metadata"), f"{at}.metadata", None)
        bad += _pod_spec_problems(template.get("spec"), f"{at}.spec")
    if isinstance(obj.get("spec"), dict):
        replicas = obj["spec"].get("replicas")
        if isinstance(replicas, int) and not 0 <= replicas <= 2**31 - 1:
            bad.append(f"{where} spec.replicas {replicas} is no int32 >= 0")
    return bad


# --- Gateway API HTTPRoute ---------------------------------------------------------------------------------


def _re2_search(pattern: str, value: str) -> bool:
    """A search as RE2 (Go) and ECMA-262 do it: a final ``$`` is the end of the text."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.search(pattern, value) is not None


@cache
def _hostname_rule() -> tuple[str, int]:
    items = vendored_route_schema()["hostnames"]["items"]
    return items["pattern"], items["maxLength"]


PATH_TYPES = ("Exact", "PathPrefix", "RegularExpression")


def path_cel_problems(path: dict[str, Any]) -> list[str]:
    """The messages of UPSTREAM_PATH_CEL's rules an HTTPPathMatch fails (type and value as the CRD
    defaults them: PathPrefix, "/")."""
    kind, value = path.get("type", "PathPrefix"), path.get("value", "/")
    out = []
    for message, rule in UPSTREAM_PATH_CEL:
        if "self.value" not in rule:  # the type's own rule
            if kind not in PATH_TYPES:
                out.append(message)
            continue
        if kind not in ("Exact", "PathPrefix"):
            continue
        test, operand = _parsed(rule)
        if test == "startsWith":
            ok = value.startswith(operand)
        elif test == "notContains":
            ok = operand not in value
        elif test == "notEndsWith":
            ok = not value.endswith(operand)
        else:
            ok = _re2_search(operand, value)
        if not ok:
            out.append(message)
    return out


def parent_refs_cel_problems(refs: list[dict[str, Any]]) -> list[str]:
    """UPSTREAM_PARENT_REFS_CEL on spec.parentRefs, each reference's group and kind defaulted as the CRD
    does (gateway.networking.k8s.io, Gateway): the two rules compare references of one group and kind
    only, so _cel_parent_refs is applied to each such set."""
    parents: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for ref in refs:
        key = (ref.get("group", "gateway.networking.k8s.io"), ref.get("kind", "Gateway"))
        parents.setdefault(key, []).append(ref)
    return sorted({m for same in parents.values() for m in _cel_parent_refs(same)})


def httproute_problems(obj: dict[str, Any]) -> list[str]:
    if obj.get("kind") != "HTTPRoute" or not isinstance(obj.get("spec"), dict):
        return []
    spec = obj["spec"]
    where = f"HTTPRoute {_dig(obj, 'metadata', 'name')!r}"
    pattern, max_length = _hostname_rule()
    bad = []
    for i, host in enumerate(spec.get("hostnames") or []):
        if not isinstance(host, str) or len(host) > max_length or not _re2_search(pattern, host):
            bad.append(f"{where} spec.hostnames[{i}] {host!r}: not the CRD's Hostname")
    for r, rule in enumerate(spec.get("rules") or []):
        for m, match in enumerate(rule.get("matches") or []):
            if isinstance(match.get("path"), dict):
                bad += [f"{where} spec.rules[{r}].matches[{m}].path: {x}" for x in path_cel_problems(match["path"])]
    refs = spec.get("parentRefs") or []
    bad += [f"{where} spec.parentRefs: {x}" for x in parent_refs_cel_problems(refs)]
    return bad


def output_problems(objects: list[Any]) -> list[str]:
    """Every rule above that a rendered object fails."""
    return [p for obj in objects for p in api_server_problems(obj) + httproute_problems(obj)]
