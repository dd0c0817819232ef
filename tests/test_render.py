"""Shapes of the rendered objects: the launcher wiring, multi-node StatefulSets, labels,
secrets by reference only."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, compile_spec, container, kind, spec, workload

LAUNCHER = ROOT / "charts" / "kvgen" / "files" / "lmcache_launcher.py"

# p5 node pools that put the kubelet on the instance NVMe (a default EKS pool has a 20 GiB root volume)
NVME = "28312Gi"


def test_launcher_ships_in_a_configmap_and_the_sidecar_runs_it():
    c = compile_spec(spec())
    cm = kind(c, "ConfigMap")
    assert cm["metadata"]["name"] == "demo-lmcache-launcher"
    assert cm["data"]["lmcache_launcher.py"] == LAUNCHER.read_text()
    side = container(c, "lmcache-mp-server")
    assert side["command"] == ["python3", "/opt/kvgen/lmcache_launcher.py"]  # the vLLM image's system Python
    assert {"name": "lmcache-launcher", "mountPath": "/opt/kvgen", "readOnly": True} in side["volumeMounts"]
    pod = workload(c)["spec"]["template"]["spec"]
    (vol,) = [v for v in pod["volumes"] if v["name"] == "lmcache-launcher"]
    assert vol["configMap"]["name"] == "demo-lmcache-launcher"
    # a changed launcher rolls the pods
    import hashlib

    sha = hashlib.sha256(LAUNCHER.read_bytes()).hexdigest()
    assert workload(c)["spec"]["template"]["metadata"]["annotations"]["kvgen.dev/lmcache-launcher-sha256"] == sha


def test_sidecar_shares_dev_shm_and_sees_the_gpus_without_requesting_one():
    c = compile_spec(spec())
    side = container(c, "lmcache-mp-server")
    assert {"name": "dshm", "mountPath": "/dev/shm"} in side["volumeMounts"]
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in side["env"]
    assert not any(k.startswith("nvidia.com/") for k in side["resources"]["limits"])
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container(c, "vllm")["volumeMounts"]


def test_lmcache_disk_tiers_mount_on_the_sidecar_as_l2_fs_adapters():
    c = compile_spec(
        spec(kvCacheOffloading={"cpu": "20Gi", "secondary": [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}]})
    )
    side = container(c, "lmcache-mp-server")
    assert {"name": "kv-cache-secondary-0", "mountPath": "/mnt/kv-cache-0"} in side["volumeMounts"]
    args = side["args"]
    # a tier of known size is bounded (fs_native + eviction); LMCache's plain fs adapter has no bound
    assert json.loads(args[args.index("--l2-adapter") + 1]) == {
        "type": "fs_native",
        "base_path": "/mnt/kv-cache-0",
        "max_capacity_gb": 100,
        "eviction": {"eviction_policy": "LRU", "trigger_watermark": 0.8, "eviction_ratio": 0.2},
    }
    assert side["resources"]["requests"]["ephemeral-storage"] == "100Gi"
    assert not any(m["name"].startswith("kv-cache-secondary") for m in container(c, "vllm")["volumeMounts"])


def test_multi_node_renders_leader_and_worker_statefulsets_and_a_headless_service():
    c = compile_spec(
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME},
            parallelism={"tensor": 8, "pipeline": 3, "nodes": 3},
        )
    )
    assert [o["kind"] for o in c.objects] == ["Service", "Service", "StatefulSet", "StatefulSet"]
    leader, worker = [o for o in c.objects if o["kind"] == "StatefulSet"]
    assert leader["metadata"]["name"] == "demo" and leader["spec"]["replicas"] == 1 and "ordinals" not in leader["spec"]
    # worker ordinals start at 1, so each pod's apps.kubernetes.io/pod-index is its node rank
    assert worker["metadata"]["name"] == "demo-worker" and worker["spec"]["replicas"] == 2
    assert worker["spec"]["ordinals"] == {"start": 1}
    assert leader["spec"]["serviceName"] == worker["spec"]["serviceName"] == "demo-headless"
    headless = [o for o in c.objects if o["kind"] == "Service" and o["spec"].get("clusterIP") == "None"]
    assert headless[0]["metadata"]["name"] == "demo-headless"
    assert headless[0]["spec"]["selector"] == {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "demo"}
    api = [o for o in c.objects if o["kind"] == "Service" and o["metadata"]["name"] == "demo"][0]
    assert api["spec"]["selector"]["kvgen.dev/node-role"] == "leader"
    assert leader["spec"]["selector"]["matchLabels"]["kvgen.dev/node-role"] == "leader"
    assert worker["spec"]["selector"]["matchLabels"]["kvgen.dev/node-role"] == "worker"
    lc, wc = (o["spec"]["template"]["spec"]["containers"][0] for o in (leader, worker))
    for args in (lc["args"], wc["args"]):
        assert "--nnodes=3" in args and "--node-rank=$(NODE_RANK)" in args
        assert "--master-addr=demo-0.demo-headless" in args
    assert "--headless" in wc["args"] and "--headless" not in lc["args"]
    assert "startupProbe" in lc and "startupProbe" not in wc and "readinessProbe" not in wc
    env = {e["name"]: e for e in wc["env"]}
    assert env["NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['apps.kubernetes.io/pod-index']"
    assert wc["resources"]["limits"]["nvidia.com/gpu"] == 8


def test_single_node_is_a_deployment_and_service():
    c = compile_spec(spec())
    assert [o["kind"] for o in c.objects] == ["ConfigMap", "Service", "Deployment"]
    dep = kind(c, "Deployment")
    assert dep["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}


def test_recommended_labels_and_instance_type_pinning():
    c = compile_spec(spec())
    labels = workload(c)["metadata"]["labels"]
    assert labels["app.kubernetes.io/name"] == "vllm"
    assert labels["app.kubernetes.io/instance"] == "demo"
    assert labels["app.kubernetes.io/managed-by"] == "kvgen"
    assert labels["app.kubernetes.io/version"] == "v0.33.0"
    pod = workload(c)["spec"]["template"]["spec"]
    assert pod["nodeSelector"]["node.kubernetes.io/instance-type"] == "Standard_NC24ads_A100_v4"


def test_hf_token_is_only_a_secret_reference():
    c = compile_spec(
        spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "hfTokenSecret": {"name": "hf", "key": "token"}})
    )
    (env,) = [e for e in container(c, "vllm")["env"] if e["name"] == "HF_TOKEN"]
    assert env == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}


def test_user_scheduling_and_env_pass_through():
    c = compile_spec(
        spec(
            scheduling={
                "nodeSelector": {"pool": "gpu"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "priorityClassName": "inference",
            },
            vllm={"env": [{"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"}], "extraArgs": ["--max-num-seqs=64"]},
        )
    )
    pod = workload(c)["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4", "pool": "gpu"}
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu" and pod["priorityClassName"] == "inference"
    assert container(c, "vllm")["args"][-1] == "--max-num-seqs=64"
    assert {"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"} in container(c, "vllm")["env"]


def test_image_overrides_and_digest():
    digest = "sha256:" + "a" * 64
    c = compile_spec(
        spec(images={"vllm": {"tag": "v0.33.1"}, "lmcache": {"repository": "mirror/lmcache", "digest": digest}})
    )
    # a tag alone applies to the backend's default repository: kvgen's runtime image with LMCache
    assert container(c, "vllm")["image"] == "ghcr.io/kvgen-dev/vllm-lmcache:v0.33.1"
    assert container(c, "lmcache-mp-server")["image"] == f"mirror/lmcache@{digest}"


def test_multi_node_tensor_parallel_keeps_offloading_with_a_sidecar_on_every_rank():
    c = compile_spec(
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME},
            parallelism={"tensor": 16, "nodes": 2},
        )
    )
    assert [o["kind"] for o in c.objects] == ["ConfigMap", "Service", "Service", "StatefulSet", "StatefulSet"]
    for sts in (o for o in c.objects if o["kind"] == "StatefulSet"):
        (side,) = sts["spec"]["template"]["spec"]["initContainers"]
        assert side["name"] == "lmcache-mp-server" and "--tensor-parallel-size=16" in side["args"]


def test_a_model_and_a_node_outside_the_catalog_can_be_described_inline():
    c = compile_spec(
        spec(
            model={
                "id": "acme/private-13b",
                "architecture": "LlamaForCausalLM",
                "layers": 40,
                "kvHeads": 8,
                "headDim": 128,
                "weights": "26Gi",
            },
            instance={"gpus": 2, "gpuMemory": "48Gi", "memory": "256Gi", "cpu": 32, "localDisk": "2Ti"},
            parallelism={"tensor": 2},
        )
    )
    assert container(c, "vllm")["args"][0] == "acme/private-13b"
    assert c.plan.model.kv_bytes_per_token(tensor_parallel=2) == 40 * 2 * 4 * 128 * 2
    assert "nodeSelector" not in workload(c)["spec"]["template"]["spec"]  # no instance type to pin to
    assert container(c, "vllm")["resources"]["limits"]["nvidia.com/gpu"] == 2


def test_invalid_output_is_refused_with_every_error_and_exit_code_3(monkeypatch):
    import pytest
    from typer.testing import CliRunner

    from kvgen.app.cli import app
    from kvgen.core.errors import OutputInvalidError
    from kvgen.render import templates as render

    bad = [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "x"},
            "spec": {"ports": [{"port": "eighty"}], "bogus": 1},
        }
    ]
    with pytest.raises(OutputInvalidError) as err:
        render.check(bad, "1.33")
    assert len(err.value.messages) == 2  # both errors, not just the first
    real_objects = render.objects
    monkeypatch.setattr(render, "objects", lambda ctx: real_objects(ctx) + bad)
    result = CliRunner().invoke(app, ["render", str(ROOT / "examples" / "kaito-gemma-4-12b.yaml")])
    assert result.exit_code == 3
    assert "not valid Kubernetes" in result.output


@pytest.mark.heavy
def test_the_characters_escaped_in_the_templates_output_are_those_a_yaml_stream_must_not_hold_raw():
    """render._NOT_YAML, written as the refused characters (a class Python compiles ~10x faster than
    its complement), matches exactly the code points outside YAML's printable set less the line
    breaks and byte order mark: every one of the 1,114,112 is checked."""
    from kvgen.render import templates as render

    allowed = ((0x20, 0x7E), (0xA0, 0x2027), (0x202A, 0xD7FF), (0xE000, 0xFEFE), (0xFF00, 0xFFFD), (0x10000, 0x10FFFF))
    refused = "".join(chr(c) for c in range(0x110000) if not any(lo <= c <= hi for lo, hi in allowed))
    assert "".join(render._NOT_YAML.findall("".join(map(chr, range(0x110000))))) == refused
    assert render._json("a\x7f\x85\u2028\ufeff\ud800b") == '"a\\u007f\\u0085\\u2028\\ufeff\\ud800b"'
