"""Sizing: allocatable memory, container memory, /dev/shm, ephemeral storage, fit checks,
and explicit values that always win."""

from __future__ import annotations

import math

import helm
import pytest
from conftest import compile_spec, container, spec, workload

from kvgen.core import quantity
from kvgen.core.errors import SpecError
from kvgen.data import catalog
from kvgen.plan import sizing

GiB = 1024**3

# p5 node pools that put the kubelet on the instance NVMe (a default EKS pool has a 20 GiB root volume)
NVME = "28312Gi"


def mem(c, name, field="requests"):
    return quantity.to_bytes(container(c, name)["resources"][field]["memory"])


def volume(c, name):
    (v,) = [v for v in workload(c)["spec"]["template"]["spec"]["volumes"] if v["name"] == name]
    return v


@pytest.mark.parametrize(
    "node_gib, reserved_gib",
    [(4, 1.0), (8, 1.8), (16, 2.6), (128, 9.32), (220, 11.16)],
)
def test_kube_reserved_bands(node_gib, reserved_gib):
    # 25% of 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above
    assert sizing.kube_reserved(node_gib * GiB) / GiB == pytest.approx(reserved_gib, abs=0.01)


def test_allocatable_subtracts_reserved_and_eviction_threshold():
    assert sizing.allocatable_memory(220 * GiB) == 220 * GiB - sizing.kube_reserved(220 * GiB) - 100 * 1024**2


def test_lmcache_sidecar_memory_is_l1_plus_server_overhead():
    c = compile_spec(spec(kvCacheOffloading={"cpu": "40Gi"}))
    assert mem(c, "lmcache-mp-server") == 40 * GiB + sizing.LMCACHE_SERVER_OVERHEAD
    assert mem(c, "lmcache-mp-server", "limits") == mem(c, "lmcache-mp-server")
    args = container(c, "lmcache-mp-server")["args"]
    assert f"--max-bytes={40 * GiB}" in args
    assert not any(a.startswith("--utilization") for a in args)  # an absolute size: no measurement


def test_lmcache_utilization_plans_l1_from_the_pods_share_of_allocatable():
    # 4 GPUs, TP 1: each pod may use a quarter of the node
    c = compile_spec(
        spec(instance={"type": "Standard_NC96ads_A100_v4"}, kvCacheOffloading={"cpuMemoryUtilization": 0.5})
    )
    alloc = sizing.allocatable_memory(quantity.to_bytes("880Gi"))
    planned = int(alloc / 4 * 0.5) // 1024**2 * 1024**2
    assert c.plan.sizing.cpu_tier == planned
    assert mem(c, "lmcache-mp-server") == sizing.round_up_gib(planned + sizing.LMCACHE_SERVER_OVERHEAD)


def test_the_l1_is_the_pods_share_and_kaitos_scope_divides_it_by_tp():
    node = {"type": "Standard_NC48ads_A100_v4", "ephemeralStorage": "512Gi"}  # two 64 GiB model caches
    one = compile_spec(spec(model={"id": "Qwen/Qwen3-32B"}, instance=node, parallelism={"tensor": 1}))
    two = compile_spec(spec(model={"id": "Qwen/Qwen3-32B"}, instance=node, parallelism={"tensor": 2}))
    # TP 1 uses one of two GPUs (half the node), TP 2 the whole node: twice the L1 (one pool per pod)
    assert two.plan.sizing.cpu_tier == pytest.approx(2 * one.plan.sizing.cpu_tier, rel=0.01)
    # KAITO's arithmetic: the whole node divided by 2, the same L1 as TP 1's half
    rank = {"lmcache": {"utilizationScope": "rank"}}
    kaito = compile_spec(
        spec(model={"id": "Qwen/Qwen3-32B"}, instance=node, parallelism={"tensor": 2}, kvCacheOffloading=rank)
    )
    assert one.plan.sizing.cpu_tier == pytest.approx(kaito.plan.sizing.cpu_tier, rel=0.01)


def test_native_cpu_tier_is_in_vllm_memory_and_dev_shm():
    small = compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi"}))
    big = compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "50Gi"}))
    assert mem(big, "vllm") - mem(small, "vllm") == 40 * GiB
    shm = lambda c: quantity.to_bytes(volume(c, "dshm")["emptyDir"]["sizeLimit"])  # noqa: E731
    assert shm(big) - shm(small) == 40 * GiB


