"""Property: for any valid spec, `helm template` gives the same context and objects as `kvgen render`,
and for any invalid one both refuse it.

Hypothesis draws specs across backends, GPU access modes, disk tiers, parallelism, catalog and
inline instances, catalog models, explicit resources and images, for Kubernetes 1.33 and 1.34;
kvgen decides validity (a spec it
rejects is not counted), and at least 300 valid specs are compared object by object. Then
values of the wrong type (``"2"`` for 2, ``true`` for 1, ``" 10Gi"``) are put into fixed and
generated specs: kvgen and Helm must accept and refuse the same ones.
"""

from __future__ import annotations

import copy

import helm
import helm_python
import pytest
from conftest import dump, problem_triples
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from test_context_contract import CONTEXT, empty_values

from kvgen.app.compiler import compile_text
from kvgen.core.errors import SpecError
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


@st.composite
def specs(draw):
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
            "vllm": draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "repository": st.just("mirror.example/vllm"),
                        "tag": st.just("v0.33.1"),
                        "digest": st.just("sha256:" + "a" * 64),
                    },
                )
            ),
            "lmcache": draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "repository": st.just("lmcache/standalone"),
                        "tag": st.just("v0.5.6"),
                        "digest": st.just("sha256:" + "b" * 64),
                    },
                )
            ),
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


def refused_alike(exc: SpecError, spec: dict, kube_version: str = "1.33") -> None:
    """kvgen refused ``spec`` (``exc``): Helm refuses it too and, where the chart's templates refuse
    it, with kvgen's problems word for word: each (path, message, hint), values quoted alike. (Where
    Helm's values schema refuses it first, its validator words the errors, not the chart.)"""
    text = dump(spec)
    try:
        theirs = helm.problems(spec, kube_version=kube_version)
    except helm_python.HelmValuesError:
        return
    assert theirs, f"kvgen rejects this spec but Helm renders it (Kubernetes {kube_version}):\n{text}"
    ours = problem_triples(exc)
    assert theirs == ours, (
        f"the chart words the problems otherwise (Kubernetes {kube_version}):\n{text}\n"
        f"kvgen only: {sorted(ours - theirs)}\nthe chart only: {sorted(theirs - ours)}"
    )


def worded_alike(spec: dict, kube_version: str = "1.33") -> None:
    """kvgen and Helm both refuse ``spec`` with the same problems (refused_alike), or both render it
    with the same warnings (kvgen's Plan.warnings, the chart's NOTES.txt)."""
    text = dump(spec)
    try:
        (compiled,) = compile_text(text, "spec.yaml", kube_version)
    except SpecError as exc:
        refused_alike(exc, spec, kube_version)
        return
    try:
        theirs = helm.notes_warnings(helm.notes(spec, kube_version=kube_version))
    except (helm_python.HelmValuesError, helm_python.HelmRenderError) as err:
        raise AssertionError(f"kvgen renders this spec but Helm refuses it:\n{text}\n{err}") from None
    assert theirs == compiled.plan.warnings, f"NOTES.txt's warnings are not kvgen's:\n{text}"


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(specs(), st.sampled_from(["1.33", "1.34"]))
def test_helm_template_equals_kvgen_render(spec, kube_version):
    """`kvgen render --kube-version V` and `helm template --kube-version V` (gpuAccess dra needs 1.34)."""
    text = dump(spec)
    try:
        compiled = compile_text(text, "spec.yaml", kube_version)
        ours = [o for r in compiled for o in r.objects]
    except SpecError as exc:
        # kvgen refuses it: Helm must refuse it too, in kvgen's words; it does not count as one of the 300
        refused_alike(exc, spec, kube_version)
        assume(False)
    theirs, their_context, their_warnings = helm.objects_context_and_warnings(
        spec, namespace="default", kube_version=kube_version
    )
    (our_context,) = [r.context for r in compiled]
    difference = helm.first_difference(our_context, their_context)  # names the field, before the objects
    assert difference is None, f"{difference}\n{text}"
    (our_warnings,) = [r.plan.warnings for r in compiled]
    assert their_warnings == our_warnings, f"NOTES.txt's warnings are not kvgen's:\n{text}"
    CONTEXT.validate_python(our_context)  # the typed contract, absent values left out
    assert empty_values(our_context) == [], text
    assert helm.by_identity(theirs) == helm.by_identity(ours), text


