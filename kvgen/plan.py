"""From a valid spec to a plan: the resolved model and node, the decision, the sizes, and
every value the templates lay out (names, labels, args, env, volumes, resources).

The plan holds values only; the object structure lives in ``templates/`` (and, for Helm, in
``charts/kvgen/templates/``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from kvgen import apiserver, catalog, connector, kube, paths, quantity, rules, sizing
from kvgen.catalog import InstanceInfo, ModelInfo
from kvgen.rules import Decision
from kvgen.sizing import Sizing
from kvgen.spec import Spec

Problem = tuple[tuple, str, str | None]

# torch.distributed rendezvous between the nodes of one multi-node server.
MASTER_PORT = 29500
MODEL_CACHE_MOUNT = "/root/.cache"  # HF_HOME and VLLM_CACHE_ROOT default below it
LAUNCHER_VOLUME = "lmcache-launcher"
# Multi-node servers: rank 0 ("leader") runs the API server, ranks 1.. ("worker") run headless.
ROLE_LABEL = "kvgen.dev/node-role"
WORKER_SUFFIX = "-worker"  # the StatefulSet of ranks 1..


@dataclass
class Plan:
    spec: Spec
    model: ModelInfo
    instance: InstanceInfo
    decision: Decision
    sizing: Sizing
    gpus_per_pod: int
    warnings: list[str] = field(default_factory=list)

    @property
    def backend(self) -> str | None:
        return self.spec.kv_cache_offloading.backend if self.decision.enabled else None

    @property
    def multi_node(self) -> bool:
        return self.spec.parallelism.nodes > 1


class PlanError(Exception):
    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(p[1] for p in problems))


def _flag_name(arg: str) -> str:
    return arg.split("=", 1)[0].replace("_", "-") if arg.startswith("-") else ""


def _check_structure(spec: Spec, model: ModelInfo, instance: InstanceInfo, k8s_version: str) -> tuple[int, list[Problem]]:
    problems: list[Problem] = []
    p = spec.parallelism
    total = p.tensor * p.pipeline * p.data
    gpus_per_pod = 0
    if total % p.nodes:
        problems.append(
            (("parallelism", "nodes"), f"tensor x pipeline x data = {total} GPUs cannot be split evenly over {p.nodes} nodes",
             "make tensor x pipeline x data a multiple of nodes")
        )
    elif instance.gpus == 0:
        if total > 1 or p.nodes > 1:
            problems.append((("parallelism",), f"{instance.type or 'the instance'} has no GPU; parallelism must stay at 1", None))
    else:
        gpus_per_pod = total // p.nodes
        if gpus_per_pod > instance.gpus:
            problems.append(
                (("parallelism",),
                 f"tensor {p.tensor} x pipeline {p.pipeline} x data {p.data} needs {gpus_per_pod} GPUs per node, "
                 f"but {instance.type or 'the instance'} has {instance.gpus}",
                 "lower the parallel sizes, spread them over more nodes (parallelism.nodes), or pick an instance with more GPUs")
            )
    if p.nodes > 1 and spec.replicas != 1:
        problems.append((("replicas",), f"a server spanning {p.nodes} nodes is rendered as one StatefulSet; replicas must be 1",
                         "render one spec per server"))
    managed = catalog.load("managed-flags.yaml")["flags"]  # flags kvgen sets, and from what
    for i, arg in enumerate(spec.vllm.extra_args):
        flag = _flag_name(arg)
        if flag in managed:
            problems.append((("vllm", "extraArgs", i), f"{flag} is set by kvgen from {managed[flag]}", f"remove it and set {managed[flag]}"))
    # Kubernetes objects embedded in the spec, checked against the target version's schema
    embedded: list[tuple[tuple, str, Any]] = []
    for i, tier in enumerate(spec.kv_cache_offloading.secondary):
        pvc = tier.file_system.pvc
        if pvc and pvc.spec is not None:
            embedded.append((("kvCacheOffloading", "secondary", i, "fileSystem", "pvc", "spec"), "io.k8s.api.core.v1.PersistentVolumeClaimSpec", pvc.spec))
    for i, tol in enumerate(spec.scheduling.tolerations):
        embedded.append((("scheduling", "tolerations", i), "io.k8s.api.core.v1.Toleration", tol))
    if spec.scheduling.affinity:
        embedded.append((("scheduling", "affinity"), "io.k8s.api.core.v1.Affinity", spec.scheduling.affinity))
    for i, env in enumerate(spec.vllm.env):
        if env.value_from is not None:
            embedded.append((("vllm", "env", i, "valueFrom"), "io.k8s.api.core.v1.EnvVarSource", env.value_from))
    for base, definition, data in embedded:
        for sub, message in kube.validate_definition(definition, data, k8s_version):
            problems.append(((*base, *sub), message, None))
    return gpus_per_pod, problems


def statefulset_names(spec: Spec) -> list[str]:
    """The StatefulSets a multi-node server renders: rank 0, then ranks 1.. (none otherwise)."""
    return [spec.name, f"{spec.name}{WORKER_SUFFIX}"] if spec.parallelism.nodes > 1 else []


def build(spec: Spec, k8s_version: str = kube.DEFAULT_VERSION) -> Plan:
    """Resolve, decide and size; raise PlanError with every problem found."""
    model, problems = catalog.resolve_model(spec.model)
    instance, inst_problems = catalog.resolve_instance(spec.instance)
    problems += inst_problems
    # what the API server would refuse (kvgen.apiserver): before sizing, which adds sizes up
    problems += apiserver.check_spec(spec, instance, statefulset_names(spec))
    if model is None or instance is None:
        raise PlanError(problems)
    gpus_per_pod, structural = _check_structure(spec, model, instance, k8s_version)
    problems += structural
    if problems:
        raise PlanError(problems)
    decision = rules.decide(rules.Context(spec, model, instance))
    try:
        sz = sizing.plan(spec, model, instance, decision, gpus_per_pod)
    except sizing.FitError as exc:
        raise PlanError(exc.problems) from None
    warnings = list(sz.warnings)
    o = spec.kv_cache_offloading
    if o.allow_hybrid and o.backend != "native" and model.hybrid:
        warnings.append("kvCacheOffloading.allowHybrid applies to the native backend only; offloading stays off for this hybrid model")
    return Plan(spec, model, instance, decision, sz, gpus_per_pod, warnings)


# ----------------------------------------------------------------------------- context


def number(x: float) -> str:
    """A number as Go's %v prints it (shortest round-trip form, no trailing .0), so that the
    Helm chart can produce the same argument strings: 0.92 -> "0.92", 1.0 -> "1"."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _image(spec_image, pinned: dict[str, Any]) -> str:
    """Each field from the spec, else from the pin (the same merge Helm applies to values)."""
    repo = spec_image.repository or pinned["repository"]
    tag = spec_image.tag or pinned["tag"]
    digest = spec_image.digest or pinned.get("digest")
    return f"{repo}@{digest}" if digest else f"{repo}:{tag}"


