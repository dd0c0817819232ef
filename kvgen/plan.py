"""From a valid spec to a plan: the resolved model and node, the decision, the sizes, and
every value the templates lay out (names, labels, args, env, volumes, resources).

The plan holds values only; the object structure lives in ``templates/`` (and, for Helm, in
``charts/kvgen/templates/``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from kvgen import apiserver, catalog, connector, flags, gpu_access, kube, kvcache, paths, ports, quantity, rules, sizing
from kvgen.catalog import InstanceInfo, ModelInfo
from kvgen.errors import Problem, SpecError
from kvgen.gpu_access import GpuAccess
from kvgen.kvcache import ContextPlan
from kvgen.rules import Decision
from kvgen.sizing import ContainerSize, Sizing
from kvgen.spec import Spec

# torch.distributed rendezvous between the nodes of one multi-node server.
MASTER_PORT = 29500
MODEL_CACHE_MOUNT = "/root/.cache"  # HF_HOME and VLLM_CACHE_ROOT default below it
LAUNCHER_VOLUME = "lmcache-launcher"
# Multi-node servers: rank 0 ("leader") runs the API server, ranks 1.. ("worker") run headless.
ROLE_LABEL = "kvgen.dev/node-role"
WORKER_SUFFIX = "-worker"  # the StatefulSet of ranks 1..
# The lmcache backend runs LMCache as a native sidecar (an init container with restartPolicy:
# Always): the SidecarContainers feature is beta and on by default from Kubernetes 1.29 (off in 1.28).
SIDECAR_MIN_VERSION = (1, 29)


@dataclass
class Plan:
    spec: Spec
    model: ModelInfo
    instance: InstanceInfo
    decision: Decision
    sizing: Sizing
    gpus_per_pod: int
    context: ContextPlan
    warnings: list[str] = field(default_factory=list)
    gpu_access: GpuAccess | None = None  # how the LMCache server reaches the GPUs (lmcache backend)

    @property
    def backend(self) -> str | None:
        return self.spec.kv_cache_offloading.backend if self.decision.enabled else None

    @property
    def multi_node(self) -> bool:
        return self.spec.parallelism.nodes > 1

    @property
    def in_container(self) -> bool:
        return self.gpu_access is not None and self.gpu_access.mode == "in-container"

    @property
    def sidecar(self) -> bool:
        return self.gpu_access is not None and not self.in_container

    def containers(self) -> list[tuple[str, ContainerSize]]:
        """The containers as rendered, with their sizes: in-container mode has no sidecar, and
        the vLLM container then holds the server's share too."""
        s = self.sizing
        if self.in_container:
            return [("vllm", with_server(s.vllm, s.lmcache))]
        out = [("vllm", s.vllm)]
        if s.lmcache is not None:
            out.append(("lmcache-mp-server", s.lmcache))
        return out


def with_server(vllm: ContainerSize, server: ContainerSize) -> ContainerSize:
    """gpuAccess in-container: one container sized as the vLLM container plus the LMCache
    server's share (its L1 and process; explicit resources.lmcacheServer memory and ephemeral
    storage included). Its CPU is the vLLM container's: the server's threads share it."""
    memory = vllm.memory + server.memory
    limit = vllm.limit + server.limit
    ephemeral_limit = None
    if vllm.ephemeral_limit is not None or server.ephemeral_limit is not None:
        ephemeral_limit = sum(e if e is not None else r for e, r in ((vllm.ephemeral_limit, vllm.ephemeral),
                                                                     (server.ephemeral_limit, server.ephemeral)))
    return ContainerSize(
        cpu=vllm.cpu,
        memory=memory,
        ephemeral=vllm.ephemeral + server.ephemeral,
        memory_limit=limit if limit != memory else None,
        cpu_limit=vllm.cpu_limit,
        ephemeral_limit=ephemeral_limit,
    )


