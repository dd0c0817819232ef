"""KAITO and KServe manifests as input: translated into native specs with the same behaviour,
every field kvgen cannot honour reported by path and file:line, never dropped silently."""

from __future__ import annotations

import textwrap

import pytest
from conftest import GOLDEN, ROOT, container, kv_transfer_config, run_kvgen, workload
from ruamel.yaml import YAML
from specs import LLMISVC

from kvgen.app.compiler import InputErrors, compile_inputs, convert_inputs
from kvgen.core.errors import format_path
from kvgen.input.dialects import Options, classify

SEEDS = ROOT / "examples" / "seeds"
# copies of the two seed documents (from the project's shared/seeds), kept with the tests so
# that the "saved unchanged" check runs wherever the repository is checked out
SHARED_SEEDS = ROOT / "tests" / "data" / "seeds"

# seed file -> (native twin, --instance)
TWINS = {
    "kaito-gemma-4-12b.yaml": ("kaito-gemma-4-12b.yaml", None),
    "kaito-gemma-4-12b-disabled.yaml": ("kaito-gemma-4-12b-disabled.yaml", None),
    "kaito-workspace-gemma-4-12b.yaml": ("kaito-workspace-gemma-4-12b.yaml", None),
    "kserve-qwen2-7b.yaml": ("kserve-qwen2-7b.yaml", "Standard_NC24ads_A100_v4"),
    "kserve-mixed-tiers.yaml": ("kserve-mixed-tiers.yaml", None),
    "kserve-pvc-spec-nvme.yaml": ("kserve-pvc-spec-nvme.yaml", None),
    "kserve-pvc-ref-path.yaml": ("kserve-pvc-ref-path.yaml", None),
    "kserve-router.yaml": ("kserve-router.yaml", None),
}


def compile_files(*texts: tuple[str, str], instance: str | None = None):
    return compile_inputs(list(texts), options=Options(instance))


def compile_one(text: str, name: str = "input.yaml", instance: str | None = None):
    out = compile_files((name, textwrap.dedent(text)), instance=instance)
    return out


def errors_of(*texts: tuple[str, str], instance: str | None = None) -> list[str]:
    with pytest.raises(InputErrors) as exc:
        compile_files(*[(n, textwrap.dedent(t)) for n, t in texts], instance=instance)
    return [p.render() for e in exc.value.errors for p in e.problems]


def problems_of(*texts: tuple[str, str], instance: str | None = None) -> set[tuple[str, str]]:
    """Every problem of the inputs as (spec path, message): the whole set a test expects."""
    with pytest.raises(InputErrors) as exc:
        compile_files(*[(n, textwrap.dedent(t)) for n, t in texts], instance=instance)
    return {(format_path(p.path), p.message) for e in exc.value.errors for p in e.problems}


def warnings_of(out) -> list[str]:
    return [w.render() for w in out.input_warnings]


# ----------------------------------------------------------------------------- seeds and twins


def test_every_seed_file_has_a_twin_and_every_twin_exists():
    assert sorted(p.name for p in SEEDS.glob("*.yaml")) == sorted(TWINS)
    for twin, _instance in TWINS.values():
        assert (ROOT / "examples" / twin).is_file()


@pytest.mark.parametrize("seed", sorted(TWINS))
def test_seed_renders_the_same_objects_as_its_native_twin(seed):
    twin, instance = TWINS[seed]
    out = compile_files((str(SEEDS / seed), (SEEDS / seed).read_text()), instance=instance)
    (native,) = compile_files((twin, (ROOT / "examples" / twin).read_text())).compiled
    (translated,) = out.compiled
    assert translated.conversion is not None and translated.conversion.dialect == seed.split("-")[0]
    assert translated.objects == native.objects
    assert translated.yaml == native.yaml == (GOLDEN / twin).read_text()


@pytest.mark.parametrize(
    "seed,document",
    [
        ("kaito-gemma-4-12b.yaml", "kaito-kv-cache-offloading.txt"),
        ("kserve-qwen2-7b.yaml", "kserve-llmisvc-kv-cache-offloading.txt"),
    ],
)
def test_seed_yaml_is_saved_unchanged(seed, document):
    assert (SEEDS / seed).read_text() in (SHARED_SEEDS / document).read_text()


