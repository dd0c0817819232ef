"""The context (kvgen/context/types.py) is the contract between kvgen and its chart: both build it
from the same values and data, key by key, and the object templates only lay it out. A parity
failure names the first key path that differs."""

from __future__ import annotations

import json
import re

import helm
import pytest
from conftest import EXAMPLES, compile_spec, kube_version_of, problem_set, spec
from parity import CONTEXT, assert_same_context, assert_same_plan, empty_values
from ruamel.yaml import YAML

from kvgen.context import layout
from kvgen.data import catalog
from tools import chart_templates

load = YAML(typ="safe", pure=True).load
CHART_CONTEXT = (helm.CHART / "templates" / "context" / "_context.tpl").read_text()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_has_the_same_context_in_kvgen_and_the_chart(example):
    assert_same_context(load(example.read_text()), kube_version_of(example))


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_has_the_same_plan_document_in_kvgen_and_the_chart(example):
    assert_same_plan(load(example.read_text()), kube_version_of(example))


def test_a_parity_failure_names_the_field():
    ours = {"workloads": [{"pod": {"vllm": {"args": ["a", "--port=8000"]}}}], "name": "x"}
    theirs = {"workloads": [{"pod": {"vllm": {"args": ["a", "--port=8001"]}}}], "name": "x"}
    assert (
        helm.first_difference(ours, theirs)
        == "workloads[0].pod.vllm.args[1]: kvgen '--port=8000', the chart '--port=8001'"
    )
    assert helm.first_difference({"a": {"b": 1}}, {"a": {}}) == "a.b: kvgen has 1, the chart leaves it out"
    assert helm.first_difference({"n": 2}, {"n": 2.0}) is None  # Helm's JSON numbers are floats
    assert helm.first_difference({"n": True}, {"n": 1}) == "n: kvgen True, the chart 1"


def test_the_context_is_typed_and_strict():
    ours = compile_spec(spec()).context
    CONTEXT.validate_python(ours)
    assert empty_values({"a": {"b": [1, ""]}, "env": [{"name": "X", "value": ""}]}) == ["a.b[1]"]
    with pytest.raises(ValueError, match="claim_template"):
        CONTEXT.validate_python({**ours, "claim_template": {}})  # camelCase only
    with pytest.raises(ValueError, match="launcher"):
        CONTEXT.validate_python({**ours, "launcher": None})  # absent is a missing key, not null


def test_each_piece_of_the_layout_is_one_documented_define():
    """kvgen.layout builds the context in named pieces (templates/context/_context.tpl, the order), each one
    define of a file of templates/context/ with what it sets and a Usage line (bitnami's style)."""
    (called,) = re.findall(r"range \$piece := list ((?:\"\w+\" ?)+)", CHART_CONTEXT)
    pieces = [p.strip('"') for p in called.split()]
    layout_files = {p.name: p.read_text() for p in (helm.CHART / "templates" / "context").glob("_*.tpl")}
    for piece in pieces:
        (text,) = [t for t in layout_files.values() if f'{{{{- define "kvgen.context.{piece}" -}}}}' in t]
        doc = text[: text.index(f'{{{{- define "kvgen.context.{piece}" -}}}}')].rsplit("{{/*", 1)[1]
        assert (
            doc.startswith(f"\nkvgen.context.{piece}:")
            and f'Usage: {{{{- include "kvgen.context.{piece}" $s -}}}}' in doc
        )
        assert f"t_kvgen_context_{piece}" in layout.DEFINES[f"kvgen.context.{piece}"].__name__
    defined = {d for t in layout_files.values() for d in re.findall(r'define "kvgen\.context\.(\w+)"', t)}
    assert defined == set(pieces)


# ----------------------------------------------------------------------------- wiring is data

