"""LoRA adapters in the operators' manifests map onto model.lora (issue 37): KServe's
spec.model.lora (v1alpha2 and v1alpha1) and KAITO's inference.adapters, with the operators' own
checks as errors at the field written, and notes or errors where kvgen has no equivalent.

Upstream: kserve/kserve@aaac4e29 (A2 = pkg/apis/serving/v1alpha2, A1 = pkg/apis/serving/v1alpha1,
L = pkg/controller/v1alpha2/llmisvc) and kaito-project/kaito@056b8280 (v0.12)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from kvgen.app.compiler import InputErrors, convert_inputs
from kvgen.core.errors import Problem, format_path
from kvgen.input.dialects import Options

INSTANCE = "Standard_NC24ads_A100_v4"


def kserve(
    lora: str, *, version: str = "v1alpha2", name: str = "base", model_name: str | None = "base", extra: str = ""
) -> str:
    model_name_line = f"    name: {model_name}\n" if model_name else ""
    body = textwrap.indent(textwrap.dedent(lora), "    ") if lora else ""
    return (
        f"apiVersion: serving.kserve.io/{version}\n"
        "kind: LLMInferenceService\n"
        f"metadata: {{name: {name}, namespace: ns}}\n"
        "spec:\n"
        "  model:\n"
        "    uri: hf://Qwen/Qwen2.5-7B-Instruct\n"
        f"{model_name_line}{body}{extra}"
    )


def convert(text: str) -> tuple[list[Any], list[Problem]]:
    units, warnings = convert_inputs([("input.yaml", text)], options=Options(INSTANCE))
    conversions = [u.conversion for u in units if u.conversion is not None]
    return conversions, [w for c in conversions for w in c.warnings] + warnings


def spec_of(text: str) -> dict[str, Any]:
    (c,), _warnings = convert(text)
    return c.spec


def problems(text: str) -> dict[str, Problem]:
    with pytest.raises(InputErrors) as exc:
        convert(text)
    return {format_path(p.path): p for e in exc.value.errors for p in e.problems}


ALL_PARAMS = """\
lora:
  maxRank: 64
  maxAdapters: 2
  maxCpuAdapters: 4
  adapters:
    - {name: b, uri: "pvc://claim/path/b"}
    - {name: a, uri: "hf://org/a"}
"""


# ----------------------------------------------------------------------------- KServe: vLLM flags


def test_kserve_adapters_and_limits_map_to_model_lora_with_the_publishers_aliases():
    """L/workload_lora_internal_test.go:45-73 TestAddLoRAVLLMArgs "all params set with model-routing aliases":
    --max-lora-rank=64 --max-loras=2 --max-cpu-loras=4 and --lora-modules a, publishers/ns/models/a, b,
    publishers/ns/models/b (sorted by name, L/workload_lora.go:79-83, two names each, :165-174)."""
    lora = spec_of(kserve(ALL_PARAMS))["model"]["lora"]
    assert lora == {
        "adapters": [
            {"name": "a", "uri": "hf://org/a"},
            {"name": "publishers/ns/models/a", "uri": "hf://org/a"},
            {"name": "b", "uri": "pvc://claim/path/b"},
            {"name": "publishers/ns/models/b", "uri": "pvc://claim/path/b"},
        ],
        "maxRank": 64,
        "maxLoras": 2,
        "maxCpuLoras": 4,
    }


def test_kserve_without_limits_is_vllms_one_adapter_per_batch_with_a_note():
    """L/workload_lora_internal_test.go:75-96 TestAddLoRAVLLMArgs "no optional params": only --enable-lora and
    --lora-modules, so vLLM's defaults apply (L/workload_lora.go:201-214): max_loras 1, not the number of
    adapters the API's doc comment promises (A2/llm_inference_service_types.go:347-351)."""
    (c,), _w = convert(kserve("lora: {adapters: [{name: a, uri: 'hf://org/a'}]}\n"))
    assert c.spec["model"]["lora"] == {
        "adapters": [{"name": "a", "uri": "hf://org/a"}, {"name": "publishers/ns/models/a", "uri": "hf://org/a"}],
        "maxLoras": 1,
    }
    assert any(n.startswith("model.lora.maxLoras 1: KServe passes no --max-loras") for n in c.notes)