@pytest.mark.heavy
def test_kserve_seed_renders_on_the_cli_with_instance_and_reports_what_kserve_would_do_differently():
    result = run_kvgen("render", str(SEEDS / "kserve-qwen2-7b.yaml"), "--instance", "Standard_NC24ads_A100_v4")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / "kserve-qwen2-7b.yaml").read_text()
    err = result.stderr
    assert "kserve-qwen2-7b.yaml:25:3: spec.workload: the LLMInferenceService API has no spec.workload" in err
    assert (
        "kserve-qwen2-7b.yaml:26:5: spec.workload.kvCacheOffloading: serving.kserve.io/v1alpha1 has no kvCacheOffloading"
        in err
    )
    # spec.router {scheduler, route, gateway: {}} is routing.mode gateway (tests/test_kserve_router.py); the
    # guide's resource has no namespace, which KServe's route rules name (tests/test_kserve_router_parity.py)
    (line,) = [line for line in err.splitlines() if "spec.router" in line]
    assert line.endswith(
        "kserve-qwen2-7b.yaml:11:5: spec.router.route: KServe's managed route names the namespace in its paths "
        "(/NAMESPACE/NAME/v1/..., /publishers/NAMESPACE/models/MODEL/...); without metadata.namespace kvgen renders "
        "its own rule (PathPrefix / to the same backend)"
    )
    assert "routing.mode gateway with one replica" in err
    assert "KV-cache offloading enabled (native backend) (from LLMInferenceService/qwen2-7b-kv-cache-offloading)" in err


@pytest.mark.heavy
def test_kserve_seed_on_a_default_gke_a2_pool_does_not_fit_its_boot_disk():
    """KServe's own example asks for a 100Gi emptyDir tier; a default GKE node pool gives the kubelet
    the 100 GB boot disk, so the pod would stay Pending: kvgen refuses it and points to a pvc tier."""
    result = run_kvgen("render", str(SEEDS / "kserve-qwen2-7b.yaml"), "--instance", "a2-ultragpu-1g")
    assert result.returncode == 1 and result.stdout == ""
    assert "spec.workload.kvCacheOffloading.secondary: the pod needs 117.0 GiB of ephemeral storage" in result.stderr
    assert "a2-ultragpu-1g has 83.7 GiB for it (93.0 GiB: the OS disk of a default node pool" in result.stderr
    assert "pvc.spec tier on a local-NVMe storage class" in result.stderr


@pytest.mark.heavy
def test_kserve_without_an_instance_type_renders_as_kserve_would_and_says_how_to_check_the_node():
    """KServe has no instance: workload_single_node.go L138-139 copies the pod template as written
    (GPUs from main's resources, memory as written) and nothing checks a node."""
    result = run_kvgen("render", str(SEEDS / "kserve-qwen2-7b.yaml"))
    assert result.returncode == 0, result.stderr
    assert "kserve-qwen2-7b.yaml:3:1: metadata: node fit not checked: KServe names no node" in result.stderr
    assert "--instance TYPE" in result.stderr and "kvgen.dev/instance-type: TYPE" in result.stderr
    assert "spec.template.nodeSelector node.kubernetes.io/instance-type: TYPE" in result.stderr
    (deployment,) = [
        d
        for d in YAML(typ="safe").load_all(result.stdout)
        if d and d["kind"] == "Deployment" and not d["metadata"]["name"].endswith("-kserve-router-scheduler")
    ]
    pod = deployment["spec"]["template"]["spec"]
    (vllm,) = pod["containers"]
    assert vllm["resources"]["limits"] == {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 1}
    assert vllm["resources"]["requests"]["memory"] == "32Gi"
    assert "nodeSelector" not in pod


