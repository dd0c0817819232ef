"""The chart says what kvgen says: the same warnings, printed in NOTES.txt, and the same problems,
hints ("did you mean") included, for every example and for specs that trigger each warning and
each problem the chart's templates can see (Helm's schema errors for unknown keys cannot carry a
hint; the chart's own problems can)."""

from __future__ import annotations

import json
import re

import helm
import helm_python
import pytest
from conftest import BASE, EXAMPLES, KVGEN_KINDS, ROOT, compile_spec, kube_version_of, problem_set, spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from kvgen import __version__
from kvgen.app.compiler import compile_text
from kvgen.core import quantity
from kvgen.data import catalog
from kvgen.spec.models import POSITIVE_QUANTITY_PATTERN, QUANTITY_PATTERN

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
    r"Qwen/Qwen3-32B supports 40960 tokens, but one sequence of that needs .* kvgen passes --max-model-len=33600": spec(
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
    r"images\.lmcache is not used with gpuAccess in-container: the LMCache server runs inside the vLLM container \(ghcr\.io/kvgen-dev/vllm-lmcache:\S+\)": spec(
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
    # issue 23: extraObjects of a kind kvgen has no schema for
    r"extraObjects\[1\]: example\.com/v1 Widget is not validated: kvgen has no schema for it": spec(
        extraObjects=[
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"a": "b"}},
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}},
        ]
    ),
    # issue 23: a pull policy for an image the node does not run
    r"images\.vllm\.pullPolicy is not used on a node without a GPU: vLLM runs from its CPU build registry\.example\.com/q9t5s3a7/vllm-cpu-release-repo:v0\.33\.0 \(images\.vllmCpu\.pullPolicy sets its pull policy\)": spec(
        instance={"type": "Standard_D16s_v5"},
        images={"vllm": {"pullPolicy": "Always"}, "registry": "registry.example.com"},
    ),
}


def _cli_and_chart_warnings(values: dict, version: str = "1.33") -> tuple[list[str], list[str]]:
    c = compile_spec(values, version)
    return c.plan.warnings, helm.notes_warnings(helm.notes(values, version))


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_notes_print_the_warnings_kvgen_prints_for_every_example(example):
    version = kube_version_of(example)
    (c,) = compile_text(example.read_text(), str(example), version)
    assert helm.notes_warnings(helm.notes(load(example.read_text()), version)) == c.plan.warnings


@pytest.mark.heavy
@pytest.mark.parametrize("pattern", sorted(WARNINGS))
def test_notes_print_each_warning_as_kvgen_words_it(pattern):
    ours, theirs = _cli_and_chart_warnings(WARNINGS[pattern])
    assert any(re.fullmatch(pattern + ".*", w) for w in ours), ours
    assert theirs == ours


@pytest.mark.heavy
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
    # issue 33: the faces disagreed
    "kube-version-without-schemas": (spec(kubeVersion="1.99"), "1.33"),
    "kube-version-too-old": (spec(kubeVersion="1.27"), "1.33"),
    "empty-checkpoint-quantization": (spec(model={"id": "Qwen/Qwen3-8B", "quantization": ""}), "1.33"),
    "context-too-long": (spec(model={"id": "Qwen/Qwen3-32B", "maxModelLen": 36864}), "1.33"),
    "not-even-one-block-on-the-gpu": (  # 1024 sequences: the sampler's logits and the penalties' counts
        spec(model={"id": "Qwen/Qwen3-32B"}, vllm={"gpuMemoryUtilization": 0.82, "extraArgs": ["--max-num-seqs=1024"]}),
        "1.33",
    ),
    "weights-and-context-on-the-gpu": (
        spec(model={"id": "Qwen/Qwen3-32B"}, vllm={"gpuMemoryUtilization": 0.8}),
        "1.33",
    ),
    "not-even-one-block-on-the-cpu-backend": (
        # 512 MiB a token (128 KV heads of 1024 over 1024 layers): 16 tokens need 8 GiB, the CPU backend has 4
        spec(
            model={**INLINE_MODEL, "layers": 1024, "kvHeads": 128, "headDim": 1024},
            instance={"gpus": 0, "memory": "512Gi"},
        ),
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
    "extra-objects": (
        spec(
            namespace="llm",
            extraObjects=[
                {"kind": "NetworkPolicy", "metadata": {}},
                {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}},
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "other"}},
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "other"}},
            ],
        ),
        "1.33",
    ),
    "extra-objects-kvgens-own": (
        spec(extraObjects=[{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "demo"}}]),
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


