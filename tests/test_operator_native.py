"""Native spec settings that KAITO's and KServe's own behaviour needs (issue 14): each renders what
the operator's code renders, the same in kvgen and its Helm chart. Every test names the upstream
test (or, where upstream has none, the code line) it follows."""

from __future__ import annotations

import helm
import helm_python
import pytest
from conftest import compile_spec, container, kv_transfer_config, spec, workload
from parity import assert_same_context

from kvgen.core import quantity
from kvgen.core.errors import SpecError

GiB = 1024**3
TIER = {"fileSystem": {"emptyDir": {"size": "100Gi"}}}


def env_of(c) -> dict:
    return {e["name"]: e for e in container(c, "vllm").get("env", [])}


def refused_by_both(values: dict) -> str:
    with pytest.raises(SpecError) as exc:
        compile_spec(values)
    with pytest.raises((helm_python.HelmValuesError, helm_python.HelmRenderError)):
        helm.render(values)
    return "\n".join(p.render() for p in exc.value.problems)


# ----------------------------------------------------------------------------- HF token optional


def test_hf_token_secret_optional_renders_like_kaito():
    """KAITO pkg/workspace/inference/preset_inferences_test.go TestGeneratePresetInference, cases
    "test-model-download-a100/vllm" and "test-model-download-distributed/vllm": the HF_TOKEN env is
    SecretKeyRef{Key: "HF_TOKEN", Name: "test-secret", Optional: ptr.To(true)} (SetHFToken)."""
    values = spec(
        model={
            "id": "meta-llama/Llama-3.1-8B-Instruct",
            "hfTokenSecret": {"name": "test-secret", "key": "HF_TOKEN", "optional": True},
        }
    )
    c = compile_spec(values)
    assert env_of(c)["HF_TOKEN"]["valueFrom"] == {
        "secretKeyRef": {"name": "test-secret", "key": "HF_TOKEN", "optional": True}
    }
    assert_same_context(values)
    # unset: the Kubernetes default (required), as before
    plain = compile_spec(
        spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "hfTokenSecret": {"name": "s", "key": "k"}})
    )
    assert env_of(plain)["HF_TOKEN"]["valueFrom"] == {"secretKeyRef": {"name": "s", "key": "k"}}


# ----------------------------------------------------------------------------- offloading spec name