def test_kserve_lora_is_no_longer_refused():
    """Before issue 37 kvgen refused spec.model.lora ("LoRA adapters are not supported by kvgen")."""
    (c,), warnings = convert(kserve("lora: {adapters: [{name: a, uri: 'pvc://claim'}]}\n"))
    assert c.spec["model"]["lora"]["adapters"][0] == {"name": "a", "uri": "pvc://claim"}
    assert not [w for w in warnings if "lora" in format_path(w.path)]


def test_kserve_limit_flags_in_the_args_win_and_enable_lora_is_dropped():
    """KServe prepends its LoRA flags so that the user's args override them (L/workload_lora.go:266-267)."""
    extra = """\
  template:
    containers:
      - name: main
        args: ["--enable-lora", "--max-loras", "3", "--max_lora_rank=32", "--max-num-seqs=8"]
        resources: {limits: {nvidia.com/gpu: "1"}}
"""
    (c,), _w = convert(kserve(ALL_PARAMS, extra=extra))
    lora = c.spec["model"]["lora"]
    assert (lora["maxRank"], lora["maxLoras"], lora["maxCpuLoras"]) == (32, 3, 4)
    assert c.spec["vllm"]["extraArgs"][-1:] == ["--max-num-seqs=8"]
    assert "--enable-lora" not in c.spec["vllm"]["extraArgs"]
    # the remaining argument still points at where it was written
    assert c.translate(Problem(("vllm", "extraArgs", len(c.spec["vllm"]["extraArgs"]) - 1), "x")).path == (
        "spec",
        "template",
        "containers",
        0,
        "args",
        4,
    )


def test_kserve_no_enable_lora_with_adapters_is_an_error():
    extra = """\
  template:
    containers:
      - name: main
        args: ["--no-enable-lora"]
        resources: {limits: {nvidia.com/gpu: "1"}}
"""
    found = problems(kserve("lora: {adapters: [{name: a, uri: 'hf://org/a'}]}\n", extra=extra))
    assert "switches LoRA off" in found["spec.template.containers[0].args[0]"].message


def test_kserve_prefill_pods_serve_the_adapters_too():
    """KServe attaches the adapters to the prefill Deployment as well (L/workload_single_node.go:275)."""
    extra = """\
  prefill:
    template:
      containers:
        - name: main
          resources: {limits: {nvidia.com/gpu: "1"}}
  template:
    containers:
      - name: main
        resources: {limits: {nvidia.com/gpu: "1"}}
"""
    decode, prefill = convert(kserve("lora: {adapters: [{name: a, uri: 'hf://org/a'}]}\n", extra=extra))[0]
    assert decode.spec["model"]["lora"] == prefill.spec["model"]["lora"]
    assert prefill.spec["model"]["lora"]["adapters"][1]["name"] == "publishers/ns/models/a"


# ----------------------------------------------------------------------------- KServe: the webhook's checks


def adapter(name: str, host: str) -> str:
    return f"{{name: '{name}', uri: 'hf://{host}'}}"


