"""extraObjects: the user's own Kubernetes objects, rendered verbatim after kvgen's on both faces;
the refusals (each at its path, with its hint) and the unknown-kind warning alike on both; the
strict schema check of a known kind at extraObjects[i] (kvgen's face; the chart leaves it to the
API server)."""

from __future__ import annotations

import copy
import json

import helm
import pytest
from conftest import EXAMPLES, KVGEN_KINDS, compile_spec, dump, kube_version_of, problem_set, run_kvgen, spec
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_text
from kvgen.data import kube

load = YAML(typ="safe", pure=True).load
TOKEN = {"id": "meta-llama/Llama-3.1-8B-Instruct", "hfTokenSecret": {"name": "hf-token", "key": "HF_TOKEN"}}

NETWORK_POLICY = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": {"name": "demo-from-gateway", "annotations": {"team": "ml"}},
    "spec": {
        "podSelector": {"matchLabels": {"app.kubernetes.io/instance": "demo"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gateway"}}}],
                "ports": [{"protocol": "TCP", "port": 8000}],
            }
        ],
    },
}
CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "demo-settings"},
    "data": {"VLLM_LOGGING_LEVEL": "INFO", "on": "yes", "empty": ""},  # YAML 1.1 words stay strings
}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}}


def _spec(*objects: dict, **overrides) -> dict:
    return spec(model=TOKEN, extraObjects=[copy.deepcopy(o) for o in objects], **overrides)


# ----------------------------------------------------------------------------- rendered verbatim, last


def test_both_faces_render_the_objects_verbatim_after_kvgens_own():
    values = _spec(CONFIG_MAP, NETWORK_POLICY)
    c = compile_spec(values)
    assert c.objects[-2:] == [CONFIG_MAP, NETWORK_POLICY]  # in the order written, untouched: no labels, no namespace
    own = c.objects[:-2]
    assert own and all(o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kvgen" for o in own)
    documents = c.yaml.split("---\n")
    assert load(documents[-2]) == CONFIG_MAP and load(documents[-1]) == NETWORK_POLICY
    chart = helm.objects(values)
    assert helm.by_identity(chart) == helm.by_identity(c.objects)


def test_the_chart_adds_no_namespace_and_no_labels_to_them():
    values = _spec(NETWORK_POLICY, commonLabels={"team": "ml"}, commonAnnotations={"owner": "ml"})
    raw = helm.raw_objects(values, namespace="llm")
    assert [o for o in raw if o["kind"] == "NetworkPolicy"] == [NETWORK_POLICY]
    assert compile_spec(values).objects[-1] == NETWORK_POLICY


def test_output_is_deterministic_and_keeps_the_written_order():
    forward = compile_spec(_spec(NETWORK_POLICY, CONFIG_MAP))
    again = compile_spec(_spec(NETWORK_POLICY, CONFIG_MAP))
    assert forward.yaml == again.yaml
    backward = compile_spec(_spec(CONFIG_MAP, NETWORK_POLICY))
    assert [o["kind"] for o in forward.objects[-2:]] == ["NetworkPolicy", "ConfigMap"]
    assert [o["kind"] for o in backward.objects[-2:]] == ["ConfigMap", "NetworkPolicy"]


def test_no_extra_objects_changes_nothing():
    assert compile_spec(_spec()).yaml == compile_spec(spec(model=TOKEN)).yaml


# ----------------------------------------------------------------------------- refusals, alike on both faces

SECRET_HINT = "create the Secret outside kvgen (kubectl, External Secrets, Sealed Secrets) and reference it"
REFUSED = {
    "missing-fields": (
        _spec({"kind": "NetworkPolicy", "metadata": {"labels": {"a": "b"}}}, {"apiVersion": "v1", "metadata": "x"}),
        {
            (
                "extraObjects[0].apiVersion",
                "required: the object's API group and version, a string such as networking.k8s.io/v1",
                None,
            ),
            ("extraObjects[0].metadata.name", "required: the object's name, a string", None),
            ("extraObjects[1].kind", "required: the object's kind, a string such as NetworkPolicy", None),
            ("extraObjects[1].metadata.name", "required: the object's name, a string", None),
        },
    ),
    "wrong-types": (
        _spec({"apiVersion": 1, "kind": "", "metadata": {"name": 7}}),
        {
            (
                "extraObjects[0].apiVersion",
                "required: the object's API group and version, a string such as networking.k8s.io/v1",
                None,
            ),
            ("extraObjects[0].kind", "required: the object's kind, a string such as NetworkPolicy", None),
            ("extraObjects[0].metadata.name", "required: the object's name, a string", None),
        },
    ),
    "secret-values": (
        _spec(
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}, "stringData": {"token": "hunter2"}},
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}, "data": {"token": "aHVudGVyMg=="}},
        ),
        {
            (
                f"extraObjects[{i}].{key}",
                "a Secret's values would be written into kvgen's output (a file, a Git "
                "repository, a Helm release): kvgen never writes secret values",
                SECRET_HINT,
            )
            for i, key in ((0, "stringData"), (1, "data"))
        },
    ),
    "the-same-object-twice": (
        _spec(CONFIG_MAP, {**CONFIG_MAP, "data": {"b": "2"}}, {**CONFIG_MAP, "metadata": {"name": "other"}}),
        {
            (
                "extraObjects[1].metadata.name",
                "ConfigMap 'demo-settings' is also extraObjects[0]: the same object twice",
                "remove one of them, or rename it",
            ),
        },
    ),
    "another-namespace": (
        _spec(
            {**CONFIG_MAP, "metadata": {"name": "a", "namespace": "gateway"}},
            {**CONFIG_MAP, "metadata": {"name": "b", "namespace": "llm"}},
            namespace="llm",
        ),
        {
            (
                "extraObjects[0].metadata.namespace",
                "'gateway' differs from the namespace the server is installed into, 'llm' (the spec's namespace, helm -n, kvgen --namespace)",
                "leave metadata.namespace out (the object then goes where the server goes), or install the server into gateway",
            )
        },
    ),
    "one-of-kvgens-own": (
        _spec(
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "demo"}, "spec": {"ports": [{"port": 80}]}},
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo-lmcache-launcher"}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "demo"}},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "demo"}},  # none rendered: fine
        ),
        {
            (
                f"extraObjects[{i}].metadata.name",
                f"{kind} {name!r} is kvgen's own {api} {kind} {name!r}: one of them would replace the other",
                "rename it, or set what you need through the spec's own fields (see `kvgen schema`)",
            )
            for i, api, kind, name in (
                (0, "v1", "Service", "demo"),
                (1, "v1", "ConfigMap", "demo-lmcache-launcher"),
                (2, "apps/v1", "Deployment", "demo"),
            )
        },
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_extra_objects_refused_alike_on_both_faces(case):
    values, expected = REFUSED[case]
    assert problem_set(values) == expected
    assert helm.problems(values) == expected


