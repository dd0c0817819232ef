"""The shape of what the dialect readers read, checked before they index anything.

A KAITO or KServe resource is untrusted input: ``metadata: oops`` or ``instanceType: [a, b]``
must be a problem at its ``file:line``, not a crash deep inside a reader. Each reader's input is
described here as a JSON Schema of types only (the fields it reads, nothing about their
values; unknown keys are allowed, the readers report those themselves), and ``check`` reports
every mismatch at once. The types are Kubernetes' (names, labels, annotations are strings),
except where a reader deliberately takes more: counts may be strings (``nvidia.com/gpu: "1"``
is a quantity), env values and args any scalar. ``null`` always counts as absent.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Path, Problem, SpecError
from kvgen.input.source import SourceDoc

_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _t(*types: str, **extra: Any) -> dict[str, Any]:
    return {"type": [*types, "null"], **extra}


def obj(**properties: Any) -> dict[str, Any]:
    return _t("object", properties=properties)


def map_of(values: dict[str, Any]) -> dict[str, Any]:
    return _t("object", additionalProperties=values)


def list_of(items: dict[str, Any]) -> dict[str, Any]:
    return _t("array", items=items)


ANY: dict[str, Any] = {}
STRING = _t("string")
COUNT = _t("integer", "string")  # a whole number, or a string holding one (read by core.integer)
SCALAR = _t("string", "number", "boolean")
BOOL = _t("boolean")
INT = _t("integer")

METADATA = obj(name=STRING, namespace=STRING, labels=map_of(STRING), annotations=map_of(STRING))
LABEL_SELECTOR = obj(matchLabels=map_of(STRING), matchExpressions=list_of(obj()))

# ---------------------------------------------------------------- KAITO
KAITO_RESOURCE = obj(
    instanceType=STRING,
    count=COUNT,
    labelSelector=LABEL_SELECTOR,
    preferredNodes=list_of(STRING),
    partition=obj(mode=STRING, profile=STRING, count=COUNT),
)
KAITO_INFERENCE = obj(
    preset=obj(
        name=STRING,
        accessMode=STRING,
        presetOptions=obj(
            modelAccessSecret=STRING,
            imagePullSecrets=list_of(STRING),
            modelWeightsPVC=STRING,
            modelWeightsSubPath=STRING,
        ),
    ),
    config=STRING,
    template=obj(),
    adapters=list_of(
        obj(
            source=obj(
                name=STRING,
                image=STRING,
                imagePullSecrets=list_of(STRING),
                urls=list_of(STRING),
                volumeSource=obj(persistentVolumeClaim=obj(claimName=STRING, readOnly=BOOL)),
            ),
            strength=SCALAR,
        )
    ),
)
KAITO = {
    "InferenceSet": obj(
        metadata=METADATA,
        spec=obj(
            replicas=COUNT,
            labelSelector=LABEL_SELECTOR,
            template=obj(metadata=METADATA, resource=KAITO_RESOURCE, inference=KAITO_INFERENCE),
        ),
    ),
    "Workspace": obj(metadata=METADATA, resource=KAITO_RESOURCE, inference=KAITO_INFERENCE),
}
CONFIGMAP = obj(metadata=METADATA, data=map_of(STRING))

# ---------------------------------------------------------------- KServe
KSERVE_CONTAINER = obj(
    name=STRING,
    image=STRING,
    args=list_of(SCALAR),
    env=list_of(
        obj(name=STRING, value=SCALAR, valueFrom=obj(secretKeyRef=obj(name=STRING, key=STRING, optional=BOOL)))
    ),
    resources=obj(requests=map_of(SCALAR), limits=map_of(SCALAR)),
    volumeMounts=list_of(obj(name=STRING, mountPath=STRING)),
)
KSERVE_TEMPLATE = obj(
    containers=list_of(KSERVE_CONTAINER),
    initContainers=list_of(ANY),
    nodeSelector=map_of(STRING),
    tolerations=list_of(obj()),
    affinity=obj(),
    priorityClassName=STRING,
    runtimeClassName=STRING,
    serviceAccountName=STRING,
    automountServiceAccountToken=BOOL,
    imagePullSecrets=list_of(obj(name=STRING)),
    topologySpreadConstraints=list_of(obj()),
    securityContext=obj(),
    volumes=list_of(obj(name=STRING, emptyDir=obj(medium=STRING, sizeLimit=SCALAR))),
)
KSERVE_WORKLOAD = dict(
    replicas=COUNT,
    template=KSERVE_TEMPLATE,
    worker=obj(),
    kvCacheOffloading=obj(),
    parallelism=obj(tensor=COUNT, pipeline=COUNT, data=COUNT, dataLocal=COUNT, expert=BOOL),
)
KSERVE = obj(
    metadata=METADATA,
    spec=obj(
        model=obj(
            uri=STRING,
            name=STRING,
            lora=obj(
                adapters=list_of(obj(uri=STRING, name=STRING, criticality=STRING)),
                maxRank=INT,
                maxAdapters=INT,
                maxCpuAdapters=INT,
            ),
        ),
        workload=obj(**KSERVE_WORKLOAD),
        prefill=obj(**KSERVE_WORKLOAD),
        **KSERVE_WORKLOAD,
    ),
)


def _kind(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true or false"
    for t, word in (
        (dict, "a mapping"),
        (list, "a list"),
        (str, "a string"),
        (int, "a whole number"),
        (float, "a number"),
    ):
        if isinstance(value, t):
            return word
    return type(value).__name__


def problems(doc: SourceDoc, schema: dict[str, Any]) -> list[Problem]:
    """Every place where ``doc`` does not have the shape a reader expects."""
    import jsonschema  # here, not at the top: a native spec never needs it (about 120 ms to import)

    out = []
    errors = jsonschema.Draft202012Validator(schema).iter_errors(doc.data)
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        path: Path = tuple(error.absolute_path)
        if error.validator == "type":
            wanted = [_WORDS[t] for t in error.validator_value if t != "null"]
            message = f"must be {' or '.join(wanted)}, not {_kind(error.instance)}"
        else:  # the schemas above only check types; anything else is reported as jsonschema says it
            message = error.message
        out.append(Problem(path, message, None, doc.locate(path)))
    return out


def check(doc: SourceDoc, schema: dict[str, Any]) -> None:
    """Raise a SpecError with every mismatch, before a reader touches the document."""
    found = problems(doc, schema)
    if found:
        raise SpecError(doc.file, found)


__all__ = ["CONFIGMAP", "KAITO", "KSERVE", "check", "problems"]
