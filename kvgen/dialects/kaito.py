"""KAITO input: a ``kaito.sh/v1beta1`` InferenceSet or Workspace, and the ConfigMap its
``inference.config`` names, translated into a native spec with KAITO's behaviour.

What KAITO does, and so what the native spec says:

- ``preset.name`` is the model (``model.id``); a short KAITO preset name such as
  ``llama-3.1-8b-instruct`` is matched to the catalog's Hugging Face id.
- ``resource.instanceType`` is the instance. KAITO uses every GPU of the node: tensor parallel
  across them, or data parallel when the model fits twice into one GPU (which turns offloading
  off, as in KAITO); a Workspace's ``resource.count`` > 1 is pipeline parallel across nodes
  (offloading off as well).
- Offloading is KAITO's shape: the ``lmcache`` backend with ``kv_cache_cpu_memory_utilization``
  from the ConfigMap's ``inference_config.yaml`` (0.5 when absent; 0 disables). The ``vllm:``
  section of that file becomes vLLM arguments.
- ``resource.labelSelector``: KAITO's node provisioner puts these labels on the nodes it
  creates, so with an ``instanceType`` kvgen pins pods by instance type and does not require the
  labels (no node would carry them without KAITO). Without an ``instanceType`` (your own nodes),
  the labels are required with a nodeSelector / node affinity, as in KAITO.
"""

from __future__ import annotations

from typing import Any

from kvgen import catalog, quantity
from kvgen.dialects import shape, vllm_args
from kvgen.dialects.core import Converted, SpecBuilder, Tracker, embedded_location, integer, mapping
from kvgen.errors import Path, Problem, SpecError
from kvgen.source import SourceDoc, load_documents

GROUP = "kaito.sh"
VERSION = "kaito.sh/v1beta1"
KINDS = ("InferenceSet", "Workspace")
CONFIG_KEY = "inference_config.yaml"
UTILIZATION_KEY = "kv_cache_cpu_memory_utilization"
DEFAULT_UTILIZATION = 0.5  # KAITO's default when the key (or the ConfigMap) is absent
HF_TOKEN_KEY = "HF_TOKEN"  # the key KAITO reads from presetOptions.modelAccessSecret
KAITO_SYSTEM_DISK_GIB = 80  # KAITO generator.go SystemFileDiskSizeGiB: DiskStorageRequirement = modelFileSize + 80

REASONS = {
    "metadata.labels": "labels of the input resource are not copied to the rendered objects",
    "metadata.annotations": "annotations of the input resource are not copied to the rendered objects",
    "spec.nodeCountLimit": "kvgen provisions no nodes, so there is no node count to limit",
    "spec.updateStrategy": "kvgen renders a Deployment with Kubernetes' default rolling update",
    "spec.autoUpgrade": "image upgrades follow the pins in the native spec (images), not KAITO's controller",
    "spec.template.metadata": "metadata for the Workspaces an InferenceSet creates is not copied",
    "resource.preferredNodes": "kvgen does not pin pods to node names",
    "status": "status is written by the KAITO controller",
    "status.*": "status is written by the KAITO controller",
}


def _short_name(name: str) -> str | None:
    """A KAITO preset name without an organisation ('llama-3.1-8b-instruct') -> the catalog id
    whose name part matches it, case-insensitively, if exactly one does."""
    matches = [mid for mid in catalog.models() if mid.split("/", 1)[-1].lower() == name.lower()]
    return matches[0] if len(matches) == 1 else None


def _kaito_parallelism(b: SpecBuilder, model_id: str, instance_type: str | None, nodes: int, src: Path) -> None:
    """KAITO's configureParallelism: every GPU of the node is used."""
    row = catalog.instances().get(instance_type or "")
    model = catalog.models().get(model_id)
    if row is None or not row.get("gpus"):
        return
    gpus = int(row["gpus"])
    if nodes > 1:
        b.set(("parallelism", "tensor"), gpus, src, use=False)
        b.set(("parallelism", "pipeline"), nodes, src, use=False)
        b.set(("parallelism", "nodes"), nodes, src, use=False)
        b.note(f"parallelism: KAITO runs {nodes} nodes as pipeline parallel ({nodes}) x tensor parallel ({gpus})")
        return
    if gpus <= 1:
        return
    if model is not None and quantity.to_bytes(model["weights"]) * 2 < quantity.to_bytes(row["gpuMemory"]):
        b.set(("parallelism", "data"), gpus, src, use=False)
        b.note(f"parallelism: data {gpus} - KAITO runs one replica per GPU when the model fits twice into one GPU "
               "(this turns offloading off, as in KAITO)")
    else:
        b.set(("parallelism", "tensor"), gpus, src, use=False)
        b.note(f"parallelism: tensor {gpus} - KAITO splits the model over every GPU of the node")


