"""From a plan to the context (kvgen.context.types.Context): the values the object templates lay out.

Built in named pieces, each mirrored by one ``define`` of the chart (templates/context/_context.tpl) with
the same name: ``meta`` is ``kvgen.context.meta``, ``vllm_args`` is ``kvgen.context.vllmArgs``,
and so on (a test holds the two lists together). Every literal that wires the pieces together
(hosts, ports, paths, label and annotation keys) is data: ``wiring`` in files/runtime.yaml.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from kvgen.context.types import (
    Context,
    DownloadContainer,
    Gpus,
    KubeObject,
    Launcher,
    LMCache,
    Meta,
    Pod,
    ProbeSet,
    Resources,
    Routing,
    Service,
    Sidecar,
    Strategy,
    Tier,
    VllmArgs,
    VllmContainer,
    Workload,
)
from kvgen.core import paths, quantity
from kvgen.data import catalog, connector, flags
from kvgen.plan.types import WORKER_SUFFIX, ContainerSize, Plan, with_server
from kvgen.spec.models import RoutingScorers, Spec


def number(x: float) -> str:
    """A number as Go's %v prints it (shortest round-trip form, no trailing .0), so that the
    Helm chart can produce the same argument strings: 0.92 -> "0.92", 1.0 -> "1"."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def resources(
    size: ContainerSize, requested: dict[str, int] | None = None, claims: list[dict[str, str]] | None = None
) -> Resources:
    """Requests and limits of a sized container, with its device-plugin GPUs or its DRA claims
    (the chart's kvgen.resources)."""
    requests: dict[str, Any] = {}
    if size.cpu:
        requests["cpu"] = size.cpu.text
    requests["memory"] = quantity.format_bytes(size.memory)
    if size.ephemeral:
        requests["ephemeral-storage"] = quantity.format_bytes(size.ephemeral)
    limits: dict[str, Any] = {}
    if size.cpu_limit:
        limits["cpu"] = size.cpu_limit.text
    limits["memory"] = quantity.format_bytes(size.limit)
    if size.ephemeral_limit is not None:
        limits["ephemeral-storage"] = quantity.format_bytes(size.ephemeral_limit)
    for name, count in (requested or {}).items():
        requests[name] = count
        limits[name] = count
    out: Resources = {"requests": requests, "limits": limits}
    if claims:
        out["claims"] = claims
    return out


# ----------------------------------------------------------------------------- the pieces


def meta(plan: Plan) -> Meta:
    """Labels, the selector and the annotations that record the decision."""
    spec, d, w = plan.spec, plan.decision, connector.wiring()
    key, note = w["labels"], w["annotations"]
    selector = {key["name"]: "vllm", key["instance"]: spec.object_name}
    role = spec.disaggregation.role
    labels = {
        **selector,
        key["component"]: "inference" if role == "none" else role,
        key["version"]: plan.layout.vllm_tag,
        key["partOf"]: spec.object_name,
        key["managedBy"]: "kvgen",
    }
    labels = {**spec.common_labels, **labels}  # never in a selector; kvgen's own keys are refused there
    annotations = {note["offloading"]: "enabled" if d.enabled else "disabled"}
    if d.enabled:
        annotations[note["backend"]] = plan.spec.kv_cache_offloading.backend
    else:
        assert d.reason_code is not None, "a disabled decision names its rule"
        annotations[note["reason"]] = d.reason_code
    if plan.gpu_access is not None:
        annotations[note["gpuAccess"]] = plan.gpu_access.mode
    return {"labels": labels, "selector": selector, "annotations": annotations}


def vllm_args(plan: Plan) -> VllmArgs:
    """`vllm serve`'s arguments (the image's entrypoint; the model is its positional argument)."""
    spec, p, backend = plan.spec, plan.spec.parallelism, plan.backend
    head = [spec.model.id, f"--port={spec.service.port}", f"--tensor-parallel-size={p.tensor}"]
    if plan.layout.model_local:  # vLLM serves the mounted directory, under the model's id
        head[0] = plan.layout.model_dir  # one path per model and revision: LMCache's keys (a shared tier)
        if not any(flags.flag_name(a) == "--served-model-name" for a in spec.vllm.extra_args):
            head.insert(1, f"--served-model-name={spec.model.id}")
    if p.pipeline > 1:
        head.append(f"--pipeline-parallel-size={p.pipeline}")
    if p.data > 1:
        head.append(f"--data-parallel-size={p.data}")
    if plan.lws:  # the LWS controller gives every container the group's leader and the pod's index
        lws = connector.wiring()["lws"]
        head += [
            f"--nnodes={p.nodes}",
            f"--node-rank=$({lws['workerIndexEnv']})",
            f"--master-addr=$({lws['leaderAddressEnv']})",
            f"--master-port={connector.wiring()['masterPort']}",
        ]
    elif plan.multi_node:
        head += [
            f"--nnodes={p.nodes}",
            "--node-rank=$(NODE_RANK)",
            f"--master-addr={spec.name}-0.{headless_name(plan)}",  # the pod's DNS search path adds its namespace
            f"--master-port={connector.wiring()['masterPort']}",
        ]
    tail: list[str] = []
    if plan.context_length.flag:  # the spec's model.maxModelLen, or the longest length that fits (kvgen.plan.kvcache)
        tail.append(f"--max-model-len={plan.context_length.flag}")
    if plan.instance.gpus:
        tail.append(f"--gpu-memory-utilization={number(spec.vllm.gpu_memory_utilization)}")
    kv_config = None
    if backend == "lmcache":
        kv_config = connector.lmcache_kv_transfer_config(connector.lmcache_server_urls(lmcache_server_hosts(plan)))
    elif backend == "native":
        o = spec.kv_cache_offloading
        kv_config = connector.native_kv_transfer_config(
            plan.sizing.cpu_tier, o.eviction_policy, len(o.secondary), o.spec_name
        )
        if spec.disaggregation.role != "none":  # NIXL hands the KV over, the OffloadingConnector keeps its tiers
            kv_config = connector.multi_kv_transfer_config(kv_config)
    elif spec.disaggregation.role != "none":
        kv_config = connector.nixl_kv_transfer_config()
    if kv_config:
        tail.append(f"--kv-transfer-config={connector.dumps(kv_config)}")
    if backend == "native" and plan.model.hybrid:
        tail.append("--enable-prefix-caching")  # vLLM: hybrid models need it to align block sizes
    # model.cache: the init container downloads --revision; the local directory has none
    tail += plan.layout.extra_args
    return {"head": head, "tail": tail}


