"""Each capability rule turns offloading off with its reason code, never failing the render,
and a neighbouring case that differs in just that respect keeps offloading on."""

from __future__ import annotations

import pytest
from conftest import compile_spec, container, dump, kv_transfer_config, run_kvgen, spec, workload

from kvgen.data import catalog
from kvgen.plan import rules

LLAMA = {"id": "meta-llama/Llama-3.1-8B-Instruct"}
# p5 node pools that put the kubelet on the instance NVMe (a default EKS pool has a 20 GiB root volume)
NVME = "28312Gi"

# code -> (spec that trips the rule, its neighbour that keeps offloading on)
CASES = {
    "disabled-by-config": (
        spec(kvCacheOffloading={"enabled": False}),
        spec(kvCacheOffloading={"enabled": True}),
    ),
    "cpu-instance": (
        spec(model={"id": "meta-llama/Llama-3.2-1B-Instruct"}, instance={"type": "Standard_D16s_v5"}),
        # an ARM node with GPUs (Grace Blackwell) keeps offloading on: the rule is about GPUs
        spec(model={"id": "meta-llama/Llama-3.2-1B-Instruct"}, instance={"type": "Standard_ND128isr_NDR_GB200_v6"}),
    ),
    "mig-partition": (
        spec(instance={"type": "Standard_NC24ads_A100_v4", "mig": "3g.40gb"}),
        spec(instance={"type": "Standard_NC24ads_A100_v4"}),
    ),
    "data-parallel": (
        spec(instance={"type": "Standard_NC96ads_A100_v4"}, parallelism={"data": 4}),
        spec(instance={"type": "Standard_NC96ads_A100_v4"}, parallelism={"tensor": 4}),
    ),
    "multi-node-pipeline-parallel": (
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME},
            parallelism={"tensor": 8, "pipeline": 2, "nodes": 2},
        ),
        # pipeline parallel inside one node keeps offloading on
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": NVME},
            parallelism={"tensor": 4, "pipeline": 2},
        ),
    ),
    "prefill-decode-disaggregation": (
        spec(disaggregation={"role": "decode"}),
        spec(disaggregation={"role": "none"}),
    ),
    "hybrid-architecture": (
        spec(model={"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"}),
        # a Qwen3 (not hybrid) model stays on, as in KAITO
        spec(model={"id": "Qwen/Qwen3-8B"}),
    ),
    "lora-adapters": (
        spec(vllm={"extraArgs": ["--enable_lora", "--max-loras=2"]}),
        # LoRA switched on, then off again: the last of the switches decides, as in vLLM's parser
        spec(vllm={"extraArgs": ["--enable-lora", "--no-enable-lora", "--max-loras=2"]}),
    ),
}


def test_every_rule_in_the_table_has_a_case():
    assert set(CASES) == {r["code"] for r in catalog.rules()}


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_turns_offloading_off_with_its_reason(code):
    c = compile_spec(CASES[code][0])
    meta = workload(c)["metadata"]["annotations"]
    assert meta["kvgen.dev/kv-cache-offloading"] == "disabled"
    assert meta["kvgen.dev/kv-cache-offloading-reason"] == code
    pod = workload(c)["spec"]["template"]
    assert pod["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading-reason"] == code
    assert "initContainers" not in pod["spec"]  # no LMCache sidecar
    assert not any(o["kind"] == "ConfigMap" for o in c.objects)
    kv = kv_transfer_config(c)
    if code == "prefill-decode-disaggregation":
        # KAITO presets/workspace/inference/vllm/tests/test_kv_transfer_config.py
        # TestSetKvTransferConfig.test_nixl_connector_when_role_is_decode asserts this dict
        assert kv == {"kv_connector": "NixlConnector", "kv_role": "kv_both", "kv_load_failure_policy": "fail"}
    else:
        assert kv is None


