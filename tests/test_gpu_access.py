"""kvCacheOffloading.lmcache.gpuAccess: how the LMCache server reaches vLLM's GPUs
(visible-devices, dra, in-container), and which image it runs (the vLLM image by default)."""

from __future__ import annotations

import typing

import contract_check
import contract_support as cs
import helm
import helm_python
import pytest
from conftest import ROOT, compile_spec, container, dump, run_kvgen, spec, workload
from ruamel.yaml import YAML

from kvgen import __version__
from kvgen.core import quantity
from kvgen.core.errors import SpecError
from kvgen.data import catalog
from kvgen.plan import gpu_access, sizing
from kvgen.spec.models import LMCacheServer

GiB = 1024**3
QWEN_TP2 = {
    "model": {"id": "Qwen/Qwen3-32B"},
    "instance": {"type": "Standard_NC96ads_A100_v4"},
    "parallelism": {"tensor": 2},
}
# the kubelet on the instance NVMe: a default EKS pool's 20 GiB would not hold the 134 GiB model cache
MULTI_NODE = {
    "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
    "instance": {"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    "parallelism": {"tensor": 16, "nodes": 2},
}

RUNTIME = f"ghcr.io/kvgen-dev/vllm-lmcache:{__version__}"  # the lmcache backend's default image


def lmcache(mode: str, **more) -> dict:
    return {"kvCacheOffloading": {"lmcache": {"gpuAccess": mode, **more}}}


def pod_of(compiled, index: int = 0) -> dict:
    return [o for o in compiled.objects if o["kind"] in ("Deployment", "StatefulSet")][index]["spec"]["template"][
        "spec"
    ]


def gpu_requests(c: dict) -> dict:
    r = c["resources"]
    return {k: v for part in (r["requests"], r["limits"]) for k, v in part.items() if k.startswith("nvidia.com/")}


# ----------------------------------------------------------------------------- the modes as data


def test_the_modes_in_the_data_file_are_the_specs():
    modes = gpu_access.modes()
    assert tuple(modes) == typing.get_args(LMCacheServer.model_fields["gpu_access"].annotation)
    assert {m: row.get("minKubeVersion") for m, row in modes.items()} == {
        "visible-devices": "1.29",
        "dra": "1.34",
        "in-container": None,
    }
    # a floor comes with why, and what to use below it (both faces print them)
    assert all(
        row["minKubeVersionReason"] and row["minKubeVersionAlternative"]
        for row in modes.values()
        if "minKubeVersion" in row
    )
    assert all(row["summary"] and row["requirement"] for row in modes.values())


# ----------------------------------------------------------------------------- visible-devices (default)


def test_default_is_a_visible_devices_sidecar_running_the_vllm_image():
    c = compile_spec(spec())
    side = container(c, "lmcache-mp-server")
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in side["env"]
    assert gpu_requests(side) == {} and "claims" not in side["resources"]
    assert gpu_requests(container(c, "vllm")) == {"nvidia.com/gpu": 1}
    # kvgen's runtime image: vLLM's with LMCache built against its torch (its CUDA kernels load)
    assert side["image"] == container(c, "vllm")["image"] == RUNTIME
    assert workload(c)["metadata"]["annotations"]["kvgen.dev/lmcache-gpu-access"] == "visible-devices"
    assert not [o for o in c.objects if o["kind"] == "ResourceClaimTemplate"]


# ----------------------------------------------------------------------------- dra


def test_dra_claims_the_pods_gpus_once_and_both_containers_list_the_claim():
    c = compile_spec(spec(**QWEN_TP2, **lmcache("dra")), "1.34")
    (rct,) = [o for o in c.objects if o["kind"] == "ResourceClaimTemplate"]
    assert rct["apiVersion"] == "resource.k8s.io/v1" and rct["metadata"]["name"] == "demo-gpus"
    assert rct["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}
    ]
    pod = pod_of(c)
    assert pod["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "demo-gpus"}]
    vllm, side = container(c, "vllm"), container(c, "lmcache-mp-server")
    for c_ in (vllm, side):
        assert c_["resources"]["claims"] == [{"name": "gpus"}]
        assert gpu_requests(c_) == {}  # no device-plugin request: the claim is the pod's GPUs


VOID = {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def test_dra_turns_off_the_images_nvidia_visible_devices_all_in_both_containers():
    """The vLLM image sets NVIDIA_VISIBLE_DEVICES=all: where the runtime honours it, each container
    would see every GPU of the node besides its claim's; void leaves only the claim's CDI devices."""
    c = compile_spec(spec(**QWEN_TP2, **lmcache("dra"), vllm={"env": [{"name": "FOO", "value": "1"}]}), "1.34")
    vllm, side = container(c, "vllm"), container(c, "lmcache-mp-server")
    assert side["env"] == [VOID]
    assert vllm["env"][-2:] == [VOID, {"name": "FOO", "value": "1"}]  # the spec's variables come after (and win)
    visible = compile_spec(spec(**QWEN_TP2), "1.34")  # visible-devices: the sidecar's `all`, vLLM untouched
    assert VOID not in container(visible, "vllm").get("env", [])
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in container(visible, "lmcache-mp-server")["env"]


def test_dra_pods_tolerate_the_gpu_taint_that_managed_clusters_tolerate_only_for_gpu_requests():
    c = compile_spec(spec(**QWEN_TP2, **lmcache("dra")), "1.34")
    assert pod_of(c)["tolerations"] == [GPU_TOLERATION]
    own = {"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}
    c = compile_spec(spec(**QWEN_TP2, **lmcache("dra"), scheduling={"tolerations": [own]}), "1.34")
    assert pod_of(c)["tolerations"] == [own, GPU_TOLERATION]  # the spec's first
    mine = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    c = compile_spec(spec(**QWEN_TP2, **lmcache("dra"), scheduling={"tolerations": [mine]}), "1.34")
    assert pod_of(c)["tolerations"] == [mine]  # the spec's own toleration of the key stands alone
    assert "tolerations" not in pod_of(compile_spec(spec(**QWEN_TP2), "1.34"))  # a device-plugin request: none added


def test_dra_on_multi_node_workers_turns_off_the_images_variable_and_tolerates_the_taint():
    c = compile_spec(spec(**MULTI_NODE, **lmcache("dra")), "1.35")
    for index in (0, 1):
        pod = pod_of(c, index)
        assert pod["tolerations"] == [GPU_TOLERATION]
        assert VOID in next(x for x in pod["containers"] if x["name"] == "vllm")["env"]


@pytest.mark.heavy
@pytest.mark.parametrize(
    "scheduling",
    [
        {},
        {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]},
        {"tolerations": [{"key": "a", "operator": "Exists"}]},
    ],
)
def test_the_chart_turns_off_the_variable_and_adds_the_toleration_as_kvgen(scheduling):
    values = spec(**QWEN_TP2, **lmcache("dra"), vllm={"env": [{"name": "FOO", "value": "1"}]}, scheduling=scheduling)
    assert helm.by_identity(helm.objects(values, kube_version="1.34")) == helm.by_identity(
        compile_spec(values, "1.34").objects
    )


def test_dra_device_class_is_configurable():
    c = compile_spec(spec(**QWEN_TP2, **lmcache("dra", deviceClassName="a100.gpu.example.com")), "1.34")
    (rct,) = [o for o in c.objects if o["kind"] == "ResourceClaimTemplate"]
    assert rct["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "a100.gpu.example.com"


def test_dra_on_a_multi_node_server_gives_every_rank_its_claim():
    c = compile_spec(spec(**MULTI_NODE, **lmcache("dra")), "1.35")
    (rct,) = [o for o in c.objects if o["kind"] == "ResourceClaimTemplate"]
    assert rct["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 8  # GPUs per pod, not per server
    for index in (0, 1):
        assert pod_of(c, index)["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "demo-gpus"}]


@pytest.mark.heavy
def test_dra_below_kubernetes_1_34_is_refused_with_the_spec_path_and_line(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(dump(spec(**QWEN_TP2, **lmcache("dra"))))
    result = run_kvgen("render", str(path))
    assert result.returncode == 1 and result.stdout == ""
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "gpuAccess" in text)
    assert f"{path}:{line}:" in result.stderr
    assert "kvCacheOffloading.lmcache.gpuAccess: gpuAccess dra needs Kubernetes 1.34 or newer" in result.stderr
    assert (
        'set kubeVersion: "1.34" (or render with --kube-version 1.34' in result.stderr
        and "Traceback" not in result.stderr
    )
    assert run_kvgen("render", "--kube-version", "1.34", str(path)).returncode == 0


def test_dra_is_reported_together_with_every_other_problem():
    data = spec(**QWEN_TP2, **lmcache("dra"), resources={"vllm": {"requests": {"memory": "4000Gi"}}})
    with pytest.raises(SpecError) as err:
        compile_spec(data, "1.33")
    paths = [p.path for p in err.value.problems]
    assert ("kvCacheOffloading", "lmcache", "gpuAccess") in paths and len(paths) == 2


def test_dra_with_offloading_off_needs_no_newer_kubernetes():
    c = compile_spec(spec(**QWEN_TP2, kvCacheOffloading={"enabled": False, "lmcache": {"gpuAccess": "dra"}}), "1.33")
    assert gpu_requests(container(c, "vllm")) == {"nvidia.com/gpu": 2}
    assert not [o for o in c.objects if o["kind"] == "ResourceClaimTemplate"]


@pytest.mark.heavy
def test_the_chart_refuses_dra_below_1_34_and_renders_it_from_1_34():
    values = spec(**QWEN_TP2, **lmcache("dra"))
    with pytest.raises(helm_python.HelmRenderError) as err:
        helm.render(values, kube_version="1.33")
    assert "kvCacheOffloading.lmcache.gpuAccess: gpuAccess dra needs Kubernetes 1.34 or newer" in str(err.value)
    objs = helm.by_identity(helm.objects(values, kube_version="1.34"))
    assert objs == helm.by_identity(compile_spec(values, "1.34").objects)
    assert ("ResourceClaimTemplate", "demo-gpus") in objs


# ----------------------------------------------------------------------------- in-container


def test_in_container_runs_the_server_inside_the_vllm_container_under_the_launcher():
    sidecar_mode, c = compile_spec(spec()), compile_spec(spec(**lmcache("in-container")))
    pod = pod_of(c)
    assert "initContainers" not in pod
    vllm = container(c, "vllm")
    assert vllm["command"] == ["python3", "/opt/kvgen/lmcache_launcher.py"]
    args = vllm["args"]
    launcher, rest = args[: args.index("--")], args[args.index("--") + 1 :]
    server, main = rest[: rest.index("--then")], rest[rest.index("--then") + 1 :]
    # the health endpoint per LMCache version (0.4.4 /api/healthcheck, 0.4.5 on /healthcheck) and the range it accepts
    assert launcher[-6:] == [
        "--lmcache-min=0.4.4",
        "--lmcache-below=0.6.0",
        "--kernels=required",  # LMCache's CUDA kernels load, or it does not start (allowTorchFallback)
        "--http-url=http://127.0.0.1:8080",
        "--health-path=0.4.4:/api/healthcheck",
        "--health-path=0.4.5:/healthcheck",
    ]
    side_args = container(sidecar_mode, "lmcache-mp-server")["args"]
    assert server == side_args[side_args.index("--") + 1 :]  # the same `lmcache server` command
    assert main == ["vllm", "serve", *container(sidecar_mode, "vllm")["args"]]  # the same vLLM command line
    assert {"name": "lmcache-launcher", "mountPath": "/opt/kvgen", "readOnly": True} in vllm["volumeMounts"]
    assert gpu_requests(vllm) == {"nvidia.com/gpu": 1}
    assert workload(c)["spec"]["template"]["metadata"]["annotations"]["kvgen.dev/lmcache-gpu-access"] == "in-container"


def test_in_container_sizes_the_vllm_container_for_the_server_and_its_l1():
    tiers = {"cpuMemoryUtilization": 0.3, "secondary": [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}]}
    sidecar_mode = compile_spec(spec(kvCacheOffloading=tiers))
    c = compile_spec(spec(kvCacheOffloading={**tiers, "lmcache": {"gpuAccess": "in-container"}}))
    before_vllm = container(sidecar_mode, "vllm")["resources"]
    before_side = container(sidecar_mode, "lmcache-mp-server")["resources"]
    after = container(c, "vllm")["resources"]
    for kind_ in ("requests", "limits"):
        assert quantity.to_bytes(after[kind_]["memory"]) == (
            quantity.to_bytes(before_vllm[kind_]["memory"]) + quantity.to_bytes(before_side[kind_]["memory"])
        )
    assert quantity.to_bytes(after["requests"]["ephemeral-storage"]) == (
        quantity.to_bytes(before_vllm["requests"]["ephemeral-storage"]) + 100 * GiB
    )
    assert after["requests"]["cpu"] == before_vllm["requests"]["cpu"]
    # the launcher keeps the vLLM part out of L1: reserve = vLLM's limit + the server's overhead
    reserve = next(a for a in container(c, "vllm")["args"] if a.startswith("--reserve-bytes="))
    assert (
        int(reserve.split("=")[1])
        == quantity.to_bytes(before_vllm["limits"]["memory"]) + sizing.LMCACHE_SERVER_OVERHEAD
    )
    assert {"name": "kv-cache-secondary-0", "mountPath": "/mnt/kv-cache-0"} in container(c, "vllm")["volumeMounts"]


@pytest.mark.heavy
def test_in_container_l1_is_the_sidecars_on_the_same_node():
    """Run the rendered launcher (dry run) on a node with the instance's RAM and the container's
    memory limit as its cgroup limit: the server gets the same L1 in both modes."""

    def l1(c):
        (line,) = [cl for cl in contract_check.command_lines(c.objects, "demo") if cl.kind == "lmcache"]
        argv = cs.launcher_exec_argv(line, c)
        return argv[argv.index("--l1-size-gb") + 1]

    for offload in ({"cpuMemoryUtilization": 0.5}, {"cpu": "40Gi"}, {"cpuMemoryUtilization": 0.9, "cpu": "150Gi"}):
        both = [
            compile_spec(spec(kvCacheOffloading={**offload, "lmcache": {"gpuAccess": m}}))
            for m in ("visible-devices", "in-container")
        ]
        assert l1(both[0]) == l1(both[1]), offload


def test_in_container_explicit_resources_are_the_two_parts_added():
    c = compile_spec(
        spec(
            **lmcache("in-container"),
            resources={
                "vllm": {"requests": {"memory": "40Gi", "cpu": "8"}, "limits": {"ephemeral-storage": "50Gi"}},
                "lmcacheServer": {"requests": {"memory": "60Gi", "cpu": "3"}},
            },
        )
    )
    r = container(c, "vllm")["resources"]
    assert r["requests"]["memory"] == "100Gi" and r["requests"]["cpu"] == "8"
    assert quantity.to_bytes(r["limits"]["ephemeral-storage"]) == 50 * GiB  # the server has no ephemeral storage here
    assert any("resources.lmcacheServer cpu is not used with gpuAccess in-container" in w for w in c.plan.warnings)


@pytest.mark.heavy
def test_in_container_multi_node_workers_run_headless_under_the_launcher():
    c = compile_spec(spec(**MULTI_NODE, **lmcache("in-container")))
    lines = contract_check.command_lines(c.objects, "demo")
    assert [(cl.workload, cl.kind) for cl in lines] == [
        ("demo", "lmcache"),
        ("demo", "vllm"),
        ("demo-worker", "lmcache"),
        ("demo-worker", "vllm"),
    ]
    worker = next(cl for cl in lines if cl.workload == "demo-worker" and cl.kind == "vllm")
    assert "--headless" in worker.argv and worker.argv[0] == "meta-llama/Llama-3.1-70B-Instruct"
    for line in lines:
        assert cs.check(line.kind, cs.launcher_exec_argv(line, c) if line.kind == "lmcache" else line.argv) == []


# ----------------------------------------------------------------------------- one LMCache install


def test_the_sidecar_follows_the_vllm_image_when_that_is_overridden():
    c = compile_spec(
        spec(images={"vllm": {"repository": "registry.example.com/kvgen/vllm-lmcache", "tag": "v0.33.0-lmcache0.5.6"}})
    )
    assert container(c, "lmcache-mp-server")["image"] == "registry.example.com/kvgen/vllm-lmcache:v0.33.0-lmcache0.5.6"
    assert not any("images.lmcache" in w for w in c.plan.warnings)


@pytest.mark.parametrize(
    "own, image",
    [
        ({"repository": "lmcache/standalone", "tag": "v0.5.6"}, "lmcache/standalone:v0.5.6"),
        ({"tag": "v0.33.1"}, "ghcr.io/kvgen-dev/vllm-lmcache:v0.33.1"),
        ({"repository": "mirror.example.com/lmcache"}, f"mirror.example.com/lmcache:{__version__}"),
        ({"digest": "sha256:" + "c" * 64}, "ghcr.io/kvgen-dev/vllm-lmcache@sha256:" + "c" * 64),
    ],
)
def test_an_explicit_lmcache_image_replaces_fields_of_the_vllm_image_and_warns(own, image):
    c = compile_spec(spec(images={"lmcache": own}))
    assert container(c, "lmcache-mp-server")["image"] == image
    (warning,) = [w for w in c.plan.warnings if w.startswith("images.lmcache")]
    assert image in warning and RUNTIME in warning
    assert "same LMCache version (0.5.6)" in warning


def test_an_lmcache_tag_does_not_inherit_the_vllm_digest():
    digest = "sha256:" + "a" * 64
    c = compile_spec(
        spec(images={"vllm": {"digest": digest}, "lmcache": {"repository": "lmcache/standalone", "tag": "v0.5.6"}})
    )
    assert container(c, "vllm")["image"] == f"ghcr.io/kvgen-dev/vllm-lmcache@{digest}"
    assert container(c, "lmcache-mp-server")["image"] == "lmcache/standalone:v0.5.6"


def test_an_lmcache_image_equal_to_the_vllm_image_does_not_warn():
    c = compile_spec(spec(images={"lmcache": {"repository": "ghcr.io/kvgen-dev/vllm-lmcache", "tag": __version__}}))
    assert not any(w.startswith("images.lmcache") for w in c.plan.warnings)


def test_unused_settings_are_warnings_not_silence():
    c = compile_spec(spec(**lmcache("in-container"), images={"lmcache": {"tag": "v0.5.6"}}))
    assert any("images.lmcache is not used with gpuAccess in-container" in w for w in c.plan.warnings)
    c = compile_spec(spec(**lmcache("visible-devices", deviceClassName="gpu.example.com")))
    assert any("deviceClassName applies to gpuAccess dra only" in w for w in c.plan.warnings)
    c = compile_spec(
        spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "lmcache": {"gpuAccess": "in-container"}})
    )
    assert any("kvCacheOffloading.lmcache applies to the lmcache backend only" in w for w in c.plan.warnings)
    assert not [w for w in compile_spec(spec()).plan.warnings if "lmcache" in w]


# ----------------------------------------------------------------------------- NOTES.txt


def notes(values: dict, kube_version: str = "1.33") -> str:
    return next(v for k, v in helm.render(values, kube_version=kube_version).items() if k.endswith("NOTES.txt"))


@pytest.mark.parametrize("mode, version", [("visible-devices", "1.33"), ("dra", "1.34"), ("in-container", "1.33")])
def test_notes_state_the_mode_and_its_requirement(mode, version):
    row = gpu_access.modes()[mode]
    text = notes(spec(**QWEN_TP2, **lmcache(mode)), version)
    flat = " ".join(text.split())
    assert f"LMCache GPU access: {mode}: {' '.join(row['summary'].split())}." in flat
    assert f"Requires: {' '.join(row['requirement'].split())}." in flat
    assert f"-c {'vllm' if mode == 'in-container' else 'lmcache-mp-server'} " in text


@pytest.mark.heavy
def test_notes_warn_when_the_server_image_differs_from_vllms():
    text = notes(spec(images={"lmcache": {"repository": "lmcache/standalone", "tag": "v0.5.6"}}))
    assert (
        "Warning: images.lmcache: the LMCache server runs from lmcache/standalone:v0.5.6, the LMCacheMPConnector "
        f"(the client) from the vLLM image {RUNTIME}"
    ) in text
    token = {"id": "meta-llama/Llama-3.1-8B-Instruct", "hfTokenSecret": {"name": "hf", "key": "HF_TOKEN"}}  # gated
    assert "Warning" not in notes(spec(model=token))
    assert "LMCache GPU access" not in notes(spec(kvCacheOffloading={"enabled": False}))


def test_values_yaml_documents_the_modes():
    values = YAML(typ="safe", pure=True).load((ROOT / "charts" / "kvgen" / "values.yaml").read_text())
    assert values["kvCacheOffloading"]["lmcache"] == {
        "gpuAccess": "visible-devices",
        "deviceClassName": "gpu.nvidia.com",
        "allowTorchFallback": False,
        "utilizationScope": "pod",
    }
    assert catalog.runtime()["lmcache"]["python"] == "python3" and catalog.runtime()["lmcache"]["server"] == "lmcache"