def _check_structure(spec: Spec, model: ModelInfo, instance: InstanceInfo, k8s_version: str) -> tuple[int, list[Problem]]:
    problems: list[Problem] = []
    p = spec.parallelism
    total = p.tensor * p.pipeline * p.data
    gpus_per_pod = 0
    if total % p.nodes:
        problems.append(
            Problem(("parallelism", "nodes"), f"tensor x pipeline x data = {total} GPUs cannot be split evenly over {p.nodes} nodes",
             "make tensor x pipeline x data a multiple of nodes")
        )
    elif instance.gpus == 0:
        if total > 1 or p.nodes > 1:
            problems.append(Problem(("parallelism",), f"{instance.type or 'the instance'} has no GPU; parallelism must stay at 1", None))
    else:
        gpus_per_pod = total // p.nodes
        if gpus_per_pod > instance.gpus:
            problems.append(
                Problem(("parallelism",),
                 f"tensor {p.tensor} x pipeline {p.pipeline} x data {p.data} needs {gpus_per_pod} GPUs per node, "
                 f"but {instance.type or 'the instance'} has {instance.gpus}",
                 "lower the parallel sizes, spread them over more nodes (parallelism.nodes), or pick an instance with more GPUs")
            )
    if p.nodes > 1 and spec.replicas != 1:
        problems.append(Problem(("replicas",), f"a server spanning {p.nodes} nodes is rendered as one StatefulSet; replicas must be 1",
                         "render one spec per server"))
    # flags kvgen owns (files/managed-flags.yaml), and anything vLLM itself would refuse
    problems += flags.check_extra_args(list(spec.vllm.extra_args))
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
            problems.append(Problem((*base, *sub), message, None))
    return gpus_per_pod, problems


def statefulset_names(spec: Spec) -> list[str]:
    """The StatefulSets a multi-node server renders: rank 0, then ranks 1.. (none otherwise)."""
    return [spec.name, f"{spec.name}{WORKER_SUFFIX}"] if spec.parallelism.nodes > 1 else []


def build(spec: Spec, k8s_version: str = kube.DEFAULT_VERSION) -> Plan:
    """Resolve, decide and size; raise SpecError with every problem found (not yet located in a
    file: kvgen.compiler does that)."""
    model, problems = catalog.resolve_model(spec.model)
    instance, inst_problems = catalog.resolve_instance(spec.instance)
    problems += inst_problems
    # what the API server would refuse (kvgen.apiserver): before sizing, which adds sizes up
    problems += apiserver.check_spec(spec, instance, statefulset_names(spec))
    if model is None or instance is None:
        raise SpecError("", problems)
    gpus_per_pod, structural = _check_structure(spec, model, instance, k8s_version)
    problems += structural
    if problems:
        raise SpecError("", problems)
    decision = rules.decide(rules.Context(spec, model, instance))
    backend = spec.kv_cache_offloading.backend if decision.enabled else None
    access = gpu_access.resolve(spec, backend)
    problems = gpu_access.check(access, k8s_version) + ports.check(spec, backend)
    # the native sidecar of gpuAccess visible-devices (dra has its own 1.34 floor; in-container has no sidecar)
    if access is not None and access.mode == "visible-devices" and _version(k8s_version) < SIDECAR_MIN_VERSION:
        problems.append(Problem(
            ("kvCacheOffloading", "backend"),
            f"the lmcache backend runs the LMCache server as a native sidecar, which needs Kubernetes "
            f"{'.'.join(map(str, SIDECAR_MIN_VERSION))} or later (SidecarContainers is off by default in 1.28); "
            f"the target is {'.'.join(map(str, _version(k8s_version)))}",
            "target Kubernetes 1.29 or later (--kube-version), use kvCacheOffloading.lmcache.gpuAccess in-container "
            "(no sidecar), or the native backend",
        ))
    context = kvcache.plan(spec, model, instance)
    sz = sizing.plan(spec, model, instance, decision, gpus_per_pod)
    problems += sz.problems + context.problems
    if problems:
        raise SpecError("", problems)
    warnings = list(sz.warnings) + context.warnings
    o = spec.kv_cache_offloading
    if o.allow_hybrid and o.backend != "native" and model.hybrid:
        warnings.append("kvCacheOffloading.allowHybrid applies to the native backend only; offloading stays off for this hybrid model")
    plan = Plan(spec, model, instance, decision, sz, gpus_per_pod, context, warnings, access)
    plan.warnings += gpu_access.warnings(spec, access) + _image_warnings(plan)
    return plan


def _version(text: str) -> tuple[int, int]:
    """'1.33', 'v1.28.3' -> (1, 33), (1, 28); the CLI has already refused anything else."""
    m = re.match(r"v?(\d+)\.(\d+)", text.strip())
    return (int(m[1]), int(m[2])) if m else SIDECAR_MIN_VERSION


# ----------------------------------------------------------------------------- context


