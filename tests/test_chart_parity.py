"""The chart says what kvgen says: the same warnings, printed in NOTES.txt, and the same problems,
hints ("did you mean") included, for every example and for specs that trigger each warning and
each problem the chart's templates can see (Helm's schema errors for unknown keys cannot carry a
hint; the chart's own problems can)."""

from __future__ import annotations

import json
import re

import helm
import pytest
from conftest import BASE, EXAMPLES, compile_spec, kube_version_of, problem_set, spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text
from kvgen.data import catalog

load = YAML(typ="safe", pure=True).load

INLINE_MODEL = {
    "id": "acme/llama-like-8b",
    "architecture": "LlamaForCausalLM",
    "layers": 32,
    "kvHeads": 8,
    "headDim": 128,
    "weights": "16Gi",
}
IN_CONTAINER = {"lmcache": {"gpuAccess": "in-container"}}
REMOTE = {
    "url": "redis://valkey.kv-cache.svc.cluster.local:6379",
    "passwordSecret": {"name": "valkey-auth", "key": "password"},
}

# each warning kvgen can print for a spec (kvgen's Plan.warnings), and a spec that prints it
WARNINGS = {
    r"resources\.vllm: memory limit \S+ is below the \S+ kvgen computes for this container; it may be OOM-killed": spec(
        resources={"vllm": {"limits": {"memory": "8Gi"}}}
    ),
    r"resources\.lmcacheServer: memory limit \S+ is below .*OOM-killed": spec(
        resources={"lmcacheServer": {"limits": {"memory": "2Gi"}}}
    ),
    r"resources\.vllm: ephemeral-storage \S+ is below the \S+ of its emptyDir volumes; the kubelet may evict the pod": spec(
        resources={"vllm": {"limits": {"ephemeral-storage": "10Gi"}}}
    ),
    r"resources\.lmcacheServer: ephemeral-storage .* may evict the pod": spec(
        kvCacheOffloading={"secondary": [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}]},
        resources={"lmcacheServer": {"requests": {"ephemeral-storage": "10Gi"}}},
    ),
    r"the CPU tier \(.* GiB\) is not larger than the GPU KV cache \(~.* GiB\); offloading then mostly mirrors": spec(
        kvCacheOffloading={"backend": "native", "cpu": "4Gi"}
    ),
    r"vLLM's fs tier has no size bound": spec(
        kvCacheOffloading={
            "backend": "native",
            "cpu": "100Gi",
            "secondary": [{"fileSystem": {"emptyDir": {"size": "50Gi"}}}],
        }
    ),
    r"acme/llama-like-8b is not in the catalog: kvgen does not know its context length and cannot check that one sequence fits": spec(
        model=INLINE_MODEL
    ),
    r"acme/mamba is not in the catalog: kvgen does not know its context length; set model\.maxModelLen": spec(
        model={**INLINE_MODEL, "id": "acme/mamba", "architecture": "MambaForCausalLM", "attentionLayers": 0},
        kvCacheOffloading={"enabled": False},
    ),
    r"Qwen/Qwen3-32B supports 40960 tokens, but one sequence of that needs .* kvgen passes --max-model-len=19712": spec(
        model={"id": "Qwen/Qwen3-32B"}
    ),
    r"Qwen/Qwen3-32B supports 40960 tokens, but .* of the KV cache of vLLM's CPU backend and VLLM_CPU_KVCACHE_SPACE gives .*, the longest that fits \(set model\.maxModelLen to choose a length\)": spec(
        model={"id": "Qwen/Qwen3-32B"}, instance={"gpus": 0, "memory": "256Gi", "cpu": 32}
    ),
    r"kvCacheOffloading\.allowHybrid applies to the native backend only": spec(
        model={"id": "nvidia/NVIDIA-Nemotron-Nano-9B-v2"}, kvCacheOffloading={"allowHybrid": True}
    ),
    r"service\.type LoadBalancer exposes the OpenAI API outside the cluster without an API key": spec(
        service={"type": "LoadBalancer"}
    ),
    r"multiNode\.engine leaderworkerset applies to a server spanning several nodes \(parallelism\.nodes > 1\); this single-node server is a Deployment": spec(
        multiNode={"engine": "leaderworkerset"}
    ),
    r"kvCacheOffloading\.lmcache applies to the lmcache backend only; the native backend ignores it": spec(
        kvCacheOffloading={"backend": "native", "cpu": "100Gi", **IN_CONTAINER}
    ),
    r"kvCacheOffloading\.lmcache\.deviceClassName applies to gpuAccess dra only; visible-devices ignores it": spec(
        kvCacheOffloading={"lmcache": {"deviceClassName": "a100.gpu.example.com"}}
    ),
    r"resources\.lmcacheServer cpu is not used with gpuAccess in-container": spec(
        kvCacheOffloading=IN_CONTAINER, resources={"lmcacheServer": {"requests": {"cpu": "2"}}}
    ),
    r"images\.lmcache is not used with gpuAccess in-container: the LMCache server runs inside the vLLM container \(vllm/vllm-openai:v0\.33\.0\)": spec(
        kvCacheOffloading=IN_CONTAINER, images={"lmcache": {"tag": "v0.5.6"}}
    ),
    r"meta-llama/Llama-3\.1-8B-Instruct is gated on Hugging Face and model\.hfTokenSecret is not set: vLLM cannot download it": spec(),
    r"google/gemma-3-12b-it is gated on Hugging Face": spec(
        model={"id": "google/gemma-3-12b-it"}, vllm={"env": [{"name": "OTHER", "value": "1"}]}
    ),
    r"meta-llama/Llama-3\.2-1B-Instruct is gated on Hugging Face":  # an id the catalog lacks is gated too
    spec(model={**INLINE_MODEL, "id": "meta-llama/Llama-3.2-1B-Instruct"}),
    r"images\.lmcache: the LMCache server runs from lmcache/standalone:v0\.5\.6, the LMCacheMPConnector \(the client\) from the vLLM image": spec(
        images={"lmcache": {"repository": "lmcache/standalone", "tag": "v0.5.6"}}
    ),
    # issue 23: no silent fallback
    r"kvCacheOffloading\.cpu is dropped: KV-cache offloading is off \(rule cpu-instance: .*\), sized by VLLM_CPU_KVCACHE_SPACE=\d+ GiB": spec(
        instance={"type": "Standard_D16s_v5"}, kvCacheOffloading={"cpu": "10Gi"}
    ),
    r"kvCacheOffloading\.cpuMemoryUtilization, kvCacheOffloading\.secondary, kvCacheOffloading\.remote are dropped: KV-cache offloading is off \(rule mig-partition: the GPU is a MIG partition.*\)": spec(
        instance={"type": "Standard_NC24ads_A100_v4", "mig": "3g.40gb"},
        kvCacheOffloading={
            "cpuMemoryUtilization": 0.3,
            "secondary": [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}],
            "remote": REMOTE,
        },
    ),
    r"images\.vllm \(vllm/vllm-openai:v0\.32\.0\) is not used on a node without a GPU: vLLM runs from its CPU build \S+ \(images\.vllmCpu chooses it\)": spec(
        instance={"type": "Standard_D16s_v5"}, images={"vllm": {"tag": "v0.32.0"}}
    ),
}


