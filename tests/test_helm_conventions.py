"""The chart behaves as a platform engineer's Helm habits expect (issue 13, "The chart"): the
release names and places the objects, Helm's labels, block YAML from `helm template`, errors
from one file, `helm lint --strict`, chart-testing values, `helm test`, packaging; and the CLI's
--namespace. The chart through the Helm engine (tests/helm.py) and the real helm CLI
(tests/helm_cli.py) where the engine does not reach (lint, template as users run it, package)."""

from __future__ import annotations

import json
import shutil
import tarfile

import helm
import helm_cli
import helm_python
import kubernetes_validate
import pytest
from conftest import EXAMPLES, ROOT, compile_spec, dump, kube_version_of, run_kvgen, spec
from helm import values_of
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from kvgen import __version__
from kvgen.app.compiler import compile_text
from kvgen.data import catalog
from kvgen.input.dialects import Options

load = YAML(typ="safe", pure=True).load
CI = sorted((helm.CHART / "ci").glob("*-values.yaml"))
KEY = catalog.runtime()["wiring"]["labels"]
RECOMMENDED = {KEY[k] for k in ("name", "instance", "version", "component", "partOf", "managedBy")}
GEMMA = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
MULTI_NODE = ROOT / "examples" / "rule-multi-node-pipeline-parallel.yaml"
DEPLOYMENT_SPEC = ROOT / "examples" / "lmcache-tp2.yaml"


def names(objs):
    return {(o["kind"], o["metadata"]["name"]) for o in objs}


def pod_templates(objs):
    return [o["spec"]["template"] for o in objs if o["kind"] in ("Deployment", "StatefulSet")]


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("release", "extra", "expected"),
    [
        ("gemma", {}, "gemma-kvgen"),  # <release>-<chart>
        ("kvgen-gemma", {}, "kvgen-gemma"),  # the release name holds the chart name
        ("prod", {"nameOverride": "llm"}, "prod-llm"),
        ("llm-prod", {"nameOverride": "llm"}, "llm-prod"),
        ("prod", {"fullnameOverride": "gemma-small"}, "gemma-small"),
        ("a" * 51 + "-x", {}, "a" * 51),  # <release>-kvgen cut to 52 characters, then no final "-"
    ],
)
def test_the_release_names_the_objects_when_the_values_name_none(release, extra, expected):
    values = {**values_of(GEMMA, drop=("name",)), **extra}
    objs = helm.raw_objects(values, name=release)
    assert {n for _k, n in names(objs)} == {expected, f"{expected}-lmcache-launcher"}
    assert all(o["metadata"]["labels"][KEY["instance"]] == release for o in objs)


def test_a_release_name_that_is_no_dns_label_is_a_problem_with_a_hint():
    values = values_of(GEMMA, drop=("name",))
    with pytest.raises(helm_python.HelmRenderError) as err:
        helm.render(values, name="9.lives")
    assert "name: '9.lives-kvgen', made from the release name, is not a DNS-1035 label" in str(err.value)
    assert "(hint: set name (or fullnameOverride) in the values)" in str(err.value)


@pytest.mark.heavy
def test_kvgen_names_the_objects_after_name_or_fullname_override_and_needs_one():
    values = values_of(GEMMA, drop=("name",))
    result = run_kvgen("render", "-", input=dump(values))
    assert result.returncode == 1
    assert "name: required key is missing" in result.stderr and "the Helm chart uses the release name" in result.stderr
    unknown = run_kvgen("render", "-", input=dump({**values, "model": {"id": "google/gemma-4-12B-itt"}}))
    assert (
        "name: required key is missing" in unknown.stderr and "did you mean 'google/gemma-4-12B-it'" in unknown.stderr
    )
    (c,) = compile_text(dump({**values, "fullnameOverride": "gemma-small"}), "spec.yaml")
    assert {o["metadata"]["name"] for o in c.objects} == {"gemma-small", "gemma-small-lmcache-launcher"}


# ----------------------------------------------------------------------------- namespace


def test_kvgen_writes_no_namespace_unless_the_spec_or_namespace_sets_one():
    values = values_of(DEPLOYMENT_SPEC, drop=("namespace",))
    (plain,) = compile_text(dump(values), "spec.yaml")
    assert all("namespace" not in o["metadata"] for o in plain.objects)
    (placed,) = compile_text(dump(values), "spec.yaml", options=Options(namespace="team-a"))
    assert {o["metadata"]["namespace"] for o in placed.objects} == {"team-a"}
    (own,) = compile_text(dump({**values, "namespace": "llm"}), "spec.yaml", options=Options(namespace="llm"))
    assert {o["metadata"]["namespace"] for o in own.objects} == {"llm"}  # the same namespace twice
    # a different one is a problem naming both (tests/test_helm_release.py)


