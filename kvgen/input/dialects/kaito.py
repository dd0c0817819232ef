"""KAITO input: a ``kaito.sh/v1beta1`` InferenceSet or Workspace, and the ConfigMap its
``inference.config`` names, translated into a native spec with KAITO's behaviour.

What KAITO does, and so what the native spec says:

- ``preset.name`` is the model (``model.id``); a short name is one of KAITO's legacy names
  (``llama-3.1-8b-instruct``), else not registered. vLLM serves it under KAITO's name: an
  InferenceSet's own name, a Workspace's lower-cased last part of the model id
  (``kaito_names``).
- ``resource.instanceType`` is the instance. KAITO's node estimator picks the node count from
  the model and the GPUs (``resource.count`` is only its starting point); then every GPU of the
  node is used: tensor parallel across them, or data parallel when the model fits twice into
  one GPU, and pipeline parallel across nodes (both turn offloading off, as in KAITO). The
  ``--gpu-memory-utilization`` is KAITO's for the SKU's GPU model (``kaito_sizing``).
- ``resource.partition`` (mode ``mig``) runs the server on one MIG slice (``instance.mig``,
  offloading off); mode ``accelerator`` on ``count`` GPUs of your own node.
- The label ``kaito.sh/inference-role`` (prefill or decode) is the prefill/decode role: NIXL,
  KAITO's role env, offloading off.
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

from kvgen.core import quantity
from kvgen.core.errors import Location, Path, Problem, SpecError, quoted, shown
from kvgen.data import catalog
from kvgen.input.dialects import kaito_names, kaito_sizing, lora, shape, vllm_args
from kvgen.input.dialects.core import Converted, SpecBuilder, Tracker, embedded_at, embedded_location, integer, mapping
from kvgen.input.dialects.kaito_sizing import KaitoError
from kvgen.input.source import SourceDoc, load_documents

GROUP = "kaito.sh"
VERSION = "kaito.sh/v1beta1"
KINDS = ("InferenceSet", "Workspace")
CONFIG_KEY = "inference_config.yaml"
UTILIZATION_KEY = "kv_cache_cpu_memory_utilization"
DEFAULT_UTILIZATION = 0.5  # KAITO's default when the key (or the ConfigMap) is absent
HF_TOKEN_KEY = "HF_TOKEN"  # the key KAITO reads from presetOptions.modelAccessSecret
MAX_ADAPTERS = 10  # api/v1beta1/workspace_validation.go:59 MaxAdaptersNumber
ADAPTER_ROOT = "/mnt/adapter"  # pkg/utils/common_preset.go:27 DefaultAdapterVolumePath
KAITO_SYSTEM_DISK_GIB = 80  # KAITO generator.go SystemFileDiskSizeGiB: DiskStorageRequirement = modelFileSize + 80

REASONS = {
    "metadata.labels": "labels of the input resource are not copied to the rendered objects",
    "metadata.labels.*": "labels of the input resource are not copied to the rendered objects",
    "spec.template.metadata.*": "metadata for the Workspaces an InferenceSet creates is not copied",
    "metadata.annotations": "annotations of the input resource are not copied to the rendered objects",
    "spec.nodeCountLimit": "kvgen provisions no nodes, so there is no node count to limit",
    "spec.updateStrategy": "kvgen renders a Deployment with Kubernetes' default rolling update",
    "spec.autoUpgrade": "image upgrades follow the pins in the native spec (images), not KAITO's controller",
    "spec.template.metadata": "metadata for the Workspaces an InferenceSet creates is not copied",
    "resource.preferredNodes": "kvgen does not pin pods to node names",
    "status": "status is written by the KAITO controller",
    "status.*": "status is written by the KAITO controller",
}


def _label_selector(t: Tracker, b: SpecBuilder, selector: Any, path: Path, byo: bool) -> None:
    if selector is None:
        return
    if not byo:
        t.warn(
            path,
            "not required on nodes: KAITO's node provisioner puts these labels on the nodes it creates; "
            "kvgen pins the pods with node.kubernetes.io/instance-type instead",
            "to require them (your own labelled nodes), add scheduling.nodeSelector to the native spec (kvgen convert)",
        )
        return
    selector = mapping(t, path, selector)
    labels = mapping(t, (*path, "matchLabels"), selector.get("matchLabels"))
    for key, value in labels.items():
        b.set(("scheduling", "nodeSelector", str(key)), str(value), (*path, "matchLabels", key))
    t.use((*path, "matchLabels"))
    expressions = selector.get("matchExpressions")
    if expressions:
        b.set(
            ("scheduling", "affinity"),
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": expressions}]
                    }
                }
            },
            (*path, "matchExpressions"),
        )


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
            self.problems.append(
                Problem(
                    ("metadata", "name"),
                    f"ConfigMap {key[0]}/{key[1]} is defined twice: here and at {first}",
                    "keep one copy: the KAITO resources of every input share one set of ConfigMaps "
                    "(leave a file out with --exclude GLOB)",
                    doc.locate(("metadata", "name")),
                )
            )
            return
        self.docs[key] = doc

    def get(self, namespace: str, name: str) -> SourceDoc | None:
        key = (namespace, name)
        if key in self.docs:
            self.used.add(key)
        return self.docs.get(key)

    def unused(self) -> list[SourceDoc]:
        return [doc for key, doc in self.docs.items() if key not in self.used]


def _inference_config(t: Tracker, b: SpecBuilder, cm: SourceDoc) -> tuple[float | None, str]:
    """Read the ConfigMap's inference_config.yaml into the builder; return the utilization
    it sets (None when absent) and the file's text (KAITO's estimator scans it)."""
    data = mapping(t, ("data",), cm.data.get("data"), doc=cm)
    t.use(("apiVersion",), cm)
    t.use(("kind",), cm)
    t.use(("metadata", "name"), cm)
    t.use(("metadata", "namespace"), cm)
    key_path = ("data", CONFIG_KEY)
    if CONFIG_KEY not in data:
        t.warn(
            ("data",), f"has no {CONFIG_KEY}; KAITO then uses its defaults (utilization {DEFAULT_UTILIZATION})", doc=cm
        )
        t.report_unused(REASONS, doc=cm)
        return None, ""
    text = data[CONFIG_KEY]
    t.use(key_path, cm)
    if not isinstance(text, str):
        t.error(key_path, "must be a string holding YAML", doc=cm)
        return None, ""
    try:
        inner_docs = load_documents(text, cm.file)
    except SpecError as exc:
        for problem in exc.problems:  # each where it is in the embedded file (a bad tag at its key)
            t.error(
                (*key_path, *problem.path),
                f"is not valid YAML: {problem.message}",
                doc=cm,
                location=embedded_at(cm, key_path, problem.location),
            )
        return None, text
    if not inner_docs:
        t.report_unused(REASONS, doc=cm)
        return None, text
    inner = inner_docs[0]
    if len(inner_docs) > 1 or not isinstance(inner.data, dict):
        t.error(key_path, "must hold one YAML mapping", doc=cm)
        return None, text

    def loc(path: Path) -> Location:
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
                where = lambda _i, key=key, arg=arg: (src(key, arg), cm, loc((key, arg)))  # noqa: E731
                vllm_args.apply(
                    vllm_args.split(vllm_args.tokens_from_mapping(str(arg), arg_value)),
                    t,
                    b,
                    where,
                    parallel_note="KAITO sets the parallel sizes from the instance on the command line, "
                    "which wins over this file",
                )
        else:
            t.warn(
                src(key),
                "not honoured: a KAITO runtime setting kvgen has no equivalent for",
                doc=cm,
                location=loc((key,)),
            )
    t.report_unused(REASONS, doc=cm)
    return utilization, text


Labels = dict[str, tuple[str, Path]]  # label -> (value, where it was written)


def _labels(t: Tracker, sources: list[tuple[Path, Any]]) -> Labels:
    """The labels KAITO's Workspace carries: an InferenceSet's template labels, then its own."""
    out: Labels = {}
    for path, labels in sources:
        for key, value in (labels if isinstance(labels, dict) else {}).items():
            out.setdefault(str(key), (str(value), (*path, key)))
    return out


def _partition(t: Tracker, resource: dict[str, Any], res_path: Path) -> tuple[str | None, int | None, Path]:
    """resource.partition as KAITO's webhook checks it (api/v1beta1/workspace_validation.go
    validatePartition L693-720): (MIG profile, accelerator count, its path)."""
    path = (*res_path, "partition")
    part = mapping(t, path, resource.get("partition"))
    if not part:
        return None, None, path
    t.use(path)
    mode = part.get("mode")
    if mode == "mig":
        if part.get("count") is not None:
            t.error((*path, "count"), "count is only valid for accelerator mode", "remove partition.count")
        try:
            kaito_sizing.check_mig_profile(str(part.get("profile") or ""))
        except KaitoError as exc:
            t.error((*path, "profile"), exc.message)
            return None, None, path
        return str(part["profile"]), None, path
    if mode == "accelerator":
        if part.get("profile"):
            t.error((*path, "profile"), "profile is not valid for accelerator mode")
        count = integer(t, (*path, "count"), part["count"]) if part.get("count") is not None else None
        if count is None:
            t.error(path, "missing field(s): partition.count")
        return None, count, path
    t.error((*path, "mode"), f'unsupported partition mode {shown(mode)}, supported modes are "mig" and "accelerator"')
    return None, None, path


def _role(t: Tracker, b: SpecBuilder, labels: Labels) -> None:
    """kaito.sh/inference-role (pkg/workspace/inference/preset_inferences.go applyInferenceRoleEnv):
    prefill or decode is the role, with KAITO's role env; anything else KAITO ignores."""
    names = kaito_sizing.data()
    key = names["labels"]["role"]
    if key not in labels:
        return
    role, path = labels[key]
    if role not in ("prefill", "decode"):
        t.warn(path, f"KAITO ignores the role {quoted(role)} (only prefill and decode have one)")
        return
    t.use(path)
    b.set(("disaggregation", "role"), role, path)
    b.append(("vllm", "env"), {"name": names["roleEnv"], "value": role}, path)
    b.note(
        f"disaggregation.role {role}: NixlConnector with kv_load_failure_policy fail and "
        f"VLLM_NIXL_SIDE_CHANNEL_HOST, as KAITO renders a {role} role (LMCache off)"
    )
    if role == "decode":
        t.warn(
            path,
            "a KAITO decode pod runs vLLM on port 5001 behind an llm-d routing sidecar on 5000; kvgen renders "
            "vLLM on service.port without the sidecar (route to it with your own scheduler)",
            covers=False,
        )