def lmcache_server_hosts(plan: Plan) -> list[str]:
    """A server spanning several nodes: the DNS name of every node's pod, in node-rank order, each
    pod running its own LMCache server (none for a single-node server: its server is on loopback).
    The StatefulSets' pods are <sts>-<ordinal>.<headless Service>; a LeaderWorkerSet group's are
    <lws>-<group> (the leader) and <lws>-<group>-<index>, all in the subdomain <lws>, the group's
    index from ``lws.groupIndexEnv`` (``env``). The pods' DNS search path adds the namespace."""
    spec, nodes = plan.spec, plan.spec.parallelism.nodes
    if not plan.multi_node:
        return []
    if plan.lws:
        lws = connector.wiring()["lws"]
        leader = f"{spec.name}-$({lws['groupIndexEnv']})"
        return [f"{leader}.{spec.name}", *(f"{leader}-{rank}.{spec.name}" for rank in range(1, nodes))]
    headless = headless_name(plan)
    return [f"{spec.name}-0.{headless}", *(f"{spec.name}{WORKER_SUFFIX}-{rank}.{headless}" for rank in range(1, nodes))]


def _hf_token_env(spec: Spec) -> list[KubeObject]:
    """HF_TOKEN from model.hfTokenSecret as a secretKeyRef (never a value), for vLLM and the download."""
    ref = spec.model.hf_token_secret
    if not ref:
        return []
    key_ref: dict[str, Any] = {"name": ref.name, "key": ref.key}
    if ref.optional is not None:
        key_ref["optional"] = ref.optional
    return [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": key_ref}}]


def env(plan: Plan) -> list[KubeObject]:
    """The vLLM container's environment: kvgen's variables, then the spec's."""
    spec = plan.spec
    out: list[KubeObject] = []
    if plan.multi_node and not plan.lws:
        index = connector.wiring()["labels"]["podIndex"]
        out.append({"name": "NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{index}']"}}})
    if plan.lws and plan.backend == "lmcache":  # the group's index names its pods in lmcache.mp.server_urls
        lws = connector.wiring()["lws"]
        field = f"metadata.labels['{lws['groupIndexLabel']}']"
        out.append({"name": lws["groupIndexEnv"], "valueFrom": {"fieldRef": {"fieldPath": field}}})
    out.extend(_hf_token_env(spec))
    if spec.service.api_key_secret:  # vLLM requires it of every /v1 request (entrypoints/serve/middleware)
        api_key = spec.service.api_key_secret
        out.append({"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {"name": api_key.name, "key": api_key.key}}})
    if spec.disaggregation.role != "none":
        out.append({"name": "VLLM_NIXL_SIDE_CHANNEL_HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
    if plan.layout.model_local:  # the weights are on the claim: never ask the Hub (air-gapped clusters)
        out.append({"name": "HF_HUB_OFFLINE", "value": "1"})
    if not plan.instance.gpus:
        out.append({"name": "VLLM_CPU_KVCACHE_SPACE", "value": str(plan.layout.cpu_backend_kv_space_gib)})
    out += plan.layout.gpu_env  # dra: only the claimed GPUs (files/gpu-access.yaml)
    out += [e.model_dump(by_alias=True, exclude_none=True) for e in spec.vllm.env]
    return out


def gpus(plan: Plan) -> Gpus:
    """The pod's GPUs: a device-plugin request, or (gpuAccess dra) one claim the sidecar lists too."""
    access = plan.gpu_access
    if access is not None and access.mode == "dra":
        assert access.device_class_name is not None, "gpuAccess dra always has a device class"
        name = plan.layout.gpu_claim_name
        return {
            "claims": [{"name": name}],
            "claimTemplate": {
                "name": f"{plan.spec.name}-{name}",
                "request": name,
                "deviceClassName": access.device_class_name,
                "count": plan.gpus_per_pod,
            },
        }
    if plan.instance.gpus:
        mig = plan.instance.mig
        return {"resources": {f"nvidia.com/mig-{mig}" if mig else "nvidia.com/gpu": plan.gpus_per_pod}}
    return {}


def tiers(plan: Plan) -> list[Tier]:
    """The disk tiers (while offloading is on): volume, mount and known size of each."""
    out: list[Tier] = []
    if plan.backend is None:
        return out
    for i, tier in enumerate(plan.spec.kv_cache_offloading.secondary):
        fs = tier.file_system
        name = f"kv-cache-secondary-{i}"
        t: Tier = {"volume": {"name": name}, "mount": {"name": name, "mountPath": connector.tier_path(i)}}
        pvc = fs.pvc
        if fs.empty_dir:
            t["volume"]["emptyDir"] = {"sizeLimit": fs.empty_dir.size.text}
        elif pvc is not None and pvc.spec is not None:
            t["volume"]["ephemeral"] = {"volumeClaimTemplate": {"spec": pvc.spec}}
        else:
            assert pvc is not None and pvc.ref is not None, "a tier is an emptyDir, a PVC spec or a PVC ref"
            t["volume"]["persistentVolumeClaim"] = {"claimName": pvc.ref.name}
            if pvc.ref.path:
                t["mount"]["subPath"] = pvc.ref.path
        capacity = plan.layout.tier_capacities[i]  # the plan's: an emptyDir's size, a claim template's request
        if capacity is not None:
            t["capacity"] = capacity
        out.append(t)
    return out


def launcher_script() -> str:
    return (paths.files_dir() / connector.wiring()["launcher"]["file"]).read_text(encoding="utf-8")


def lmcache(plan: Plan, disk: list[Tier]) -> LMCache | None:
    """The LMCache server (None without one): its launcher ConfigMap, and the launcher's command
    line where the server runs. The launcher measures the node and adds --l1-size-gb."""
    if plan.gpu_access is None:
        return None
    s, o, w = plan.sizing, plan.spec.kv_cache_offloading, connector.wiring()
    script = launcher_script()
    launcher: Launcher = {
        "name": f"{plan.spec.name}-lmcache-launcher",
        "file": w["launcher"]["file"],
        "script": script,
        "sha256": hashlib.sha256(script.encode()).hexdigest(),
    }
    args: list[str] = []
    if s.utilization is not None:
        args.append(f"--utilization={number(s.utilization)}")
        # what the utilization is a share of: the pod's RAM for the whole tier, or KAITO's per rank
        args.append(f"--utilization-scope={o.lmcache.utilization_scope}")
    args.append(f"--tensor-parallel-size={plan.spec.parallelism.tensor}")
    if s.l1_cap is not None:
        args.append(f"--max-bytes={s.l1_cap}")
    # the memory the launcher leaves to others in its cgroup: the server's process, and vLLM's in-container
    reserve = plan.layout.lmcache_server_overhead + (s.vllm.limit if plan.in_container else 0)
    args += [
        f"--reserve-bytes={reserve}",
        f"--initial-gb={plan.layout.lmcache_l1_init_gib}",
        *connector.lmcache_version_args(server_urls=plan.multi_node),
        # LMCache's CUDA kernels load, or the launcher refuses to start (kvCacheOffloading.lmcache.allowTorchFallback)
        f"--kernels={'optional' if plan.spec.kv_cache_offloading.lmcache.allow_torch_fallback else 'required'}",
    ]
    grace = launcher_grace_period(plan)
    if grace is not None:
        args.append(f"--grace-period={grace}")
    if plan.in_container:
        args += connector.lmcache_health_args()
    args.append("--")
    capacities = [t.get("capacity") for t in disk]
    tier = plan.layout.remote_adapter
    args += connector.lmcache_server_argv(
        o.eviction_policy,
        capacities,
        plan.layout.lmcache_l1_init_gib,
        tier,
        scraped=lmcache_scraped(plan),
        multi_node=plan.multi_node,
    )
    if plan.in_container:  # no sidecar: the launcher runs `lmcache server`, waits for it, then vLLM
        args += [w["launcher"]["then"], *catalog.runtime()["vllm"]["entrypoint"]]
    python = catalog.runtime()["lmcache"]["python"]
    return {"launcher": launcher, "command": [python, connector.launcher_path()], "args": args}


def launcher_grace_period(plan: Plan) -> int | None:
    """pod.terminationGracePeriodSeconds set: the launcher's --grace-period, the kubelet's less
    wiring.launcher.graceMarginSeconds (at least 1), so that the launcher, not the kubelet, stops
    what is left; unset, the launcher's own default (below Kubernetes' 30 s)."""
    seconds = plan.spec.pod.termination_grace_period_seconds
    if seconds is None:
        return None
    return max(seconds - connector.wiring()["launcher"]["graceMarginSeconds"], 1)


def lmcache_scraped(plan: Plan) -> bool:
    """A PodMonitor scrapes the LMCache server (metrics.podMonitor and metrics.lmcacheServer)."""
    m = plan.spec.metrics
    return plan.gpu_access is not None and m.pod_monitor and m.lmcache_server


def _lmcache_port() -> KubeObject:
    lm = connector.wiring()["lmcache"]
    return {"name": lm["httpPortName"], "containerPort": lm["httpPort"], "protocol": "TCP"}


def probes(plan: Plan) -> ProbeSet:
    """vLLM's probe timings (spec probes; the startup probe's failureThreshold sized from the
    weights unless the spec sets it: the plan's facts)."""
    p = plan.spec.probes
    thresholds = {
        "startup": plan.layout.startup_failure_threshold,
        "readiness": p.readiness.failure_threshold,
        "liveness": p.liveness.failure_threshold,
    }
    out = {
        name: {
            "periodSeconds": t.period_seconds,
            "timeoutSeconds": t.timeout_seconds,
            "failureThreshold": thresholds[name],
        }
        for name, t in (("startup", p.startup), ("readiness", p.readiness), ("liveness", p.liveness))
    }
    for name, t in (("startup", p.startup), ("readiness", p.readiness), ("liveness", p.liveness)):
        if t.initial_delay_seconds is not None:
            out[name]["initialDelaySeconds"] = t.initial_delay_seconds
    return out  # type: ignore[return-value]


def _launcher_mount() -> KubeObject:
    launcher = connector.wiring()["launcher"]
    return {"name": launcher["volume"], "mountPath": launcher["dir"], "readOnly": True}


def vllm(
    plan: Plan, args: VllmArgs, variables: list[KubeObject], devices: Gpus, disk: list[Tier], server: LMCache | None
) -> VllmContainer:
    """The vLLM container of rank 0 (or of a single-node server); with gpuAccess in-container it
    runs the launcher, which starts the LMCache server, then `vllm serve`."""
    s = plan.sizing
    mounts: list[KubeObject] = [
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "model-cache", "mountPath": connector.wiring()["modelCacheMount"]},
    ]
    weights = plan.layout.model_mount
    if weights is not None:
        mounts.append(weights)
    mounts += plan.spec.vllm.volume_mounts  # the spec's, after kvgen's own
    size = s.vllm
    if plan.backend == "native":
        mounts += [t["mount"] for t in disk]
    c: dict[str, Any] = {"name": "vllm", "image": plan.layout.vllm_image}
    policy = plan.layout.vllm_pull_policy
    if policy:
        c["imagePullPolicy"] = policy
    if plan.in_container and server is not None:
        mounts += [_launcher_mount(), *(t["mount"] for t in disk)]
        size = with_server(s.vllm, plan.server_size)
        c["command"] = server["command"]
    c["args"] = [*_launcher_args(plan, server), *args["head"], *args["tail"]]
    if plan.in_container and server is not None:  # the LMCache server runs here: the remote tier's password
        variables = [*variables, *plan.layout.remote_env]
    if plan.spec.vllm.env_from:
        c["envFrom"] = [e.model_dump(by_alias=True, exclude_none=True) for e in plan.spec.vllm.env_from]
    if variables:
        c["env"] = variables
    c["ports"] = [{"name": "http", "containerPort": plan.spec.service.port, "protocol": "TCP"}]
    if plan.in_container and server is not None and lmcache_scraped(plan):
        c["ports"].append(_lmcache_port())
    extended = {**devices.get("resources", {}), **plan.spec.resources.extra}  # RDMA devices beside the GPUs
    c["resources"] = resources(size, extended, devices.get("claims"))
    c["probes"] = probes(plan)
    c["volumeMounts"] = mounts
    c["securityContext"] = plan.layout.container_security_context
    return c  # type: ignore[return-value]


def download(plan: Plan) -> DownloadContainer | None:
    """model.cache with download: the init container that fills the claim with `hf download`
    (files already there are skipped), the vLLM image's own huggingface_hub CLI. HF_TOKEN from
    model.hfTokenSecret (never --token), HF_HOME on the model-cache emptyDir, then the spec's
    vllm.envFrom and vllm.env (a Hub mirror's HF_ENDPOINT, a proxy)."""
    spec = plan.spec
    if not plan.layout.downloads:
        return None
    w = connector.wiring()
    d = w["modelDownload"]
    c: dict[str, Any] = {"name": d["container"], "image": plan.layout.vllm_image}
    policy = plan.layout.vllm_pull_policy
    if policy:
        c["imagePullPolicy"] = policy
    c["command"] = list(d["command"])
    c["args"] = plan.layout.download_args
    variables: list[KubeObject] = []
    variables.extend(_hf_token_env(spec))
    variables.append({"name": "HF_HOME", "value": d["hfHome"]})
    variables += [{"name": k, "value": v} for k, v in d["env"].items()]
    variables += [e.model_dump(by_alias=True, exclude_none=True) for e in spec.vllm.env]
    if spec.vllm.env_from:
        c["envFrom"] = [e.model_dump(by_alias=True, exclude_none=True) for e in spec.vllm.env_from]
    c["env"] = variables
    memory = quantity.format_bytes(plan.layout.download_memory)
    c["resources"] = {"requests": {"cpu": plan.layout.download_cpu, "memory": memory}, "limits": {"memory": memory}}
    weights: KubeObject = {"name": w["modelPvc"]["volume"], "mountPath": plan.layout.model_dir}
    if plan.layout.cache_path is not None:
        weights["subPath"] = plan.layout.cache_path
    c["volumeMounts"] = [{"name": "model-cache", "mountPath": w["modelCacheMount"]}, weights]
    c["securityContext"] = plan.layout.container_security_context
    return c  # type: ignore[return-value]


def weights_claim(plan: Plan) -> KubeObject | None:
    """model.cache.claimTemplate: the StatefulSet's volumeClaimTemplate of the weights."""
    c = plan.spec.model.cache
    if c is None or c.claim_template is None:
        return None
    t = c.claim_template
    if t.size is not None:
        size = t.size.text
    else:  # the plan sized it from the checkpoint
        assert plan.layout.weights_claim_size is not None, "the plan sizes a claim template without a size"
        size = quantity.format_bytes(plan.layout.weights_claim_size)
    claim: dict[str, Any] = {"accessModes": list(t.access_modes)}
    if t.storage_class_name is not None:
        claim["storageClassName"] = t.storage_class_name
    claim["resources"] = {"requests": {"storage": size}}
    return {"metadata": {"name": connector.wiring()["modelPvc"]["volume"]}, "spec": claim}


def _launcher_args(plan: Plan, server: LMCache | None) -> list[str]:
    """gpuAccess in-container: the launcher's arguments before `vllm serve`'s."""
    return server["args"] if plan.in_container and server is not None else []


def sidecar(plan: Plan, devices: Gpus, disk: list[Tier], server: LMCache | None) -> Sidecar | None:
    """The LMCache MP server as a native sidecar (gpuAccess visible-devices or dra)."""
    if not plan.sidecar or server is None:
        return None
    c: dict[str, Any] = {
        "name": "lmcache-mp-server",
        "image": plan.layout.lmcache_image,
        "command": server["command"],
        "args": server["args"],
    }
    policy = plan.layout.lmcache_pull_policy
    if policy:
        c["imagePullPolicy"] = policy
    variables: list[KubeObject] = []
    if "claims" not in devices:
        # see the GPUs it reads over CUDA IPC without taking GPUs of its own (docs/gpu-access.md)
        variables += [
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
        ]
    else:  # dra: only the claimed GPUs (files/gpu-access.yaml)
        variables += plan.layout.gpu_env
    variables += plan.layout.remote_env  # the remote tier's password, from its Secret
    if variables:
        c["env"] = variables
    if lmcache_scraped(plan):
        c["ports"] = [_lmcache_port()]
    c["resources"] = resources(plan.server_size, None, devices.get("claims"))
    c["probeCommand"] = connector.lmcache_health_probe()
    c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}, _launcher_mount(), *(t["mount"] for t in disk)]
    c["securityContext"] = plan.layout.container_security_context
    return c  # type: ignore[return-value]


def volumes(plan: Plan, disk: list[Tier], server: LMCache | None) -> list[KubeObject]:
    """The pod's volumes: /dev/shm, the model cache, the launcher, the disk tiers."""
    s = plan.sizing
    out: list[KubeObject] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": quantity.format_bytes(s.shm)}},
        {"name": "model-cache", "emptyDir": {"sizeLimit": quantity.format_bytes(s.model_cache)}},
    ]
    weights = plan.layout.model_volume
    if weights is not None:
        out.append(weights)
    if server is not None:
        launcher = connector.wiring()["launcher"]
        out.append(
            {
                "name": launcher["volume"],
                "configMap": {"name": server["launcher"]["name"], "defaultMode": launcher["mode"]},
            }
        )
    return out + [t["volume"] for t in disk] + plan.spec.pod.volumes


