"""charts/kvgen/README.md, generated: the parameters table comes from the spec's JSON Schema
(descriptions, types, defaults) and the compatibility table from files/runtime.yaml, so
neither is written by hand twice. `python -m kvgen.chart_readme` prints it; scripts/regenerate
writes it and a test fails when the committed file is stale."""

from __future__ import annotations

import json
from typing import Any

from kvgen import catalog
from kvgen.schema import spec_schema

INTRO = """\
# kvgen Helm chart

vLLM with KV-cache offloading: the LMCache MP server (`LMCacheMPConnector`; a native sidecar or,
with `gpuAccess: in-container`, inside the vLLM container) or vLLM's own `OffloadingConnector`,
with kvgen's capability rules applied and memory, `/dev/shm` and ephemeral storage sized. The
values are a kvgen spec, so

    helm template gemma charts/kvgen -f examples/kaito-gemma-4-12b.yaml

gives the same objects as `kvgen render examples/kaito-gemma-4-12b.yaml` (the project's
tests render every example both ways, plus 300 generated specs, and compare them).
`values.schema.json` is the spec's JSON Schema: Helm rejects a typo or a wrong type with the
value's path, and the templates fail, listing every problem at once, when a value cannot be
served (an unknown instance type, parallelism that does not fit the GPUs, a pod that does
not fit its node). NOTES.txt states whether offloading is on and, when it is off, why, and how
the LMCache server reaches the GPUs with what that requires.

## GPU access modes

The LMCache server opens CUDA IPC handles from vLLM, pins its L1 with `cudaHostRegister` and
maps devices by UUID, so it must see exactly vLLM's GPUs. `kvCacheOffloading.lmcache.gpuAccess`:

{modes}

`dra` is refused below Kubernetes 1.34: the chart reads the version from
`.Capabilities.KubeVersion` (the cluster's on `helm install`; `helm template --kube-version 1.34`
offline), as `kvgen render --kube-version` does.

The catalogs, rule table, sizing constants and image pins are the files under `files/`,
the same files kvgen reads.

## Your own models and node types

`catalog:` rows (`models:` by Hugging Face id, `instances:` by type name, the fields of
`files/models.yaml` and `files/instances.yaml`) are merged over those files field by field. Keep
them in a values file of their own and pass it before the spec, the same file `kvgen --catalog`
reads:

    helm template support-bot charts/kvgen -f examples/catalogs/onprem.yaml -f my-spec.yaml

A node type with a `nodeSelector` (or `cloud: false`) is not a cloud instance type: its pods
select your nodes with that `nodeSelector` instead of `node.kubernetes.io/instance-type`, which
on-prem nodes do not carry.

NOTES.txt warns, as kvgen does, when the model is gated on Hugging Face (the `gated:` patterns of
`files/models.yaml`) and no `model.hfTokenSecret` (or `HF_TOKEN` in `vllm.env`) is set.

Like kvgen, the chart plans the context length: when one sequence of the model's own limit
does not fit the GPU KV cache it passes `--max-model-len` with the longest length that does,
and a `model.maxModelLen` that does not fit fails (vLLM would refuse to start). Hybrid models
are recognised by architecture (`files/hybrid-architectures.yaml`, captured from vLLM). The
model cache and `emptyDir` tiers must fit the kubelet's ephemeral storage, by default the OS
disk of the instance type's default node pool (`instance.ephemeralStorage` overrides it). The
`lmcache` backend's native sidecar needs Kubernetes 1.29 or later (`gpuAccess: in-container`
has none): the templates check `.Capabilities.KubeVersion`.

## Pod settings and security

Every pod gets `automountServiceAccountToken: false` and seccomp `RuntimeDefault`; every
container `allowPrivilegeEscalation: false` and `capabilities: {{drop: [ALL]}}` (no capability is
added back: vLLM and LMCache need none; RDMA where the runtime limits locked memory needs
`IPC_LOCK`, added with `pod.containerSecurityContext`). `pod.securityContext` and
`pod.containerSecurityContext` are merged over these defaults. The output meets the Pod Security
Standards' `baseline` level, and every rule of `restricted` except `runAsNonRoot`: vLLM's images
run as root. `pod` also sets labels, annotations, `imagePullSecrets`, the ServiceAccount (`create`
renders one) and extra `volumes` (mounted with `vllm.volumeMounts`); `scheduling` sets
`runtimeClassName` and `topologySpreadConstraints`; `resources.extra` requests RDMA devices such
as `vpc.amazonaws.com/efa`; `model.uri: pvc://CLAIM/PATH` serves pre-staged weights from a claim,
read-only, with nothing downloaded. kvgen's own label, annotation, volume and mount names are refused.
"""


def _type(node: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in node:
        return "object"
    if "anyOf" in node:
        kinds = [_type(n, defs) for n in node["anyOf"] if n.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds))
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    kind = node.get("type", "object")
    if kind == "array":
        return f"list of {_type(node.get('items', {}), defs)}"
    if kind == "string" and "pattern" in node and "Ki|Mi|Gi" in node["pattern"]:
        return "quantity"
    return kind


