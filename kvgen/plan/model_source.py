"""Where vLLM reads the model from: Hugging Face by id (the default), or an existing
PersistentVolumeClaim (model.uri pvc://CLAIM[/PATH]), mounted read-only as KServe and llm-d do."""

from __future__ import annotations

from typing import Any

from kvgen.data import connector
from kvgen.spec.models import Spec


def model_pvc(spec: Spec) -> tuple[str, str | None] | None:
    """model.uri pvc://CLAIM[/PATH]: (claim, path inside it or None); None without a uri."""
    if not spec.model.uri:
        return None
    claim, _, path = spec.model.uri.removeprefix("pvc://").partition("/")
    return claim, path.strip("/") or None


def volume(spec: Spec) -> dict[str, Any] | None:
    pvc = model_pvc(spec)
    if pvc is None:
        return None
    w = connector.wiring()["modelPvc"]
    return {"name": w["volume"], "persistentVolumeClaim": {"claimName": pvc[0], "readOnly": True}}


def mount(spec: Spec) -> dict[str, Any] | None:
    pvc = model_pvc(spec)
    if pvc is None:
        return None
    w = connector.wiring()["modelPvc"]
    out: dict[str, Any] = {"name": w["volume"], "mountPath": w["mountPath"], "readOnly": True}
    if pvc[1]:
        out["subPath"] = pvc[1]
    return out
