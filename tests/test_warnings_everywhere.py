"""Issue 23: every warning also lands on the objects (the workload's kvgen.dev/warnings annotation,
which Argo CD and Flux show), the same in kvgen and the chart; --strict (and strict: true) turns
warnings into errors; no silent fallback (tiers a rule drops, the CPU build in place of an image,
a KServe manifest without GPUs); render -o with a format or a file is a usage error."""

from __future__ import annotations

import helm
import pytest
from conftest import EXAMPLES, ROOT, compile_spec, dump, kube_version_of, problem_set, run_kvgen, spec
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text
from kvgen.data import catalog

load = YAML(typ="safe", pure=True).load
KEY = catalog.runtime()["wiring"]["annotations"]["warnings"]
WORKLOADS = ("Deployment", "StatefulSet", "LeaderWorkerSet")
LOAD_BALANCER = {"type": "LoadBalancer"}


def pod_templates(obj):
    spec_ = obj["spec"]
    if obj["kind"] == "LeaderWorkerSet":
        lws = spec_["leaderWorkerTemplate"]
        return [t for t in (lws.get("leaderTemplate"), lws["workerTemplate"]) if t]
    return [spec_["template"]]


NAME_LABEL = "app.kubernetes.io/name"


def test_the_annotation_key_is_wiring():
    assert KEY == "kvgen.dev/warnings"


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_warning_is_on_each_workload_one_a_line_in_kvgens_order(example):
    (c,) = compile_text(example.read_text(), str(example), kube_version_of(example))
    # the servers' workloads (routing.mode gateway's Endpoint Picker is a Deployment too, not a server)
    workloads = [o for o in c.objects if o["kind"] in WORKLOADS and o["metadata"]["labels"][NAME_LABEL] == "vllm"]
    assert workloads
    for o in workloads:
        assert o["metadata"]["annotations"].get(KEY) == ("\n".join(c.plan.warnings) if c.plan.warnings else None)
        assert all(KEY not in t["metadata"].get("annotations", {}) for t in pod_templates(o))  # no restart
    for o in c.objects:
        if o not in workloads:
            assert KEY not in o["metadata"].get("annotations", {})


@pytest.mark.heavy
@pytest.mark.parametrize(
    "values",
    [
        spec(service=LOAD_BALANCER),  # a Deployment, two warnings (gated model, LoadBalancer)
        {**load((ROOT / "examples" / "multinode-lws.yaml").read_text()), "service": LOAD_BALANCER},
        {  # a tier the rule multi-node-pipeline-parallel drops
            **load((ROOT / "examples" / "rule-multi-node-pipeline-parallel.yaml").read_text()),
            "service": LOAD_BALANCER,
            "kvCacheOffloading": {"secondary": [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}]},
        },
    ],
    ids=["deployment", "leaderworkerset", "statefulsets"],
)
def test_the_chart_annotates_the_workloads_as_kvgen_does_with_notes_words(values):
    c = compile_spec(values)
    assert len(c.plan.warnings) >= 2
    objs, notes = helm.objects_and_warnings(values)
    theirs = {(o["kind"], o["metadata"]["name"]): o for o in objs if o["kind"] in WORKLOADS}
    ours = {(o["kind"], o["metadata"]["name"]): o for o in c.objects if o["kind"] in WORKLOADS}
    assert theirs and theirs == ours
    assert notes == c.plan.warnings
    assert {o["metadata"]["annotations"][KEY] for o in theirs.values()} == {"\n".join(notes)}


# ----------------------------------------------------------------------------- strict


@pytest.mark.heavy
def test_strict_true_makes_every_warning_a_problem_in_both_faces():
    values = spec(service=LOAD_BALANCER, strict=True)
    warnings = compile_spec(spec(service=LOAD_BALANCER)).plan.warnings
    expected = {("strict", w) for w in warnings}
    assert {(p, m) for p, m, _h in problem_set(values)} == expected
    assert helm.problems(values) == problem_set(values)
    quiet = spec(model={**spec()["model"], "hfTokenSecret": {"name": "hf", "key": "token"}}, strict=True)
    assert compile_spec(quiet).plan.warnings == [] and helm.problems(quiet) == set()  # no warning: renders