def workloads(
    plan: Plan,
    m: Meta,
    args: VllmArgs,
    container: VllmContainer,
    side: Sidecar | None,
    pod_volumes: list[KubeObject],
    devices: Gpus,
    server: LMCache | None,
    fill: DownloadContainer | None = None,
) -> list[Workload]:
    """A Deployment, or the StatefulSets of rank 0 and ranks 1.. of a multi-node server, or its
    LeaderWorkerSet (leader and worker templates). model.cache.claimTemplate: every pod's own claim
    of the weights (volumeClaimTemplates, with its retention), a single-node server a StatefulSet."""
    spec, w = plan.spec, connector.wiring()
    claim = weights_claim(plan)
    annotations = dict(m["annotations"])
    if server is not None:  # a changed launcher rolls the pods
        annotations[w["annotations"]["launcherSha256"]] = server["launcher"]["sha256"]
    node_selector: dict[str, str] = {}
    if plan.instance.type and plan.instance.cloud_type:
        node_selector[w["labels"]["instanceType"]] = plan.instance.type
    node_selector.update(plan.instance.node_selector)  # your own nodes' labels (a catalog row's nodeSelector)
    node_selector.update(spec.scheduling.node_selector)
    account = plan.layout.service_account_name

    def pod(role: str | None) -> Pod:
        roles = {w["labels"]["nodeRole"]: role} if role else {}
        out: dict[str, Any] = {
            "selector": {**m["selector"], **roles},
            # pod.labels first (as written), and winning over commonLabels
            "labels": {**spec.pod.labels, **m["labels"], **spec.pod.labels, **roles},
            "annotations": {**spec.pod.annotations, **annotations},
        }
        if node_selector:
            out["nodeSelector"] = node_selector
        tolerations = plan.layout.tolerations  # dra: the GPU taint too
        if tolerations:
            out["tolerations"] = tolerations
        if spec.scheduling.affinity:
            out["affinity"] = spec.scheduling.affinity
        if spec.scheduling.priority_class_name:
            out["priorityClassName"] = spec.scheduling.priority_class_name
        if spec.scheduling.runtime_class_name:
            out["runtimeClassName"] = spec.scheduling.runtime_class_name
        if spec.scheduling.scheduler_name:
            out["schedulerName"] = spec.scheduling.scheduler_name
        if spec.pod.termination_grace_period_seconds is not None:
            out["terminationGracePeriodSeconds"] = spec.pod.termination_grace_period_seconds
        if spec.scheduling.topology_spread_constraints:
            out["topologySpreadConstraints"] = [
                c if "labelSelector" in c else {**c, "labelSelector": {"matchLabels": out["selector"]}}
                for c in spec.scheduling.topology_spread_constraints
            ]
        if account:
            out["serviceAccountName"] = account
        out["automountServiceAccountToken"] = spec.pod.service_account.automount_token
        if spec.pod.image_pull_secrets:
            out["imagePullSecrets"] = [{"name": s.name} for s in spec.pod.image_pull_secrets]
        out["securityContext"] = plan.layout.pod_security_context
        if "claimTemplate" in devices:
            out["resourceClaims"] = [
                {"name": plan.layout.gpu_claim_name, "resourceClaimTemplateName": devices["claimTemplate"]["name"]}
            ]
        if fill is not None:
            out["download"] = fill
        if side is not None:
            out["sidecar"] = side
        out["vllm"] = container
        if role == "worker":  # ranks 1.. run engine workers only: no API server, no HTTP probes
            headless = [*_launcher_args(plan, server), *args["head"], "--headless", *args["tail"]]
            out["vllm"] = {k: v for k, v in container.items() if k != "probes"}
            out["vllm"]["args"] = headless
        out["volumes"] = pod_volumes
        return out  # type: ignore[return-value]

    def claimed(loads: list[Workload]) -> list[Workload]:
        """model.cache.claimTemplate: each StatefulSet (or the LeaderWorkerSet) claims the weights per pod."""
        t = spec.model.cache.claim_template if spec.model.cache is not None else None
        if claim is None or t is None:
            return loads
        for load in loads:
            load["volumeClaimTemplates"] = [claim]
            load["claimRetention"] = {"whenDeleted": t.retention.when_deleted, "whenScaled": t.retention.when_scaled}
        return loads

    if not plan.multi_node and claim is not None:  # one claim per pod: a StatefulSet
        return claimed([{"kind": "StatefulSet", "name": spec.object_name, "replicas": spec.replicas, "pod": pod(None)}])
    if not plan.multi_node:
        startup = spec.probes.startup
        budget = (startup.initial_delay_seconds or 0) + startup.period_seconds * plan.layout.startup_failure_threshold
        if fill is not None:  # the init container's download comes first (model.cache.claim)
            budget += plan.layout.download_seconds
        deployment: Workload = {
            "kind": "Deployment",
            "name": spec.object_name,
            "replicas": spec.replicas,
            "progressDeadlineSeconds": budget + w["progressDeadlineMarginSeconds"],
            "strategy": deployment_strategy(plan),
            "pod": pod(None),
        }
        return [deployment]
    if plan.lws:  # one group of parallelism.nodes pods per replica: the leader (rank 0), then ranks 1..
        return claimed(
            [
                {
                    "kind": "LeaderWorkerSet",
                    "name": spec.object_name,
                    "replicas": spec.replicas,
                    "size": spec.parallelism.nodes,
                    "restartPolicy": w["lws"]["restartPolicy"],  # docs/multi-node.md: chosen knowingly
                    "pod": pod("leader"),
                    "workerPod": pod("worker"),
                }
            ]
        )
    return claimed(
        [
            {"kind": "StatefulSet", "name": spec.object_name, "replicas": 1, "pod": pod("leader")},
            {
                "kind": "StatefulSet",
                "name": f"{spec.name}{WORKER_SUFFIX}",
                "replicas": spec.parallelism.nodes - 1,
                "ordinalsStart": 1,
                "pod": pod("worker"),
            },
        ]
    )


