"""Custom resources (PodMonitor, ServiceMonitor, ScaledObject) are validated strictly, like the
built-in kinds, against the CRD schemas vendored by scripts/vendor-crds."""

from __future__ import annotations

import copy
import importlib.machinery
import importlib.util
import json

import pytest
import yaml
from conftest import ROOT

from kvgen.data import kube

CRDS = ROOT / "charts/kvgen/files/crds"


def _vendor_crds():
    loader = importlib.machinery.SourceFileLoader("vendor_crds", str(ROOT / "scripts/vendor-crds"))
    spec = importlib.util.spec_from_loader("vendor_crds", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


vendor_crds = _vendor_crds()

POD_MONITOR = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "PodMonitor",
    "metadata": {"name": "demo", "labels": {"release": "prometheus"}},
    "spec": {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "demo"}},
        "podMetricsEndpoints": [{"port": "metrics", "path": "/metrics", "interval": "30s"}],
    },
}
SERVICE_MONITOR = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "ServiceMonitor",
    "metadata": {"name": "demo"},
    "spec": {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "demo"}},
        "endpoints": [{"port": "http", "path": "/metrics", "scrapeTimeout": "10s"}],
    },
}
SCALED_OBJECT = {
    "apiVersion": "keda.sh/v1alpha1",
    "kind": "ScaledObject",
    "metadata": {"name": "demo"},
    "spec": {
        "scaleTargetRef": {"name": "demo"},
        "minReplicaCount": 1,
        "maxReplicaCount": 4,
        "triggers": [
            {
                "type": "prometheus",
                "metadata": {
                    "serverAddress": "http://prometheus:9090",
                    "query": "sum(vllm:num_requests_waiting)",
                    "threshold": "5",
                },
            }
        ],
    },
}
VALID = [POD_MONITOR, SERVICE_MONITOR, SCALED_OBJECT]


@pytest.mark.parametrize("obj", VALID, ids=lambda o: o["kind"])
def test_a_valid_custom_resource_passes_both_validators(obj):
    assert kube.validate_object(obj) == []
    assert kube._valid(kube._fast(obj["kind"], obj["apiVersion"], "1.33"), obj)
    assert not list(kube._validator(obj["kind"], obj["apiVersion"], "1.33").iter_errors(obj))


def _broken(obj, path, value):
    obj = copy.deepcopy(obj)
    node = obj
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    "obj, path, value, message",
    [
        (POD_MONITOR, ("spec", "podMetricsEndpoints", 0, "bogus"), 1, "'bogus' was unexpected"),
        (POD_MONITOR, ("spec", "podMetricsEndpoints", 0, "port"), 8000, "8000 is not of type 'string'"),
        (POD_MONITOR, ("metadata", "labelz"), {}, "'labelz' was unexpected"),
        (POD_MONITOR, ("spec", "selector", "matchLabels", "a"), 1, "1 is not of type 'string'"),
        (SERVICE_MONITOR, ("spec", "endpoints", 0, "scheme"), "ftp", "is not one of"),
        (SERVICE_MONITOR, ("spec", "bogus"), True, "'bogus' was unexpected"),
        (SCALED_OBJECT, ("spec", "maxReplicaCount"), "4", "'4' is not of type 'integer'"),
        (SCALED_OBJECT, ("spec", "triggers", 0, "metadata", "threshold"), 5, "5 is not of type 'string'"),
        (SCALED_OBJECT, ("spec", "scaleTargetRef", "nam"), "x", "'nam' was unexpected"),
    ],
    ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else None,
)
def test_an_unknown_field_or_a_wrong_type_fails_with_its_path(obj, path, value, message):
    bad = _broken(obj, path, value)
    errors = kube.validate_object(bad)
    assert errors, bad
    where = path if "was unexpected" not in message else path[:-1]
    assert [p for p, m in errors if message in m] == [where], errors
    assert not kube._valid(kube._fast(bad["kind"], bad["apiVersion"], "1.33"), bad)


def test_a_missing_required_field_fails():
    bad = copy.deepcopy(SCALED_OBJECT)
    del bad["spec"]["scaleTargetRef"]
    assert kube.validate_object(bad) == [(("spec",), "'scaleTargetRef' is a required property")]


