"""How the LMCache MP server reaches vLLM's GPUs: ``kvCacheOffloading.lmcache.gpuAccess``.

- ``visible-devices``: a native sidecar with ``NVIDIA_VISIBLE_DEVICES=all`` and no GPU request;
- ``dra``: one DRA ResourceClaim (from a ResourceClaimTemplate) for the pod's GPUs, listed by
  the vLLM container and the sidecar alike (Kubernetes 1.34+); both containers get
  ``NVIDIA_VISIBLE_DEVICES=void`` (the image's ``all`` would hand them every GPU where the
  runtime honours it) and the pod tolerates the ``nvidia.com/gpu`` taint (it requests no
  ``nvidia.com/gpu``, so managed clusters add no toleration);
- ``in-container``: no sidecar; kvgen's launcher supervises ``lmcache server`` and vLLM inside
  the vLLM container.

The texts, version floors, variables and tolerations are data (``charts/kvgen/files/gpu-access.yaml``, read by the
chart too); the mode names are the spec's. The Helm chart's counterpart is
``charts/kvgen/templates/plan/_gpuaccess.tpl``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kvgen.core.errors import Problem, quoted
from kvgen.data import catalog
from kvgen.spec.models import Spec

CLAIM_NAME = "gpus"  # pod.spec.resourceClaims[].name, and the claim's only request
PATH = ("kvCacheOffloading", "lmcache", "gpuAccess")


@dataclass(frozen=True)
class GpuAccess:
    mode: str
    summary: str
    requirement: str
    device_class_name: str | None  # dra only


def modes() -> dict[str, dict[str, Any]]:
    return catalog.load("gpu-access.yaml")["modes"]


def version_tuple(version: str) -> tuple[int, int]:
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", version.strip())
    if not m:
        raise ValueError(f"{quoted(version)} is not a Kubernetes version such as 1.33")
    return int(m[1]), int(m[2])


def resolve(spec: Spec, backend: str | None) -> GpuAccess | None:
    """The mode in force: None unless the LMCache server is rendered (lmcache backend, on)."""
    if backend != "lmcache":
        return None
    lm = spec.kv_cache_offloading.lmcache
    row = modes()[lm.gpu_access]
    return GpuAccess(
        lm.gpu_access, row["summary"], row["requirement"], lm.device_class_name if lm.gpu_access == "dra" else None
    )


def env(access: GpuAccess | None) -> list[dict[str, Any]]:
    """Variables both containers get in this mode (dra: NVIDIA_VISIBLE_DEVICES=void, so that only the
    claim's CDI devices reach them; files/gpu-access.yaml says why)."""
    if access is None:
        return []
    return [dict(e) for e in modes()[access.mode].get("env") or ()]


def tolerations(spec: Spec, access: GpuAccess | None) -> list[dict[str, Any]]:
    """The pod's tolerations: the spec's, then the mode's (dra: the nvidia.com/gpu taint, which
    managed clusters tolerate only for pods requesting nvidia.com/gpu) for each key the spec's do
    not tolerate already."""
    out = list(spec.scheduling.tolerations)
    if access is None:
        return out
    keys = {t.get("key") for t in out}
    return out + [dict(t) for t in modes()[access.mode].get("tolerations") or () if t["key"] not in keys]


def check(access: GpuAccess | None, k8s_version: str) -> list[Problem]:
    """A mode the target Kubernetes version cannot run is an error: below the mode's
    minKubeVersion (visible-devices 1.29 for its native sidecar, dra 1.34)."""
    if access is None:
        return []
    row = modes()[access.mode]
    floor = row.get("minKubeVersion")
    if floor is None or version_tuple(k8s_version) >= version_tuple(str(floor)):
        return []
    return [
        Problem(
            PATH,
            f"gpuAccess {access.mode} needs Kubernetes {floor} or newer ({row['minKubeVersionReason']}), "
            f"but the output is for Kubernetes {'.'.join(map(str, version_tuple(k8s_version)))}",
            f'for a cluster that has it, set kubeVersion: "{floor}" (or render with --kube-version {floor} or newer), '
            f"or use {row['minKubeVersionAlternative']}",
        )
    ]


def warnings(spec: Spec, access: GpuAccess | None) -> list[str]:
    """Settings the mode in force does not use (never dropped silently): set to anything but
    their default, which is what the chart can tell apart too (its values.yaml holds the
    defaults, so a value set to its default looks unset there)."""
    out: list[str] = []
    if access is not None and access.mode == "in-container":
        r = spec.resources.lmcache_server
        if r.requests.cpu is not None or r.limits.cpu is not None:
            out.append(
                "resources.lmcacheServer cpu is not used with gpuAccess in-container: the server shares the "
                "vLLM container's CPU (its memory and ephemeral storage are added to that container)"
            )
    return out