def deployment_strategy(plan: Plan) -> Strategy:
    """The Deployment's strategy: deployment.strategy, its unset fields kvgen's default (RollingUpdate,
    maxSurge 0: a rollout never needs GPUs beyond the replicas'; maxUnavailable 1)."""
    default = connector.wiring()["deploymentStrategy"]
    given = plan.spec.deployment.strategy
    if given is not None and given.type == "Recreate":
        return {"type": "Recreate"}
    rolling = given.rolling_update if given is not None else None
    surge = rolling.max_surge if rolling is not None and rolling.max_surge is not None else default["maxSurge"]
    unavailable = (
        rolling.max_unavailable
        if rolling is not None and rolling.max_unavailable is not None
        else default["maxUnavailable"]
    )
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}


def keda_query(plan: Plan, namespace: str | None) -> str:
    """The load KEDA scales on: the spec's query, else the requests waiting in this Deployment's
    vLLM servers (series labelled namespace and pod, as the Prometheus Operator's monitors label them).
    Without a namespace in the spec (kustomize or Argo CD places the objects) the query has no
    namespace matcher: the pod name pattern alone selects the series."""
    k = plan.spec.autoscaling.keda  # type: ignore[union-attr]
    if k is not None and k.query is not None:
        return k.query
    where = f'namespace="{namespace}",' if namespace is not None else ""
    return f'sum(vllm:num_requests_waiting{{{where}pod=~"{plan.spec.object_name}-[a-z0-9]+-[a-z0-9]+"}})'