NON_HYBRID = sorted(k for k, m in catalog.models().items() if not m.get("hybrid"))


@st.composite
def lmcache_specs(draw):
    """A drawn spec with the LMCache server on (a non-hybrid model on a GPU node, no rule that
    turns offloading off) in one of the GPU access modes."""
    spec = draw(specs())
    spec["model"] = {**spec["model"], "id": draw(st.sampled_from(NON_HYBRID))}
    instance = {k: v for k, v in spec["instance"].items() if k != "mig"}
    if instance.get("gpus") == 0:
        instance.update(gpus=draw(st.sampled_from([1, 2, 8])), gpuMemory="80Gi")
    spec["instance"] = instance
    spec["parallelism"] = {**spec["parallelism"], "data": 1, "pipeline": 1}
    spec["disaggregation"] = {"role": "none"}
    offload = {k: v for k, v in spec["kvCacheOffloading"].items() if k not in ("enabled", "lmcache")}
    offload["backend"] = "lmcache"
    offload["lmcache"] = {"gpuAccess": draw(st.sampled_from(["visible-devices", "dra", "in-container"]))}
    if draw(st.booleans()):
        offload["lmcache"]["deviceClassName"] = "a100.gpu.example.com"
    if offload.get("cpuMemoryUtilization") == 0.0:
        offload.pop("cpuMemoryUtilization")
    spec["kvCacheOffloading"] = offload
    return spec


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(lmcache_specs(), st.sampled_from(["1.33", "1.34"]))
def test_every_gpu_access_mode_renders_the_same_in_helm(spec, kube_version):
    """The draw above mostly turns the LMCache server off; here it is on, in each mode."""
    test_helm_template_equals_kvgen_render.hypothesis.inner_test(spec, kube_version)


# ----------------------------------------------------------------------------- rejections agree too

# Values of the wrong type, or nearly right: the CLI must refuse exactly what Helm's values schema
# refuses (it used to coerce "2" to 2, true to 1 and " 10Gi" to 10Gi), and accept what it accepts
# (a whole float such as 2.0 is an integer to JSON Schema).
CONFUSIONS = [
    (("model", "maxModelLen"), True),
    (("model", "maxModelLen"), "4096"),
    (("model", "maxModelLen"), 4096.0),
    (("model", "maxModelLen"), 4096.5),
    (("model", "mla"), "true"),
    (("model", "id"), 7),
    (("replicas",), False),
    (("replicas",), "2"),
    (("replicas",), 1.0),
    (("parallelism", "tensor"), "1"),
    (("parallelism", "tensor"), True),
    (("parallelism", "data"), 1.0),
    (("kvCacheOffloading", "enabled"), "1"),
    (("kvCacheOffloading", "enabled"), 1),
    (("kvCacheOffloading", "enabled"), "yes"),
    (("kvCacheOffloading", "cpu"), " 10Gi"),
    (("kvCacheOffloading", "cpu"), "10Gi "),
    (("kvCacheOffloading", "cpu"), True),
    (("kvCacheOffloading", "cpu"), 10737418240.0),
    (("kvCacheOffloading", "cpu"), 10737418240),
    (("kvCacheOffloading", "cpuMemoryUtilization"), "0.5"),
    (("kvCacheOffloading", "cpuMemoryUtilization"), True),
    (("kvCacheOffloading", "cpuMemoryUtilization"), 1),
    (("kvCacheOffloading", "allowHybrid"), "false"),
    (("kvCacheOffloading", "evictionPolicy"), "LRU"),
    (("kvCacheOffloading", "secondary"), {"fileSystem": {"emptyDir": {"size": "1Gi"}}}),
    (("vllm", "gpuMemoryUtilization"), "0.9"),
    (("vllm", "gpuMemoryUtilization"), 1),
    (("vllm", "extraArgs"), "--max-num-seqs=64"),
    (("vllm", "extraArgs"), [64]),
    (("vllm", "env"), [{"name": "X", "value": 1}]),
    (("vllm", "env"), [{"name": "X", "value": True}]),
    (("service", "port"), "8000"),
    (("service", "port"), 8000.0),
    (("service", "type"), "loadbalancer"),
    (("images", "vllm", "tag"), 1.0),
    (("images", "vllm", "tag"), 33),
    (("scheduling", "nodeSelector"), {"pool": 1}),
    (("scheduling", "nodeSelector"), {"pool": True}),
    (("scheduling", "priorityClassName"), 5),
    (("resources", "vllm", "requests", "cpu"), 0),
    (("resources", "vllm", "requests", "cpu"), "4 "),
    (("resources", "vllm", "requests", "cpu"), 4.0),
    (("resources", "vllm", "limits", "memory"), "64GiB"),
    (("resources", "shm"), "16Gi "),
    (("resources", "shm"), 17179869184.0),
    (("name",), 123),
    (("namespace",), True),
]