def _resources(size: sizing.ContainerSize, gpu: dict[str, int] | None) -> dict[str, Any]:
    requests: dict[str, Any] = {}
    if size.cpu:
        requests["cpu"] = size.cpu
    requests["memory"] = quantity.format_bytes(size.memory)
    if size.ephemeral:
        requests["ephemeral-storage"] = quantity.format_bytes(size.ephemeral)
    limits: dict[str, Any] = {}
    if size.cpu_limit:
        limits["cpu"] = size.cpu_limit
    limits["memory"] = quantity.format_bytes(size.limit)
    if size.ephemeral_limit is not None:
        limits["ephemeral-storage"] = quantity.format_bytes(size.ephemeral_limit)
    for name, count in (gpu or {}).items():
        requests[name] = count
        limits[name] = count
    return {"requests": requests, "limits": limits}


def _tier_volumes(spec: Spec) -> tuple[list[dict], list[dict]]:
    volumes, mounts = [], []
    for i, tier in enumerate(spec.kv_cache_offloading.secondary):
        fs = tier.file_system
        name = f"kv-cache-secondary-{i}"
        mount: dict[str, Any] = {"name": name, "mountPath": connector.tier_path(i)}
        if fs.empty_dir:
            volumes.append({"name": name, "emptyDir": {"sizeLimit": fs.empty_dir.size}})
        elif fs.pvc.spec is not None:
            volumes.append({"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": fs.pvc.spec}}})
        else:
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": fs.pvc.ref.name}})
            if fs.pvc.ref.path:
                mount["subPath"] = fs.pvc.ref.path
        mounts.append(mount)
    return volumes, mounts


def tier_capacities(spec: Spec) -> list[int | None]:
    """Known size of each disk tier in bytes: an emptyDir's size, a claim template's storage
    request; None for an existing claim, whose size kvgen cannot know."""
    out: list[int | None] = []
    for tier in spec.kv_cache_offloading.secondary:
        fs = tier.file_system
        if fs.empty_dir:
            out.append(quantity.to_bytes(fs.empty_dir.size))
        elif fs.pvc.spec is not None:
            storage = ((fs.pvc.spec.get("resources") or {}).get("requests") or {}).get("storage")
            out.append(quantity.to_bytes(storage) if storage is not None else None)
        else:
            out.append(None)
    return out