def operations(plan: Plan, m: Meta, loads: list[Workload]) -> dict[str, Any]:
    """The operations objects: the PodDisruptionBudget, the monitors, the autoscaler (each left out when off)."""
    spec, w = plan.spec, connector.wiring()
    out: dict[str, Any] = {}
    a = spec.autoscaling
    budget = spec.disruption_budget
    most = a.max_replicas if a is not None else spec.replicas
    if budget.enabled if budget.enabled is not None else most > 1:
        out["disruptionBudget"] = {
            "name": spec.name,
            "selector": m["selector"],
            "maxUnavailable": budget.max_unavailable,
        }
    metrics = spec.metrics
    labels = {**m["labels"], **metrics.labels}
    vllm_endpoint = {"port": "http", "path": w["vllmMetricsPath"], "interval": metrics.interval}
    if metrics.pod_monitor:
        endpoints = [vllm_endpoint]
        if lmcache_scraped(plan):
            lm = w["lmcache"]
            endpoints.append({"port": lm["httpPortName"], "path": lm["metricsPath"], "interval": metrics.interval})
        # the pods serving the API: rank 0 of a multi-node server (ranks 1.. serve no /metrics)
        selector = loads[0]["pod"]["selector"]
        out["podMonitor"] = {"name": spec.name, "labels": labels, "selector": selector, "endpoints": endpoints}
    if metrics.service_monitor:
        out["serviceMonitor"] = {
            "name": spec.name,
            "labels": labels,
            "selector": m["selector"],
            "endpoints": [vllm_endpoint],
        }
    if a is not None:
        scale = {"name": spec.name, "target": spec.name, "minReplicas": a.min_replicas, "maxReplicas": a.max_replicas}
        if a.keda is not None:
            if a.keda.polling_interval is not None:
                scale["pollingInterval"] = a.keda.polling_interval
            if a.keda.cooldown_period is not None:
                scale["cooldownPeriod"] = a.keda.cooldown_period
            scale["serverAddress"] = a.keda.server_address
            scale["query"] = keda_query(plan, spec.namespace)
            scale["threshold"] = a.keda.threshold
            out["scaledObject"] = scale
        elif a.hpa is not None:
            out["hpa"] = {**scale, "metrics": list(a.hpa.metrics)}
    return out