def _cli_and_chart_warnings(values: dict, version: str = "1.33") -> tuple[list[str], list[str]]:
    c = compile_spec(values, version)
    return c.plan.warnings, helm.notes_warnings(helm.notes(values, version))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_notes_print_the_warnings_kvgen_prints_for_every_example(example):
    version = kube_version_of(example)
    (c,) = compile_text(example.read_text(), str(example), version)
    assert helm.notes_warnings(helm.notes(load(example.read_text()), version)) == c.plan.warnings


@pytest.mark.parametrize("pattern", sorted(WARNINGS))
def test_notes_print_each_warning_as_kvgen_words_it(pattern):
    ours, theirs = _cli_and_chart_warnings(WARNINGS[pattern])
    assert any(re.fullmatch(pattern + ".*", w) for w in ours), ours
    assert theirs == ours


def test_a_default_value_written_out_is_no_unused_setting():
    """The chart cannot tell a value set to its default from an unset one, so neither warns."""
    token = {**BASE["model"], "hfTokenSecret": {"name": "hf-token", "key": "HF_TOKEN"}}  # the model is gated
    for values in (
        spec(
            model=token,
            kvCacheOffloading={"backend": "native", "cpu": "100Gi", "lmcache": {"gpuAccess": "visible-devices"}},
        ),
        spec(model=token, kvCacheOffloading={"lmcache": {"deviceClassName": "gpu.nvidia.com"}}),
    ):
        assert _cli_and_chart_warnings(values) == ([], [])


def test_the_defaults_the_chart_compares_with_are_the_specs():
    from kvgen.spec.models import LMCacheServer

    defaults = catalog.load("gpu-access.yaml")["defaults"]
    assert defaults == LMCacheServer().model_dump(by_alias=True)
    values = load((helm.CHART / "values.yaml").read_text())
    assert values["kvCacheOffloading"]["lmcache"] == defaults


# ----------------------------------------------------------------------------- problems