def _rows(node: dict[str, Any], defs: dict[str, Any], prefix: str, required: set[str]) -> list[str]:
    rows = []
    for key, prop in node.get("properties", {}).items():
        path = f"{prefix}{key}"
        target = prop
        ref = prop.get("$ref") or next((n["$ref"] for n in prop.get("anyOf", []) if "$ref" in n), None)
        nested = defs[ref.split("/")[-1]] if ref else None
        kubernetes = bool(ref and ref.split("/")[-1].startswith("io.k8s."))
        default = json.dumps(prop["default"]) if "default" in prop else ("required" if key in required else "")
        description = prop.get("description") or (nested or {}).get("description", "")
        if nested and not kubernetes and "properties" in nested:
            rows.append(f"| `{path}` | object | {default} | {description} |")
            rows += _rows(nested, defs, f"{path}.", set(nested.get("required", [])))
        elif target.get("type") == "array" and "$ref" in target.get("items", {}):
            item = defs[target["items"]["$ref"].split("/")[-1]]
            kind = (
                "list of Kubernetes objects" if target["items"]["$ref"].split("/")[-1].startswith("io.k8s.") else "list"
            )
            rows.append(f"| `{path}` | {kind} | {default} | {description} |")
            if "properties" in item and not target["items"]["$ref"].split("/")[-1].startswith("io.k8s."):
                rows += _rows(item, defs, f"{path}[].", set(item.get("required", [])))
        else:
            kind = "Kubernetes object" if kubernetes else _type(target, defs)
            rows.append(f"| `{path}` | {kind} | {default} | {description} |")
    return rows


def parameters_table() -> str:
    schema = spec_schema()
    rows = _rows(schema, schema["$defs"], "", set(schema.get("required", [])))
    return "\n".join(["| value | type | default | description |", "|---|---|---|---|", *rows])


def compatibility_table() -> str:
    rt = catalog.runtime()
    v, lm, c = rt["vllm"], rt["lmcache"], rt["connectors"]
    bundled = lm["inVllmImage"] or "unverified: check it (below)"
    return "\n".join(
        [
            "| vLLM | vLLM image | LMCache | LMCache server image | LMCache in the vLLM image | kvgen runtime image | connectors |",
            "|---|---|---|---|---|---|---|",
            f"| {v['version']} | `{v['image']['repository']}:{v['image']['tag']}` | {lm['version']} | the vLLM image "
            f"(`images.lmcache` unset) | {bundled} | `images/Dockerfile`, tag `{rt['runtimeImage']['tag']}` "
            f"(LMCache {lm['version']}, CUDA {lm['cudaMajor']}) | lmcache: `{c['lmcache']}`; native: `{c['native']}`; "
            f"prefill/decode: `{c['disaggregation']}` |",
        ]
    )


COMPATIBILITY_NOTES = """\
vLLM's `LMCacheMPConnector` imports `lmcache` from the vLLM image, and LMCache's MP protocol has
no version handshake: a client and server of different LMCache versions fail at run time. So
the LMCache server runs from the vLLM image by default (the sidecar, or the vLLM container
itself with `gpuAccess: in-container`); set `images.lmcache` only to an image with the same
LMCache version (kvgen warns, and NOTES.txt says so). Which LMCache the upstream vLLM image
carries is not pinned by vLLM; check it before relying on it:

    docker run --rm --entrypoint python3 {image} -c 'import importlib.metadata as m; print(m.version("lmcache"))'

or build kvgen's runtime image, vLLM plus LMCache {lmcache} with kvgen's launcher baked in, and
point the chart at it with one value, `images.vllm`:

    scripts/build-image registry.example.com/kvgen/vllm-lmcache --push
    helm install NAME charts/kvgen -f spec.yaml \\
      --set images.vllm.repository=registry.example.com/kvgen/vllm-lmcache --set images.vllm.tag={tag}
"""


def gpu_access_table() -> str:
    rows = ["| mode | what runs | requires |", "|---|---|---|"]
    for mode, row in catalog.load("gpu-access.yaml")["modes"].items():
        rows.append(f"| `{mode}` | {row['summary']} | {row['requirement']} |")
    return "\n".join(rows)


def render() -> str:
    return "\n".join(
        [
            INTRO.format(modes=gpu_access_table()),
            "## Compatibility",
            "",
            "The chart pins these runtimes (override `images.*` per install). kvgen's contract tests",
            "check every command line it renders against these versions' own argument parsers.",
            "",
            compatibility_table(),
            "",
            COMPATIBILITY_NOTES.format(
                image=f"{catalog.runtime()['vllm']['image']['repository']}:{catalog.runtime()['vllm']['image']['tag']}",
                lmcache=catalog.runtime()["lmcache"]["version"],
                tag=catalog.runtime()["runtimeImage"]["tag"],
            ),
            "## Parameters",
            "",
            "Generated from `values.schema.json` (the spec's schema). Sizes are Kubernetes quantities",
            "(`10Gi`). Anything under `resources` wins over what the chart computes.",
            "",
            parameters_table(),
            "",
        ]
    )


if __name__ == "__main__":
    print(render(), end="")
