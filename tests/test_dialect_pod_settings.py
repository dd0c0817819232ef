"""KAITO and KServe input: the pod settings and weights on a claim they carry map to the native
spec's pod settings and model.uri instead of being refused (KAITO's presetOptions.modelWeightsPVC,
which no KAITO release has, is refused with a hint)."""

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


def test_kaito_image_pull_secrets_map_to_the_pod():
    c = compile_one(WORKSPACE)
    pod = workload(c)["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "registry-credentials"}]


def test_kaito_model_weights_pvc_is_no_kaito_field_and_is_refused_with_a_hint():
    """kaito-project/kaito#1917 (presetOptions.modelWeightsPVC, modelWeightsSubPath) was not merged:
    KAITO's PresetOptions has image, imagePullSecrets and modelAccessSecret only."""
    text = WORKSPACE.replace(
        "      imagePullSecrets: [registry-credentials]\n",
        "      imagePullSecrets: [registry-credentials]\n      modelWeightsPVC: model-store\n"
        "      modelWeightsSubPath: /weights/llama-8b/\n",
    )
    with pytest.raises(InputErrors) as exc:
        compile_one(text)
    problems = [p for e in exc.value.errors for p in e.problems]
    for field in ("modelWeightsPVC", "modelWeightsSubPath"):
        (p,) = [p for p in problems if p.path[-1] == field]
        assert "is not a KAITO field" in p.message and "kaito-project/kaito#1917" in p.message
        assert p.hint is not None and "model.cache.claim" in p.hint


def test_kaito_model_image_is_still_refused():
    text = WORKSPACE.replace(
        "      imagePullSecrets: [registry-credentials]\n", "      image: registry.example.com/llama:1\n"
    )
    with pytest.raises(InputErrors) as exc:
        compile_one(text)
    messages = [p.render() for e in exc.value.errors for p in e.problems]
    assert any("presetOptions.image" in m and "model images are not supported" in m for m in messages), messages


def test_kserve_pvc_uri_and_pod_template_settings_map_to_the_pod():
    c = compile_one(KSERVE)
    assert c.spec.model.uri == "pvc://model-store/weights/llama-8b"
    assert c.spec.model.id == "meta-llama/Llama-3.1-8B-Instruct"
    pod = workload(c)["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "inference"
    assert pod["runtimeClassName"] == "nvidia"
    assert pod["imagePullSecrets"] == [{"name": "registry-credentials"}]
    vllm = container(c, "vllm")
    assert vllm["args"][0] == "/mnt/models/meta-llama--Llama-3.1-8B-Instruct"  # one path per model (LMCache's keys)
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


def test_kserve_storage_initializer_is_noted_with_the_way_to_weights_that_survive_a_restart():
    """KServe's storage initializer downloads into an emptyDir, as vLLM does in kvgen's default;
    the note points at model.cache for a claim filled once."""
    text = KSERVE.replace(
        "    uri: pvc://model-store/weights/llama-8b\n", "    uri: hf://meta-llama/Llama-3.1-8B-Instruct\n"
    )
    text += "  storageInitializer: {enabled: true}\n"
    out = compile_inputs([("input.yaml", textwrap.dedent(text))], options=Options(None))
    (c,) = out.compiled
    assert c.spec.model.uri is None and c.spec.model.cache is None  # a faithful translation: no claim
    (note,) = [w.render() for w in out.input_warnings if "spec.storageInitializer" in w.render()]
    assert "emptyDir" in note and "model.cache" in note
