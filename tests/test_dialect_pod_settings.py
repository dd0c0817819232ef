"""KAITO and KServe input: the pod settings and weights on a claim they carry map to the native
spec's pod settings and model.uri instead of being refused."""

from __future__ import annotations

import textwrap

import pytest
from conftest import container, workload

from kvgen.app.compiler import InputErrors, compile_inputs
from kvgen.input.dialects import Options

WORKSPACE = """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {name: llama, namespace: default}
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector: {matchLabels: {apps: llama}}
inference:
  preset:
    name: meta-llama/Llama-3.1-8B-Instruct
    presetOptions:
      imagePullSecrets: [registry-credentials]
      modelWeightsPVC: model-store
      modelWeightsSubPath: /weights/llama-8b/
"""

KSERVE = """\
apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata: {name: llama}
spec:
  model:
    uri: pvc://model-store/weights/llama-8b
    name: meta-llama/Llama-3.1-8B-Instruct
  template:
    serviceAccountName: inference
    runtimeClassName: nvidia
    imagePullSecrets: [{name: registry-credentials}]
    containers:
      - name: main
        resources:
          limits: {nvidia.com/gpu: "1", memory: 32Gi}
"""


def compile_one(text: str):
    (c,) = compile_inputs([("input.yaml", textwrap.dedent(text))], options=Options(None)).compiled
    return c


def test_kaito_model_weights_pvc_and_image_pull_secrets_map_to_the_pod():
    c = compile_one(WORKSPACE)
    assert c.spec.model.uri == "pvc://model-store/weights/llama-8b"
    pod = workload(c)["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "registry-credentials"}]
    vllm = container(c, "vllm")
    assert vllm["args"][0] == "/mnt/models"
    # KAITO's served name stays the one it passes (no second --served-model-name)
    assert [a for a in vllm["args"] if a.startswith("--served-model-name")] == [
        "--served-model-name=llama-3.1-8b-instruct"
    ]
    assert {
        "name": "model-weights",
        "mountPath": "/mnt/models",
        "readOnly": True,
        "subPath": "weights/llama-8b",
    } in vllm["volumeMounts"]


def test_kaito_model_image_is_still_refused_and_a_sub_path_needs_a_claim():
    text = WORKSPACE.replace("      modelWeightsPVC: model-store\n", "      image: registry.example.com/llama:1\n")
    with pytest.raises(InputErrors) as exc:
        compile_one(text)
    messages = [p.render() for e in exc.value.errors for p in e.problems]
    assert any("presetOptions.image" in m and "model images are not supported" in m for m in messages), messages
    assert any("modelWeightsSubPath requires modelWeightsPVC" in m for m in messages), messages


def test_kserve_pvc_uri_and_pod_template_settings_map_to_the_pod():
    c = compile_one(KSERVE)
    assert c.spec.model.uri == "pvc://model-store/weights/llama-8b"
    assert c.spec.model.id == "meta-llama/Llama-3.1-8B-Instruct"
    pod = workload(c)["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "inference"
    assert pod["runtimeClassName"] == "nvidia"
    assert pod["imagePullSecrets"] == [{"name": "registry-credentials"}]
    vllm = container(c, "vllm")
    assert vllm["args"][0] == "/mnt/models"
    served = vllm["args"][vllm["args"].index("--served-model-name") + 1]
    assert served == "meta-llama/Llama-3.1-8B-Instruct"
    assert not [a for a in vllm["args"] if a.startswith("--served-model-name=")]


def test_kserve_pvc_uri_needs_a_model_name():
    with pytest.raises(InputErrors) as exc:
        compile_one(KSERVE.replace("    name: meta-llama/Llama-3.1-8B-Instruct\n", ""))
    messages = [p.render() for e in exc.value.errors for p in e.problems]
    assert any("a pvc:// uri needs spec.model.name" in m for m in messages), messages


def test_kserve_pod_and_container_settings_kvgen_has_knobs_for_are_carried_over():
    """terminationGracePeriodSeconds, schedulerName (pod), envFrom and imagePullPolicy (the main
    container) become pod.terminationGracePeriodSeconds, scheduling.schedulerName, vllm.envFrom and
    images.vllm.pullPolicy, instead of a "not carried over" warning."""
    text = KSERVE.replace(
        "    runtimeClassName: nvidia\n",
        "    runtimeClassName: nvidia\n    terminationGracePeriodSeconds: 120\n    schedulerName: volcano\n",
    ).replace(
        "      - name: main\n",
        "      - name: main\n        imagePullPolicy: IfNotPresent\n"
        "        envFrom: [{configMapRef: {name: vllm-tuning}}, {secretRef: {name: extra}, prefix: X_}]\n",
    )
    c = compile_one(text)
    pod = workload(c)["spec"]["template"]["spec"]
    assert (pod["terminationGracePeriodSeconds"], pod["schedulerName"]) == (120, "volcano")
    vllm = container(c, "vllm")
    assert vllm["envFrom"] == [
        {"configMapRef": {"name": "vllm-tuning"}},
        {"secretRef": {"name": "extra"}, "prefix": "X_"},
    ]
    assert vllm["imagePullPolicy"] == "IfNotPresent"
    assert not any("not carried over" in w.render() for w in c.conversion.warnings), c.conversion.warnings