@pytest.mark.parametrize("code", sorted(CASES))
def test_neighbour_keeps_offloading_on(code):
    c = compile_spec(CASES[code][1])
    meta = workload(c)["metadata"]["annotations"]
    assert meta["kvgen.dev/kv-cache-offloading"] == "enabled"
    assert "kvgen.dev/kv-cache-offloading-reason" not in meta
    assert kv_transfer_config(c)["kv_connector"] == "LMCacheMPConnector"
    assert container(c, "lmcache-mp-server")["restartPolicy"] == "Always"


def test_utilization_zero_is_disabled_by_config():
    c = compile_spec(spec(kvCacheOffloading={"cpuMemoryUtilization": 0}))
    assert workload(c)["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading-reason"] == "disabled-by-config"


def test_hybrid_opt_in_with_native_backend_keeps_offloading_on_with_prefix_caching():
    c = compile_spec(
        spec(
            model={"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"},
            kvCacheOffloading={"backend": "native", "cpu": "20Gi", "allowHybrid": True},
        )
    )
    assert kv_transfer_config(c)["kv_connector"] == "OffloadingConnector"
    assert "--enable-prefix-caching" in container(c, "vllm")["args"]


def test_hybrid_opt_in_is_refused_for_lmcache_with_a_warning():
    c = compile_spec(spec(model={"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"}, kvCacheOffloading={"allowHybrid": True}))
    assert workload(c)["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading-reason"] == "hybrid-architecture"
    assert any("native backend only" in w for w in c.plan.warnings)


def test_first_matching_rule_in_table_order_gives_the_reason():
    # both MIG and data parallel apply; mig-partition comes first in rules.yaml
    c = compile_spec(spec(instance={"type": "Standard_NC96ads_A100_v4", "mig": "3g.40gb"}, parallelism={"data": 2}))
    assert workload(c)["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading-reason"] == "mig-partition"
    matched = [r.code for r in c.plan.decision.checked if r.matched]
    assert matched == ["mig-partition", "data-parallel"]


def test_mig_requests_the_mig_resource():
    c = compile_spec(CASES["mig-partition"][0])
    assert container(c, "vllm")["resources"]["limits"]["nvidia.com/mig-3g.40gb"] == 1
    assert "nvidia.com/gpu" not in container(c, "vllm")["resources"]["limits"]


@pytest.mark.heavy
def test_decision_is_printed_on_stderr_and_the_render_succeeds(tmp_path):
    path = tmp_path / "dp.yaml"
    path.write_text(dump(CASES["data-parallel"][0]))
    result = run_kvgen("render", str(path))
    assert result.returncode == 0
    assert "KV-cache offloading disabled: data-parallel" in result.stderr
    assert "kind: Deployment" in result.stdout


# ----------------------------------------------------------------------------- hybrid by architecture

NEMOTRON_INLINE = {  # a model the catalog does not know, described inline, with no `hybrid:`
    "id": "example-org/nemotron-h-custom",
    "architecture": "NemotronHForCausalLM",
    "layers": 52,
    "attentionLayers": 4,
    "kvHeads": 8,
    "headDim": 128,
    "weights": "16Gi",
}


def test_inline_model_with_a_hybrid_architecture_is_hybrid_and_loses_offloading():
    c = compile_spec(spec(model=NEMOTRON_INLINE))
    assert c.plan.model.hybrid is True
    assert workload(c)["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading-reason"] == "hybrid-architecture"
    pod = workload(c)["spec"]["template"]["spec"]
    assert "initContainers" not in pod  # no LMCache sidecar it could not use


def test_inline_model_with_a_plain_architecture_stays_not_hybrid():
    c = compile_spec(spec(model={**NEMOTRON_INLINE, "architecture": "LlamaForCausalLM"}))
    assert c.plan.model.hybrid is False
    assert workload(c)["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading"] == "enabled"


