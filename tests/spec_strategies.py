"""Hypothesis strategies for native specs, shared by the chart property tests and the emulator.

``draws()`` is the raw draw across backends, GPU access modes, disk tiers, parallelism, catalog and
inline instances, catalog models, explicit resources and images, pod settings and extraObjects.
``specs()`` repairs each draw into a spec kvgen accepts (parallelism that fits the node, a model
that fits the GPUs, requests under limits, one object per name, ...): valid by construction, so a
property test spends its budget comparing renders, not throwing draws away. What the repair takes
out is what BREAKAGES puts back, one broken field at a time, for the refusal tests.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from kvgen.core import quantity
from kvgen.data import catalog

MODELS = sorted(catalog.models())
INSTANCES = sorted(catalog.instances())
SIZES = ["4Gi", "10Gi", "32Gi", "1536Mi", "20000Mi", "1.5Gi", "100G", "64Gi", "120Gi"]
UTILIZATIONS = [0.0, 0.1, 0.25, 0.3, 0.5, 0.75]


def maybe(strategy):
    return st.none() | strategy


@st.composite
def tiers(draw):
    kind = draw(st.sampled_from(["emptyDir", "pvcSpec", "pvcRef", "pvcSpecSmall"]))
    if kind == "emptyDir":
        return {"fileSystem": {"emptyDir": {"size": draw(st.sampled_from(["50Gi", "100Gi", "200Gi", "512Mi", "1Ti"]))}}}
    if kind == "pvcSpec":
        return {
            "fileSystem": {
                "pvc": {
                    "spec": {
                        "storageClassName": draw(st.sampled_from(["fast-local-nvme", "premium-ssd"])),
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": draw(st.sampled_from(["100Gi", "500Gi", "2Ti"]))}},
                    }
                }
            }
        }
    if kind == "pvcSpecSmall":  # below 1 GiB: an LMCache fs adapter without a capacity
        return {
            "fileSystem": {
                "pvc": {
                    "spec": {
                        "storageClassName": "nfs",
                        "accessModes": ["ReadWriteMany"],
                        "resources": {"requests": {"storage": "512Mi"}},
                    }
                }
            }
        }
    ref = {"name": draw(st.sampled_from(["shared-cephfs-pvc", "kv-cache"]))}
    if draw(st.booleans()):
        ref["path"] = draw(st.sampled_from(["kv-cache/", "a/b"]))
    return {"fileSystem": {"pvc": {"ref": ref}}}


@st.composite
def instances(draw):
    if draw(st.integers(0, 11)) == 0:  # a node named by no type and no memory (KServe input): fit unchecked
        inst = {"gpus": draw(st.sampled_from([0, 1, 2, 4]))}
        if inst["gpus"]:
            inst.update(draw(st.sampled_from([{}, {"gpuMemory": "80Gi"}, {"mig": "3g.40gb"}])))
        if draw(st.booleans()):
            inst["arch"] = "arm64"
        return inst
    if draw(st.integers(0, 9)) > 0:
        inst = {"type": draw(st.sampled_from(INSTANCES))}
        if draw(st.integers(0, 9)) == 0:
            inst["mig"] = draw(st.sampled_from(["3g.40gb", "7g.80gb"]))
        if draw(st.integers(0, 2)) == 0:  # a node pool with the kubelet on NVMe
            inst["ephemeralStorage"] = draw(st.sampled_from(["200Gi", "3Ti", "30Ti"]))
        return inst
    gpus = draw(st.sampled_from([0, 1, 2, 4, 8]))
    inst = {
        "gpus": gpus,
        "memory": draw(st.sampled_from(["128Gi", "440Gi", "1800Gi"])),
        "arch": draw(st.sampled_from(["amd64", "arm64"])),
    }
    if gpus:
        inst["gpuMemory"] = draw(st.sampled_from(["80Gi", "141Gi", "192Gi"]))
    if draw(st.booleans()):
        inst["cpu"] = draw(st.sampled_from([16, 48, 96]))
    if draw(st.booleans()):
        inst["localDisk"] = draw(st.sampled_from(["960Gi", "3840Gi", "30Ti"]))
    if draw(st.booleans()):
        inst["ephemeralStorage"] = draw(st.sampled_from(["100Gi", "2Ti"]))
    if draw(st.booleans()):
        inst["type"] = draw(st.sampled_from(["custom-gpu-node", "on-prem-a100"]))
    return inst


def _image(repository: str, tag: str, digest_hex: str) -> st.SearchStrategy[dict[str, str]]:
    """images.<name>: any of a repository, a tag and a digest."""
    return st.fixed_dictionaries(
        {},
        optional={
            "repository": st.just(repository),
            "tag": st.just(tag),
            "digest": st.just("sha256:" + digest_hex * 64),
        },
    )


@st.composite
def draws(draw):
    model = {"id": draw(st.sampled_from(MODELS))}
    if draw(st.integers(0, 4)) == 0:
        model["maxModelLen"] = draw(st.sampled_from([4096, 8192, 32768, 131072]))
    if draw(st.booleans()):
        model["hfTokenSecret"] = {"name": "hf-token", "key": "HF_TOKEN"}
        if draw(st.booleans()):
            model["hfTokenSecret"]["optional"] = draw(st.booleans())
    nodes = draw(st.sampled_from([1, 1, 1, 2]))
    parallelism = {
        "tensor": draw(st.sampled_from([1, 2, 4, 8])),
        "pipeline": draw(st.sampled_from([1, 1, 2])),
        "data": draw(st.sampled_from([1, 1, 1, 2])),
        "nodes": nodes,
    }
    offload: dict = {"backend": draw(st.sampled_from(["lmcache", "native"]))}
    if draw(st.integers(0, 9)) == 0:
        offload["enabled"] = False
    util = draw(maybe(st.sampled_from(UTILIZATIONS)))
    cpu = draw(maybe(st.sampled_from(SIZES)))
    if offload["backend"] == "native" and cpu is None and util != 0.0:
        cpu = draw(st.sampled_from(SIZES))
    if util is not None:
        offload["cpuMemoryUtilization"] = util
    if cpu is not None:
        offload["cpu"] = cpu
    offload["evictionPolicy"] = draw(st.sampled_from(["lru", "arc"]))
    offload["secondary"] = draw(st.lists(tiers(), max_size=3))
    offload["allowHybrid"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:  # CPUOffloadingSpec with tiers is refused by both
        offload["specName"] = draw(st.sampled_from(["TieringOffloadingSpec", "CPUOffloadingSpec"]))
    if draw(st.integers(0, 3)) == 0:  # a shared Valkey/Redis tier (refused with native and for a bad URL by both)
        offload["remote"] = draw(
            st.fixed_dictionaries(
                {
                    "url": st.sampled_from(
                        [
                            "redis://valkey.cache.svc:6379",
                            "valkey://10.0.0.7",
                            "rediss://valkey:6380",
                            "redis://u:p@valkey",
                            "redis://valkey/1",
                            "redis://valkey:0",
                        ]
                    )
                },
                optional={
                    "username": st.just("kvgen"),
                    "passwordSecret": st.just({"name": "valkey-auth", "key": "password"}),
                    "capacity": st.sampled_from(["100Gi", "512Mi", 1073741824]),
                },
            )
        )
    if draw(st.booleans()):
        offload["lmcache"] = {"gpuAccess": draw(st.sampled_from(["visible-devices", "dra", "in-container"]))}
        if draw(st.integers(0, 3)) == 0:
            offload["lmcache"]["deviceClassName"] = draw(st.sampled_from(["gpu.nvidia.com", "a100.gpu.example.com"]))
    spec = {
        "name": draw(st.from_regex(r"[a-z][a-z0-9-]{0,12}[a-z0-9]", fullmatch=True)),
        "model": model,
        "instance": draw(instances()),
        "parallelism": parallelism,
        "kvCacheOffloading": offload,
        "multiNode": {"engine": draw(st.sampled_from(["statefulset", "leaderworkerset"]))},
        "disaggregation": {"role": draw(st.sampled_from(["none", "none", "none", "prefill", "decode"]))},
        "vllm": {
            "gpuMemoryUtilization": draw(st.sampled_from([0.8, 0.9, 0.92, 0.95, 1])),
            "extraArgs": draw(
                st.lists(
                    st.sampled_from(
                        [
                            "--max-num-seqs=64",
                            "--enable-chunked-prefill",
                            "--served-model-name=chat",
                            "--max-num-batched-tokens=16384",
                        ]
                    ),
                    max_size=2,
                    unique=True,
                )
            ),
            "env": draw(
                st.lists(
                    st.sampled_from(
                        [
                            {"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"},
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        ]
                    ),
                    max_size=2,
                    unique_by=lambda e: e["name"],
                )
            ),
        },
        "service": {
            "port": draw(st.sampled_from([8000, 8080])),
            "type": draw(st.sampled_from(["ClusterIP", "LoadBalancer"])),
        },
    }
    if nodes == 1:
        spec["replicas"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        spec["namespace"] = draw(st.sampled_from(["default", "llm", "team-a"]))
    if draw(st.integers(0, 3)) == 0:
        spec["resources"] = {
            "vllm": {
                "requests": draw(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "cpu": st.sampled_from(["4", "500m", 6]),
                            "memory": st.sampled_from(["32Gi", "100Gi"]),
                            "ephemeral-storage": st.sampled_from(["300Gi"]),
                        },
                    )
                ),
                # limits below the computed requests lower them (cpu 2, ephemeral-storage 20Gi)
                "limits": draw(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "cpu": st.sampled_from(["8", "2"]),
                            "memory": st.sampled_from(["64Gi", "200Gi"]),
                            "ephemeral-storage": st.sampled_from(["20Gi", "2Ti"]),
                        },
                    )
                ),
            },
            "lmcacheServer": {
                "requests": draw(st.fixed_dictionaries({}, optional={"memory": st.sampled_from(["20Gi"])})),
                "limits": draw(st.fixed_dictionaries({}, optional={"ephemeral-storage": st.sampled_from(["500Gi"])})),
            },
        }
        if draw(st.booleans()):
            spec["resources"]["shm"] = draw(st.sampled_from(["16Gi", "64Gi"]))
        if draw(st.booleans()):
            spec["resources"]["modelCache"] = "900Gi"
    if draw(st.integers(0, 4)) == 0:
        spec["images"] = {
            "vllm": draw(_image("mirror.example/vllm", "v0.33.1", "a")),
            "lmcache": draw(_image("lmcache/standalone", "v0.5.6", "b")),
        }
    if draw(st.integers(0, 3)) == 0:
        spec["scheduling"] = {
            "nodeSelector": {"pool": "gpu"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "priorityClassName": "inference",
        }
    if draw(st.integers(0, 2)) == 0:  # pod settings: labels, ServiceAccount, security contexts, volumes, spread
        spec["pod"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "labels": st.just({"team": "ml"}),
                    "annotations": st.just({"example.com/owner": "ml"}),
                    "imagePullSecrets": st.just([{"name": "registry"}]),
                    "serviceAccount": st.fixed_dictionaries(
                        {},
                        optional={
                            "create": st.booleans(),
                            "name": st.just("inference"),
                            "automountToken": st.booleans(),
                        },
                    ),
                    "securityContext": st.sampled_from(
                        [{"runAsNonRoot": True, "runAsUser": 1000}, {"seccompProfile": {"type": "Unconfined"}}]
                    ),
                    "containerSecurityContext": st.sampled_from(
                        [{"capabilities": {"add": ["IPC_LOCK"]}}, {"readOnlyRootFilesystem": True}]
                    ),
                    "volumes": st.just([{"name": "certs", "secret": {"secretName": "ca"}}]),
                },
            )
        )
        if "volumes" in spec["pod"] and draw(st.booleans()):
            spec["vllm"]["volumeMounts"] = [{"name": "certs", "mountPath": "/etc/ssl/internal", "readOnly": True}]
        spec.setdefault("scheduling", {}).update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "runtimeClassName": st.just("nvidia"),
                        "topologySpreadConstraints": st.just(
                            [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": "kubernetes.io/hostname",
                                    "whenUnsatisfiable": "ScheduleAnyway",
                                }
                            ]
                        ),
                    },
                )
            )
        )
    if draw(st.integers(0, 3)) == 0:  # issue 23's knobs (tests/test_chart_parity.py KNOBS)
        knobs = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "registry": st.sampled_from(["registry.example.com/mirror", "localhost:5000"]),
                    "vllm": st.sampled_from(["Always", "IfNotPresent", "Never"]),
                    "lmcache": st.sampled_from(["Always", "IfNotPresent"]),
                    "schedulerName": st.just("volcano"),
                    "grace": st.sampled_from([0, 3, 90]),
                    "envFrom": st.just(
                        [{"configMapRef": {"name": "tuning"}}, {"secretRef": {"name": "x"}, "prefix": "X_"}]
                    ),
                    "delay": st.sampled_from([0, 45]),
                    "strategy": st.sampled_from(
                        [
                            {"type": "Recreate"},
                            {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}},
                        ]
                    ),
                },
            )
        )
        images = spec.setdefault("images", {})
        if "registry" in knobs:
            images["registry"] = knobs["registry"]
        for name in ("vllm", "lmcache"):
            if name in knobs:
                images.setdefault(name, {})["pullPolicy"] = knobs[name]
        if "schedulerName" in knobs:
            spec.setdefault("scheduling", {})["schedulerName"] = knobs["schedulerName"]
        if "grace" in knobs:
            spec.setdefault("pod", {})["terminationGracePeriodSeconds"] = knobs["grace"]
        if "envFrom" in knobs:
            spec["vllm"]["envFrom"] = knobs["envFrom"]
        if "delay" in knobs:
            spec.setdefault("probes", {}).setdefault("startup", {})["initialDelaySeconds"] = knobs["delay"]
        if "strategy" in knobs:
            spec["deployment"] = {"strategy": knobs["strategy"]}
    if draw(st.integers(0, 4)) == 0:
        model["uri"] = draw(st.sampled_from(["pvc://model-store", "pvc://model-store/org/model/"]))
    if "uri" not in model and draw(st.integers(0, 4)) == 0:  # issue 24: weights on a claim (model.cache)
        model["cache"] = draw(
            st.sampled_from(
                [
                    {"claimTemplate": {}},
                    {
                        "claimTemplate": {
                            "storageClassName": "gp3",
                            "size": "500Gi",
                            "retention": {"whenScaled": "Delete"},
                        }
                    },
                    {"claim": {"name": "models"}},
                    {"claim": {"name": "models", "path": "/org/model/"}, "download": False},
                ]
            )
        )
    if draw(st.integers(0, 5)) == 0:  # issue 37: LoRA adapters (model.lora)
        pvc = [{"name": "tone", "uri": "pvc://adapters/tone/"}, {"name": "org/legal.v2", "uri": "pvc://adapters"}]
        hf = [
            {"name": "sql", "uri": "hf://acme/sql-lora"},
            {"name": "publishers/ns/models/sql", "uri": "hf://acme/sql-lora"},
        ]
        adapters = draw(st.sampled_from([pvc, pvc[:1]] + ([] if "uri" in model else [hf, hf + pvc])))
        lora: dict = {"adapters": adapters}
        if draw(st.booleans()):
            lora["maxRank"] = draw(st.sampled_from([8, 64, 320]))
        if draw(st.booleans()):
            lora["maxLoras"] = draw(st.integers(1, 4))
        if draw(st.booleans()):
            lora["maxCpuLoras"] = draw(st.integers(lora.get("maxLoras", len(adapters)), 8))
        model["lora"] = lora
    if draw(st.integers(0, 4)) == 0:
        spec.setdefault("resources", {})["extra"] = {"vpc.amazonaws.com/efa": draw(st.sampled_from([1, 4, 32]))}
    if draw(st.integers(0, 2)) == 0:  # issue 23: metadata of every object, the Service's load-balancer fields
        spec["commonLabels"] = {"team": "platform", "example.com/cost-center": "4711"}  # pod.labels' team wins
        spec["commonAnnotations"] = {"example.com/owner": "platform"}
        service = spec["service"]
        service.update(labels={"exposure": "internal"}, annotations={"example.com/owner": "api"})
        if service["type"] == "LoadBalancer":
            service.update(
                loadBalancerClass="service.k8s.aws/nlb",
                externalTrafficPolicy=draw(st.sampled_from(["Cluster", "Local"])),
                loadBalancerSourceRanges=["10.0.0.0/8", "fd00::/8"],
            )
    if (
        draw(st.integers(0, 3)) == 0
    ):  # issue 23: extraObjects, verbatim (a kind without a schema warns; twins are refused)
        name = spec.get("name", "x")
        pool = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "tuning"},
                "data": {"VLLM_LOGGING_LEVEL": "INFO"},
            },
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": f"{name}-ingress", "labels": {"team": "platform"}},
                "spec": {
                    "podSelector": {"matchLabels": {"app.kubernetes.io/part-of": name}},
                    "policyTypes": ["Ingress"],
                },
            },
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}},
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque"},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": {"ports": [{"port": 80}]}},
        ]
        spec["extraObjects"] = [copy.deepcopy(o) for o in draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))]
    return spec


# ----------------------------------------------------------------------------- valid by construction

GiB = 1024**3
WEIGHTS_SHARE = 0.55  # a model "fits" when its weights per GPU take at most this share of one GPU
BIG_DISK = "30Ti"  # a node pool with the kubelet on NVMe: room for any download and emptyDir tier
_VALID_URLS = ("redis://valkey.cache.svc:6379", "valkey://10.0.0.7")


def _size(value: Any) -> int:
    return value if isinstance(value, int) else quantity.to_bytes(str(value))


def node_gpus(instance: dict[str, Any]) -> tuple[int, int | None]:
    """GPUs of the node and the memory of one (None: unknown), as the spec's instance says."""
    row = catalog.instances().get(instance.get("type", ""))
    if row is not None and "gpus" not in instance:
        return int(row.get("gpus", 0)), _size(row["gpuMemory"]) if row.get("gpuMemory") else None
    gpus = int(instance.get("gpus", 0))
    return gpus, _size(instance["gpuMemory"]) if instance.get("gpuMemory") else None