def _adapters(t: Tracker, b: SpecBuilder, inference: dict[str, Any], inf_path: Path) -> list[lora.Adapter]:
    """inference.adapters (api/v1beta1/workspace_types.go:145-180) as KAITO serves them with vLLM: each under
    its source.name, the directory it gets below /mnt/adapter, which KAITO's launcher lists into --lora-modules
    (presets/workspace/inference/vllm/inference_api.py:417-429, :551-553), with --enable-lora and vLLM's
    default limits (pkg/model/interface.go:448-450). A volume source is mounted at /mnt/adapter/NAME
    (pkg/workspace/inference/preset_inferences.go:928-953): a persistentVolumeClaim becomes pvc://CLAIM. An
    image is pulled into it by an init container (:914-926, pkg/workspace/manifests/manifests.go:241-275):
    kvgen has no such source."""
    path = (*inf_path, "adapters")
    items = inference.get("adapters") or []
    if not items:
        if "adapters" in inference:
            t.use(path)
        return []
    if len(items) > MAX_ADAPTERS:  # workspace_validation.go:876-878
        t.error(path, f"Number of Adapters exceeds the maximum limit, maximum of {MAX_ADAPTERS} allowed")
    seen: set[str] = set()
    out = []
    for i, item in enumerate(items):
        apath = (*path, i)
        item = mapping(t, apath, item)
        if item.get("source") is None:  # workspace_validation.go:248-250
            t.error(apath, "missing field(s): Source")
            continue
        spath = (*apath, "source")
        source = mapping(t, spath, item["source"])
        name = source.get("name")
        if not name:  # workspace_validation.go:254-255
            t.error(spath, "Name of Adapter field must be specified")
            continue
        name = str(name)
        if name in seen:  # workspace_validation.go:917-925
            t.error((*spath, "name"), f"Duplicate adapter source name found: {name}")
        seen.add(name)
        if "strength" in item:  # workspace_validation.go:849-866 with pkg/model/interface.go:711-712
            t.error(
                (*apath, "strength"),
                "vLLM does not support adapter strength (KAITO's webhook refuses it for the vLLM runtime)",
                "remove strength: vLLM applies each adapter as trained",
            )
        if source.get("urls"):  # workspace_validation.go:263-265
            t.error((*spath, "urls"), "URLs are not supported as adapter source")
            continue
        image, volume = source.get("image"), source.get("volumeSource")
        if image and volume is not None:  # workspace_validation.go:375-378
            t.error(spath, "Exactly one of URLs, Volume, or Image must be specified")
            continue
        if image:
            t.error(
                (*spath, "image"),
                "adapters in container images are not supported: kvgen has no image source for adapters (KAITO "
                f"copies the image's files to {ADAPTER_ROOT}/{name} with an init container)",
                "copy adapter_config.json and adapter_model.safetensors onto a PersistentVolumeClaim and name it in "
                "source.volumeSource.persistentVolumeClaim.claimName, or publish the adapter on Hugging Face and write "
                "a kvgen spec with model.lora.adapters[].uri hf://ORG/REPO",
            )
            continue
        if volume is None:  # workspace_validation.go:259-262
            t.error(spath, "Either Image or Volume must be specified for adapter source")
            continue
        vpath = (*spath, "volumeSource")
        volume = mapping(t, vpath, volume)
        claim = mapping(t, (*vpath, "persistentVolumeClaim"), volume.get("persistentVolumeClaim"))
        if set(volume) != {"persistentVolumeClaim"} or not claim.get("claimName"):
            t.error(
                vpath,
                "kvgen mounts an adapter only from a PersistentVolumeClaim (or fetches it from Hugging Face); "
                "this volume source has no equivalent",
                "put the adapter's files on a PersistentVolumeClaim and give persistentVolumeClaim.claimName, or write a "
                "kvgen spec with model.lora.adapters[].uri hf://ORG/REPO",
            )
            continue
        if "readOnly" in claim:
            t.use((*vpath, "persistentVolumeClaim", "readOnly"))  # kvgen mounts adapters read-only
        claim_path = (*vpath, "persistentVolumeClaim", "claimName")
        out.append(lora.Adapter(name, f"pvc://{claim['claimName']}", apath, (*spath, "name"), claim_path))
        t.use(vpath)
        # the adapters' pull secrets are the pod's (preset_inferences.go:138-150, :634)
        for j, secret in enumerate(source.get("imagePullSecrets") or []):
            b.append(("pod", "imagePullSecrets"), {"name": secret}, (*spath, "imagePullSecrets", j))
        if "imagePullSecrets" in source:
            t.use((*spath, "imagePullSecrets"))
    return out