def test_spec_name_tiering_without_tiers_is_kserves_cpu_tier():
    """KServe pkg/controller/v1alpha2/llmisvc/config_merge_test.go TestReplaceVariables, case
    "kvTransferConfig renders --kv-transfer-config from kvCacheOffloading" (cpu 10Gi, no tiers):
    spec_name TieringOffloadingSpec, cpu_bytes_to_use 10737418240."""
    values = spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "specName": "TieringOffloadingSpec"})
    kv = kv_transfer_config(compile_spec(values))
    assert kv["kv_connector_extra_config"] == {
        "cpu_bytes_to_use": 10737418240,
        "eviction_policy": "lru",
        "spec_name": "TieringOffloadingSpec",
    }
    assert_same_context(values)
    # without specName, the CPU tier alone stays CPUOffloadingSpec (native specs keep their output)
    default = kv_transfer_config(compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi"})))
    assert default["kv_connector_extra_config"]["spec_name"] == "CPUOffloadingSpec"


def test_spec_name_cpu_offloading_with_disk_tiers_is_refused_by_kvgen_and_the_chart():
    message = refused_by_both(
        spec(
            kvCacheOffloading={"backend": "native", "cpu": "10Gi", "specName": "CPUOffloadingSpec", "secondary": [TIER]}
        )
    )
    assert "specName CPUOffloadingSpec takes no secondary tiers" in message


# ----------------------------------------------------------------------------- prefill/decode


def test_native_decode_keeps_its_tiers_beside_nixl_in_a_multiconnector():
    """KServe pkg/controller/v1alpha2/llmisvc/controller_int_kvcache_test.go, Context "Single node",
    It "should inject an emptyDir volume for a secondary emptyDir tier" (with Prefill set): the
    decode workload keeps volume kv-cache-secondary-0 (emptyDir sizeLimit 100Gi) mounted on main at
    /mnt/kv-cache-0. vLLM 0.33 needs NIXL for the hand-off, so the OffloadingConnector goes into a
    MultiConnector after it (multi_connector.py); KAITO's failure policy "fail" is top level."""
    values = spec(
        model={"id": "Qwen/Qwen2.5-7B-Instruct"},
        disaggregation={"role": "decode"},
        kvCacheOffloading={"backend": "native", "cpu": "10Gi", "secondary": [TIER]},
    )
    c = compile_spec(values)
    assert c.plan.decision.enabled
    assert kv_transfer_config(c) == {
        "kv_connector": "MultiConnector",
        "kv_role": "kv_both",
        "kv_load_failure_policy": "fail",
        "kv_connector_extra_config": {
            "connectors": [
                {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
                {
                    "kv_connector": "OffloadingConnector",
                    "kv_role": "kv_both",
                    "kv_connector_extra_config": {
                        "cpu_bytes_to_use": 10737418240,
                        "eviction_policy": "lru",
                        "spec_name": "TieringOffloadingSpec",
                        "secondary_tiers": [{"type": "fs", "root_dir": "/mnt/kv-cache-0"}],
                    },
                },
            ]
        },
    }
    volumes = {v["name"]: v for v in workload(c)["spec"]["template"]["spec"]["volumes"]}
    assert volumes["kv-cache-secondary-0"]["emptyDir"] == {"sizeLimit": "100Gi"}
    mounts = {m["name"]: m["mountPath"] for m in container(c, "vllm")["volumeMounts"]}
    assert mounts["kv-cache-secondary-0"] == "/mnt/kv-cache-0"
    assert env_of(c)["VLLM_NIXL_SIDE_CHANNEL_HOST"]["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    assert_same_context(values)


def test_lmcache_decode_still_turns_offloading_off():
    """KAITO presets/workspace/inference/vllm/tests/test_kv_transfer_config.py
    TestSetKvTransferConfig.test_nixl_not_overridden_by_offload: a decode role with offloading
    asked for still gets NixlConnector alone (no LMCache server), with kv_load_failure_policy fail."""
    values = spec(disaggregation={"role": "prefill"}, kvCacheOffloading={"cpuMemoryUtilization": 0.5})
    c = compile_spec(values)
    assert c.plan.decision.reason_code == "prefill-decode-disaggregation"
    assert kv_transfer_config(c) == {
        "kv_connector": "NixlConnector",
        "kv_role": "kv_both",
        "kv_load_failure_policy": "fail",
    }
    assert_same_context(values)


# ----------------------------------------------------------------------------- a node nobody names


def test_an_instance_of_gpus_only_renders_without_fit_checks_and_says_so():
    """KServe has no instance: workload_single_node.go L138-139 copies the pod template as written
    and nothing checks a node (no upstream test asserts a node check; none exists). A spec with
    instance {gpus: N} and no type or memory renders N GPUs, skips the memory, disk and GPU fit
    checks with one warning, and passes no --max-model-len (vLLM finds the length)."""
    values = spec(
        model={"id": "Qwen/Qwen2.5-72B-Instruct"},
        instance={"gpus": 2},
        parallelism={"tensor": 2},
        kvCacheOffloading={"backend": "native", "cpu": "500Gi"},
        resources={"vllm": {"requests": {"memory": "2000Gi"}, "limits": {"memory": "2000Gi"}}},
    )
    c = compile_spec(values)
    res = container(c, "vllm")["resources"]
    assert res["limits"]["nvidia.com/gpu"] == 2 and res["requests"]["memory"] == "2000Gi"
    assert "nodeSelector" not in workload(c)["spec"]["template"]["spec"]
    assert not any(a.startswith("--max-model-len") for a in container(c, "vllm")["args"])
    (warning,) = [w for w in c.plan.warnings if w.startswith("node fit not checked")]
    assert "no memory and no GPU memory" in warning and "instance.type" in warning
    assert_same_context(values)
    # the same with a known node fails: 2000Gi does not fit a 1.9 TiB node
    with pytest.raises(SpecError, match="the pod needs"):
        compile_spec({**values, "instance": {"type": "Standard_ND96amsr_A100_v4"}, "parallelism": {"tensor": 8}})


@pytest.mark.heavy
def test_an_instance_without_gpus_is_the_cpu_rule_and_a_mig_one_the_mig_rule():
    """Decided from the resources when no node is known: KServe's nvidia.com/gpu absent is a CPU
    pod, nvidia.com/mig-<profile> a MIG slice (KAITO preset_inferences.go L560-567 requests the
    same resource; its interface_test.go TestGetInferenceCommandVLLMMIGDisablesCPUOffload turns
    offloading off on MIG)."""
    cpu = spec(
        model={"id": "meta-llama/Llama-3.2-1B-Instruct"},
        instance={"gpus": 0, "arch": "arm64"},
        kvCacheOffloading={"backend": "native", "cpu": "4Gi"},
    )
    c = compile_spec(cpu)
    assert c.plan.decision.reason_code == "cpu-instance"
    assert "nvidia.com/gpu" not in container(c, "vllm")["resources"]["limits"]
    assert_same_context(cpu)
    mig = spec(
        model={"id": "meta-llama/Llama-3.2-1B-Instruct"},
        instance={"gpus": 1, "mig": "1g.10gb"},
        kvCacheOffloading={"backend": "native", "cpu": "4Gi"},
    )
    c = compile_spec(mig)
    assert c.plan.decision.reason_code == "mig-partition"
    assert container(c, "vllm")["resources"]["limits"]["nvidia.com/mig-1g.10gb"] == 1
    assert_same_context(mig)


def test_the_lmcache_share_of_an_unknown_nodes_ram_is_refused_by_kvgen_and_the_chart():
    message = refused_by_both(spec(instance={"gpus": 1}, kvCacheOffloading={"cpuMemoryUtilization": 0.5}))
    assert "kvCacheOffloading.cpuMemoryUtilization" in message and "names no node" in message
    # an absolute L1 needs no node
    c = compile_spec(spec(instance={"gpus": 1}, kvCacheOffloading={"cpu": "20Gi"}))
    assert quantity.to_bytes(container(c, "lmcache-mp-server")["resources"]["requests"]["memory"]) == 25 * GiB


def test_a_typed_or_memory_described_node_is_still_checked():
    with pytest.raises(SpecError, match="unknown instance type"):
        compile_spec(spec(instance={"type": "my-node", "gpus": 1}))
    with pytest.raises(SpecError, match="missing instance.gpuMemory"):
        compile_spec(spec(instance={"gpus": 1, "memory": "200Gi"}))


@pytest.mark.heavy
def test_explain_of_an_unknown_node_says_unknown_not_zero(tmp_path):
    """kvgen explain --output json: the node's figures are null (unknown), not 0 bytes that 'fit'."""
    import json

    from conftest import dump, run_kvgen

    path = tmp_path / "unknown.yaml"
    path.write_text(dump(spec(instance={"gpus": 1}, kvCacheOffloading={"backend": "native", "cpu": "10Gi"})))
    result = run_kvgen("explain", str(path), "--output", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["memory"]["allocatableBytes"], report["memory"]["fits"]) == (None, None)
    assert report["kvCache"]["tiers"][0]["bytes"] is None  # the GPU tier: its memory is unknown
    assert any(w.startswith("node fit not checked") for w in report["warnings"])
    text = run_kvgen("explain", str(path))
    assert text.returncode == 0 and "capacity is unknown" in text.stdout
