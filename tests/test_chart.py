"""The Helm chart gives exactly what kvgen gives: for every example, the objects the real Helm
engine renders equal kvgen's (as parsed data) and the golden file; bad values fail in Helm
too."""

from __future__ import annotations

import json

import helm
import helm_python
import pytest
from conftest import EXAMPLES, GOLDEN, ROOT, kube_version_of, problem_set
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text

load = YAML(typ="safe", pure=True).load


def kvgen_objects(text: str, file: str = "spec.yaml", version: str = "1.33"):
    return [o for r in compile_text(text, file, version) for o in r.objects]


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_chart_equals_kvgen_and_golden(example):
    values = load(example.read_text())
    version = kube_version_of(example)
    chart = helm.by_identity(helm.objects(values, kube_version=version))
    ours = helm.by_identity(kvgen_objects(example.read_text(), str(example), version))
    golden = helm.by_identity(
        [d for d in YAML(typ="safe", pure=True).load_all((GOLDEN / example.name).read_text()) if d]
    )
    assert chart.keys() == ours.keys() == golden.keys()
    for key in ours:
        assert chart[key] == ours[key], f"{example.name}: {key} differs between helm template and kvgen render"
        assert chart[key] == golden[key]


# Not here, because two other tests imply it: that every object Helm renders is valid Kubernetes
# (test_chart_equals_kvgen_and_golden: they equal the golden's, which tests/test_golden.py validates
# strictly for the same version), and that `helm lint --strict` is clean on every example
# (tests/test_chart_unknown_keys.py runs the real CLI as users do; a warning fails it there).


def _bad_cases():
    from bad_specs import CASES

    # malformed YAML never becomes values: Helm fails to read such a file before templating
    return {k: v for k, v in CASES.items() if k != "malformed-yaml"}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(_bad_cases()))
def test_helm_rejects_what_kvgen_rejects(case):
    """With kvgen's problems (path, message, hint) when the chart's templates find them; with the
    value's path when Helm's schema check does (its messages are Helm's)."""
    text, path, _line, _fragment = _bad_cases()[case]
    values = load(text)
    try:
        found = helm.problems(values)
    except helm_python.HelmValuesError as err:
        message = str(err)
    else:
        assert found and found == problem_set(values)
        return
    # the offending value path is named, in Helm's schema form (/a/b/1/c) or kvgen's (a.b[1].c);
    # a missing or unknown key is named with its parent's path
    slash = "/" + path.replace("[", "/").replace("]", "").replace(".", "/")
    parent, _, last = slash.rpartition("/")
    assert path in message or slash in message or (f"'{parent}'" in message and last in message), message


@pytest.mark.parametrize(
    "key,value,named",
    [
        ("parallelism", {"tensor": "two"}, "/parallelism/tensor")
    ],  # a wrong type (a typo: tests/test_chart_unknown_keys.py)
    ids=["wrong-type"],
)
def test_a_bad_value_is_rejected_by_helm_with_its_path(key, value, named):
    values = load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text())
    values[key] = value
    with pytest.raises(helm_python.HelmValuesError) as err:
        helm.render(values)
    assert named in str(err.value)


def test_all_problems_are_reported_at_once_by_the_chart():
    values = load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text())
    values["instance"] = {"type": "Standard_NC24ads_A100_v4"}
    values["parallelism"] = {"tensor": 2}
    values["vllm"] = {"extraArgs": ["--port=9000", "--max-model-len=4096"]}
    with pytest.raises(helm_python.HelmRenderError) as err:
        helm.render(values)
    message = str(err.value)
    assert "3 problem(s)" in message
    assert "parallelism:" in message and "vllm.extraArgs[0]" in message and "vllm.extraArgs[1]" in message