@pytest.mark.heavy
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
    assert (
        "create the Secret outside kvgen (kubectl, External Secrets, Sealed Secrets) and reference it"
        in hints["extra-objects"]
    )
    assert "remove one of them, or rename it" in hints["extra-objects"]
    assert (
        "rename it, or set what you need through the spec's own fields (see `kvgen schema`)"
        in (hints["extra-objects-kvgens-own"])
    )


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


@pytest.mark.heavy
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


# ----------------------------------------------------------------------------- issue 23: the knobs a chart user expects

REGISTRY = "mirror.example.com:5000/hub"
MULTI_NODE = {
    "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
    "instance": {"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    "parallelism": {"tensor": 16, "nodes": 2},
}


def _pods(objs: list[dict]) -> list[dict]:
    """Every pod spec of the objects: a Deployment's or StatefulSet's template, a LeaderWorkerSet's two."""
    out = []
    for o in objs:
        spec_ = o.get("spec", {})
        if "template" in spec_:
            out.append(spec_["template"]["spec"])
        if "leaderWorkerTemplate" in spec_:
            lwt = spec_["leaderWorkerTemplate"]
            out += [lwt["leaderTemplate"]["spec"], lwt["workerTemplate"]["spec"]]
    return out


def _containers(objs: list[dict]) -> dict[str, dict]:
    return {c["name"]: c for p in _pods(objs) for c in [*p.get("initContainers", []), *p["containers"]]}


# each knob, a spec setting it, and what kvgen (and so the chart) renders for it
KNOBS = {
    "termination-grace-period": (
        spec(pod={"terminationGracePeriodSeconds": 120}),
        lambda objs: (
            all(p["terminationGracePeriodSeconds"] == 120 for p in _pods(objs))
            # the launcher stops what is left before the kubelet does: 120 - wiring.launcher.graceMarginSeconds
            and "--grace-period=115" in _containers(objs)["lmcache-mp-server"]["args"]
        ),
    ),
    "termination-grace-period-zero-in-container": (
        spec(pod={"terminationGracePeriodSeconds": 0}, kvCacheOffloading=IN_CONTAINER),
        lambda objs: (
            _pods(objs)[0]["terminationGracePeriodSeconds"] == 0
            and "--grace-period=1" in _containers(objs)["vllm"]["args"]
        ),
    ),
    "termination-grace-period-multi-node": (
        {**spec(**MULTI_NODE), "pod": {"terminationGracePeriodSeconds": 90}},
        lambda objs: [p["terminationGracePeriodSeconds"] for p in _pods(objs)] == [90, 90],
    ),
    "strategy-rolling-update": (
        spec(deployment={"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}}),
        lambda objs: (
            objs_of(objs, "Deployment")["spec"]["strategy"]
            == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}
        ),
    ),
    "strategy-rolling-update-one-field": (  # the other field keeps kvgen's default (maxSurge 0)
        spec(deployment={"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}}}),
        lambda objs: (
            objs_of(objs, "Deployment")["spec"]["strategy"]
            == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "50%"}}
        ),
    ),
    "strategy-recreate": (
        spec(deployment={"strategy": {"type": "Recreate"}}),
        lambda objs: objs_of(objs, "Deployment")["spec"]["strategy"] == {"type": "Recreate"},
    ),
    "scheduler-name": (
        spec(scheduling={"schedulerName": "volcano"}),
        lambda objs: [p["schedulerName"] for p in _pods(objs)] == ["volcano"],
    ),
    "scheduler-name-on-every-rank": (
        {
            **spec(**MULTI_NODE),
            "multiNode": {"engine": "leaderworkerset"},
            "scheduling": {"schedulerName": "kai-scheduler"},
        },
        lambda objs: [p["schedulerName"] for p in _pods(objs)] == ["kai-scheduler", "kai-scheduler"],
    ),
    "env-from": (
        spec(
            vllm={
                "envFrom": [
                    {"configMapRef": {"name": "vllm-tuning"}},
                    {"secretRef": {"name": "vllm-extra", "optional": True}, "prefix": "EXTRA_"},
                ]
            }
        ),
        lambda objs: (
            _containers(objs)["vllm"]["envFrom"]
            == [
                {"configMapRef": {"name": "vllm-tuning"}},
                {"secretRef": {"name": "vllm-extra", "optional": True}, "prefix": "EXTRA_"},
            ]
            and "envFrom" not in _containers(objs)["lmcache-mp-server"]
        ),
    ),
    "probe-initial-delay": (
        spec(probes={"startup": {"initialDelaySeconds": 30}, "readiness": {"initialDelaySeconds": 0}}),
        lambda objs: (
            _containers(objs)["vllm"]["startupProbe"]["initialDelaySeconds"] == 30
            and _containers(objs)["vllm"]["readinessProbe"]["initialDelaySeconds"] == 0
            and "initialDelaySeconds" not in _containers(objs)["vllm"]["livenessProbe"]
            # the startup budget starts after the delay: the Deployment's deadline grows by it
            and objs_of(objs, "Deployment")["spec"]["progressDeadlineSeconds"]
            == objs_of(helm.objects(spec()), "Deployment")["spec"]["progressDeadlineSeconds"] + 30
        ),
    ),
    "pull-policy": (
        spec(images={"vllm": {"pullPolicy": "Always"}}),
        lambda objs: (
            {c["name"]: c["imagePullPolicy"] for c in _containers(objs).values()}
            == {"vllm": "Always", "lmcache-mp-server": "Always"}
        ),  # the sidecar runs the vLLM image
    ),
    "pull-policy-lmcache-own": (
        spec(images={"vllm": {"pullPolicy": "IfNotPresent"}, "lmcache": {"pullPolicy": "Never"}}),
        lambda objs: (
            {c["name"]: c["imagePullPolicy"] for c in _containers(objs).values()}
            == {"vllm": "IfNotPresent", "lmcache-mp-server": "Never"}
        ),
    ),
    "pull-policy-cpu-node": (
        spec(instance={"type": "Standard_D16s_v5"}, images={"vllmCpu": {"pullPolicy": "Always"}}),
        lambda objs: _containers(objs)["vllm"]["imagePullPolicy"] == "Always",
    ),
    "registry-docker-hub": (
        spec(images={"registry": REGISTRY}, kvCacheOffloading={"backend": "native", "cpu": "10Gi"}),
        lambda objs: _containers(objs)["vllm"]["image"] == f"{REGISTRY}/vllm/vllm-openai:v0.33.0",  # prefixed
    ),
    "registry": (
        spec(images={"registry": REGISTRY, "lmcache": {"repository": "ghcr.io/kvgen-dev/vllm-lmcache"}}),
        lambda objs: (
            {c["name"]: c["image"] for c in _containers(objs).values()}
            == {
                "vllm": f"{REGISTRY}/kvgen-dev/vllm-lmcache:{__version__}",  # a registry host: replaced
                "lmcache-mp-server": f"{REGISTRY}/kvgen-dev/vllm-lmcache:{__version__}",
            }
        ),
    ),
    "registry-cpu-node": (
        spec(instance={"type": "Standard_D16s_v5"}, images={"registry": "localhost:5000"}),
        lambda objs: _containers(objs)["vllm"]["image"] == "localhost:5000/q9t5s3a7/vllm-cpu-release-repo:v0.33.0",
    ),
}


def objs_of(objs: list[dict], kind: str) -> dict:
    (found,) = [o for o in objs if o["kind"] == kind]
    return found


def test_no_knob_changes_todays_output_unless_set():
    """Unset, every knob renders what kvgen rendered before it: the Deployment's strategy is
    RollingUpdate with maxSurge 0 and maxUnavailable 1, and no new field appears."""
    objs = compile_spec(spec(), "1.33").objects
    assert objs_of(objs, "Deployment")["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
    }
    (pod,) = _pods(objs)
    assert not {"schedulerName", "terminationGracePeriodSeconds"} & set(pod)
    for c in _containers(objs).values():
        assert not {"imagePullPolicy", "envFrom"} & set(c)
        assert not any(a.startswith("--grace-period") for a in c["args"])


@pytest.mark.heavy
@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_each_knob_renders_alike_on_both_faces(knob):
    values, rendered = KNOBS[knob]
    c = compile_spec(values, "1.33")
    theirs, context = helm.objects_and_context(values)
    assert helm.first_difference(c.context, context) is None, helm.first_difference(c.context, context)
    assert helm.by_identity(theirs) == helm.by_identity(c.objects)
    assert rendered(c.objects), f"{knob}: kvgen does not render it as expected"


@pytest.mark.heavy
def test_helm_global_image_registry_is_images_registry():
    """global.imageRegistry (an umbrella chart's global value) is the chart's spelling of
    images.registry: `helm template --set global.imageRegistry=R` renders what `kvgen render` does
    with images.registry R, the `helm test` pod's image too; images.registry wins when both are set."""
    ours = helm.by_identity(compile_spec(spec(images={"registry": REGISTRY}), "1.33").objects)
    assert helm.by_identity(helm.objects({**spec(), "global": {"imageRegistry": REGISTRY}})) == ours
    both = {**spec(images={"registry": REGISTRY}), "global": {"imageRegistry": "other.example.com"}}
    assert helm.by_identity(helm.objects(both)) == ours
    (test_pod,) = helm.hook_objects({**spec(), "global": {"imageRegistry": REGISTRY}})
    assert test_pod["spec"]["containers"][0]["image"] == f"{REGISTRY}/curlimages/curl:8.11.1"


KNOB_PROBLEMS = {
    "strategy-on-statefulsets": spec(**MULTI_NODE, deployment={"strategy": {"type": "Recreate"}}),
    "strategy-on-a-leaderworkerset": spec(
        **MULTI_NODE, multiNode={"engine": "leaderworkerset"}, deployment={"strategy": {"type": "Recreate"}}
    ),
    "strategy-recreate-with-rolling-update": spec(
        deployment={"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}
    ),
    "strategy-both-zero": spec(deployment={"strategy": {"rollingUpdate": {"maxUnavailable": "0%"}}}),
    "strategy-far-above-100-percent": spec(  # beyond int64: the chart counts digits
        deployment={"strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "0" + "9" * 25 + "%"}}}
    ),
    "strategy-above-100-percent": spec(
        deployment={"strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "101%"}}}
    ),
    "scheduler-name": spec(scheduling={"schedulerName": "Volcano_Scheduler"}),
    "env-from-names": spec(
        vllm={"envFrom": [{"configMapRef": {"name": "Tuning"}}, {"secretRef": {"name": "a_b"}, "prefix": "X_"}]}
    ),
    "registry": spec(images={"registry": "mirror"}),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(KNOB_PROBLEMS))
def test_each_knobs_bad_value_is_the_same_problem_on_both_faces(case):
    values = KNOB_PROBLEMS[case]
    ours = problem_set(values)
    assert ours, "kvgen accepts this spec"
    assert all(
        path.startswith(("deployment.strategy", "scheduling.", "vllm.envFrom", "images.")) for path, _m, _h in ours
    )
    assert helm.problems(values) == ours


@pytest.mark.heavy
def test_global_image_registry_is_checked_as_images_registry():
    ours = {
        (p.replace("images.registry", "global.imageRegistry"), m, h)
        for p, m, h in problem_set(KNOB_PROBLEMS["registry"])
    }
    assert helm.problems({**spec(), "global": {"imageRegistry": "mirror"}}) == ours
    assert helm.problems({**spec(), "global": {"imageRegistry": 5000}}) == {
        (
            "global.imageRegistry",
            "5000 is not a string; it is the chart's spelling of images.registry, the registry of every image",
            "write the registry's host, e.g. registry.example.com",
        )
    }


@pytest.mark.heavy
@pytest.mark.parametrize(
    "values",
    [
        spec(pod={"terminationGracePeriodSeconds": -1}),
        spec(pod={"terminationGracePeriodSeconds": 3601}),
        spec(probes={"liveness": {"initialDelaySeconds": -1}}),
        spec(images={"vllm": {"pullPolicy": "Sometimes"}}),
        spec(deployment={"strategy": {"type": "OnDelete"}}),
        spec(deployment={"strategy": {"rollingUpdate": {"maxSurge": "25"}}}),
        spec(deployment={"strategy": {"rollingUpdate": {"maxSurge": -1}}}),
        spec(vllm={"envFrom": [{"prefix": "X_"}]}),
        spec(vllm={"envFrom": [{"configMapRef": {"name": "a"}, "secretRef": {"name": "b"}}]}),
        spec(vllm={"envFrom": [{"configMapRef": {"name": "a"}, "prefix": "1X"}]}),
    ],
    ids=lambda v: json.dumps({k: x for k, x in v.items() if k not in spec()}),
)
def test_each_knobs_schema_bounds_refuse_alike(values):
    """Types, bounds, enumerations and unknown keys: kvgen's schema and the chart refuse the same values. A bound,
    a length, a pattern or a set of literals is the templates' check (files/spec-checks.json), in kvgen's words
    word for word; a type or "exactly one of" is Helm's schema's, in its words at the value's path."""
    found = problem_set(values)
    assert found and not any(m.startswith("unknown key") for _p, m, _h in found), found
    kvgen_paths = {path for path, _m, _h in found}
    try:
        theirs = helm.problems(values)
    except helm_python.HelmValuesError as exc:
        err = exc
    else:
        assert theirs == found
        return
    for path in kvgen_paths:  # Helm names the value's path, or its parent's (JSON pointers), in its words
        parent = "/" + re.sub(r"\[(\d+)\]", r".\1", path).rsplit(".", 1)[0].replace(".", "/")
        assert f"at '{parent}" in str(err), (path, str(err))


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            spec(deployment={"strategy": {"rollingUpdate": {"maxSurge": 1, "partition": 0}}}),
            (
                "deployment.strategy.rollingUpdate.partition",
                "unknown key 'partition'",
                "allowed keys: maxSurge, maxUnavailable",
            ),
        ),
        (
            spec(vllm={"envFrom": [{"configMapRef": {"name": "a", "key": "b"}}]}),
            ("vllm.envFrom[0].configMapRef.key", "unknown key 'key'", "allowed keys: name, optional"),
        ),
    ],
    ids=["strategy", "envFrom"],
)
def test_an_unknown_key_of_a_knob_is_the_same_problem_on_both_faces(values, expected):
    """An unknown key of kvgen's own objects is the templates' problem in the chart (templates/_keys.tpl),
    in kvgen's words: no longer Helm's schema error."""
    assert problem_set(values) == {expected}
    assert helm.problems(values) == {expected}


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
    "routing-gateway": ("routing-gateway.yaml", {}, "1.33"),
    "routing-istio": ("kserve-qwen2-7b.yaml", {}, "1.33"),
    "routing-prefill-decode": ("routing-prefill-decode.yaml", {}, "1.33"),
    "routing-gke": (
        "routing-gateway.yaml",
        {"routing": {"mode": "gateway", "gateway": {"parentRefs": [{"name": "gke-gateway"}], "provider": "gke"}}},
        "1.33",
    ),
}


def _metadata_values(case: str) -> tuple[dict, str]:
    example, extra, version = METADATA_CASES[case]
    values = load((EXAMPLES[0].parent / example).read_text())
    values.update(COMMON)
    values.update(extra)
    return values, version


@pytest.mark.heavy
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
    assert kinds == KVGEN_KINDS


@pytest.mark.heavy
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


def test_a_claim_templates_access_modes_list_renders_on_both_faces():
    """Issue 33: the CLI refused every accessModes list ("Input should be a valid tuple": a strict tuple field),
    the chart rendered it."""
    values = spec(
        model={"id": "Qwen/Qwen3-8B", "cache": {"claimTemplate": {"accessModes": ["ReadWriteOnce"]}}},
        instance={"type": "Standard_NC24ads_A100_v4"},
    )
    ours = helm.by_identity(compile_spec(values).objects)
    assert helm.by_identity(helm.objects(values)) == ours
    (sts,) = [o for (kind, _n), o in ours.items() if kind == "StatefulSet"]
    assert sts["spec"]["volumeClaimTemplates"][0]["spec"]["accessModes"] == ["ReadWriteOnce"]


def test_the_charts_supported_kubernetes_versions_are_kvgens():
    """files/kubernetes.json supported (the chart's list) is the versions kvgen has schemas for."""
    import json

    from kvgen.data import kube

    supported = json.loads((ROOT / "charts" / "kvgen" / "files" / "kubernetes.json").read_text())["supported"]
    assert supported == [v for v in kube.shipped_versions() if tuple(map(int, v.split("."))) >= kube.SUPPORTED_MIN]


# ----------------------------------------------------------------------------- sizes written as numbers


@pytest.mark.heavy
@pytest.mark.parametrize("size", [107374182400, 107374182400.0], ids=["int", "whole-float"])
def test_a_size_written_as_a_number_renders_as_kvgens_text_on_both_faces(size):
    """Found by the fuzzer (issue 33): an integer emptyDir size rendered as a string on kvgen and as a number
    on the chart (Helm reads the values' numbers as float64); a whole float, an integer to JSON Schema and so
    to the chart, was refused by kvgen."""
    values = spec(
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "cache": {"claimTemplate": {"size": size}}},
        kvCacheOffloading={
            "backend": "native",
            "cpu": "10Gi",
            "secondary": [{"fileSystem": {"emptyDir": {"size": size}}}],
        },
    )
    ours = compile_spec(values).objects
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(ours)
    (tier,) = [v for p in _pods(ours) for v in p["volumes"] if v["name"] == "kv-cache-secondary-0"]
    assert tier["emptyDir"]["sizeLimit"] == "107374182400"
    (claim,) = [t for o in ours for t in o["spec"].get("volumeClaimTemplates", [])]
    assert claim["spec"]["resources"]["requests"]["storage"] == "107374182400"


