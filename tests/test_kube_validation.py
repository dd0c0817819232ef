"""kvgen.data.kube: the compiled (jsonschema-rs) validator of the pruned schemas gives the same
verdict as jsonschema on kubernetes-validate's own files, for valid and broken objects."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from functools import cache

import pytest
from budget import examples
from conftest import EXAMPLES, GOLDEN, ROOT, kube_version_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from kvgen.data import kube


@cache
def golden_objects() -> list[tuple[dict, str]]:
    loader = YAML(typ="safe", pure=True)
    out = []
    for example in EXAMPLES:
        version = kube_version_of(example)
        out += [(d, version) for d in loader.load_all((GOLDEN / example.name).read_text()) if d]
    return out


def reference_errors(obj: dict, version: str) -> list:
    return list(kube._validator(obj["kind"], obj["apiVersion"], version).iter_errors(obj))


def fast_verdict(obj: dict, version: str) -> bool:
    return kube._valid(kube._fast(obj["kind"], obj["apiVersion"], version), obj)


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, (*prefix, i))


@pytest.mark.heavy
def test_every_golden_object_is_valid_for_both():
    assert len(golden_objects()) > 40
    for obj, version in golden_objects():
        assert fast_verdict(obj, version), obj["kind"]
        assert not reference_errors(obj, version), obj["kind"]


REPLACEMENTS = ["x", "", 0, -1, 2**40, 2**70, 1.5, True, None, [], {}, {"zz": 1}, ["a"], [{"name": 1}]]


@pytest.mark.heavy
@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_broken_objects_get_the_same_verdict_from_both(data):
    obj, version = data.draw(st.sampled_from(golden_objects()))
    obj = copy.deepcopy(obj)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(paths(obj))))
        if not path:
            continue
        parent = obj
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "add-key", "delete"]))
        if action == "replace":
            parent[path[-1]] = copy.deepcopy(data.draw(st.sampled_from(REPLACEMENTS)))
        elif action == "add-key" and isinstance(parent[path[-1]], dict):
            parent[path[-1]][data.draw(st.sampled_from(["bogusField", "name", "port", "x-y"]))] = 1
        elif action == "delete":
            del parent[path[-1]]
    if not isinstance(obj.get("kind"), str) or not isinstance(obj.get("apiVersion"), str):
        return
    try:
        expected = not reference_errors(obj, version)
    except kube.UnsupportedVersion:
        return
    assert fast_verdict(obj, version) == expected, json.dumps(obj)[:400]


@pytest.mark.parametrize(
    "name, data, valid",
    [
        ("io.k8s.api.core.v1.Toleration", {"key": "a", "operator": "Exists", "effect": "NoSchedule"}, True),
        ("io.k8s.api.core.v1.Toleration", {"key": "a", "bogus": 1}, False),
        ("io.k8s.api.core.v1.Toleration", {"tolerationSeconds": "ten"}, False),
        ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", {"resources": {"requests": {"storage": "1Gi"}}}, True),
        ("io.k8s.api.core.v1.PersistentVolumeClaimSpec", {"resources": {"requests": {"storage": []}}}, False),
    ],
)
def test_definitions_get_the_same_verdict_from_both(name, data, valid):
    assert kube._valid(kube._fast_definition(name, "1.33"), data) is valid
    assert (not list(kube._definition_validator(name, "1.33").iter_errors(data))) is valid
    assert (kube.validate_definition(name, data, "1.33") == []) is valid


def test_errors_are_still_every_error_with_jsonschema_messages():
    bad = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "x"},
        "spec": {"ports": [{"port": "eighty"}], "bogus": 1},
    }
    errors = kube.validate_object(bad)
    assert [p for p, _m in errors] == [("spec",), ("spec", "ports", 0, "port")]
    assert "'bogus' was unexpected" in errors[0][1]


def test_pruning_refuses_a_keyword_it_does_not_know():
    with pytest.raises(kube.SchemaShapeError):
        kube.prune({"properties": {"a": {"if": {"type": "string"}}}}, {})


def test_pruning_keeps_a_property_named_description():
    defs = {
        "X": {
            "description": "an X",
            "properties": {"description": {"type": "string", "description": "d"}},
            "additionalProperties": False,
        }
    }
    pruned = kube.prune({"$ref": "#/$defs/X"}, defs)
    assert pruned["$defs"]["X"] == {"properties": {"description": {"type": "string"}}, "additionalProperties": False}


@pytest.mark.heavy
def test_valid_output_never_imports_the_python_validator():
    """jsonschema (about 120 ms to import) is only for messages about invalid objects."""
    code = (
        "import sys, contextlib, io, kvgen.app.cli\n"
        "sys.argv = ['kvgen', 'render', '--quiet', 'examples/kaito-gemma-4-12b.yaml']\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: kvgen.app.cli.main()\n"
        "    except SystemExit: pass\n"
        "print('jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip().splitlines()[-1] == "False"
