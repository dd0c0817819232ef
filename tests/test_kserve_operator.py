"""A KServe LLMInferenceService renders what KServe's own controller would run (issue 14).

Each test names the KServe test it ports (kserve/kserve at aaac4e294dae), or the code line where
KServe has no test. Paths are under pkg/controller/v1alpha2/llmisvc/ unless said otherwise.
"""

from __future__ import annotations

import pytest
from conftest import container, kv_transfer_config, workload
from kserve_inputs import compile_svc, main

from kvgen.app.compiler import InputErrors

GiB = 1024**3


def problems(body: str, instance: str | None = "Standard_NC24ads_A100_v4") -> list[str]:
    with pytest.raises(InputErrors) as exc:
        compile_svc(body, instance)
    return [p.render() for e in exc.value.errors for p in e.problems]


def extra(c) -> dict:
    kv = kv_transfer_config(c)
    assert kv is not None, "no --kv-transfer-config"
    return kv["kv_connector_extra_config"]


def resources(c) -> dict:
    return container(c, "vllm")["resources"]


# ----------------------------------------------------------------------------- the offload config


def test_cpu_tier_alone_is_tiering_offloading_spec():
    """config_merge_test.go TestReplaceVariables, "kvTransferConfig renders --kv-transfer-config from
    kvCacheOffloading": cpu 10Gi -> {"cpu_bytes_to_use":10737418240,"spec_name":"TieringOffloadingSpec"}.
    (The CRD defaults evictionPolicy to lru, llm_inference_service_types.go L220-224, so the
    controller of a stored object also renders eviction_policy lru.)"""
    (c,) = compile_svc("kvCacheOffloading: {cpu: 10Gi}\n").compiled
    assert kv_transfer_config(c)["kv_connector"] == "OffloadingConnector"
    assert extra(c) == {"cpu_bytes_to_use": 10737418240, "eviction_policy": "lru", "spec_name": "TieringOffloadingSpec"}


def test_eviction_policy_as_written():
    """config_merge_test.go TestReplaceVariables, "kvTransferConfig includes eviction policy when set"
    (5Gi, arc), and TestReplaceVariables_KVTransferConfigBashSafe (eviction_policy lru)."""
    (arc,) = compile_svc("kvCacheOffloading: {cpu: 5Gi, evictionPolicy: arc}\n").compiled
    assert extra(arc)["cpu_bytes_to_use"] == 5368709120 and extra(arc)["eviction_policy"] == "arc"
    (lru,) = compile_svc("kvCacheOffloading: {cpu: 5Gi, evictionPolicy: lru}\n").compiled
    assert extra(lru)["eviction_policy"] == "lru" and extra(lru)["spec_name"] == "TieringOffloadingSpec"


def test_tiers_are_numbered_by_position():
    """config_merge_test.go TestReplaceVariables, "kvTransferConfig renders multiple secondary tiers
    with indexed root_dirs" and "kvTransferConfig pvc.ref tier renders fs type with index-based root_dir"."""
    (c,) = compile_svc("""\
        kvCacheOffloading:
          cpu: 10Gi
          secondary:
            - fileSystem: {emptyDir: {size: 100Gi}}
            - fileSystem: {pvc: {ref: {name: my-pvc, path: kv-cache/}}}
        """).compiled
    assert extra(c)["secondary_tiers"] == [
        {"type": "fs", "root_dir": "/mnt/kv-cache-0"},
        {"type": "fs", "root_dir": "/mnt/kv-cache-1"},
    ]


# ----------------------------------------------------------------------------- prefill/decode


TIERS = {
    "emptyDir": ("{emptyDir: {size: 100Gi}}", {"emptyDir": {"sizeLimit": "100Gi"}}, {}),
    "pvc.spec": (
        "{pvc: {spec: {storageClassName: fast-nvme, accessModes: [ReadWriteOnce], resources: {requests: {storage: 100Gi}}}}}",
        {
            "ephemeral": {
                "volumeClaimTemplate": {
                    "spec": {
                        "storageClassName": "fast-nvme",
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "100Gi"}},
                    }
                }
            }
        },
        {},
    ),
    "pvc.ref": (
        "{pvc: {ref: {name: shared-kv-cache-pvc, path: kv/}}}",
        {"persistentVolumeClaim": {"claimName": "shared-kv-cache-pvc"}},
        {"subPath": "kv/"},
    ),
}