def test_native_hybrid_tier_budgets_twice_its_size():
    c = compile_spec(
        spec(
            model={"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"},
            kvCacheOffloading={"backend": "native", "cpu": "10Gi", "allowHybrid": True},
        )
    )
    assert quantity.to_bytes(volume(c, "dshm")["emptyDir"]["sizeLimit"]) >= 20 * GiB


def test_dev_shm_grows_with_gpus():
    one = compile_spec(
        spec(
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME}, model={"id": "meta-llama/Llama-3.1-8B-Instruct"}
        )
    )
    eight = compile_spec(spec(instance={"type": "p5.48xlarge", "ephemeralStorage": NVME}, parallelism={"tensor": 8}))
    assert volume(one, "dshm")["emptyDir"]["sizeLimit"] == "1Gi"
    assert volume(eight, "dshm")["emptyDir"]["sizeLimit"] == "8Gi"


def test_model_cache_holds_the_weights():
    c = compile_spec(spec())
    cache = quantity.to_bytes(volume(c, "model-cache")["emptyDir"]["sizeLimit"])
    assert cache >= c.plan.model.weights_bytes + sizing.MODEL_CACHE_HEADROOM


def test_explicit_resources_win():
    c = compile_spec(
        spec(
            resources={
                "vllm": {
                    "requests": {"cpu": "3", "memory": "100Gi", "ephemeral-storage": "300Gi"},
                    "limits": {"memory": "120Gi"},
                },
                "lmcacheServer": {"requests": {"memory": "20Gi"}},
                "shm": "16Gi",
                "modelCache": "50Gi",
            },
            kvCacheOffloading={"cpu": "10Gi"},
        )
    )
    r = container(c, "vllm")["resources"]
    assert r["requests"]["cpu"] == "3" and r["requests"]["memory"] == "100Gi" and r["limits"]["memory"] == "120Gi"
    assert r["requests"]["ephemeral-storage"] == "300Gi"
    assert container(c, "lmcache-mp-server")["resources"]["requests"]["memory"] == "20Gi"
    assert volume(c, "dshm")["emptyDir"]["sizeLimit"] == "16Gi"
    assert volume(c, "model-cache")["emptyDir"]["sizeLimit"] == "50Gi"


def test_explicit_limit_below_need_warns():
    c = compile_spec(spec(resources={"vllm": {"limits": {"memory": "8Gi"}}}))
    assert any("may be OOM-killed" in w for w in c.plan.warnings)


def test_emptydir_tiers_beyond_local_disk_fail_with_advice():
    tiers = [{"fileSystem": {"emptyDir": {"size": "2Ti"}}}]
    with pytest.raises(SpecError) as err:
        compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "secondary": tiers}))
    (problem,) = err.value.problems
    assert problem.path == ("kvCacheOffloading", "secondary")
    assert "ephemeral storage" in problem.message and "pvc.spec tier on a local-NVMe storage class" in problem.hint


def test_model_that_does_not_fit_the_gpu_is_refused():
    with pytest.raises(SpecError) as err:
        compile_spec(spec(model={"id": "meta-llama/Llama-3.1-70B-Instruct"}))
    gpu = [p for p in err.value.problems if p.path == ("parallelism", "tensor")]
    assert gpu and "of weights per GPU" in gpu[0].message


def test_utilization_one_does_not_fit_and_says_what_to_change():
    with pytest.raises(SpecError) as err:
        compile_spec(spec(kvCacheOffloading={"cpuMemoryUtilization": 1.0}))
    (problem,) = err.value.problems
    assert problem.path == ("kvCacheOffloading", "cpuMemoryUtilization")
    assert problem.hint.startswith("set kvCacheOffloading.cpuMemoryUtilization to 0.")


def test_cpu_instance_keeps_weights_in_host_memory():
    c = compile_spec(spec(model={"id": "meta-llama/Llama-3.2-1B-Instruct"}, instance={"type": "Standard_D16s_v5"}))
    env = {e["name"]: e.get("value") for e in container(c, "vllm")["env"]}
    assert env["VLLM_CPU_KVCACHE_SPACE"] == str(sizing.CPU_BACKEND_KV_SPACE_GIB)
    assert "nvidia.com/gpu" not in container(c, "vllm")["resources"]["limits"]
    assert container(c, "vllm")["image"].startswith("public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:")
    assert mem(c, "vllm") >= c.plan.model.weights_bytes + sizing.CPU_BACKEND_KV_SPACE_GIB * GiB