@pytest.mark.parametrize(
    ("case", "lora", "service", "path", "message"),
    [
        ("valid single adapter", f"lora: {{adapters: [{adapter('adapter-1', 'adapter-1')}]}}", "base", None, None),
        (
            "adapter name missing",
            "lora: {adapters: [{uri: 'hf://adapter-1'}]}",
            "base",
            "spec.model.lora.adapters[0].name",
            "adapter name is required",
        ),
        (
            "adapter name is dot (path traversal)",
            f"lora: {{adapters: [{adapter('.', 'adapter-dot')}]}}",
            "base",
            "spec.model.lora.adapters[0].name",
            "path traversal",
        ),
        (
            "adapter name is dotdot (path traversal)",
            f"lora: {{adapters: [{adapter('..', 'adapter-dotdot')}]}}",
            "base",
            "spec.model.lora.adapters[0].name",
            "path traversal",
        ),
        (
            "duplicate adapter names",
            f"lora: {{adapters: [{adapter('dup', 'adapter-1')}, {adapter('dup', 'adapter-2')}]}}",
            "base",
            "spec.model.lora.adapters[1].name",
            "duplicate",
        ),
        (
            "adapter name same as base model name",
            f"lora: {{adapters: [{adapter('base-model', 'adapter-1')}]}}",
            "base-model",
            "spec.model.lora.adapters[0].name",
            "adapter name must differ from base model name",
        ),
        (
            "maxRank zero is invalid",
            f"lora: {{maxRank: 0, adapters: [{adapter('adapter-1', 'adapter-1')}]}}",
            "base",
            "spec.model.lora.maxRank",
            "maxRank must be at least 1",
        ),
        (
            "maxAdapters zero is invalid",
            f"lora: {{maxAdapters: 0, adapters: [{adapter('adapter-1', 'adapter-1')}]}}",
            "base",
            "spec.model.lora.maxAdapters",
            "maxAdapters must be at least 1",
        ),
        (
            "maxCpuAdapters zero is invalid",
            f"lora: {{maxCpuAdapters: 0, adapters: [{adapter('adapter-1', 'adapter-1')}]}}",
            "base",
            "spec.model.lora.maxCpuAdapters",
            "maxCpuAdapters must be at least 1",
        ),
        (
            "all lora params valid",
            "lora: {maxRank: 128, maxAdapters: 4, maxCpuAdapters: 8, adapters: ["
            f"{adapter('adapter-1', 'adapter-1')}, {adapter('adapter-2', 'adapter-2')}]}}",
            "base",
            None,
            None,
        ),
    ],
)
def test_kserve_validate_lora_adapters(case, lora, service, path, message):
    """A2/llm_inference_service_validation_test.go:1273-1393 TestValidateLoRAAdapters, each subtest but "no lora"
    (every KServe test without spec.model.lora is that one); the service and its model.name are both `service`,
    as its makeSvc sets them (:1280-1291); the checks are A2/llm_inference_service_validation.go:436-499."""
    text = kserve(lora + "\n", name=service, model_name=service)
    if path is None:
        assert spec_of(text)["model"]["lora"]["adapters"][0]["name"] == "adapter-1"
        return
    found = problems(text)
    assert list(found) == [path], case
    assert message in found[path].message


def test_kserve_adapter_named_like_the_service_when_model_name_is_unset():
    """The base name defaults to metadata.name (A2/llm_inference_service_validation.go:430)."""
    found = problems(kserve(f"lora: {{adapters: [{adapter('svc', 'org/a')}]}}\n", name="svc", model_name=None))
    assert found["spec.model.lora.adapters[0].name"].message == 'adapter name must differ from base model name "svc"'


# ----------------------------------------------------------------------------- KServe: URI schemes


@pytest.mark.parametrize(
    ("uri", "message", "hint"),
    [
        ("s3://bucket/adapters/a", "it has no S3 download", "PersistentVolumeClaim and use pvc://CLAIM/PATH"),
        ("oci://registry/a:1", 'LoRA adapter "a": oci:// is not supported for LoRA adapters', "pvc://CLAIM/PATH"),
        ("gs://bucket/a", 'LoRA adapter "a": unsupported URI scheme "gs://"', "hf://ORG/REPO"),
        ("org/a", 'LoRA adapter "a": invalid URI "org/a"', None),
        ("hf://org/a:v2", "it takes no :REVISION", "remove the revision"),
    ],
)
def test_kserve_adapter_uris_without_a_kvgen_equivalent_are_errors_at_the_uri(uri, message, hint):
    """L/workload_lora.go:86-113 (hf:// and s3:// through the storage initializer, pvc:// mounted, oci:// and
    anything else refused); kvgen fetches adapters from Hugging Face or a claim only."""
    found = problems(kserve(f"lora: {{adapters: [{{name: a, uri: '{uri}'}}]}}\n"))
    p = found["spec.model.lora.adapters[0].uri"]
    assert message in p.message
    if hint:
        assert p.hint is not None and hint in p.hint


def test_kserve_lora_without_the_storage_initializer_is_an_error():
    """L/workload_lora.go:75-77, :98-105: with storageInitializer.enabled false KServe refuses every adapter."""
    found = problems(
        kserve("lora: {adapters: [{name: a, uri: 'pvc://claim'}]}\n", extra="  storageInitializer: {enabled: false}\n")
    )
    assert "without the storage initializer" in found["spec.storageInitializer.enabled"].message