def confused(spec: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(spec)
    node = out
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    return out


def agree(spec: dict) -> None:
    """kvgen and Helm both refuse the spec, in the same words (refused_alike), or both render the
    same objects with the same warnings."""
    text = dump(spec)
    try:
        (compiled,) = compile_text(text, "spec.yaml")
    except SpecError as exc:
        refused_alike(exc, spec)
        return
    try:
        theirs, their_warnings = helm.objects_and_warnings(spec, namespace="default")
    except (helm_python.HelmValuesError, helm_python.HelmRenderError) as exc:
        raise AssertionError(f"kvgen renders and Helm refuses:\n{text}\n{exc}") from None
    assert helm.by_identity(theirs) == helm.by_identity(compiled.objects), text
    assert their_warnings == compiled.plan.warnings, f"NOTES.txt's warnings are not kvgen's:\n{text}"


BASE_SPEC = {
    "name": "demo",
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "instance": {"type": "Standard_NC24ads_A100_v4"},
    "kvCacheOffloading": {"backend": "native", "cpu": "10Gi"},
}


@pytest.mark.parametrize("path,value", CONFUSIONS, ids=[f"{'.'.join(p)}={v!r}" for p, v in CONFUSIONS])
def test_kvgen_and_helm_agree_on_each_type_confusion(path, value):
    agree(confused(BASE_SPEC, path, value))


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(specs(), st.lists(st.sampled_from(CONFUSIONS), min_size=1, max_size=2))
def test_kvgen_and_helm_agree_on_generated_specs_with_type_confusions(spec, confusions):
    for path, value in confusions:
        spec = confused(spec, path, value)
    agree(spec)


# ----------------------------------------------------------------------------- values quoted alike

# A value the user wrote is quoted in a message by one rule on both faces (kvgen.core.errors.quoted,
# the chart's kvgen.quoted: Python's repr of a printable string), so a value holding a quote or a
# backslash is worded the same: "v1'x", 'say "hi"', 'a\\b'. Each case puts such a word into one
# field of a drawn spec; kvgen must refuse it and the chart's templates too, in the same words.
QUOTING_MARKS = ["'", '"', "\\"]


@st.composite
def quoting_words(draw):
    """A short word with one or more quotes (' and ") or backslashes in it."""
    marks = draw(st.lists(st.sampled_from(QUOTING_MARKS), min_size=1, max_size=3))
    parts = [draw(st.text(alphabet="abz09-./", max_size=4)) for _ in range(len(marks) + 1)]
    return parts[0] + "".join(m + p for m, p in zip(marks, parts[1:], strict=True))


def _at(spec: dict, *path: str) -> dict:
    node = spec
    for key in path:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    return node


def _secondary(spec: dict, tier: dict) -> None:
    _at(spec, "kvCacheOffloading").setdefault("secondary", []).append({"fileSystem": {"pvc": tier}})


# field -> how the word goes into a spec
QUOTING_FIELDS = {
    "model.id": lambda s, w: s.update(model={**s["model"], "id": w}),
    "instance.type": lambda s, w: s.update(instance={"type": w}),
    "kvCacheOffloading.remote.url": lambda s, w: _at(s, "kvCacheOffloading").update(remote={"url": f"redis://{w}"}),
    "vllm.extraArgs (a choice)": lambda s, w: _at(s, "vllm").update(extraArgs=[f"--dtype={w}"]),
    "vllm.extraArgs (a number)": lambda s, w: _at(s, "vllm").update(extraArgs=[f"--max-num-seqs={w}"]),
    "vllm.extraArgs (positional)": lambda s, w: _at(s, "vllm").update(extraArgs=[w]),
    "images.vllm.tag": lambda s, w: _at(s, "images", "vllm").update(tag=w),
    "images.lmcache.repository": lambda s, w: _at(s, "images", "lmcache").update(repository=w),
    "scheduling.nodeSelector (a key)": lambda s, w: _at(s, "scheduling", "nodeSelector").update({w: "x"}),
    "scheduling.nodeSelector (a value)": lambda s, w: _at(s, "scheduling", "nodeSelector").update(pool=w),
    "scheduling.priorityClassName": lambda s, w: _at(s, "scheduling").update(priorityClassName=w),
    "scheduling.tolerations[].key": lambda s, w: _at(s, "scheduling").update(
        tolerations=[{"key": w, "operator": "Exists", "effect": "NoSchedule"}]
    ),
    "scheduling.tolerations[].value": lambda s, w: _at(s, "scheduling").update(
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Equal", "value": w}]
    ),
    "scheduling.topologySpreadConstraints[].topologyKey": lambda s, w: _at(s, "scheduling").update(
        topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": w, "whenUnsatisfiable": "ScheduleAnyway"}]
    ),
    "secondary[].fileSystem.pvc.ref.name": lambda s, w: _secondary(s, {"ref": {"name": w}}),
    "secondary[].fileSystem.pvc.ref.path": lambda s, w: _secondary(s, {"ref": {"name": "kv", "path": f"/{w}"}}),
    "secondary[].fileSystem.pvc.spec.storageClassName": lambda s, w: _secondary(
        s,
        {
            "spec": {
                "storageClassName": w,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Ti"}},
            }
        },
    ),
    # the word is the claim's name: a quote after a '/' would be in the sub-path, which may hold one
    "model.uri": lambda s, w: s.update(model={**s["model"], "uri": f"pvc://{w.replace('/', '-')}"}),
    "model.cache.claim.name": lambda s, w: s.update(model={**s["model"], "cache": {"claim": {"name": w}}}),
    "model.cache.claimTemplate.storageClassName": lambda s, w: s.update(
        model={**s["model"], "cache": {"claimTemplate": {"storageClassName": w}}}
    ),
    "model.hfTokenSecret.name": lambda s, w: s.update(model={**s["model"], "hfTokenSecret": {"name": w, "key": "t"}}),
    "model.hfTokenSecret.key": lambda s, w: s.update(model={**s["model"], "hfTokenSecret": {"name": "hf", "key": w}}),
    "service.apiKeySecret.key": lambda s, w: _at(s, "service").update(apiKeySecret={"name": "api", "key": w}),
    "pod.labels (a key)": lambda s, w: _at(s, "pod", "labels").update({w: "x"}),
    "pod.labels (a value)": lambda s, w: _at(s, "pod", "labels").update(team=w),
    "pod.annotations (a key)": lambda s, w: _at(s, "pod", "annotations").update({w: "x"}),
    "pod.volumes[].name": lambda s, w: _at(s, "pod").update(volumes=[{"name": w, "emptyDir": {}}]),
    "commonLabels (a key)": lambda s, w: _at(s, "commonLabels").update({w: "x"}),
    "commonLabels (a value)": lambda s, w: _at(s, "commonLabels").update(team=w),
    "commonAnnotations (a key)": lambda s, w: _at(s, "commonAnnotations").update({w: "x"}),
    "service.labels (a key)": lambda s, w: _at(s, "service", "labels").update({w: "x"}),
    "service.loadBalancerClass": lambda s, w: _at(s, "service").update(type="LoadBalancer", loadBalancerClass=w),
    "service.loadBalancerSourceRanges[]": lambda s, w: _at(s, "service").update(
        type="LoadBalancer", loadBalancerSourceRanges=[w]
    ),
    "resources.extra (a key)": lambda s, w: _at(s, "resources", "extra").update({w: 1}),
}


@pytest.mark.parametrize("field", QUOTING_FIELDS)
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failing case is shown as drawn
    suppress_health_check=[HealthCheck.too_slow],
)
@given(specs(), quoting_words(), st.sampled_from(["1.33", "1.34"]))
def test_a_value_with_quotes_is_worded_alike_by_kvgen_and_helm(field, spec, word, kube_version):
    spec = copy.deepcopy(spec)
    QUOTING_FIELDS[field](spec, word)
    text = dump(spec)
    try:
        compile_text(text, "spec.yaml", kube_version)
    except SpecError:
        pass
    else:
        raise AssertionError(f"kvgen accepts {word!r} in {field}:\n{text}")
    try:
        helm.problems(spec, kube_version=kube_version)
    except helm_python.HelmValuesError:
        assume(False)  # the values schema's words, not the chart's (a field it always refuses is Unsatisfiable)
    worded_alike(spec, kube_version)
