"""The chart under Helm's rules (issue 23): usable as a subchart (Helm passes `global` to it), the
release name and namespace decide unless the values say otherwise, and a conflict between the spec
and the release is a problem naming both; one default Kubernetes version for kvgen and the chart."""

from __future__ import annotations

import json
import shutil

import helm
import helm_cli
import helm_python
import pytest
from conftest import ROOT, dump, run_kvgen
from helm import values_of
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text

load = YAML(typ="safe", pure=True).load
GEMMA = ROOT / "examples" / "kaito-gemma-4-12b.yaml"


# ----------------------------------------------------------------------------- a subchart


def umbrella(tmp_path, sub_values):
    """An umbrella chart with kvgen (a copy of charts/kvgen) as its dependency, global values set."""
    root = tmp_path / "platform"
    shutil.copytree(helm.CHART, root / "charts" / "kvgen")
    version = load((helm.CHART / "Chart.yaml").read_text())["version"]
    (root / "Chart.yaml").write_text(
        dump(
            {
                "apiVersion": "v2",
                "name": "platform",
                "version": "1.0.0",
                "dependencies": [{"name": "kvgen", "version": str(version)}],
            }
        )
    )
    values = {
        "global": {"storageClass": "fast", "team": {"name": "ml"}},
        "kvgen": sub_values,
    }  # global.imageRegistry: tests/test_chart_parity.py
    (root / "values.yaml").write_text(dump(values))
    return root


@pytest.mark.heavy
def test_the_chart_schema_accepts_helms_global_values_kvgens_spec_does_not():
    values = {**values_of(GEMMA), "global": {"foo": 1}}
    ours = helm.objects(values_of(GEMMA))
    assert helm.objects(values) == ours  # accepted and ignored
    result = run_kvgen("render", "-", input=dump(values))
    assert result.returncode == 1 and "global" in result.stderr  # a spec is no umbrella chart's values


@pytest.mark.heavy
def test_kvgen_renders_under_an_umbrella_chart_with_global_values(tmp_path):
    spec = values_of(GEMMA)
    root = umbrella(tmp_path, spec)
    (kvgen_out,) = compile_text(dump(spec), "spec.yaml")
    expected = helm.by_identity(kvgen_out.objects)
    # the real helm CLI
    result = helm_cli.run("template", spec["name"], str(root), "--kube-version", "1.33", "--namespace", "default")
    assert result.returncode == 0, result.stderr
    docs = [d for d in YAML(typ="safe", pure=True).load_all(result.stdout) if d]
    docs = [d for d in docs if "helm.sh/hook" not in d["metadata"].get("annotations", {})]  # helm test's pod
    assert helm.by_identity(helm.as_kvgen(docs, spec, "default")) == expected
    # the in-process engine
    from helm_python import _native

    opts = {"name": spec["name"], "namespace": "default", "kube_version": "v1.33.0"}
    chart = helm_python.Chart.load(str(root))
    rendered = json.loads(_native.call_string("helm_render", chart._raw(), json.dumps({}), json.dumps(opts)))
    assert helm.by_identity(helm.as_kvgen(helm._objects(rendered), spec, "default")) == expected


# ----------------------------------------------------------------------------- name and namespace


def kvgen_problems(values, namespace=None):
    from kvgen.app.compiler import InputErrors, compile_inputs
    from kvgen.input.dialects import Options

    try:
        compile_inputs([("spec.yaml", dump(values))], options=Options(namespace=namespace))
    except InputErrors as exc:
        return {(format_path(p.path), p.message, p.hint) for e in exc.errors for p in e.problems}
    return set()


def format_path(path):
    from kvgen.core.errors import format_path as fmt

    return fmt(path)


CONFLICT = (
    "namespace",
    "the spec's namespace 'default' differs from the namespace it is installed into, 'llm' (helm -n, kvgen --namespace)",
    "remove namespace from the spec to follow -n, or install with -n default",
)


@pytest.mark.heavy
def test_a_spec_namespace_against_the_release_namespace_is_a_problem_naming_both():
    values = values_of(GEMMA)  # namespace: default, as the README's example
    assert values["namespace"] == "default"
    assert helm.problems(values, namespace="llm") == {CONFLICT}
    assert kvgen_problems(values, namespace="llm") == {CONFLICT}
    # with other problems, all at once
    broken = {**values, "parallelism": {"tensor": 3}}
    assert CONFLICT in helm.problems(broken, namespace="llm") == kvgen_problems(broken, namespace="llm")
    assert len(kvgen_problems(broken, namespace="llm")) > 1