def picker_config(plan: Plan, disk: list[Tier]) -> dict[str, Any]:
    """The Endpoint Picker's EndpointPickerConfig (llm-d router v0.9.0): vLLM's metrics scraped from each
    server's API port, the scorers of routing.picker.scorers (a weight of 0 leaves one out), the
    approximate prefix index sized for this server (kvgen.plan.routing), the highest score picked."""
    picker = plan.spec.routing.picker
    weights = picker.scorers if picker is not None else RoutingScorers()
    rt, w = catalog.runtime()["picker"], connector.wiring()
    plugins: list[dict[str, Any]] = [
        {"type": "single-profile-handler"},
        {"type": "metrics-data-source", "parameters": {"scheme": "http", "path": w["vllmMetricsPath"]}},
        {"type": "core-metrics-extractor"},
    ]
    profile: list[dict[str, Any]] = []
    for kind, weight in (
        ("queue-scorer", weights.queue),
        ("kv-cache-utilization-scorer", weights.kv_cache_utilization),
        ("prefix-cache-scorer", weights.prefix_cache),
        ("no-hit-lru-scorer", weights.no_hit_lru),
    ):
        if not weight:
            continue
        if kind == "prefix-cache-scorer":
            capacity = plan.layout.lru_capacity
            plugins.append(
                {
                    "type": "approx-prefix-cache-producer",
                    "parameters": {
                        "autoTune": False,
                        "blockSizeTokens": plan.layout.block_size_tokens,
                        "maxPrefixTokensToMatch": rt["maxPrefixTokensToMatch"],
                        "lruCapacityPerServer": capacity,
                    },
                }
            )
        plugins.append({"type": kind})
        profile.append({"pluginRef": kind, "weight": weight})
    plugins.append({"type": "max-score-picker"})
    profile.append({"pluginRef": "max-score-picker"})
    return {
        "apiVersion": rt["configApiVersion"],
        "kind": "EndpointPickerConfig",
        "plugins": plugins,
        "schedulingProfiles": [{"name": "default", "plugins": profile}],
    }