def test_values_schema_is_the_spec_schema():
    """The same schema, except that the top-level required keys are the templates' to check (so that
    `helm lint charts/kvgen --strict` passes without values), and so are unknown keys of kvgen's own
    objects (kvgen.checkKeys, in kvgen's words: tests/test_chart_unknown_keys.py)."""
    spec = json.loads((ROOT / "schemas" / "kvgen.schema.json").read_text())
    values = json.loads((helm.CHART / "values.schema.json").read_text())
    assert spec.pop("required") == ["model", "instance"] and "required" not in values
    assert values["properties"].pop("global")["type"] == "object"

    def closed(node, k8s=False):  # kvgen's objects: additionalProperties false dropped, nothing else
        if isinstance(node, dict):
            return {
                k: closed(v, k8s or (k == "$defs"))
                for k, v in node.items()
                if k8s or not (k == "additionalProperties" and v is False)
            }
        return [closed(v, k8s) for v in node] if isinstance(node, list) else node

    k8s = {n: d for n, d in spec["$defs"].items() if n.startswith("io.k8s.")}
    assert {n: values["$defs"][n] for n in k8s} == k8s  # the embedded Kubernetes types: unchanged
    expected = closed({k: v for k, v in spec.items() if k != "$defs"}) | {
        "$defs": {n: d if n in k8s else closed(d) for n, d in spec["$defs"].items()}
    }  # and Helm's global, which a subchart is passed (tests/test_helm_release.py)
    # a value's own checks are the templates' (files/spec-checks.json): each was a keyword of the spec's schema
    checks = json.loads((helm.CHART / "files" / "spec-checks.json").read_text())
    keywords = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum"} | {
        k: k for k in ("minLength", "maxLength", "pattern", "minItems", "maxItems")
    }
    moved = 0
    for name, keys in checks.items():
        if name == "$independent":
            continue
        node = expected if name == "$root" else expected["$defs"][name]
        for key, entry in keys.items():
            words = {w for c in entry["checks"] for w in ([keywords[c["check"]]] if c["check"] != "enum" else [])}
            words |= {"enum", "const"} if any(c["check"] == "enum" for c in entry["checks"]) else set()
            prop = node["properties"][key]
            branches = prop.get("anyOf", [prop])
            had = {w for b in [prop, *branches] for w in b if w in words}
            assert had, (name, key, "the spec's schema has no such check")
            for b in [prop, *branches]:
                for w in words:
                    b.pop(w, None)
            moved += 1
    assert moved > 100
    assert values == expected


@pytest.mark.parametrize("missing", [["model"], ["instance"], ["model", "instance"]])
def test_missing_required_values_fail_from_the_templates_in_kvgens_words(missing):
    values = load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text())
    for key in missing:
        values.pop(key)
    assert helm.problems(values) == problem_set(values)


def test_notes_state_the_decision_and_reason():
    enabled = helm.render(load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text()))
    notes = next(v for k, v in enabled.items() if k.endswith("NOTES.txt"))
    assert "KV-cache offloading: enabled (lmcache backend)" in notes
    disabled = helm.render(load((ROOT / "examples" / "rule-mig-partition.yaml").read_text()))
    notes = next(v for k, v in disabled.items() if k.endswith("NOTES.txt"))
    assert "KV-cache offloading: disabled: mig-partition" in notes


@pytest.mark.heavy
def test_release_namespace_is_the_default_namespace():
    values = load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text())
    values.pop("namespace", None)
    objs = helm.raw_objects(values, namespace="llm")
    assert {o["metadata"]["namespace"] for o in objs} == {"llm"}


def _leaves(node, path=()):
    if isinstance(node, dict) and node:
        for k, v in node.items():
            yield from _leaves(v, (*path, k))
    else:
        yield path, node


def test_values_yaml_defaults_are_the_spec_defaults_and_the_pins():
    from kvgen.data import catalog
    from kvgen.spec.models import Spec

    values = load((helm.CHART / "values.yaml").read_text())
    defaults = Spec.model_validate({"name": "x", "model": {"id": "a/b"}, "instance": {"type": "t"}}).model_dump(
        by_alias=True, exclude_none=True
    )
    # images.vllm is unset: the pin depends on the backend (vLLM's image, or kvgen's runtime image with
    # LMCache), which a value written here would override for both
    assert values["images"]["vllm"] == {} and catalog.runtime()["runtimeImage"]["repository"]
    for path, value in _leaves(values):
        expected = defaults
        for key in path:
            expected = expected[key]
        assert value == expected, path
    # every optional section of the spec appears in values.yaml
    assert set(defaults) - {"name", "namespace", "model", "instance"} <= set(values)


