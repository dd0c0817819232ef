"""extraObjects: Kubernetes objects of the user's own, rendered verbatim after kvgen's.

kvgen neither templates nor labels them; it checks what it can before anything is written:
each has an apiVersion, a kind and a metadata.name (strings); no Secret carries its values
(data, stringData) into the output, whatever the case of its kind and inside a List's items; no two are the same object; a metadata.namespace, when
set, is the one the server is installed into; and an object of a kind kvgen has a schema for
(files/kube-kinds.json, ``kube.has_schema``) is validated as strictly as kvgen's own objects,
its errors at ``extraObjects[i]``. Any other kind is rendered with a warning. After rendering,
``clashes`` refuses an object that is one of kvgen's own.

The chart's twin is templates/plan/_extraobjects.tpl (kvgen.checkExtraObjects,
kvgen.extraObjectWarnings, kvgen.extraObjectClashes), in the same words, except the schema
check: Go templates cannot validate a Kubernetes schema, so the chart leaves that to the API
server (helm install, kubectl apply: strict field validation).
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Path, Problem, quoted
from kvgen.data import kube
from kvgen.plan import credentials
from kvgen.spec.models import Spec

SECRET_HINT = "create the Secret outside kvgen (kubectl, External Secrets, Sealed Secrets) and reference it"
REQUIRED = {
    "apiVersion": "required: the object's API group and version, a string such as networking.k8s.io/v1",
    "kind": "required: the object's kind, a string such as NetworkPolicy",
    "name": "required: the object's name, a string",
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


def check(spec: Spec, k8s_version: str) -> list[Problem]:
    """Every problem of spec.extraObjects that needs no rendering (``namespace``: spec.namespace,
    kvgen --namespace when the spec sets none)."""
    problems: list[Problem] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for i, obj in enumerate(spec.extra_objects):
        base: Path = ("extraObjects", i)
        for key in ("apiVersion", "kind"):
            if not _string(obj.get(key)):
                problems.append(Problem((*base, key), REQUIRED[key]))
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not _string(meta.get("name")):
            problems.append(Problem((*base, "metadata", "name"), REQUIRED["name"]))
        # a Secret however its kind is written ("secret", "Secret "), and inside a List's items
        for at, inner in credentials.objects(obj, base):
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
                    f"{obj['kind']} {quoted(meta['name'])} is also extraObjects[{seen[identity]}]: the same object twice",
                    "remove one of them, or rename it",
                )
            )
        seen.setdefault(identity, i)
        if kube.has_schema(obj["apiVersion"], obj["kind"], k8s_version):
            for sub, message in kube.validate_object(obj, k8s_version):
                problems.append(Problem((*base, *sub), message))
    return problems


def warnings(spec: Spec, k8s_version: str) -> list[str]:
    """An object of a kind kvgen has no schema for (a CRD it does not vendor) is rendered unchecked."""
    return [
        f"extraObjects[{i}]: {obj['apiVersion']} {obj['kind']} is not validated: kvgen has no schema for it"
        for i, obj in enumerate(spec.extra_objects)
        if well_formed(obj) and not kube.has_schema(obj["apiVersion"], obj["kind"], k8s_version)
    ]


def clashes(spec: Spec, own: list[dict[str, Any]]) -> list[Problem]:
    """extraObjects that are one of kvgen's own rendered objects (``own``): the same group, kind and name."""
    rendered = {(group(o["apiVersion"]), o["kind"], o["metadata"]["name"]): o for o in own}
    problems = []
    for i, obj in enumerate(spec.extra_objects):
        mine = rendered.get((group(obj["apiVersion"]), obj["kind"], obj["metadata"]["name"]))
        if mine is not None:
            problems.append(
                Problem(
                    ("extraObjects", i, "metadata", "name"),
                    f"{obj['kind']} {quoted(obj['metadata']['name'])} is kvgen's own {mine['apiVersion']} "
                    f"{mine['kind']} {quoted(mine['metadata']['name'])}: one of them would replace the other",
                    "rename it, or set what you need through the spec's own fields (see `kvgen schema`)",
                )
            )
    return problems
