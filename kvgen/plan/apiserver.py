"""What the Kubernetes API server would refuse, kvgen refuses: its validation rules for the
fields kvgen renders, checked on the spec so that each problem names the spec path.

Strict OpenAPI validation (``kvgen.data.kube``) checks types and field names; the API server runs
its own validation functions on top (pkg/apis/core/validation/validation.go and apimachinery),
and the kubelet and controllers add a few more that decide whether pods can ever start. Each
rule below names the upstream function it follows. The patterns, limits and enumerations are
data in ``charts/kvgen/files/apiserver.yaml``, shared with the chart's ``_apiserver.tpl``.

kvgen adds one bound of its own: every size is at most ``maxBytes`` (1 PiB), so that no size
or sum of sizes comes near the 8 EiB a signed 64-bit integer holds (the chart sizes in int64).
"""

from __future__ import annotations

import posixpath
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from functools import cache
from typing import Any

from pydantic import BaseModel

from kvgen.core import quantity
from kvgen.core.errors import Path, Problem, format_path, quoted
from kvgen.data import catalog
from kvgen.data.catalog import InstanceInfo
from kvgen.data.formats import fits as fits
from kvgen.data.formats import is_config_map_key as is_config_map_key
from kvgen.data.formats import is_dns1123_subdomain as is_dns1123_subdomain
from kvgen.data.formats import is_label_key as is_label_key
from kvgen.data.formats import is_label_value as is_label_value
from kvgen.data.formats import what as what
from kvgen.plan import model_source, pod_settings, rules
from kvgen.spec import models as spec_module
from kvgen.spec.models import Spec

_RULES = catalog.load("apiserver.yaml")
RULES: dict[str, Any] = _RULES  # the whole table, for the rules of other modules (extra_objects)
INT32_MAX: int = _RULES["int32Max"]
LWS_REPLICAS_MAX: int = _RULES["lwsReplicasMax"]
MAX_BYTES: int = _RULES["maxBytes"]
MAX_BYTES_TEXT: str = _RULES["maxBytesText"]
LABEL_VALUE_MAX = _RULES["formats"]["labelValue"]["maxLength"]
REVISION_HASH_MAX = _RULES["revisionHashMaxLength"]


def _quantity(name: str, value: quantity.Size | quantity.Cpu | str | int) -> Decimal:
    """A quantity: cpu in millicores, every other resource (a size) in bytes. The spec's are parsed
    already (kvgen.core.quantity Size and Cpu, at validation); an embedded object's (a claim
    template's storage) is text."""
    if isinstance(value, quantity.Cpu):
        return value.millicores
    if isinstance(value, quantity.Size):
        return Decimal(value.bytes)
    return quantity.parse(str(value)) * 1000 if name == "cpu" else Decimal(quantity.to_bytes(str(value)))


# ----------------------------------------------------------------------------- the table

Found = Iterator[tuple[Path, dict[str, str]]]