@pytest.mark.heavy
@given(st.from_regex(QUANTITY_PATTERN, fullmatch=True))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_schemas_positive_size_pattern_is_kvgens_greater_than_zero(text):
    """A Size's schema pattern (what the chart's values schema refuses) accepts exactly the sizes kvgen reads as
    at least one byte."""
    assert (re.fullmatch(POSITIVE_QUANTITY_PATTERN, text) is not None) == (quantity.parse(text) > 0)


@pytest.mark.parametrize("zero", ["0", "0.0Gi", "000Mi"])
def test_a_zero_size_is_refused_on_both_faces(zero):
    """Found by the fuzzer (issue 33): instance.ephemeralStorage "0" on a catalog instance was refused by kvgen
    ("must be greater than zero") and rendered by the chart, whose schema pattern allowed any number."""
    values = spec(instance={"type": "Standard_NC24ads_A100_v4", "ephemeralStorage": zero})
    assert problem_set(values) == {("instance.ephemeralStorage", "must be greater than zero", None)}
    with pytest.raises(helm_python.HelmValuesError, match="/instance/ephemeralStorage"):
        helm.problems(values)


# ----------------------------------------------------------------------------- null where values.yaml has a value


def _default_paths(tree: dict, prefix: tuple = ()) -> list[tuple]:
    out = []
    for key, sub in tree.items():
        out.append((*prefix, key))
        out += _default_paths(sub, (*prefix, key))
    return out


