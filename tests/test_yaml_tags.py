"""YAML's tag layer and YAML 1.1 readers (issue 20, classes 2 and 5).

Class 2: an explicit tag whose value does not fit it (``!!int lmcache``, ``!!set 5``), or a tag
kvgen does not take (``!!omap``, a custom tag), is a problem at its spec path with its file:line
(exit 1), never an internal error; in a native spec, in a KAITO ConfigMap's embedded
inference_config.yaml, and in an OUT manifest nested too deep for Python's stack.

Class 5: kvgen reads YAML 1.2, but kubectl (go-yaml v2) and Helm read YAML 1.1, where ``on``,
``yes``, ``y``, ``010``, ``1:20`` are not the strings they are to kvgen. Output quotes every such
string, so that every reader loads the same data.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from kvgen.cli import app

EXAMPLES = ROOT / "examples"
NATIVE = (EXAMPLES / "lmcache-tp2.yaml").read_text()
KAITO = (EXAMPLES / "seeds" / "kaito-gemma-4-12b.yaml").read_text()


def render(tmp_path, text: str, *args: str):
    f = tmp_path / "spec.yaml"
    f.write_text(text)
    result = CliRunner().invoke(app, ["render", str(f), *args])
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return f, result


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# --- class 2: explicit tags ---------------------------------------------------------------------------

# tagged value of parallelism.tensor -> fragment of the problem
MISFITS = {
    "!!int lmcache": "'lmcache' is tagged !!int but is not an integer",
    "!!int": "an empty value is tagged !!int but is not an integer",
    "!!float abc": "'abc' is tagged !!float but is not a number",
    "!!float": "an empty value is tagged !!float but is not a number",
    "!!bool maybe": "'maybe' is tagged !!bool but is not a boolean",
    "!!bool yes": "'yes' is tagged !!bool but is not a boolean",  # YAML 1.2: yes is a string
    '!!int "1:20"': "'1:20' is tagged !!int but is not an integer",
    "!!set 5": "a YAML !!set value is not supported here",
    "!!omap 5": "a YAML !!omap value is not supported here",
    "!!set {a}": "a YAML !!set mapping is not supported here",
    "!!omap [{a: 1}]": "a YAML !!omap list is not supported here",
    "!!int [2]": "a YAML !!int list is not supported here",
    "!custom 2": "a YAML !custom value is not supported here",
    "!custom {a: 1}": "a YAML !custom mapping is not supported here",
    "!!binary aGVsbG8=": "a YAML !!binary value is not supported here",
}


@pytest.mark.parametrize("tagged", sorted(MISFITS))
def test_a_value_that_does_not_fit_its_tag_is_a_problem_at_its_path(tmp_path, tagged):
    text = replace_once(NATIVE, "  tensor: 2\n", f"  tensor: {tagged}\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    line = line_of(text, "  tensor:")
    assert f"{f}:{line}:3: parallelism.tensor: {MISFITS[tagged]}" in result.stderr, result.stderr
    assert "nothing was written" in result.stderr


@pytest.mark.parametrize("tagged, value", [("!!int 2", 2), ('!!int "2"', 2), ("!!float 0.5", 0.5), ("!!str 2", "2"),
                                           ("!!null", None), ("!!float 1", 1.0)])
def test_a_value_that_fits_its_tag_is_read_as_that_type(tagged, value):
    from kvgen.source import load_documents

    [doc] = load_documents(f"a: {tagged}\n", "f.yaml")
    assert doc.data == {"a": value} and type(doc.data["a"]) is type(value)


def test_a_tagged_key_that_does_not_fit_is_a_problem(tmp_path):
    text = replace_once(NATIVE, "  tensor: 2\n", "  !!int x: 2\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    assert f"{f}:{line_of(text, '!!int x')}:3: parallelism.(!!int key): 'x' is tagged !!int" in result.stderr


def test_a_problem_under_an_omap_has_a_location(tmp_path):
    """ruamel records no position for an !!omap's keys (None): the locator crashed on it."""
    text = replace_once(NATIVE, "parallelism:\n  tensor: 2\n", "parallelism: !!omap\n  - tensor: x\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    assert f"{f}:{line_of(text, 'parallelism:')}:1: parallelism: a YAML !!omap list is not supported" in result.stderr


def test_locations_are_never_none_positions():
    from kvgen.source import SourceDoc, _Plain
    from ruamel.yaml.comments import CommentedOrderedMap

    omap = CommentedOrderedMap([("a", {"b": 1})])
    plain = _Plain("f.yaml", 0)
    plain(omap, ())
    assert all(isinstance(v, tuple) for v in plain.positions.values())
    assert str(SourceDoc("f.yaml", None, plain.positions, 0).locate(("a", "b"))) == "f.yaml:1:1"


@pytest.mark.parametrize("tagged, fragment", [
    ("!!float abc", "kv_cache_cpu_memory_utilization: is not valid YAML: 'abc' is tagged !!float but is not a number"),
    ("!!set 5", "kv_cache_cpu_memory_utilization: is not valid YAML: a YAML !!set value is not supported here"),
    ("!!int", "kv_cache_cpu_memory_utilization: is not valid YAML: an empty value is tagged !!int"),
])
def test_a_bad_tag_in_kaito_inference_config_is_a_problem_at_its_line(tmp_path, tagged, fragment):
    text = replace_once(KAITO, "    kv_cache_cpu_memory_utilization: 0.25\n", f"    kv_cache_cpu_memory_utilization: {tagged}\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    line = line_of(text, "    kv_cache_cpu_memory_utilization")
    assert f"{f}:{line}:5: data.inference_config.yaml.{fragment}" in result.stderr, result.stderr


def test_a_manifest_nested_100000_deep_is_not_a_kvgen_manifest(tmp_path):
    """json.loads nests recursively: 100,000 "[" raised RecursionError (exit 4)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(NATIVE)
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(app, ["render", str(spec), "-o", str(out), "--quiet"]).exit_code == 0
    (out / ".kvgen-manifest.json").write_text("[" * 100_000)
    result = runner.invoke(app, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "internal error" not in result.output
    assert ".kvgen-manifest.json is not a version-1 kvgen manifest (JSON nested too deep)" in result.stderr
