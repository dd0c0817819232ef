"""The chart under Helm's rules (issue 23): usable as a subchart (Helm passes `global` to it), the
release name and namespace decide unless the values say otherwise, and a conflict between the spec
and the release is a problem naming both; one default Kubernetes version for kvgen and the chart."""

from __future__ import annotations

import json
import shutil

import helm
import helm_cli
import helm_python
from conftest import ROOT, dump, run_kvgen
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text

load = YAML(typ="safe", pure=True).load
GEMMA = ROOT / "examples" / "kaito-gemma-4-12b.yaml"


def values_of(path, drop=()):
    values = load(path.read_text())
    for key in drop:
        values.pop(key, None)
    return values


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
    values = {"global": {"imageRegistry": "registry.example.com", "team": {"name": "ml"}}, "kvgen": sub_values}
    (root / "values.yaml").write_text(dump(values))
    return root


def test_the_chart_schema_accepts_helms_global_values_kvgens_spec_does_not():
    values = {**values_of(GEMMA), "global": {"foo": 1}}
    ours = helm.objects(values_of(GEMMA))
    assert helm.objects(values) == ours  # accepted and ignored
    result = run_kvgen("render", "-", input=dump(values))
    assert result.returncode == 1 and "global" in result.stderr  # a spec is no umbrella chart's values


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
