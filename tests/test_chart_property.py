"""Property: for any valid spec, `helm template` makes the same plan document and lays it out as the same
context as `kvgen render` (the objects are laid out from the context by templates that exist once: the
chart's, translated; tests/test_chart.py compares them for every example), and for any invalid one both
refuse it, in the same words.

The specs are drawn valid by construction (tests/spec_strategies.py: the draw is repaired, not
filtered), across backends, GPU access modes, disk tiers, parallelism, catalog and inline
instances, catalog models, explicit resources and images, for Kubernetes 1.33 and 1.34: the
budget is spent comparing renders, and a drift of the rules that makes the draw mostly invalid
fails the test instead of slowing it. Refusals are their own tests: one broken field per drawn
spec (BREAKAGES), and values of the wrong type (``"2"`` for 2, ``true`` for 1, ``" 10Gi"``).
Budgets: tests/budget.py (KVGEN_HYPOTHESIS=deep for ten times as many draws, fresh each run).
"""

from __future__ import annotations

import copy
import re

import helm
import helm_python
import pytest
from budget import DERANDOMIZE, examples
from conftest import dump, problem_triples
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from parity import CONTEXT, PLAN, empty_values
from spec_strategies import BREAKAGES, kube_version_for, repair, specs

from kvgen.app.compiler import compile_text
from kvgen.core import quantity
from kvgen.core.errors import SpecError
from kvgen.data import catalog
from kvgen.plan.document import document


def refused_alike(exc: SpecError, spec: dict, kube_version: str = "1.33") -> None:
    """kvgen refused ``spec`` (``exc``): Helm refuses it too and, where the chart's templates refuse
    it, with kvgen's problems word for word: each (path, message, hint), values quoted alike. (Where
    Helm's values schema refuses it first, its validator words the errors, not the chart.)"""
    text = dump(spec)
    try:
        theirs = helm.problems(spec, kube_version=kube_version)
    except helm_python.HelmValuesError:
        return
    assert theirs, f"kvgen rejects this spec but Helm renders it (Kubernetes {kube_version}):\n{text}"
    ours = problem_triples(exc)
    assert theirs == ours, (
        f"the chart words the problems otherwise (Kubernetes {kube_version}):\n{text}\n"
        f"kvgen only: {sorted(ours - theirs)}\nthe chart only: {sorted(theirs - ours)}"
    )


def worded_alike(spec: dict, kube_version: str = "1.33") -> None:
    """kvgen and Helm both refuse ``spec`` with the same problems (refused_alike), or both render it
    with the same warnings (kvgen's Plan.warnings, the chart's NOTES.txt)."""
    text = dump(spec)
    try:
        (compiled,) = compile_text(text, "spec.yaml", kube_version)
    except SpecError as exc:
        refused_alike(exc, spec, kube_version)
        return
    try:
        theirs = helm.notes_warnings(helm.notes(spec, kube_version=kube_version))
    except (helm_python.HelmValuesError, helm_python.HelmRenderError) as err:
        raise AssertionError(f"kvgen renders this spec but Helm refuses it:\n{text}\n{err}") from None
    assert theirs == compiled.plan.warnings, f"NOTES.txt's warnings are not kvgen's:\n{text}"


def same_render(spec: dict, kube_version: str) -> bool:
    """`kvgen render --kube-version V` and `helm template --kube-version V` make the same plan document, lay
    it out as the same context and warn alike; or kvgen refuses ``spec`` and Helm too, in kvgen's words (then
    False). The objects are laid out from the context by templates that exist once (the chart's, translated);
    tests/test_chart.py compares them for every example."""
    text = dump(spec)
    try:
        compiled = compile_text(text, "spec.yaml", kube_version)
    except SpecError as exc:
        refused_alike(exc, spec, kube_version)
        return False
    their_context, their_plan, their_warnings = helm.context_plan_and_warnings(
        spec, namespace="default", kube_version=kube_version
    )
    (our_plan,) = [document(r.plan) for r in compiled]
    difference = helm.first_difference(our_plan, their_plan)  # the decisions first
    assert difference is None, f"plan: {difference}\n{text}"
    PLAN.validate_python(our_plan)
    (our_context,) = [r.context for r in compiled]
    difference = helm.first_difference(our_context, their_context)  # the layout, translated
    assert difference is None, f"{difference}\n{text}"
    (our_warnings,) = [r.plan.warnings for r in compiled]
    assert their_warnings == our_warnings, f"NOTES.txt's warnings are not kvgen's:\n{text}"
    CONTEXT.validate_python(our_context)  # the typed contract, absent values left out
    assert empty_values(our_context) == [], text
    return True