@pytest.mark.heavy
def test_the_cli_takes_namespace_and_refuses_a_bad_one():
    text = dump(values_of(DEPLOYMENT_SPEC, drop=("namespace",)))
    for flag in ("--namespace", "-n"):
        result = run_kvgen("render", flag, "team-a", "-", input=text)
        assert result.returncode == 0, result.stderr
        docs = [d for d in load_all(result.stdout) if d]
        assert {d["metadata"]["namespace"] for d in docs} == {"team-a"}
    bad = run_kvgen("render", "--namespace", "Team_A", "-", input=text)
    assert bad.returncode == 2 and "is not a namespace name" in bad.stderr and bad.stdout == ""


def load_all(text):
    return list(YAML(typ="safe", pure=True).load_all(text))


@pytest.mark.heavy
def test_the_chart_follows_the_release_namespace_unless_the_values_set_one():
    values = values_of(DEPLOYMENT_SPEC, drop=("namespace",))
    assert {o["metadata"]["namespace"] for o in helm.raw_objects(values, namespace="llm")} == {"llm"}
    own = {**values, "namespace": "team-a"}
    assert {o["metadata"]["namespace"] for o in helm.raw_objects(own, namespace="team-a")} == {"team-a"}
    # helm template without -n: the release namespace "default", which the values' namespace replaces
    assert {o["metadata"]["namespace"] for o in helm.raw_objects(own, namespace="default")} == {"team-a"}


def test_multi_node_ranks_meet_at_a_name_resolved_in_their_own_namespace():
    """No namespace in --master-addr: the pod's DNS search path (<its namespace>.svc.<domain>)
    completes <name>-0.<name>-headless, wherever kustomize, Argo CD or helm -n put the objects,
    and whatever the cluster domain."""
    values = values_of(MULTI_NODE, drop=("namespace",))
    (c,) = compile_text(dump(values), "spec.yaml")
    name = values["name"]
    for objs in (c.objects, helm.raw_objects(values, namespace="llm")):
        for pod in pod_templates(objs):
            args = pod["spec"]["containers"][0]["args"]
            assert f"--master-addr={name}-0.{name}-headless" in args
            assert not any(".svc" in a for a in args)


# ----------------------------------------------------------------------------- labels


@pytest.mark.parametrize("example", [GEMMA, MULTI_NODE, ROOT / "examples" / "lmcache-dra.yaml"], ids=lambda p: p.stem)
def test_helm_labels_every_object_with_the_recommended_set(example):
    values = values_of(example, drop=("namespace",))
    objs = helm.raw_objects(values, name="prod", namespace="llm", kube_version=kube_version_of(example))
    chart = load((helm.CHART / "Chart.yaml").read_text())
    for o in objs:
        labels = o["metadata"]["labels"]
        assert RECOMMENDED <= set(labels), o["kind"]
        assert labels[KEY["managedBy"]] == "Helm"
        assert labels[KEY["chart"]] == f"{chart['name']}-{chart['version']}"
        assert labels[KEY["instance"]] == "prod"
        assert labels[KEY["partOf"]] == values["name"]
    for pod in pod_templates(objs):
        assert RECOMMENDED <= set(pod["metadata"]["labels"])
        assert KEY["chart"] not in pod["metadata"]["labels"]  # a new chart version alone restarts no server
    selectors = [o["spec"]["selector"]["matchLabels"] for o in objs if o["kind"] in ("Deployment", "StatefulSet")]
    selectors += [o["spec"]["selector"] for o in objs if o["kind"] == "Service"]
    assert selectors
    for selector in selectors:
        # a workload's selector is immutable: only labels no chart or image version changes
        assert set(selector) <= {KEY["name"], KEY["instance"], KEY["nodeRole"]}, selector


def test_kvgen_labels_are_the_same_set_managed_by_kvgen():
    (c,) = compile_text(GEMMA.read_text(), str(GEMMA))
    for o in c.objects:
        labels = o["metadata"]["labels"]
        assert RECOMMENDED <= set(labels) and KEY["chart"] not in labels
        assert labels[KEY["managedBy"]] == "kvgen" and labels[KEY["instance"]] == labels[KEY["partOf"]] == "gemma-4-12b"


# ----------------------------------------------------------------------------- block YAML