def test_kserve_more_adapters_than_kvgen_serves_names_for():
    items = ", ".join(adapter(f"a{i}", f"org/a{i}") for i in range(17))
    found = problems(kserve(f"lora: {{adapters: [{items}]}}\n"))
    assert "17 adapters are 34 served names" in found["spec.model.lora.adapters"].message


def test_kserve_lora_without_adapters_is_warned():
    (c,), warnings = convert(kserve("lora: {maxRank: 32}\n"))
    assert "lora" not in c.spec["model"]
    assert any(format_path(w.path) == "spec.model.lora" and "no adapters" in w.message for w in warnings)


# ----------------------------------------------------------------------------- KServe: v1alpha1


def test_kserve_v1alpha1_lora_fields_are_kept():
    """A1/llm_inference_service_conversion_test.go:913-971 TestLLMInferenceServiceConversion_PreservesLoRASpecFields:
    maxRank 128, maxAdapters 4, maxCpuAdapters 8 survive the conversion to the hub
    (A1/llm_inference_service_conversion.go:360-375)."""
    text = kserve(
        "lora:\n  maxRank: 128\n  maxAdapters: 4\n  maxCpuAdapters: 8\n"
        "  adapters: [{name: my-adapter, uri: 'hf://my-org/my-adapter'}]\n",
        version="v1alpha1",
        name="test-llm-isvc-lora-fields",
        model_name="base-model",
    )
    lora = spec_of(text)["model"]["lora"]
    assert (lora["maxRank"], lora["maxLoras"], lora["maxCpuLoras"]) == (128, 4, 8)
    assert [a["name"] for a in lora["adapters"]] == ["my-adapter", "publishers/ns/models/my-adapter"]


def test_kserve_v1alpha1_unset_lora_fields_stay_vllms_defaults():
    """A1/llm_inference_service_conversion_test.go:1021-1068 TestLLMInferenceServiceConversion_NilLoRASpecFields:
    unset limits stay unset, so KServe passes none (vLLM: rank 16, one adapter, cpu = max_loras)."""
    text = kserve("lora: {adapters: [{name: my-adapter, uri: 'hf://my-org/my-adapter'}]}\n", version="v1alpha1")
    lora = spec_of(text)["model"]["lora"]
    assert "maxRank" not in lora and "maxCpuLoras" not in lora and lora["maxLoras"] == 1


def test_kserve_v1alpha1_adapter_criticality_is_warned_not_carried():
    """v1alpha1 adapters are LLMModelSpec with a criticality (A1/llm_inference_service_types.go:206-209)."""
    text = kserve("lora: {adapters: [{name: a, uri: 'hf://org/a', criticality: Critical}]}\n", version="v1alpha1")
    (c,), warnings = convert(text)
    assert c.spec["model"]["lora"]["adapters"][0]["name"] == "a"
    (w,) = [w for w in warnings if format_path(w.path) == "spec.model.lora.adapters[0].criticality"]
    assert "not honoured" in w.message


# ----------------------------------------------------------------------------- KServe: the user's --lora-modules


def kserve_with_main(args: str = "", env: str = "", lora: str = "lora: {adapters: [{name: a, uri: 'hf://org/a'}]}\n"):
    extra = "  template:\n    containers:\n      - name: main\n"
    if args:
        extra += f"        args: {args}\n"
    if env:
        extra += f"        env: [{{name: VLLM_ADDITIONAL_ARGS, value: '{env}'}}]\n"
    extra += '        resources: {limits: {nvidia.com/gpu: "1"}}\n'
    return kserve(lora, extra=extra)


@pytest.mark.parametrize(
    ("args", "env", "suppressed"),
    [
        ("", "--max-num-seqs=8 --lora-modules b=org/b", True),
        ("", "--enable-lora", False),
        ('["--lora-modules", "x=org/y"]', "", True),
    ],
)
def test_kserve_users_lora_modules_suppress_the_injection(args, env, suppressed):
    """L/workload_lora_internal_test.go:99-116 TestUserSuppliedLoRAConfig: --lora-modules in VLLM_ADDITIONAL_ARGS
    or the args (not a bare --enable-lora) makes KServe skip its LoRA flags (L/workload_lora.go:195-199, 219-227):
    kvgen keeps the user's flags and sets no model.lora, with a warning."""
    (c,), warnings = convert(kserve_with_main(args, env))
    lora_warnings = [w for w in warnings if format_path(w.path) == "spec.model.lora"]
    if suppressed:
        assert "lora" not in c.spec["model"]
        assert any(flag.startswith("--lora-modules") for flag in c.spec["vllm"]["extraArgs"])
        (w,) = lora_warnings
        assert "their own --lora-modules" in w.message
    else:
        assert c.spec["model"]["lora"]["adapters"][0]["name"] == "a"
        assert "--enable-lora" not in c.spec["vllm"].get("extraArgs", [])
        assert not lora_warnings