def test_every_value_in_values_yaml_is_commented():
    """Each value has a comment right above it, or sits in a group whose header has one
    (images.vllm.repository is explained by the comment on images.vllm)."""
    lines = (helm.CHART / "values.yaml").read_text().splitlines()
    indent = lambda line: len(line) - len(line.lstrip())  # noqa: E731
    code = [n for n, line in enumerate(lines) if line.strip() and not line.strip().startswith("#")]

    def own_comment(n: int) -> bool:
        previous = next((line for line in reversed(lines[:n]) if line.strip()), "")
        return previous.strip().startswith("#") and indent(previous) <= indent(lines[n])

    def documented(n: int) -> bool:
        if own_comment(n):
            return True
        header = next((m for m in reversed([c for c in code if c < n]) if indent(lines[m]) < indent(lines[n])), None)
        return header is not None and documented(header)

    leaves = [n for n in code if not lines[n].strip().endswith(":")]
    assert len(leaves) > 20
    assert [lines[n] for n in leaves if not documented(n)] == []


def test_chart_readme_is_generated_from_the_schema_and_pins():
    from kvgen import __version__
    from tools import chart_readme

    text = (helm.CHART / "README.md").read_text()
    assert text == chart_readme.render(), "charts/kvgen/README.md is stale: run scripts/regenerate"
    assert "| `kvCacheOffloading.cpuMemoryUtilization` |" in text
    assert (
        "| 0.33.0 | `vllm/vllm-openai:v0.33.0` | 0.5.6 | the vLLM image (`images.lmcache` unset) | not verified in "
        f"the image; its published requirements resolve 0.5.6 (below) | `ghcr.io/kvgen-dev/vllm-lmcache:{__version__}` "
        in text
    )
    assert "| `kvCacheOffloading.lmcache.gpuAccess` |" in text
    # the GPU access modes, each with what it requires, from files/gpu-access.yaml
    for mode in ("visible-devices", "dra", "in-container"):
        assert f"| `{mode}` |" in text


@pytest.mark.heavy
def test_chart_refuses_the_lmcache_sidecar_below_kubernetes_1_29(capfd):
    """The chart checks .Capabilities.KubeVersion as kvgen checks --kube-version. Helm's lint runs
    the templates against a given version and reports a template `fail` on stderr (lint mode
    does not stop on it), which is where this reads it."""
    lmcache = load((ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text())
    native = load((ROOT / "examples" / "native-arc-eviction.yaml").read_text())
    needle = "kvCacheOffloading.lmcache.gpuAccess: gpuAccess visible-devices needs Kubernetes 1.29 or newer (its LMCache server runs as a native sidecar"
    capfd.readouterr()
    helm_python.lint(str(helm.CHART), values=lmcache, kube_version="v1.28.0")
    assert needle in capfd.readouterr().err
    in_container = {
        **lmcache,
        "kvCacheOffloading": {**lmcache["kvCacheOffloading"], "lmcache": {"gpuAccess": "in-container"}},
    }
    for values, version in ((lmcache, "v1.29.0"), (native, "v1.28.0"), (in_container, "v1.28.0")):
        helm_python.lint(str(helm.CHART), values=values, kube_version=version)
        assert needle not in capfd.readouterr().err


def test_chart_marks_an_inline_hybrid_architecture_hybrid_from_the_same_list():
    values = {
        "name": "nemotron-custom",
        "instance": {"type": "Standard_NC24ads_A100_v4"},
        "model": {
            "id": "example-org/nemotron-h-custom",
            "architecture": "NemotronHForCausalLM",
            "layers": 52,
            "attentionLayers": 4,
            "kvHeads": 8,
            "headDim": 128,
            "weights": "16Gi",
        },
    }
    chart = helm.by_identity(helm.objects(values))
    ours = helm.by_identity(kvgen_objects(json.dumps(values)))
    assert chart == ours
    deployment = chart[("Deployment", "nemotron-custom")]
    assert deployment["metadata"]["annotations"]["kvgen.dev/kv-cache-offloading-reason"] == "hybrid-architecture"