@pytest.mark.heavy
def test_mixed_dialects_in_one_multi_document_file_and_across_files(tmp_path):
    native = (ROOT / "examples" / "kserve-mixed-tiers.yaml").read_text()
    kserve = (SEEDS / "kserve-pvc-ref-path.yaml").read_text()
    configmap, inference_set = (SEEDS / "kaito-gemma-4-12b.yaml").read_text().split("---\n")
    (tmp_path / "mixed.yaml").write_text(native + "---\n" + kserve + "---\n" + inference_set)
    (tmp_path / "params.yaml").write_text(configmap)  # the KAITO ConfigMap in another file
    result = run_kvgen("render", "-q", str(tmp_path / "mixed.yaml"), str(tmp_path / "params.yaml"))
    assert result.returncode == 0, result.stderr
    expected = "".join(
        (GOLDEN / n).read_text()
        for n in ("kserve-mixed-tiers.yaml", "kserve-pvc-ref-path.yaml", "kaito-gemma-4-12b.yaml")
    )
    assert result.stdout == expected
    validate = run_kvgen("validate", str(tmp_path))
    assert validate.returncode == 0, validate.stderr
    assert validate.stderr.count("ok: ") == 3


@pytest.mark.heavy
def test_convert_prints_native_specs_that_render_the_same(tmp_path):
    result = run_kvgen(
        "convert",
        str(SEEDS / "kaito-gemma-4-12b.yaml"),
        str(SEEDS / "kserve-qwen2-7b.yaml"),
        "--instance",
        "Standard_NC24ads_A100_v4",
    )
    assert result.returncode == 0, result.stderr
    docs = [d for d in YAML(typ="safe").load_all(result.stdout) if d]
    assert [d["name"] for d in docs] == ["gemma-4-12b", "qwen2-7b-kv-cache-offloading"]
    assert all("apiVersion" not in d for d in docs)
    assert docs[0]["kvCacheOffloading"] == {
        "backend": "lmcache",
        "lmcache": {"utilizationScope": "rank"},  # KAITO's RAM x utilization / TP
        "cpuMemoryUtilization": 0.25,
    }
    assert docs[1]["kvCacheOffloading"]["backend"] == "native" and docs[1]["instance"] == {
        "type": "Standard_NC24ads_A100_v4"
    }
    assert (
        "# kvgen convert: serving.kserve.io/v1alpha1 LLMInferenceService/qwen2-7b-kv-cache-offloading" in result.stdout
    )
    (tmp_path / "native.yaml").write_text(result.stdout)
    rendered = run_kvgen("render", "-q", str(tmp_path / "native.yaml"))
    assert (
        rendered.stdout
        == (GOLDEN / "kaito-gemma-4-12b.yaml").read_text() + (GOLDEN / "kserve-qwen2-7b.yaml").read_text()
    )


def test_documents_are_told_apart_by_api_version_and_kind():
    assert classify({"name": "x", "model": {"id": "a/b"}}) == "native"
    assert classify({"apiVersion": "kaito.sh/v1beta1", "kind": "InferenceSet"}) == "kaito"
    assert classify({"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceService"}) == "kserve"
    assert classify({"apiVersion": "v1", "kind": "ConfigMap"}) == "configmap"
    assert classify({"apiVersion": "v1", "kind": "Secret"}) == "other"


# ----------------------------------------------------------------------------- KAITO


INFERENCE_SET = """\
    apiVersion: kaito.sh/v1beta1
    kind: InferenceSet
    metadata:
      name: llama
    spec:
      labelSelector:
        matchLabels: {apps: llama}
      template:
        resource:
          instanceType: {instance}
        inference:
          preset:
            name: {model}
    """


def inference_set(model="meta-llama/Llama-3.1-8B-Instruct", instance="Standard_NC24ads_A100_v4", extra=""):
    return INFERENCE_SET.replace("{model}", model).replace("{instance}", instance) + textwrap.indent(extra, "    ")


def test_kaito_without_inference_config_uses_utilization_0_5():
    (c,) = compile_one(inference_set()).compiled
    assert c.conversion.spec["kvCacheOffloading"] == {
        "backend": "lmcache",
        "lmcache": {"utilizationScope": "rank"},  # KAITO's RAM x utilization / TP
        "cpuMemoryUtilization": 0.5,
    }
    assert "--utilization=0.5" in container(c, "lmcache-mp-server")["args"]
    assert any("KAITO's default" in n for n in c.conversion.notes)