def flow_collections(node, path=""):
    """Paths of non-empty mappings and sequences written in flow style ({...}, [...])."""
    out = []
    if isinstance(node, (CommentedMap, CommentedSeq)):
        if node and node.fa.flow_style():
            out.append(path or "(document)")
        items = node.items() if isinstance(node, CommentedMap) else enumerate(node)
        for k, v in items:
            out += flow_collections(v, f"{path}.{k}")
    return out


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_helm_template_writes_block_yaml_like_the_goldens(example):
    """`helm template` as users run it: no one-line JSON for labels, args, resources..., and the
    launcher script as a `|` block."""
    result = helm_cli.run(
        "template", "prod", str(helm.CHART), "-f", str(example), "--kube-version", kube_version_of(example)
    )
    assert result.returncode == 0, result.stderr
    docs = [d for d in YAML(typ="rt").load_all(result.stdout) if d]
    for d in docs:
        assert flow_collections(d) == [], f"{d['kind']}: flow style at {flow_collections(d)}"
    launcher = [d for d in docs if d["kind"] == "ConfigMap" and "lmcache_launcher.py" in (d.get("data") or {})]
    if launcher:
        assert "  lmcache_launcher.py: |\n    #!/usr/bin/env python3\n" in result.stdout


# ----------------------------------------------------------------------------- errors


@pytest.mark.heavy
@pytest.mark.parametrize("example", [DEPLOYMENT_SPEC, MULTI_NODE], ids=lambda p: p.stem)
def test_the_chart_fails_from_validate_yaml_with_kvgens_words(example):
    values = values_of(example)
    values["parallelism"] = {**values.get("parallelism", {}), "tensor": 3}
    values["model"] = {"id": values["model"]["id"].upper()}  # a near typo: the case
    with pytest.raises(helm_python.HelmRenderError) as err:
        helm.render(values)
    message = str(err.value)
    assert "kvgen/templates/validate.yaml" in message
    assert not any(
        f"templates/{t}" in message for t in ("statefulset.yaml", "deployment.yaml", "service.yaml", "NOTES.txt")
    )
    assert "did you mean" in message


@pytest.mark.heavy
def test_helm_cli_names_validate_yaml_for_a_deployment_spec(tmp_path):
    values = values_of(DEPLOYMENT_SPEC)
    values["parallelism"]["tensor"] = 3
    (tmp_path / "v.yaml").write_text(dump(values))
    result = helm_cli.run("template", "prod", str(helm.CHART), "-f", str(tmp_path / "v.yaml"))
    assert result.returncode != 0
    assert "execution error at (kvgen/templates/validate.yaml:" in result.stderr
    assert "parallelism: tensor 3 x pipeline 1 x data 1 needs 3 GPUs per node" in result.stderr


# ----------------------------------------------------------------------------- one context per render


PLANS = "kvgen-test/plans"  # a root key of the test copy below: how many times the context was planned


def counting_chart(tmp_path):
    """A copy of the chart that counts, on the root context, every time the context is computed
    (kvgen.plan, where the work is), and two more templates: templates/tests/zz-first.txt, which Helm
    renders first (deepest directory first, then names in reverse order: engine.go sortTemplates),
    and templates/0-last.txt, rendered last; each prints .Values, the last also the count."""
    root = tmp_path / "kvgen"
    shutil.copytree(helm.CHART, root)
    context = root / "templates" / "context" / "_context.tpl"
    plan = '{{- include "kvgen.plan" $s -}}'
    text = context.read_text()
    assert text.count(plan) == 1
    count = f'{{{{- $_ := set . "{PLANS}" (add1 (index . "{PLANS}")) -}}}}'
    context.write_text(text.replace(plan, count + plan))
    (root / "templates" / "tests" / "zz-first.txt").write_text("{{ toJson .Values }}")
    (root / "templates" / "0-last.txt").write_text(f'{{{{ toJson .Values }}}} {{{{ index . "{PLANS}" }}}}')
    return helm_python.Chart.load(str(root))


def test_the_context_is_computed_once_per_render_and_kept_off_the_values(tmp_path):
    # every object template, NOTES.txt, validate.yaml and the test pod include kvgen.context: once
    # computed, the others read it (templates/context/_context.tpl); before, each computed it again (16 times)
    rendered = helm.render(values_of(DEPLOYMENT_SPEC), chart_=counting_chart(tmp_path))
    first = rendered["kvgen/templates/tests/zz-first.txt"]
    values, count = rendered["kvgen/templates/0-last.txt"].rsplit(" ", 1)
    assert count == "1"
    assert values == first  # nothing kept under .Values