# ----------------------------------------------------------------------------- page cache is soft memory


def test_llama_8b_fits_a_g5_xlarge_with_offloading_off():
    """Llama-3.1-8B (15 GiB of weights) on g5.xlarge (16 GiB of RAM): the weights' page cache is
    reclaimable, so it is not part of the memory request or limit. Before, kvgen asked for
    4 + 4 + 15 + 1 = 24 GiB and refused the node's 13.3 GiB."""
    c = compile_spec(spec(instance={"type": "g5.xlarge"}, kvCacheOffloading={"enabled": False}))
    alloc = sizing.allocatable_memory(16 * GiB)
    assert (
        alloc == 16 * GiB - math.ceil((0.25 * 4 + 0.20 * 4 + 0.10 * 8) * GiB) - 100 * 1024**2
    )  # kube-reserved, eviction
    # runtime 4 GiB + one GPU worker 4 GiB + /dev/shm 1 GiB; no weights
    assert mem(c, "vllm") == mem(c, "vllm", "limits") == 9 * GiB <= alloc
    soft = [i for i in c.plan.sizing.memory_items if i.soft]
    assert [(i.item, i.bytes) for i in soft] == [("model-loading", 15 * GiB)]


def test_cpu_backend_weights_stay_hard_memory():
    c = compile_spec(spec(model={"id": "meta-llama/Llama-3.2-1B-Instruct"}, instance={"type": "Standard_D16s_v5"}))
    assert not any(i.soft for i in c.plan.sizing.memory_items)


# ----------------------------------------------------------------------------- the kubelet's ephemeral storage


def test_emptydir_tier_is_checked_against_the_default_os_disk_not_the_nvme():
    """p5.48xlarge has 28 TiB of NVMe, but a default EKS node pool gives the kubelet a 20 GiB root
    volume: 18 GiB after the 10% eviction threshold, for the 500 GiB tier and the 17 GiB cache."""
    tiers = [{"fileSystem": {"emptyDir": {"size": "500Gi"}}}]
    one_node = {"tensor": 8}
    with pytest.raises(SpecError) as err:
        compile_spec(
            spec(
                instance={"type": "p5.48xlarge"},
                parallelism=one_node,
                kvCacheOffloading={"cpu": "64Gi", "secondary": tiers},
            )
        )
    (problem,) = err.value.problems
    assert problem.path == ("kvCacheOffloading", "secondary")
    assert "the pod needs 517.0 GiB of ephemeral storage" in problem.message
    assert "has 18.0 GiB for it (20.0 GiB: the OS disk of a default node pool" in problem.message
    assert "pvc.spec tier on a local-NVMe storage class (p5.48xlarge has 28312.0 GiB of local NVMe)" in problem.hint
    assert "instance.ephemeralStorage" in problem.hint
    # a node pool that puts the kubelet on the NVMe says so, and the same tier fits
    ok = compile_spec(
        spec(
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME},
            parallelism=one_node,
            kvCacheOffloading={"cpu": "64Gi", "secondary": tiers},
        )
    )
    assert ok.plan.sizing.ephemeral_allocatable == 28312 * GiB - 28312 * GiB // 10
    # a pvc.spec tier is not the kubelet's disk: it fits the default pool too
    claim = [
        {
            "fileSystem": {
                "pvc": {
                    "spec": {
                        "storageClassName": "local-nvme",
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "500Gi"}},
                    }
                }
            }
        }
    ]
    compile_spec(
        spec(
            instance={"type": "p5.48xlarge"},
            parallelism=one_node,
            kvCacheOffloading={"cpu": "64Gi", "secondary": claim},
        )
    )


def test_model_cache_alone_beyond_the_os_disk_points_at_instance_ephemeral_storage():
    with pytest.raises(SpecError) as err:
        compile_spec(
            spec(
                model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
                instance={"type": "p5.48xlarge"},
                parallelism={"tensor": 8},
            )
        )
    (problem,) = err.value.problems
    assert problem.path == ("instance", "ephemeralStorage")
    assert "model cache 134.0 GiB" in problem.message and "would stay Pending" in problem.message