HUGE = {"type": "p5.48xlarge"}  # 8 GPUs: a pod of 1 takes 1/8 of the node
BAD_ARGS = [
    "--swap-space=4",
    "--dtype",
    "float7",
    "--max-num-seqs=abc",
    "--enable-prefix-caching=yes",
    "stray",
    "--max-num-sequences=4",
    "--kv-offloading-size=10",
    "--served-model-name",
    "a",
    "b",
    "-O3",
    "-n2",
    "-tp=2",
    "--max-model",
    "--kv_transfer_config.kv_connector",
    "X",
    "-cc.level=3",
    "--max-lora-rank=7",
    "--cpu-offload-gb=x",
    "--cpu-offload-gb=1_0.5e-3",
    "--num-gpu-blocks-override",
]

PROBLEMS = {
    "unknown-model-with-a-suggestion": (spec(model={"id": "meta-llama/Llama-3.1-8B-Instruc"}), "1.33"),
    "unknown-model-without-one": (spec(model={"id": "acme/secret-model-7b"}), "1.33"),
    "unknown-instance-type": (spec(instance={"type": "Standard_NC24ads_A100_V4"}), "1.33"),
    "catalog-model-missing-a-field": (
        spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "slidingLayers": 40}),
        "1.33",
    ),
    "catalog-model-above-its-limit": (
        spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "maxModelLen": 200000}),
        "1.33",
    ),
    "hybrid-false-on-a-hybrid-architecture": (
        spec(model={**INLINE_MODEL, "architecture": "NemotronHForCausalLM", "attentionLayers": 4, "hybrid": False}),
        "1.33",
    ),
    "sliding-layers-beyond-attention": (
        spec(model={**INLINE_MODEL, "slidingLayers": 40, "slidingWindow": 4096}),
        "1.33",
    ),
    "inline-node-missing-fields": (spec(instance={"gpus": 2}), "1.33"),
    "no-gpu-but-parallel": (spec(instance={"gpus": 0, "memory": "512Gi"}, parallelism={"tensor": 2}), "1.33"),
    "multi-node-name-too-long": (
        spec(
            name="a" * 46,
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
            parallelism={"tensor": 16, "nodes": 2},
        ),
        "1.33",
    ),
    "extra-args": (spec(vllm={"extraArgs": BAD_ARGS}), "1.33"),
    "extra-args-missing-values": (spec(vllm={"extraArgs": ["--served-model-name", "--port"]}), "1.33"),
    "native-cpu-tier-too-large": (spec(kvCacheOffloading={"backend": "native", "cpu": "500Gi"}), "1.33"),
    "lmcache-utilization-on-a-shared-node": (
        spec(
            instance=HUGE,
            kvCacheOffloading={"cpuMemoryUtilization": 1},
            resources={"vllm": {"requests": {"memory": "300Gi"}}},
        ),
        "1.33",
    ),
    "lmcache-cpu-cap-too-large": (spec(kvCacheOffloading={"cpu": "400Gi", "cpuMemoryUtilization": 1}), "1.33"),
    "memory-without-offloading": (
        spec(kvCacheOffloading={"enabled": False}, resources={"vllm": {"requests": {"memory": "900Gi"}}}),
        "1.33",
    ),
    "ephemeral-tiers-on-a-shared-node": (
        spec(
            instance=HUGE,
            kvCacheOffloading={
                "backend": "native",
                "cpu": "10Gi",
                "secondary": [{"fileSystem": {"emptyDir": {"size": "500Gi"}}}],
            },
        ),
        "1.33",
    ),
    "ephemeral-model-cache": (
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge"},
            parallelism={"tensor": 8},
        ),
        "1.33",
    ),
    "weights-do-not-fit-the-gpu": (
        spec(model={"id": "meta-llama/Llama-3.1-70B-Instruct"}, vllm={"gpuMemoryUtilization": 1}),
        "1.33",
    ),
    "context-too-long": (spec(model={"id": "Qwen/Qwen3-32B", "maxModelLen": 32768}), "1.33"),
    "not-even-one-block-on-the-gpu": (
        spec(model={"id": "Qwen/Qwen3-32B"}, vllm={"gpuMemoryUtilization": 0.82}),
        "1.33",
    ),
    "weights-and-context-on-the-gpu": (
        spec(model={"id": "Qwen/Qwen3-32B"}, vllm={"gpuMemoryUtilization": 0.8}),
        "1.33",
    ),
    "not-even-one-block-on-the-cpu-backend": (
        spec(model={**INLINE_MODEL, "layers": 4000}, instance={"gpus": 0, "memory": "512Gi"}),
        "1.33",
    ),
    "sidecar-below-1-29": (spec(), "1.28"),
    "dra-below-1-34": (spec(kvCacheOffloading={"lmcache": {"gpuAccess": "dra"}}), "1.33"),
    "port-taken-by-lmcache": (spec(service={"port": 5555}), "1.33"),
    "parallelism": (spec(parallelism={"tensor": 3, "nodes": 2}, replicas=2), "1.33"),
    "remote-tier": (
        spec(
            kvCacheOffloading={
                "backend": "native",
                "cpu": "20Gi",
                "remote": {"url": "rediss://valkey:6380/1", "capacity": "1Mi"},
            }
        ),
        "1.33",
    ),
    "api-server-rules": (
        spec(
            scheduling={
                "priorityClassName": "Bad_Name",
                "nodeSelector": {"bad key!": "x"},
                "tolerations": [{"key": "", "operator": "Equal", "value": "x"}],
            },
            images={"vllm": {"tag": "bad tag"}},
        ),
        "1.33",
    ),
}