def test_kaito_configmap_in_a_literal_block_reports_bad_values_at_their_own_line():
    cm = """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: params
        data:
          inference_config.yaml: |
            vllm:
              max-model-len: 4096
            kv_cache_cpu_memory_utilization: 1.5
        """
    (problem,) = errors_of(("cm.yaml", cm), ("is.yaml", inference_set(extra="  config: params\n")))
    assert problem.startswith("cm.yaml:9:5: data.inference_config.yaml.kv_cache_cpu_memory_utilization: ")
    assert "less than or equal to 1" in problem and "[kvgen spec: kvCacheOffloading.cpuMemoryUtilization]" in problem


def test_kaito_configmap_vllm_section_becomes_spec_fields_and_extra_args():
    cm = """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: params}
        data:
          inference_config.yaml: |
            kv_cache_cpu_memory_utilization: 0.3
            max_probe_steps: 6
            vllm:
              max-model-len: 8192
              gpu-memory-utilization: 0.9
              enforce-eager: true
              tensor-parallel-size: 4
        """
    out = compile_files(
        ("cm.yaml", textwrap.dedent(cm)), ("is.yaml", textwrap.dedent(inference_set(extra="  config: params\n")))
    )
    (c,) = out.compiled
    assert c.spec.model.max_model_len == 8192
    assert c.spec.vllm.gpu_memory_utilization == 0.9
    assert c.spec.vllm.extra_args == ["--served-model-name=llama", "--enforce-eager"]  # KAITO's name, then the file
    assert c.spec.parallelism.tensor == 1  # KAITO's command line wins over the file
    warnings = warnings_of(out)
    assert any(
        w.startswith("cm.yaml:12:7: data.inference_config.yaml.vllm.tensor-parallel-size: not honoured")
        for w in warnings
    )
    assert any(w.startswith("cm.yaml:7:5: data.inference_config.yaml.max_probe_steps: not honoured") for w in warnings)


def test_kaito_missing_configmap_is_an_error_at_inference_config():
    (problem,) = errors_of(("is.yaml", inference_set(extra="  config: params\n")))
    assert problem.startswith(
        "is.yaml:14:7: spec.template.inference.config: ConfigMap default/params is not among the inputs"
    )


def test_kaito_configmap_must_be_in_the_same_namespace():
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: params, namespace: other}\ndata:\n  inference_config.yaml: 'kv_cache_cpu_memory_utilization: 0'\n"
    assert problems_of(("cm.yaml", cm), ("is.yaml", inference_set(extra="  config: params\n"))) == {
        (
            "spec.template.inference.config",
            "ConfigMap default/params is not among the inputs; its kv_cache_cpu_memory_utilization decides whether and how much kvgen offloads",
        ),
    }


def test_kaito_uses_every_gpu_of_the_node_like_its_controller():
    """KAITO pkg/model/interface_test.go TestGetInferenceCommandVLLMDataParallelism (a model that fits
    twice into one GPU: data parallel over every GPU, offloading off) and the node estimator
    (estimator.go EstimateNodeCount): Llama 70B (132Gi, bpt 327680) needs 2 NC48ads nodes."""
    (big,) = compile_one(inference_set("meta-llama/Llama-3.1-70B-Instruct", "Standard_NC48ads_A100_v4")).compiled
    p = big.spec.parallelism
    assert (p.nodes, p.pipeline, p.tensor, p.data) == (2, 2, 2, 1)
    assert big.plan.decision.reason_code == "multi-node-pipeline-parallel"
    # KAITO gives the node it provisions an OS disk of weights + 80 GiB (132 + 80), not AKS's default
    # 128 GiB, which could not hold the 134 GiB model cache
    assert big.spec.instance.ephemeral_storage is not None and big.spec.instance.ephemeral_storage.text == "212Gi"
    # Llama 8B does: one replica per GPU (data parallel), which turns offloading off as in KAITO
    (small,) = compile_one(inference_set("meta-llama/Llama-3.1-8B-Instruct", "Standard_NC48ads_A100_v4")).compiled
    assert (small.spec.parallelism.tensor, small.spec.parallelism.data) == (1, 2)
    assert small.plan.decision.reason_code == "data-parallel"