def test_ephemeral_storage_defaults_per_cloud():
    rows = catalog.instances()
    assert rows["p5.48xlarge"]["ephemeralStorage"] == "20Gi"  # EKS managed node group diskSize
    assert rows["a3-highgpu-8g"]["ephemeralStorage"] == "93Gi"  # GKE 100 GB boot disk
    assert rows["Standard_NC24ads_A100_v4"]["ephemeralStorage"] == "512Gi"  # AKS managed OS disk, 16-63 vCPUs
    assert rows["Standard_NC96ads_A100_v4"]["ephemeralStorage"] == "256Gi"  # AKS ephemeral OS disk = temp storage
    for name, row in rows.items():
        assert quantity.to_bytes(row["ephemeralStorage"]) > 0, name
        assert "ephemeralStorage:" in row["source"], name


# ----------------------------------------------------------------------------- native sidecars need 1.29


def test_lmcache_backend_needs_kubernetes_1_29():
    with pytest.raises(SpecError) as err:
        compile_spec(spec(), version="1.28")
    (problem,) = err.value.problems
    # the floor is gpuAccess visible-devices' minKubeVersion (files/gpu-access.yaml), as dra's 1.34 is
    assert problem.path == ("kvCacheOffloading", "lmcache", "gpuAccess")
    assert problem.message == (
        "gpuAccess visible-devices needs Kubernetes 1.29 or newer (its LMCache server runs as a native sidecar; "
        "SidecarContainers is off by default in 1.28), but the output is for Kubernetes 1.28"
    )
    assert problem.hint == (
        'for a cluster that has it, set kubeVersion: "1.29" (or render with --kube-version 1.29 or newer), '
        "or use gpuAccess in-container (no sidecar) or the native backend"
    )
    compile_spec(spec(), version="1.29")
    # the native backend, a disabled one and gpuAccess in-container have no sidecar: 1.28 is fine
    compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi"}), version="1.28")
    compile_spec(spec(kvCacheOffloading={"enabled": False}), version="1.28")
    compile_spec(spec(kvCacheOffloading={"lmcache": {"gpuAccess": "in-container"}}), version="1.28")


# ----------------------------------------------------------------------------- GPU memory as the device reports it

MiB = 1024**2
# 1 x A10G 24 GB, which reports 22,589 MiB to CUDA (instances.yaml gpuModels); 16 GiB of RAM: no CPU tier
A10G = {"instance": {"type": "g5.xlarge"}, "kvCacheOffloading": {"enabled": False}}


def _both(values: dict, version: str = "1.33"):
    """kvgen's objects and the chart's, by identity: they must be the same."""
    import helm

    ours = helm.by_identity(compile_spec(values, version).objects)
    assert helm.by_identity(helm.objects(values, kube_version=version)) == ours
    return ours


