"""KServe input: a ``serving.kserve.io`` LLMInferenceService (v1alpha1 or v1alpha2) with
``kvCacheOffloading``, translated into native specs with KServe's behaviour.

- Offloading is KServe's shape: the ``native`` backend (vLLM's OffloadingConnector) with
  ``cpu``, ``evictionPolicy`` and ``secondary`` tiers as written. Without ``kvCacheOffloading``
  KServe does not offload, so neither does the native spec (``enabled: false``).
- ``kvCacheOffloading`` is read under ``spec`` (where the CRD has it), under ``spec.prefill``,
  and under ``spec.workload`` (where the KServe guide shows it; the CRD has no such field, so
  KServe would reject or prune it: kvgen reads it and warns).
  KServe's controller always renders ``TieringOffloadingSpec`` (``specName``), tiers or not.
- ``spec.model.uri`` ``hf://ORG/NAME[:REVISION]`` (or ``spec.model.name``) is ``model.id``; vLLM
  serves it as KServe's template does: ``--served-model-name NAME publishers/NAMESPACE/models/NAME``
  with NAME = ``spec.model.name``, defaulted to ``metadata.name``.
- The ``main`` container's resources become ``resources.vllm`` (a request left out is its limit,
  as the API server defaults it; an ``ephemeral-storage`` request grows by each emptyDir tier, as
  KServe's controller adds them); its ``nvidia.com/gpu`` (or ``nvidia.com/mig-PROFILE``) count is
  checked against ``spec.parallelism`` (and, when that is absent, becomes the tensor-parallel
  size). Its ``args`` and ``VLLM_ADDITIONAL_ARGS`` are vLLM arguments; other env passes through.
- KServe has no instance type. kvgen takes one from the pod template's nodeSelector
  ``node.kubernetes.io/instance-type``, else from the annotation ``kvgen.dev/instance-type``,
  else from the ``--instance`` command-line option. Without one the node is unknown, as in KServe:
  the pod gets the GPUs ``main`` asks for (none: a CPU pod; a MIG profile: a MIG slice), and the
  checks that need the node are skipped with a warning.
- With ``spec.prefill`` there are two native specs: the main workload as role ``decode`` and
  ``NAME-prefill`` as role ``prefill``, each with its own ``kvCacheOffloading`` as KServe keeps
  them; NIXL (which KServe leaves to the user) and the OffloadingConnector share a MultiConnector.
  The inference scheduler that routes between them (``spec.router``) is not rendered.
- ``spec.router`` (a managed route, with or without a gateway and scheduler) is ``routing.mode: gateway``
  with KServe's route rules, and the objects get KServe's controller's names (``routing.naming: kserve``,
  kserve_router.py).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from kvgen.core import quantity
from kvgen.core.errors import Path, quoted, shown
from kvgen.input.dialects import kserve_router, lora, shape, vllm_args
from kvgen.input.dialects.core import Converted, SpecBuilder, Tracker, integer, mapping
from kvgen.input.source import SourceDoc

GROUP = "serving.kserve.io"
VERSIONS = ("serving.kserve.io/v1alpha1", "serving.kserve.io/v1alpha2")
KIND = "LLMInferenceService"
INSTANCE_ANNOTATION = "kvgen.dev/instance-type"
INSTANCE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"  # a MIG slice of the profile after it (the mixed strategy)
ARCH_LABEL = "kubernetes.io/arch"
TIERING_SPEC = "TieringOffloadingSpec"  # what KServe's kvTransferConfig always renders (config_merge.go)
SHM_PATH = "/dev/shm"
PREFILL_SUFFIX = "-prefill"
LORA_ROOT = "/mnt/lora"  # where KServe mounts each adapter (workload_lora.go:38-41, :95)
LORA_LIMITS = (("maxRank", "maxRank"), ("maxAdapters", "maxLoras"), ("maxCpuAdapters", "maxCpuLoras"))


def _reasons() -> dict[str, str]:
    reasons = {
        "metadata.labels": "labels of the input resource are not copied to the rendered objects",
        "metadata.annotations": "annotations of the input resource are not copied to the rendered objects",
        "spec.router.*": "kvgen has no equivalent for this router field; routing.mode gateway renders its own "
        "InferencePool, Endpoint Picker and HTTPRoute (docs/routing.md)",
        "spec.baseRefs": "kvgen does not read LLMInferenceServiceConfig objects; whatever they set is not applied",
        "spec.storageInitializer": "vLLM downloads the model from Hugging Face itself, into the model cache (an "
        "emptyDir, as KServe's storage initializer does); for weights that survive a restart set model.cache in "
        "a kvgen spec (an init container fills a claim once)",
        "spec.tracing": "kvgen renders no tracing configuration",
        "spec.model.criticality": "kvgen renders no inference scheduler to act on a criticality",
        "status": "status is written by the KServe controller",
        "status.*": "status is written by the KServe controller",
    }
    for base in ("spec", "spec.prefill", "spec.workload"):
        reasons |= {
            f"{base}.scaling": "kvgen renders a fixed replica count (replicas), no autoscaler",
            f"{base}.rolloutStrategy": "kvgen renders a Deployment with Kubernetes' default rolling update",
            f"{base}.labels": "workload labels are not copied to the rendered pods",
            f"{base}.annotations": "workload annotations are not copied to the rendered pods",
            f"{base}.template.*": "kvgen renders its own pod around the vLLM container; this pod setting is not carried over",
            f"{base}.template.containers[].*": "kvgen renders the vLLM container itself (ports, probes, security "
            "context, volumes); this container setting is not carried over",
            f"{base}.template.volumes[]": "a volume the vLLM container does not mount is not carried over",
            f"{base}.parallelism.dataRPCPort": "only used by multi-node data parallel (spec.worker), which kvgen does not convert",
        }
    return reasons


REASONS = _reasons()


def _bytes(value: Any) -> int | None:
    """A size in bytes, or None when it is no size (the native spec then says why)."""
    try:
        return quantity.to_bytes(value)
    except (quantity.QuantityError, TypeError):
        return None


def _image(t: Tracker, b: SpecBuilder, ref: Any, path: Path) -> None:
    """'repo:tag', 'repo@sha256:...', 'repo:tag@sha256:...' -> images.vllm."""
    if not isinstance(ref, str) or not ref:
        t.error(path, "must be an image reference such as vllm/vllm-openai:v0.33.0")
        return
    name, _, digest = ref.partition("@")
    last = name.rsplit("/", 1)[-1]
    repo, tag = name.rsplit(":", 1) if ":" in last else (name, None)
    if digest and not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
        t.error(path, f"{quoted(digest)} is not a sha256 digest")
        return
    b.set(("images", "vllm", "repository"), repo, path)
    if tag:
        b.set(("images", "vllm", "tag"), tag, path)
    if digest:
        b.set(("images", "vllm", "digest"), digest, path)
    b.note(f"images.vllm from {ref}: the image must run `vllm serve` as its entrypoint, like vllm/vllm-openai")


class _Workload:
    """One KServe workload (the main one, or spec.prefill) being read into one native spec."""

    def __init__(self, t: Tracker, b: SpecBuilder, fields: dict[str, tuple[Any, Path]], base: Path):
        self.t, self.b, self.fields, self.base = t, b, fields, base
        self.gpus: int | None = None
        self.gpu_path: Path | None = None
        self.mig: str | None = None  # the profile of nvidia.com/mig-<profile>
        self.arch: tuple[str, Path] | None = None  # the pod's nodeSelector kubernetes.io/arch
        self.ephemeral: dict[str, tuple[Any, Path]] = {}  # the main container's ephemeral-storage, by kind
        self.selector_instance: tuple[str, Path] | None = None
        self.shm_volume: str | None = None
        self.mounted_volumes: set[str] = set()

    def field(self, key: str) -> tuple[Any, Path]:
        return self.fields.get(key, (None, (*self.base, key)))

    # ------------------------------------------------------------------ pod template

    def template(self) -> None:
        tmpl, path = self.field("template")
        tmpl = mapping(self.t, path, tmpl)
        containers = tmpl.get("containers") or []
        if not isinstance(containers, list):
            self.t.error((*path, "containers"), "must be a list")
            containers = []
        for i, c in enumerate(containers):
            cpath = (*path, "containers", i)
            if not isinstance(c, dict):
                self.t.error(cpath, "must be a container")
            elif c.get("name") == "main":
                self.main(c, cpath)
            else:
                self.t.error(
                    cpath,
                    f"container {shown(c.get('name'))}: kvgen renders only the vLLM container ('main') "
                    "and its own LMCache sidecar; other containers are not carried over",
                    "remove it, or run it next to the rendered objects",
                )
        if tmpl.get("initContainers"):
            self.t.error(
                (*path, "initContainers"),
                "init containers are not carried over; kvgen renders its own pod",
                "remove them",
            )
        selector = mapping(self.t, (*path, "nodeSelector"), tmpl.get("nodeSelector"))
        for key, value in selector.items():
            if key in INSTANCE_LABELS:
                self.selector_instance = (str(value), (*path, "nodeSelector", key))
                self.t.use((*path, "nodeSelector", key))
            else:
                if key == ARCH_LABEL:
                    self.arch = (str(value), (*path, "nodeSelector", key))
                self.b.set(("scheduling", "nodeSelector", key), str(value), (*path, "nodeSelector", key))
        if selector:
            self.t.use((*path, "nodeSelector"))
        if tmpl.get("tolerations"):
            self.b.set(("scheduling", "tolerations"), tmpl["tolerations"], (*path, "tolerations"), subtree=True)
        if tmpl.get("affinity"):
            self.b.set(("scheduling", "affinity"), tmpl["affinity"], (*path, "affinity"), subtree=True)
        if tmpl.get("priorityClassName"):
            self.b.set(("scheduling", "priorityClassName"), tmpl["priorityClassName"], (*path, "priorityClassName"))
        # pod settings kvgen renders as they are (the spec's pod and scheduling sections)
        for key, native in (
            ("runtimeClassName", ("scheduling", "runtimeClassName")),
            ("schedulerName", ("scheduling", "schedulerName")),
            ("topologySpreadConstraints", ("scheduling", "topologySpreadConstraints")),
            ("imagePullSecrets", ("pod", "imagePullSecrets")),
            ("securityContext", ("pod", "securityContext")),
        ):
            if tmpl.get(key):
                self.b.set(native, tmpl[key], (*path, key), subtree=True)
        if tmpl.get("terminationGracePeriodSeconds") is not None:
            self.b.set(
                ("pod", "terminationGracePeriodSeconds"),
                tmpl["terminationGracePeriodSeconds"],
                (*path, "terminationGracePeriodSeconds"),
            )
        if tmpl.get("serviceAccountName"):
            self.b.set(("pod", "serviceAccount", "name"), tmpl["serviceAccountName"], (*path, "serviceAccountName"))
        if tmpl.get("automountServiceAccountToken") is not None:
            self.b.set(
                ("pod", "serviceAccount", "automountToken"),
                tmpl["automountServiceAccountToken"],
                (*path, "automountServiceAccountToken"),
            )
        volumes = tmpl.get("volumes") or []
        for i, v in enumerate(volumes if isinstance(volumes, list) else []):
            vpath = (*path, "volumes", i)
            name = v.get("name") if isinstance(v, dict) else None
            if name is not None and name == self.shm_volume:
                empty = v.get("emptyDir") if isinstance(v.get("emptyDir"), dict) else None
                if empty is None or empty.get("medium") != "Memory":
                    self.t.error(vpath, f"the volume mounted at {SHM_PATH} must be an emptyDir with medium Memory")
                elif empty.get("sizeLimit") is not None:
                    self.b.set(("resources", "shm"), empty["sizeLimit"], (*vpath, "emptyDir", "sizeLimit"))
                    self.t.use(vpath)
                else:
                    self.t.use(vpath)
            elif name in self.mounted_volumes:
                self.t.use(vpath)  # its mount is already an error

    def main(self, c: dict[str, Any], path: Path) -> None:
        t, b = self.t, self.b
        t.use((*path, "name"))
        if "image" in c:
            _image(t, b, c["image"], (*path, "image"))
        if c.get("command"):
            t.error(
                (*path, "command"),
                "a command replaces KServe's launch script (and with it the offloading flags); "
                "kvgen starts vLLM itself",
                "remove it; put vLLM flags in args",
            )
        args = c.get("args")
        if args:
            if not isinstance(args, list):
                t.error((*path, "args"), "must be a list of strings")
            else:
                vllm_args.apply(
                    vllm_args.split([str(a) for a in args]), t, b, lambda i: ((*path, "args", i), None, None)
                )
                t.use((*path, "args"))
        for j, env in enumerate(c.get("env") or []):
            self.env(env, (*path, "env", j))
        # the container settings kvgen has knobs for: vllm.envFrom, images.vllm.pullPolicy
        if c.get("envFrom"):
            b.set(("vllm", "envFrom"), c["envFrom"], (*path, "envFrom"), subtree=True)
        if c.get("imagePullPolicy"):
            b.set(("images", "vllm", "pullPolicy"), c["imagePullPolicy"], (*path, "imagePullPolicy"))
        resources = mapping(t, (*path, "resources"), c.get("resources"))
        self.resources(resources, (*path, "resources"))
        for j, mount in enumerate(c.get("volumeMounts") or []):
            mpath = (*path, "volumeMounts", j)
            if isinstance(mount, dict) and mount.get("mountPath") == SHM_PATH:
                self.shm_volume = mount.get("name")
                t.use(mpath)
            else:
                name = mount.get("name") if isinstance(mount, dict) else None
                if name:
                    self.mounted_volumes.add(name)
                t.error(
                    mpath,
                    "kvgen mounts only its own volumes (model cache, /dev/shm, KV-cache tiers) into vLLM",
                    "use kvCacheOffloading.secondary for cache disks; remove other mounts",
                )

    def env(self, env: Any, path: Path) -> None:
        t, b = self.t, self.b
        if not isinstance(env, dict) or not env.get("name"):
            t.error(path, "an env entry needs a name")
            return
        name = env["name"]
        if name == "VLLM_ADDITIONAL_ARGS":
            if "value" not in env:
                t.error(path, "VLLM_ADDITIONAL_ARGS must be a literal value for kvgen to read it")
                return
            try:
                tokens = shlex.split(str(env["value"]))
            except ValueError as exc:
                t.error((*path, "value"), f"cannot split into arguments: {exc}")
                return
            vllm_args.apply(vllm_args.split(tokens), t, b, lambda _i: ((*path, "value"), None, None))
            t.use(path)
            return
        if name == "HF_TOKEN":
            ref = ((env.get("valueFrom") or {}).get("secretKeyRef")) if isinstance(env.get("valueFrom"), dict) else None
            if isinstance(ref, dict) and ref.get("name") and ref.get("key"):
                secret = {"name": ref["name"], "key": ref["key"]}
                if isinstance(ref.get("optional"), bool):
                    secret["optional"] = ref["optional"]
                b.set(("model", "hfTokenSecret"), secret, path)
            else:
                t.error(
                    path,
                    "HF_TOKEN must come from a Secret (valueFrom.secretKeyRef); kvgen never takes a token literally",
                    "kubectl create secret generic hf-token --from-literal=HF_TOKEN=...",
                )
            return
        entry = {k: env[k] for k in ("name", "value", "valueFrom") if k in env}
        if "value" in entry and not isinstance(entry["value"], str):
            entry["value"] = str(entry["value"])
        b.append(("vllm", "env"), entry, path)

    def resources(self, resources: dict[str, Any], path: Path) -> None:
        t, b = self.t, self.b
        gpu: dict[str, tuple[int | None, Path]] = {}
        devices: set[str] = set()  # nvidia.com/gpu and nvidia.com/mig-<profile> names asked for
        values = {kind: mapping(t, (*path, kind), resources.get(kind)) for kind in ("requests", "limits")}
        for kind in ("requests", "limits"):
            for rname, value in values[kind].items():
                rpath = (*path, kind, rname)
                if rname == "ephemeral-storage":
                    self.ephemeral[kind] = (value, rpath)  # the request is set with the tiers (read)
                    if kind == "limits":
                        b.set(("resources", "vllm", kind, rname), value, rpath)
                    else:
                        t.use(rpath)
                elif rname in ("cpu", "memory"):
                    b.set(("resources", "vllm", kind, rname), value, rpath)
                    if kind == "limits" and rname not in values["requests"]:
                        # the API server defaults a missing request to its limit (KServe's pod gets both)
                        b.set(("resources", "vllm", "requests", rname), value, rpath)
                elif rname == GPU_RESOURCE or rname.startswith(MIG_RESOURCE_PREFIX):
                    gpu[kind] = (integer(t, rpath, value), rpath)
                    devices.add(rname)
                    t.use(rpath)
                else:
                    t.warn(
                        rpath,
                        "not honoured: kvgen requests only CPU, memory, ephemeral storage, nvidia.com/gpu and "
                        "nvidia.com/mig-<profile>",
                    )
        if len(devices) > 1:
            t.error(
                path,
                f"asks for {' and '.join(sorted(devices))}: kvgen renders one kind of GPU device per pod",
                "request either nvidia.com/gpu or one nvidia.com/mig-<profile>",
            )
        elif len({v for v, _ in gpu.values()}) > 1:
            t.error(gpu["limits"][1], f"{next(iter(devices))} requests and limits must be equal")
        elif gpu:
            self.gpus, self.gpu_path = gpu["limits"] if "limits" in gpu else gpu["requests"]
            (device,) = devices
            if device.startswith(MIG_RESOURCE_PREFIX):
                self.mig = device[len(MIG_RESOURCE_PREFIX) :]

    # ------------------------------------------------------------------ the rest of the workload

    def read(self) -> None:
        t, b = self.t, self.b
        replicas, path = self.field("replicas")
        if replicas is not None:
            value = integer(t, path, replicas)
            if value is not None:
                b.set(("replicas",), value, path)
        worker, path = self.field("worker")
        if worker is not None:
            t.error(
                path,
                "multi-node workloads (LeaderWorkerSet) are not converted",
                "write a native spec with parallelism.nodes",
            )
        self.template()
        self.parallelism()
        kv, path = self.field("kvCacheOffloading")
        if kv is None:
            b.set(("kvCacheOffloading", "enabled"), False)
            b.note("kvCacheOffloading.enabled false: KServe offloads only when kvCacheOffloading is set")
        else:
            kv = mapping(t, path, kv)
            b.set(("kvCacheOffloading",), {"backend": "native", **kv, "specName": TIERING_SPEC}, path, subtree=True)
            b.note(
                f"kvCacheOffloading.specName {TIERING_SPEC}: KServe's controller renders it with or without disk "
                "tiers (config_merge.go kvTransferConfig)"
            )
        self.ephemeral_request(kv if isinstance(kv, dict) else {})

    def ephemeral_request(self, kv: dict[str, Any]) -> None:
        """KServe's controller adds each emptyDir tier's size to the main container's
        ephemeral-storage request, on top of what the user wrote (workload_kvcache.go
        attachFileSystemKVCacheTier L80-90); limits stay as written."""
        t, b = self.t, self.b
        if "requests" not in self.ephemeral:
            if isinstance(kv.get("secondary"), list) and any(
                isinstance(tier, dict) and isinstance(tier.get("fileSystem"), dict) and "emptyDir" in tier["fileSystem"]
                for tier in kv["secondary"]
            ):
                b.note(
                    "resources.vllm.requests.ephemeral-storage: KServe requests the emptyDir tiers only; kvgen "
                    "requests the model download cache too"
                )
            return
        value, rpath = self.ephemeral["requests"]
        sizes = []
        tiers = kv.get("secondary")
        for tier in tiers if isinstance(tiers, list) else []:
            empty = ((tier.get("fileSystem") or {}) if isinstance(tier, dict) else {}).get("emptyDir")
            size = _bytes(empty.get("size")) if isinstance(empty, dict) else None
            if size is not None:
                sizes.append(size)
        request = _bytes(value)
        if not sizes or request is None:  # nothing to add, or a bad size the native spec reports
            b.set(("resources", "vllm", "requests", "ephemeral-storage"), value, rpath)
            return
        total = request + sum(sizes)
        b.set(("resources", "vllm", "requests", "ephemeral-storage"), quantity.format_bytes(total), rpath)
        b.note(
            f"resources.vllm.requests.ephemeral-storage {quantity.format_bytes(total)}: {value} plus the emptyDir "
            f"tiers, as KServe's controller adds them"
        )
        limit, _ = self.ephemeral.get("limits", (None, ()))
        limit_bytes = _bytes(limit) if limit is not None else None
        if limit_bytes is not None and total > limit_bytes:
            t.error(
                rpath,
                f"ephemeral-storage {value} plus the emptyDir tiers is {quantity.format_bytes(total)}, more than "
                f"the limit {limit}: KServe's controller adds each emptyDir tier to the request, and the API server "
                "refuses a request above its limit",
                "raise the limit, or lower the request or the tiers",
            )

    def parallelism(self) -> None:
        t, b = self.t, self.b
        par, path = self.field("parallelism")
        par = mapping(t, path, par)
        given = False
        for key in ("tensor", "pipeline", "data"):
            if par.get(key) is not None:
                value = integer(t, (*path, key), par[key])
                if value is not None:
                    b.set(("parallelism", key), value, (*path, key))
                    given = True
        if par.get("expert"):
            b.append(("vllm", "extraArgs"), "--enable-expert-parallel", (*path, "expert"))
        elif "expert" in par:
            t.use((*path, "expert"))
        if par.get("dataLocal") is not None:
            if par.get("dataLocal") != par.get("data"):
                t.warn(
                    (*path, "dataLocal"),
                    "not honoured: ranks per node only matter for multi-node data parallel "
                    "(spec.worker), which kvgen does not convert",
                )
            else:
                t.use((*path, "dataLocal"))
        if self.gpus is None:
            return
        assert self.gpu_path is not None, "set with self.gpus"
        total = 1
        for key in ("tensor", "pipeline", "data"):
            total *= b.get(("parallelism", key), 1) or 1
        if given or b.get(("parallelism",)):
            if self.gpus != total:
                t.error(
                    self.gpu_path,
                    f"requests {self.gpus} GPU(s) but the parallel sizes use {total} (tensor x pipeline x data)",
                    "make them agree",
                )
        elif self.gpus > 1:
            b.set(("parallelism", "tensor"), self.gpus, self.gpu_path)
            t.warn(
                self.gpu_path,
                f"{self.gpus} GPUs without spec.parallelism: KServe starts vLLM without "
                "--tensor-parallel-size, so vLLM would use one of them; kvgen sets parallelism.tensor "
                f"{self.gpus} to use all",
                "set spec.parallelism.tensor to say so",
                covers=False,
            )


def _lora(
    t: Tracker,
    model: dict[str, Any],
    mpath: Path,
    fields: dict[str, tuple[Any, Path]],
    base_name: str,
    namespace: str,
    api: str,
) -> tuple[list[lora.Adapter], dict[str, tuple[int, Path]]]:
    """spec.model.lora as KServe reads it: the webhook's checks (llm_inference_service_validation.go:436-499),
    then the reconciler's URI schemes (workload_lora.go:68-123). Each adapter is served under two names,
    NAME and publishers/NAMESPACE/models/NAME, in name order (workload_lora.go:79-83, :152-175)."""
    if "lora" not in model or model["lora"] is None:
        return [], {}
    lpath = (*mpath, "lora")
    spec = mapping(t, lpath, model["lora"])
    limits: dict[str, tuple[int, Path]] = {}
    for key, native in LORA_LIMITS:
        if spec.get(key) is None:
            continue
        value = integer(t, (*lpath, key), spec[key])
        if value is not None and value < 1:
            t.error((*lpath, key), f"{key} must be at least 1")
        elif value is not None:
            limits[native] = (value, (*lpath, key))
    items = spec.get("adapters") or []
    if not items:
        t.warn(
            lpath,
            "not honoured: no adapters, so KServe adds no LoRA flags (workload_lora.go:71-73, :148-150)",
            covers=True,
        )
        return [], {}
    seen: dict[str, int] = {}
    found: list[tuple[str, str, Path]] = []
    for i, item in enumerate(items):
        apath = (*lpath, "adapters", i)
        item = mapping(t, apath, item)
        name, uri = item.get("name"), item.get("uri")
        if "criticality" in item:
            if api.endswith("/v1alpha1"):
                t.warn(
                    (*apath, "criticality"),
                    "not honoured: kvgen renders no inference scheduler to act on a criticality",
                )
        if not name:
            t.error((*apath, "name"), "adapter name is required")
            continue
        name = str(name)
        if name in (".", ".."):
            t.error((*apath, "name"), 'adapter name must not include "." or ".." (path traversal risk)')
            continue
        if name in seen:
            t.error((*apath, "name"), f"duplicate name (same as adapters[{seen[name]}])")
        else:
            seen[name] = i
        if name == base_name:
            t.error((*apath, "name"), f'adapter name must differ from base model name "{base_name}"')
        if _lora_uri(t, name, uri, (*apath, "uri")):
            found.append((name, str(uri), apath))
    if 2 * len(items) > 32:
        t.error(
            (*lpath, "adapters"),
            f"{len(items)} adapters are {2 * len(items)} served names (KServe serves each as NAME and "
            "publishers/NAMESPACE/models/NAME); kvgen serves at most 32",
            "serve at most 16 adapters per LLMInferenceService",
        )
    adapters = []
    for name, uri, apath in sorted(found, key=lambda f: f[0]):
        for served in (name, f"publishers/{namespace}/models/{name}"):
            adapters.append(lora.Adapter(served, uri, apath, (*apath, "name"), (*apath, "uri")))
    storage, spath = fields.get("storageInitializer", (None, ("spec", "storageInitializer")))
    if adapters and isinstance(storage, dict) and storage.get("enabled") is False:
        # workload_lora.go:75-77, :98-105: hf://, s3:// and pvc:// adapters all need the storage initializer
        t.error(
            (*spath, "enabled"),
            "KServe refuses LoRA adapters without the storage initializer (hf:// and s3:// are downloaded by it, "
            "pvc:// mounted by the same step)",
            "remove storageInitializer.enabled: false",
        )
    return adapters, limits


def _lora_uri(t: Tracker, name: str, uri: Any, path: Path) -> bool:
    """Whether an adapter's uri has a kvgen equivalent (hf://ORG/REPO, pvc://CLAIM[/PATH]); else an error."""
    if not uri:
        t.error(path, "an adapter needs a uri (hf://ORG/REPO or pvc://CLAIM/PATH)")
        return False
    text = str(uri)
    scheme, sep, rest = text.partition("://")
    if not sep:
        t.error(path, f'LoRA adapter "{name}": invalid URI "{text}"')
        return False
    if scheme == "hf":
        if ":" in rest:  # KServe's storage initializer reads hf://OWNER/MODEL[:REVISION] (kserve_storage.py:811)
            t.error(
                path,
                f"{quoted(text)}: kvgen fetches an adapter's default branch from Hugging Face; it takes no :REVISION",
                "remove the revision, or copy that revision's files to a PersistentVolumeClaim and use pvc://CLAIM/PATH",
            )
            return False
        return True
    if scheme == "pvc":
        return True
    if scheme == "s3":
        t.error(
            path,
            f"{quoted(text)}: kvgen fetches adapters only from Hugging Face (hf://) or a PersistentVolumeClaim "
            "(pvc://); it has no S3 download (KServe's storage initializer)",
            "copy the adapter's files (adapter_config.json, adapter_model.safetensors) to a PersistentVolumeClaim and "
            "use pvc://CLAIM/PATH, or publish it on Hugging Face and use hf://ORG/REPO",
        )
        return False
    if scheme == "oci":  # workload_lora.go:106-110
        t.error(
            path,
            f'LoRA adapter "{name}": oci:// is not supported for LoRA adapters; use hf://, s3://, or pvc:// instead',
            "package the adapter on a PersistentVolumeClaim and use pvc://CLAIM/PATH",
        )
        return False
    t.error(  # workload_lora.go:111-112
        path,
        f'LoRA adapter "{name}": unsupported URI scheme "{scheme}://"; supported schemes are hf://, s3://, pvc://',
        "use hf://ORG/REPO or pvc://CLAIM/PATH",
    )
    return False