def number(x: float) -> str:
    """A number as Go's %v prints it (shortest round-trip form, no trailing .0), so that the
    Helm chart can produce the same argument strings: 0.92 -> "0.92", 1.0 -> "1"."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _image_fields(spec_image, pinned: dict[str, Any]) -> dict[str, Any]:
    """Each field from the spec, else from the pin (the same merge Helm applies to values)."""
    return {
        "repository": spec_image.repository or pinned["repository"],
        "tag": spec_image.tag or pinned["tag"],
        "digest": spec_image.digest or pinned.get("digest"),
    }


def _reference(fields: dict[str, Any]) -> str:
    return f"{fields['repository']}@{fields['digest']}" if fields["digest"] else f"{fields['repository']}:{fields['tag']}"


def _image(spec_image, pinned: dict[str, Any]) -> str:
    return _reference(_image_fields(spec_image, pinned))


def vllm_image(plan: Plan) -> str:
    rt = catalog.runtime()
    if plan.instance.gpus:
        return _image(plan.spec.images.vllm, rt["vllm"]["image"])
    return _image(plan.spec.images.vllm_cpu, rt["vllm"]["cpuImage"][plan.instance.arch])


def lmcache_image(plan: Plan) -> str:
    """The sidecar's image: the vLLM image (one LMCache install for the connector and the
    server), with any field images.lmcache sets in its place. A tag or digest set there
    replaces the vLLM image's tag and digest together."""
    base = _image_fields(plan.spec.images.vllm, catalog.runtime()["vllm"]["image"])
    own = plan.spec.images.lmcache
    if own.tag or own.digest:
        base = {**base, "tag": own.tag or base["tag"], "digest": own.digest}
    if own.repository:
        base = {**base, "repository": own.repository}
    return _reference(base)


def _image_warnings(plan: Plan) -> list[str]:
    own = plan.spec.images.lmcache
    if not (own.repository or own.tag or own.digest) or plan.gpu_access is None:
        return []
    if plan.in_container:
        return [f"images.lmcache is not used with gpuAccess in-container: the LMCache server runs inside the vLLM "
                f"container ({vllm_image(plan)})"]
    server, client = lmcache_image(plan), vllm_image(plan)
    if server == client:
        return []
    version = catalog.runtime()["lmcache"]["version"]
    return [f"images.lmcache: the LMCache server runs from {server}, the LMCacheMPConnector (the client) from the vLLM "
            f"image {client}; LMCache's MP protocol has no version handshake, so both images must carry the same "
            f"LMCache version ({version}), or requests fail at run time with a client/server version mismatch"]


def _resources(size: sizing.ContainerSize, gpu: dict[str, int] | None, claims: list[dict[str, str]] | None = None) -> dict[str, Any]:
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
    out: dict[str, Any] = {"requests": requests, "limits": limits}
    if claims:
        out["claims"] = claims  # DRA: the devices of these pod claims
    return out


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


def _lmcache_command(plan: Plan, reserve: int) -> list[str]:
    """The launcher's options, '--' and the `lmcache server` command (without --l1-size-gb,
    which the launcher measures and adds when the pod starts)."""
    s, o, p = plan.sizing, plan.spec.kv_cache_offloading, plan.spec.parallelism
    largs: list[str] = []
    if s.utilization is not None:
        largs.append(f"--utilization={number(s.utilization)}")
    largs.append(f"--tensor-parallel-size={p.tensor}")
    if s.l1_cap is not None:
        largs.append(f"--max-bytes={s.l1_cap}")
    largs += [f"--reserve-bytes={reserve}", f"--initial-gb={sizing.LMCACHE_L1_INIT_GIB}"]
    if plan.in_container:
        largs.append(f"--health-url={connector.lmcache_health_url()}")
    largs.append("--")
    largs += connector.lmcache_server_argv(o.eviction_policy, tier_capacities(plan.spec), sizing.LMCACHE_L1_INIT_GIB)
    return largs


