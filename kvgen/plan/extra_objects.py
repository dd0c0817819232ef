"""extraObjects: Kubernetes objects of the user's own, rendered verbatim after kvgen's.

kvgen neither templates nor labels them; it checks what it can before anything is written:
each has an apiVersion, a kind and a metadata.name (strings); no Secret carries its values
(data, stringData) into the output, whatever the case of its kind and inside a List's items; no two are the same object; a metadata.namespace, when
set, is the one the server is installed into; and an object of a kind kvgen has a schema for
(files/kube-kinds.json, ``kube.has_schema``) is validated as strictly as kvgen's own objects,
its errors at ``extraObjects[i]``, and the API server's own rules (``api_problems``) are applied
to it as kvgen applies them to its own objects. Any other kind is rendered with a warning. After
rendering, ``clashes`` refuses an object that is one of kvgen's own.

The chart's twin is templates/plan/_extraobjects.tpl (kvgen.checkExtraObjects,
kvgen.extraObjectWarnings, kvgen.extraObjectClashes, kvgen.extraObjectApi), in the same words, except the schema
check: Go templates cannot validate a Kubernetes schema, so the chart leaves that to the API
server (helm install, kubectl apply: strict field validation).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from kvgen.core import quantity
from kvgen.core.errors import Path, Problem, format_path, quoted
from kvgen.data import kube
from kvgen.plan import credentials
from kvgen.plan.apiserver import RULES, check_access_modes, fits, matches, pattern_parts, volume_source_problem, what
from kvgen.spec.models import Spec

SECRET_HINT = "create the Secret outside kvgen (kubectl, External Secrets, Sealed Secrets) and reference it"
REQUIRED = {
    "apiVersion": "required: the object's API group and version, a string such as networking.k8s.io/v1",
    "kind": "required: the object's kind, a string such as NetworkPolicy",
    "name": "required: the object's name, a string",
    "object": "an object kubectl and Helm create: a mapping with apiVersion, kind and metadata.name",
    "items": "a List's items: a list of objects, each with apiVersion, kind and metadata.name",
}


def _string(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def group(api_version: str) -> str:
    """The API group of an apiVersion: "networking.k8s.io/v1" -> "networking.k8s.io", "v1" -> ""."""
    return api_version.rpartition("/")[0]


def well_formed(obj: dict[str, Any]) -> bool:
    """Whether an item has the apiVersion, kind and metadata.name the checks below need."""
    meta = obj.get("metadata")
    return (
        _string(obj.get("apiVersion"))
        and _string(obj.get("kind"))
        and isinstance(meta, dict)
        and _string(meta.get("name"))
    )


def is_list(obj: Any) -> bool:
    """Whether an item is a kind whose items are objects of their own (files/apiserver.yaml
    extraObjects.lists: kubectl and Helm create each item, and no object for the List)."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("apiVersion"), str)
        and isinstance(obj.get("kind"), str)
        and f"{obj['apiVersion']} {obj['kind']}" in RULES["extraObjects"]["lists"]
    )


def created(items: list[Any]) -> Iterator[tuple[Path, Any]]:
    """Every object kubectl and Helm create from extraObjects, at its path: an item, or in a List's
    place the List's items (recursively). A List itself is yielded too (``is_list``) before its items."""
    for i, obj in enumerate(items):
        yield from _created(obj, ("extraObjects", i))


