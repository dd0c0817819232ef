"""charts/kvgen/README.md, generated: the parameters table comes from the spec's JSON Schema
(descriptions, types, defaults) and the compatibility table from files/runtime.yaml, so
neither is written by hand twice. `python -m tools.chart_readme` prints it; scripts/regenerate
writes it and a test fails when the committed file is stale."""

from __future__ import annotations

import json
from typing import Any

from kvgen import __version__
from kvgen.data import catalog
from kvgen.spec.schema import spec_schema
from tools.image_requirements import LOCK_DIR, read_pins

INTRO = """\
# kvgen Helm chart

vLLM with KV-cache offloading: the LMCache MP server (`LMCacheMPConnector`; a native sidecar or,
with `gpuAccess: in-container`, inside the vLLM container) or vLLM's own `OffloadingConnector`,
with kvgen's capability rules applied and memory, `/dev/shm` and ephemeral storage sized. The
values are a kvgen spec, so

    helm template gemma charts/kvgen -f examples/kaito-gemma-4-12b.yaml

gives the same objects as `kvgen render examples/kaito-gemma-4-12b.yaml` (the project's
tests render every example both ways, plus 300 generated specs, and compare them).
`values.schema.json` is the spec's JSON Schema (its top-level required keys, `model` and
`instance`, are checked by the templates instead): Helm rejects a wrong type with the value's
path, and the templates fail from `templates/validate.yaml`, listing every problem at once with
its path and kvgen's hints ("did you mean ..."), for an unknown key (`files/spec-keys.json`), a
value out of range, too long, not matching its pattern or not one of its literals
(`files/spec-checks.json`: Helm's schema check would stop the render before the others), or
when a value cannot be served (an unknown instance
type, parallelism that does not fit the GPUs, a pod that does not fit its node). NOTES.txt states whether offloading is on and, when it is off, why, and how
the LMCache server reaches the GPUs with what that requires.

## GPU access modes

The LMCache server opens CUDA IPC handles from vLLM, pins its L1 with `cudaHostRegister` and
maps devices by UUID, so it must see exactly vLLM's GPUs. `kvCacheOffloading.lmcache.gpuAccess`:

{modes}

`dra` is refused below Kubernetes 1.34: the chart reads the version from
`.Capabilities.KubeVersion` (the cluster's on `helm install`; `helm template --kube-version 1.34`
offline; `helm template` without it: the values' `kubeVersion`, as in examples/lmcache-dra.yaml), as
`kvgen render` does.

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

## A KV tier shared by the replicas

With the `lmcache` backend, `kvCacheOffloading.remote` adds an existing Valkey or Redis
(`url: redis://HOST:PORT`) as the last L2 tier of every replica's LMCache server (LMCache's `resp`
adapter); its password comes only from a Secret (`passwordSecret`), given to the server as
`LMCACHE_RESP_PASSWORD`, never on its command line. TLS (`rediss://`) and the `native` backend are
refused; the native backend's shared tier is a ReadWriteMany claim as a secondary
`fileSystem.pvc.ref` tier.

## Multi-node servers

`parallelism.nodes` > 1 renders two StatefulSets and a headless Service (`multiNode.engine:
statefulset`, one server), or one LeaderWorkerSet (`leaderworkerset`, `leaderworkerset.x-k8s.io/v1`,
the LWS controller must be installed): `replicas` groups of `parallelism.nodes` pods, recreated
together when one restarts, ranks from the `LWS_WORKER_INDEX` and `LWS_LEADER_ADDRESS` it injects.
With the `lmcache` backend each pod runs its own LMCache server, bound to `0.0.0.0` (its request port
5555 has no authentication: admit it from the server's own pods only, with a NetworkPolicy), and vLLM
is told every node's server in node-rank order (`lmcache.mp.server_urls`; the project's
docs/multi-node.md).

## Operations objects

`probes` sets vLLM's probe timings (timeouts of 5 s and more by default, so a saturated server is
not restarted); the Deployment's `progressDeadlineSeconds` is the startup budget
(`periodSeconds` x `failureThreshold`) plus 600 s. `disruptionBudget` renders a PodDisruptionBudget
(`maxUnavailable` 1), on by default when there can be more than one replica. `metrics.podMonitor`
and `metrics.serviceMonitor` render Prometheus Operator monitors (its CRDs must be installed)
scraping vLLM's `/metrics` on the `http` port and, with the PodMonitor, the LMCache server's on
`lmcache-http` (its unauthenticated HTTP API then listens on the pod IP: restrict port 8080 with a
NetworkPolicy, or set `metrics.lmcacheServer: false`). `autoscaling` takes exactly one of `keda`
(a ScaledObject on a Prometheus query, by default the requests waiting in vLLM) or `hpa`; the
Deployment then has no `replicas`. A server spanning several nodes is not autoscaled.
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
    recipe = read_pins(LOCK_DIR / "base.txt")["lmcache"].version
    bundled = lm["inVllmImage"] or f"not verified in the image; its published requirements resolve {recipe} (below)"
    return "\n".join(
        [
            "| vLLM | vLLM image | LMCache | LMCache server image | LMCache in the vLLM image | kvgen runtime image | connectors |",
            "|---|---|---|---|---|---|---|",
            f"| {v['version']} | `{v['image']['repository']}:{v['image']['tag']}` | {lm['version']} | the vLLM image "
            f"(`images.lmcache` unset) | {bundled} | `{rt['runtimeImage']['repository']}:{__version__}` "
            f"(LMCache {lm['version']}, CUDA {lm['cudaMajor']}) | lmcache: `{c['lmcache']}`; native: `{c['native']}`; "
            f"prefill/decode: `{c['disaggregation']}` |",
        ]
    )


COMPATIBILITY_NOTES = """\
vLLM's `LMCacheMPConnector` imports `lmcache` from the vLLM image, and LMCache's MP protocol has
no version handshake: a client and server of different LMCache versions fail at run time. So
the LMCache server runs from the vLLM image by default (the sidecar, or the vLLM container
itself with `gpuAccess: in-container`); set `images.lmcache` only to an image with the same
LMCache version (kvgen warns, and NOTES.txt says so). vLLM does not pin the LMCache of its
image: its release image installs vLLM's `requirements/kv_connectors.txt` (`{kv_lmcache}`),
which resolved to {recipe} when vLLM was published (`images/lock/base.txt`). kvgen's launcher
checks the version at pod start and refuses an unsupported one; to see it beforehand:

    docker run --rm --entrypoint python3 {image} -c 'import importlib.metadata as m; print(m.version("lmcache"))'

