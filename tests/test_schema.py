"""The committed JSON Schema is the one the models generate, and it agrees with kvgen."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import EXAMPLES, ROOT, run_kvgen
from ruamel.yaml import YAML

from kvgen.spec.schema import schema_text, spec_schema

SCHEMA_FILE = ROOT / "schemas" / "kvgen.schema.json"


def test_committed_schema_is_not_stale():
    assert SCHEMA_FILE.read_text() == schema_text(), "schemas/kvgen.schema.json is stale: run scripts/regenerate"


@pytest.mark.heavy
def test_cli_prints_the_schema():
    result = run_kvgen("schema")
    assert result.returncode == 0
    assert json.loads(result.stdout) == json.loads(SCHEMA_FILE.read_text())


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_satisfies_the_schema(example):
    data = YAML(typ="safe", pure=True).load(example.read_text())
    jsonschema.Draft202012Validator(spec_schema()).validate(data)


def test_schema_is_closed_and_rejects_a_typo():
    validator = jsonschema.Draft202012Validator(spec_schema())
    bad = {"name": "x", "model": {"id": "a/b"}, "instance": {"type": "t"}, "kvCacheOffloding": {}}
    errors = list(validator.iter_errors(bad))
    assert any("kvCacheOffloding" in e.message for e in errors)


def _fields(schema, path):
    """Every declared property of an object schema (constraint sub-schemas such as oneOf or
    if/then repeat property names without declaring fields, so they are not walked)."""
    for key, prop in schema.get("properties", {}).items():
        yield f"{path}.{key}", prop
        yield from _fields(prop, f"{path}.{key}")
        if isinstance(prop.get("items"), dict):
            yield from _fields(prop["items"], f"{path}.{key}[]")


def test_every_field_has_a_description():
    schema = spec_schema()
    declared = list(_fields(schema, "spec"))
    for name, definition in schema["$defs"].items():
        declared += list(_fields(definition, name))
    assert len(declared) > 100
    assert [path for path, prop in declared if "description" not in prop] == []


SCHEMA_LEVEL = [
    "unknown-key",
    "negative-size",
    "emptydir-and-pvc",
    "neither-emptydir-nor-pvc",
    "pvc-spec-and-ref",
    "missing-ref-name",
    "native-without-cpu",
    "invalid-name",
    "utilization-above-one",
    "utilization-below-zero",
    "wrong-type",
    "invalid-embedded-pvc-spec",
]


@pytest.mark.heavy
@pytest.mark.parametrize("case", SCHEMA_LEVEL)
def test_schema_alone_rejects_the_structural_bad_inputs(case):
    """Editors and Helm (values.schema.json) see these problems without running kvgen."""
    from bad_specs import CASES

    data = YAML(typ="safe", pure=True).load(CASES[case][0])
    assert list(jsonschema.Draft202012Validator(spec_schema()).iter_errors(data)), case


def test_schema_accepts_native_with_utilization_zero_and_no_cpu():
    data = {
        "name": "x",
        "model": {"id": "a/b"},
        "instance": {"type": "t"},
        "kvCacheOffloading": {"backend": "native", "cpuMemoryUtilization": 0},
    }
    assert not list(jsonschema.Draft202012Validator(spec_schema()).iter_errors(data))