def routing(plan: Plan, m: Meta, loads: list[Workload], disk: list[Tier]) -> dict[str, Any]:
    """routing.mode gateway: the InferencePool of the API pods (rank 0 of a multi-node server), its
    Endpoint Picker and the HTTPRoute to it (docs/routing.md); nothing for the other modes."""
    spec = plan.spec
    r = spec.routing
    if r.mode != "gateway":
        return {}
    assert r.gateway is not None, "kvgen.plan.routing.check requires routing.gateway"
    rt, key = catalog.runtime()["picker"], connector.wiring()["labels"]
    picker = r.picker
    replicas = picker.replicas if picker is not None else 1
    name = f"{spec.object_name}-epp"
    pool = f"{spec.object_name}-pool"
    pin = rt["image"]
    image = plan.layout.picker_image
    assert image is not None, "the plan relocates the picker's image for routing.mode gateway"
    selector = {key["name"]: "endpoint-picker", key["instance"]: spec.object_name}
    labels = {**m["labels"], **selector, key["component"]: "router", key["version"]: pin["tag"]}
    args = [
        f"--pool-name={pool}",
        f"--grpc-port={rt['grpcPort']}",
        f"--grpc-health-port={rt['grpcHealthPort']}",
        f"--metrics-port={rt['metricsPort']}",
        "--metrics-endpoint-auth=false",
        "--tracing=false",
        "--config-file=/config/config.json",
    ]
    if replicas > 1:
        args.append("--ha-enable-leader-election")
    parents: list[KubeObject] = []
    for ref in r.gateway.parent_refs:
        parent: KubeObject = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": ref.name}
        if ref.namespace is not None:
            parent["namespace"] = ref.namespace
        if ref.section_name is not None:
            parent["sectionName"] = ref.section_name
        parents.append(parent)
    out: Routing = {
        "pool": {
            "name": pool,
            "selector": loads[0]["pod"]["selector"],
            "targetPort": spec.service.port,
            "failureMode": picker.failure_mode if picker is not None else "FailOpen",
        },
        "picker": {
            "name": name,
            "replicas": replicas,
            "image": image,
            "labels": labels,
            "podLabels": {**spec.common_labels, **selector},
            "selector": selector,
            "args": args,
            "config": json.dumps(picker_config(plan, disk), indent=2, sort_keys=True),
            "leaderElection": replicas > 1,
            "grpcPort": rt["grpcPort"],
            "grpcHealthPort": rt["grpcHealthPort"],
            "metricsPort": rt["metricsPort"],
            "resources": copy.deepcopy(rt["resources"]),
        },
        "route": {
            "name": spec.object_name,
            "parentRefs": parents,
            "pathPrefix": r.gateway.path_prefix,
            "port": spec.service.port,
        },
        "provider": r.gateway.provider,
    }
    if r.gateway.hostnames:
        out["route"]["hostnames"] = list(r.gateway.hostnames)
    timeout = r.gateway.request_timeout
    if timeout is None and r.gateway.provider != "gke":
        timeout = rt["defaultRequestTimeout"]
    if timeout is not None:
        out["route"]["requestTimeout"] = timeout
    if r.gateway.provider == "istio":
        host = f"{name}.{spec.namespace}.svc.cluster.local" if spec.namespace else name
        out["destinationRule"] = {"name": name, "host": host}
    if r.gateway.provider == "gke":
        out["gke"] = {"healthPath": rt["gke"]["healthPath"], "backendTimeoutSec": rt["gke"]["backendTimeoutSec"]}
    return {"routing": out}