def test_hybrid_false_on_a_hybrid_architecture_is_an_error_not_a_silent_override():
    from kvgen.core.errors import SpecError

    for model in ({**NEMOTRON_INLINE, "hybrid": False}, {"id": "Qwen/Qwen3-Next-80B-A3B-Instruct", "hybrid": False}):
        with pytest.raises(SpecError) as err:
            compile_spec(spec(model=model))
        (problem,) = [p for p in err.value.problems if p.path == ("model", "hybrid")]
        assert "implements IsHybrid" in problem.message and "remove model.hybrid" in problem.hint
    # hybrid: true on a hybrid architecture is simply redundant
    assert compile_spec(spec(model={**NEMOTRON_INLINE, "hybrid": True})).plan.model.hybrid


def test_catalog_rows_agree_with_the_captured_hybrid_architectures():
    hybrid = catalog.hybrid_architectures()
    disagree = {
        mid: (row["architecture"], row["hybrid"])
        for mid, row in catalog.models().items()
        if row["hybrid"] != (row["architecture"] in hybrid)
    }
    assert not disagree


def test_hybrid_architectures_are_captured_from_the_pinned_vllm():
    data = catalog.load("hybrid-architectures.yaml")
    assert data["source"]["package"] == "vllm"
    assert data["source"]["version"] == str(catalog.runtime()["vllm"]["version"])
    # the families the issue names, among the registry architectures vLLM 0.33 marks IsHybrid
    for arch in (
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForCausalLM",
        "NemotronHForCausalLM",
        "NemotronH_Nano_VL_V2",
        "JambaForCausalLM",
        "FalconH1ForCausalLM",
        "GraniteMoeHybridForCausalLM",
        "Zamba2ForCausalLM",
        "Lfm2ForCausalLM",
        "KimiLinearForCausalLM",
    ):
        assert arch in data["architectures"], arch
    for plain in ("LlamaForCausalLM", "Gemma4ForConditionalGeneration", "GptOssForCausalLM", "MambaForCausalLM"):
        assert plain not in data["architectures"], plain


# ----------------------------------------------------------------------------- one table, two faces


def _chart_reason(values, replaced=()):
    import helm

    objs, _context = helm.objects_and_context(values, replaced=replaced)
    (w,) = [o for o in objs if o["kind"] in ("Deployment", "StatefulSet") and "worker" not in o["metadata"]["name"]][:1]
    return w["metadata"]["annotations"].get("kvgen.dev/kv-cache-offloading-reason")


@pytest.mark.heavy
@pytest.mark.parametrize("code", sorted(CASES))
def test_the_chart_decides_each_case_as_kvgen_does(code):
    tripped, neighbour = CASES[code]
    assert _chart_reason(tripped) == code
    assert _chart_reason(neighbour) is None


@pytest.mark.heavy
def test_a_new_row_is_a_new_rule_on_both_faces(monkeypatch):
    """A rule is one row of files/rules.yaml: both faces read its condition from the table."""
    data = catalog.load("rules.yaml")
    row = {
        "code": "example-wide-tensor",
        "means": "parallelism.tensor > 2 on a node of more than 2 GPUs, unless backend is native",
        "when": {
            "all": [
                {"field": "spec.parallelism.tensor", "op": "gt", "value": 2},
                {"field": "instance.gpus", "op": "gt", "value": 2},
                {"not": {"field": "spec.kvCacheOffloading.backend", "op": "eq", "value": "native"}},
            ]
        },
        "reason": "an example",
        "source": "tests/test_rules.py",
    }
    table = {**data, "rules": [row, *data["rules"]]}
    monkeypatch.setattr(catalog, "rules", lambda: table["rules"])
    replaced = (("files/rules.yaml", dump(table)),)
    hit = spec(instance={"type": "Standard_NC96ads_A100_v4"}, parallelism={"tensor": 4})
    miss = spec(instance={"type": "Standard_NC96ads_A100_v4"}, parallelism={"tensor": 2})
    assert workload(compile_spec(hit))["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading-reason"] == row["code"]
    assert _chart_reason(hit, replaced) == row["code"]
    assert "kvgen.dev/kv-cache-offloading-reason" not in workload(compile_spec(miss))["metadata"]["annotations"]
    assert _chart_reason(miss, replaced) is None