def test_kaito_workspace_count_is_only_where_the_estimator_starts():
    """KAITO estimator_test.go TestNodeEstimator_EstimateNodeCount_Qwen25Coder32B (count 3 -> 2) and
    preset_inferences_test.go "test-model-download-distributed/vllm" (count 2 -> 4): the estimator
    overrides resource.count. Llama-3.1-70B on NC24ads A100 (1 x 80Gi) needs 3 nodes, not 2."""
    ws = """\
        apiVersion: kaito.sh/v1beta1
        kind: Workspace
        metadata: {name: llama70}
        resource:
          count: 2
          instanceType: Standard_NC24ads_A100_v4
          labelSelector: {matchLabels: {apps: llama70}}
        inference:
          preset: {name: meta-llama/Llama-3.1-70B-Instruct}
        """
    (c,) = compile_one(ws).compiled
    p = c.spec.parallelism
    assert (p.nodes, p.pipeline, p.tensor) == (3, 3, 1)
    assert c.plan.decision.reason_code == "multi-node-pipeline-parallel"
    assert [o["kind"] for o in c.objects] == ["Service", "Service", "StatefulSet", "StatefulSet"]
    assert any("resource.count 2 is only its starting point" in n for n in c.conversion.notes)


def test_kaito_short_preset_name_and_model_access_secret():
    text = inference_set("llama-3.1-8b-instruct").replace(
        "            name: llama-3.1-8b-instruct\n",
        "            name: llama-3.1-8b-instruct\n            presetOptions: {modelAccessSecret: hf-token}\n",
    )
    (c,) = compile_one(text).compiled
    assert c.spec.model.id == "meta-llama/Llama-3.1-8B-Instruct"
    env = {e["name"]: e for e in container(c, "vllm")["env"]}
    # preset_inferences_test.go TestGeneratePresetInference: SecretKeyRef{Key: HF_TOKEN, Optional: ptr.To(true)}
    assert env["HF_TOKEN"]["valueFrom"] == {"secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN", "optional": True}}


def test_kaito_own_nodes_without_instance_type_require_the_labels_and_take_instance_from_the_option():
    text = inference_set().replace("          instanceType: Standard_NC24ads_A100_v4\n", "          {}\n")
    text = text.replace("        resource:\n          {}\n", "        resource: {}\n")
    assert problems_of(("is.yaml", text)) == {
        ("spec.template.resource", "no resource.instanceType: kvgen needs the instance type to size the pod"),
    }
    assert "--instance TYPE" in errors_of(("is.yaml", text))[0]  # the hint
    (c,) = compile_one(text, instance="Standard_NC24ads_A100_v4").compiled
    pod = workload(c)["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4", "apps": "llama"}


def test_kaito_fields_that_change_behaviour_are_errors():
    # an adapter without a source KAITO can fetch (tests/test_dialect_lora.py has the rest)
    text = inference_set(extra="  adapters: [{source: {name: a}}]\n")
    assert problems_of(("is.yaml", text)) == {
        ("spec.template.inference.adapters[0].source", "Either Image or Volume must be specified for adapter source")
    }
    annotated = inference_set().replace(
        "      name: llama\n", "      name: llama\n      annotations: {kaito.sh/runtime: transformers}\n"
    )
    assert problems_of(("is.yaml", annotated)) == {
        ("metadata.annotations.kaito.sh/runtime", "kvgen runs vLLM, not 'transformers'")
    }


def test_kaito_unknown_version_is_an_error():
    assert problems_of(("ws.yaml", "apiVersion: kaito.sh/v1alpha1\nkind: Workspace\nmetadata: {name: x}\n")) == {
        ("apiVersion", "kvgen reads kaito.sh/v1beta1 InferenceSet and Workspace, not kaito.sh/v1alpha1 Workspace"),
    }


