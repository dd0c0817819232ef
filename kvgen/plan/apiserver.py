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
from collections.abc import Iterator
from decimal import Decimal
from functools import cache
from typing import Any

from pydantic import BaseModel

from kvgen.core import quantity
from kvgen.core.errors import Path, Problem
from kvgen.data import catalog
from kvgen.data.catalog import InstanceInfo
from kvgen.plan import model_source, pod_settings
from kvgen.spec import models as spec_module
from kvgen.spec.models import Spec

_RULES = catalog.load("apiserver.yaml")
INT32_MAX: int = _RULES["int32Max"]
LWS_REPLICAS_MAX: int = _RULES["lwsReplicasMax"]
MAX_BYTES: int = _RULES["maxBytes"]
MAX_BYTES_TEXT: str = _RULES["maxBytesText"]
LABEL_VALUE_MAX = _RULES["formats"]["labelValue"]["maxLength"]
REVISION_HASH_MAX = _RULES["revisionHashMaxLength"]


@cache
def _pattern(kind: str) -> re.Pattern[str]:
    return re.compile(_RULES["formats"][kind]["pattern"])


def _fits(kind: str, value: str) -> bool:
    fmt = _RULES["formats"][kind]
    return len(value) <= fmt["maxLength"] and _pattern(kind).fullmatch(value) is not None


def what(kind: str) -> str:
    return _RULES["formats"][kind]["what"]


def is_label_value(value: str) -> bool:
    """apimachinery content.IsLabelValue."""
    return _fits("labelValue", value)


def is_dns1123_subdomain(value: str) -> bool:
    """apimachinery validation.IsDNS1123Subdomain."""
    return _fits("dns1123Subdomain", value)


def is_label_key(value: str) -> bool:
    """apimachinery content.IsLabelKey (IsQualifiedName): [prefix/]name."""
    parts = value.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2 and not is_dns1123_subdomain(parts[0]):
        return False
    return _fits("labelKeyName", parts[-1])


def is_config_map_key(value: str) -> bool:
    """apimachinery validation.IsConfigMapKey, with its hasChDirPrefix."""
    return _fits("configMapKey", value) and value not in (".", "..") and not value.startswith("..")


# ----------------------------------------------------------------------------- sizes


def _is_size(field: Any) -> bool:
    annotation = field.rebuild_annotation()
    return annotation == spec_module.Size or spec_module.Size in typing.get_args(annotation)


@cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, key, is a size) for each field of a model class: worked out once per class."""
    return tuple((name, field.alias or name, _is_size(field)) for name, field in model.model_fields.items())


def sizes(model: BaseModel, path: Path = ()) -> Iterator[tuple[Path, quantity.Size]]:
    """Every size set in the spec (a ``Size`` field anywhere in the models), with its path."""
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


def _too_large() -> str:
    # no byte count: the chart says the same, and cannot count above int64
    return (
        f"is above kvgen's bound of {MAX_BYTES_TEXT} for any size "
        "(sizes near 8 EiB overflow the 64-bit integers Kubernetes and Helm compute with)"
    )


def _check_sizes(spec: Spec) -> list[Problem]:
    problems: list[Problem] = []
    for path, value in sizes(spec):
        n = value.bytes
        if n > MAX_BYTES:
            problems.append(Problem(path, f"{value} {_too_large()}", f"use at most {MAX_BYTES_TEXT}"))
    total = sum(
        t.file_system.empty_dir.size.bytes for t in spec.kv_cache_offloading.secondary if t.file_system.empty_dir
    )
    if total > MAX_BYTES and not problems:  # one tier above the bound is reported as itself
        problems.append(
            Problem(
                ("kvCacheOffloading", "secondary"),
                "the emptyDir tiers add up to more than kvgen's bound of "
                f"{MAX_BYTES_TEXT} for the pod's ephemeral storage",
                f"keep their sum at most {MAX_BYTES_TEXT}",
            )
        )
    return problems


# ----------------------------------------------------------------------------- resources


def _compare(name: str, value: quantity.Size | quantity.Cpu) -> Decimal:
    return value.millicores if isinstance(value, quantity.Cpu) else Decimal(value.bytes)


def _check_requests_within_limits(spec: Spec) -> list[Problem]:
    """pkg/apis/core/validation/validation.go ValidateContainerResourceRequirements: a request
    above its limit is refused. (A request kvgen computes is lowered to an explicit limit.)"""
    problems: list[Problem] = []
    for container in ("vllm", "lmcacheServer"):
        res = getattr(spec.resources, "vllm" if container == "vllm" else "lmcache_server")
        for name, attr in (("cpu", "cpu"), ("memory", "memory"), ("ephemeral-storage", "ephemeral_storage")):
            request, limit = getattr(res.requests, attr), getattr(res.limits, attr)
            if request is None or limit is None:
                continue
            if _compare(name, request) > _compare(name, limit):
                problems.append(
                    Problem(
                        ("resources", container, "requests", name),
                        f"request {request} is above its limit {limit}; the API server refuses a container whose {name} "
                        "request exceeds its limit (ValidateContainerResourceRequirements)",
                        f"lower resources.{container}.requests.{name} or raise resources.{container}.limits.{name}",
                    )
                )
    return problems


# ----------------------------------------------------------------------------- embedded claims


def _check_pvc_spec(base: Path, pvc: dict[str, Any]) -> list[Problem]:
    """pkg/apis/core/validation/validation.go ValidatePersistentVolumeClaimSpec (run on an
    ephemeral volume's claim template by ValidatePersistentVolumeClaimTemplate)."""
    problems: list[Problem] = []
    modes = pvc.get("accessModes")
    if modes is None:
        modes = []
    if not isinstance(modes, list):
        modes = []  # the schema check reports it
    elif not modes:
        problems.append(
            Problem(
                (*base, "accessModes"),
                "at least 1 access mode is required; the API server refuses a claim without one "
                "(ValidatePersistentVolumeClaimSpec)",
                "add accessModes: [ReadWriteOnce] (one pod per claim)",
            )
        )
    for j, mode in enumerate(modes):
        if isinstance(mode, str) and mode not in _RULES["accessModes"]:
            problems.append(
                Problem(
                    (*base, "accessModes", j),
                    f"unsupported access mode {mode!r} (ValidatePersistentVolumeClaimSpec)",
                    f"use one of {', '.join(_RULES['accessModes'])}",
                )
            )
    if "ReadWriteOncePod" in modes and any(m in _RULES["accessModes"] and m != "ReadWriteOncePod" for m in modes):
        problems.append(
            Problem(
                (*base, "accessModes"),
                "ReadWriteOncePod may not be combined with other access modes (ValidatePersistentVolumeClaimSpec)",
                "keep ReadWriteOncePod alone",
            )
        )
    resources = pvc.get("resources")
    requests = resources.get("requests") if isinstance(resources, dict) else None
    storage = requests.get("storage") if isinstance(requests, dict) else None
    if storage is None:
        problems.append(
            Problem(
                (*base, "resources", "requests", "storage"),
                "the claim has no storage request; the API server refuses "
                "it (ValidatePersistentVolumeClaimSpec: resources[storage] is required)",
                "set resources.requests.storage, e.g. 100Gi",
            )
        )
    else:
        path = (*base, "resources", "requests", "storage")
        text = str(storage)
        if (
            isinstance(storage, bool)
            or not isinstance(storage, (str, int))
            or not re.fullmatch(spec_module.QUANTITY_PATTERN, text)
        ):
            problems.append(
                Problem(
                    path,
                    f"{storage!r} is not a size (kvgen reads a claim's size as it reads every size)",
                    "write it as a Kubernetes quantity such as 100Gi, 512Mi or 1T",
                )
            )
        else:
            n = quantity.to_bytes(text)
            if n <= 0:
                problems.append(
                    Problem(
                        path,
                        f"{text} must be greater than zero (ValidatePersistentVolumeClaimSpec)",
                        "request e.g. 100Gi",
                    )
                )
            elif n > MAX_BYTES:
                problems.append(Problem(path, f"{text} {_too_large()}", f"use at most {MAX_BYTES_TEXT}"))
    cls = _text(pvc, "storageClassName")
    if cls and not is_dns1123_subdomain(cls):
        problems.append(
            Problem(
                (*base, "storageClassName"),
                f"{cls!r} is not a storage class name: {what('dns1123Subdomain')} "
                "(ValidatePersistentVolumeClaimSpec, ValidateClassName)",
                None,
            )
        )
    mode = _text(pvc, "volumeMode")
    if mode and mode not in _RULES["volumeModes"]:
        problems.append(
            Problem(
                (*base, "volumeMode"),
                f"unsupported volume mode {mode!r} (ValidatePersistentVolumeClaimSpec)",
                "use Filesystem (kvgen mounts the tier as a directory)",
            )
        )
    return problems


def _check_claim_ref(base: Path, name: str, sub_path: str | None) -> list[Problem]:
    problems: list[Problem] = []
    if not is_dns1123_subdomain(name):
        problems.append(
            Problem(
                (*base, "name"),
                f"{name!r} cannot name a PersistentVolumeClaim: {what('dns1123Subdomain')}; the pod "
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
                    f"{sub_path!r} must be a relative path inside the claim (it becomes the mount's "
                    "subPath; validateLocalDescendingPath)",
                    f"write it as {sub_path.lstrip('/')!r}",
                )
            )
        if ".." in sub_path.split("/"):
            problems.append(
                Problem(
                    (*base, "path"),
                    f"{sub_path!r} must not contain '..' (it becomes the mount's subPath; validateLocalDescendingPath)",
                    "name a directory inside the claim",
                )
            )
    return problems


# ----------------------------------------------------------------------------- pod fields


def _text(data: Any, key: str) -> str:
    """A string field of an embedded Kubernetes object; "" when unset or of another type (the
    schema check reports wrong types)."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _check_tolerations(tolerations: list[dict[str, Any]]) -> list[Problem]:
    """pkg/apis/core/validation/validation.go ValidateTolerations and validateTaintEffect."""
    problems: list[Problem] = []
    operators, effects = _RULES["tolerationOperators"], _RULES["taintEffects"]
    for i, tol in enumerate(tolerations):
        base: Path = ("scheduling", "tolerations", i)
        key, operator, value, effect = (_text(tol, k) for k in ("key", "operator", "value", "effect"))
        seconds = tol.get("tolerationSeconds")
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            seconds = None
        if key and not is_label_key(key):
            problems.append(
                Problem((*base, "key"), f"{key!r} is not {what('labelKeyName')} (ValidateTolerations)", None)
            )
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
        if operator in ("Equal", ""):
            if not is_label_value(value):
                problems.append(
                    Problem((*base, "value"), f"{value!r} is not {what('labelValue')} (ValidateTolerations)", None)
                )
        elif operator == "Exists":
            if value:
                problems.append(
                    Problem(
                        (*base, "value"),
                        "value must be empty when operator is Exists (ValidateTolerations)",
                        "remove value, or use operator: Equal",
                    )
                )
        else:
            problems.append(
                Problem(
                    (*base, "operator"),
                    f"unsupported operator {operator!r} (ValidateTolerations)",
                    f"use one of {', '.join(operators)}",
                )
            )
        if effect and effect not in effects:
            problems.append(
                Problem(
                    (*base, "effect"),
                    f"unsupported effect {effect!r} (validateTaintEffect)",
                    f"use one of {', '.join(effects)}",
                )
            )
    return problems


def _check_key_selector(base: Path, ref: dict[str, Any] | Any, kind: str) -> list[Problem]:
    """validateSecretKeySelector / validateConfigMapKeySelector: a DNS-1123 subdomain name
    (ValidateSecretName) and a config-map key."""
    problems: list[Problem] = []
    name = _text(ref, "name") if isinstance(ref, dict) else ref.name
    key = _text(ref, "key") if isinstance(ref, dict) else ref.key
    if name and not is_dns1123_subdomain(name):
        problems.append(
            Problem(
                (*base, "name"),
                f"{name!r} cannot name a {kind}: {what('dns1123Subdomain')} (validateSecretKeySelector)",
                None,
            )
        )
    if key and not is_config_map_key(key):
        problems.append(
            Problem(
                (*base, "key"),
                f"{key!r} is not {what('configMapKey')} (validateSecretKeySelector, IsConfigMapKey)",
                None,
            )
        )
    return problems


def _check_env(spec: Spec) -> list[Problem]:
    """pkg/apis/core/validation/validation.go ValidateEnv -> validateEnvVarValueFrom."""
    problems: list[Problem] = []
    if spec.model.hf_token_secret is not None:
        problems += _check_key_selector(("model", "hfTokenSecret"), spec.model.hf_token_secret, "Secret")
    remote = spec.kv_cache_offloading.remote
    if remote is not None and remote.password_secret is not None:
        path = ("kvCacheOffloading", "remote", "passwordSecret")
        problems += _check_key_selector(path, remote.password_secret, "Secret")
    if spec.service.api_key_secret is not None:
        problems += _check_key_selector(("service", "apiKeySecret"), spec.service.api_key_secret, "Secret")
    for i, env in enumerate(spec.vllm.env):
        base: Path = ("vllm", "env", i)
        if env.value_from is None:
            continue
        sources = [s for s in _RULES["envVarSources"] if env.value_from.get(s) is not None]
        if not sources:
            problems.append(
                Problem(
                    (*base, "valueFrom"),
                    "must specify one of: " + ", ".join(_RULES["envVarSources"]) + " (validateEnvVarValueFrom)",
                    None,
                )
            )
        elif env.value:
            problems.append(
                Problem(
                    (*base, "valueFrom"),
                    "may not be specified when value is not empty (validateEnvVarValueFrom)",
                    "keep either value or valueFrom",
                )
            )
        elif len(sources) > 1:
            problems.append(
                Problem(
                    (*base, "valueFrom"),
                    f"may not have more than one source at a time ({', '.join(sources)}; validateEnvVarValueFrom)",
                    "keep one",
                )
            )
        for source, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
            ref = env.value_from.get(source)
            if isinstance(ref, dict):
                problems += _check_key_selector((*base, "valueFrom", source), ref, kind)
    return problems


def _check_labels(spec: Spec, instance: InstanceInfo | None) -> list[Problem]:
    """Label values and node-selector entries: apimachinery ValidateLabels (run on every
    object's metadata.labels by ValidateObjectMeta, and on spec.nodeSelector by ValidatePodSpec)."""
    problems: list[Problem] = []
    # the vLLM image's tag becomes the label app.kubernetes.io/version
    if instance is not None:
        field = "vllm" if instance.gpus else "vllmCpu"
        tag = (spec.images.vllm if instance.gpus else spec.images.vllm_cpu).tag
        if tag is not None and not is_label_value(tag):
            problems.append(
                Problem(
                    ("images", field, "tag"),
                    f"{tag!r} becomes the label app.kubernetes.io/version, which must be "
                    f"{what('labelValue')} (ValidateLabels, IsValidLabelValue)",
                    "use a tag of at most 63 characters, or pin the image by digest and keep a short tag",
                )
            )
    for field, image in (
        ("vllm", spec.images.vllm),
        ("lmcache", spec.images.lmcache),
        ("vllmCpu", spec.images.vllm_cpu),
    ):
        if image.repository is not None and not _fits("imageRepository", image.repository):
            problems.append(
                Problem(
                    ("images", field, "repository"),
                    f"{image.repository!r} is not {what('imageRepository')}; the kubelet refuses the image "
                    "(InvalidImageName) and the pod never starts",
                    "write the repository alone, e.g. registry.example.com/vllm/vllm-openai; the tag and digest "
                    "have their own fields",
                )
            )
        if image.tag is not None and not _fits("imageTag", image.tag):
            problems.append(
                Problem(
                    ("images", field, "tag"),
                    f"{image.tag!r} is not {what('imageTag')}; the kubelet refuses the image "
                    "(InvalidImageName) and the pod never starts",
                    None,
                )
            )
    if spec.instance.type is not None and not is_label_value(spec.instance.type):
        problems.append(
            Problem(
                ("instance", "type"),
                f"{spec.instance.type!r} becomes the node selector node.kubernetes.io/instance-type, "
                f"whose value must be {what('labelValue')} (ValidatePodSpec: ValidateLabels)",
                None,
            )
        )
    for key, value in spec.scheduling.node_selector.items():
        path: Path = ("scheduling", "nodeSelector", key)
        if not is_label_key(key):
            problems.append(
                Problem(path, f"{key!r} is not {what('labelKeyName')} (ValidatePodSpec: ValidateLabels)", None)
            )
        if not is_label_value(value):
            problems.append(
                Problem(path, f"{value!r} is not {what('labelValue')} (ValidatePodSpec: ValidateLabels)", None)
            )
    for key, value in spec.metrics.labels.items():  # the monitors' metadata.labels
        path = ("metrics", "labels", key)
        if not is_label_key(key):
            problems.append(
                Problem(path, f"{key!r} is not {what('labelKeyName')} (ValidateObjectMeta: ValidateLabels)", None)
            )
        if not is_label_value(value):
            problems.append(
                Problem(path, f"{value!r} is not {what('labelValue')} (ValidateObjectMeta: ValidateLabels)", None)
            )
    return problems


def _check_workloads(spec: Spec, statefulsets: list[str]) -> list[Problem]:
    problems: list[Problem] = []
    if spec.replicas > INT32_MAX:
        problems.append(
            Problem(
                ("replicas",),
                f"{spec.replicas} does not fit the Deployment's replicas, an int32 (at most {INT32_MAX})",
                f"use at most {INT32_MAX}",
            )
        )
    if spec.multi_node.engine == "leaderworkerset" and spec.parallelism.nodes > 1:
        if spec.replicas > LWS_REPLICAS_MAX:
            problems.append(
                Problem(
                    ("replicas",),
                    f"{spec.replicas} is above the LeaderWorkerSet's bound on replicas (at most {LWS_REPLICAS_MAX}, "
                    "maximum in the LeaderWorkerSet CRD)",
                    f"use at most {LWS_REPLICAS_MAX}",
                )
            )
    room = LABEL_VALUE_MAX - 1 - REVISION_HASH_MAX
    for name in statefulsets:
        if len(name) > room:
            longest = len(spec.object_name) - (len(name) - room)
            problems.append(
                Problem(
                    ("name",),
                    f"the StatefulSet {name!r} ({len(name)} characters) can never create its pods: they carry "
                    f"the label controller-revision-hash=<StatefulSet name>-<hash of up to {REVISION_HASH_MAX} characters>, "
                    f"and a label value is at most {LABEL_VALUE_MAX} characters, so a StatefulSet's name may have at most {room}",
                    f"use a name of at most {longest} characters for a server spanning several nodes",
                )
            )
    if spec.scheduling.priority_class_name and not is_dns1123_subdomain(spec.scheduling.priority_class_name):
        problems.append(
            Problem(
                ("scheduling", "priorityClassName"),
                f"{spec.scheduling.priority_class_name!r} is not "
                f"{what('dns1123Subdomain')} (ValidatePodSpec: ValidatePriorityClassName)",
                None,
            )
        )
    return problems


def _inside(path: str, other: str) -> bool:
    """One path is the other, or inside it."""
    a, b = path.removesuffix("/") or "/", other.removesuffix("/") or "/"
    return a == b or a.startswith(b.removesuffix("/") + "/") or b.startswith(a.removesuffix("/") + "/")


def _check_volumes(spec: Spec) -> list[Problem]:
    """pod.volumes and vllm.volumeMounts: ValidateVolumes (DNS-1123 label names, unique),
    validateVolumeMounts (a known volume, unique paths), and none of kvgen's own names and paths."""
    problems: list[Problem] = []
    reserved = catalog.runtime()["wiring"]["reserved"]
    names: set[str] = set()
    for i, vol in enumerate(spec.pod.volumes):
        sources = [s for s in _RULES["volumeSources"] if vol.get(s) is not None]
        if len(sources) != 1:
            problems.append(
                Problem(
                    ("pod", "volumes", i),
                    (
                        f"may not specify more than 1 volume type ({', '.join(sources)}; validateVolumeSource)"
                        if sources
                        else "must specify a volume type (validateVolumeSource)"
                    ),
                    "give each volume exactly one source, e.g. persistentVolumeClaim, configMap or emptyDir",
                )
            )
        name = vol.get("name")
        if not isinstance(name, str):
            continue
        path: Path = ("pod", "volumes", i, "name")
        if name in reserved["volumes"] or any(name.startswith(p) for p in reserved["volumePrefixes"]):
            problems.append(Problem(path, f"{name!r} is the name of a volume kvgen renders itself", "use another name"))
        elif not _fits("dns1123Label", name):
            problems.append(Problem(path, f"{name!r} is not {what('dns1123Label')} (ValidateVolumes)", None))
        elif name in names:
            problems.append(Problem(path, f"{name!r}: duplicate volume name (ValidateVolumes)", None))
        names.add(name)
    paths: set[str] = set()
    for i, m in enumerate(spec.vllm.volume_mounts):
        base: Path = ("vllm", "volumeMounts", i)
        name, mount_path = m.get("name"), m.get("mountPath")
        if isinstance(name, str) and name not in names:
            problems.append(
                Problem(
                    (*base, "name"),
                    f"{name!r} is not a volume of pod.volumes (validateVolumeMounts: not found)",
                    "add the volume to pod.volumes",
                )
            )
        if not isinstance(mount_path, str):
            continue
        ours = [r for r in reserved["paths"] if _inside(mount_path, r)]
        ours += [p + "N" for p in reserved["pathPrefixes"] if mount_path.startswith(p) or _inside(mount_path, p)]
        if ours:
            problems.append(
                Problem(
                    (*base, "mountPath"),
                    f"{mount_path!r} would hide or sit inside a path kvgen mounts itself ({ours[0]})",
                    "mount it elsewhere",
                )
            )
        elif mount_path.removesuffix("/") in paths:
            problems.append(
                Problem((*base, "mountPath"), f"{mount_path!r}: must be unique (validateVolumeMounts)", None)
            )
        paths.add(mount_path.removesuffix("/"))
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
                    f"{name!r} is not an extended resource name: a domain-prefixed name such as "
                    "vpc.amazonaws.com/efa or rdma/ib, outside kubernetes.io (IsExtendedResourceName)",
                    None,
                )
            )
    return problems


