"""The committed JSON Schema is the one the models generate, and it agrees with kvgen."""

from __future__ import annotations

import json

import jsonschema
import pytest
from ruamel.yaml import YAML

from conftest import EXAMPLES, ROOT, run_kvgen
from kvgen.schema import schema_text, spec_schema

SCHEMA_FILE = ROOT / "schemas" / "kvgen.schema.json"


def test_committed_schema_is_not_stale():
    assert SCHEMA_FILE.read_text() == schema_text(), "schemas/kvgen.schema.json is stale: run scripts/regenerate"


def test_cli_prints_the_schema():
    result = run_kvgen("schema")
    assert result.returncode == 0
    assert json.loads(result.stdout) == json.loads(SCHEMA_FILE.read_text())


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_satisfies_the_schema(example):
    data = YAML(typ="safe", pure=True).load(example.read_text())
    jsonschema.Draft202012Validator(spec_schema()).validate(data)


def test_schema_is_closed_and_rejects_a_typo():
    validator = jsonschema.Draft202012Validator(spec_schema())
    bad = {"name": "x", "model": {"id": "a/b"}, "instance": {"type": "t"}, "kvCacheOffloding": {}}
    errors = list(validator.iter_errors(bad))
    assert any("kvCacheOffloding" in e.message for e in errors)


def _walk(node, path=""):
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            yield f"{path}.{key}", value
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}[{i}]")


def test_every_field_has_a_description():
    schema = spec_schema()
    missing = []
    for path, prop in _walk(schema):
        target = prop
        if "$ref" in prop and "description" not in prop:
            missing.append(path)
        elif "description" not in target:
            missing.append(path)
    assert missing == []
