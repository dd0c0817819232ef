"""Where vLLM reads the model from: Hugging Face by id (the default), an existing
PersistentVolumeClaim (model.uri pvc://CLAIM[/PATH]), mounted read-only as KServe and llm-d do,
or a claim kvgen has an init container fill once (model.cache: one claim per pod through
volumeClaimTemplates, or an existing claim), so that a re-created pod finds the weights there."""

from __future__ import annotations

import re
from typing import Any

from kvgen.core.errors import Problem
from kvgen.data import connector
from kvgen.spec.models import ModelCache, Spec

DOWNLOAD_CONTAINER = "model-download"
# the vLLM options that name the model's revision on the Hub: with model.cache the init container
# downloads that revision and vLLM serves the local directory, which has none
REVISION_FLAGS = ("--revision",)


def model_pvc(spec: Spec) -> tuple[str, str | None] | None:
    """model.uri pvc://CLAIM[/PATH]: (claim, path inside it or None); None without a uri."""
    if not spec.model.uri:
        return None
    claim, _, path = spec.model.uri.removeprefix("pvc://").partition("/")
    return claim, path.strip("/") or None


def cache(spec: Spec) -> ModelCache | None:
    return spec.model.cache


def local(spec: Spec) -> bool:
    """vLLM serves a mounted directory (model.uri or model.cache), offline, under the model's id."""
    return bool(spec.model.uri) or spec.model.cache is not None


def downloads(spec: Spec) -> bool:
    """An init container fills the claim (model.cache with download)."""
    c = spec.model.cache
    return c is not None and c.download


def cache_path(spec: Spec) -> str:
    """model.cache.claim's directory inside the claim: its path, else org--name of the model id."""
    c = spec.model.cache
    assert c is not None and c.claim is not None, "only model.cache.claim has a path"
    return c.claim.path.strip("/") if c.claim.path else spec.model.id.replace("/", "--")


def model_dir(spec: Spec) -> str:
    """The directory vLLM serves a local model from (and model.cache downloads into):
    wiring.modelPvc.mountPath/<org>--<name>[--<revision>]. LMCache keys every cache entry by the path
    vLLM was started with (vLLM's model_config.model; LMCache 0.5.6 l2_adapters/native_connector_l2_adapter.py:
    <model>@<kv rank>@<group>@<chunk hash>, and no setting renames it), so one path for every model would
    let two models, or two revisions of one, read each other's KV in a shared tier. Characters other than
    letters, digits, '.', '_' and '-' become '-' (LMCache separates the key's fields with '@')."""
    slug = spec.model.id.replace("/", "--")
    rev = revision(spec)
    if rev:
        slug += "--" + rev
    return f"{connector.wiring()['modelPvc']['mountPath']}/{re.sub(r'[^A-Za-z0-9._-]', '-', slug)}"


def volume(spec: Spec) -> dict[str, Any] | None:
    """The pod's volume of the weights (None without one, or for a claim template: the StatefulSet
    makes the pod's claim under the template's name)."""
    w = connector.wiring()["modelPvc"]
    pvc = model_pvc(spec)
    if pvc is not None:
        return {"name": w["volume"], "persistentVolumeClaim": {"claimName": pvc[0], "readOnly": True}}
    c = spec.model.cache
    if c is not None and c.claim is not None:
        return {"name": w["volume"], "persistentVolumeClaim": {"claimName": c.claim.name}}
    return None


def mount(spec: Spec) -> dict[str, Any] | None:
    """vLLM's mount of the weights: read-only at model_dir."""
    w = connector.wiring()["modelPvc"]
    pvc = model_pvc(spec)
    if pvc is not None:
        out: dict[str, Any] = {"name": w["volume"], "mountPath": model_dir(spec), "readOnly": True}
        if pvc[1]:
            out["subPath"] = pvc[1]
        return out
    c = spec.model.cache
    if c is None:
        return None
    out = {"name": w["volume"], "mountPath": model_dir(spec), "readOnly": True}
    if c.claim is not None:
        out["subPath"] = cache_path(spec)
    return out


def without_revision(args: list[str]) -> list[str]:
    """vllm.extraArgs less --revision (=value, or its value as the next token)."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        name, eq, _ = arg.partition("=")
        if name.replace("_", "-") in REVISION_FLAGS:
            skip = not eq
            continue
        out.append(arg)
    return out


def revision(spec: Spec) -> str | None:
    """--revision in vllm.extraArgs (the last one wins, as in argparse)."""
    found = None
    args = list(spec.vllm.extra_args)
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name.replace("_", "-") in REVISION_FLAGS:
            found = value if eq else (args[i + 1] if i + 1 < len(args) else "")
    return found


def download_args(spec: Spec) -> list[str]:
    """`hf download`'s arguments (huggingface_hub 2.4's CLI, as the vLLM image installs it): the
    repository's files into the mounted claim, less Llama's original/ (a second copy of the
    weights in another format, which vLLM ignores too: --ignore-patterns' default). The token is
    HF_TOKEN from the environment, never --token (it would show in the pod spec)."""
    d = connector.wiring()["modelDownload"]
    out = [spec.model.id, f"--local-dir={model_dir(spec)}", *(f"--exclude={p}" for p in d["exclude"])]
    rev = revision(spec)
    if rev:
        out.append(f"--revision={rev}")
    return out


# ----------------------------------------------------------------------------- checks

URI_AND_CACHE = (
    "model.uri and model.cache both say where the weights are: uri serves a claim that already holds them, "
    "cache has kvgen fill one"
)
URI_AND_CACHE_HINT = (
    "keep model.uri for pre-staged files, or replace it with model.cache.claim {name, path} (download: false "
    "serves them as they are)"
)


def check(spec: Spec, download_bytes: int) -> list[Problem]:
    """What no schema can say about model.cache (the chart's kvgen.checkModelCache says the same)."""
    c = spec.model.cache
    if c is None:
        return []
    out: list[Problem] = []
    if spec.model.uri:
        out.append(Problem(("model", "cache"), URI_AND_CACHE, URI_AND_CACHE_HINT))
    t = c.claim_template
    if t is not None and t.size is not None and t.size.bytes < download_bytes:
        out.append(
            Problem(
                ("model", "cache", "claimTemplate", "size"),
                f"{t.size.text} is below the {download_bytes / 2**30:.1f} GiB the checkpoint of {spec.model.id} "
                "downloads: the init container would fill the claim and fail",
                "leave size out (kvgen sizes the claim from the checkpoint) or set it above the download",
            )
        )
    if t is not None and spec.autoscaling is not None:
        out.append(
            Problem(
                ("model", "cache", "claimTemplate"),
                "a claim per pod makes the server a StatefulSet, which kvgen does not autoscale",
                "leave autoscaling out, or share one ReadWriteMany claim (model.cache.claim) among the replicas",
            )
        )
    return out


def warnings(spec: Spec) -> list[str]:
    """model.cache.claim mounted by more than one pod: kvgen cannot read the claim's access modes."""
    c = spec.model.cache
    if c is None or c.claim is None:
        return []
    a = spec.autoscaling
    pods = (a.max_replicas if a is not None else spec.replicas) * spec.parallelism.nodes
    if pods <= 1:
        return []
    return [
        f"model.cache.claim {c.claim.name} is mounted by up to {pods} pods: it must be ReadWriteMany (kvgen cannot "
        "read the claim; a ReadWriteOnce claim keeps the pods on other nodes Pending), and every pod that starts "
        "while the files are missing downloads them too"
    ]