def test_gpu_memory_is_planned_from_what_the_device_reports_not_the_marketed_size():
    c = compile_spec(spec(**A10G))
    assert c.plan.instance.gpu_memory_bytes == 24 * GiB  # as the cloud documents it
    assert c.plan.instance.gpu_usable_bytes == 22589 * MiB  # as CUDA reports it (vLLM's total_memory)
    ppm = round(c.plan.spec.vllm.gpu_memory_utilization * 1_000_000)
    usable = 22589 * MiB * ppm // 1_000_000
    non_kv = sum(sizing.gpu_non_kv(c.spec, c.plan.model, c.plan.instance).values())
    assert c.plan.sizing.gpu_kv_cache == (usable - non_kv) * sizing.KV_BUDGET_PERCENT // 100
    # --max-model-len planned from that budget: 128 KiB a token (32 layers x 8 KV x 128 x 2 x 2 B)
    fits = (c.plan.context_length.budget // (128 * 1024) - 256) // 16 * 16
    assert f"--max-model-len={fits}" in container(c, "vllm")["args"]


# ----------------------------------------------------------------------------- vLLM's profile of the GPU


def test_vllms_non_kv_memory_by_hand_for_llama_8b_on_one_a10g():
    """vLLM 0.33's determine_available_memory, item by item (files/sizing.yaml gpu.vllmProfile): a 24 GB GPU
    is below 70 GiB, so max_num_batched_tokens 2048 and max_num_seqs 256 (get_batch_defaults)."""
    c = compile_spec(spec(**A10G))
    h, inter, vocab, layers = 4096, 14336, 128256, 32  # Llama-3.1-8B's config.json
    assert sizing.batch_defaults(c.spec, c.plan.instance) == (2048, 256)
    items = sizing.gpu_non_kv(c.spec, c.plan.model, c.plan.instance)
    assert items == {
        "weights": 15 * GiB,  # one GPU holds all of them
        # max(one layer's MLP and hidden tensors over 2048 tokens, the sampler's 256 x vocab logits)
        "activations": max(2048 * 2 * (3 * inter + 4 * h), 256 * vocab * 12 + 2048 * h * 2),
        "persistent": 256 * vocab * 4,  # the penalties' int32 counts
        "nonTorch": int(0.15 * GiB),
        "cudaGraphs": int(0.05 * GiB) + int(0.013 * GiB) * layers,
    }
    assert items["activations"] == 256 * vocab * 12 + 2048 * h * 2  # the sampler's peak is the larger here
    eager = compile_spec(spec(**{**A10G, "vllm": {"extraArgs": ["--enforce-eager", "--max-num-seqs=64"]}}))
    items = sizing.gpu_non_kv(eager.spec, eager.plan.model, eager.plan.instance)
    assert items["cudaGraphs"] == 0 and items["persistent"] == 64 * vocab * 4


def test_kaitos_qwen3_32b_on_four_a10_renders_from_vllms_profile_on_both_faces():
    """Issue 32 finding 10: KAITO's preset test runs Qwen3-32B over 4 x A10 (pipeline 4) at 0.82. KAITO's flat
    overhead (2.3 GiB + 5% of the weights) left no KV cache, so kvgen refused what KAITO starts; vLLM's profile
    of the last stage (16 of 64 layers and the lm_head, the sampler, the received hidden states, CUDA graphs
    of 16 layers) leaves about 0.8 GiB of the 18.1 GiB it requests."""
    values = spec(
        model={"id": "Qwen/Qwen3-32B"},
        instance={"type": "Standard_NV36ads_A10_v5"},
        parallelism={"pipeline": 4, "nodes": 4},
        vllm={"gpuMemoryUtilization": 0.82},
        kvCacheOffloading={"enabled": False},
    )
    c = compile_spec(values)
    h, vocab, inter, n, seqs = 5120, 151936, 25600, 2048, 256
    body = 62 * GiB - 1_555_824_640 * 2  # the catalog's 62Gi less the embedding and lm_head (vocab x hidden each)
    items = sizing.gpu_non_kv(c.spec, c.plan.model, c.plan.instance)
    assert items == {
        "weights": body // 4 + vocab * h * 2,
        "activations": max(n * 2 * (3 * inter + 4 * h), seqs * vocab * 12 + n * h * 2),
        "persistent": seqs * vocab * 4 + 2 * n * h * 2,
        "nonTorch": int(0.15 * GiB),
        "cudaGraphs": int(0.05 * GiB) + int(0.013 * GiB) * 16,
    }
    usable = 22589 * MiB * 820_000 // 1_000_000
    budget = (usable - sum(items.values())) * 90 // 100
    assert c.plan.sizing.gpu_kv_cache == budget and 0.7 * GiB < budget < 0.8 * GiB
    fits = (budget // (16 * 2 * 8 * 128 * 2) - 256) // 16 * 16  # 64 KiB a token on a stage of 16 layers
    assert fits == 11808
    ours = _both(values)
    (vllm,) = [
        x for x in ours[("StatefulSet", "demo")]["spec"]["template"]["spec"]["containers"] if x["name"] == "vllm"
    ]
    assert "--max-model-len=11808" in vllm["args"]


@pytest.mark.heavy
def test_a_known_gpus_own_gpu_memory_is_its_marketed_size_and_the_reading_wins_on_both_faces():
    """Issue 32 (9): gpuMemory: 48Gi written for an L40S was taken as what CUDA reports and inflated the GPU KV
    cache. For a GPU files/instances.yaml gpuModels knows, kvgen plans from its reading and says so; a
    gpuModel the table does not know takes gpuMemory at its word (a figure measured on the node)."""
    values = spec(instance={"type": "g5.xlarge", "gpuMemory": "24Gi"}, kvCacheOffloading={"enabled": False})
    c = compile_spec(values)
    assert c.plan.instance.gpu_usable_bytes == 22589 * MiB  # the A10G's reading, not 24 GiB
    line = (
        "instance.gpuMemory is taken as the marketed size of NVIDIA A10G 24GB: kvgen plans from the 22589Mi it "
        "reports to CUDA (files/instances.yaml gpuModels; vLLM's total_memory), not from gpuMemory"
    )
    assert line in c.plan.warnings
    _objs, theirs = helm.objects_and_warnings(values)
    assert line in theirs
    own = spec(
        instance={"type": "g5.xlarge", "gpuModel": "A10G as measured here", "gpuMemory": "22Gi"},
        kvCacheOffloading={"enabled": False},
    )
    c = compile_spec(own)
    assert c.plan.instance.gpu_usable_bytes == 22 * GiB and not [
        w for w in c.plan.warnings if "instance.gpuMemory" in w
    ]
    assert "instance.gpuMemory" not in " ".join(helm.objects_and_warnings(own)[1])


def test_weights_that_fit_the_marketed_size_but_not_the_reported_one_are_refused():
    # 18.5 GiB + 2.3 GiB = 20.8 GiB: below 24 GiB x 0.92 = 22.1, above 22,589 MiB x 0.92 = 20.3
    model = {
        "id": "example/18g",
        "architecture": "LlamaForCausalLM",
        "layers": 32,
        "kvHeads": 8,
        "headDim": 128,
        "weights": "18944Mi",
        "maxModelLen": 1024,
    }
    disk = {"type": "g5.xlarge", "ephemeralStorage": "200Gi"}
    with pytest.raises(SpecError) as err:
        compile_spec(spec(model=model, instance=disk, kvCacheOffloading={"enabled": False}))
    (problem,) = [p for p in err.value.problems if p.path == ("parallelism", "tensor")]
    assert "offers 20.3 GiB" in problem.message
    measured = {**disk, "gpuModel": "A10G as measured here", "gpuMemory": "24Gi"}  # a GPU the table does not know
    compile_spec(spec(model=model, instance=measured, kvCacheOffloading={"enabled": False}))  # fits 24 GiB


@pytest.mark.parametrize(
    "model, instance",
    [
        ("meta-llama/Llama-3.1-8B-Instruct", A10G["instance"]),  # a reading in MiB
        ("google/gemma-4-31B-it", {"type": "Standard_NC80adis_H100_v5"}),  # a share of gpuMemory (H100 NVL)
        (
            "google/gemma-4-31B-it",
            {"type": "Standard_NC80adis_H100_v5", "gpuMemory": "94Gi"},
        ),  # the share of the spec's
    ],
)
def test_the_chart_plans_from_the_reported_gpu_memory_as_kvgen(model, instance):
    c = compile_spec(spec(model={"id": model}, instance=instance, kvCacheOffloading={"enabled": False}))
    assert c.plan.context_length.flag  # the planned length depends on the GPU memory
    _both(spec(model={"id": model}, instance=instance, kvCacheOffloading={"enabled": False}))


def test_every_catalog_gpu_model_has_a_reported_memory_with_a_source():
    table = catalog.load("instances.yaml")["gpuModels"]
    for row in catalog.instances().values():
        if row["gpus"]:
            entry = table[row["gpuModel"]]
            assert entry["source"] and (("mib" in entry) != ("share" in entry)), row["gpuModel"]
            reported = catalog.gpu_reported_memory(row["gpuModel"], quantity.to_bytes(row["gpuMemory"]))
            assert 0.9 * quantity.to_bytes(row["gpuMemory"]) < reported < quantity.to_bytes(row["gpuMemory"])


# ----------------------------------------------------------------------------- the multimodal processor cache

GEMMA = {"model": {"id": "google/gemma-4-12B-it"}}


def _mm(c) -> int:
    return sum(i.bytes for i in c.plan.sizing.memory_items if i.item == "mm-processor-cache")


@pytest.mark.parametrize(
    "args, cache",
    [
        ([], 4 * GiB),  # vLLM's default, held by the engine core (one API server)
        (["--mm-processor-cache-gb=0"], 0),  # disabled
        (["--mm-processor-cache-gb", "1.5"], int(1.5 * GiB)),
        (["--api-server-count=3"], 3 * 4 * GiB),  # every API server holds one, the engine core none
        (["-asc", "2", "--mm_processor_cache_gb=2"], 2 * 2 * GiB),
    ],
)
def test_a_multimodal_model_budgets_its_processor_cache_in_the_vllm_container(args, cache):
    c = compile_spec(spec(**GEMMA, vllm={"extraArgs": args}))
    assert _mm(c) == cache
    plain = compile_spec(spec(**GEMMA, vllm={"extraArgs": ["--mm-processor-cache-gb=0"]}))
    assert mem(c, "vllm") == mem(plain, "vllm") + sizing.round_up_gib(cache)  # plain is whole GiB
    assert mem(c, "vllm", "limits") == mem(c, "vllm")


def test_data_parallel_api_servers_each_hold_a_cache():
    c = compile_spec(spec(**GEMMA, instance={"type": "Standard_NC48ads_A100_v4"}, parallelism={"data": 2}))
    assert _mm(c) == 2 * 4 * GiB  # vLLM starts one API server per data-parallel rank (internal load balancing)


def test_a_text_model_has_no_processor_cache():
    assert _mm(compile_spec(spec())) == 0
    assert not catalog.models()["meta-llama/Llama-3.1-8B-Instruct"]["multimodal"]
    assert catalog.models()["google/gemma-4-12B-it"]["multimodal"]


def test_a_shared_memory_processor_cache_is_in_dev_shm_once():
    """--mm-processor-cache-type shm: one ring of the cache's size in shared memory (vLLM's
    ShmObjectStoreSenderCache), which the pod's /dev/shm emptyDir must hold, charged once."""
    c = compile_spec(spec(**GEMMA, vllm={"extraArgs": ["--mm-processor-cache-type=shm", "--mm-processor-cache-gb=2"]}))
    lru = compile_spec(spec(**GEMMA, vllm={"extraArgs": ["--mm-processor-cache-gb=2"]}))
    assert _mm(c) == _mm(lru) == 2 * GiB and mem(c, "vllm") == mem(lru, "vllm")
    assert volume(c, "dshm")["emptyDir"]["sizeLimit"] == "3Gi" and volume(lru, "dshm")["emptyDir"]["sizeLimit"] == "1Gi"
    # two API servers: no IPC cache, so vLLM ignores the type and each server holds its own
    two = compile_spec(spec(**GEMMA, vllm={"extraArgs": ["--mm-processor-cache-type", "shm", "-asc=2"]}))
    assert _mm(two) == 8 * GiB and volume(two, "dshm")["emptyDir"]["sizeLimit"] == "1Gi"


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--api-server-count=2"],
        ["--mm-processor-cache-gb", "0.5"],
        ["--mm-processor-cache-gb=0"],
        ["--mm-processor-cache-type=shm"],
        ["--mm-processor-cache-type=shm", "-asc", "2"],
    ],
)
def test_the_chart_budgets_the_processor_cache_as_kvgen(args):
    _both(spec(**GEMMA, vllm={"extraArgs": args}))