def test_kserve_users_lora_modules_under_kserves_mount_root_is_an_error():
    """KServe still mounts the adapters at /mnt/lora/NAME when it skips its flags (L/workload_lora.go:152-160);
    kvgen mounts nothing for a --lora-modules of the user's, so such a path would not exist."""
    text = kserve_with_main(args="""["--lora-modules", '{"name":"a","path":"/mnt/lora/a"}']""")
    found = problems(text)
    p = found["spec.template.containers[0].args[0]"]
    assert "/mnt/lora/a is where KServe mounts its adapters" in p.message
    assert p.hint is not None and "remove --lora-modules" in p.hint


# ----------------------------------------------------------------------------- KAITO


def workspace(adapters: str, extra: str = "") -> str:
    return (
        "apiVersion: kaito.sh/v1beta1\n"
        "kind: Workspace\n"
        "metadata: {name: llama, namespace: default}\n"
        f"resource: {{instanceType: {INSTANCE}}}\n"
        "inference:\n"
        "  preset: {name: meta-llama/Llama-3.1-8B-Instruct}\n"
        f"{extra}"
        "  adapters:\n" + textwrap.indent(textwrap.dedent(adapters), "    ")
    )


VOLUME_ADAPTERS = """\
- source:
    name: adapter-1
    volumeSource: {persistentVolumeClaim: {claimName: pvc-adapter-1}}
- source:
    name: adapter-2
    volumeSource: {persistentVolumeClaim: {claimName: pvc-adapter-2, readOnly: true}}
"""


def test_kaito_volume_adapters_map_to_pvc_uris_under_their_source_names():
    """kaito api/v1beta1/workspace_validation_test.go:1402-1425 "Valid with volume adapters/vllm" (a
    persistentVolumeClaim per adapter); KAITO mounts each at /mnt/adapter/NAME (preset_inferences.go:928-944,
    preset_inferences_test.go:1020-1051) and its launcher serves the directory's name
    (presets/workspace/inference/vllm/inference_api.py:417-429) with --enable-lora only (pkg/model/interface.go:448-450),
    so vLLM's one adapter per batch applies."""
    (c,), _w = convert(workspace(VOLUME_ADAPTERS))
    assert c.spec["model"]["lora"] == {
        "adapters": [
            {"name": "adapter-1", "uri": "pvc://pvc-adapter-1"},
            {"name": "adapter-2", "uri": "pvc://pvc-adapter-2"},
        ],
        "maxLoras": 1,
    }
    assert any(n.startswith("model.lora.maxLoras 1: KAITO passes no --max-loras") for n in c.notes)
    assert c.translate(Problem(("model", "lora", "adapters", 1, "uri"), "x")).path == (
        "inference",
        "adapters",
        1,
        "source",
        "volumeSource",
        "persistentVolumeClaim",
        "claimName",
    )


def test_kaito_inference_set_adapters_and_their_pull_secrets():
    """An InferenceSet's template carries the same inference; the adapters' imagePullSecrets are the pod's
    (preset_inferences.go:138-150, :634)."""
    text = (
        "apiVersion: kaito.sh/v1beta1\n"
        "kind: InferenceSet\n"
        "metadata: {name: llama, namespace: default}\n"
        "spec:\n"
        "  replicas: 1\n"
        "  labelSelector: {matchLabels: {apps: llama}}\n"
        "  template:\n"
        f"    resource: {{instanceType: {INSTANCE}}}\n"
        "    inference:\n"
        "      preset: {name: meta-llama/Llama-3.1-8B-Instruct}\n"
        "      adapters:\n"
        "        - source:\n"
        "            name: adapter-1\n"
        "            imagePullSecrets: [registry]\n"
        "            volumeSource: {persistentVolumeClaim: {claimName: pvc-adapter-1}}\n"
    )
    (c,), _w = convert(text)
    assert c.spec["model"]["lora"]["adapters"] == [{"name": "adapter-1", "uri": "pvc://pvc-adapter-1"}]
    assert c.spec["pod"]["imagePullSecrets"] == [{"name": "registry"}]