kvgen's runtime image pins it: vLLM plus LMCache {lmcache} from a lock (`images/lock/`), with
kvgen's launcher baked in, built by `scripts/build-image` from `images/Dockerfile` and tagged with
the kvgen version. Point the chart at it with one value, `images.vllm`:

    helm install NAME charts/kvgen -f spec.yaml \\
      --set images.vllm.repository={repository} --set images.vllm.tag={tag}
"""


def gpu_access_table() -> str:
    rows = ["| mode | what runs | requires |", "|---|---|---|"]
    for mode, row in catalog.load("gpu-access.yaml")["modes"].items():
        rows.append(f"| `{mode}` | {row['summary']} | {row['requirement']} |")
    return "\n".join(rows)


HELM = """\
## Install, names, namespace, labels

```bash
helm install gemma charts/kvgen -n llm --create-namespace -f my-spec.yaml
helm test gemma -n llm            # a pod asks vLLM's /health through the Service
```

- **Names.** The values' `name` (a kvgen spec's) names every object. Without it the release does,
  as `helm create`'s fullname: `fullnameOverride`; else the release name when it contains the
  chart name (`nameOverride` replaces `kvgen` there); else `<release>-kvgen`. The result is cut to
  52 characters, not 63 (the spec's limit: room for `-headless` and the StatefulSet pods'
  revision-hash label), and loses a final `-`; a release name that gives no DNS-1035 label (a
  dot, a leading digit) fails, with a hint. `kvgen render` has no release: it uses `name`, else
  `fullnameOverride`, and requires one. `name` and `fullnameOverride` set to two names fail,
  naming both.
- **Namespace.** The release's (`helm install -n`, `helm template --namespace`). The values'
  `namespace` must agree with it: `namespace: default` under `-n llm` fails, naming both, with the
  fix (remove it from the values, or install with `-n default`). Without `-n` Helm gives the
  release namespace `default`, which it cannot tell from `-n default`: there the values'
  namespace stands (`helm template x charts/kvgen -f spec.yaml`). `kvgen render` writes no
  `metadata.namespace` for a spec without one (kustomize or Argo CD place the objects) unless
  given `--namespace NS`. A multi-node server's ranks meet at `<name>-0.<name>-headless`, and its
  LMCache servers are named the same way, both completed by the pods' DNS search path in whatever
  namespace they run.