def _label_selector(t: Tracker, b: SpecBuilder, selector: Any, path: Path, byo: bool) -> None:
    if selector is None:
        return
    if not byo:
        t.warn(path, "not required on nodes: KAITO's node provisioner puts these labels on the nodes it creates; "
               "kvgen pins the pods with node.kubernetes.io/instance-type instead",
               "to require them (your own labelled nodes), add scheduling.nodeSelector to the native spec (kvgen convert)")
        return
    selector = mapping(t, path, selector)
    labels = mapping(t, (*path, "matchLabels"), selector.get("matchLabels"))
    for key, value in labels.items():
        b.set(("scheduling", "nodeSelector", str(key)), str(value), (*path, "matchLabels", key))
    t.use((*path, "matchLabels"))
    expressions = selector.get("matchExpressions")
    if expressions:
        b.set(("scheduling", "affinity"),
              {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                  {"matchExpressions": expressions}]}}},
              (*path, "matchExpressions"))


class ConfigMaps:
    """The ConfigMaps of every input, by (namespace, name); each remembers whether it was used."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, str], SourceDoc] = {}
        self.used: set[tuple[str, str]] = set()
        self.problems: list[Problem] = []

    def add(self, doc: SourceDoc) -> None:
        found = shape.problems(doc, shape.CONFIGMAP)
        if found:
            self.problems += found
            return
        meta = doc.data.get("metadata") or {}
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        if key in self.docs:
            first = self.docs[key].locate(("metadata", "name"))
            self.problems.append(Problem(("metadata", "name"), f"ConfigMap {key[0]}/{key[1]} is defined twice (first at {first})",
                                         None, doc.locate(("metadata", "name"))))
            return
        self.docs[key] = doc

    def get(self, namespace: str, name: str) -> SourceDoc | None:
        key = (namespace, name)
        if key in self.docs:
            self.used.add(key)
        return self.docs.get(key)

    def unused(self) -> list[SourceDoc]:
        return [doc for key, doc in self.docs.items() if key not in self.used]


def _inference_config(t: Tracker, b: SpecBuilder, cm: SourceDoc) -> float | None:
    """Read the ConfigMap's inference_config.yaml into the builder; return the utilization
    it sets (None when absent)."""
    data = mapping(t, ("data",), cm.data.get("data"), doc=cm)
    t.use(("apiVersion",), cm)
    t.use(("kind",), cm)
    t.use(("metadata", "name"), cm)
    t.use(("metadata", "namespace"), cm)
    key_path = ("data", CONFIG_KEY)
    if CONFIG_KEY not in data:
        t.warn(("data",), f"has no {CONFIG_KEY}; KAITO then uses its defaults (utilization {DEFAULT_UTILIZATION})", doc=cm)
        t.report_unused(REASONS, doc=cm)
        return None
    text = data[CONFIG_KEY]
    t.use(key_path, cm)
    if not isinstance(text, str):
        t.error(key_path, "must be a string holding YAML", doc=cm)
        return None
    try:
        inner_docs = load_documents(text, cm.file)
    except SpecError as exc:
        t.error(key_path, f"is not valid YAML: {exc.problems[0].message}", doc=cm)
        return None
    if not inner_docs:
        t.report_unused(REASONS, doc=cm)
        return None
    inner = inner_docs[0]
    if len(inner_docs) > 1 or not isinstance(inner.data, dict):
        t.error(key_path, "must hold one YAML mapping", doc=cm)
        return None

    def loc(path: Path):
        return embedded_location(cm, key_path, inner, path)

    src = lambda *p: (*key_path, *p)  # noqa: E731 - a path inside the embedded file, as shown to users
    utilization = None
    for key, value in inner.data.items():
        if key == UTILIZATION_KEY:
            utilization = value
            b.set(("kvCacheOffloading", "cpuMemoryUtilization"), value, src(key), doc=cm, location=loc((key,)))
        elif key == "vllm":
            section = value if isinstance(value, dict) else None
            if section is None:
                t.error(src(key), "must be a mapping of vLLM arguments", doc=cm, location=loc((key,)))
                continue
            t.use(src(key), cm)
            for arg, arg_value in section.items():
                where = lambda _i, arg=arg: (src(key, arg), cm, loc((key, arg)))  # noqa: E731
                vllm_args.apply(
                    vllm_args.split(vllm_args.tokens_from_mapping(str(arg), arg_value)), t, b, where,
                    parallel_note="KAITO sets the parallel sizes from the instance on the command line, "
                    "which wins over this file",
                )
        else:
            t.warn(src(key), "not honoured: a KAITO runtime setting kvgen has no equivalent for", doc=cm, location=loc((key,)))
    t.report_unused(REASONS, doc=cm)
    return utilization


def convert(doc: SourceDoc, configmaps: ConfigMaps, instance_option: str | None = None) -> list[Converted]:
    data = doc.data
    t = Tracker(doc)
    b = SpecBuilder(t)
    api, kind = data.get("apiVersion"), data.get("kind")
    t.use(("apiVersion",))
    t.use(("kind",))
    if api != VERSION or kind not in KINDS:
        t.error(("apiVersion",) if api != VERSION else ("kind",),
                f"kvgen reads {VERSION} InferenceSet and Workspace, not {api} {kind}",
                "convert the resource to kaito.sh/v1beta1, or write a native spec")
        t.raise_errors()
    shape.check(doc, shape.KAITO[kind])

    meta = mapping(t, ("metadata",), data.get("metadata"))
    if not meta.get("name"):
        t.error(("metadata",), "metadata.name is required")
    else:
        b.set(("name",), meta["name"], ("metadata", "name"))
    namespace = str(meta.get("namespace") or "default")
    if meta.get("namespace"):
        b.set(("namespace",), meta["namespace"], ("metadata", "namespace"))
    runtime = (meta.get("annotations") or {}).get("kaito.sh/runtime")
    if runtime is not None:
        if runtime != "vllm":
            t.error(("metadata", "annotations", "kaito.sh/runtime"), f"kvgen runs vLLM, not {runtime!r}",
                    "remove the annotation (vLLM is KAITO's default runtime)")
        else:
            t.use(("metadata", "annotations", "kaito.sh/runtime"))

    nodes = 1
    if kind == "InferenceSet":
        spec = mapping(t, ("spec",), data.get("spec"))
        base: Path = ("spec", "template")
        template = mapping(t, base, spec.get("template"))
        resource = mapping(t, (*base, "resource"), template.get("resource"))
        inference = mapping(t, (*base, "inference"), template.get("inference"))
        res_path, inf_path = (*base, "resource"), (*base, "inference")
        if "replicas" in spec:
            replicas = integer(t, ("spec", "replicas"), spec["replicas"])
            if replicas is not None:
                b.set(("replicas",), replicas, ("spec", "replicas"))
        selector, selector_path = spec.get("labelSelector"), ("spec", "labelSelector")
        if "partition" in resource:
            t.error((*res_path, "partition"), "GPU partitions (MIG) are not converted",
                    "write a native spec with instance.mig set to the MIG profile (offloading is then off, as in KAITO)")
        if "cache" in template:
            t.error((*base, "cache"), "KAITO's distributed cache is not rendered by kvgen",
                    "remove it, or use kvCacheOffloading.secondary disk tiers in a native spec")
    else:
        resource = mapping(t, ("resource",), data.get("resource"))
        inference = mapping(t, ("inference",), data.get("inference"))
        res_path, inf_path = ("resource",), ("inference",)
        selector, selector_path = resource.get("labelSelector"), ("resource", "labelSelector")
        if data.get("tuning") is not None:
            t.error(("tuning",), "fine-tuning Workspaces are not inference; kvgen renders inference servers only")
        if "count" in resource:
            count = integer(t, (*res_path, "count"), resource["count"])
            t.use((*res_path, "count"))
            nodes = count or 1
        for key in ("preferredNodes",):
            if key in resource:
                t.warn((*res_path, key), f"not honoured: {REASONS['resource.preferredNodes']}")

    # instance
    instance_type = resource.get("instanceType")
    if instance_type:
        b.set(("instance", "type"), instance_type, (*res_path, "instanceType"))
    elif instance_option:
        b.set(("instance", "type"), instance_option, res_path or (), use=False)
        b.note(f"instance.type {instance_option} from --instance")
    else:
        t.error(res_path, "no resource.instanceType: kvgen needs the instance type to size the pod",
                "pass --instance TYPE (your own nodes), or set resource.instanceType")
    _label_selector(t, b, selector, selector_path, byo=not instance_type)

    # model
    if inference.get("template") is not None:
        t.error((*inf_path, "template"), "a custom pod template replaces KAITO's preset; kvgen cannot convert it",
                "use inference.preset, or write a native spec")
    if inference.get("adapters"):
        t.error((*inf_path, "adapters"), "LoRA adapters are not supported by kvgen", "remove them, or serve a merged model")
    preset = mapping(t, (*inf_path, "preset"), inference.get("preset"))
    model_id = None
    if not preset.get("name"):
        if inference.get("template") is None:
            t.error((*inf_path, "preset"), "inference.preset.name is required (the model to serve)")
    else:
        name = str(preset["name"])
        model_id = name if "/" in name else (_short_name(name) or name)
        b.set(("model", "id"), model_id, (*inf_path, "preset", "name"))
        if model_id != name:
            b.note(f"model.id {model_id} for KAITO preset {name}")
    access = preset.get("accessMode")
    if access is not None:
        if access == "private":
            t.error((*inf_path, "preset", "accessMode"), "private preset images are not supported; kvgen downloads the model from Hugging Face",
                    "use a Hugging Face model id (with presetOptions.modelAccessSecret for gated models)")
        else:
            t.use((*inf_path, "preset", "accessMode"))
    options = mapping(t, (*inf_path, "preset", "presetOptions"), preset.get("presetOptions"))
    opt_path = (*inf_path, "preset", "presetOptions")
    if options.get("modelAccessSecret"):
        b.set(("model", "hfTokenSecret"), {"name": options["modelAccessSecret"], "key": HF_TOKEN_KEY},
              (*opt_path, "modelAccessSecret"))
        b.note(f"model.hfTokenSecret: key {HF_TOKEN_KEY} of Secret {options['modelAccessSecret']} (KAITO's key)")
    for key in ("image", "imagePullSecrets", "modelWeightsPVC", "modelWeightsSubPath"):
        if options.get(key):
            t.error((*opt_path, key), "model images and weight volumes are not supported; kvgen downloads the model from Hugging Face",
                    "remove it")
    if model_id:
        _kaito_parallelism(b, model_id, instance_type or instance_option, nodes, res_path)
    if instance_type:
        # KAITO provisions the node, with an OS disk of the preset's DiskStorageRequirement
        # (modelFileSize + 80 GiB; 1024Gi without a preset): nodeOSDiskSize of its NodeClaim.
        row = catalog.models().get(model_id or "")
        disk = f"{-(-quantity.to_bytes(row['weights']) // quantity.GiB) + KAITO_SYSTEM_DISK_GIB}Gi" if row else "1024Gi"
        b.set(("instance", "ephemeralStorage"), disk, (*res_path, "instanceType"), use=False)
        b.note(f"instance.ephemeralStorage {disk}: the OS disk KAITO gives the node it provisions (weights + {KAITO_SYSTEM_DISK_GIB}Gi)")

    # offloading: KAITO's shape, sized by the ConfigMap
    b.set(("kvCacheOffloading", "backend"), "lmcache", None)
    utilization = None
    config = inference.get("config")
    if config:
        t.use((*inf_path, "config"))
        cm = configmaps.get(namespace, str(config))
        if cm is None:
            t.error((*inf_path, "config"), f"ConfigMap {namespace}/{config} is not among the inputs; its "
                    f"{UTILIZATION_KEY} decides whether and how much kvgen offloads",
                    "pass the file that holds the ConfigMap as another input (or in the same file)")
        else:
            utilization = _inference_config(t, b, cm)
    if utilization is None:
        b.set(("kvCacheOffloading", "cpuMemoryUtilization"), DEFAULT_UTILIZATION, (*inf_path,) if not config else (*inf_path, "config"), use=False)
        b.note(f"kvCacheOffloading.cpuMemoryUtilization {DEFAULT_UTILIZATION}: KAITO's default "
               f"({UTILIZATION_KEY} is not set)")

    t.report_unused(REASONS)
    t.raise_errors()
    return [b.result("kaito", t.warnings)]


__all__ = ["ConfigMaps", "convert", "GROUP", "VERSION", "KINDS"]