def test_kaito_image_adapters_are_an_error_with_the_way_out():
    """kaito api/v1beta1/workspace_validation_test.go:1358-1377 "Valid with adapters/vllm": image adapters,
    which KAITO pulls into /mnt/adapter/NAME with an init container (preset_inferences.go:914-926,
    manifests.go:241-275); kvgen has no image source for adapters."""
    found = problems(
        workspace(
            "- source: {name: adapter-1, image: 'fake.kaito.com/kaito-image:0.0.1'}\n"
            "- source: {name: adapter-2, image: 'fake.kaito.com/kaito-image:0.0.2'}\n"
        )
    )
    assert list(found) == ["inference.adapters[0].source.image", "inference.adapters[1].source.image"]
    p = found["inference.adapters[0].source.image"]
    assert "adapters in container images are not supported" in p.message
    assert p.hint is not None and "persistentVolumeClaim.claimName" in p.hint and "hf://ORG/REPO" in p.hint


def test_kaito_adapter_strength_is_an_error_as_in_kaitos_webhook():
    """kaito api/v1beta1/workspace_validation_test.go:1427-1449 "Adapters with strength/vllm": "vLLM does not
    support adapter strength" (workspace_validation.go:849-866, pkg/model/interface.go:711-712)."""
    found = problems(
        workspace(
            "- source: {name: adapter-1, volumeSource: {persistentVolumeClaim: {claimName: c}}}\n  strength: '0.5'\n"
        )
    )
    assert "vLLM does not support adapter strength" in found["inference.adapters[0].strength"].message


def test_kaito_more_than_ten_adapters_is_an_error():
    """kaito api/v1beta1/workspace_validation_test.go:1333-1356 "Adapeters more than 10"
    (workspace_validation.go:59, :876-878)."""
    items = "".join(
        f"- source: {{name: adapter-{i}, volumeSource: {{persistentVolumeClaim: {{claimName: c{i}}}}}}}\n"
        for i in range(1, 12)
    )
    found = problems(workspace(items))
    assert found["inference.adapters"].message == "Number of Adapters exceeds the maximum limit, maximum of 10 allowed"


def test_kaito_duplicate_adapter_names_are_an_error():
    """kaito api/v1beta1/workspace_validation_test.go:1451-1473 "Adapters names are duplicated"
    (workspace_validation.go:917-925)."""
    items = "".join(
        f"- source: {{name: adapter, volumeSource: {{persistentVolumeClaim: {{claimName: c{i}}}}}}}\n" for i in (1, 2)
    )
    found = problems(workspace(items))
    assert found["inference.adapters[1].source.name"].message == "Duplicate adapter source name found: adapter"


@pytest.mark.parametrize(
    ("case", "item", "path", "message"),
    [
        ("Missing Source", "- {}\n", "inference.adapters[0]", "missing field(s): Source"),
        (
            "Missing Source Name",
            "- source: {volumeSource: {persistentVolumeClaim: {claimName: c}}}\n",
            "inference.adapters[0].source",
            "Name of Adapter field must be specified",
        ),
        (
            "Missing both Image and Volume",
            "- source: {name: adapter-1}\n",
            "inference.adapters[0].source",
            "Either Image or Volume must be specified for adapter source",
        ),
        (
            "Adapter with unsupported URLs source",
            "- source: {name: adapter-1, urls: ['https://example.com/adapter.bin']}\n",
            "inference.adapters[0].source.urls",
            "URLs are not supported as adapter source",
        ),
        (
            "a volume that is no claim",
            "- source: {name: adapter-1, volumeSource: {hostPath: {path: /data/adapter}}}\n",
            "inference.adapters[0].source.volumeSource",
            "kvgen mounts an adapter only from a PersistentVolumeClaim",
        ),
    ],
)
def test_kaito_adapter_spec_validation(case, item, path, message):
    """kaito api/v1beta1/workspace_validation_test.go:1578-1711 TestAdapterSpecValidateCreateorUpdate, the
    subtests kvgen refuses (workspace_validation.go:248-265); plus a volume source kvgen cannot mount."""
    found = problems(workspace(item))
    assert list(found) == [path], case
    assert message in found[path].message