# ----------------------------------------------------------------------------- KServe


def test_kserve_without_kv_cache_offloading_does_not_offload():
    (c,) = compile_one(LLMISVC).compiled
    assert c.plan.decision.reason_code == "disabled-by-config"
    assert kv_transfer_config(c) is None


def test_kserve_spec_kv_cache_offloading_is_the_native_backend_as_written():
    (c,) = compile_one(LLMISVC + "  kvCacheOffloading: {cpu: 10Gi, evictionPolicy: arc}\n").compiled
    extra = kv_transfer_config(c)["kv_connector_extra_config"]
    assert extra["cpu_bytes_to_use"] == 10737418240 and extra["eviction_policy"] == "arc"
    assert kv_transfer_config(c)["kv_connector"] == "OffloadingConnector"


def test_kserve_problems_in_kv_cache_offloading_point_at_the_kserve_field():
    text = (
        LLMISVC
        + "  kvCacheOffloading:\n    cpu: -10Gi\n    secondary:\n      - fileSystem: {emptyDir: {size: 1Gi}, pvc: {ref: {name: x}}}\n"
    )
    problems = errors_of(("svc.yaml", text))
    assert problems[0].startswith("svc.yaml:10:5: spec.kvCacheOffloading.cpu: -10Gi is negative")
    assert problems[1].startswith(
        "svc.yaml:12:9: spec.kvCacheOffloading.secondary[0].fileSystem: exactly one of emptyDir or pvc"
    )


def test_kserve_workload_nesting_and_spec_together_is_a_conflict():
    text = LLMISVC + "  kvCacheOffloading: {cpu: 10Gi}\n  workload:\n    kvCacheOffloading: {cpu: 20Gi}\n"
    assert problems_of(("svc.yaml", text)) == {
        ("spec.workload.kvCacheOffloading", "kvCacheOffloading is set both under spec and under spec.workload"),
    }


def test_kserve_prefill_gives_a_decode_and_a_prefill_spec_both_keeping_their_offloading():
    """KServe controller_int_kvcache_test.go: with spec.prefill set, the decode workload keeps
    spec.kvCacheOffloading; the prefill workload takes spec.prefill.kvCacheOffloading
    (workload_single_node.go expectedPrefillMainDeployment L278-280)."""
    text = (
        LLMISVC + "  kvCacheOffloading: {cpu: 10Gi}\n  prefill:\n    replicas: 2\n    kvCacheOffloading: {cpu: 20Gi}\n"
    )
    out = compile_one(text)
    decode, prefill = out.compiled
    assert (decode.spec.name, decode.spec.disaggregation.role) == ("qwen", "decode")
    assert (prefill.spec.name, prefill.spec.disaggregation.role, prefill.spec.replicas) == (
        "qwen-prefill",
        "prefill",
        2,
    )
    assert prefill.spec.kv_cache_offloading.cpu is not None and prefill.spec.kv_cache_offloading.cpu.text == "20Gi"
    for c, cpu in ((decode, 10 * 1024**3), (prefill, 20 * 1024**3)):
        assert c.plan.decision.enabled
        kv = kv_transfer_config(c)
        assert kv["kv_connector"] == "MultiConnector"
        assert kv["kv_connector_extra_config"]["connectors"][1]["kv_connector_extra_config"]["cpu_bytes_to_use"] == cpu
    assert any(
        "input.yaml:10:3: spec.prefill: prefill/decode: kvgen renders the prefill workload as qwen-prefill" in w
        for w in warnings_of(out)
    )