@pytest.mark.heavy
def test_cli_strict_fails_with_every_warning_and_writes_nothing(tmp_path):
    text = dump(spec(service=LOAD_BALANCER))
    for command in (["render"], ["validate"], ["render", "-o", str(tmp_path / "out")]):
        result = run_kvgen(*command, "--strict", "-", input=text)
        assert result.returncode == 1, result.stderr
        assert result.stdout == ""
        assert "error: <stdin>: demo: service.type LoadBalancer exposes the OpenAI API" in result.stderr
        assert "error: <stdin>: demo: meta-llama/Llama-3.1-8B-Instruct is gated" in result.stderr
        assert "kvgen: 2 warnings (errors with --strict); nothing was written" in result.stderr
    assert not (tmp_path / "out").exists()
    assert run_kvgen("render", "-", input=text).returncode == 0  # without --strict: warnings only


@pytest.mark.heavy
def test_cli_strict_passes_a_spec_without_warnings():
    result = run_kvgen("validate", "--strict", str(ROOT / "examples" / "kaito-gemma-4-12b.yaml"))
    assert result.returncode == 0, result.stderr


# ----------------------------------------------------------------------------- no silent fallback


def test_a_cpu_tier_on_a_cpu_node_is_said_to_be_replaced():
    c = compile_spec(spec(instance={"type": "Standard_D16s_v5"}, kvCacheOffloading={"cpu": "10Gi"}))
    assert c.plan.decision.reason_code == "cpu-instance"
    assert any(
        w.startswith("kvCacheOffloading.cpu is dropped: KV-cache offloading is off (rule cpu-instance:")
        and "VLLM_CPU_KVCACHE_SPACE=" in w
        for w in c.plan.warnings
    ), c.plan.warnings


@pytest.mark.heavy
def test_tiers_on_mig_are_said_to_be_dropped_the_valkey_remote_included():
    remote = {"url": "redis://valkey.kv-cache.svc.cluster.local:6379"}
    values = spec(
        instance={"type": "Standard_NC24ads_A100_v4", "mig": "3g.40gb"},
        kvCacheOffloading={"secondary": [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}], "remote": remote},
    )
    c = compile_spec(values)
    assert c.plan.decision.reason_code == "mig-partition"
    (dropped,) = [w for w in c.plan.warnings if "dropped" in w]
    assert dropped.startswith(
        "kvCacheOffloading.secondary, kvCacheOffloading.remote are dropped: KV-cache offloading is off "
        "(rule mig-partition: the GPU is a MIG partition"
    )
    result = run_kvgen("render", "-", input=dump(values))
    assert result.returncode == 0 and f"kvgen: demo: warning: {dropped}" in result.stderr


def test_switched_off_by_the_spec_drops_nothing_unsaid():
    c = compile_spec(spec(kvCacheOffloading={"enabled": False, "cpu": "10Gi"}))
    assert c.plan.decision.reason_code == "disabled-by-config"
    assert not any("dropped" in w for w in c.plan.warnings)


def test_an_image_on_a_cpu_node_is_said_to_be_replaced_by_the_cpu_build():
    c = compile_spec(spec(instance={"type": "Standard_D16s_v5"}, images={"vllm": {"tag": "v0.32.0"}}))
    image = next(o for o in c.objects if o["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert (
        f"images.vllm (vllm/vllm-openai:v0.32.0) is not used on a node without a GPU: vLLM runs from its CPU "
        f"build {image['image']} (images.vllmCpu chooses it)"
    ) in c.plan.warnings


def test_a_kserve_manifest_without_gpus_says_it_becomes_a_cpu_pod():
    from kserve_inputs import compile_svc, main

    out = compile_svc(main("{memory: 64Gi}"), instance=None)
    (c,) = out.compiled
    assert c.plan.instance.gpus == 0
    assert any(
        "spec.template: the main container asks for no nvidia.com/gpu: kvgen renders a CPU pod, vLLM's CPU build"
        in w.render()
        for w in out.input_warnings
    )


# ----------------------------------------------------------------------------- render -o


@pytest.mark.heavy
@pytest.mark.parametrize("value", ["yaml", "json", "YAML", "jsonpath={.items}", "out.yaml", "rendered/all.yml"])
def test_render_o_with_a_format_or_a_file_is_a_usage_error_with_a_hint(tmp_path, value):
    result = run_kvgen("render", str(ROOT / "examples" / "kaito-gemma-4-12b.yaml"), "-o", value, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "-o takes a directory" in result.stderr and "kvgen render SPEC > out.yaml" in result.stderr
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.heavy
def test_render_o_into_an_existing_directory_named_like_a_format_still_works(tmp_path):
    (tmp_path / "yaml").mkdir()
    result = run_kvgen("render", str(ROOT / "examples" / "kaito-gemma-4-12b.yaml"), "-o", "yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "yaml" / "gemma-4-12b.yaml").is_file()