WIRING_CHANGES = {
    "    port: &lmcachePort 5555": "    port: &lmcachePort 6555",
    "    chunkSize: 256": "    chunkSize: 512",
    "    host: 127.0.0.1 ": "    host: 127.0.0.2 ",
    "    httpPort: &lmcacheHttpPort 8080": "    httpPort: &lmcacheHttpPort 8090",
    '{since: "0.4.4", path: /api/healthcheck}': '{since: "0.4.4", path: /api/ready}',
    '{since: "0.4.5", path: /healthcheck}': '{since: "0.4.5", path: /ready}',
    "triggerWatermark: 0.8, ratio: 0.2": "triggerWatermark: 0.7, ratio: 0.3",
    "    dir: /opt/kvgen": "    dir: /opt/kv",
    "    mode: 365": "    mode: 320",
    "    then: --then": "    then: --and-then",
    "  tierMountPrefix: /mnt/kv-cache-": "  tierMountPrefix: /kv/tier-",
    "  modelCacheMount: /root/.cache": "  modelCacheMount: /cache",
    "  masterPort: &masterPort 29500": "  masterPort: &masterPort 29600",
    "    multiNodeHost: 0.0.0.0": "    multiNodeHost: 10.0.0.9",
    "    groupIndexLabel: leaderworkerset.sigs.k8s.io/group-index": "    groupIndexLabel: example.com/group",
    "    groupIndexEnv: KVGEN_LWS_GROUP_INDEX": "    groupIndexEnv: EXAMPLE_GROUP",
    "    restartPolicy: RecreateGroupOnPodRestart": "    restartPolicy: None",
    "    name: app.kubernetes.io/name": "    name: example.com/name",
    "    nodeRole: kvgen.dev/node-role": "    nodeRole: example.com/rank",
    "    podIndex: apps.kubernetes.io/pod-index": "    podIndex: example.com/index",
    "    instanceType: node.kubernetes.io/instance-type": "    instanceType: example.com/instance",
    "    offloading: kvgen.dev/kv-cache-offloading": "    offloading: example.com/offloading",
    "    launcherSha256: kvgen.dev/lmcache-launcher-sha256": "    launcherSha256: example.com/launcher",
}
# one spec per place the wiring reaches, with the new values that must show in its context
WIRED = {
    "sidecar": (
        spec(kvCacheOffloading={"secondary": [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}]}),
        [
            '"6555"',
            '"512"',
            "tcp://127.0.0.2",
            "--http-url=http://127.0.0.2:8090",
            "--health-path=0.4.5:/ready",
            "--health-path=0.4.4:/api/ready",
            'trigger_watermark\\":0.7',
            'eviction_ratio\\":0.3',
            '"/opt/kv/lmcache_launcher.py"',
            '"defaultMode": 320',
            '"/kv/tier-0"',
            '"/cache"',
            '"example.com/name"',
            '"example.com/instance"',
            '"example.com/offloading"',
            '"example.com/launcher"',
        ],
    ),
    "in-container": (
        spec(kvCacheOffloading={"lmcache": {"gpuAccess": "in-container"}}),
        [
            '"--and-then"',
            '"6555"',
            "--http-url=http://127.0.0.2:8090",
            "--health-path=0.4.5:/ready",
            '"mountPath": "/opt/kv"',
        ],
    ),
    "native": (
        spec(
            kvCacheOffloading={
                "backend": "native",
                "cpu": "10Gi",
                "secondary": [{"fileSystem": {"emptyDir": {"size": "10Gi"}}}],
            }
        ),
        ['\\"root_dir\\":\\"/kv/tier-0\\"', '"/cache"'],
    ),
    "multi-node": (
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
            parallelism={"tensor": 8, "nodes": 2},
        ),
        [
            "--master-port=29600",
            '"port": 29600',
            '"example.com/rank"',
            "metadata.labels['example.com/index']",
            '"10.0.0.9"',
            "tcp://demo-worker-1.demo-headless:6555",
        ],
    ),
    "multi-node-lws": (
        spec(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            instance={"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
            parallelism={"tensor": 8, "nodes": 2},
            multiNode={"engine": "leaderworkerset"},
        ),
        [
            '"restartPolicy": "None"',
            '"EXAMPLE_GROUP"',
            "metadata.labels['example.com/group']",
            "tcp://demo-$(EXAMPLE_GROUP)-1.demo:6555",
            '"10.0.0.9"',
        ],
    ),
}
# today's values: none may be left in a context built from the changed file
GONE = [
    "5555",
    "8080",
    "/healthcheck",
    "127.0.0.1",
    '"256"',
    "0.8",
    "/opt/kvgen",
    '"--then"',
    "/mnt/kv-cache-",
    "/root/.cache",
    "29500",
    "app.kubernetes.io/name",
    "kvgen.dev/node-role",
    "apps.kubernetes.io/pod-index",
    "node.kubernetes.io/instance-type",
    'kvgen.dev/kv-cache-offloading"',
    "lmcache-launcher-sha256",
    '"defaultMode": 365',
    "KVGEN_LWS_GROUP_INDEX",
    "leaderworkerset.sigs.k8s.io/group-index",
    "RecreateGroupOnPodRestart",
]