@cache
def pattern_parts(pattern: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\[\*\]|[^.\[\]]+", pattern))


def matches(node: Any, parts: tuple[str, ...], path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every set value at a path pattern of the table ([*] every item, * every entry), with its path."""
    if not parts:
        yield path, node
        return
    part = parts[0]
    items: Iterable[tuple[str | int, Any]]
    if part == "[*]":
        items = enumerate(node) if isinstance(node, list) else ()
    elif part == "*":
        items = node.items() if isinstance(node, Mapping) else ()
    else:
        items = [(part, rules.child(node, part))]
    for key, value in items:
        if value is not None:
            yield from matches(value, parts[1:], (*path, key))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _limit(row: dict[str, Any]) -> Any:
    return _RULES[row["limit"]] if isinstance(row["limit"], str) else row["limit"]


def _checked(row: dict[str, Any], value: Any) -> bool:
    return isinstance(value, str) and (value != "" or not row.get("skipEmpty"))


def _format(row: dict[str, Any], path: Path, value: Any) -> Found:
    if _checked(row, value) and not fits(row["format"], value):
        yield path, {"what": what(row["format"])}


def _one_of(row: dict[str, Any], path: Path, value: Any) -> Found:
    if _checked(row, value) and value not in _RULES[row["values"]]:
        yield path, {"values": ", ".join(_RULES[row["values"]])}


def _required(row: dict[str, Any], path: Path, node: Any) -> Found:
    if isinstance(node, (Mapping, BaseModel)):
        keys = row["key"].split(".")
        for key in keys:
            node = rules.child(node, key)
        if node is None or node == []:
            yield (*path, *keys), {}


def _at_most(row: dict[str, Any], path: Path, value: Any) -> Found:
    n = _number(value)
    if n is not None and n > _limit(row):
        yield path, {}


def _above(row: dict[str, Any], path: Path, value: Any) -> Found:
    n = _number(value)
    if n is not None and n <= _limit(row):
        yield path, {}


def _quantity_max(row: dict[str, Any], path: Path, value: Any) -> Found:
    if _quantity("size", value) > _limit(row):
        yield path, {}


def _requests_within_limits(row: dict[str, Any], path: Path, node: Any) -> Found:
    for name in row["resources"]:
        request = rules.child(rules.child(node, "requests"), name)
        limit = rules.child(rules.child(node, "limits"), name)
        if request is not None and limit is not None and _quantity(name, request) > _quantity(name, limit):
            words = {"raw": str(request), "other": str(limit), "resource": name, "field": format_path(path)}
            yield (*path, "requests", name), words


def _forbidden(_row: dict[str, Any], path: Path, _value: Any) -> Found:
    yield path, {}  # the table only visits set fields


def _reserved(row: dict[str, Any], path: Path, value: Any) -> Found:
    """A name or path kvgen renders itself (files/runtime.yaml wiring.reserved: ``names``, and ``prefixes``
    reported as PREFIXN); ``match: path``: a path inside one of them, or holding one."""
    if not isinstance(value, str):
        return
    table = catalog.runtime()["wiring"]["reserved"]
    if row.get("match") == "path":
        ours = [r for r in table[row["names"]] if _inside(value, r)]
        ours += [p + "N" for p in table.get(row.get("prefixes", ""), []) if value.startswith(p) or _inside(value, p)]
    else:
        ours = [r for r in table[row["names"]] if value == r]
        ours += [p + "N" for p in table.get(row.get("prefixes", ""), []) if value.startswith(p)]
    if ours:
        yield path, {"reserved": ours[0]}


def _is_given(value: Any) -> bool:
    """A field an exclusive row counts: set, not null and not ""."""
    return value is not None and value != ""


def _exclusive(row: dict[str, Any], path: Path, node: Any) -> Found:
    """Of a map's ``keys`` (a list of this file, or the list itself), at most one is given (``atLeast: 1``:
    at least one); the problem is the map's, or its key ``at``'s."""
    if not isinstance(node, (Mapping, BaseModel)):
        return
    keys = _RULES[row["keys"]] if isinstance(row["keys"], str) else row["keys"]
    given = [k for k in keys if _is_given(rules.child(node, k))]
    if (len(given) == 0) if row.get("atLeast") == 1 else (len(given) > 1):
        yield (*path, row["at"]) if "at" in row else path, {"keys": ", ".join(keys), "found": ", ".join(given)}


def _unique_key(row: dict[str, Any], value: Any) -> Any:
    return value.removesuffix("/") if row.get("normalize") == "trailingSlash" else value


KINDS: dict[str, Callable[[dict[str, Any], Path, Any], Found]] = {
    "forbidden": _forbidden,
    "format": _format,
    "oneOf": _one_of,
    "required": _required,
    "atMost": _at_most,
    "above": _above,
    "quantityMax": _quantity_max,
    "requestsWithinLimits": _requests_within_limits,
    "reserved": _reserved,
    "exclusive": _exclusive,
    "unique": lambda _row, _path, _value: iter(()),  # _table: it compares a row's values with each other
}


def _say(text: str, words: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: words[m.group(1)], text)


def _table(spec: Spec, instance: InstanceInfo | None) -> list[tuple[dict[str, Any], Problem]]:
    """The problems of the rows of files/apiserver.yaml `checks`, each with its row."""
    found: list[tuple[dict[str, Any], Problem]] = []
    facts = {"spec": spec, "instance": instance}
    for row in _RULES["checks"]:
        if "when" in row and not rules.holds(row["when"], facts):
            continue
        refused = {p.path for _row, p in found} if row.get("skipRefused") else set()  # one problem a field
        seen: set[Any] = set()  # unique: the row's values so far
        for pattern in row["fields"]:
            for path, value in matches(spec, pattern_parts(pattern)):
                subject = path[-1] if row.get("subject") == "key" else value
                hits = KINDS[row["check"]](row, path, subject)
                if row["check"] == "unique" and isinstance(subject, str):
                    key = _unique_key(row, subject)
                    hits = iter([(path, {})] if key in seen else [])
                    seen.add(key)
                for where, extra in hits:
                    if where in refused:
                        continue
                    words = {"value": quoted(subject), "raw": str(subject), **extra}
                    if "limit" in row:
                        words |= {"limit": str(_limit(row)), "limitText": str(_RULES.get(f"{row['limit']}Text"))}
                    hint = _say(row["hint"], words) if "hint" in row else None
                    found.append((row, Problem(where, _say(row["message"], words), hint)))
    return found


# ----------------------------------------------------------------------------- rules kept as code
# (files/apiserver.yaml says which, and why)


def _is_size(field: Any) -> bool:
    annotation = field.rebuild_annotation()
    return annotation == spec_module.Size or spec_module.Size in typing.get_args(annotation)


@cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, key, is a size) for each field of a model class: worked out once per class."""
    return tuple((name, field.alias or name, _is_size(field)) for name, field in model.model_fields.items())


def sizes(model: BaseModel, path: Path = ()) -> Iterator[tuple[Path, quantity.Size]]:
    """Every size set in the spec (a ``Size`` field anywhere in the models), with its path: the
    table's quantityMax row must list them all (tests/test_apiserver.py)."""
    for name, key, is_size in _fields(type(model)):
        value = getattr(model, name)
        if value is None:
            continue
        if is_size:
            yield (*path, key), value
        elif isinstance(value, BaseModel):
            yield from sizes(value, (*path, key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    yield from sizes(item, (*path, key, i))


def _check_tier_sum(spec: Spec) -> list[Problem]:
    total = sum(
        _quantity("size", t.file_system.empty_dir.size)
        for t in spec.kv_cache_offloading.secondary
        if t.file_system.empty_dir
    )
    if total <= MAX_BYTES:
        return []
    return [
        Problem(
            ("kvCacheOffloading", "secondary"),
            f"the emptyDir tiers add up to more than kvgen's bound of {MAX_BYTES_TEXT} for the pod's ephemeral storage",
            f"keep their sum at most {MAX_BYTES_TEXT}",
        )
    ]


def check_access_modes(path: Path, modes: list[Any]) -> list[Problem]:
    """ValidatePersistentVolumeClaimSpec: ReadWriteOncePod only alone (a claim template's, a disk tier's, a claim
    of extraObjects')."""
    if "ReadWriteOncePod" in modes and any(m in _RULES["accessModes"] and m != "ReadWriteOncePod" for m in modes):
        return [
            Problem(
                path,
                "ReadWriteOncePod may not be combined with other access modes (ValidatePersistentVolumeClaimSpec)",
                "keep ReadWriteOncePod alone",
            )
        ]
    return []


def _check_pvc_spec(base: Path, pvc: dict[str, Any]) -> list[Problem]:
    """ValidatePersistentVolumeClaimSpec beyond the table: ReadWriteOncePod alone, the storage size."""
    problems: list[Problem] = []
    modes = pvc.get("accessModes")
    if isinstance(modes, list):
        problems += check_access_modes((*base, "accessModes"), modes)
    resources = pvc.get("resources")
    requests = resources.get("requests") if isinstance(resources, dict) else None
    storage = requests.get("storage") if isinstance(requests, dict) else None
    if storage is None:
        return problems  # the table's required row reports it
    path = (*base, "resources", "requests", "storage")
    text = str(storage)
    if (
        isinstance(storage, bool)
        or not isinstance(storage, (str, int))
        or not re.fullmatch(spec_module.QUANTITY_PATTERN, text)
    ):
        shown = quoted(storage) if isinstance(storage, str) else text
        problems.append(
            Problem(
                path,
                f"{shown} is not a size (kvgen reads a claim's size as it reads every size)",
                "write it as a Kubernetes quantity such as 100Gi, 512Mi or 1T",
            )
        )
    elif (n := _quantity("size", text)) <= 0:
        problems.append(
            Problem(path, f"{text} must be greater than zero (ValidatePersistentVolumeClaimSpec)", "request e.g. 100Gi")
        )
    elif n > MAX_BYTES:
        problems.append(
            Problem(
                path,
                f"{text} is above kvgen's bound of {MAX_BYTES_TEXT} for any size (sizes near 8 EiB overflow the "
                "64-bit integers Kubernetes and Helm compute with)",
                f"use at most {MAX_BYTES_TEXT}",
            )
        )
    return problems


def _check_claim_ref(base: Path, name: str, sub_path: str | None) -> list[Problem]:
    problems: list[Problem] = []
    if not is_dns1123_subdomain(name):
        problems.append(
            Problem(
                (*base, "name"),
                f"{quoted(name)} cannot name a PersistentVolumeClaim: {what('dns1123Subdomain')}; the pod "
                "would wait for a claim that cannot exist (ValidatePersistentVolumeClaim, ValidatePersistentVolumeName)",
                "use the claim's metadata.name",
            )
        )
    if sub_path:
        # pkg/apis/core/validation/validation.go validateVolumeMounts -> validateLocalDescendingPath
        if posixpath.isabs(sub_path):
            problems.append(
                Problem(
                    (*base, "path"),
                    f"{quoted(sub_path)} must be a relative path inside the claim (it becomes the mount's "
                    "subPath; validateLocalDescendingPath)",
                    f"write it as {quoted(sub_path.lstrip('/'))}",
                )
            )
        if ".." in sub_path.split("/"):
            problems.append(
                Problem(
                    (*base, "path"),
                    f"{quoted(sub_path)} must not contain '..' (it becomes the mount's subPath; validateLocalDescendingPath)",
                    "name a directory inside the claim",
                )
            )
    return problems


def _text(data: Any, key: str) -> str:
    """A string field of an embedded Kubernetes object; "" when unset or of another type (the
    schema check reports wrong types)."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _check_tolerations(tolerations: list[dict[str, Any]]) -> list[Problem]:
    """ValidateTolerations between a toleration's fields (the table checks each field alone)."""
    problems: list[Problem] = []
    for i, tol in enumerate(tolerations):
        base: Path = ("scheduling", "tolerations", i)
        key, operator, value, effect = (_text(tol, k) for k in ("key", "operator", "value", "effect"))
        seconds = tol.get("tolerationSeconds") if isinstance(tol, dict) else None
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            seconds = None
        if not key and operator != "Exists":
            problems.append(
                Problem(
                    (*base, "operator"),
                    'operator must be Exists when key is empty (which means "match all values '
                    'and all keys") (ValidateTolerations)',
                    "set operator: Exists, or name the taint's key",
                )
            )
        if seconds is not None and effect != "NoExecute":
            problems.append(
                Problem(
                    (*base, "effect"),
                    "effect must be NoExecute when tolerationSeconds is set (ValidateTolerations)",
                    "set effect: NoExecute, or remove tolerationSeconds",
                )
            )
        if seconds is not None and not -(2**63) <= seconds < 2**63:
            problems.append(Problem((*base, "tolerationSeconds"), f"{seconds} does not fit the int64 field", None))
        if operator in ("Equal", "") and not is_label_value(value):
            problems.append(
                Problem((*base, "value"), f"{quoted(value)} is not {what('labelValue')} (ValidateTolerations)", None)
            )
        elif operator == "Exists" and value:
            problems.append(
                Problem(
                    (*base, "value"),
                    "value must be empty when operator is Exists (ValidateTolerations)",
                    "remove value, or use operator: Equal",
                )
            )
    return problems


def _check_statefulsets(spec: Spec, statefulsets: list[str]) -> list[Problem]:
    problems: list[Problem] = []
    room = LABEL_VALUE_MAX - 1 - REVISION_HASH_MAX
    for name in statefulsets:
        if len(name) > room:
            longest = len(spec.object_name) - (len(name) - room)
            problems.append(
                Problem(
                    ("name",),
                    f"the StatefulSet {quoted(name)} ({len(name)} characters) can never create its pods: they carry "
                    f"the label controller-revision-hash=<StatefulSet name>-<hash of up to {REVISION_HASH_MAX} characters>, "
                    f"and a label value is at most {LABEL_VALUE_MAX} characters, so a StatefulSet's name may have at most {room}",
                    f"use a name of at most {longest} characters for a server spanning several nodes",
                )
            )
    return problems


def volume_source_problem(path: Path, vol: dict[str, Any]) -> Problem | None:
    """A volume with no source or more than one (validateVolumeSource): the spec's pod.volumes and any pod spec of
    extraObjects."""
    sources = [s for s in _RULES["volumeSources"] if vol.get(s) is not None]
    if len(sources) == 1:
        return None
    return Problem(
        path,
        (
            f"may not specify more than 1 volume type ({', '.join(sources)}; validateVolumeSource)"
            if sources
            else "must specify a volume type (validateVolumeSource)"
        ),
        "give each volume exactly one source, e.g. persistentVolumeClaim, configMap or emptyDir",
    )


def _inside(path: str, other: str) -> bool:
    """One path is the other, or inside it."""
    a, b = path.removesuffix("/") or "/", other.removesuffix("/") or "/"
    return a == b or a.startswith(b.removesuffix("/") + "/") or b.startswith(a.removesuffix("/") + "/")


def _check_volumes(spec: Spec) -> list[Problem]:
    """pod.volumes: each one source (validateVolumeSource); vllm.volumeMounts: a known volume
    (validateVolumeMounts). Names and paths, unique and none of kvgen's own, are rows of the table."""
    problems: list[Problem] = []
    names: set[str] = set()
    for i, vol in enumerate(spec.pod.volumes):
        source = volume_source_problem(("pod", "volumes", i), vol)
        if source is not None:
            problems.append(source)
        if isinstance(vol.get("name"), str):
            names.add(vol["name"])
    for i, m in enumerate(spec.vllm.volume_mounts):
        name = m.get("name")
        if isinstance(name, str) and name not in names:
            problems.append(
                Problem(
                    ("vllm", "volumeMounts", i, "name"),
                    f"{quoted(name)} is not a volume of pod.volumes (validateVolumeMounts: not found)",
                    "add the volume to pod.volumes",
                )
            )
    return problems


def _check_extended_resources(spec: Spec) -> list[Problem]:
    """resources.extra: IsExtendedResourceName (validateResourceName), and no GPU of kvgen's own."""
    problems: list[Problem] = []
    for name in spec.resources.extra:
        path: Path = ("resources", "extra", name)
        if any(name == g or (g.endswith("-") and name.startswith(g)) for g in _RULES["gpuResources"]):
            problems.append(
                Problem(
                    path,
                    f"{name} is requested by kvgen itself, from instance and parallelism",
                    "remove it; set instance.gpus, instance.mig or parallelism",
                )
            )
        elif "/" not in name or _RULES["nativeResourceDomain"] in name or not is_label_key(name):
            problems.append(
                Problem(
                    path,
                    f"{quoted(name)} is not an extended resource name: a domain-prefixed name such as "
                    "vpc.amazonaws.com/efa or rdma/ib, outside kubernetes.io (IsExtendedResourceName)",
                    None,
                )
            )
    return problems


def _check_metadata(
    labels_path: Path, labels: dict[str, str], notes_path: Path, notes: dict[str, str]
) -> list[Problem]:
    """Extra labels and annotations keys (ValidateLabels, ValidateAnnotations on an object's
    metadata), kvgen's own keys first, and the annotations' total size (ValidateAnnotationsSize)."""
    problems: list[Problem] = []
    reserved_labels, reserved_notes = pod_settings.reserved_labels(), pod_settings.reserved_annotations()
    for key in labels:
        path: Path = (*labels_path, key)
        if key in reserved_labels:
            problems.append(
                Problem(
                    path,
                    f"{quoted(key)} is a label kvgen sets itself (its selector and bookkeeping: {', '.join(reserved_labels)})",
                    "use another key",
                )
            )
        elif not is_label_key(key):
            problems.append(Problem(path, f"{quoted(key)} is not {what('labelKey')} (ValidateLabels)", None))
    for key in notes:
        path = (*notes_path, key)
        if key in reserved_notes:
            problems.append(
                Problem(
                    path,
                    f"{quoted(key)} is an annotation kvgen sets itself ({', '.join(reserved_notes)})",
                    "use another key",
                )
            )
        elif not is_label_key(key.lower()):
            problems.append(Problem(path, f"{quoted(key)} is not {what('labelKey')} (ValidateAnnotations)", None))
    total = sum(len(k.encode()) + len(v.encode()) for k, v in notes.items())
    room = _RULES["totalAnnotationSizeLimit"] - _RULES["annotationsReserve"]
    if total > room:
        problems.append(
            Problem(
                notes_path,
                f"the annotations add up to {total} bytes (keys and values); the API server refuses more than "
                f"{_RULES['totalAnnotationSizeLimit']} in all (ValidateAnnotationsSize), and kvgen keeps "
                f"{_RULES['annotationsReserve']} of them for its own annotations",
                f"keep {format_path(notes_path)} at most {room} bytes; put large data in a ConfigMap",
            )
        )
    return problems


def _zero(value: int | str) -> bool:
    """An IntOrString of a rollout that counts no pod: 0 or "0%"."""
    return value == 0 or value == "0%"


def _check_strategy(spec: Spec) -> list[Problem]:
    """deployment.strategy: only a Deployment has one (ValidateDeploymentStrategy), and
    ValidateRollingUpdateDeployment with kvgen's defaults in the unset fields."""
    strategy = spec.deployment.strategy
    if strategy is None:
        return []
    base: Path = ("deployment", "strategy")
    nodes = spec.parallelism.nodes
    if nodes > 1:
        rendered = "a LeaderWorkerSet" if spec.multi_node.engine == "leaderworkerset" else "two StatefulSets"
        return [
            Problem(
                base,
                f"applies to a Deployment; this server spans {nodes} nodes (parallelism.nodes) and is rendered as "
                f"{rendered}, which kvgen rolls out one pod (group) at a time",
                "remove deployment.strategy",
            )
        ]
    if spec.model.cache is not None and spec.model.cache.claim_template is not None:
        return [
            Problem(
                base,
                "applies to a Deployment; model.cache.claimTemplate (a claim per pod) renders this server as a "
                "StatefulSet, which kvgen rolls out one pod at a time",
                "remove deployment.strategy, or share one claim (model.cache.claim) and keep the Deployment",
            )
        ]
    rolling = strategy.rolling_update
    if strategy.type == "Recreate":
        if rolling is None:
            return []
        return [
            Problem(
                (*base, "rollingUpdate"),
                "may not be specified when strategy `type` is 'Recreate' (ValidateDeploymentStrategy)",
                "remove rollingUpdate, or use type RollingUpdate",
            )
        ]
    default = catalog.runtime()["wiring"]["deploymentStrategy"]
    surge = rolling.max_surge if rolling is not None and rolling.max_surge is not None else default["maxSurge"]
    unavailable = rolling.max_unavailable if rolling is not None else None
    path: Path = (*base, "rollingUpdate", "maxUnavailable")
    problems: list[Problem] = []
    if isinstance(unavailable, str) and int(unavailable[:-1]) > 100:
        problems.append(
            Problem(path, f"{quoted(unavailable)} must not be greater than 100% (IsNotMoreThan100Percent)", None)
        )
    if _zero(surge) and unavailable is not None and _zero(unavailable):
        problems.append(
            Problem(
                path,
                "may not be 0 when `maxSurge` is 0 (ValidateRollingUpdateDeployment: no pod could be replaced)",
                "set maxSurge above 0 (the rollout then needs GPUs for the extra pods), or maxUnavailable above 0",
            )
        )
    return problems


def _check_pod_settings(spec: Spec) -> list[Problem]:
    """pod.labels and pod.annotations (the pod template's), service.labels and
    service.annotations (the Service's), commonLabels and commonAnnotations (every object's)."""
    return [
        *_check_metadata(("pod", "labels"), spec.pod.labels, ("pod", "annotations"), spec.pod.annotations),
        *_check_metadata(
            ("service", "labels"), spec.service.labels, ("service", "annotations"), spec.service.annotations
        ),
        *_check_metadata(("commonLabels",), spec.common_labels, ("commonAnnotations",), spec.common_annotations),
    ]


def check_spec(spec: Spec, instance: InstanceInfo | None, statefulsets: list[str]) -> list[Problem]:
    """Every problem the API server (or the kubelet) would have with what this spec renders.
    ``instance`` is the resolved node (None when it could not be resolved); ``statefulsets``
    the names of the StatefulSets the spec renders."""
    found = _table(spec, instance)
    problems = [p for _row, p in found]
    if not any(row["check"] == "quantityMax" for row, _p in found):  # a size above the bound is reported as itself
        problems += _check_tier_sum(spec)
    for i, tier in enumerate(spec.kv_cache_offloading.secondary):
        pvc = tier.file_system.pvc
        base: Path = ("kvCacheOffloading", "secondary", i, "fileSystem", "pvc")
        if pvc is not None and pvc.spec is not None:
            problems += _check_pvc_spec((*base, "spec"), pvc.spec)
        elif pvc is not None and pvc.ref is not None:
            problems += _check_claim_ref((*base, "ref"), pvc.ref.name, pvc.ref.path)
    model_claim = model_source.model_pvc(spec)
    if model_claim is not None:
        claim, sub_path = model_claim
        problems += [
            Problem(("model", "uri"), p.message, p.hint) for p in _check_claim_ref(("model", "uri"), claim, sub_path)
        ]
    if spec.model.cache is not None and spec.model.cache.claim_template is not None:
        modes = [str(m) for m in spec.model.cache.claim_template.access_modes]
        problems += check_access_modes(("model", "cache", "claimTemplate", "accessModes"), modes)
    if spec.model.cache is not None and spec.model.cache.claim is not None:
        problems += _check_claim_ref(
            ("model", "cache", "claim"), spec.model.cache.claim.name, model_source.cache_path(spec)
        )
    problems += _check_tolerations(spec.scheduling.tolerations)
    problems += _check_statefulsets(spec, statefulsets)
    problems += _check_pod_settings(spec)
    problems += _check_extended_resources(spec)
    problems += _check_volumes(spec)
    problems += _check_strategy(spec)
    return problems
