"""KServe input: a ``serving.kserve.io`` LLMInferenceService (v1alpha1 or v1alpha2) with
``kvCacheOffloading``, translated into native specs with KServe's behaviour.

- Offloading is KServe's shape: the ``native`` backend (vLLM's OffloadingConnector) with
  ``cpu``, ``evictionPolicy`` and ``secondary`` tiers as written. Without ``kvCacheOffloading``
  KServe does not offload, so neither does the native spec (``enabled: false``).
- ``kvCacheOffloading`` is read under ``spec`` (where the CRD has it), under ``spec.prefill``,
  and under ``spec.workload`` (where the KServe guide shows it; the CRD has no such field, so
  KServe would reject or prune it: kvgen reads it and warns).
- ``spec.model.uri`` ``hf://ORG/NAME[:REVISION]`` (or ``spec.model.name``) is ``model.id``; a
  served name different from the id becomes ``--served-model-name``.
- The ``main`` container's resources become ``resources.vllm``; its ``nvidia.com/gpu`` count is
  checked against ``spec.parallelism`` (and, when that is absent, becomes the tensor-parallel
  size). Its ``args`` and ``VLLM_ADDITIONAL_ARGS`` are vLLM arguments; other env passes through.
- KServe has no instance type. kvgen takes it from the pod template's nodeSelector
  ``node.kubernetes.io/instance-type``, else from the annotation ``kvgen.dev/instance-type``,
  else from the ``--instance`` command-line option.
- With ``spec.prefill`` there are two native specs: the main workload as role ``decode`` and
  ``NAME-prefill`` as role ``prefill``. kvgen's ``prefill-decode-disaggregation`` rule turns
  offloading off for both (NIXL carries the KV between them), and the inference scheduler that
  routes between them (``spec.router``) is not rendered.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from kvgen.dialects import shape, vllm_args
from kvgen.dialects.core import Converted, SpecBuilder, Tracker, integer, mapping
from kvgen.errors import Path
from kvgen.source import SourceDoc

GROUP = "serving.kserve.io"
VERSIONS = ("serving.kserve.io/v1alpha1", "serving.kserve.io/v1alpha2")
KIND = "LLMInferenceService"
INSTANCE_ANNOTATION = "kvgen.dev/instance-type"
INSTANCE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
GPU_RESOURCE = "nvidia.com/gpu"
SHM_PATH = "/dev/shm"
PREFILL_SUFFIX = "-prefill"


def _reasons() -> dict[str, str]:
    reasons = {
        "metadata.labels": "labels of the input resource are not copied to the rendered objects",
        "metadata.annotations": "annotations of the input resource are not copied to the rendered objects",
        "spec.router": "kvgen renders a ClusterIP Service; the Gateway, HTTPRoute and inference scheduler "
                       "(llm-d) that spec.router asks for are not rendered",
        "spec.router.*": "kvgen renders a ClusterIP Service; the Gateway, HTTPRoute and inference scheduler "
                         "(llm-d) that spec.router asks for are not rendered",
        "spec.baseRefs": "kvgen does not read LLMInferenceServiceConfig objects; whatever they set is not applied",
        "spec.storageInitializer": "vLLM downloads the model from Hugging Face itself, into the model cache",
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


def _image(t: Tracker, b: SpecBuilder, ref: Any, path: Path) -> None:
    """'repo:tag', 'repo@sha256:...', 'repo:tag@sha256:...' -> images.vllm."""
    if not isinstance(ref, str) or not ref:
        t.error(path, "must be an image reference such as vllm/vllm-openai:v0.33.0")
        return
    name, _, digest = ref.partition("@")
    last = name.rsplit("/", 1)[-1]
    repo, tag = (name.rsplit(":", 1) if ":" in last else (name, None))
    if digest and not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
        t.error(path, f"{digest!r} is not a sha256 digest")
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
                self.t.error(cpath, f"container {c.get('name')!r}: kvgen renders only the vLLM container ('main') "
                             "and its own LMCache sidecar; other containers are not carried over",
                             "remove it, or run it next to the rendered objects")
        if tmpl.get("initContainers"):
            self.t.error((*path, "initContainers"), "init containers are not carried over; kvgen renders its own pod",
                         "remove them")
        selector = mapping(self.t, (*path, "nodeSelector"), tmpl.get("nodeSelector"))
        for key, value in selector.items():
            if key in INSTANCE_LABELS:
                self.selector_instance = (str(value), (*path, "nodeSelector", key))
                self.t.use((*path, "nodeSelector", key))
            else:
                self.b.set(("scheduling", "nodeSelector", key), str(value), (*path, "nodeSelector", key))
        if selector:
            self.t.use((*path, "nodeSelector"))
        if tmpl.get("tolerations"):
            self.b.set(("scheduling", "tolerations"), tmpl["tolerations"], (*path, "tolerations"), subtree=True)
        if tmpl.get("affinity"):
            self.b.set(("scheduling", "affinity"), tmpl["affinity"], (*path, "affinity"), subtree=True)
        if tmpl.get("priorityClassName"):
            self.b.set(("scheduling", "priorityClassName"), tmpl["priorityClassName"], (*path, "priorityClassName"))
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
            t.error((*path, "command"), "a command replaces KServe's launch script (and with it the offloading flags); "
                    "kvgen starts vLLM itself", "remove it; put vLLM flags in args")
        args = c.get("args")
        if args:
            if not isinstance(args, list):
                t.error((*path, "args"), "must be a list of strings")
            else:
                vllm_args.apply(vllm_args.split([str(a) for a in args]), t, b, lambda i: ((*path, "args", i), None, None))
                t.use((*path, "args"))
        for j, env in enumerate(c.get("env") or []):
            self.env(env, (*path, "env", j))
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
                t.error(mpath, "kvgen mounts only its own volumes (model cache, /dev/shm, KV-cache tiers) into vLLM",
                        "use kvCacheOffloading.secondary for cache disks; remove other mounts")

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
                b.set(("model", "hfTokenSecret"), {"name": ref["name"], "key": ref["key"]}, path)
            else:
                t.error(path, "HF_TOKEN must come from a Secret (valueFrom.secretKeyRef); kvgen never takes a token literally",
                        "kubectl create secret generic hf-token --from-literal=HF_TOKEN=...")
            return
        entry = {k: env[k] for k in ("name", "value", "valueFrom") if k in env}
        if "value" in entry and not isinstance(entry["value"], str):
            entry["value"] = str(entry["value"])
        b.append(("vllm", "env"), entry, path)

    def resources(self, resources: dict[str, Any], path: Path) -> None:
        t, b = self.t, self.b
        gpu: dict[str, tuple[int | None, Path]] = {}
        for kind in ("requests", "limits"):
            values = mapping(t, (*path, kind), resources.get(kind))
            for rname, value in values.items():
                rpath = (*path, kind, rname)
                if rname in ("cpu", "memory", "ephemeral-storage"):
                    b.set(("resources", "vllm", kind, rname), value, rpath)
                elif rname == GPU_RESOURCE:
                    gpu[kind] = (integer(t, rpath, value), rpath)
                    t.use(rpath)
                else:
                    t.warn(rpath, "not honoured: kvgen requests only CPU, memory, ephemeral storage and nvidia.com/gpu")
        if len({v for v, _ in gpu.values()}) > 1:
            t.error(gpu["limits"][1], f"{GPU_RESOURCE} requests and limits must be equal")
        elif gpu:
            self.gpus, self.gpu_path = gpu.get("limits", gpu.get("requests"))

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
            t.error(path, "multi-node workloads (LeaderWorkerSet) are not converted",
                    "write a native spec with parallelism.nodes")
        self.template()
        self.parallelism()
        kv, path = self.field("kvCacheOffloading")
        if kv is None:
            b.set(("kvCacheOffloading", "enabled"), False)
            b.note("kvCacheOffloading.enabled false: KServe offloads only when kvCacheOffloading is set")
        else:
            kv = mapping(t, path, kv)
            b.set(("kvCacheOffloading",), {"backend": "native", **kv}, path, subtree=True)

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
                t.warn((*path, "dataLocal"), "not honoured: ranks per node only matter for multi-node data parallel "
                       "(spec.worker), which kvgen does not convert")
            else:
                t.use((*path, "dataLocal"))
        if self.gpus is None:
            return
        total = 1
        for key in ("tensor", "pipeline", "data"):
            total *= b.get(("parallelism", key), 1) or 1
        if given or b.get(("parallelism",)):
            if self.gpus != total:
                t.error(self.gpu_path, f"requests {self.gpus} GPU(s) but the parallel sizes use {total} "
                        "(tensor x pipeline x data)", "make them agree")
        elif self.gpus > 1:
            b.set(("parallelism", "tensor"), self.gpus, self.gpu_path)
            t.warn(self.gpu_path, f"{self.gpus} GPUs without spec.parallelism: KServe starts vLLM without "
                   "--tensor-parallel-size, so vLLM would use one of them; kvgen sets parallelism.tensor "
                   f"{self.gpus} to use all", "set spec.parallelism.tensor to say so", covers=False)
        elif self.gpus == 0:
            t.error(self.gpu_path, f"{GPU_RESOURCE}: 0: kvgen takes the GPUs from the instance type",
                    "remove it, and pick a CPU instance type for a CPU-only server")


def _fields(t: Tracker, spec: dict[str, Any]) -> dict[str, tuple[Any, Path]]:
    fields = {k: (v, ("spec", k)) for k, v in spec.items() if k != "workload"}
    if "workload" in spec:
        workload = mapping(t, ("spec", "workload"), spec["workload"])
        t.warn(("spec", "workload"), "the LLMInferenceService API has no spec.workload (the KServe guide shows it, but the "
               "CRD inlines the workload into spec): KServe would reject or prune it; kvgen reads its fields as if "
               "they were under spec", "move its fields up to spec (spec.kvCacheOffloading)", covers=False)
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
        t.error(("apiVersion",) if api not in VERSIONS else ("kind",),
                f"kvgen reads {KIND} ({', '.join(VERSIONS)}), not {api} {kind}",
                "write a native spec for other KServe resources")
        t.raise_errors()
    shape.check(doc, shape.KSERVE)
    meta = mapping(t, ("metadata",), data.get("metadata"))
    spec = mapping(t, ("spec",), data.get("spec"))
    fields = _fields(t, spec)

    if api.endswith("/v1alpha1") and "kvCacheOffloading" in fields:
        t.warn(fields["kvCacheOffloading"][1], "serving.kserve.io/v1alpha1 has no kvCacheOffloading (the field is "
               "v1alpha2 only): KServe would drop it and not offload; kvgen honours it",
               "use apiVersion serving.kserve.io/v1alpha2", covers=False)

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
    if uri:
        m = re.fullmatch(r"hf://([^/:\s]+/[^/:\s]+)(?::([^\s]+))?", str(uri))
        if not m:
            t.error((*mpath, "uri"), f"{uri!r}: kvgen serves Hugging Face models (hf://ORG/NAME); other storage is not supported",
                    "use an hf:// uri, or write a native spec")
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
    if served:
        t.use((*mpath, "name"))
        if model_id and str(served) != model_id:
            extra.insert(0, (f"--served-model-name={served}", (*mpath, "name")))
    if model.get("lora"):
        t.error((*mpath, "lora"), "LoRA adapters are not supported by kvgen", "remove them, or serve a merged model")
    annotation = (meta.get("annotations") or {}).get(INSTANCE_ANNOTATION)
    if annotation is not None:
        t.use(("metadata", "annotations", INSTANCE_ANNOTATION))

    prefill_value, prefill_path = fields.get("prefill", (None, ("spec", "prefill")))
    roles = [("main", fields, ("spec",))]
    if prefill_value is not None:
        pf = mapping(t, prefill_path, prefill_value)
        roles.append(("prefill", {k: (v, (*prefill_path, k)) for k, v in pf.items()}, prefill_path))
        if not pf:
            t.use(prefill_path)
        t.warn(prefill_path, f"prefill/decode: kvgen renders the prefill workload as {name}{PREFILL_SUFFIX} (role prefill) "
               "and the main one as role decode, each with its own Deployment and Service; it turns offloading off for "
               "both (NIXL carries the KV between them: rule prefill-decode-disaggregation) and does not render the "
               "inference scheduler that routes between them (spec.router)", covers=False)

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
        if prefill_value is not None:
            b.set(("disaggregation", "role"), "prefill" if role == "prefill" else "decode", base, use=False)
        workloads.append(w)

    # the instance: the pod's nodeSelector, else the annotation, else --instance
    main_selector = workloads[0].selector_instance
    for w, (role, _f, base) in zip(workloads, roles):
        chosen = w.selector_instance or main_selector
        if chosen and annotation is not None and chosen[0] != annotation:
            t.error(chosen[1], f"instance type {chosen[0]} differs from the {INSTANCE_ANNOTATION} annotation ({annotation})")
        if chosen:
            w.b.set(("instance", "type"), chosen[0], chosen[1])
        elif annotation is not None:
            w.b.set(("instance", "type"), str(annotation), ("metadata", "annotations", INSTANCE_ANNOTATION))
        elif instance_option:
            w.b.set(("instance", "type"), instance_option, ("metadata",), use=False)
            w.b.note(f"instance.type {instance_option} from --instance")
        elif role == "main":
            t.error(("metadata",), "KServe has no instance type, and kvgen needs one to size the pod",
                    f"pass --instance TYPE, annotate the resource with {INSTANCE_ANNOTATION}: TYPE, or pin the pods with "
                    f"spec.template.nodeSelector {INSTANCE_LABELS[0]}: TYPE")
    t.use(("metadata", "name"))
    t.use(("metadata", "namespace"))
    t.report_unused(REASONS)
    t.raise_errors()
    return [w.b.result("kserve", t.warnings if i == 0 else []) for i, w in enumerate(workloads)]


__all__ = ["convert", "GROUP", "VERSIONS", "KIND", "INSTANCE_ANNOTATION"]