@pytest.mark.parametrize("case", sorted(PROBLEMS))
def test_the_chart_fails_with_kvgens_problems_and_hints(case):
    values, version = PROBLEMS[case]
    ours = problem_set(values, version)
    assert ours, "kvgen accepts this spec"
    assert helm.problems(values, version) == ours


def test_the_problem_cases_reach_the_hints_they_are_for():
    hints = {case: {h for _p, _m, h in problem_set(*PROBLEMS[case])} for case in PROBLEMS}
    assert (
        "did you mean 'meta-llama/Llama-3.1-8B-Instruct'? if not, describe it inline (model.architecture, "
        "model.layers, model.kvHeads, model.headDim, model.weights; see `kvgen schema`) or under catalog.models in the "
        "spec or in a catalog file (kvgen --catalog FILE, helm -f FILE); `kvgen catalog models` lists the models kvgen "
        "knows" in hints["unknown-model-with-a-suggestion"]
    )
    assert (
        "did you mean 'Standard_NC24ads_A100_v4'? if not, describe the node inline (instance.gpus, instance.gpuMemory, "
        "instance.memory, instance.cpu, instance.arch, instance.localDisk) or under catalog.instances in the spec or in "
        "a catalog file (kvgen --catalog FILE, helm -f FILE); `kvgen catalog instances` lists the types kvgen knows"
        in hints["unknown-instance-type"]
    )
    assert {
        "did you mean --max-num-seqs?",
        "did you mean --max-model-len?",
        "did you mean 'float'?",
        "see `vllm serve --help`",
    } <= hints["extra-args"]


CATALOG_WORDS = sorted(catalog.models()) + sorted(catalog.instances())


@st.composite
def typos(draw):
    """A catalog key with a few characters changed, dropped or doubled (or another word), and often
    a quote or a backslash put in."""
    word = list(draw(st.sampled_from(CATALOG_WORDS)))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(word) - 1))
        op = draw(st.sampled_from(["drop", "swap", "double", "case"]))
        if op == "drop" and len(word) > 1:
            del word[i]
        elif op == "swap":
            word[i] = draw(st.sampled_from("abcxyz0129-_./'\"\\"))
        elif op == "double":
            word.insert(i, word[i])
        else:
            word[i] = word[i].swapcase()
    if draw(st.booleans()):  # a quote or a backslash, which both faces must quote alike
        word.insert(draw(st.integers(0, len(word))), draw(st.sampled_from(["'", '"', "\\"])))
    return "".join(word)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(typos())
def test_did_you_mean_is_the_same_in_the_chart(word):
    """The chart's kvgen.suggest (templates/_suggest.tpl) is difflib's choice, case-insensitive, and
    the word is quoted alike (an instance type with a quote or a backslash also fails an API-server
    rule, worded alike too)."""
    for values in (spec(model={"id": word}), spec(instance={"type": word})):
        if word in catalog.models() or word in catalog.instances():
            continue
        assert helm.problems(values) == problem_set(values)


# --------------------------------------------------------------------------- issue 23: metadata knobs