def _node(
    t: Tracker,
    b: SpecBuilder,
    model_id: str | None,
    preset: str,
    resource: dict[str, Any],
    res_path: Path,
    instance_type: str | None,
    byo_type: str | None,
    count: int | None,
    mig: str | None,
    accelerators: int | None,
    part_path: Path,
    context: int | None,
    per_replica: bool,
) -> None:
    """KAITO's GPUs for one node, its node estimator, its parallelism, its gpu-memory-utilization."""
    type_path = (*res_path, "instanceType")
    try:
        gpu = kaito_sizing.gpu_config(instance_type, byo_type, mig, accelerators)
    except KaitoError as exc:
        t.error((*part_path, "count"), exc.message, exc.hint)
        return
    if gpu is not None and instance_type and not gpu.known_sku:
        t.warn(
            type_path,
            f"KAITO's SKU table has no {instance_type}: its controller would fail (failed to get GPU config "
            f"for instance type {instance_type}: invalid value: Unsupported SKU '{instance_type}' for cloud provider: sku); "
            "kvgen sizes it from its own catalog, as KAITO sizes your own nodes",
            covers=False,
        )
    if b.get(("vllm", "gpuMemoryUtilization")) is None:  # the ConfigMap's vllm section wins (appended last)
        util = kaito_sizing.gpu_memory_utilization(gpu)
        b.set(("vllm", "gpuMemoryUtilization"), util, type_path if instance_type else res_path, use=False)
        b.note(
            f"vllm.gpuMemoryUtilization {util}: KAITO's value for "
            + (f"{gpu.model} GPUs" if gpu is not None and gpu.model else "this node (its default)")
        )
    size = kaito_sizing.model_file_size(model_id) if model_id else None
    bpt = kaito_sizing.bytes_per_token(model_id) if model_id else None
    if gpu is None or size is None or bpt is None or gpu.gpus == 0:
        return
    if mig and quantity.to_bytes(size) > kaito_sizing.mig_gib(mig) * quantity.GiB:
        t.error(
            (*part_path, "profile"),
            f"Model {preset} requires at least {size} for weights, which exceeds the {mig} MIG "
            f"slice capacity of {kaito_sizing.mig_gib(mig)}Gi",
            "pick a larger MIG profile",
        )
        return
    try:
        nodes = kaito_sizing.estimate_nodes(size, bpt, gpu, context, count or 0, mig)
    except KaitoError as exc:
        t.error((*part_path, "profile") if mig else (type_path if instance_type else res_path), exc.message, exc.hint)
        return
    where = f"{nodes} node(s){' per replica' if per_replica else ''}"
    b.note(
        f"KAITO's node estimator: {where} for {size} of weights on {gpu.gpus} GPU(s) of "
        f"{quantity.format_bytes(gpu.per_gpu)}"
        + (f" (resource.count {count} is only its starting point)" if count else "")
    )
    for key, value in kaito_sizing.parallelism(nodes, gpu, size).items():
        b.set(
            ("parallelism", key),
            value,
            (*res_path, "count") if count and key in ("pipeline", "nodes") else res_path,
            use=False,
        )
    if nodes > 1:
        b.note(f"parallelism: KAITO runs {nodes} nodes as pipeline parallel ({nodes}) x tensor parallel ({gpu.gpus})")
        t.warn(
            res_path,
            f"KAITO runs these {nodes} nodes as a Ray cluster (--distributed-executor-backend=ray, a leader and "
            "workers); kvgen renders the same parallelism as vLLM's own multi-node launch (vllm serve --nnodes, a "
            "StatefulSet per rank group)",
            covers=False,
        )
    elif b.get(("parallelism", "data")):
        b.note(
            f"parallelism: data {gpu.gpus} - KAITO runs one replica per GPU when the model fits twice into one GPU "
            "(this turns offloading off, as in KAITO)"
        )
    elif gpu.gpus > 1:
        b.note(f"parallelism: tensor {gpu.gpus} - KAITO splits the model over every GPU of the node")