@pytest.mark.parametrize("tier", sorted(TIERS))
def test_decode_keeps_its_secondary_tier_with_prefill_set(tier):
    """controller_int_kvcache_test.go, Describe "LLMInferenceService Controller - KV Cache secondary
    tiers", Context "Single node" (every It sets Prefill: &v1alpha2.WorkloadSpec{}):
    "should inject an emptyDir volume for a secondary emptyDir tier", "should inject an ephemeral PVC
    volume for a secondary pvc.spec tier", "should inject a pre-existing PVC volume for a secondary
    pvc.ref tier": the decode Deployment keeps kv-cache-secondary-0, mounted on main at /mnt/kv-cache-0."""
    written, volume, mount = TIERS[tier]
    out = compile_svc(f"kvCacheOffloading:\n  cpu: 10Gi\n  secondary: [{{fileSystem: {written}}}]\nprefill: {{}}\n")
    decode, prefill = out.compiled
    assert decode.spec.disaggregation.role == "decode" and decode.plan.decision.enabled
    volumes = {v["name"]: v for v in workload(decode)["spec"]["template"]["spec"]["volumes"]}
    assert volumes["kv-cache-secondary-0"] == {"name": "kv-cache-secondary-0", **volume}
    mounts = {m["name"]: m for m in container(decode, "vllm")["volumeMounts"]}
    assert mounts["kv-cache-secondary-0"] == {"name": "kv-cache-secondary-0", "mountPath": "/mnt/kv-cache-0", **mount}
    # NIXL for the hand-off, then the user's OffloadingConnector (a deliberate addition, warned)
    connectors = kv_transfer_config(decode)["kv_connector_extra_config"]["connectors"]
    assert [c["kv_connector"] for c in connectors] == ["NixlConnector", "OffloadingConnector"]
    assert connectors[1]["kv_connector_extra_config"]["secondary_tiers"] == [
        {"type": "fs", "root_dir": "/mnt/kv-cache-0"}
    ]
    # spec.prefill has no kvCacheOffloading of its own: KServe renders none there (template L163)
    assert prefill.plan.decision.reason_code == "disabled-by-config"
    assert kv_transfer_config(prefill) == {
        "kv_connector": "NixlConnector",
        "kv_role": "kv_both",
        "kv_load_failure_policy": "fail",
    }
    warnings = [w.render() for w in out.input_warnings]
    assert any("kvgen adds NixlConnector before it in a MultiConnector" in w for w in warnings)


# ----------------------------------------------------------------------------- no instance type


def test_without_an_instance_gpus_come_from_main_and_memory_as_written():
    """workload_single_node.go L138-139: the pod template is copied as written; GPUs are main's
    resources. Memory and CPU as written, a missing request equal to its limit (the API server's
    default); no node selector; the fit checks skipped with one warning."""
    out = compile_svc(
        main("{nvidia.com/gpu: 2, memory: 900Gi, cpu: '16'}") + "parallelism: {tensor: 2}\n", instance=None
    )
    (c,) = out.compiled
    assert resources(c)["limits"] == {"cpu": "16", "memory": "900Gi", "nvidia.com/gpu": 2}
    assert resources(c)["requests"]["memory"] == "900Gi" and resources(c)["requests"]["cpu"] == "16"
    assert c.spec.instance.type is None and c.spec.instance.gpus == 2
    assert "nodeSelector" not in workload(c)["spec"]["template"]["spec"]
    assert sum("node fit not checked: KServe names no node" in w.render() for w in out.input_warnings) == 1