def launcher_script() -> str:
    return (paths.files_dir() / connector.LAUNCHER_FILE).read_text(encoding="utf-8")


def context(plan: Plan) -> dict[str, Any]:
    """Every value the templates need, in the order they lay it out."""
    spec, s, d = plan.spec, plan.sizing, plan.decision
    rt = catalog.runtime()
    o = spec.kv_cache_offloading
    p = spec.parallelism
    backend = plan.backend
    tier_count = len(o.secondary) if backend else 0

    vllm_pin = rt["vllm"]["image"] if plan.instance.gpus else rt["vllm"]["cpuImage"][plan.instance.arch]
    vllm_spec_image = spec.images.vllm if plan.instance.gpus else spec.images.vllm_cpu
    selector = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": spec.name}
    labels = {
        **selector,
        "app.kubernetes.io/component": "inference" if spec.disaggregation.role == "none" else spec.disaggregation.role,
        "app.kubernetes.io/version": vllm_spec_image.tag or vllm_pin["tag"],
        "app.kubernetes.io/managed-by": "kvgen",
    }
    annotations = {"kvgen.dev/kv-cache-offloading": "enabled" if d.enabled else "disabled"}
    if d.enabled:
        annotations["kvgen.dev/kv-cache-backend"] = backend
    else:
        annotations["kvgen.dev/kv-cache-offloading-reason"] = d.reason_code

    # vLLM arguments (the image's entrypoint is `vllm serve`; the model is its positional argument)
    args = [spec.model.id, f"--port={spec.service.port}", f"--tensor-parallel-size={p.tensor}"]
    if p.pipeline > 1:
        args.append(f"--pipeline-parallel-size={p.pipeline}")
    if p.data > 1:
        args.append(f"--data-parallel-size={p.data}")
    headless_name = f"{spec.name}-headless"
    if plan.multi_node:
        args += [
            f"--nnodes={p.nodes}",
            "--node-rank=$(NODE_RANK)",
            f"--master-addr={spec.name}-0.{headless_name}.{spec.namespace}.svc.cluster.local",
            f"--master-port={MASTER_PORT}",
        ]
    rank_args_end = len(args)  # ranks 1.. add --headless here
    if spec.model.max_model_len:
        args.append(f"--max-model-len={spec.model.max_model_len}")
    if plan.instance.gpus:
        args.append(f"--gpu-memory-utilization={number(spec.vllm.gpu_memory_utilization)}")
    kv_config = None
    if backend == "lmcache":
        kv_config = connector.lmcache_kv_transfer_config()
    elif backend == "native":
        kv_config = connector.native_kv_transfer_config(s.cpu_tier, o.eviction_policy, tier_count)
    elif spec.disaggregation.role != "none":
        kv_config = connector.nixl_kv_transfer_config()
    if kv_config:
        args.append(f"--kv-transfer-config={connector.dumps(kv_config)}")
    if backend == "native" and plan.model.hybrid:
        args.append("--enable-prefix-caching")  # vLLM: hybrid models need it to align block sizes
    args += list(spec.vllm.extra_args)

    env: list[dict[str, Any]] = []
    if plan.multi_node:
        env.append({"name": "NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}}})
    if spec.model.hf_token_secret:
        ref = spec.model.hf_token_secret
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}}})
    if spec.disaggregation.role != "none":
        env.append({"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
    if not plan.instance.gpus:
        env.append({"name": "VLLM_CPU_KVCACHE_SPACE", "value": str(sizing.CPU_BACKEND_KV_SPACE_GIB)})
    for e in spec.vllm.env:
        env.append(e.model_dump(by_alias=True, exclude_none=True))

    gpu_resource: dict[str, int] = {}
    if plan.instance.gpus:
        gpu_name = f"nvidia.com/mig-{plan.instance.mig}" if plan.instance.mig else "nvidia.com/gpu"
        gpu_resource[gpu_name] = plan.gpus_per_pod

    tier_volumes, tier_mounts = _tier_volumes(spec) if backend else ([], [])
    vllm_mounts = [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "model-cache", "mountPath": MODEL_CACHE_MOUNT}]
    if backend == "native":
        vllm_mounts += tier_mounts
    vllm_container: dict[str, Any] = {
        "name": "vllm",
        "image": _image(vllm_spec_image, vllm_pin),
        "args": args,
        "env": env,
        "ports": [{"name": "http", "containerPort": spec.service.port, "protocol": "TCP"}],
        "resources": _resources(s.vllm, gpu_resource),
        "volumeMounts": vllm_mounts,
        "probes": True,
    }

    # LMCache MP server sidecar and its launcher
    sidecar = launcher = None
    if backend == "lmcache":
        script = launcher_script()
        launcher = {
            "name": f"{spec.name}-lmcache-launcher",
            "file": connector.LAUNCHER_FILE,
            "script": script,
            "sha256": hashlib.sha256(script.encode()).hexdigest(),
        }
        largs: list[str] = []
        if s.utilization is not None:
            largs.append(f"--utilization={number(s.utilization)}")
        largs.append(f"--tensor-parallel-size={p.tensor}")
        if s.l1_cap is not None:
            largs.append(f"--max-bytes={s.l1_cap}")
        largs += [f"--reserve-bytes={sizing.LMCACHE_SERVER_OVERHEAD}", f"--initial-gb={sizing.LMCACHE_L1_INIT_GIB}", "--"]
        largs += connector.lmcache_server_argv(o.eviction_policy, tier_capacities(spec), sizing.LMCACHE_L1_INIT_GIB)
        lm = rt["lmcache"]
        sidecar = {
            "name": "lmcache-mp-server",
            "image": _image(spec.images.lmcache, lm["image"]),
            "command": [lm["python"], f"{connector.LAUNCHER_DIR}/{connector.LAUNCHER_FILE}"],
            "args": largs,
            "env": [
                # See the GPUs it reads over CUDA IPC without taking GPUs of its own (README: sidecar GPU access)
                {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
            ],
            "resources": _resources(s.lmcache, None),
            "probeCommand": [lm["python"], "-c", connector.LMCACHE_HEALTH_PROBE],
            "volumeMounts": [
                {"name": "dshm", "mountPath": "/dev/shm"},
                {"name": LAUNCHER_VOLUME, "mountPath": connector.LAUNCHER_DIR, "readOnly": True},
                *tier_mounts,
            ],
        }

    volumes: list[dict[str, Any]] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": quantity.format_bytes(s.shm)}},
        {"name": "model-cache", "emptyDir": {"sizeLimit": quantity.format_bytes(s.model_cache)}},
    ]
    if launcher:
        volumes.append({"name": LAUNCHER_VOLUME, "configMap": {"name": launcher["name"], "defaultMode": 0o555}})
    volumes += tier_volumes

    node_selector: dict[str, str] = {}
    if plan.instance.type:
        node_selector["node.kubernetes.io/instance-type"] = plan.instance.type
    node_selector.update(spec.scheduling.node_selector)
    pod_annotations = dict(annotations)
    if launcher:
        pod_annotations["kvgen.dev/lmcache-launcher-sha256"] = launcher["sha256"]

    def pod(role: str | None) -> dict[str, Any]:
        """The pod of a single-node server (role None), or of rank 0 / the other ranks."""
        role_labels = {ROLE_LABEL: role} if role else {}
        vllm = dict(vllm_container)
        if role == "worker":  # ranks 1.. run engine workers only: no API server, no HTTP probes
            vllm["args"] = [*args[:rank_args_end], "--headless", *args[rank_args_end:]]
            vllm["probes"] = False
        return {
            "selector": {**selector, **role_labels},
            "labels": {**labels, **role_labels},
            "annotations": pod_annotations,
            "sidecar": sidecar,
            "vllm": vllm,
            "volumes": volumes,
        }

    if plan.multi_node:
        workloads = [
            {"kind": "StatefulSet", "name": spec.name, "replicas": 1, "ordinalsStart": None, "pod": pod("leader")},
            {"kind": "StatefulSet", "name": f"{spec.name}{WORKER_SUFFIX}", "replicas": p.nodes - 1, "ordinalsStart": 1, "pod": pod("worker")},
        ]
    else:
        workloads = [{"kind": "Deployment", "name": spec.name, "replicas": spec.replicas, "ordinalsStart": None, "pod": pod(None)}]

    return {
        "name": spec.name,
        "namespace": spec.namespace,
        "labels": labels,
        "selector": selector,
        "annotations": annotations,
        "multi_node": plan.multi_node,
        "headless_name": headless_name,
        "master_port": MASTER_PORT,
        "service": {
            "type": spec.service.type,
            "port": spec.service.port,
            "selector": workloads[0]["pod"]["selector"],  # rank 0 serves the API
        },
        "launcher": launcher,
        "workloads": workloads,
        "node_selector": node_selector,
        "tolerations": spec.scheduling.tolerations,
        "affinity": spec.scheduling.affinity,
        "priority_class_name": spec.scheduling.priority_class_name,
    }