- **As a subchart.** Helm passes `global` to a dependency of an umbrella chart; the values schema
  accepts it (any object) and the templates ignore it.
- **Warnings.** Every warning NOTES.txt prints is also the annotation `kvgen.dev/warnings` of the
  Deployment, StatefulSets or LeaderWorkerSet (one a line; not on the pod template), which Argo CD
  and Flux show; `strict: true` makes each of them a problem, failing the render.
- **Labels.** Every object carries `app.kubernetes.io/name` (`vllm`), `instance` (the release),
  `version` (the vLLM image tag), `component` (`inference`, `prefill` or `decode`), `part-of`
  (the objects' name), `managed-by` (`Helm`; `kvgen render` writes `kvgen` and the spec's name as
  instance) and `helm.sh/chart` (`kvgen-<version>`; not on the pod templates, so a new chart
  version that changes nothing else restarts no server). Selectors hold `app.kubernetes.io/name`
  and `app.kubernetes.io/instance` only (plus `kvgen.dev/node-role` in a multi-node server).
  **Upgrading a release made by an earlier build of the chart:** the selector's instance was
  the spec's name and is now the release name. A Deployment's or StatefulSet's selector cannot
  change, so a release named otherwise than its spec's `name` fails to upgrade in place: delete
  its workloads first (`kubectl delete deployment,statefulset -l
  app.kubernetes.io/instance=<spec name> --cascade=orphan`, then `helm upgrade`), or keep the
  release named as the spec.
- **Output.** `helm template` writes block YAML, as `kvgen render` does: labels, arguments and
  resources as YAML mappings and lists, the launcher script as a `|` block.
- **Tests.** `helm lint charts/kvgen --strict` passes without values (it reports, as information,
  that `model` and `instance` are missing); with values (`-f values.yaml`) it fails on every problem
  `kvgen render` refuses, listed in its error (Helm's lint mode only logs a template's `fail`, so
  `templates/validate.yaml` raises an error of the template engine after it). `ci/*-values.yaml` are
  chart-testing's (`ct lint`, `ct install`): the `lmcache` backend, the `native` backend and a
  server across two nodes (`ct install` needs the GPU nodes they name). `helm test` runs `templates/tests/test-health.yaml`: curl (the
  `testImage` pin of `files/runtime.yaml`) against `http://<name>:<port>/health`; `kvgen render`
  does not write it.

## Installing from the OCI registry

Each kvgen release pushes this chart, signed with cosign (keyless, by the release workflow), to
`oci://ghcr.io/kvgen-dev/charts/kvgen` at kvgen's version:

```bash
helm install gemma oci://ghcr.io/kvgen-dev/charts/kvgen --version {version} -n llm -f my-spec.yaml
helm template gemma oci://ghcr.io/kvgen-dev/charts/kvgen --version {version} -f my-spec.yaml
```

Your own copy, in your registry: `helm package charts/kvgen` (`kvgen-<version>.tgz`),
`helm registry login <registry>` if it needs one, `helm push kvgen-{version}.tgz oci://<registry>/charts`.

The package holds only what the templates read (`.helmignore` leaves out `ci/`, the icon, the
CRD schemas, KAITO's tables and the contract snapshots). `Chart.yaml` carries Artifact Hub's
annotations: the license, links and `artifacthub.io/images`, every image the chart can render (a
test holds it to `files/runtime.yaml`), and the project's `home`, `sources`, maintainers and icon.
GitOps: `examples/argocd/` (Argo CD Applications) and `examples/flux/gemma-4-12b-helmrelease.yaml`
(a Flux `OCIRepository` for the pushed chart and a `HelmRelease` with a spec as its values).
"""


def render() -> str:
    return "\n".join(
        [
            INTRO.format(modes=gpu_access_table()),
            HELM.format(version=__version__),
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
                recipe=read_pins(LOCK_DIR / "base.txt")["lmcache"].version,
                kv_lmcache=next(
                    line for line in (LOCK_DIR / "base.in").read_text().splitlines() if line.startswith("lmcache")
                ),
                repository=catalog.runtime()["runtimeImage"]["repository"],
                tag=__version__,
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