def test_without_an_instance_a_mig_resource_is_the_mig_rule():
    """KAITO's MIG rendering is the same request (preset_inferences.go L560-567,
    pkg/utils/mig/mig_test.go TestMIGResourceName: nvidia.com/mig-1g.10gb); with no node known kvgen
    decides the rule from the resource."""
    out = compile_svc(main("{nvidia.com/mig-3g.40gb: 1}") + "kvCacheOffloading: {cpu: 4Gi}\n", instance=None)
    (c,) = out.compiled
    assert any(
        "KServe would pass its OffloadingConnector on this MIG slice too" in w.render() for w in out.input_warnings
    )
    assert c.spec.instance.mig == "3g.40gb"
    assert resources(c)["limits"]["nvidia.com/mig-3g.40gb"] == 1 and "nvidia.com/gpu" not in resources(c)["limits"]
    assert c.plan.decision.reason_code == "mig-partition"


def test_without_an_instance_no_gpu_resource_is_a_cpu_pod_on_the_nodes_arch():
    (c,) = compile_svc(
        main("{memory: 64Gi}", selector="nodeSelector: {kubernetes.io/arch: arm64}\n  ")
        + "kvCacheOffloading: {cpu: 4Gi}\n",
        instance=None,
    ).compiled
    assert c.plan.decision.reason_code == "cpu-instance"
    assert (c.spec.instance.gpus, c.spec.instance.arch) == (0, "arm64")
    assert c.plan.instance.arch == "arm64"
    assert workload(c)["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/arch": "arm64"}


def test_with_an_instance_a_mig_resource_sets_the_profile_on_it():
    (c,) = compile_svc(main("{nvidia.com/mig-3g.40gb: 1}") + "kvCacheOffloading: {cpu: 4Gi}\n").compiled
    assert (c.spec.instance.type, c.spec.instance.mig) == ("Standard_NC24ads_A100_v4", "3g.40gb")
    assert c.plan.decision.reason_code == "mig-partition"


def test_two_kinds_of_gpu_device_are_an_error():
    found = problems(main("{nvidia.com/gpu: 1, nvidia.com/mig-1g.10gb: 1}"), instance=None)
    assert any("kvgen renders one kind of GPU device per pod" in p for p in found)


# ----------------------------------------------------------------------------- ephemeral storage


@pytest.mark.parametrize(
    "request_,tiers,expected",
    [
        ("50Gi", ["{emptyDir: {size: 100Gi}}"], "150Gi"),
        ("10Gi", ["{emptyDir: {size: 100Gi}}", "{emptyDir: {size: 200Gi}}"], "310Gi"),
        ("10Gi", ["{emptyDir: {size: 100Gi}}", "{pvc: {ref: {name: shared}}}"], "110Gi"),  # a claim adds nothing
    ],
)
def test_ephemeral_request_grows_by_each_empty_dir_tier(request_, tiers, expected):
    """workload_kvcache.go attachFileSystemKVCacheTier L80-90 (no upstream test asserts the
    request): existing := Requests[ephemeral-storage]; existing.Add(fs.EmptyDir.Size); limits untouched."""
    secondary = "".join(f"\n    - fileSystem: {t}" for t in tiers)
    body = (
        main("{ephemeral-storage: 2Ti}", f"{{ephemeral-storage: {request_}}}")
        + f"kvCacheOffloading:\n  cpu: 10Gi\n  secondary:{secondary}\n"
    )
    (c,) = compile_svc(body).compiled
    assert resources(c)["requests"]["ephemeral-storage"] == expected
    assert resources(c)["limits"]["ephemeral-storage"] == "2Ti"


def test_ephemeral_request_above_its_limit_after_the_tiers_is_an_error():
    """The API server refuses a request above its limit (ValidateContainerResourceRequirements)."""
    body = (
        main("{ephemeral-storage: 120Gi}", "{ephemeral-storage: 50Gi}")
        + "kvCacheOffloading:\n  cpu: 10Gi\n  secondary: [{fileSystem: {emptyDir: {size: 100Gi}}}]\n"
    )
    (problem,) = [p for p in problems(body) if "ephemeral-storage" in p]
    assert "150Gi, more than the limit 120Gi" in problem and problem.startswith("svc.yaml:13:")