@pytest.mark.heavy
def test_the_release_namespace_counts_as_the_specs():
    values = _spec({**CONFIG_MAP, "metadata": {"name": "a", "namespace": "gateway"}})
    assert helm.problems(values, namespace="default") == set()  # Helm cannot tell -n default from no -n
    (problem,) = helm.problems(values, namespace="llm")
    assert problem[0] == "extraObjects[0].metadata.namespace" and "'llm'" in problem[1]
    result = run_kvgen("render", "--namespace", "llm", "-", input=dump(values))
    assert result.returncode == 1 and "extraObjects[0].metadata.namespace: 'gateway' differs" in result.stderr


@pytest.mark.heavy
def test_problems_name_the_line_of_the_object(tmp_path):
    f = tmp_path / "spec.yaml"
    f.write_text(dump(_spec({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dg=="}})))
    result = run_kvgen("render", str(f))
    assert result.returncode == 1 and result.stdout == ""
    line = next(i for i, text in enumerate(f.read_text().splitlines(), 1) if text.strip().startswith("data:"))
    assert f"{f}:{line}:" in result.stderr and "extraObjects[0].data: a Secret's values" in result.stderr
    assert "dg==" not in result.stderr


# ----------------------------------------------------------------------------- schemas: validated, or a warning

UNKNOWN_WARNING = "extraObjects[1]: example.com/v1 Widget is not validated: kvgen has no schema for it"


def test_a_kind_without_a_schema_is_rendered_with_the_same_warning_on_both_faces():
    values = _spec(CONFIG_MAP, WIDGET)
    c = compile_spec(values)
    assert c.plan.warnings == [UNKNOWN_WARNING]
    assert c.objects[-1] == WIDGET
    objs, notes = helm.objects_and_warnings(values)
    assert notes == [UNKNOWN_WARNING]
    assert helm.by_identity(objs) == helm.by_identity(c.objects)
    (deployment,) = [o for o in c.objects if o["kind"] == "Deployment"]
    assert deployment["metadata"]["annotations"]["kvgen.dev/warnings"] == UNKNOWN_WARNING


@pytest.mark.heavy
def test_strict_refuses_an_unknown_kind_on_both_faces(tmp_path):
    values = _spec(CONFIG_MAP, WIDGET)
    f = tmp_path / "spec.yaml"
    f.write_text(dump(values))
    result = run_kvgen("render", "--strict", str(f))
    assert result.returncode == 1 and UNKNOWN_WARNING in result.stderr and result.stdout == ""
    strict = {**values, "strict": True}
    expected = {
        (
            "strict",
            UNKNOWN_WARNING,
            "change the spec so that it no longer warns, or remove strict: true to render with the warning",
        )
    }
    assert problem_set(strict) == expected
    assert helm.problems(strict) == expected


@pytest.mark.heavy
@pytest.mark.parametrize(("version", "known"), [("1.33", False), ("1.34", True)])
def test_which_kinds_have_a_schema_follows_the_kubernetes_version_alike(version, known):
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpus"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
    }
    values = _spec(claim)
    assert kube.has_schema("resource.k8s.io/v1", "DeviceClass", version) is known
    expected = (
        []
        if known
        else ["extraObjects[0]: resource.k8s.io/v1 DeviceClass is not validated: kvgen has no schema for it"]
    )
    assert compile_spec(values, version).plan.warnings == expected
    _objs, _context, notes = helm.objects_context_and_warnings(values, kube_version=version)
    assert notes == expected


def test_a_schema_error_in_a_known_kind_is_a_problem_at_the_objects_path():
    bad = copy.deepcopy(NETWORK_POLICY)
    bad["spec"]["podSelectr"] = bad["spec"].pop("podSelector")
    bad["spec"]["ingress"][0]["ports"][0]["protocol"] = 6
    problems = problem_set(_spec(CONFIG_MAP, bad))
    assert problems == {
        ("extraObjects[1].spec", "'podSelector' is a required property", None),
        ("extraObjects[1].spec", "Additional properties are not allowed ('podSelectr' was unexpected)", None),
        ("extraObjects[1].spec.ingress[0].ports[0].protocol", "6 is not of type 'string', 'null'", None),
    }


def test_a_crd_kvgen_vendors_is_validated_too():
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "gateway"},
        "spec": {"selector": {}, "endpoint": [{"port": "http"}]},
    }
    assert problem_set(_spec(monitor)) == {
        ("extraObjects[0].spec", "Additional properties are not allowed ('endpoint' was unexpected)", None),
        ("extraObjects[0].spec", "'endpoints' is a required property", None),
    }


@pytest.mark.heavy
def test_kube_kinds_json_is_current():
    assert (helm.CHART / "files" / kube.KINDS_FILE).read_text() == kube.kinds_text()


# ----------------------------------------------------------------------------- the chart knows kvgen's own objects

OWN_TEMPLATE = "templates/kvgen-own-objects.json"


@pytest.mark.heavy
def test_the_charts_list_of_kvgens_own_objects_is_what_kvgen_renders():
    """kvgen.extraObjectClashes compares with kvgen.ownObjects (from the context), kvgen with the
    rendered objects themselves: for every native example, both name the same objects."""
    chart = helm.context_chart(
        ((OWN_TEMPLATE, '{{ include "kvgen.ownObjects" (include "kvgen.context" . | fromJson) }}\n'),)
    )
    kinds = set()
    hpa = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "vllm_num_requests_waiting"},
            "target": {"type": "AverageValue", "averageValue": "5"},
        },
    }
    more = [  # what no example renders: a ServiceMonitor, an HPA
        spec(
            model=TOKEN,
            metrics={"serviceMonitor": True},
            autoscaling={"minReplicas": 1, "maxReplicas": 3, "hpa": {"metrics": [hpa]}},
        ),
        spec(  # GKE's policies
            model=TOKEN,
            replicas=2,
            routing={"mode": "gateway", "gateway": {"parentRefs": [{"name": "gw"}], "provider": "gke"}},
        ),
    ]
    for example in [*EXAMPLES, *more]:
        text = example.read_text() if not isinstance(example, dict) else dump(example)
        version = kube_version_of(example) if not isinstance(example, dict) else "1.33"
        compiled = compile_text(text, str(example), version)
        if len(compiled) != 1 or compiled[0].conversion is not None:
            continue  # KAITO, KServe, several documents: not one chart release's values
        (c,) = compiled
        own = c.objects[: len(c.objects) - len(c.spec.extra_objects)]
        rendered = helm.render(load(text), kube_version=version, chart_=chart)
        (text,) = [t for name, t in rendered.items() if name.endswith("kvgen-own-objects.json")]
        listed = [(o["apiVersion"], o["kind"], o["name"]) for o in json.loads(text)]
        assert sorted(listed) == sorted((o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in own), str(example)
        kinds |= {kind for _a, kind, _n in listed}
    assert kinds == KVGEN_KINDS


@pytest.mark.heavy
def test_render_o_replaces_its_own_file_holding_extra_objects(tmp_path):
    """The output directory's form check (kvgen.output.tree.written_by_kvgen) takes the unlabelled
    extraObjects after kvgen's own objects: a second render replaces the first one's file."""
    f, out = tmp_path / "spec.yaml", tmp_path / "out"
    f.write_text(dump(_spec(CONFIG_MAP)))
    assert run_kvgen("render", "--quiet", str(f), "-o", str(out)).returncode == 0
    f.write_text(dump(_spec({**CONFIG_MAP, "data": {"VLLM_LOGGING_LEVEL": "DEBUG"}})))
    second = run_kvgen("render", "--quiet", str(f), "-o", str(out))
    assert second.returncode == 0, second.stderr
    assert "VLLM_LOGGING_LEVEL: DEBUG" in (out / "demo.yaml").read_text()
    assert run_kvgen("render", "--check", str(f), "-o", str(out)).returncode == 0