CONDITIONS = [
    ({"field": "spec.a", "op": "is", "value": False}, {"spec": {}}, True),
    ({"field": "spec.a", "op": "is", "value": True}, {"spec": {"a": "x"}}, True),
    ({"field": "spec.a", "op": "eq", "value": 0}, {"spec": {"a": 0.0}}, True),
    ({"field": "spec.a", "op": "eq", "value": 0}, {"spec": {}}, False),
    ({"field": "spec.a", "op": "ne", "value": "none"}, {"spec": {}}, True),
    ({"field": "spec.a.b", "op": "gt", "value": 1}, {"spec": {"a": 3}}, False),
    ({"field": "spec.a", "op": "lt", "value": 1}, {"spec": {"a": "0"}}, False),
    (
        {"any": [{"field": "spec.a", "op": "gt", "value": 1}, {"field": "spec.b", "op": "eq", "value": "x"}]},
        {"spec": {"a": 1, "b": "x"}},
        True,
    ),
]


@pytest.mark.parametrize("when,facts,holds", CONDITIONS)
def test_conditions(when, facts, holds):
    assert rules.holds(when, facts) is holds


def test_the_chart_reads_conditions_as_kvgen_does():
    """kvgen.holds (templates/plan/_rules.tpl) on the same conditions, facts as Helm's values hold them."""
    import json

    import helm
    from ruamel.yaml import YAML
    from specs import NATIVE_HEAD

    cases = json.dumps([{"when": w, "facts": f} for w, f, _h in CONDITIONS])
    template = (
        "{{- range $c := (`" + cases + "` | fromJsonArray) }}"
        '{{ include "kvgen.holds" (list $c.when $c.facts) | default "false" }}\n{{ end }}'
    )
    chart = helm.context_chart(replaced=(("templates/kvgen-holds.txt", template),))
    rendered = helm.render(YAML(typ="safe", pure=True).load(NATIVE_HEAD), chart_=chart)
    (text,) = [t for name, t in rendered.items() if name.endswith("kvgen-holds.txt")]
    assert text.split() == [str(h).lower() for _w, _f, h in CONDITIONS]


# --------------------------------------------------------------------------- settings that apply only to others

# code -> (a spec that warns, its neighbour that does not)
UNUSED = {
    "allow-hybrid-not-native": (
        spec(model={"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"}, kvCacheOffloading={"allowHybrid": True}),
        spec(
            model={"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"},
            kvCacheOffloading={"backend": "native", "cpu": "20Gi", "allowHybrid": True},
        ),
    ),
    "multi-node-engine-single-node": (spec(multiNode={"engine": "leaderworkerset"}), spec()),
    "lmcache-settings-native": (
        spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "lmcache": {"utilizationScope": "rank"}}),
        spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "lmcache": {"utilizationScope": "pod"}}),
    ),
    "device-class-not-dra": (
        spec(kvCacheOffloading={"backend": "lmcache", "lmcache": {"deviceClassName": "a100.example.com"}}),
        spec(kvCacheOffloading={"backend": "lmcache", "lmcache": {"deviceClassName": "gpu.nvidia.com"}}),
    ),
}


def test_every_warning_row_has_a_case_a_code_and_a_spec_path():
    rows = catalog.load("rules.yaml")["warnings"]
    assert [r["code"] for r in rows] == list(UNUSED)
    for row in rows:
        compiled = compile_spec(UNUSED[row["code"]][0])
        node = compiled.spec
        for key in row["path"].split("."):
            node = rules.child(node, key)
            assert node is not None, f"{row['code']}: {row['path']} is not set in its case"


def test_the_warning_rows_defaults_are_the_specs():
    """A setting at its default is never warned about: the rows compare with files/gpu-access.yaml defaults."""
    defaults = catalog.load("gpu-access.yaml")["defaults"]
    written = [
        c
        for row in catalog.load("rules.yaml")["warnings"]
        for c in _conditions(row["when"])
        if c["field"].startswith("spec.kvCacheOffloading.lmcache.")
    ]
    assert written
    for c in written:
        key = c["field"].rsplit(".", 1)[1]
        assert (c["op"], c["value"]) in (("ne", defaults[key]), ("is", not defaults[key])), c


