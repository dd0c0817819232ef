"""The Kubernetes version a spec's objects are rendered and validated for.

One rule for both faces (the chart's kvgen.buildContext): a version the render is given (kvgen
--kube-version; under helm install the cluster's, under helm template its --kube-version) wins;
without one, the spec's ``kubeVersion``, else kvgen's default (charts/kvgen/files/kubernetes.json).
A given version older than the spec's kubeVersion is a problem naming both: the spec was written
for objects (DRA's resource.k8s.io/v1, say) that cluster cannot take.
"""

from __future__ import annotations

from kvgen.core.errors import Problem
from kvgen.data import kube
from kvgen.plan.gpu_access import version_tuple


def resolve(wanted: str | None, given: str | None) -> tuple[str, list[Problem]]:
    """(the version to render for, problems): ``wanted`` is the spec's kubeVersion, ``given`` the
    render's (None: not given)."""
    if wanted is not None:
        try:
            kube.schema_dir(wanted)
        except kube.UnsupportedVersion as exc:
            return given or kube.DEFAULT_VERSION, [
                Problem(("kubeVersion",), str(exc), "use a version kvgen has Kubernetes schemas for")
            ]
    if given is None:
        return wanted or kube.DEFAULT_VERSION, []
    if wanted is None or version_tuple(given) >= version_tuple(wanted):
        return given, []
    shown = ".".join(map(str, version_tuple(given)))
    return given, [
        Problem(
            ("kubeVersion",),
            f"the spec is written for Kubernetes {wanted}, but the output is for Kubernetes {shown}, which is older",
            f"render for {wanted} or newer (kvgen --kube-version, helm template --kube-version; helm install uses "
            f"the cluster's), or set kubeVersion to the version the cluster runs",
        )
    ]