INVALID_SHARE = 0.1  # of the draws: more, and the strategy's repair has fallen behind kvgen's rules


def compare_drawn(strategy, budget: int) -> None:
    """same_render for ``budget`` drawn specs; fewer than INVALID_SHARE of the draws may be refused."""
    seen = {"valid": 0, "refused": 0}

    @settings(
        max_examples=examples(budget),
        deadline=None,
        derandomize=DERANDOMIZE,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(strategy, st.sampled_from(["1.33", "1.34"]))
    def check(spec, drawn_version):
        valid = same_render(spec, kube_version_for(spec, drawn_version))
        seen["valid" if valid else "refused"] += 1
        assume(valid)

    check()
    drawn = seen["valid"] + seen["refused"]
    assert seen["refused"] <= INVALID_SHARE * drawn, (
        f"{seen['refused']} of {drawn} drawn specs were refused: repair the draw (tests/spec_strategies.py repair)"
    )


@pytest.mark.heavy
def test_helm_template_equals_kvgen_render():
    compare_drawn(specs(), 200)


NON_HYBRID = sorted(k for k, m in catalog.models().items() if not m.get("hybrid"))


@st.composite
def lmcache_specs(draw):
    """A drawn spec with the LMCache server on (a non-hybrid model on a GPU node, no rule that
    turns offloading off) in one of the GPU access modes."""
    spec = draw(specs())
    spec["model"] = {**spec["model"], "id": draw(st.sampled_from(NON_HYBRID))}
    instance = {k: v for k, v in spec["instance"].items() if k != "mig"}
    row = catalog.instances().get(instance.get("type", ""))
    if row and row.get("gpus") and quantity.to_bytes(row["memory"]) < 64 * 1024**3:
        # a small GPU node (g4dn.xlarge: 16 GiB) has no room for an LMCache server beside vLLM: a larger one
        instance = {"type": "Standard_NC24ads_A100_v4"}
    if instance.get("type") in catalog.instances() and not catalog.instances()[instance["type"]].get("gpus"):
        # a CPU type made a GPU node: another node (a catalog type's GPU count cannot change), described inline
        instance = {"gpus": 0, "memory": catalog.instances()[instance["type"]]["memory"]}
    if instance.get("gpus") == 0:
        instance.update(gpus=draw(st.sampled_from([1, 2, 8])), gpuMemory="80Gi")
    spec["instance"] = instance
    spec["parallelism"] = {**spec["parallelism"], "data": 1, "pipeline": 1}
    spec["disaggregation"] = {"role": "none"}
    offload = {k: v for k, v in spec["kvCacheOffloading"].items() if k not in ("enabled", "lmcache")}
    offload["backend"] = "lmcache"
    offload["lmcache"] = {"gpuAccess": draw(st.sampled_from(["visible-devices", "dra", "in-container"]))}
    if draw(st.booleans()):
        offload["lmcache"]["deviceClassName"] = "a100.gpu.example.com"
    if offload.get("cpuMemoryUtilization") == 0.0:
        offload.pop("cpuMemoryUtilization")
    spec["kvCacheOffloading"] = offload
    return repair(spec, NON_HYBRID)


@pytest.mark.heavy
def test_every_gpu_access_mode_renders_the_same_in_helm():
    """The draw above mostly turns the LMCache server off; here it is on, in each mode."""
    compare_drawn(lmcache_specs(), 40)


# ----------------------------------------------------------------------------- rejections agree too

# Values of the wrong type, or nearly right: the CLI must refuse exactly what Helm's values schema
# refuses (it used to coerce "2" to 2, true to 1 and " 10Gi" to 10Gi), and accept what it accepts
# (a whole float such as 2.0 is an integer to JSON Schema).
CONFUSIONS = [
    (("model", "maxModelLen"), True),
    (("model", "maxModelLen"), "4096"),
    (("model", "maxModelLen"), 4096.0),
    (("model", "maxModelLen"), 4096.5),
    (("model", "mla"), "true"),
    (("model", "id"), 7),
    (("replicas",), False),
    (("replicas",), "2"),
    (("replicas",), 1.0),
    (("parallelism", "tensor"), "1"),
    (("parallelism", "tensor"), True),
    (("parallelism", "data"), 1.0),
    (("kvCacheOffloading", "enabled"), "1"),
    (("kvCacheOffloading", "enabled"), 1),
    (("kvCacheOffloading", "enabled"), "yes"),
    (("kvCacheOffloading", "cpu"), " 10Gi"),
    (("kvCacheOffloading", "cpu"), "10Gi "),
    (("kvCacheOffloading", "cpu"), True),
    (("kvCacheOffloading", "cpu"), 10737418240.0),
    (("kvCacheOffloading", "cpu"), 10737418240),
    (("kvCacheOffloading", "cpuMemoryUtilization"), "0.5"),
    (("kvCacheOffloading", "cpuMemoryUtilization"), True),
    (("kvCacheOffloading", "cpuMemoryUtilization"), 1),
    (("kvCacheOffloading", "allowHybrid"), "false"),
    (("kvCacheOffloading", "evictionPolicy"), "LRU"),
    (("kvCacheOffloading", "secondary"), {"fileSystem": {"emptyDir": {"size": "1Gi"}}}),
    (("vllm", "gpuMemoryUtilization"), "0.9"),
    (("vllm", "gpuMemoryUtilization"), 1),
    (("vllm", "extraArgs"), "--max-num-seqs=64"),
    (("vllm", "extraArgs"), [64]),
    (("vllm", "env"), [{"name": "X", "value": 1}]),
    (("vllm", "env"), [{"name": "X", "value": True}]),
    (("service", "port"), "8000"),
    (("service", "port"), 8000.0),
    (("service", "type"), "loadbalancer"),
    (("images", "vllm", "tag"), 1.0),
    (("images", "vllm", "tag"), 33),
    (("scheduling", "nodeSelector"), {"pool": 1}),
    (("scheduling", "nodeSelector"), {"pool": True}),
    (("scheduling", "priorityClassName"), 5),
    (("resources", "vllm", "requests", "cpu"), 0),
    (("resources", "vllm", "requests", "cpu"), "4 "),
    (("resources", "vllm", "requests", "cpu"), 4.0),
    (("resources", "vllm", "limits", "memory"), "64GiB"),
    (("resources", "shm"), "16Gi "),
    (("resources", "shm"), 17179869184.0),
    (("name",), 123),
    (("namespace",), True),
]


def confused(spec: dict, path: tuple, value) -> dict:
    out = copy.deepcopy(spec)
    node = out
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    return out


def agree(spec: dict) -> None:
    """kvgen and Helm both refuse the spec, in the same words (refused_alike), or both make the same plan,
    laid out as the same context, with the same warnings."""
    text = dump(spec)
    try:
        (compiled,) = compile_text(text, "spec.yaml")
    except SpecError as exc:
        refused_alike(exc, spec)
        return
    try:
        their_context, their_plan, their_warnings = helm.context_plan_and_warnings(spec, namespace="default")
    except (helm_python.HelmValuesError, helm_python.HelmRenderError) as exc:
        raise AssertionError(f"kvgen renders and Helm refuses:\n{text}\n{exc}") from None
    assert helm.first_difference(document(compiled.plan), their_plan) is None, text
    assert helm.first_difference(compiled.context, their_context) is None, text
    assert their_warnings == compiled.plan.warnings, f"NOTES.txt's warnings are not kvgen's:\n{text}"


BASE_SPEC = {
    "name": "demo",
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "instance": {"type": "Standard_NC24ads_A100_v4"},
    "kvCacheOffloading": {"backend": "native", "cpu": "10Gi"},
}


@pytest.mark.heavy
@pytest.mark.parametrize("path,value", CONFUSIONS, ids=[f"{'.'.join(p)}={v!r}" for p, v in CONFUSIONS])
def test_kvgen_and_helm_agree_on_each_type_confusion(path, value):
    agree(confused(BASE_SPEC, path, value))


@pytest.mark.heavy
@settings(
    max_examples=examples(50), deadline=None, derandomize=DERANDOMIZE, suppress_health_check=[HealthCheck.too_slow]
)
@given(specs(), st.lists(st.sampled_from(CONFUSIONS), min_size=1, max_size=2))
def test_kvgen_and_helm_agree_on_generated_specs_with_type_confusions(spec, confusions):
    for path, value in confusions:
        spec = confused(spec, path, value)
    agree(spec)


# ----------------------------------------------------------------------------- values quoted alike

# A value the user wrote is quoted in a message by one rule on both faces (kvgen.core.errors.quoted,
# the chart's kvgen.quoted: Python's repr of a printable string), so a value holding a quote or a
# backslash is worded the same: "v1'x", 'say "hi"', 'a\\b'. Each case puts such a word into one
# field of a drawn spec; kvgen must refuse it and the chart's templates too, in the same words.
QUOTING_MARKS = ["'", '"', "\\"]


@st.composite
def quoting_words(draw):
    """A short word with one or more quotes (' and ") or backslashes in it."""
    marks = draw(st.lists(st.sampled_from(QUOTING_MARKS), min_size=1, max_size=3))
    parts = [draw(st.text(alphabet="abz09-./", max_size=4)) for _ in range(len(marks) + 1)]
    return parts[0] + "".join(m + p for m, p in zip(marks, parts[1:], strict=True))


def _at(spec: dict, *path: str) -> dict:
    node = spec
    for key in path:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    return node


def _secondary(spec: dict, tier: dict) -> None:
    _at(spec, "kvCacheOffloading").setdefault("secondary", []).append({"fileSystem": {"pvc": tier}})


# field -> how the word goes into a spec
QUOTING_FIELDS = {
    "model.id": lambda s, w: s.update(model={**s["model"], "id": w}),
    "instance.type": lambda s, w: s.update(instance={"type": w}),
    "kvCacheOffloading.remote.url": lambda s, w: _at(s, "kvCacheOffloading").update(remote={"url": f"redis://{w}"}),
    "vllm.extraArgs (a choice)": lambda s, w: _at(s, "vllm").update(extraArgs=[f"--dtype={w}"]),
    "vllm.extraArgs (a number)": lambda s, w: _at(s, "vllm").update(extraArgs=[f"--max-num-seqs={w}"]),
    "vllm.extraArgs (positional)": lambda s, w: _at(s, "vllm").update(extraArgs=[w]),
    "images.vllm.tag": lambda s, w: _at(s, "images", "vllm").update(tag=w),
    "images.lmcache.repository": lambda s, w: _at(s, "images", "lmcache").update(repository=w),
    "scheduling.nodeSelector (a key)": lambda s, w: _at(s, "scheduling", "nodeSelector").update({w: "x"}),
    "scheduling.nodeSelector (a value)": lambda s, w: _at(s, "scheduling", "nodeSelector").update(pool=w),
    "scheduling.priorityClassName": lambda s, w: _at(s, "scheduling").update(priorityClassName=w),
    "scheduling.tolerations[].key": lambda s, w: _at(s, "scheduling").update(
        tolerations=[{"key": w, "operator": "Exists", "effect": "NoSchedule"}]
    ),
    "scheduling.tolerations[].value": lambda s, w: _at(s, "scheduling").update(
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Equal", "value": w}]
    ),
    "scheduling.topologySpreadConstraints[].topologyKey": lambda s, w: _at(s, "scheduling").update(
        topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": w, "whenUnsatisfiable": "ScheduleAnyway"}]
    ),
    "secondary[].fileSystem.pvc.ref.name": lambda s, w: _secondary(s, {"ref": {"name": w}}),
    "secondary[].fileSystem.pvc.ref.path": lambda s, w: _secondary(s, {"ref": {"name": "kv", "path": f"/{w}"}}),
    "secondary[].fileSystem.pvc.spec.storageClassName": lambda s, w: _secondary(
        s,
        {
            "spec": {
                "storageClassName": w,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Ti"}},
            }
        },
    ),
    # the word is the claim's name: a quote after a '/' would be in the sub-path, which may hold one
    "model.uri": lambda s, w: s.update(model={**s["model"], "uri": f"pvc://{w.replace('/', '-')}"}),
    "model.cache.claim.name": lambda s, w: s.update(model={**s["model"], "cache": {"claim": {"name": w}}}),
    "model.cache.claimTemplate.storageClassName": lambda s, w: s.update(
        model={**s["model"], "cache": {"claimTemplate": {"storageClassName": w}}}
    ),
    "model.hfTokenSecret.name": lambda s, w: s.update(model={**s["model"], "hfTokenSecret": {"name": w, "key": "t"}}),
    "model.hfTokenSecret.key": lambda s, w: s.update(model={**s["model"], "hfTokenSecret": {"name": "hf", "key": w}}),
    "service.apiKeySecret.key": lambda s, w: _at(s, "service").update(apiKeySecret={"name": "api", "key": w}),
    "pod.labels (a key)": lambda s, w: _at(s, "pod", "labels").update({w: "x"}),
    "pod.labels (a value)": lambda s, w: _at(s, "pod", "labels").update(team=w),
    "pod.annotations (a key)": lambda s, w: _at(s, "pod", "annotations").update({w: "x"}),
    "pod.volumes[].name": lambda s, w: _at(s, "pod").update(volumes=[{"name": w, "emptyDir": {}}]),
    "commonLabels (a key)": lambda s, w: _at(s, "commonLabels").update({w: "x"}),
    "commonLabels (a value)": lambda s, w: _at(s, "commonLabels").update(team=w),
    "commonAnnotations (a key)": lambda s, w: _at(s, "commonAnnotations").update({w: "x"}),
    "service.labels (a key)": lambda s, w: _at(s, "service", "labels").update({w: "x"}),
    "service.loadBalancerClass": lambda s, w: _at(s, "service").update(type="LoadBalancer", loadBalancerClass=w),
    "service.loadBalancerSourceRanges[]": lambda s, w: _at(s, "service").update(
        type="LoadBalancer", loadBalancerSourceRanges=[w]
    ),
    "resources.extra (a key)": lambda s, w: _at(s, "resources", "extra").update({w: 1}),
}


@pytest.mark.heavy
@pytest.mark.parametrize("field", QUOTING_FIELDS)
@settings(
    max_examples=examples(2),  # the two quoted() are held equal by tests/test_quoting.py: this is the wiring
    deadline=None,
    derandomize=DERANDOMIZE,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failing case is shown as drawn
    suppress_health_check=[HealthCheck.too_slow],
)
@given(specs(), quoting_words(), st.sampled_from(["1.33", "1.34"]))
def test_a_value_with_quotes_is_worded_alike_by_kvgen_and_helm(field, spec, word, drawn_version):
    spec = copy.deepcopy(spec)
    QUOTING_FIELDS[field](spec, word)
    version = kube_version_for(spec, drawn_version)
    text = dump(spec)
    try:
        compile_text(text, "spec.yaml", version)
    except SpecError:
        pass
    else:
        raise AssertionError(f"kvgen accepts {word!r} in {field}:\n{text}")
    try:
        helm.problems(spec, kube_version=version)
    except helm_python.HelmValuesError:
        assume(False)  # the values schema's words, not the chart's (a field it always refuses is Unsatisfiable)
    worded_alike(spec, version)


# A problem's words are written by kvgen.problem; a value in them is quoted by kvgen.quoted, never by
# a format of its own ('%s', \"%s\", %q), which would word a value with a quote in it otherwise than
# kvgen. What a hint quotes from the chart's own data (a YAML line to copy) is listed with its reason.
HAND_QUOTES = re.compile(r"'%[sdv]'|\\\"%[sdv]\\\"|%q")
HAND_QUOTED_ON_PURPOSE = {
    ("plan/_gpuaccess.tpl", 'kubeVersion: \\"%s\\"'): "a YAML line to copy; the version is files/gpu-access.yaml's",
}


def test_no_template_quotes_a_value_in_a_problem_by_hand():
    found = []
    for path in sorted((helm.CHART / "templates").rglob("*.tpl")) + sorted((helm.CHART / "templates").glob("*.yaml")):
        name = path.relative_to(helm.CHART / "templates").as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "kvgen.problem" not in line:
                continue
            for match in HAND_QUOTES.finditer(line):
                around = line[max(0, match.start() - 20) : match.end()]
                if not any(n == name and q in around for n, q in HAND_QUOTED_ON_PURPOSE):
                    found.append(f"templates/{name}:{number}: {around}")
    assert found == [], "quote with kvgen.quoted:\n" + "\n".join(found)


# ----------------------------------------------------------------------------- refusals agree


@pytest.mark.heavy
@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
@settings(
    max_examples=examples(3),
    deadline=None,
    derandomize=DERANDOMIZE,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(spec=specs())
def test_a_broken_field_is_refused_by_kvgen_and_the_chart_alike(breakage, spec):
    """One of kvgen's rules broken on a drawn valid spec: kvgen refuses it, and Helm too, with
    kvgen's problems word for word."""
    BREAKAGES[breakage](spec)
    version = kube_version_for(spec, "1.34")
    text = dump(spec)
    try:
        compile_text(text, "spec.yaml", version)
    except SpecError as exc:
        refused_alike(exc, spec, version)
    else:
        raise AssertionError(f"kvgen accepts a spec broken by {breakage}:\n{text}")