def _check_pod_settings(spec: Spec) -> list[Problem]:
    """The spec's pod settings: ValidateLabels and ValidateAnnotations on the pod's metadata
    (ValidateObjectMeta), the names ValidatePodSpec checks, validateTopologySpreadConstraints;
    and kvgen's own label and annotation keys, which the spec may not override."""
    problems: list[Problem] = []
    reserved_labels, reserved_notes = pod_settings.reserved_labels(), pod_settings.reserved_annotations()
    for key, value in spec.pod.labels.items():
        path: Path = ("pod", "labels", key)
        if key in reserved_labels:
            problems.append(
                Problem(
                    path,
                    f"{key!r} is a label kvgen sets itself (its selector and bookkeeping: {', '.join(reserved_labels)})",
                    "use another key",
                )
            )
        elif not is_label_key(key):
            problems.append(Problem(path, f"{key!r} is not {what('labelKeyName')} (ValidateLabels)", None))
        if not is_label_value(value):
            problems.append(Problem(path, f"{value!r} is not {what('labelValue')} (ValidateLabels)", None))
    for key in spec.pod.annotations:
        path = ("pod", "annotations", key)
        if key in reserved_notes:
            problems.append(
                Problem(
                    path,
                    f"{key!r} is an annotation kvgen sets itself ({', '.join(reserved_notes)})",
                    "use another key",
                )
            )
        elif not is_label_key(key.lower()):
            problems.append(Problem(path, f"{key!r} is not {what('labelKeyName')} (ValidateAnnotations)", None))
    total = sum(len(k.encode()) + len(v.encode()) for k, v in spec.pod.annotations.items())
    room = _RULES["totalAnnotationSizeLimit"] - _RULES["annotationsReserve"]
    if total > room:
        problems.append(
            Problem(
                ("pod", "annotations"),
                f"the annotations add up to {total} bytes (keys and values); the API server refuses more than "
                f"{_RULES['totalAnnotationSizeLimit']} in all (ValidateAnnotationsSize), and kvgen keeps "
                f"{_RULES['annotationsReserve']} of them for its own annotations",
                f"keep pod.annotations at most {room} bytes; put large data in a ConfigMap",
            )
        )
    names: list[tuple[Path, str | None, str]] = [
        (("pod", "imagePullSecrets", i, "name"), ref.name, "; no Secret can have this name (ValidateSecretName)")
        for i, ref in enumerate(spec.pod.image_pull_secrets)
    ]
    names += [
        (
            ("pod", "serviceAccount", "name"),
            spec.pod.service_account.name,
            " (ValidatePodSpec: ValidateServiceAccountName)",
        ),
        (
            ("scheduling", "runtimeClassName"),
            spec.scheduling.runtime_class_name,
            " (ValidatePodSpec: ValidateRuntimeClassName)",
        ),
    ]
    for path, name, why in names:
        if name and not is_dns1123_subdomain(name):
            problems.append(Problem(path, f"{name!r} is not {what('dns1123Subdomain')}{why}", None))
    for i, c in enumerate(spec.scheduling.topology_spread_constraints):
        base: Path = ("scheduling", "topologySpreadConstraints", i)
        skew, topology_key, when = c.get("maxSkew"), c.get("topologyKey"), c.get("whenUnsatisfiable")
        if isinstance(skew, int) and skew <= 0:
            problems.append(
                Problem(
                    (*base, "maxSkew"), f"{skew} must be greater than zero (validateTopologySpreadConstraints)", None
                )
            )
        if isinstance(topology_key, str) and not is_label_key(topology_key):
            problems.append(
                Problem(
                    (*base, "topologyKey"),
                    f"{topology_key!r} is not {what('labelKeyName')} (validateTopologySpreadConstraints)",
                    "e.g. topology.kubernetes.io/zone or kubernetes.io/hostname",
                )
            )
        if isinstance(when, str) and when not in _RULES["whenUnsatisfiable"]:
            problems.append(
                Problem(
                    (*base, "whenUnsatisfiable"),
                    f"unsupported value {when!r} (validateWhenUnsatisfiable)",
                    "use one of " + ", ".join(_RULES["whenUnsatisfiable"]),
                )
            )
    return problems


def check_spec(spec: Spec, instance: InstanceInfo | None, statefulsets: list[str]) -> list[Problem]:
    """Every problem the API server (or the kubelet) would have with what this spec renders.
    ``instance`` is the resolved node (None when it could not be resolved); ``statefulsets``
    the names of the StatefulSets the spec renders."""
    problems = _check_sizes(spec)
    problems += _check_requests_within_limits(spec)
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
    problems += _check_tolerations(spec.scheduling.tolerations)
    problems += _check_env(spec)
    problems += _check_labels(spec, instance)
    problems += _check_workloads(spec, statefulsets)
    problems += _check_pod_settings(spec)
    problems += _check_extended_resources(spec)
    problems += _check_volumes(spec)
    return problems
