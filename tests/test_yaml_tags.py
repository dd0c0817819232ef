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
from conftest import ROOT
from typer.testing import CliRunner

from kvgen.app.cli import app

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


@pytest.mark.heavy
@pytest.mark.parametrize("tagged", sorted(MISFITS))
def test_a_value_that_does_not_fit_its_tag_is_a_problem_at_its_path(tmp_path, tagged):
    text = replace_once(NATIVE, "  tensor: 2\n", f"  tensor: {tagged}\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    line = line_of(text, "  tensor:")
    assert f"{f}:{line}:3: parallelism.tensor: {MISFITS[tagged]}" in result.stderr, result.stderr
    assert "nothing was written" in result.stderr


@pytest.mark.parametrize(
    "tagged, value",
    [("!!int 2", 2), ('!!int "2"', 2), ("!!float 0.5", 0.5), ("!!str 2", "2"), ("!!null", None), ("!!float 1", 1.0)],
)
def test_a_value_that_fits_its_tag_is_read_as_that_type(tagged, value):
    from kvgen.input.source import load_documents

    [doc] = load_documents(f"a: {tagged}\n", "f.yaml")
    assert doc.data == {"a": value} and type(doc.data["a"]) is type(value)


def test_a_tagged_key_that_does_not_fit_is_a_problem(tmp_path):
    text = replace_once(NATIVE, "  tensor: 2\n", "  !!int x: 2\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    assert f"{f}:{line_of(text, '!!int x')}:3: parallelism.x: 'x' is tagged !!int" in result.stderr


@pytest.mark.parametrize("merged", ["!!int\n    a: 1", "!!set\n    ? a", "[1, 2]", "!!str x"])
def test_a_merge_key_of_something_else_than_mappings_is_a_problem(tmp_path, merged):
    """``!!merge vllm: !!int {...}`` handed ruamel's merge a value kvgen had set aside (fuzzed: exit 4)."""
    text = NATIVE + f"extra:\n  !!merge key: {merged}\n"
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    assert f"{f}:{line_of(text, '!!merge key')}:" in result.stderr
    assert "a merge key (<<) takes a mapping or a list of mappings" in result.stderr


def test_a_problem_under_an_omap_has_a_location(tmp_path):
    """ruamel records no position for an !!omap's keys (None): the locator crashed on it."""
    text = replace_once(NATIVE, "parallelism:\n  tensor: 2\n", "parallelism: !!omap\n  - tensor: x\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    assert f"{f}:{line_of(text, 'parallelism:')}:1: parallelism: a YAML !!omap list is not supported" in result.stderr


def test_locations_are_never_none_positions():
    from ruamel.yaml.comments import CommentedOrderedMap

    from kvgen.input.source import SourceDoc, _Plain

    omap = CommentedOrderedMap([("a", {"b": 1})])
    plain = _Plain("f.yaml", 0)
    plain(omap, ())
    assert all(isinstance(v, tuple) for v in plain.positions.values())
    assert str(SourceDoc("f.yaml", None, plain.positions, 0).locate(("a", "b"))) == "f.yaml:1:1"


@pytest.mark.parametrize(
    "tagged, fragment",
    [
        (
            "!!float abc",
            "kv_cache_cpu_memory_utilization: is not valid YAML: 'abc' is tagged !!float but is not a number",
        ),
        ("!!set 5", "kv_cache_cpu_memory_utilization: is not valid YAML: a YAML !!set value is not supported here"),
        ("!!int", "kv_cache_cpu_memory_utilization: is not valid YAML: an empty value is tagged !!int"),
    ],
)
def test_a_bad_tag_in_kaito_inference_config_is_a_problem_at_its_line(tmp_path, tagged, fragment):
    text = replace_once(
        KAITO, "    kv_cache_cpu_memory_utilization: 0.25\n", f"    kv_cache_cpu_memory_utilization: {tagged}\n"
    )
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


# --- class 5: YAML 1.1 readers ------------------------------------------------------------------------

YAML11_STRINGS = [
    "on",
    "off",
    "yes",
    "no",
    "y",
    "Y",
    "n",
    "N",
    "On",
    "NO",
    "1:20",
    "010",
    "0o17",
    "1_000",
    ".Inf",
    "~",
    "Null",
    "2001-12-14",
    "=",
    "<<",
    "0x1F",
    "1e3",
    "+1",
    "0b101",
    "-.5",
    "3.",
]


def _readers_agree(text: str) -> list:
    """The documents of ``text`` as a YAML 1.1 reader (PyYAML's safe loader, as kubectl's go-yaml v2
    heritage reads YAML) and a YAML 1.2 reader (ruamel.yaml) load them; both the same."""
    import yaml
    from ruamel.yaml import YAML

    yaml11 = [d for d in yaml.load_all(text, Loader=yaml.SafeLoader) if d is not None]
    yaml12 = [d for d in YAML(typ="safe", pure=True).load_all(text) if d is not None]
    assert yaml11 == yaml12, text
    return yaml12


@pytest.mark.parametrize("value", YAML11_STRINGS)
def test_a_string_that_yaml_1_1_reads_otherwise_is_written_quoted(value):
    from kvgen.render import templates as render

    doc = {"metadata": {"name": value, value: value}, "args": [value]}
    for text in (render.to_yaml([doc]), render.ruamel_yaml([doc])):
        assert _readers_agree(text) == [doc], text


@pytest.mark.parametrize("value", [1e20, 1e-05, -2.5e-300, 1.0, float("inf"), 2**63 - 1])
def test_a_number_is_written_as_yaml_1_1_reads_it_too(value):
    """ruamel writes 1e+20, a string to YAML 1.1 (its floats need a dot): kvgen writes 1.0e+20."""
    from kvgen.render import templates as render

    doc = {"a": value, "l": [value]}
    for text in (render.to_yaml([doc]), render.ruamel_yaml([doc])):
        assert _readers_agree(text) == [doc], text


@pytest.mark.heavy
def test_a_name_yaml_1_1_reads_as_a_boolean_is_quoted_and_the_chart_agrees(tmp_path):
    """name: "on" (quoted: a string to every reader) names every object "on"; the output quotes it,
    so kubectl applies a string, and the chart renders the same objects."""
    import helm as chart

    text = replace_once(NATIVE, "name: qwen3-32b-tp2\n", 'name: "on"\n')
    f, result = render(tmp_path, text)
    assert result.exit_code == 0, result.output
    assert "name: 'on'\n" in result.stdout
    objects = _readers_agree(result.stdout)
    assert {o["metadata"]["name"] for o in objects} >= {"on"}
    from ruamel.yaml import YAML

    values = YAML(typ="safe", pure=True).load(text)
    assert chart.by_identity(chart.objects(values)) == chart.by_identity(objects)
    for template, out in chart.render(values).items():
        if template.endswith(".yaml"):
            _readers_agree(out)


@pytest.mark.parametrize(
    "plain, reading",
    [
        ("on", "a string to YAML 1.2 (kvgen) but a boolean to YAML 1.1 (Helm, kubectl)"),
        ("y", "a string to YAML 1.2 (kvgen) but a boolean to YAML 1.1 (Helm, kubectl)"),
        ("1:20", "a string to YAML 1.2 (kvgen) but an integer to YAML 1.1 (Helm, kubectl)"),
    ],
)
def test_a_plain_value_yaml_1_1_reads_otherwise_is_a_problem_at_its_line(tmp_path, plain, reading):
    """Helm reads a values file as YAML 1.1: `name: on` is the boolean true to the chart, which
    refuses it, and the string "on" to kvgen. Both refuse it: kvgen says how to write it."""
    text = replace_once(NATIVE, "name: qwen3-32b-tp2\n", f"name: {plain}\n")
    f, result = render(tmp_path, text)
    assert result.exit_code == 1, result.output
    assert f"{f}:{line_of(text, 'name:')}:1: name: {plain!r} written plain is {reading}" in result.stderr
    assert f'write it in quotes for the string ("{plain}")' in result.stderr


def test_an_octal_looking_integer_is_a_problem():
    from kvgen.input.source import SpecError, load_documents

    with pytest.raises(SpecError) as exc:
        load_documents("replicas: 010\n", "f.yaml")
    assert "'010' written plain is the integer 10 to YAML 1.2 (kvgen) but octal 8 to YAML 1.1" in str(exc.value)


def test_a_workflow_in_a_directory_is_still_skipped_for_its_on_key(tmp_path):
    """A CI workflow's `on:` is a YAML 1.1 boolean: not kvgen's file, so skipped, not a problem."""
    import shutil

    shutil.copy(EXAMPLES / "ci" / "github-actions.yaml", tmp_path / "workflow.yaml")
    (tmp_path / "spec.yaml").write_text(NATIVE)
    result = CliRunner().invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "skipped" in result.stderr and "workflow.yaml: not a kvgen spec" in result.stderr


# --- the output property: every reader loads the same data --------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SCALARS = st.one_of(
    # no NEL, U+2028, U+2029: ruamel.yaml writes them as raw line breaks, which every reader folds (not a 1.1 matter)
    st.sampled_from(YAML11_STRINGS),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x85\u2028\u2029"), max_size=8),
    st.from_regex(r"[-+]?[0-9_.:eoxbO]{1,8}", fullmatch=True),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.booleans(),
)
KEYS = st.one_of(st.sampled_from(YAML11_STRINGS), st.from_regex(r"[A-Za-z0-9._/:-]{1,10}", fullmatch=True))
DOCS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


@pytest.mark.heavy
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(st.dictionaries(KEYS, DOCS, min_size=1, max_size=5), min_size=1, max_size=3))
def test_every_output_loads_the_same_in_yaml_1_1_and_yaml_1_2(docs):
    """Whatever kvgen writes (its emitter, or ruamel.yaml where the emitter declines), a YAML 1.1
    reader and a YAML 1.2 reader load the same data, and it is what was written."""
    from kvgen.render import templates as render

    for text in (render.to_yaml(docs), render.ruamel_yaml(docs)):
        loaded = _readers_agree(text)
        assert loaded == docs


@pytest.mark.heavy
def test_every_example_renders_to_what_yaml_1_1_and_yaml_1_2_read_alike():
    from conftest import kube_version_of

    for example in sorted(EXAMPLES.glob("*.yaml")):
        result = CliRunner().invoke(
            app, ["render", str(example), "--quiet", "--kube-version", kube_version_of(example)]
        )
        assert result.exit_code == 0, (example, result.output)
        assert _readers_agree(result.stdout)


@pytest.mark.heavy
@pytest.mark.parametrize("written, accepted", [("on", False), ('"on"', True), ("'y'", True), ("y", False)])
def test_helm_and_kvgen_agree_on_a_value_yaml_1_1_reads_otherwise(tmp_path, written, accepted):
    """The real helm reads the values file as YAML 1.1: `name: on` is a boolean, which the chart's
    schema refuses; kvgen refuses it too. Quoted, both accept it and both outputs read the same in
    YAML 1.1 and 1.2."""
    helm_cli = pytest.importorskip("helm_cli")
    import helm

    text = replace_once(NATIVE, "name: qwen3-32b-tp2\n", f"name: {written}\n")
    f, result = render(tmp_path, text)
    chart = helm_cli.run("template", "prod", str(helm.CHART), "-f", str(f))
    assert (result.exit_code == 0, chart.returncode == 0) == (accepted, accepted), (result.output, chart.stderr)
    if accepted:
        name = written.strip("'\"")
        for out in (result.stdout, chart.stdout):
            assert name in {o["metadata"]["name"] for o in _readers_agree(out)}
    else:
        assert "got boolean, want string" in chart.stderr
        assert f"name: {written!r} written plain is a string to YAML 1.2 (kvgen) but a boolean" in result.stderr


def test_convert_writes_a_native_spec_that_yaml_1_1_and_kvgen_read_alike(tmp_path):
    """`kvgen convert` writes a native spec, which is also a Helm values file: a name "on" is quoted,
    so Helm reads a string and kvgen reads its own output back."""
    text = replace_once(
        (EXAMPLES / "seeds" / "kserve-qwen2-7b.yaml").read_text(),
        "  name: qwen2-7b-kv-cache-offloading\n",
        '  name: "on"\n',
    )
    f = tmp_path / "isvc.yaml"
    f.write_text(text)
    result = CliRunner().invoke(app, ["convert", str(f)])
    assert result.exit_code == 0, result.output
    assert "name: 'on'\n" in result.stdout
    [native] = _readers_agree(result.stdout)
    assert native["name"] == "on"
    _, again = render(tmp_path, result.stdout, "--instance", "Standard_NC24ads_A100_v4")
    assert again.exit_code == 0, again.output


_TAG_SHAPES = [
    "",
    "~",
    "null",
    "Null",
    "NULL",
    "true",
    "True",
    "false",
    "yes",
    "Yes",
    "no",
    "NO",
    "on",
    "Off",
    "y",
    "Y",
    "n",
    "N",
    "0",
    "010",
    "0o17",
    "0x1F",
    "0b101",
    "-0b1",
    "+12",
    "1_000",
    "1:20",
    "-1:20:30",
    "190:20:30.15",
    "1.5",
    ".5",
    "1.",
    "1e3",
    "1.0e+20",
    "-.inf",
    ".Inf",
    ".nan",
    ".NaN",
    "2024-01-01",
    "2001-12-14t21:59:43.10-05:00",
    "<<",
    "=",
    "-_",
    "-",
    ".",
    "_",
    "+",
    "name",
    "8000",
    "--port=8000",
    "a: b",
    "1e",
    "0.",
    "0_1",
    "12:",
    "é",
    "中文",
    " x",
]


@pytest.mark.parametrize("version", [(1, 1), (1, 2)])
def test_the_fixed_version_resolver_tags_every_plain_scalar_as_ruamels_own_does(version):
    """plain_tags.fixed_resolver (kvgen.render.emitter's YAML 1.2 check, plain_tags.yaml11_tag's YAML 1.1 one)
    skips VersionedResolver's per-scalar version lookup: the tags must be ruamel's own."""
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    from kvgen.core.plain_tags import fixed_resolver

    fixed, reference = fixed_resolver(version), VersionedResolver(version=version)
    texts = _TAG_SHAPES + [t + s for t in _TAG_SHAPES for s in ("x", "0", ".0", ":00")]
    for text in texts:
        for implicit in ((True, False), (False, True)):
            assert str(fixed.resolve(ScalarNode, text, implicit)) == str(
                reference.resolve(ScalarNode, text, implicit)
            ), text