DEFAULT_PATHS = _default_paths(json.loads((ROOT / "charts/kvgen/files/values-defaults.json").read_text()))


def test_the_defaults_tree_is_the_charts_values_yaml():
    from kvgen.spec.schema import values_defaults_text

    assert (ROOT / "charts/kvgen/files/values-defaults.json").read_text() == values_defaults_text()
    assert ("replicas",) in DEFAULT_PATHS and ("kvCacheOffloading", "lmcache", "gpuAccess") in DEFAULT_PATHS


@pytest.mark.heavy
@pytest.mark.parametrize("path", DEFAULT_PATHS, ids=[".".join(p) for p in DEFAULT_PATHS])
def test_a_null_where_values_yaml_has_a_value_is_refused_alike(path):
    """Found by the fuzzer (issue 33): `replicas: null` was refused by kvgen (not an integer) and rendered by the
    chart, as Helm deletes a key set to null where values.yaml has one; `vllm: null` crashed the chart."""
    values = spec()
    node = values
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = None
    dotted = ".".join(path)
    expected = {
        (
            dotted,
            "null removes the default: Helm deletes a key set to null where the chart's values.yaml has one, and "
            "the chart would render without it",
            f"leave {dotted} out for its default, or give it a value",
        )
    }
    assert problem_set(values) == expected
    assert helm.problems(values) == expected