@pytest.mark.heavy
def test_the_same_namespace_twice_or_none_in_the_spec_follows_the_release():
    values = values_of(GEMMA, drop=("namespace",))
    assert {o["metadata"]["namespace"] for o in helm.raw_objects(values, namespace="llm")} == {"llm"}
    same = {**values, "namespace": "llm"}
    assert {o["metadata"]["namespace"] for o in helm.raw_objects(same, namespace="llm")} == {"llm"}
    assert kvgen_problems(same, namespace="llm") == set()


@pytest.mark.heavy
def test_helm_template_without_n_keeps_the_spec_namespace_helm_install_n_refuses_a_conflict():
    """Helm gives the release namespace "default" without -n and cannot tell it from -n default: there
    the spec's namespace stands, so `helm template x charts/kvgen -f examples/...` works as written."""
    hardened = ROOT / "examples" / "hardened-private-registry.yaml"
    for example in (GEMMA, hardened):
        result = helm_cli.run("template", "x", str(helm.CHART), "-f", str(example), "--kube-version", "1.33")
        assert result.returncode == 0, result.stderr
        docs = [d for d in YAML(typ="safe", pure=True).load_all(result.stdout) if d]
        assert {d["metadata"]["namespace"] for d in docs} == {load(example.read_text())["namespace"]}
    result = helm_cli.run("template", "gemma", str(helm.CHART), "-n", "llm", "-f", str(GEMMA))
    assert result.returncode != 0
    assert "namespace: the spec's namespace 'default' differs from the namespace it is installed into, 'llm'" in (
        result.stderr
    )


@pytest.mark.heavy
def test_kvgen_namespace_against_the_spec_namespace_is_a_problem_at_its_line():
    result = run_kvgen("render", "-n", "llm", str(GEMMA))
    assert result.returncode == 1 and result.stdout == ""
    line = next(n for n, text in enumerate(GEMMA.read_text().splitlines(), 1) if text.startswith("namespace:"))
    assert f"{GEMMA.relative_to(ROOT)}:{line}:" in result.stderr
    assert "namespace: the spec's namespace 'default' differs from the namespace it is installed into, 'llm'" in (
        result.stderr
    )
    # kvgen can tell -n default from no -n: it is explicit, and the spec says otherwise
    other = {**values_of(GEMMA), "namespace": "team-a"}
    assert {p for p, _m, _h in kvgen_problems(other, namespace="default")} == {"namespace"}
    assert run_kvgen("render", "-n", "default", str(GEMMA)).returncode == 0


@pytest.mark.heavy
def test_name_and_fullname_override_naming_two_things_is_a_problem_in_both_faces():
    values = {**values_of(GEMMA), "fullnameOverride": "gemma-small"}
    expected = {
        (
            "name",
            "'gemma-4-12b' and fullnameOverride 'gemma-small' both name the objects",
            "keep one of them (name is kvgen's, fullnameOverride the Helm convention)",
        )
    }
    assert helm.problems(values) == expected == kvgen_problems(values)
    same = {**values, "fullnameOverride": "gemma-4-12b"}
    assert helm.problems(same) == set() == kvgen_problems(same)


@pytest.mark.parametrize("release", ["gemma", "prod"])
def test_the_spec_name_names_the_objects_the_release_the_instance(release):
    """name is explicit (as fullnameOverride is): it names the objects whatever the release is called;
    the release name is the instance label, and names the objects of values without a name."""
    values = values_of(GEMMA, drop=("namespace",))
    objs = helm.raw_objects(values, name=release)
    assert {o["metadata"]["name"] for o in objs} == {"gemma-4-12b", "gemma-4-12b-lmcache-launcher"}
    assert {o["metadata"]["labels"]["app.kubernetes.io/instance"] for o in objs} == {release}


# ----------------------------------------------------------------------------- the Kubernetes version


def _dra_without_kube_version(tmp_path):
    """examples/lmcache-dra.yaml without its kubeVersion: gpuAccess dra, which needs 1.34."""
    text = (ROOT / "examples" / "lmcache-dra.yaml").read_text()
    assert 'kubeVersion: "1.34"\n' in text
    path = tmp_path / "dra.yaml"
    path.write_text(text.replace('kubeVersion: "1.34"\n', ""))
    return path