# ----------------------------------------------------------------------------- the startup budget


def _startup(c) -> tuple[int, int | None]:
    probe = container(c, "vllm")["startupProbe"]
    deployment = workload(c)
    return probe["periodSeconds"] * probe["failureThreshold"], deployment["spec"].get("progressDeadlineSeconds")


def test_a_small_model_keeps_the_thirty_minute_floor():
    budget, deadline = _startup(compile_spec(spec()))
    assert budget == 1800 and deadline == 1800 + 600


def test_a_large_model_gets_the_time_its_weights_take():
    c = compile_spec(
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME},
            parallelism={"tensor": 8},
        )
    )
    weights = 132 * GiB
    seconds = math.ceil(weights / (100 * MiB)) + math.ceil(weights / (125 * MiB)) + 600
    budget, deadline = _startup(c)
    assert budget == math.ceil(seconds / 10) * 10 and budget > 1800
    assert deadline == budget + 600


def test_weights_on_a_claim_are_not_downloaded():
    big = {
        "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
        "instance": {"type": "p5.48xlarge", "ephemeralStorage": NVME},
        "parallelism": {"tensor": 8},
    }
    hub = _startup(compile_spec(spec(**big)))[0]
    claim = _startup(compile_spec(spec(**{**big, "model": {**big["model"], "uri": "pvc://models/llama"}})))[0]
    assert claim == max(1800, math.ceil((math.ceil(132 * GiB / (125 * MiB)) + 600) / 10) * 10) < hub