def _unknown_node(w: _Workload, base: Path) -> None:
    """No instance type: the node KServe's pod lands on is unknown. Its GPUs are what ``main``
    asks for (none: vLLM's CPU backend), its architecture the pod's nodeSelector's."""
    src = w.gpu_path or (*base, "template")
    w.b.set(("instance", "gpus"), w.gpus or 0, src, use=False)
    if not w.gpus:
        w.b.note(
            "instance.gpus 0: the main container asks for no nvidia.com/gpu, so it is a CPU pod (rule cpu-instance)"
        )
    if w.arch is not None and w.arch[0] in ("amd64", "arm64"):
        w.b.set(("instance", "arch"), w.arch[0], w.arch[1], use=False)


def _fields(t: Tracker, spec: dict[str, Any]) -> dict[str, tuple[Any, Path]]:
    fields: dict[str, tuple[Any, Path]] = {k: (v, ("spec", k)) for k, v in spec.items() if k != "workload"}
    if "workload" in spec:
        workload = mapping(t, ("spec", "workload"), spec["workload"])
        t.warn(
            ("spec", "workload"),
            "the LLMInferenceService API has no spec.workload (the KServe guide shows it, but the "
            "CRD inlines the workload into spec): KServe would reject or prune it; kvgen reads its fields as if "
            "they were under spec",
            "move its fields up to spec (spec.kvCacheOffloading)",
            covers=False,
        )
        for key, value in workload.items():
            if key in fields:
                t.error(("spec", "workload", key), f"{key} is set both under spec and under spec.workload")
            else:
                fields[key] = (value, ("spec", "workload", key))
    return fields