# ----------------------------------------------------------------------------- names and secrets


def test_served_names_are_kserves_model_name_and_publishers_alias():
    """config/llmisvcconfig/config-llm-template.yaml L167 serves --served-model-name "<model.name>"
    "publishers/<namespace>/models/<model.name>"; llm_inference_service_defaults.go L32-33 defaults
    spec.model.name to metadata.name."""
    (c,) = compile_svc("kvCacheOffloading: {cpu: 10Gi}\n").compiled
    assert c.spec.vllm.extra_args[:3] == ["--served-model-name", "qwen", "publishers/default/models/qwen"]


def test_hf_token_secret_keeps_its_optional():
    body = "template:\n  containers:\n    - name: main\n      env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token, optional: true}}}]\n"
    (c,) = compile_svc(body).compiled
    env = {e["name"]: e for e in container(c, "vllm")["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "hf", "key": "token", "optional": True}


# ----------------------------------------------------------------------------- the webhook's rules


@pytest.mark.parametrize(
    "subtest,written,message",
    [
        (
            "secondary without cpu produces error",
            "{secondary: [{fileSystem: {emptyDir: {size: 1Gi}}}]}",
            "needs the size of its CPU tier",
        ),
        ("nil fileSystem produces error", "{cpu: 1Gi, secondary: [{}]}", "fileSystem"),
        (
            "both emptyDir and pvc set produces error",
            "{cpu: 1Gi, secondary: [{fileSystem: {emptyDir: {size: 1Gi}, pvc: {ref: {name: x}}}}]}",
            "exactly one of emptyDir or pvc must be set; both are set",
        ),
        (
            "none of emptyDir/pvc set produces error",
            "{cpu: 1Gi, secondary: [{fileSystem: {}}]}",
            "exactly one of emptyDir or pvc must be set; neither",
        ),
        (
            "pvc with neither spec nor ref produces error",
            "{cpu: 1Gi, secondary: [{fileSystem: {pvc: {}}}]}",
            "exactly one of spec or ref must be set; neither",
        ),
        (
            "pvc.ref with empty name produces error",
            "{cpu: 1Gi, secondary: [{fileSystem: {pvc: {ref: {name: ''}}}}]}",
            "name",
        ),
        (
            "pvc with both spec and ref produces error",
            "{cpu: 1Gi, secondary: [{fileSystem: {pvc: {ref: {name: x}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]}",
            "exactly one of spec or ref must be set; both are set",
        ),
    ],
)
def test_what_kserves_webhook_refuses_kvgen_refuses(subtest, written, message):
    """pkg/apis/serving/v1alpha2/llm_inference_service_validation_test.go TestValidateKVCacheOffloading,
    the subtest named in the parameter (validateKVCacheOffloadingSpec L785-843)."""
    found = problems(f"kvCacheOffloading: {written}\n")
    assert any("spec.kvCacheOffloading" in p and message in p for p in found), found


def test_prefill_kv_cache_offloading_is_also_validated():
    """TestValidateKVCacheOffloading, "prefill kvCacheOffloading is also validated" (field contains
    prefill and cpu)."""
    found = problems("prefill:\n  kvCacheOffloading: {secondary: [{fileSystem: {emptyDir: {size: 1Gi}}}]}\n")
    assert any("spec.prefill.kvCacheOffloading" in p and "CPU tier" in p for p in found), found


@pytest.mark.parametrize(
    "written", ["{cpu: 10Gi}", "{cpu: 10Gi, secondary: [{fileSystem: {emptyDir: {size: 100Gi}}}]}"]
)
def test_what_kserves_webhook_accepts_kvgen_renders(written):
    """TestValidateKVCacheOffloading, "cpu-only (no secondary) produces no errors" and "valid emptyDir
    secondary tier"."""
    (c,) = compile_svc(f"kvCacheOffloading: {written}\n").compiled
    assert c.plan.decision.enabled