def test_an_explicit_failure_threshold_is_the_budget():
    c = compile_spec(
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME},
            parallelism={"tensor": 8},
            probes={"startup": {"failureThreshold": 90, "periodSeconds": 20}},
        )
    )
    assert _startup(c) == (1800, 2400)


@pytest.mark.parametrize(
    "more",
    [
        {},
        {"probes": {"startup": {"failureThreshold": 7}}},
        {"probes": {"startup": {"periodSeconds": 7}}},
        {"model": {"id": "meta-llama/Llama-3.1-70B-Instruct", "uri": "pvc://m/x"}},
    ],
)
def test_the_chart_sizes_the_startup_budget_as_kvgen(more):
    big = {
        "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
        "instance": {"type": "p5.48xlarge", "ephemeralStorage": NVME},
        "parallelism": {"tensor": 8},
    }
    _both(spec(**{**big, **more}))


@pytest.mark.heavy
def test_an_inline_model_or_a_catalog_row_can_say_it_is_multimodal():
    inline = {
        "id": "example/vlm",
        "architecture": "LlavaForConditionalGeneration",
        "layers": 32,
        "kvHeads": 8,
        "headDim": 128,
        "weights": "15Gi",
        "maxModelLen": 4096,
        "multimodal": True,
    }
    assert _mm(compile_spec(spec(model=inline))) == 4 * GiB
    assert _mm(compile_spec(spec(model={**inline, "multimodal": False}))) == 0
    off = spec(**GEMMA, catalog={"models": {"google/gemma-4-12B-it": {"multimodal": False}}})
    assert _mm(compile_spec(off)) == 0
    _both(spec(model=inline))
    _both(off)