def test_kserve_main_container_maps_resources_args_env_and_image():
    text = LLMISVC + textwrap.indent(
        textwrap.dedent("""\
          name: qwen-chat
        template:
          containers:
            - name: main
              image: vllm/vllm-openai:v0.33.0
              args: ["--max-model-len", "16384", "--enable-chunked-prefill"]
              env:
                - {name: VLLM_ADDITIONAL_ARGS, value: "--max-num-seqs 64"}
                - {name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}
                - {name: VLLM_LOGGING_LEVEL, value: DEBUG}
              resources:
                requests: {cpu: "6", memory: 80Gi, nvidia.com/gpu: "2"}
                limits: {memory: 96Gi, nvidia.com/gpu: "2"}
        parallelism: {tensor: 2}
        kvCacheOffloading: {cpu: 40Gi}
        """),
        "  ",
    )
    text = text.replace(
        "    uri: hf://Qwen/Qwen2.5-7B-Instruct\n  name: qwen-chat\n",
        "    uri: hf://Qwen/Qwen2.5-7B-Instruct\n    name: qwen-chat\n",
    )
    (c,) = compile_one(text).compiled
    s = c.spec
    assert s.model.max_model_len == 16384 and s.parallelism.tensor == 2
    assert s.vllm.extra_args == [
        "--served-model-name",
        "qwen-chat",
        "publishers/default/models/qwen-chat",
        "--enable-chunked-prefill",
        "--max-num-seqs",
        "64",
    ]
    assert s.model.hf_token_secret.name == "hf" and s.model.hf_token_secret.key == "token"
    assert [e.name for e in s.vllm.env] == ["VLLM_LOGGING_LEVEL"]
    assert (s.images.vllm.repository, s.images.vllm.tag) == ("vllm/vllm-openai", "v0.33.0")
    res = container(c, "vllm")["resources"]
    assert res["requests"]["cpu"] == "6" and res["requests"]["memory"] == "80Gi" and res["limits"]["memory"] == "96Gi"
    assert res["requests"]["nvidia.com/gpu"] == 2


def test_kserve_gpu_count_without_parallelism_becomes_tensor_parallel_with_a_warning():
    text = (
        LLMISVC + "  template:\n    containers:\n      - name: main\n        resources: {limits: {nvidia.com/gpu: 2}}\n"
    )
    out = compile_one(text)
    assert out.compiled[0].spec.parallelism.tensor == 2
    assert any("2 GPUs without spec.parallelism" in w for w in warnings_of(out))
    mismatch = text + "  parallelism: {tensor: 1}\n"
    assert problems_of(("svc.yaml", mismatch)) == {
        (
            "spec.template.containers[0].resources.limits.nvidia.com/gpu",
            "requests 2 GPU(s) but the parallel sizes use 1 (tensor x pipeline x data)",
        ),
    }


def test_kserve_instance_from_node_selector_and_conflict_with_annotation():
    text = (
        LLMISVC
        + "  template:\n    nodeSelector: {node.kubernetes.io/instance-type: Standard_NC24ads_A100_v4, pool: gpu}\n"
    )
    assert problems_of(("svc.yaml", text)) == {
        (
            "spec.template.nodeSelector.node.kubernetes.io/instance-type",
            "instance type Standard_NC24ads_A100_v4 differs from the kvgen.dev/instance-type annotation (Standard_NC48ads_A100_v4)",
        ),
    }
    (c,) = compile_one(
        text.replace("  annotations: {kvgen.dev/instance-type: Standard_NC48ads_A100_v4}\n", "")
    ).compiled
    assert c.spec.instance.type == "Standard_NC24ads_A100_v4"
    assert workload(c)["spec"]["template"]["spec"]["nodeSelector"] == {
        "node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4",
        "pool": "gpu",
    }