CONFIGMAP = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: cfg, namespace: default}}
data:
  inference_config.yaml: |
    vllm:
{vllm}
"""


def test_kaito_lora_limits_in_the_configmap_win():
    """The ConfigMap's vllm section is appended after KAITO's flags, so its limits win."""
    text = workspace(VOLUME_ADAPTERS, extra="  config: cfg\n") + CONFIGMAP.format(
        vllm="      max-loras: 2\n      max-lora-rank: 64\n"
    )
    (c,), _w = convert(text)
    lora = c.spec["model"]["lora"]
    assert (lora["maxLoras"], lora["maxRank"]) == (2, 64)
    assert not [a for a in c.spec["vllm"]["extraArgs"] if "lora" in a]


def test_kaito_lora_modules_in_the_configmap_stop_kaitos_scan():
    """KAITO's launcher lists /mnt/adapter only when --lora-modules is not given
    (presets/workspace/inference/vllm/inference_api.py:551-553): the user's modules are served, model.lora is not
    set, and a path under /mnt/adapter (which kvgen does not mount) is an error."""
    text = workspace(VOLUME_ADAPTERS, extra="  config: cfg\n") + CONFIGMAP.format(
        vllm="      lora-modules: [a=org/a]\n"
    )
    (c,), warnings = convert(text)
    assert "lora" not in c.spec["model"]
    assert c.spec["vllm"]["extraArgs"][-2:] == ["--lora-modules", "a=org/a"]
    assert any(
        format_path(w.path) == "inference.adapters" and "their own --lora-modules" in w.message for w in warnings
    )
    bad = workspace(VOLUME_ADAPTERS, extra="  config: cfg\n") + CONFIGMAP.format(
        vllm="      lora-modules: [adapter-1=/mnt/adapter/adapter-1]\n"
    )
    found = problems(bad)
    (p,) = found.values()
    assert "/mnt/adapter/adapter-1 is where KAITO mounts its adapters" in p.message


def test_kserve_lora_renders_the_vllm_flags_kserve_injects():
    """L/workload_lora_internal_test.go:45-73 TestAddLoRAVLLMArgs "all params set with model-routing aliases", on the
    rendered Deployment: --enable-lora --max-lora-rank=64 --max-loras=2 --max-cpu-loras=4 --lora-modules, then a
    JSON item per name in KServe's order (a, publishers/ns/models/a, b, publishers/ns/models/b), each alias at its
    adapter's path. The pvc:// adapter is mounted at /mnt/lora/b as KServe mounts it (L/workload_lora.go:155-158);
    the hf:// one is the repo id vLLM downloads at start (KServe's storage initializer puts it at /mnt/lora/a)."""
    import json

    from kvgen.app.compiler import compile_text

    (compiled,) = compile_text(kserve(ALL_PARAMS), "input.yaml", options=Options(INSTANCE))
    (deployment,) = [o for o in compiled.objects if o["kind"] == "Deployment"]
    (vllm,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "vllm"]
    args = vllm["args"]
    start = args.index("--enable-lora")
    items = [json.loads(a) for a in args[start + 5 : start + 9]]
    assert args[start : start + 5] == [
        "--enable-lora",
        "--max-lora-rank=64",
        "--max-loras=2",
        "--max-cpu-loras=4",
        "--lora-modules",
    ]
    assert items == [
        {"name": "a", "path": "org/a"},
        {"name": "publishers/ns/models/a", "path": "org/a"},
        {"name": "b", "path": "/mnt/lora/b"},
        {"name": "publishers/ns/models/b", "path": "/mnt/lora/b"},
    ]
    mounts = [m for m in vllm["volumeMounts"] if m["mountPath"].startswith("/mnt/lora/")]
    assert mounts == [{"name": "lora-adapter-0", "mountPath": "/mnt/lora/b", "readOnly": True, "subPath": "path/b"}]