def _created(obj: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    yield path, obj
    if is_list(obj) and isinstance(obj.get("items"), list):
        for j, item in enumerate(obj["items"]):
            yield from _created(item, (*path, "items", j))


def check(spec: Spec, k8s_version: str) -> list[Problem]:
    """Every problem of spec.extraObjects that needs no rendering (``namespace``: spec.namespace,
    kvgen --namespace when the spec sets none), on each object they create (a List's items each)."""
    problems: list[Problem] = []
    # a Secret however its kind is written ("secret", "Secret "), and inside any *List's items
    for i, obj in enumerate(spec.extra_objects):
        for at, inner in credentials.objects(obj, ("extraObjects", i)):
            if credentials.kind_of(inner) == "secret":
                for key in ("data", "stringData"):
                    if key in inner:
                        problems.append(
                            Problem(
                                (*at, key),
                                "a Secret's values would be written into kvgen's output (a file, a Git repository, a "
                                "Helm release): kvgen never writes secret values",
                                SECRET_HINT,
                            )
                        )
    seen: dict[tuple[str, str, str, str], Path] = {}
    for base, obj in created(spec.extra_objects):
        if not isinstance(obj, dict):
            problems.append(Problem(base, REQUIRED["object"]))
            continue
        if is_list(obj):
            if "items" in obj and not isinstance(obj["items"], list):
                problems.append(Problem((*base, "items"), REQUIRED["items"]))
            continue
        for key in ("apiVersion", "kind"):
            if not _string(obj.get(key)):
                problems.append(Problem((*base, key), REQUIRED[key]))
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not _string(meta.get("name")):
            problems.append(Problem((*base, "metadata", "name"), REQUIRED["name"]))
        if not well_formed(obj):
            continue
        assert isinstance(meta, dict)
        namespace = meta.get("namespace")
        if isinstance(namespace, str) and spec.namespace is not None and namespace != spec.namespace:
            problems.append(
                Problem(
                    (*base, "metadata", "namespace"),
                    f"{quoted(namespace)} differs from the namespace the server is installed into, "
                    f"{quoted(spec.namespace)} (the spec's namespace, helm -n, kvgen --namespace)",
                    "leave metadata.namespace out (the object then goes where the server goes), or install the "
                    f"server into {namespace}",
                )
            )
        where = namespace if isinstance(namespace, str) else (spec.namespace or "")
        identity = (group(obj["apiVersion"]), obj["kind"], where, meta["name"])
        if identity in seen:
            problems.append(
                Problem(
                    (*base, "metadata", "name"),
                    f"{obj['kind']} {quoted(meta['name'])} is also {format_path(seen[identity])}: the same object twice",
                    "remove one of them, or rename it",
                )
            )
        seen.setdefault(identity, base)
        if kube.has_schema(obj["apiVersion"], obj["kind"], k8s_version):
            for sub, message in kube.validate_object(obj, k8s_version):
                problems.append(Problem((*base, *sub), message))
        problems += api_problems(obj, base)
    return problems


# ----------------------------------------------------------------------------- the API server's rules
# What the API server refuses in an object that passes its schema, in the words kvgen/plan/apiserver.py
# gives the same rules on kvgen's own objects; the tables are files/apiserver.yaml `extraObjects`.
# The chart's twin is kvgen.extraObjectApi (templates/plan/_extraobjects.tpl).

_TABLE: dict[str, Any] = RULES["extraObjects"]
_CONTAINER_LISTS = (  # validatePodSpec: each list's names unique among it and the lists before it
    ("containers", "validateContainers"),
    ("initContainers", "validateInitContainers"),
    ("ephemeralContainers", "validateEphemeralContainers"),
)


def _of_kind(table: dict[str, Any], obj: dict[str, Any]) -> Any:
    """A table's entry for an object's API group (core: the legacy group) and kind, None if none."""
    kinds = table.get(group(obj["apiVersion"]) or "core")
    return kinds.get(obj["kind"]) if isinstance(kinds, dict) else None


def api_problems(obj: dict[str, Any], path: Path) -> list[Problem]:
    """What the API server would refuse in an object extraObjects create (``created``), at ``path``: its
    metadata (any kind, a custom resource's too) and the pod spec a built-in kind holds."""
    # every kind: the API server validates a custom resource's metadata too (apiextensions' strategy:
    # ValidateObjectMetaAccessor with NameIsDNSSubdomain); a pod spec only in the built-in kinds that hold one
    problems: list[Problem] = []
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        problems += _metadata(obj, meta, (*path, "metadata"))
    where = _of_kind(_TABLE["podSpecs"], obj)
    if isinstance(where, str):
        keys = where.split(".")
        parents: list[Any] = [obj]  # the object, then each map on the way to the pod spec
        for key in keys:
            parents.append(parents[-1].get(key) if isinstance(parents[-1], dict) else None)
        if isinstance(parents[-1], dict):
            problems += _pod_spec(parents[-1], (*path, *keys))
        # a pod template's own metadata (ValidatePodTemplateSpec: its labels and annotations; no name)
        template = parents[-2]
        if keys[-2:-1] == ["template"] and isinstance(template, dict) and isinstance(template.get("metadata"), dict):
            at = (*path, *keys[:-1], "metadata")
            problems += _labels_and_annotations(template["metadata"], at, "ValidatePodTemplateSpec")
    claims = _of_kind(_TABLE["claimSpecs"], obj)
    if isinstance(claims, str):
        for at, claim in matches(obj, pattern_parts(claims), path):  # the table's path patterns ([*] each item)
            if isinstance(claim, dict):
                problems += _claim_spec(claim, at)
    return problems


def _claim_spec(claim: dict[str, Any], path: Path) -> list[Problem]:
    """ValidatePersistentVolumeClaimSpec on a claim's spec: ReadWriteOncePod alone."""
    modes = claim.get("accessModes")
    return check_access_modes((*path, "accessModes"), modes) if isinstance(modes, list) else []


def _metadata(obj: dict[str, Any], meta: dict[str, Any], path: Path) -> list[Problem]:
    """ValidateObjectMeta: the name by the kind's name function, then the labels and annotations."""
    problems: list[Problem] = []
    name = meta.get("name")
    row = _of_kind(_TABLE["names"]["kinds"], obj)
    if not isinstance(row, dict):
        row = _TABLE["names"]["default"]
    if isinstance(name, str) and name and row.get("format") and not fits(row["format"], name):
        message = f"{quoted(name)} is not {what(row['format'])} (ValidateObjectMeta: {row['function']})"
        problems.append(Problem((*path, "name"), message))
    return problems + _labels_and_annotations(meta, path, "ValidateObjectMeta")


def _labels_and_annotations(meta: dict[str, Any], path: Path, function: str) -> list[Problem]:
    """The labels (ValidateLabels), the annotations' keys (ValidateAnnotations: case does not matter) and
    their total size, of an object's metadata or a pod template's (``function``: the API server's caller)."""
    problems: list[Problem] = []
    labels = meta.get("labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            if not isinstance(key, str):
                continue
            if not fits("labelKey", key):
                message = f"{quoted(key)} is not {what('labelKey')} ({function}: ValidateLabels)"
                problems.append(Problem((*path, "labels", key), message))
            if isinstance(value, str) and not fits("labelValue", value):
                message = f"{quoted(value)} is not {what('labelValue')} ({function}: ValidateLabels)"
                problems.append(Problem((*path, "labels", key), message))
    notes = meta.get("annotations")
    if isinstance(notes, dict):
        notes_path: Path = (*path, "annotations")
        for key in notes:
            if isinstance(key, str) and not fits("labelKey", key.lower()):
                message = f"{quoted(key)} is not {what('labelKey')} ({function}: ValidateAnnotations)"
                problems.append(Problem((*notes_path, key), message))
        total = sum(
            len(k.encode()) + len(v.encode()) for k, v in notes.items() if isinstance(k, str) and isinstance(v, str)
        )
        limit = RULES["totalAnnotationSizeLimit"]
        if total > limit:
            problems.append(
                Problem(
                    notes_path,
                    f"the annotations add up to {total} bytes (keys and values); the API server refuses more "
                    f"than {limit} in all (ValidateAnnotationsSize)",
                    f"keep {format_path(notes_path)} at most {limit} bytes; put large data in a ConfigMap",
                )
            )
    return problems


def _pod_spec(pod: dict[str, Any], path: Path) -> list[Problem]:
    """ValidatePodSpec: container names (DNS-1123 labels, unique across the pod's containers),
    each container's requests at most its limits, and the volumes (ValidateVolumes)."""
    problems: list[Problem] = []
    names: set[str] = set()
    for key, function in _CONTAINER_LISTS:
        containers = pod.get(key)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            if not isinstance(container, dict):
                continue
            at: Path = (*path, key, i)
            name = container.get("name")
            if isinstance(name, str):
                if not fits("dns1123Label", name):
                    message = (
                        f"{quoted(name)} is not {what('dns1123Label')} (validateContainerCommon: ValidateDNS1123Label)"
                    )
                    problems.append(Problem((*at, "name"), message))
                elif name in names:
                    problems.append(Problem((*at, "name"), f"{quoted(name)}: duplicate container name ({function})"))
                names.add(name)
            if key != "ephemeralContainers":  # an ephemeral container has no resources
                problems += _resources(container.get("resources"), (*at, "resources"))
    volumes = pod.get("volumes")
    seen: set[str] = set()
    for i, vol in enumerate(volumes if isinstance(volumes, list) else []):
        if not isinstance(vol, dict):
            continue
        source = volume_source_problem((*path, "volumes", i), vol)
        if source is not None:
            problems.append(source)
        template = vol.get("ephemeral")
        if isinstance(template, dict) and isinstance(template.get("volumeClaimTemplate"), dict):
            claim = template["volumeClaimTemplate"].get("spec")
            if isinstance(claim, dict):
                problems += _claim_spec(claim, (*path, "volumes", i, "ephemeral", "volumeClaimTemplate", "spec"))
        name = vol.get("name")
        if not isinstance(name, str):
            continue
        if not fits("dns1123Label", name):
            problems.append(
                Problem(
                    (*path, "volumes", i, "name"), f"{quoted(name)} is not {what('dns1123Label')} (ValidateVolumes)"
                )
            )
        elif name in seen:
            problems.append(
                Problem((*path, "volumes", i, "name"), f"{quoted(name)}: duplicate volume name (ValidateVolumes)")
            )
        seen.add(name)
    return problems


def _amount(value: Any) -> Decimal | None:
    """A quantity kvgen compares, exactly: a number from 0 to numberMax, or a plain quantity
    (files/apiserver.yaml extraObjects); None for any other form (the API server judges it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, str):
        return quantity.parse(value) if re.fullmatch(_TABLE["quantity"], value) else None
    if not 0 <= value <= _TABLE["numberMax"]:  # NaN too
        return None
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def _raw(value: Any) -> str:
    """A quantity as written (a whole float without its ".0", as the chart prints it)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed (kubernetes pkg/apis/core/helper/helpers.go: IsNativeResource(name) &&
    !IsHugePageResourceName(name), where a native name has no "/" or contains "kubernetes.io/"): a native
    resource but hugepages.
    An extended resource's or hugepages' request must equal its limit, and needs one."""
    if name.startswith("hugepages-"):
        return False
    return "/" not in name or RULES["nativeResourceDomain"] in name


def _split(value: Any) -> tuple[Decimal, str] | None:
    """A quantity kvgen compares (``_amount``) as its number and its unit ("" for a bare number)."""
    if _amount(value) is None:
        return None
    if isinstance(value, str):
        m = re.fullmatch(r"([0-9.]+)(.*)", value)
        assert m is not None
        return Decimal(m[1]), m[2]
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value)), ""


def _differ(request: Any, limit: Any) -> bool:
    """Whether two quantities surely differ: written in one unit, their numbers differ; in two, their values
    differ by more than a billionth (the chart compares in float64; closer values are left to the API server)."""
    a, b = _split(request), _split(limit)
    if a is None or b is None:
        return False
    if a[1] == b[1]:
        return a[0] != b[0]
    x, y = _amount(request), _amount(limit)
    assert x is not None and y is not None
    return abs(x - y) > Decimal("1e-9") * max(x, y)


def _resources(resources: Any, path: Path) -> list[Problem]:
    """ValidateContainerResourceRequirements: a request above its limit; a request of a resource that cannot be
    overcommitted (extended, hugepages) without a limit, or other than it."""
    if not isinstance(resources, dict):
        return []
    requests, limits = resources.get("requests"), resources.get("limits")
    requests = requests if isinstance(requests, dict) else {}
    limits = limits if isinstance(limits, dict) else {}
    problems: list[Problem] = []
    field = format_path(path)
    for name in _TABLE["resources"]:
        request, limit = _amount(requests.get(name)), _amount(limits.get(name))
        if request is not None and limit is not None and request > limit:
            problems.append(
                Problem(
                    (*path, "requests", name),
                    f"{_raw(requests[name])} must be less than or equal to {name} limit of {_raw(limits[name])} "
                    "(ValidateContainerResourceRequirements)",
                    f"lower {field}.requests.{name} or raise {field}.limits.{name}",
                )
            )
    for name in sorted(n for n in requests if isinstance(n, str) and not overcommit_allowed(n)):
        if name not in limits:
            problems.append(
                Problem(
                    (*path, "limits", name),
                    f"required: {name} cannot be overcommitted, so its request needs a limit equal to it "
                    "(ValidateContainerResourceRequirements)",
                    f"set {field}.limits.{name} to the request, or give the limit alone (the request defaults to it)",
                )
            )
        elif _differ(requests[name], limits[name]):
            problems.append(
                Problem(
                    (*path, "requests", name),
                    f"{_raw(requests[name])} must be equal to {name} limit of {_raw(limits[name])}: it cannot be "
                    "overcommitted (ValidateContainerResourceRequirements)",
                    f"make {field}.requests.{name} equal to {field}.limits.{name}, or leave the request out",
                )
            )
    return problems


def warnings(spec: Spec, k8s_version: str) -> list[str]:
    """An object of a kind kvgen has no schema for (a CRD it does not vendor) is rendered unchecked."""
    return [
        f"{format_path(at)}: {obj['apiVersion']} {obj['kind']} is not validated: kvgen has no schema for it"
        for at, obj in created(spec.extra_objects)
        if isinstance(obj, dict)
        and not is_list(obj)
        and well_formed(obj)
        and not kube.has_schema(obj["apiVersion"], obj["kind"], k8s_version)
    ]


def clashes(spec: Spec, own: list[dict[str, Any]]) -> list[Problem]:
    """extraObjects that are one of kvgen's own rendered objects (``own``): the same group, kind and name."""
    rendered = {(group(o["apiVersion"]), o["kind"], o["metadata"]["name"]): o for o in own}
    problems = []
    for at, obj in created(spec.extra_objects):
        if is_list(obj) or not isinstance(obj, dict) or not well_formed(obj):
            continue
        mine = rendered.get((group(obj["apiVersion"]), obj["kind"], obj["metadata"]["name"]))
        if mine is not None:
            problems.append(
                Problem(
                    (*at, "metadata", "name"),
                    f"{obj['kind']} {quoted(obj['metadata']['name'])} is kvgen's own {mine['apiVersion']} "
                    f"{mine['kind']} {quoted(mine['metadata']['name'])}: one of them would replace the other",
                    "rename it, or set what you need through the spec's own fields (see `kvgen schema`)",
                )
            )
    return problems