def convert(doc: SourceDoc, configmaps: ConfigMaps, instance_option: str | None = None) -> list[Converted]:
    data = doc.data
    t = Tracker(doc)
    b = SpecBuilder(t)
    api, kind = data.get("apiVersion"), data.get("kind")
    t.use(("apiVersion",))
    t.use(("kind",))
    if api != VERSION or kind not in KINDS:
        t.error(
            ("apiVersion",) if api != VERSION else ("kind",),
            f"kvgen reads {VERSION} InferenceSet and Workspace, not {api} {kind}",
            "convert the resource to kaito.sh/v1beta1, or write a native spec",
        )
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
            t.error(
                ("metadata", "annotations", "kaito.sh/runtime"),
                f"kvgen runs vLLM, not {shown(runtime)}",
                "remove the annotation (vLLM is KAITO's default runtime)",
            )
        else:
            t.use(("metadata", "annotations", "kaito.sh/runtime"))

    count = None
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
        if "cache" in template:
            t.error(
                (*base, "cache"),
                "KAITO's distributed cache is not rendered by kvgen",
                "remove it, or use kvCacheOffloading.secondary disk tiers in a native spec",
            )
        template_meta = mapping(t, (*base, "metadata"), template.get("metadata"))
        labels = _labels(
            t,
            [
                ((*base, "metadata", "labels"), template_meta.get("labels")),
                (("metadata", "labels"), meta.get("labels")),
            ],
        )
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
        for key in ("preferredNodes",):
            if key in resource:
                t.warn((*res_path, key), f"not honoured: {REASONS['resource.preferredNodes']}")
        labels = _labels(t, [(("metadata", "labels"), meta.get("labels"))])
    mig, accelerators, part_path = _partition(t, resource, res_path)

    # instance
    instance_type = resource.get("instanceType")
    if instance_type:
        b.set(("instance", "type"), instance_type, (*res_path, "instanceType"))
        if mig or accelerators:  # KAITO's webhook: partitions need BYO nodes (workspace_validation.go L604-608)
            t.error(
                part_path,
                "GPU partitioning is only supported with BYO nodes (disableNodeAutoProvisioning=true)",
                "remove resource.instanceType: kvgen then renders for your own nodes (--instance TYPE, or none for a MIG slice)",
            )
    elif instance_option:
        b.set(("instance", "type"), instance_option, res_path or (), use=False)
        b.note(f"instance.type {instance_option} from --instance")
    elif mig:
        b.set(("instance", "gpus"), 1, (*part_path, "profile"), use=False)
        t.warn(
            part_path,
            "node fit not checked: the MIG slice is known, the node is not",
            "pass --instance TYPE (your own nodes) to check that the pod fits it",
            covers=False,
        )
    else:
        t.error(
            res_path,
            "no resource.instanceType: kvgen needs the instance type to size the pod",
            "pass --instance TYPE (your own nodes), or set resource.instanceType",
        )
    if mig:  # KAITO requests nvidia.com/mig-<profile> and tolerates its taint (preset_inferences.go L560-567, L663-669)
        b.set(("instance", "mig"), mig, (*part_path, "profile"))
        b.append(
            ("scheduling", "tolerations"),
            {"key": f"nvidia.com/mig-{mig}", "operator": "Exists", "effect": "NoSchedule"},
            (*part_path, "profile"),
        )
        b.note(f"instance.mig {mig}: KAITO runs the server on one MIG slice, with offloading off")
    _label_selector(t, b, selector, selector_path, byo=not instance_type)

    # model
    if inference.get("template") is not None:
        t.error(
            (*inf_path, "template"),
            "a custom pod template replaces KAITO's preset; kvgen cannot convert it",
            "use inference.preset, or write a native spec",
        )
    adapters = _adapters(t, b, inference, inf_path)
    preset = mapping(t, (*inf_path, "preset"), inference.get("preset"))
    name_path = (*inf_path, "preset", "name")
    model_id, name = None, str(preset.get("name") or "")
    if not name:
        if inference.get("template") is None:
            t.error((*inf_path, "preset"), "inference.preset.name is required (the model to serve)")
    else:
        try:
            model_id = kaito_names.resolve_preset(name)
        except KaitoError as exc:
            t.error(name_path, exc.message, exc.hint)
        else:
            b.set(("model", "id"), model_id, name_path)
            if model_id != name:
                b.note(f"model.id {model_id} for KAITO preset {name}")
    if model_id:  # before the ConfigMap's vllm section, which KAITO appends last (it wins)
        keys = kaito_sizing.data()["labels"]
        values = {k: v for k, (v, _p) in labels.items()}
        served = kaito_names.served_name(
            model_id, values, str(meta.get("name") or "") if kind == "InferenceSet" else None
        )
        used = [labels[k][1] for k in (keys["inferenceSet"], keys["multiRole"]) if k in labels]
        for path in used:
            t.use(path)
        src = (
            ("metadata", "name")
            if kind == "InferenceSet" and keys["multiRole"] not in labels
            else (used[0] if used else name_path)
        )
        b.append(("vllm", "extraArgs"), f"--served-model-name={served}", src)
        b.note(f"--served-model-name={served}: the name KAITO serves it under")
    _role(t, b, labels)
    access = preset.get("accessMode")
    if access is not None:
        if access == "private":
            t.error(
                (*inf_path, "preset", "accessMode"),
                "private preset images are not supported; kvgen downloads the model from Hugging Face",
                "use a Hugging Face model id (with presetOptions.modelAccessSecret for gated models)",
            )
        else:
            t.use((*inf_path, "preset", "accessMode"))
    options = mapping(t, (*inf_path, "preset", "presetOptions"), preset.get("presetOptions"))
    opt_path = (*inf_path, "preset", "presetOptions")
    if options.get("modelAccessSecret"):
        # KAITO's SetHFToken: key HF_TOKEN, optional (preset_inferences.go L846-871)
        b.set(
            ("model", "hfTokenSecret"),
            {"name": options["modelAccessSecret"], "key": HF_TOKEN_KEY, "optional": True},
            (*opt_path, "modelAccessSecret"),
        )
        b.note(
            f"model.hfTokenSecret: key {HF_TOKEN_KEY} of Secret {options['modelAccessSecret']}, optional (as KAITO renders it)"
        )
    if options.get("image"):
        t.error(
            (*opt_path, "image"),
            "model images are not supported; kvgen downloads the model from Hugging Face, or keeps it on a "
            "claim (a kvgen spec's model.cache or model.uri)",
            "remove it",
        )
    for i, secret in enumerate(options.get("imagePullSecrets") or []):
        b.append(("pod", "imagePullSecrets"), {"name": secret}, (*opt_path, "imagePullSecrets", i))
    if options.get("imagePullSecrets"):
        t.use((*opt_path, "imagePullSecrets"))
    # presetOptions.modelWeightsPVC/modelWeightsSubPath came from kaito-project/kaito#1917, which was
    # not merged: KAITO's PresetOptions (api/v1beta1/workspace_types.go at 056b8280, 2026-08-21) has
    # image, imagePullSecrets and modelAccessSecret only, and its CRD defines no other field
    for field in ("modelWeightsPVC", "modelWeightsSubPath"):
        if field in options:
            t.error(
                (*opt_path, field),
                f"{field} is not a KAITO field: KAITO's presetOptions has image, imagePullSecrets and "
                "modelAccessSecret (its CRD defines no other; the field comes from the unmerged pull request "
                "kaito-project/kaito#1917)",
                "remove it; to keep the weights on a claim, write a kvgen spec with model.cache.claim {name, path} "
                "(filled by kvgen's download) or model.uri pvc://CLAIM/PATH (files already there)",
            )
    if instance_type:
        # KAITO provisions the node, with an OS disk of the preset's DiskStorageRequirement
        # (modelFileSize + 80 GiB; 1024Gi without a preset): nodeOSDiskSize of its NodeClaim.
        row = catalog.models().get(model_id or "")
        disk = f"{-(-quantity.to_bytes(row['weights']) // quantity.GiB) + KAITO_SYSTEM_DISK_GIB}Gi" if row else "1024Gi"
        b.set(("instance", "ephemeralStorage"), disk, (*res_path, "instanceType"), use=False)
        b.note(
            f"instance.ephemeralStorage {disk}: the OS disk KAITO gives the node it provisions (weights + {KAITO_SYSTEM_DISK_GIB}Gi)"
        )

    # offloading: KAITO's shape, sized by the ConfigMap
    b.set(("kvCacheOffloading", "backend"), "lmcache", None)
    # KAITO's L1 arithmetic: available RAM x kv_cache_cpu_memory_utilization / tensor-parallel size
    b.set(("kvCacheOffloading", "lmcache", "utilizationScope"), "rank", None)
    utilization, text = None, ""
    config = inference.get("config")
    if config:
        t.use((*inf_path, "config"))
        cm = configmaps.get(namespace, str(config))
        if cm is None:
            t.error(
                (*inf_path, "config"),
                f"ConfigMap {namespace}/{config} is not among the inputs; its "
                f"{UTILIZATION_KEY} decides whether and how much kvgen offloads",
                "pass the file that holds the ConfigMap as another input (or in the same file)",
            )
        else:
            utilization, text = _inference_config(t, b, cm)
    if utilization is None:
        b.set(
            ("kvCacheOffloading", "cpuMemoryUtilization"),
            DEFAULT_UTILIZATION,
            (*inf_path,) if not config else (*inf_path, "config"),
            use=False,
        )
        b.note(
            f"kvCacheOffloading.cpuMemoryUtilization {DEFAULT_UTILIZATION}: KAITO's default "
            f"({UTILIZATION_KEY} is not set)"
        )
    # after the ConfigMap's vllm section: a --lora-modules there stops KAITO's own (inference_api.py:551-553)
    lora.apply(t, b, adapters, {}, (*inf_path, "adapters"), (*inf_path, "adapters"), "KAITO", ADAPTER_ROOT)
    if model_id and b.get(("model", "maxModelLen")) is None:
        b.note(
            "model.maxModelLen: KAITO passes --max-model-len=auto (vLLM fits the length at start-up); kvgen plans "
            "the length itself and passes one only when the model's own does not fit (kvgen explain shows it)"
        )
    b.note("service.port: kvgen's Service listens on its service.port, not on KAITO's port 80")
    _node(
        t,
        b,
        model_id,
        name,
        resource,
        res_path,
        instance_type,
        instance_option if not instance_type else None,
        count,
        mig,
        accelerators,
        part_path,
        kaito_sizing.explicit_max_model_len(text),
        kind == "InferenceSet",
    )

    t.report_unused(REASONS)
    t.raise_errors()
    return [b.result("kaito", t.warnings)]


__all__ = ["ConfigMaps", "convert", "GROUP", "VERSION", "KINDS"]
