"""Pod settings: the secure defaults of every pod and container, merged with the spec's
``pod`` section, the ServiceAccount, and the label and annotation keys kvgen keeps for itself.

The defaults are data (``securityContext`` in charts/kvgen/files/runtime.yaml); the chart's
``kvgen.securityContext`` (templates/context/_context.tpl) merges the same way.
"""

from __future__ import annotations

import copy
from typing import Any

from kvgen.data import catalog, connector
from kvgen.spec.models import Spec


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``: maps merge key by key, anything else (lists included) is replaced."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def pod_security_context(spec: Spec) -> dict[str, Any]:
    return merge(catalog.runtime()["securityContext"]["pod"], spec.pod.security_context)


def container_security_context(spec: Spec) -> dict[str, Any]:
    return merge(catalog.runtime()["securityContext"]["container"], spec.pod.container_security_context)


def service_account_name(spec: Spec) -> str | None:
    """The pods' serviceAccountName: the one named, else the spec's name when kvgen creates it."""
    sa = spec.pod.service_account
    return sa.name or (spec.name if sa.create else None)


def reserved_labels() -> list[str]:
    """Pod label keys kvgen writes (its selector among them); the node label it selects on is not one."""
    keys = connector.wiring()["labels"]
    return sorted(v for k, v in keys.items() if k != "instanceType")


def reserved_annotations() -> list[str]:
    return sorted(connector.wiring()["annotations"].values())