def _conditions(when):
    if "field" in when:
        return [when]
    return [
        c
        for sub in when.get("all", []) + when.get("any", []) + ([when["not"]] if "not" in when else [])
        for c in _conditions(sub)
    ]


@pytest.mark.parametrize("code", list(UNUSED))
def test_a_setting_that_applies_only_to_others_warns_alike_on_both_faces(code):
    import helm

    (row,) = [r for r in catalog.load("rules.yaml")["warnings"] if r["code"] == code]
    warns, quiet = UNUSED[code]
    ours = compile_spec(warns).plan.warnings
    assert [w for w in ours if w.startswith(row["message"].split("{")[0][:40])], ours
    assert helm.notes_warnings(helm.notes(warns)) == ours
    assert not [w for w in compile_spec(quiet).plan.warnings if w.startswith(row["message"].split("{")[0][:40])]


@pytest.mark.heavy
def test_a_new_warning_row_is_a_new_warning_on_both_faces(monkeypatch):
    """Warning about a setting that applies only to others is one row of files/rules.yaml `warnings`."""
    import helm

    row = {
        "code": "example",
        "path": "scheduling.priorityClassName",
        "when": {"field": "spec.scheduling.priorityClassName", "op": "eq", "value": "batch"},
        "message": "scheduling.priorityClassName {spec.scheduling.priorityClassName} on {instance.type} (an example rule)",
    }
    table = {**catalog.load("rules.yaml"), "warnings": [*catalog.load("rules.yaml")["warnings"], row]}
    monkeypatch.setitem(catalog.load("rules.yaml"), "warnings", table["warnings"])
    values = spec(scheduling={"priorityClassName": "batch"})
    expected = "scheduling.priorityClassName batch on Standard_NC24ads_A100_v4 (an example rule)"
    assert expected in compile_spec(values).plan.warnings
    chart = helm.context_chart(replaced=(("files/rules.yaml", dump(table)),))
    notes = [t for name, t in helm.render(values, chart_=chart).items() if name.endswith("NOTES.txt")]
    assert expected in helm.notes_warnings(notes[0])


def test_lora_with_the_native_backend_keeps_offloading_on():
    """vLLM's OffloadingConnector keys blocks by their hashes, which carry the LoRA adapter (vLLM 0.33
    _gen_lora_extra_hash_keys): LoRA is LMCache's problem only."""
    c = compile_spec(
        spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi"}, vllm={"extraArgs": ["--enable-lora"]})
    )
    assert workload(c)["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading"] == "enabled"
    assert kv_transfer_config(c)["kv_connector"] == "OffloadingConnector"


@pytest.mark.parametrize(
    ("args", "on"),
    [
        (["--enable-lora"], True),
        (["--enable_lora"], True),
        (["--enable-lora", "--disable-lora"], False),
        (["--no-enable-lora", "--enable-lora"], True),
        (["--enable-lora-bias"], False),
        ([], False),
    ],
)
def test_lora_enabled_reads_the_last_switch(args, on):
    assert rules.lora_enabled(args) is on


@pytest.mark.heavy
@pytest.mark.parametrize("code", sorted(CASES))
def test_the_chart_decides_each_case_and_its_neighbour_as_kvgen_does(code):
    import helm

    for values, off in zip(CASES[code], (True, False), strict=True):
        theirs = next(o for o in helm.objects(values) if o["kind"] in ("Deployment", "StatefulSet"))
        annotations = theirs["metadata"]["annotations"]
        assert annotations["kvgen.dev/kv-cache-offloading"] == ("disabled" if off else "enabled"), values
        assert annotations.get("kvgen.dev/kv-cache-offloading-reason") == (code if off else None), values
