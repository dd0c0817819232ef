"""Input dialects: documents that are not native specs, translated into native specs.

A document is told apart by its ``apiVersion``/``kind`` (a native spec has neither):

==========================================  =======================================
``kaito.sh/v1beta1`` InferenceSet/Workspace  ``kvgen.input.dialects.kaito``
``serving.kserve.io/v1alpha1|2``             ``kvgen.input.dialects.kserve``
LLMInferenceService
``v1`` ConfigMap                             read by the KAITO resource that names it
                                             (``inference.config``), in any input file
anything else                                reported and left out (kvgen renders only
                                             the server it compiles)
==========================================  =======================================

``translate`` turns the documents of every input into ``Unit``s: each a native document to
compile, with the ``Converted`` record of where its values came from when it was translated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvgen.core.errors import Problem, SpecError, suggest
from kvgen.input.dialects import kaito, kserve
from kvgen.input.dialects.core import Converted
from kvgen.input.source import SourceDoc

NATIVE, KAITO, KSERVE, CONFIGMAP, OTHER = "native", "kaito", "kserve", "configmap", "other"


@dataclass(frozen=True)
class Options:
    instance: str | None = None  # instance type for resources that name none (KServe never does)
    namespace: str | None = None  # namespace of specs that set none (kvgen --namespace); None: no metadata.namespace


NO_OPTIONS = Options()  # the default: immutable, so one shared instance is safe


@dataclass
class Unit:
    doc: SourceDoc  # what to compile: the native document, or the translated one
    conversion: Converted | None = None


def classify(data: Any) -> str:
    if not isinstance(data, dict) or ("apiVersion" not in data and "kind" not in data):
        return NATIVE
    api = str(data.get("apiVersion") or "")
    group = api.split("/", 1)[0] if "/" in api else ""
    if group == kaito.GROUP:
        return KAITO
    if group == kserve.GROUP:
        return KSERVE
    if api == "v1" and data.get("kind") == "ConfigMap":
        return CONFIGMAP
    return OTHER


def _spec_keys() -> frozenset[str]:
    from kvgen.spec.models import Spec

    return frozenset(f.alias or n for n, f in Spec.model_fields.items())


# keys a spec shares with most YAML files: they alone do not make a document a spec
_GENERIC_KEYS = frozenset({"name", "namespace"})


def foreign(data: Any) -> str | None:
    """Why a document found in a directory is not kvgen's input (None when it is). Kept narrow,
    so a spec with a mistake is never passed over: a document without apiVersion/kind is a spec
    when it has a key of a spec (other than name/namespace), or when at least half its keys are
    close to such keys (typos);
    a manifest is ours when kvgen reads its kind (a ConfigMap when it holds KAITO's
    inference_config.yaml)."""
    if not isinstance(data, dict):
        return f"a YAML {type(data).__name__ if data is not None else 'null'}, not a mapping"
    kind = classify(data)
    if kind == NATIVE:
        keys = [str(k) for k in data]
        if keys == ["catalog"]:
            return "a kvgen catalog file (give it with --catalog FILE)"
        spec_keys = _spec_keys() - _GENERIC_KEYS
        if any(k in spec_keys for k in keys):  # a spec key (the typo search below is not needed then)
            return None
        # typos for at least half the keys: a GitHub workflow's `jobs` is close to `probes`, but its
        # name, on and jobs are not a spec with a typo
        near = [k for k in keys if k not in spec_keys and suggest(k, spec_keys)]
        if near and 2 * len(near) >= len(keys):
            return None
        shown = ", ".join(keys[:4]) + (", ..." if len(keys) > 4 else "")
        return f"not a kvgen spec (no model; keys {shown})" if keys else "an empty mapping"
    if kind == CONFIGMAP:
        cm_data = data.get("data")
        return (
            None
            if isinstance(cm_data, dict) and kaito.CONFIG_KEY in cm_data
            else "a ConfigMap without KAITO's " + kaito.CONFIG_KEY
        )
    if kind == OTHER:
        return f"{data.get('apiVersion')} {data.get('kind')}, a kind kvgen does not read"
    return None


def translate(
    docs: list[SourceDoc], options: Options = NO_OPTIONS
) -> tuple[list[Unit], list[Problem], list[SpecError]]:
    """Units to compile (in input order), warnings about documents left out, and errors."""
    kinds = [classify(d.data) for d in docs]
    configmaps = kaito.ConfigMaps()
    for doc, kind in zip(docs, kinds, strict=True):
        if kind == CONFIGMAP:
            configmaps.add(doc)
    units: list[Unit] = []
    warnings: list[Problem] = []
    errors: list[SpecError] = []
    for problem in configmaps.problems:  # the compiler groups them by file
        errors.append(SpecError(problem.location.file if problem.location else "", [problem]))
    for doc, kind in zip(docs, kinds, strict=True):
        try:
            if kind == NATIVE:
                units.append(Unit(doc))
            elif kind == KAITO:
                units += [Unit(c.native_doc(), c) for c in kaito.convert(doc, configmaps, options.instance)]
            elif kind == KSERVE:
                units += [Unit(c.native_doc(), c) for c in kserve.convert(doc, options.instance)]
            elif kind == OTHER:
                what = f"{doc.data.get('apiVersion')} {doc.data.get('kind')}"
                warnings.append(
                    Problem(
                        ("kind",),
                        f"{what} is left out: kvgen compiles native specs, KAITO "
                        "InferenceSet/Workspace and KServe LLMInferenceService (with the ConfigMaps "
                        "they name) and renders only the server's own objects",
                        "apply it separately",
                        doc.locate(("kind",)),
                    )
                )
        except SpecError as exc:
            errors.append(exc)
    for doc in configmaps.unused():
        name = (doc.data.get("metadata") or {}).get("name")
        warnings.append(
            Problem(
                ("metadata", "name"),
                f"ConfigMap {name} is left out: no KAITO InferenceSet or Workspace "
                "in the inputs names it in inference.config (kvgen does not render input ConfigMaps)",
                None,
                doc.locate(("metadata", "name")),
            )
        )
    return units, warnings, errors


__all__ = [
    "Converted",
    "Options",
    "Unit",
    "classify",
    "foreign",
    "translate",
    "NATIVE",
    "KAITO",
    "KSERVE",
    "CONFIGMAP",
    "OTHER",
]