@pytest.mark.parametrize(
    "fragment,path,message",
    [
        (
            "  model:\n    uri: s3://bucket/qwen\n",
            "spec.model.uri",
            "'s3://bucket/qwen': kvgen serves Hugging Face models (hf://ORG/NAME) or weights on a claim (pvc://CLAIM/PATH); other storage is not supported",
        ),
        (
            "  template:\n    containers:\n      - name: main\n        command: [python]\n",
            "spec.template.containers[0].command",
            "a command replaces KServe's launch script (and with it the offloading flags); kvgen starts vLLM itself",
        ),
        (
            "  template:\n    containers:\n      - name: sidecar\n        image: busybox\n",
            "spec.template.containers[0]",
            "container 'sidecar': kvgen renders only the vLLM container ('main') and its own LMCache sidecar; other containers are not carried over",
        ),
        ("  worker: {containers: []}\n", "spec.worker", "multi-node workloads (LeaderWorkerSet) are not converted"),
        (
            '  template:\n    containers:\n      - name: main\n        args: ["--kv-transfer-config", "{}"]\n',
            "spec.template.containers[0].args[0]",
            "--kv-transfer-config is set by kvgen from kvCacheOffloading: kvgen writes the connector itself (offloading, or NIXL for "
            "disaggregation.role), and a connector of your own cannot be rendered",
        ),
        (
            "  template:\n    containers:\n      - name: main\n        env: [{name: HF_TOKEN, value: hf_abc}]\n",
            "spec.template.containers[0].env[0]",
            "HF_TOKEN must come from a Secret (valueFrom.secretKeyRef); kvgen never takes a token literally",
        ),
    ],
)
def test_kserve_fields_whose_loss_would_change_behaviour_are_errors(fragment, path, message):
    text = (
        LLMISVC.replace("  model:\n    uri: hf://Qwen/Qwen2.5-7B-Instruct\n", "") if "model:" in fragment else LLMISVC
    )
    assert problems_of(("svc.yaml", text + fragment)) == {(path, message)}


def test_kserve_fields_kvgen_does_not_honour_are_reported_by_path_and_line():
    text = LLMISVC + textwrap.indent(
        textwrap.dedent("""\
        router: {ingress: {}}
        scaling: {minReplicas: 1}
        baseRefs: [{name: my-config}]
        template:
          dnsPolicy: Default
          containers:
            - name: main
              ports: [{containerPort: 8000}]
        kvCacheOffloading: {cpu: 10Gi}
        """),
        "  ",
    )
    out = compile_one(text, name="svc.yaml")
    warnings = warnings_of(out)
    for expected in (
        "svc.yaml:9:12: spec.router.ingress: not carried over: kvgen renders no Ingress",
        "svc.yaml:10:3: spec.scaling: not honoured: kvgen renders a fixed replica count",
        "svc.yaml:11:3: spec.baseRefs: not honoured",
        "svc.yaml:13:5: spec.template.dnsPolicy: not honoured",
        "svc.yaml:16:9: spec.template.containers[0].ports: not honoured",
    ):
        assert any(w.startswith(expected) for w in warnings), (expected, warnings)
    assert len(warnings) == 5
    # the instance-type annotation is read, so it is not reported
    assert not any("metadata.annotations" in w for w in warnings)


@pytest.mark.heavy
def test_other_documents_and_unused_configmaps_are_reported_not_rendered(tmp_path):
    other = "apiVersion: v1\nkind: Secret\nmetadata: {name: hf}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: unused}\n"
    (tmp_path / "extra.yaml").write_text(other)
    result = run_kvgen("render", str(ROOT / "examples" / "kaito-gemma-4-12b.yaml"), str(tmp_path / "extra.yaml"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / "kaito-gemma-4-12b.yaml").read_text()
    assert "extra.yaml:2:1: kind: v1 Secret is left out" in result.stderr
    assert "extra.yaml:7:12: metadata.name: ConfigMap unused is left out" in result.stderr


@pytest.mark.heavy
def test_a_file_with_only_other_objects_is_no_spec():
    result = run_kvgen("render", "-", input="apiVersion: v1\nkind: Secret\nmetadata: {name: hf}\n")
    assert result.returncode == 1
    assert "no spec found" in result.stderr


def test_convert_checks_the_translated_spec_against_the_schema():
    text = LLMISVC + "  kvCacheOffloading: {cpu: 10Gi, evictionPolicy: fifo}\n"
    with pytest.raises(InputErrors) as exc:
        convert_inputs([("svc.yaml", text)])
    (problem,) = [p for e in exc.value.errors for p in e.problems]
    assert problem.location.line == 9 and problem.path == ("spec", "kvCacheOffloading", "evictionPolicy")