def test_an_unknown_kind_is_still_an_error():
    with pytest.raises(kube.UnsupportedVersion, match="no schema for Foo example.com/v1"):
        kube.validate_object({"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"}})
    with pytest.raises(kube.UnsupportedVersion):  # a vendored kind under another version
        kube.validate_object({**POD_MONITOR, "apiVersion": "monitoring.coreos.com/v1alpha1"})


def test_every_vendored_schema_is_recorded_with_its_source():
    index = yaml.safe_load((CRDS / "sources.yaml").read_text())["crds"]
    assert sorted(e["file"] for e in index) == sorted(p.name for p in CRDS.glob("*.json"))
    assert {(e["kind"], e["apiVersion"]) for e in index} >= {
        ("PodMonitor", "monitoring.coreos.com/v1"),
        ("ServiceMonitor", "monitoring.coreos.com/v1"),
        ("ScaledObject", "keda.sh/v1alpha1"),
    }
    for entry in index:
        assert entry["url"].startswith("https://") and entry["release"] in entry["url"]
        assert len(entry["sha256"]) == 64
        schema = json.loads((CRDS / entry["file"]).read_text())
        assert schema["properties"]["kind"]["enum"] == [entry["kind"]]
        assert schema["properties"]["apiVersion"]["enum"] == [entry["apiVersion"]]
        assert kube.crd_file(entry["kind"], entry["apiVersion"]) == CRDS / entry["file"]


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "description": "a widget",
                        "properties": {
                            "metadata": {"type": "object"},
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "properties": {
                                    "size": {
                                        "x-kubernetes-int-or-string": True,
                                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                                    },
                                    "port": {"x-kubernetes-int-or-string": True},
                                    "note": {"type": "string", "nullable": True, "default": "n"},
                                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                    "empty": {"type": "object"},
                                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                    "count": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
                                    "rules": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "atomic",
                                        "items": {"type": "object", "properties": {"a": {"type": "string"}}},
                                    },
                                },
                            },
                        },
                    }
                },
            },
            {"name": "v0", "served": False, "schema": {"openAPIV3Schema": {"type": "object"}}},
        ],
    },
}


def test_the_conversion_makes_the_schema_strict():
    [(kind, api_version, schema)] = vendor_crds.convert(CRD)
    assert (kind, api_version) == ("Widget", "example.com/v1")
    spec = schema["properties"]["spec"]
    assert schema["additionalProperties"] is False and spec["additionalProperties"] is False
    assert spec["properties"]["rules"]["items"]["additionalProperties"] is False
    assert "additionalProperties" not in spec["properties"]["free"]  # preserve-unknown-fields stays open
    assert spec["properties"]["empty"]["additionalProperties"] is False  # the API server would prune all of it
    assert spec["properties"]["labels"]["additionalProperties"] == {"type": "string"}
    assert spec["properties"]["note"] == {"type": ["string", "null"]}  # nullable; default and description gone
    assert spec["properties"]["port"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert spec["properties"]["count"] == {"type": "integer", "exclusiveMinimum": 0}
    assert schema["properties"]["metadata"] == {"$ref": vendor_crds.OBJECT_META}
    assert schema["properties"]["kind"] == {"type": "string", "enum": ["Widget"]}
    assert "description" not in json.dumps(schema)


def test_the_conversion_stops_at_a_keyword_it_does_not_know():
    crd = copy.deepcopy(CRD)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"]["if"] = {}
    with pytest.raises(vendor_crds.UnknownKeyword, match=r"\.spec\.size: unexpected keyword 'if'"):
        vendor_crds.convert(crd)


def test_the_script_writes_the_schema_and_records_its_source(tmp_path):
    source = tmp_path / "widgets.yaml"
    source.write_text(yaml.safe_dump(CRD))
    out = tmp_path / "crds"
    assert (
        vendor_crds.main(
            [str(source), "--url", "https://example.com/v9/widgets.yaml", "--release", "v9", "--out", str(out)]
        )
        == 0
    )
    [entry] = yaml.safe_load((out / "sources.yaml").read_text())["crds"]
    assert entry["file"] == "widget-example.com-v1.json" and entry["release"] == "v9"
    schema = json.loads((out / entry["file"]).read_text())
    assert schema["$id"] == "https://kubernetes.io/api/crds/widget/example.com/v1"