def convert(doc: SourceDoc, instance_option: str | None = None) -> list[Converted]:
    data = doc.data
    t = Tracker(doc)
    api, kind = data.get("apiVersion"), data.get("kind")
    t.use(("apiVersion",))
    t.use(("kind",))
    if api not in VERSIONS or kind != KIND:
        t.error(
            ("apiVersion",) if api not in VERSIONS else ("kind",),
            f"kvgen reads {KIND} ({', '.join(VERSIONS)}), not {api} {kind}",
            "write a native spec for other KServe resources",
        )
        t.raise_errors()
    shape.check(doc, shape.KSERVE)
    meta = mapping(t, ("metadata",), data.get("metadata"))
    spec = mapping(t, ("spec",), data.get("spec"))
    fields = _fields(t, spec)

    if api.endswith("/v1alpha1") and "kvCacheOffloading" in fields:
        t.warn(
            fields["kvCacheOffloading"][1],
            "serving.kserve.io/v1alpha1 has no kvCacheOffloading (the field is "
            "v1alpha2 only): KServe would drop it and not offload; kvgen honours it",
            "use apiVersion serving.kserve.io/v1alpha2",
            covers=False,
        )

    # values every native spec of this resource shares: (native path, value, source path)
    shared: list[tuple[Path, Any, Path | None]] = []
    name = meta.get("name")
    if not name:
        t.error(("metadata",), "metadata.name is required")
    if meta.get("namespace"):
        shared.append((("namespace",), meta["namespace"], ("metadata", "namespace")))
    model, mpath = fields.get("model", (None, ("spec", "model")))
    model = mapping(t, mpath, model)
    extra: list[tuple[str, Path]] = []
    uri, served = model.get("uri"), model.get("name")
    model_id = None
    if uri and str(uri).startswith("pvc://"):
        # weights pre-staged on a claim: served under spec.model.name (KServe's served name)
        shared.append((("model", "uri"), str(uri), (*mpath, "uri")))
        if served:
            model_id = str(served)
            shared.append((("model", "id"), model_id, (*mpath, "name")))
        else:
            t.error(
                (*mpath, "name"),
                "a pvc:// uri needs spec.model.name: the Hugging Face model id kvgen sizes the server for",
                "set spec.model.name, e.g. meta-llama/Llama-3.1-8B-Instruct",
            )
    elif uri:
        m = re.fullmatch(r"hf://([^/:\s]+/[^/:\s]+)(?::([^\s]+))?", str(uri))
        if not m:
            t.error(
                (*mpath, "uri"),
                f"{quoted(uri)}: kvgen serves Hugging Face models (hf://ORG/NAME) or weights on a claim (pvc://CLAIM/PATH); "
                "other storage is not supported",
                "use an hf:// or pvc:// uri, or write a native spec",
            )
        else:
            model_id = m.group(1)
            shared.append((("model", "id"), model_id, (*mpath, "uri")))
            if m.group(2):
                extra.append((f"--revision={m.group(2)}", (*mpath, "uri")))
    elif served:
        model_id = str(served)
        shared.append((("model", "id"), model_id, (*mpath, "name")))
    else:
        t.error(mpath, "spec.model needs a uri (hf://ORG/NAME) or a name (the Hugging Face model id)")
    # KServe's template serves spec.model.name (defaulted to metadata.name, llm_inference_service_defaults.go)
    # and publishers/<namespace>/models/<name> (config-llm-template.yaml --served-model-name)
    name_src = (*mpath, "name") if served else ("metadata", "name")
    if served:
        t.use((*mpath, "name"))
    served_name = str(served or name or "")
    if served_name:
        namespace = str(meta.get("namespace") or "default")
        alias = f"publishers/{namespace}/models/{served_name}"
        extra[:0] = [("--served-model-name", name_src), (served_name, name_src), (alias, name_src)]
    adapters, limits = _lora(t, model, mpath, fields, served_name, str(meta.get("namespace") or "default"), api)
    annotation = (meta.get("annotations") or {}).get(INSTANCE_ANNOTATION)
    if annotation is not None:
        t.use(("metadata", "annotations", INSTANCE_ANNOTATION))

    prefill_value, prefill_path = fields.get("prefill", (None, ("spec", "prefill")))
    roles: list[tuple[str, dict[str, tuple[Any, Path]], Path]] = [("main", fields, ("spec",))]
    if prefill_value is not None:
        pf = mapping(t, prefill_path, prefill_value)
        roles.append(("prefill", {k: (v, (*prefill_path, k)) for k, v in pf.items()}, prefill_path))
        if not pf:
            t.use(prefill_path)
        t.warn(
            prefill_path,
            f"prefill/decode: kvgen renders the prefill workload as {name}{PREFILL_SUFFIX} (role prefill) "
            "and the main one as role decode, each with its own Deployment and Service and its own kvCacheOffloading, "
            "as KServe keeps them; KServe passes only the OffloadingConnector (NIXL is yours to configure), kvgen adds "
            "NixlConnector before it in a MultiConnector so that the prefill/decode hand-off works; with a managed "
            "route and scheduler (spec.router) the decode server's picker routes between them",
            covers=False,
        )

    workloads: list[_Workload] = []
    for role, wfields, base in roles:
        b = SpecBuilder(t)
        if name:
            b.set(("name",), f"{name}{PREFILL_SUFFIX}" if role == "prefill" else name, ("metadata", "name"))
        for native, value, src in shared:
            b.set(native, value, src)
        for arg, src in extra:
            b.append(("vllm", "extraArgs"), arg, src)
        w = _Workload(t, b, wfields, base)
        w.read()
        # KServe attaches the adapters to the prefill pods too (workload_single_node.go:275)
        lora.apply(t, b, adapters, limits, (*mpath, "lora"), (*mpath, "lora", "adapters"), "KServe", LORA_ROOT)
        if prefill_value is not None:
            b.set(("disaggregation", "role"), "prefill" if role == "prefill" else "decode", base, use=False)
        workloads.append(w)

    # the instance: the pod's nodeSelector, else the annotation, else --instance, else none (as in KServe)
    main_selector = workloads[0].selector_instance
    unknown = False
    for w, (_role, _f, base) in zip(workloads, roles, strict=True):
        chosen = w.selector_instance or main_selector
        if chosen and annotation is not None and chosen[0] != annotation:
            t.error(
                chosen[1], f"instance type {chosen[0]} differs from the {INSTANCE_ANNOTATION} annotation ({annotation})"
            )
        if chosen:
            w.b.set(("instance", "type"), chosen[0], chosen[1])
        elif annotation is not None:
            w.b.set(("instance", "type"), str(annotation), ("metadata", "annotations", INSTANCE_ANNOTATION))
        elif instance_option:
            w.b.set(("instance", "type"), instance_option, ("metadata",), use=False)
            w.b.note(f"instance.type {instance_option} from --instance")
        else:
            _unknown_node(w, base)
            unknown = True
        if w.mig:
            w.b.set(("instance", "mig"), w.mig, w.gpu_path)
        kv, kv_path = w.field("kvCacheOffloading")
        if unknown and not w.gpus:  # no silent fallback: KServe's GPU image becomes vLLM's CPU build
            t.warn(
                (*base, "template"),
                f"the main container asks for no {GPU_RESOURCE}: kvgen renders a CPU pod, vLLM's CPU build "
                "(images.vllmCpu) in place of the GPU image, with KV-cache offloading off (rule cpu-instance)",
                f"ask for the GPUs in the main container's resources.limits ({GPU_RESOURCE}: N), or name the node with "
                f"--instance TYPE or the annotation {INSTANCE_ANNOTATION}: TYPE",
                covers=False,
            )
        if kv is not None and (w.mig or (unknown and not w.gpus)):
            rule = "mig-partition" if w.mig else "cpu-instance"
            t.warn(
                w.gpu_path or kv_path,
                f"KServe would pass its OffloadingConnector on this {'MIG slice' if w.mig else 'CPU pod'} "
                f"too; kvgen turns offloading off (rule {rule})",
                covers=False,
            )
        if w.gpus == 0 and not unknown:
            assert w.gpu_path is not None, "set with w.gpus"
            t.error(
                w.gpu_path,
                f"{GPU_RESOURCE}: 0: kvgen takes the GPUs from the instance type",
                "remove it, and pick a CPU instance type for a CPU-only server",
            )
    if unknown:
        t.warn(
            ("metadata",),
            "node fit not checked: KServe names no node, so kvgen renders the GPUs the main container asks "
            "for and cannot check that the pod fits its node",
            f"give one with --instance TYPE, the annotation {INSTANCE_ANNOTATION}: TYPE, or spec.template.nodeSelector "
            f"{INSTANCE_LABELS[0]}: TYPE",
            covers=False,
        )
    # KServe's controller's object names for the main workload's objects (routing.naming kserve)
    kserve_router.naming(t, workloads[0].b, str(name or ""))
    if "router" in fields:
        router, rpath = fields["router"]
        namespace = str(meta.get("namespace") or "default")
        paired = kserve_router.convert(
            t,
            workloads[0].b,
            router,
            rpath,
            str(name or ""),
            namespace,
            prefill_value is not None,
            model_name=str(served) if served and served != name else None,
            namespace_given=bool(meta.get("namespace")),
            v1alpha1=str(api).endswith("/v1alpha1"),
        )
        if paired and len(workloads) > 1:
            # the prefill pods join the decode server's pool (its picker's prefill profile picks them)
            workloads[1].b.set(("disaggregation", "decodeServer"), str(name or ""), prefill_path, use=False)
    t.use(("metadata", "name"))
    t.use(("metadata", "namespace"))
    t.report_unused(REASONS)
    t.raise_errors()
    return [w.b.result("kserve", t.warnings if i == 0 else []) for i, w in enumerate(workloads)]


__all__ = ["convert", "GROUP", "VERSIONS", "KIND", "INSTANCE_ANNOTATION"]