@pytest.fixture
def rewired(monkeypatch):
    """runtime.yaml with every wiring value changed, for kvgen and for a copy of the chart."""
    text = (helm.CHART / "files" / "runtime.yaml").read_text()
    for old, new in WIRING_CHANGES.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    data = YAML(typ="safe", pure=True).load(text)
    monkeypatch.setattr(catalog, "runtime", lambda: data)
    return (("files/runtime.yaml", text),)


@pytest.mark.parametrize("case", sorted(WIRED))
def test_both_faces_take_the_wiring_from_runtime_yaml(rewired, case):
    values, expected = WIRED[case]
    ours = assert_same_context(values, replaced=rewired)
    ours.pop("launcher", None)  # the launcher script documents today's defaults
    text = json.dumps(ours, indent=0)
    assert [e for e in expected if e not in text] == []
    assert [g for g in GONE if g in text] == []


def test_the_ports_kvgen_refuses_for_service_port_follow_the_wiring(rewired):
    """podPorts aliases the wiring's ports in runtime.yaml: with the LMCache port moved to 6555,
    kvgen refuses service.port 6555 and no longer 5555 (the default spec runs the LMCache server)."""
    assert problem_set(spec(service={"port": 6555})) == {
        (
            "service.port",
            "port 6555 is the LMCache MP server's request port (lmcache server --port, LMCache 0.5.6 default); "
            "vLLM could not bind it in the same pod",
            "pick another port, e.g. 8000",
        )
    }
    assert problem_set(spec(service={"port": 5555})) == set()


# ----------------------------------------------------------------------------- object templates exist once


def test_kvgens_jinja_templates_are_generated_from_the_charts():
    """templates/*.j2 are the chart's object templates translated (scripts/regenerate)."""
    generated = chart_templates.generate()
    assert sorted(generated) == sorted(p.name for p in chart_templates.JINJA_TEMPLATES.glob("*.j2"))
    for name, text in generated.items():
        assert (chart_templates.JINJA_TEMPLATES / name).read_text() == text, (
            f"templates/{name} is stale: run scripts/regenerate"
        )


def test_the_translation_keeps_go_semantics():
    t = chart_templates._Translator("x.yaml", {'"kvgen.podTemplate"': "_pod.yaml.j2"})
    # a present, non-empty value is true, as in Go; comparisons and logic read the same
    assert t.translate('{{- if $pod.env }}a{{- else if not (eq $w.kind "X") }}b{{ end -}}') == (
        '{%- if (pod.env is defined and pod.env) %}a{%- elif not (w.kind == "X") %}b{% endif -%}'
    )
    assert t.translate("{{ toJson $c.labels }}") == "{{ c.labels | json }}"
    assert t.translate('{{- include "kvgen.podTemplate" $w.pod | nindent 4 }}') == (
        '{{- "\\n" ~ podTemplate(w.pod) | indent(4, first=True) }}'
    )
    assert t.imports == {"podTemplate": "_pod.yaml.j2"}


@pytest.mark.parametrize(
    "source",
    [
        "{{ $x := 1 }}",  # a layout computes nothing
        '{{ printf "%d" $c.n }}',  # nor formats
        "{{ if $c.a }}open",  # every block ends
        '{{ include "kvgen.context" . }}',
    ],
)
def test_the_translation_refuses_what_it_does_not_know(source):
    t = chart_templates._Translator("charts/kvgen/templates/x.yaml", {})
    with pytest.raises(chart_templates.TranslationError, match="charts/kvgen/templates/x.yaml"):
        t.translate(source)