def api_service(plan: Plan, m: Meta, loads: list[Workload]) -> Service:
    """The Service of the API (rank 0 serves it), with the service section's metadata and
    load-balancer fields."""
    s = plan.spec.service
    out: Service = {
        "type": s.type,
        "port": s.port,
        "selector": loads[0]["pod"]["selector"],
        "labels": {**m["labels"], **s.labels},
        "ports": [{"name": "http", "port": s.port, "targetPort": "http", "protocol": "TCP"}],
    }
    for p in s.extra_ports:
        target = p.target_port if p.target_port is not None else p.port
        out["ports"].append({"name": p.name, "port": p.port, "targetPort": target, "protocol": p.protocol})
    annotations = {**plan.spec.common_annotations, **s.annotations}
    if annotations:
        out["annotations"] = annotations
    if s.load_balancer_class is not None:
        out["loadBalancerClass"] = s.load_balancer_class
    if s.external_traffic_policy is not None:
        out["externalTrafficPolicy"] = s.external_traffic_policy
    if s.load_balancer_source_ranges is not None:
        out["loadBalancerSourceRanges"] = list(s.load_balancer_source_ranges)
    r = plan.spec.routing
    if r.mode == "sessionAffinity":
        timeout = r.session_affinity.timeout_seconds if r.session_affinity is not None else 10800
        out["sessionAffinity"] = "ClientIP"
        out["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": timeout}}
    return out


def headless_name(plan: Plan) -> str:
    return f"{plan.spec.name}-headless"


# ----------------------------------------------------------------------------- the whole


def build(plan: Plan) -> Context:
    """The context of one plan (the chart's kvgen.context)."""
    spec = plan.spec
    m = meta(plan)
    args = vllm_args(plan)
    devices = gpus(plan)
    disk = tiers(plan)
    server = lmcache(plan, disk)
    container = vllm(plan, args, env(plan), devices, disk, server)
    fill = download(plan)
    side = sidecar(plan, devices, disk, server)
    loads = workloads(plan, m, args, container, side, volumes(plan, disk, server), devices, server, fill)
    c: Context = {
        "name": spec.object_name,
        **m,  # type: ignore[typeddict-item]
        "annotations": {**spec.common_annotations, **m["annotations"]},
        "service": api_service(plan, m, loads),
    }
    if spec.common_annotations:
        c["commonAnnotations"] = dict(spec.common_annotations)
    if plan.warnings:  # on the workloads' own metadata (not their pod templates): Argo CD and Flux show it
        c["annotations"] = {**c["annotations"], connector.wiring()["annotations"]["warnings"]: "\n".join(plan.warnings)}
    if spec.namespace is not None:
        c["namespace"] = spec.namespace
    if (plan.multi_node and not plan.lws) or (  # the LWS controller makes a LeaderWorkerSet's headless Service
        not plan.multi_node and weights_claim(plan) is not None  # a single-node StatefulSet's serviceName
    ):
        c["headless"] = {"name": headless_name(plan), "port": connector.wiring()["masterPort"]}
    if server is not None:
        c["launcher"] = server["launcher"]
    if "claimTemplate" in devices:
        c["claimTemplate"] = devices["claimTemplate"]
    if spec.pod.service_account.create:
        c["serviceAccount"] = {
            "name": plan.layout.service_account_name or spec.object_name,
            "automountToken": spec.pod.service_account.automount_token,
        }
    c["workloads"] = loads
    c.update(operations(plan, m, loads))  # type: ignore[typeddict-item]
    c.update(routing(plan, m, loads, disk))  # type: ignore[typeddict-item]
    if spec.extra_objects:
        c["extraObjects"] = copy.deepcopy(list(spec.extra_objects))
    d = plan.decision
    if d.enabled:
        c["decision"] = {"enabled": True}
    else:
        assert d.reason_code is not None and d.reason is not None, "a disabled decision names its rule"
        c["decision"] = {"enabled": False, "code": d.reason_code, "reason": d.reason}
    if plan.gpu_access is not None:
        a = plan.gpu_access
        c["gpuAccess"] = {"mode": a.mode, "summary": a.summary, "requirement": a.requirement}
        if a.device_class_name is not None:
            c["gpuAccess"]["deviceClassName"] = a.device_class_name
    if plan.warnings:
        c["warnings"] = list(plan.warnings)
    return c


# the pieces in the order build() calls them, each the Python face of `kvgen.context.<camelName>`
PIECES = (meta, vllm_args, env, gpus, tiers, lmcache, vllm, download, sidecar, volumes, workloads, operations, routing)