COMMON = {
    "commonLabels": {"team": "platform", "example.com/cost-center": "4711"},
    "commonAnnotations": {"example.com/owner": "platform"},
}
# between them every kind kvgen renders: Deployment, Service, ServiceAccount, PodDisruptionBudget,
# PodMonitor, ServiceMonitor, ScaledObject, HorizontalPodAutoscaler, the launcher's ConfigMap, the
# StatefulSets and headless Service of a multi-node server, a LeaderWorkerSet, a ResourceClaimTemplate
METADATA_CASES = {
    "operations": (
        "metrics-pdb-keda.yaml",
        {
            "pod": {"serviceAccount": {"create": True}},
            "metrics": {"podMonitor": True, "serviceMonitor": True, "labels": {"release": "prometheus"}},
        },
        "1.33",
    ),
    "hpa": (
        "metrics-pdb-keda.yaml",
        {
            "autoscaling": {
                "maxReplicas": 3,
                "hpa": {
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
                        }
                    ]
                },
            }
        },
        "1.33",
    ),
    "statefulsets": ("multinode-mla.yaml", {}, "1.33"),
    "leaderworkerset": ("multinode-lws.yaml", {}, "1.33"),
    "dra": ("lmcache-dra.yaml", {}, "1.34"),
}


def _metadata_values(case: str) -> tuple[dict, str]:
    example, extra, version = METADATA_CASES[case]
    values = load((EXAMPLES[0].parent / example).read_text())
    values.update(COMMON)
    values.update(extra)
    return values, version


@pytest.mark.parametrize("case", sorted(METADATA_CASES))
def test_common_labels_and_annotations_land_on_every_object_alike(case):
    """commonLabels on every object's metadata and pod template (never a selector), commonAnnotations
    on every object's metadata (not pod templates), on both faces."""
    values, version = _metadata_values(case)
    ours = compile_spec(values, version).objects
    theirs = helm.by_identity(helm.objects(values, kube_version=version))
    assert helm.by_identity(ours) == theirs
    for obj in ours:
        meta = obj["metadata"]
        assert meta["labels"]["team"] == "platform" and meta["labels"]["example.com/cost-center"] == "4711", obj["kind"]
        assert {k: meta["annotations"][k] for k in COMMON["commonAnnotations"]} == COMMON["commonAnnotations"]
        assert "cost-center" not in json.dumps(obj.get("spec", {}).get("selector", {})), obj["kind"]
        for template in _pod_templates(obj):
            assert template["metadata"]["labels"]["example.com/cost-center"] == "4711"
            assert "example.com/owner" not in template["metadata"].get("annotations", {})


def _pod_templates(obj: dict) -> list[dict]:
    spec_ = obj.get("spec", {})
    if "template" in spec_:
        return [spec_["template"]]
    lws = spec_.get("leaderWorkerTemplate")
    return [lws["leaderTemplate"], lws["workerTemplate"]] if lws else []


def test_every_kind_gets_the_common_metadata():
    kinds = set()
    for case in METADATA_CASES:
        values, version = _metadata_values(case)
        kinds |= {o["kind"] for o in compile_spec(values, version).objects}
    assert kinds == {
        "ConfigMap",
        "Deployment",
        "HorizontalPodAutoscaler",
        "LeaderWorkerSet",
        "PodDisruptionBudget",
        "PodMonitor",
        "ResourceClaimTemplate",
        "ScaledObject",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
        "StatefulSet",
    }


def test_pod_labels_and_the_services_own_metadata_win_over_the_common():
    values = spec(
        commonLabels={"team": "platform"},
        commonAnnotations={"example.com/owner": "platform"},
        pod={"labels": {"team": "ml"}},
        service={
            "type": "LoadBalancer",
            "labels": {"team": "api"},
            "annotations": {"example.com/owner": "api"},
            "loadBalancerClass": "service.k8s.aws/nlb",
            "externalTrafficPolicy": "Local",
            "loadBalancerSourceRanges": ["10.0.0.0/8"],
            "extraPorts": [
                {"name": "web", "port": 80, "targetPort": "http"},
                {"name": "alt", "port": 8001, "protocol": "UDP"},
            ],
        },
    )
    ours = helm.by_identity(compile_spec(values, "1.33").objects)
    assert ours == helm.by_identity(helm.objects(values))
    (service,) = [o for o in ours.values() if o["kind"] == "Service"]
    (deployment,) = [o for o in ours.values() if o["kind"] == "Deployment"]
    assert service["metadata"]["labels"]["team"] == "api"
    assert service["metadata"]["annotations"] == {"example.com/owner": "api"}
    assert service["spec"]["loadBalancerClass"] == "service.k8s.aws/nlb"
    assert service["spec"]["externalTrafficPolicy"] == "Local"
    assert service["spec"]["loadBalancerSourceRanges"] == ["10.0.0.0/8"]
    assert service["spec"]["ports"] == [
        {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"},
        {"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"},
        {"name": "alt", "port": 8001, "targetPort": 8001, "protocol": "UDP"},
    ]
    assert deployment["metadata"]["labels"]["team"] == "platform"
    assert deployment["spec"]["template"]["metadata"]["labels"]["team"] == "ml"