def context(plan: Plan) -> dict[str, Any]:
    """Every value the templates need, in the order they lay it out."""
    spec, s, d = plan.spec, plan.sizing, plan.decision
    rt = catalog.runtime()
    o = spec.kv_cache_offloading
    p = spec.parallelism
    backend = plan.backend
    access = plan.gpu_access
    dra = access is not None and access.mode == "dra"
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
    if access is not None:
        annotations["kvgen.dev/lmcache-gpu-access"] = access.mode

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
    if plan.context.flag:  # the spec's model.maxModelLen, or the longest length that fits (kvgen.kvcache)
        args.append(f"--max-model-len={plan.context.flag}")
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

    # GPUs: a device-plugin request, or (gpuAccess dra) one claim the sidecar lists too
    gpu_resource: dict[str, int] = {}
    claims: list[dict[str, str]] = []
    claim_template = None
    if dra:
        claim_template = {
            "name": f"{spec.name}-{gpu_access.CLAIM_NAME}",
            "request": gpu_access.CLAIM_NAME,
            "deviceClassName": access.device_class_name,
            "count": plan.gpus_per_pod,
        }
        claims = [{"name": gpu_access.CLAIM_NAME}]
    elif plan.instance.gpus:
        gpu_name = f"nvidia.com/mig-{plan.instance.mig}" if plan.instance.mig else "nvidia.com/gpu"
        gpu_resource[gpu_name] = plan.gpus_per_pod

    tier_volumes, tier_mounts = _tier_volumes(spec) if backend else ([], [])
    launcher = None
    if access is not None:
        script = launcher_script()
        launcher = {
            "name": f"{spec.name}-lmcache-launcher",
            "file": connector.LAUNCHER_FILE,
            "script": script,
            "sha256": hashlib.sha256(script.encode()).hexdigest(),
        }
    launcher_path = f"{connector.LAUNCHER_DIR}/{connector.LAUNCHER_FILE}"
    launcher_mount = {"name": LAUNCHER_VOLUME, "mountPath": connector.LAUNCHER_DIR, "readOnly": True}
    lm = rt["lmcache"]

    vllm_mounts = [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "model-cache", "mountPath": MODEL_CACHE_MOUNT}]
    vllm_size = s.vllm
    command = None
    lmcache_prefix: list[str] = []
    if backend == "native":
        vllm_mounts += tier_mounts
    elif plan.in_container:
        # no sidecar: the launcher runs `lmcache server`, waits for it, then vLLM (README: GPU access modes)
        vllm_mounts += [launcher_mount, *tier_mounts]
        vllm_size = with_server(s.vllm, s.lmcache)
        command = [lm["python"], launcher_path]
        lmcache_prefix = [*_lmcache_command(plan, s.vllm.limit + sizing.LMCACHE_SERVER_OVERHEAD), connector.THEN,
                          *rt["vllm"]["entrypoint"]]
    vllm_container: dict[str, Any] = {
        "name": "vllm",
        "image": _image(vllm_spec_image, vllm_pin),
        "command": command,
        "args": [*lmcache_prefix, *args],
        "env": env,
        "ports": [{"name": "http", "containerPort": spec.service.port, "protocol": "TCP"}],
        "resources": _resources(vllm_size, gpu_resource, claims),
        "volumeMounts": vllm_mounts,
        "probes": True,
    }

    # LMCache MP server as a native sidecar (gpuAccess visible-devices or dra)
    sidecar = None
    if plan.sidecar:
        sidecar_env: list[dict[str, str]] = []
        if not dra:
            # see the GPUs it reads over CUDA IPC without taking GPUs of its own (README: GPU access modes)
            sidecar_env = [
                {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
            ]
        sidecar = {
            "name": "lmcache-mp-server",
            "image": lmcache_image(plan),
            "command": [lm["python"], launcher_path],
            "args": _lmcache_command(plan, sizing.LMCACHE_SERVER_OVERHEAD),
            "env": sidecar_env,
            "resources": _resources(s.lmcache, None, claims),
            "probeCommand": [lm["python"], "-c", connector.lmcache_health_probe()],
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, launcher_mount, *tier_mounts],
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
    resource_claims = [{"name": gpu_access.CLAIM_NAME, "resourceClaimTemplateName": claim_template["name"]}] if dra else []

    def pod(role: str | None) -> dict[str, Any]:
        """The pod of a single-node server (role None), or of rank 0 / the other ranks."""
        role_labels = {ROLE_LABEL: role} if role else {}
        vllm = dict(vllm_container)
        if role == "worker":  # ranks 1.. run engine workers only: no API server, no HTTP probes
            vllm["args"] = [*lmcache_prefix, *args[:rank_args_end], "--headless", *args[rank_args_end:]]
            vllm["probes"] = False
        return {
            "selector": {**selector, **role_labels},
            "labels": {**labels, **role_labels},
            "annotations": pod_annotations,
            "resourceClaims": resource_claims,
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
        "claim_template": claim_template,
        "workloads": workloads,
        "node_selector": node_selector,
        "tolerations": spec.scheduling.tolerations,
        "affinity": spec.scheduling.affinity,
        "priority_class_name": spec.scheduling.priority_class_name,
    }