@pytest.mark.heavy
def test_one_default_kubernetes_version_for_kvgen_and_the_chart(tmp_path):
    import inspect

    from kvgen.app import cli
    from kvgen.data import kube

    default = json.loads((helm.CHART / "files" / "kubernetes.json").read_text())["defaultVersion"]
    assert kube.DEFAULT_VERSION == default
    for command in (cli.render, cli.validate, cli.explain):
        assert (
            inspect.signature(command).parameters["kube_version"].default is None
        )  # not given: kubeVersion, else default
    # gpuAccess dra needs 1.34: both faces, given no version, render for the same one (refused below 1.34
    # in the same words, or rendered); Helm's own default would be its client-go's (1.35 for Helm 4.1)
    dra = _dra_without_kube_version(tmp_path)
    said = f"but the output is for Kubernetes {default}"
    refused = tuple(map(int, default.split("."))) < (1, 34)
    ours = run_kvgen("render", str(dra))
    assert (ours.returncode == 1 and said in ours.stderr) if refused else ours.returncode == 0, ours.stderr
    theirs = helm_cli.run("template", "x", str(helm.CHART), "-f", str(dra))
    assert (theirs.returncode != 0 and said in theirs.stderr) if refused else theirs.returncode == 0, theirs.stderr
    from helm_python import _native

    def engine() -> None:  # the in-process engine, no version given
        _native.call_string(
            "helm_render", helm.chart()._raw(), json.dumps(load(dra.read_text())), json.dumps({"name": "x"})
        )

    if refused:
        with pytest.raises(helm_python.HelmRenderError, match=said):
            engine()
    else:
        engine()
    # a version given is taken as given, by both
    assert helm_cli.run("template", "x", str(helm.CHART), "-f", str(dra), "--kube-version", "1.34").returncode == 0
    assert run_kvgen("render", "--kube-version", "1.34", str(dra)).returncode == 0


@pytest.mark.heavy
def test_the_specs_kube_version_is_rendered_for_when_none_is_given_by_both_faces():
    """kubeVersion "1.34" (examples/lmcache-dra.yaml): kvgen without --kube-version and helm template
    without --kube-version render the DRA objects for 1.34; a newer version given is used."""
    dra = ROOT / "examples" / "lmcache-dra.yaml"
    ours = run_kvgen("render", str(dra))
    assert ours.returncode == 0, ours.stderr
    theirs = helm_cli.run("template", "qwen3-32b-dra", str(helm.CHART), "-f", str(dra), "--skip-tests")
    assert theirs.returncode == 0, theirs.stderr
    kinds = lambda text: sorted(d["kind"] for d in YAML(typ="safe").load_all(text) if d)  # noqa: E731
    assert "ResourceClaimTemplate" in kinds(ours.stdout) and kinds(ours.stdout) == kinds(theirs.stdout)
    assert run_kvgen("validate", "--kube-version", "1.35", str(dra)).stderr.count("valid for Kubernetes 1.35") == 1
    assert "valid for Kubernetes 1.34" in run_kvgen("validate", str(dra)).stderr
    assert helm_cli.run("template", "x", str(helm.CHART), "-f", str(dra), "--kube-version", "1.36").returncode == 0


@pytest.mark.heavy
@pytest.mark.parametrize("version", ["1.33", "1.29"])
def test_a_version_older_than_the_specs_kube_version_is_refused_by_both_faces_naming_both(version):
    dra = ROOT / "examples" / "lmcache-dra.yaml"
    said = f"kubeVersion: the spec is written for Kubernetes 1.34, but the output is for Kubernetes {version}, which is older"
    ours = run_kvgen("render", "--kube-version", version, str(dra))
    line = next(n for n, text in enumerate(dra.read_text().splitlines(), 1) if text.startswith("kubeVersion:"))
    assert ours.returncode == 1 and ours.stdout == "" and f"{dra}:{line}:1: {said}" in ours.stderr, ours.stderr
    assert "hint: render for 1.34 or newer" in ours.stderr
    theirs = helm_cli.run("template", "x", str(helm.CHART), "-f", str(dra), "--kube-version", version)
    assert theirs.returncode != 0 and said in theirs.stderr, theirs.stderr


def test_kube_version_is_a_quoted_known_version():
    """YAML reads an unquoted 1.30 as the number 1.3: refused with the quoting hint; a version kvgen has no
    schemas for is refused at kubeVersion."""
    from kvgen.core.errors import SpecError

    base = (ROOT / "examples" / "lmcache-dra.yaml").read_text()
    with pytest.raises(SpecError) as number:
        compile_text(base.replace('kubeVersion: "1.34"', "kubeVersion: 1.30"), "s.yaml")
    assert 'quote it, kubeVersion: "1.3"' in str(number.value.problems[0].message)
    with pytest.raises(SpecError) as unknown:
        compile_text(base.replace('kubeVersion: "1.34"', 'kubeVersion: "1.99"'), "s.yaml")
    (problem,) = [p for p in unknown.value.problems if p.path == ("kubeVersion",)]
    assert problem.message.startswith("no schemas for Kubernetes 1.99; supported: 1.28, ") and "1.34" in problem.message