def node_memory(instance: dict[str, Any]) -> int | None:
    row = catalog.instances().get(instance.get("type", ""))
    if "memory" in instance:
        return _size(instance["memory"])
    return _size(row["memory"]) if row is not None and row.get("memory") else None


def _fits(model_id: str, gpus_for_weights: int, gpu_memory: int | None) -> bool:
    if gpu_memory is None:
        return True
    weights = _size(catalog.models()[model_id]["weights"])
    return weights / gpus_for_weights <= WEIGHTS_SHARE * gpu_memory


def repair(spec: dict[str, Any], models: list[str] | None = None) -> dict[str, Any]:
    """The drawn spec, changed where it breaks one of kvgen's rules (see BREAKAGES for each rule
    broken on purpose). Deterministic: the same draw is repaired the same way. A model it swaps in
    is one of ``models`` (default: the catalog's)."""
    models = models or MODELS
    spec = copy.deepcopy(spec)
    inst, par, offload = spec["instance"], spec["parallelism"], spec["kvCacheOffloading"]
    gpus, gpu_memory = node_gpus(inst)
    if inst.get("mig"):
        gpus = 1  # one slice per pod
    # parallelism: a GPU per rank, the ranks of a node on that node, split evenly over the nodes
    if gpus == 0:
        par.update(tensor=1, pipeline=1, data=1, nodes=1)
    while par["tensor"] * par["pipeline"] * par["data"] > gpus * par["nodes"] and gpus:
        for key in ("data", "pipeline", "tensor"):
            if par[key] > 1:
                par[key] //= 2 if key == "tensor" else par[key]
                break
        else:
            break
    if (par["tensor"] * par["pipeline"] * par["data"]) % par["nodes"]:
        par["nodes"] = 1
    if par["nodes"] > 1:
        spec.pop("replicas", None)
        spec.pop("deployment", None)  # strategy: a Deployment's; a multi-node server is not one
    # the model: one whose weights fit the GPUs it is split over, and a context it can take
    model = spec["model"]
    if gpus and not _fits(model["id"], par["tensor"] * par["pipeline"], gpu_memory):
        fitting = [m for m in models if _fits(m, par["tensor"] * par["pipeline"], gpu_memory)]
        if fitting:
            model["id"] = fitting[MODELS.index(model["id"]) % len(fitting)]
    while par["tensor"] > 1 and _tp_refused(model.get("id", ""), par["tensor"]):  # vLLM's divisibility checks
        par["tensor"] //= 2
    memory = node_memory(inst)
    if gpus == 0 and memory is not None:  # vLLM's CPU backend holds the weights in the node's memory
        small = [m for m in models if _size(catalog.models()[m]["weights"]) <= memory // 4]
        if small and model["id"] not in small:
            model["id"] = small[MODELS.index(model["id"]) % len(small)]
    limit = catalog.models()[model["id"]].get("maxModelLen")
    longest = limit or 0
    if gpus == 0:
        longest = 8192  # the CPU backend's KV cache
    elif (gpu_memory or 0) < 80 * GiB:
        longest = min(longest, 32768)
    if model.get("maxModelLen", 0) > longest:
        del model["maxModelLen"]
    # the CPU tier: LMCache's share of a node's memory needs the node; a share of a small one leaves no room
    if memory is None and offload["backend"] == "lmcache":
        offload.pop("cpuMemoryUtilization", None)
        offload.setdefault("cpu", "10Gi")
    if memory is not None and memory < 256 * GiB:
        if "cpu" in offload and _size(offload["cpu"]) > memory // 8:
            offload["cpu"] = "4Gi"
        if offload.get("cpuMemoryUtilization", 0) > 0.1:
            offload["cpuMemoryUtilization"] = 0.1
    if "cache" in model and "claimTemplate" in model["cache"]:
        spec.pop("deployment", None)  # a claim per pod: a StatefulSet's
    # offloading: tiers the spec name takes, a remote tier LMCache can reach
    if offload.get("specName") == "CPUOffloadingSpec":
        offload["secondary"] = []
    remote = offload.get("remote")
    if remote is not None:
        if offload["backend"] != "lmcache" or remote["url"] not in _VALID_URLS:
            offload.pop("remote")
        elif isinstance(remote.get("capacity"), str) and _size(remote["capacity"]) < GiB:
            remote["capacity"] = "100Gi"
    if offload["backend"] == "lmcache" and spec["service"]["port"] == 8080:
        spec["service"]["port"] = 8000  # the LMCache server's HTTP port
    # resources: no request above its limit
    for container in (spec.get("resources") or {}).values():
        if isinstance(container, dict) and "requests" in container:
            limits = container.get("limits", {})
            for key in list(container["requests"]):
                if key in limits and _size(container["requests"][key]) > _size(limits[key]):
                    del container["requests"][key]
    # room on the node's disk for the download, the model cache and the emptyDir tiers
    wants_disk = bool(offload["secondary"]) or "modelCache" in (spec.get("resources") or {}) or gpus
    if wants_disk and "ephemeralStorage" not in inst:
        inst["ephemeralStorage"] = BIG_DISK
    elif wants_disk:
        inst["ephemeralStorage"] = (
            BIG_DISK if _size(inst["ephemeralStorage"]) < _size(BIG_DISK) else inst["ephemeralStorage"]
        )
    # extraObjects: one object per kind and name, none named as kvgen's own
    if "extraObjects" in spec:
        seen: set[tuple[str, str]] = set()
        kept = []
        for obj in spec["extraObjects"]:
            ident = (obj["kind"], obj["metadata"]["name"])
            if ident not in seen and ident != ("Service", spec["name"]):
                seen.add(ident)
                kept.append(obj)
        spec["extraObjects"] = kept
        if not kept:
            del spec["extraObjects"]
    return spec


def kube_version_for(spec: dict[str, Any], drawn: str) -> str:
    """The Kubernetes version to render ``spec`` for: the drawn one, 1.34 for gpuAccess dra."""
    lmcache = spec["kvCacheOffloading"].get("lmcache") or {}
    return "1.34" if lmcache.get("gpuAccess") == "dra" else drawn


def specs() -> st.SearchStrategy[dict[str, Any]]:
    """A spec kvgen accepts (almost always: the repair knows the rules by their usual cases, and a
    property test checks that fewer than one draw in ten is refused)."""
    return draws().map(repair)


# ----------------------------------------------------------------------------- one broken field

A_GPU_NODE = {"type": "Standard_NC24ads_A100_v4"}  # 1 x A100 80GB
SMALL_MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _on_a_gpu_node(spec: dict[str, Any]) -> None:
    """The spec on one A100 with a small model, parallelism 1: what a breakage of one field needs
    around it to be refused for that field alone."""
    spec["instance"] = dict(A_GPU_NODE)
    spec["model"] = {k: v for k, v in spec["model"].items() if k not in ("maxModelLen",)} | {"id": SMALL_MODEL}
    spec["parallelism"] = {"tensor": 1, "pipeline": 1, "data": 1, "nodes": 1}
    spec["disaggregation"] = {"role": "none"}
    spec["kvCacheOffloading"] = {
        k: v for k, v in spec["kvCacheOffloading"].items() if k not in ("enabled", "cpuMemoryUtilization", "cpu")
    }


def _remote(url: str, **more: Any) -> Callable[[dict[str, Any]], None]:
    def apply(spec: dict[str, Any]) -> None:
        _on_a_gpu_node(spec)
        spec["kvCacheOffloading"].update(backend="lmcache", remote={"url": url, **more})

    return apply


def _set(*path: str, value: Any, gpu_node: bool = True) -> Callable[[dict[str, Any]], None]:
    def apply(spec: dict[str, Any]) -> None:
        if gpu_node:
            _on_a_gpu_node(spec)
        node = spec
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = copy.deepcopy(value)

    return apply


def _native_tiers_with_cpu_spec(spec: dict[str, Any]) -> None:
    _on_a_gpu_node(spec)
    spec["kvCacheOffloading"].update(
        backend="native",
        cpu="10Gi",
        specName="CPUOffloadingSpec",
        secondary=[{"fileSystem": {"emptyDir": {"size": "50Gi"}}}],
    )


def _remote_with_native(spec: dict[str, Any]) -> None:
    _on_a_gpu_node(spec)
    spec["kvCacheOffloading"].update(backend="native", cpu="10Gi", remote={"url": _VALID_URLS[0]})


def _uneven_nodes(spec: dict[str, Any]) -> None:
    _on_a_gpu_node(spec)
    spec.pop("replicas", None)
    spec.pop("deployment", None)
    spec["parallelism"]["nodes"] = 2


def _twin_objects(spec: dict[str, Any]) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tuning"}, "data": {"A": "1"}}
    spec["extraObjects"] = [cm, copy.deepcopy(cm)]


def _service_named_as_kvgens(spec: dict[str, Any]) -> None:
    spec["extraObjects"] = [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": spec["name"]}, "spec": {"ports": [{"port": 80}]}}
    ]


def _strategy_with_claim_per_pod(spec: dict[str, Any]) -> None:
    _on_a_gpu_node(spec)
    spec["model"].pop("uri", None)
    spec["model"]["cache"] = {"claimTemplate": {}}
    spec["deployment"] = {"strategy": {"type": "Recreate"}}


def _parallelism_on_a_cpu_node(spec: dict[str, Any]) -> None:
    spec["instance"] = {"type": "Standard_D16ps_v5"}  # no GPU
    spec["parallelism"].update(tensor=2, pipeline=1, data=1, nodes=1)


def _lmcache_on_its_http_port(spec: dict[str, Any]) -> None:
    _on_a_gpu_node(spec)
    spec["model"].pop("lora", None)  # LoRA turns the lmcache backend off (rule lora-adapters): no server, no clash
    spec["kvCacheOffloading"]["backend"] = "lmcache"
    spec["service"]["port"] = 8080


# What repair() takes out of a draw, put back one field at a time: kvgen must refuse the spec, and
# the chart too, in the same words (tests/test_chart_property.py).
BREAKAGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "remote-url-tls": _remote("rediss://valkey:6380"),
    "remote-url-port-0": _remote("redis://valkey:0"),
    "remote-url-database-path": _remote("redis://valkey/1"),
    "remote-url-credentials": _remote("redis://u:p@valkey"),
    "remote-capacity-below-1gi": _remote(_VALID_URLS[0], capacity="512Mi"),
    "remote-with-native": _remote_with_native,
    "cpu-offloading-spec-with-tiers": _native_tiers_with_cpu_spec,
    "parallelism-on-a-cpu-node": _parallelism_on_a_cpu_node,
    "more-ranks-than-gpus": _set("parallelism", "tensor", value=8),
    "ranks-uneven-over-nodes": _uneven_nodes,
    "model-too-big-for-the-gpu": _set("model", "id", value="deepseek-ai/DeepSeek-V3"),
    "context-longer-than-the-models": _set("model", "maxModelLen", value=1048576),
    "request-above-limit": _set(
        "resources", "vllm", value={"requests": {"memory": "100Gi"}, "limits": {"memory": "64Gi"}}
    ),
    "extra-objects-twice": _twin_objects,
    "extra-object-named-as-kvgens": _service_named_as_kvgens,
    "strategy-with-a-claim-per-pod": _strategy_with_claim_per_pod,
    "ephemeral-storage-too-small": _set("instance", "ephemeralStorage", value="1Gi"),
    "lmcache-on-its-own-http-port": _lmcache_on_its_http_port,
}


def _tp_refused(model_id: str, tensor: int) -> bool:
    """Whether vLLM refuses this tensor-parallel size for a catalog model (files/tensor-parallel.yaml)."""
    from kvgen.plan import tensor_parallel
    from kvgen.spec.models import ModelSpec

    if model_id not in catalog.models():
        return False
    model, _ = catalog.resolve_model(ModelSpec.model_validate({"id": model_id}))
    return model is not None and bool(tensor_parallel.refusals(model, tensor))
