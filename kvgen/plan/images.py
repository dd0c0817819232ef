"""Image references: each field from the spec, else from the pins of ``runtime.yaml``.

The chart's counterparts are ``kvgen.image`` and ``kvgen.lmcacheImage`` (templates/plan/_images.tpl).
"""

from __future__ import annotations

from typing import Any

from kvgen import __version__
from kvgen.data import catalog
from kvgen.plan.types import Plan


def _fields(spec_image: Any, pinned: dict[str, Any]) -> dict[str, Any]:
    """Each field from the spec, else from the pin (the same merge Helm applies to values)."""
    return {
        "repository": spec_image.repository or pinned["repository"],
        "tag": spec_image.tag or pinned["tag"],
        "digest": spec_image.digest or pinned.get("digest"),
    }


def _reference(fields: dict[str, Any]) -> str:
    return (
        f"{fields['repository']}@{fields['digest']}" if fields["digest"] else f"{fields['repository']}:{fields['tag']}"
    )


def relocate(reference: str, registry: str | None) -> str:
    """``reference`` pulled from ``registry`` (images.registry; the chart's kvgen.relocate), as
    Bitnami's global.imageRegistry: a first component naming a registry host (holding '.' or ':',
    or localhost, as the distribution reference grammar tells a domain) is replaced, any other
    reference (Docker Hub's) is prefixed."""
    if not registry:
        return reference
    first, _, rest = reference.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return f"{registry}/{rest}"
    return f"{registry}/{reference}"


def runtime_pin() -> dict[str, Any]:
    """kvgen's runtime image (images/Dockerfile): vLLM's image with LMCache built against its torch,
    tagged with the kvgen version."""
    return {"repository": catalog.runtime()["runtimeImage"]["repository"], "tag": __version__, "digest": None}


def vllm_pin(plan: Plan) -> dict[str, Any]:
    """The pinned image of the vLLM container for the node: the CPU build for its architecture on a
    CPU node; with the lmcache backend kvgen's runtime image, whose LMCache CUDA kernels load (the
    vLLM image's LMCache wheel was built against another torch: runtime.yaml lmcache.build); else
    vLLM's GPU image."""
    if plan.instance.gpus and plan.backend == "lmcache":
        return runtime_pin()
    return dict(_vllm_own_pin(plan))


def _vllm_own_pin(plan: Plan) -> dict[str, Any]:
    """vLLM's own image for the node: its GPU image, or its CPU build for the architecture."""
    rt = catalog.runtime()["vllm"]
    pin: dict[str, Any] = rt["image"] if plan.instance.gpus else rt["cpuImage"][plan.instance.arch]
    return pin


def vllm_spec_image(plan: Plan) -> Any:
    """The spec's image fields for the node: images.vllm, or images.vllmCpu on a CPU node."""
    return plan.spec.images.vllm if plan.instance.gpus else plan.spec.images.vllm_cpu


def vllm_tag(plan: Plan) -> str:
    """The vLLM version label (app.kubernetes.io/version): the spec's tag, else vLLM's own pin (also under
    kvgen's runtime image, which carries that vLLM)."""
    return vllm_spec_image(plan).tag or str(_vllm_own_pin(plan)["tag"])


def vllm_image(plan: Plan) -> str:
    return relocate(_reference(_fields(vllm_spec_image(plan), vllm_pin(plan))), plan.spec.images.registry)


def vllm_pull_policy(plan: Plan) -> str | None:
    """The vLLM container's imagePullPolicy: that of the image it runs (images.vllm, or images.vllmCpu)."""
    policy: str | None = vllm_spec_image(plan).pull_policy
    return policy


def lmcache_pull_policy(plan: Plan) -> str | None:
    """The sidecar's imagePullPolicy: images.lmcache's, else images.vllm's (whose image it runs by default)."""
    images = plan.spec.images
    policy: str | None = images.lmcache.pull_policy or images.vllm.pull_policy
    return policy


def lmcache_image(plan: Plan) -> str:
    """The sidecar's image: the vLLM image (one LMCache install for the connector and the
    server), with any field images.lmcache sets in its place. A tag or digest set there
    replaces the vLLM image's tag and digest together."""
    base = _fields(plan.spec.images.vllm, runtime_pin())
    own = plan.spec.images.lmcache
    if own.tag or own.digest:
        base = {**base, "tag": own.tag or base["tag"], "digest": own.digest}
    if own.repository:
        base = {**base, "repository": own.repository}
    return relocate(_reference(base), plan.spec.images.registry)


def lmcache_image_set(plan: Plan) -> bool:
    own = plan.spec.images.lmcache
    return bool(own.repository or own.tag or own.digest or own.pull_policy)


def warnings(plan: Plan) -> list[str]:
    """images.lmcache unused (in-container), or naming an image other than vLLM's."""
    if not lmcache_image_set(plan) or plan.gpu_access is None:
        return []
    if plan.in_container:
        return [
            f"images.lmcache is not used with gpuAccess in-container: the LMCache server runs inside the vLLM "
            f"container ({vllm_image(plan)})"
        ]
    server, client = lmcache_image(plan), vllm_image(plan)
    if server == client:
        return []
    version = catalog.runtime()["lmcache"]["version"]
    return [
        f"images.lmcache: the LMCache server runs from {server}, the LMCacheMPConnector (the client) from the vLLM "
        f"image {client}; LMCache's MP protocol has no version handshake, so both images must carry the same "
        f"LMCache version ({version}), or requests fail at run time with a client/server version mismatch"
    ]


def cpu_warnings(plan: Plan) -> list[str]:
    """images.vllm naming an image other than the pin, or a pull policy, on a node without a GPU:
    vLLM runs from its CPU build (images.vllmCpu) there, not from the image the spec names."""
    if plan.instance.gpus:
        return []
    out: list[str] = []
    pin = catalog.runtime()["vllm"]["image"]
    own = _reference(_fields(plan.spec.images.vllm, pin))
    if own != _reference(_fields(type(plan.spec.images.vllm)(), pin)):
        out.append(
            f"images.vllm ({own}) is not used on a node without a GPU: vLLM runs from its CPU build "
            f"{vllm_image(plan)} (images.vllmCpu chooses it)"
        )
    if plan.spec.images.vllm.pull_policy:
        out.append(
            f"images.vllm.pullPolicy is not used on a node without a GPU: vLLM runs from its CPU build "
            f"{vllm_image(plan)} (images.vllmCpu.pullPolicy sets its pull policy)"
        )
    return out