# ----------------------------------------------------------------------------- the CPU tier at tensor parallel


@pytest.mark.heavy
def test_cpu_memory_utilization_is_the_pods_share_for_the_whole_tier_at_any_tensor_parallel_size():
    """Issue 32 finding 8: one LMCache server per pod holds every tensor-parallel rank's chunks in one pool,
    so a native spec's cpuMemoryUtilization is the share of the pod's RAM for the whole L1 (on a
    p5.48xlarge at TP 8 and 0.5 the tier was RAM x 0.5 / 8). Both faces size the sidecar from it, and the
    launcher gets --utilization-scope=pod; utilizationScope rank is KAITO's RAM x utilization / TP."""
    values = spec(
        model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
        instance={"type": "p5.48xlarge", "ephemeralStorage": "200Gi"},
        parallelism={"tensor": 8},
        kvCacheOffloading={"cpuMemoryUtilization": 0.5},
    )
    c = compile_spec(values)
    s = c.plan.sizing
    assert s.cpu_tier == int(s.pod_allocatable * 0.5) // MiB * MiB
    ours = _both(values)
    server = [
        c
        for c in ours[("Deployment", values["name"])]["spec"]["template"]["spec"]["initContainers"]
        if c["name"] == "lmcache-mp-server"
    ][0]
    assert "--utilization-scope=pod" in server["args"] and "--tensor-parallel-size=8" in server["args"]
    assert quantity.to_bytes(server["resources"]["limits"]["memory"]) >= s.cpu_tier
    rank = spec(
        **{**values, "kvCacheOffloading": {"cpuMemoryUtilization": 0.5, "lmcache": {"utilizationScope": "rank"}}}
    )
    r = compile_spec(rank).plan.sizing
    assert r.cpu_tier == int(s.pod_allocatable * 0.5 / 8) // MiB * MiB
    ours = _both(rank)
    server = [
        c
        for c in ours[("Deployment", values["name"])]["spec"]["template"]["spec"]["initContainers"]
        if c["name"] == "lmcache-mp-server"
    ][0]
    assert "--utilization-scope=rank" in server["args"]
    assert quantity.to_bytes(server["resources"]["limits"]["memory"]) < s.cpu_tier