def test_values_with_problems_fail_from_validate_yaml_once_with_every_problem(tmp_path):
    # the test pod's template renders before validate.yaml and keeps {}: validate.yaml computes again
    values = values_of(DEPLOYMENT_SPEC)
    values["instance"] = {"type": "no-such-node"}
    values["model"] = {"id": values["model"]["id"].upper()}  # a near typo: the case
    with pytest.raises(helm_python.HelmRenderError) as err:
        helm.render(values, chart_=counting_chart(tmp_path))
    message = str(err.value)
    assert message.count("problem(s) in the values") == 1 and "kvgen: 2 problem(s)" in message
    assert "kvgen/templates/validate.yaml" in message and "test-health" not in message
    assert "model.id:" in message and "instance.type:" in message


# ----------------------------------------------------------------------------- lint, ci values, helm test


def test_helm_lint_strict_passes_without_values():
    result = helm_cli.run("lint", "--strict", str(helm.CHART))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout


LINT_REFUSED = {
    "unknown-key": (
        {"kvCacheOffloding": {"cpu": "10Gi"}},
        "kvCacheOffloding: unknown key 'kvCacheOffloding' (hint: did you mean 'kvCacheOffloading'?)",
    ),
    "does-not-fit": (
        {"model": {"id": "meta-llama/Llama-3.1-70B-Instruct"}},
        "parallelism.tensor: meta-llama/Llama-3.1-70B-Instruct needs 132.0 GiB of weights per GPU",
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize("change", LINT_REFUSED, ids=list(LINT_REFUSED))
def test_helm_lint_strict_fails_on_values_kvgen_refuses(change, tmp_path):
    """Issue 36: people gate on `helm lint --strict -f values.yaml`. Helm's lint mode logs a template's fail at INFO
    and exits 0; the chart's validate.yaml then raises an error of the template engine, which fails the lint with
    kvgen's problems in its text."""
    values, said = LINT_REFUSED[change]
    spec = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "instance": {"type": "Standard_NC24ads_A100_v4"}}
    path = tmp_path / "values.yaml"
    path.write_text(dump({**spec, **values}))
    result = helm_cli.run("lint", "--strict", str(helm.CHART), "-f", str(path))
    assert result.returncode != 0, result.stdout + result.stderr
    assert "1 chart(s) failed" in result.stdout + result.stderr
    assert "[ERROR] templates/" in result.stdout and said in result.stdout.replace("\\n", "\n"), result.stdout
    template = helm_cli.run("template", "demo", str(helm.CHART), "-f", str(path))
    assert template.returncode != 0 and said in template.stderr  # helm template as before: Helm's fail
    assert "no template" not in template.stderr


@pytest.mark.heavy
@pytest.mark.parametrize("values_file", CI, ids=[p.stem for p in CI])
def test_ci_values_lint_and_render_as_kvgen_renders_them(values_file):
    result = helm_cli.run("lint", "--strict", str(helm.CHART), "-f", str(values_file))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout and "[INFO]" not in result.stdout
    values = load(values_file.read_text())
    release = "kvgen-ci"  # holds the chart name: the objects are named kvgen-ci
    theirs = helm.raw_objects(values, name=release, namespace="ci")
    for obj in theirs:
        kubernetes_validate.validate(obj, "1.33.0", strict=True)
    (ours,) = compile_text(dump({**values, "name": release}), "ci.yaml", options=Options(namespace="ci"))
    assert helm.by_identity(helm.as_kvgen(theirs, {"namespace": "ci"}, "ci")) == helm.by_identity(ours.objects)


@pytest.mark.heavy
def test_ci_values_cover_both_backends_and_a_multi_node_server():
    backends, kinds = set(), set()
    for values_file in CI:
        for o in helm.raw_objects(load(values_file.read_text()), name="kvgen-ci"):
            kinds.add(o["kind"])
            backends.add(o["metadata"].get("annotations", {}).get("kvgen.dev/kv-cache-backend"))
    assert {"lmcache", "native"} <= backends and "StatefulSet" in kinds


def test_helm_test_pod_checks_vllm_health_through_the_service():
    values = values_of(GEMMA, drop=("namespace",))
    (pod,) = helm.hook_objects(values, name="prod", namespace="llm")
    pin = catalog.runtime()["testImage"]
    assert pod["kind"] == "Pod" and pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert pod["metadata"]["namespace"] == "llm" and pod["spec"]["restartPolicy"] == "Never"
    (container,) = pod["spec"]["containers"]
    assert container["image"] == f"{pin['repository']}:{pin['tag']}"
    assert container["command"][0] == "curl" and "--fail" in container["command"]
    assert container["command"][-1] == f"http://{values['name']}:{values.get('service', {}).get('port', 8000)}/health"
    security = container["securityContext"]
    assert security["runAsNonRoot"] and isinstance(security["runAsUser"], int) and security["runAsUser"] > 0
    # not a Service endpoint: it does not carry the vLLM pods' selector
    assert pod["metadata"]["labels"][KEY["name"]] != "vllm"
    kubernetes_validate.validate(pod, "1.33.0", strict=True)
    # kvgen renders no test pod
    assert "Pod" not in {o["kind"] for o in compile_spec(spec()).objects}


# ----------------------------------------------------------------------------- packaging


def test_helm_package_gives_a_chart_without_ci_values(tmp_path):
    result = helm_cli.run("package", str(helm.CHART), "-d", str(tmp_path))
    assert result.returncode == 0, result.stderr
    chart = load((helm.CHART / "Chart.yaml").read_text())
    (archive,) = tmp_path.glob("*.tgz")
    assert archive.name == f"kvgen-{chart['version']}.tgz"
    with tarfile.open(archive) as tar:
        members = set(tar.getnames())
    assert {
        "kvgen/Chart.yaml",
        "kvgen/values.schema.json",
        "kvgen/templates/validate.yaml",
        "kvgen/templates/tests/test-health.yaml",
        "kvgen/files/runtime.yaml",
    } <= members
    assert not any(m.startswith("kvgen/ci/") for m in members)


def test_artifact_hub_images_are_the_runtime_pins():
    chart = load((helm.CHART / "Chart.yaml").read_text())
    listed = {i["image"] for i in load(chart["annotations"]["artifacthub.io/images"])}
    rt = catalog.runtime()
    pins = [rt["vllm"]["image"], *rt["vllm"]["cpuImage"].values(), rt["testImage"]]
    pins.append({"repository": rt["runtimeImage"]["repository"], "tag": __version__})  # kvgen's runtime image
    assert listed == {
        f"{p['repository']}@{p['digest']}" if p.get("digest") else f"{p['repository']}:{p['tag']}" for p in pins
    }
    assert chart["annotations"]["artifacthub.io/license"] == "Apache-2.0"
    assert chart["icon"].endswith("charts/kvgen/icon.svg") and (helm.CHART / "icon.svg").is_file()
    assert chart["home"] in chart["sources"] and all(
        link["url"].startswith(chart["home"]) for link in load(chart["annotations"]["artifacthub.io/links"])
    )


@pytest.mark.heavy
def test_flux_helmrelease_example_installs_the_oci_chart_with_a_spec():
    docs = load_all((ROOT / "examples" / "flux" / "gemma-4-12b-helmrelease.yaml").read_text())
    repo, release = (d for d in docs if d)
    chart = load((helm.CHART / "Chart.yaml").read_text())
    assert (repo["apiVersion"], repo["kind"]) == ("source.toolkit.fluxcd.io/v1", "OCIRepository")
    assert repo["spec"]["url"].startswith("oci://") and repo["spec"]["url"].endswith("/kvgen")
    assert repo["spec"]["ref"]["semver"] == chart["version"]
    assert (release["apiVersion"], release["kind"]) == ("helm.toolkit.fluxcd.io/v2", "HelmRelease")
    assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": repo["metadata"]["name"]}
    assert release["metadata"]["namespace"] == repo["metadata"]["namespace"]
    values = release["spec"]["values"]
    objs = helm.raw_objects(values, name=release["spec"]["releaseName"], namespace=release["spec"]["targetNamespace"])
    assert {o["metadata"]["namespace"] for o in objs} == {"llm"}
    (ours,) = compile_text(dump(values), "values.yaml")
    assert helm.by_identity(helm.as_kvgen(objs, values, "llm")) == helm.by_identity(ours.objects)


def test_chart_readme_documents_oci_push_and_install():
    text = (helm.CHART / "README.md").read_text()
    assert "helm push kvgen-" in text and "helm install" in text and "oci://" in text
    assert "helm test" in text and "fullnameOverride" in text and "--namespace" in text


def test_schema_and_values_name_the_chart_only_keys():
    schema = json.loads((helm.CHART / "values.schema.json").read_text())
    assert {"fullnameOverride", "nameOverride"} <= set(schema["properties"])


def test_argocd_rendered_tree_has_a_destination_namespace_for_objects_without_one():
    app = load((ROOT / "examples" / "argocd" / "rendered-kustomize.yaml").read_text())
    assert app["spec"]["destination"]["namespace"]
