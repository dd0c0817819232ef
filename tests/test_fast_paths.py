"""The fast readers give what the reference readers give.

- Specs: ruamel.yaml's safe loader (C parser) for the data, the round-trip loader only when a
  position is asked for (kvgen.input.source).
- The templates' output: libyaml with ruamel.yaml's YAML 1.2 resolvers (kvgen.render.templates), falling
  back to ruamel.yaml where PyYAML's constructors could read a scalar differently.
"""

from __future__ import annotations

import io

import pytest
from conftest import EXAMPLES, ROOT, run_kvgen
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from kvgen.app.compiler import compile_document, compile_text
from kvgen.core.errors import SpecError
from kvgen.input import source
from kvgen.render import templates as render

INPUTS = EXAMPLES + sorted((ROOT / "tests" / "data").rglob("*.yaml"))


def typed(node):
    """A value with the type of every scalar, so that 1 == 1.0 == True do not hide a difference."""
    if isinstance(node, dict):
        return {k: typed(v) for k, v in node.items()}
    if isinstance(node, list):
        return [typed(v) for v in node]
    if node is None or isinstance(node, (str, int, float, bool)):
        return (type(node).__name__, node)
    return (type(node).__name__, repr(node))  # a tagged scalar, a timestamp: compared as shown


def reference(text: str, file: str = "x.yaml"):
    return source._load_round_trip(text, file)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_inputs_read_the_same_data_and_positions(path):
    text = path.read_text(encoding="utf-8")
    try:
        expected = reference(text, str(path))
    except SpecError as exc:
        with pytest.raises(SpecError) as got:
            source.load_documents(text, str(path))
        assert str(got.value) == str(exc)
        return
    docs = source.load_documents(text, str(path))
    assert [typed(d.data) for d in docs] == [typed(d.data) for d in expected]
    assert [d.positions for d in docs] == [d.positions for d in expected]
    assert [d.start_line for d in docs] == [d.start_line for d in expected]
    assert all(d.lines == tuple(text.splitlines()) for d in docs)


def test_a_valid_spec_is_never_read_by_the_round_trip_loader():
    text = (ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text()
    (doc,) = source.load_documents(text, "spec.yaml")
    compile_document(doc)
    assert doc._stream is not None and doc._stream._docs is None  # no position was needed


def test_a_problem_still_names_its_line_and_column():
    text = "name: demo\nmodel:\n  id: meta-llama/Llama-3.1-8B-Instruct\ninstance:\n  type: Standard_NC24ads_A100_v4\nbogus: 1\n"
    with pytest.raises(SpecError) as err:
        compile_text(text, "spec.yaml")
    assert "spec.yaml:6:1: " in str(err.value)


def test_a_spec_whose_comments_hold_yaml_indicators_takes_the_fast_path(monkeypatch):
    """'>', '|', '!' and '<<' in a comment are no syntax: such a spec is read by the C parser (the
    examples' comments say "maxReplicas > 1" and "publishers/<namespace>/models")."""
    text = (ROOT / "examples" / "metrics-pdb-keda.yaml").read_text()
    assert "> 1" in text
    text += "# | >- !tag <<: *x\n  # indented: |\nextra: 1 # trailing > comment\n"

    def refuse(text, file):
        raise AssertionError("read by the round-trip loader")

    monkeypatch.setattr(source, "_load_round_trip", refuse)
    (doc,) = source.load_documents(text, "spec.yaml")
    assert doc.data["extra"] == 1


@pytest.mark.parametrize(
    "text",
    [
        "a: |\n  x\n",  # a block scalar
        "a: >- # folded\n  x\n",  # its header, then a comment
        "a: |#\n  x\n",  # libyaml takes this header, ruamel.yaml refuses it
        "a: b\n# c\nd: !t x\n",  # a tag after a comment line
        "a: &x {b: 1}\nc:\n  <<: *x # merged\n",  # a merge key before a comment
        "a: 'it # is' |\n",  # a quote before the '#': nothing is cut
    ],
)
def test_yaml_indicators_outside_comments_still_take_the_exact_path(text, monkeypatch):
    calls = []
    exact = source._load_round_trip
    monkeypatch.setattr(source, "_load_round_trip", lambda t, f: calls.append(t) or exact(t, f))
    try:
        source.load_documents(text, "x.yaml")
    except SpecError:
        pass
    assert calls == [text]


@pytest.mark.heavy
def test_a_comment_the_round_trip_loader_cannot_place_is_a_problem_not_a_crash():
    """Found by the fuzzing below: ruamel.yaml's round-trip loader fails its own assertion here."""
    with pytest.raises(SpecError) as err:
        source.load_documents("\n\n| #\n", "x.yaml")
    assert "could not place a comment" in str(err.value)
    result = run_kvgen("validate", "-", input="\n\n| #\n", env={"KVGEN_REPLAY": "off"})
    assert result.returncode == 1 and "internal error" not in result.stderr


COMMENTED = [
    "a",
    "b: ",
    "- ",
    "\n",
    "\n  ",
    "|",
    ">",
    "|-",
    "!",
    "!!str ",
    "<<: ",
    "*x",
    "&x ",
    "#",
    " #",
    " # |",
    "\t#",
    "'",
    '"',
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    " ",
    "1",
]


@pytest.mark.heavy
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(COMMENTED), min_size=1, max_size=16).map("".join))
def test_text_with_comments_reads_as_the_round_trip_loader_reads_it(text):
    """Fuzzed near-YAML rich in comments, quotes and the indicators read only outside comments."""
    test_edge_inputs_read_as_the_round_trip_loader_reads_them(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # duplicate key: the round-trip loader's error
        "a: [1\n",  # malformed
        "a: &x {b: 1}\nc:\n  <<: *x\n  d: 2\n",  # merge key
        "a: !!str 12\nb: !custom x\n",  # tags
        "a: 2024-01-01\n",  # a timestamp
        "--- 1\n--- \n---\n[a, b]\n...\n--- {x: 1}\n",  # several documents, some empty
        "%YAML 1.1\n---\na: yes\nb: 017\n",  # YAML 1.1 by directive
        "a: 017\nb: 0o17\nc: 0x1F\nd: 1_000\ne: .inf\nf: 1e3\ng: on\nh: ~\ni: ''\nj: '1'\n1: x\ntrue: y\n~: z\n",
        "a: on\nb: [y, '1:20', 1:20, \"010\", 010]\n",  # what YAML 1.1 reads otherwise: a problem on both paths
        "x: &a [1, 2]\ny: *a\n",  # aliases: copied, not shared
        "a: " + "[" * 1500 + "]" * 1500 + "\n",  # nested beyond MAX_DEPTH, within what the C parser may compose
        "a:\n" + "".join("  " * i + "- \n" for i in range(1, 120)),  # block nesting beyond MAX_DEPTH
        "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
        + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefg", "bcdefgh", strict=True)
        ),  # an alias bomb
        "a: 9223372036854775807\nb: 9223372036854775808\n",  # 64-bit integers, and one beyond
        'a: "\\ud800"\n',  # a lone surrogate
        '{a: ["":]}\n',  # a quoted key ending a flow entry: libyaml reads {"": null}, ruamel refuses it
        "x: {'k':, b: 1}\n",  # the same in a flow mapping
        "{a: {c: =}, a: yes}\n",  # a duplicate key whose first value is a misfit: its words, not an address
        "?\n  : :\n",  # a complex key holding a mapping ruamel cannot hash: a problem, not a TypeError
        "?\n- :\n",
    ],
)
def test_edge_inputs_read_as_the_round_trip_loader_reads_them(text):
    try:
        expected = reference(text)
    except SpecError as exc:
        with pytest.raises(SpecError) as got:
            source.load_documents(text, "x.yaml")
        assert str(got.value) == str(exc)
        return
    docs = source.load_documents(text, "x.yaml")
    assert [typed(d.data) for d in docs] == [typed(d.data) for d in expected]
    assert [d.positions for d in docs] == [d.positions for d in expected]
    if text.startswith("x: &a [1, 2]"):
        assert docs[0].data["x"] == docs[0].data["y"] and docs[0].data["x"] is not docs[0].data["y"]


scalar_text = st.one_of(
    st.sampled_from(
        [
            "yes",
            "no",
            "on",
            "off",
            "true",
            "False",
            "null",
            "~",
            "017",
            "0o17",
            "0x1f",
            "1_0",
            "1e3",
            ".5",
            "-.inf",
            "12:30",
            "2024-01-01",
            "'q'",
            '"d"',
            "a: b",
            "- x",
            "#c",
            "@x",
            "x #y",
            "é",
            "",
        ]
    ),
    st.text(st.sampled_from(list("az09 .:-_/#'\"{}[],&*|>%@`?=~\t")), max_size=8),
)
spec_like = st.recursive(
    scalar_text,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), inner, max_size=4)
    ),
    max_leaves=15,
)


@pytest.mark.heavy
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), spec_like, min_size=1, max_size=5), st.booleans())
def test_random_documents_read_the_same(data, flow):
    """Plain scalars written unquoted in block or flow style, so that the resolvers decide."""
    y = YAML(typ="rt")
    y.default_flow_style = flow
    buf = io.StringIO()
    y.dump(data, buf)
    text = buf.getvalue()
    for token in ("'",):
        text = text.replace(token, "")  # unquote: let the loaders resolve what they see
    test_edge_inputs_read_as_the_round_trip_loader_reads_them(text)


# ----------------------------------------------------------------------------- templates' output


def ruamel_load_all(text: str):
    return list(YAML(typ="safe", pure=True).load_all(text))


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_template_output_parses_as_ruamel_parses_it(example):
    from conftest import kube_version_of

    for c in compile_text(example.read_text(), str(example), kube_version_of(example)):
        env = render.environment()
        ctx = c.context
        for name in render.TEMPLATES:
            text = env.get_template(name).render(c=ctx)
            assert typed(render._load_all()(text)) == typed(ruamel_load_all(text))


@pytest.mark.parametrize(
    "text",
    [
        "a: 017\nb: on\nc: 1e-05\nd: 0o17\ne: yes\nf: 0x1F\ng: 1_000\nh: 12:30\ni: .5\nj: -.inf\nl: ~\nm: 0b101\nn: +12\no: 1.\n",
        "a: 09\n",
        "a: 2024-01-01\n",
        "x: &a {b: 1}\ny: {<<: *a, c: 2}\n",
        "- !!str 12\n- !!binary aGk=\n",
        "a: True\nb: NULL\n",
    ],
)
def test_template_loader_reads_yaml_1_2_as_ruamel_does(text):
    assert typed(list(render._load_all()(text))) == typed(ruamel_load_all(text))


def test_template_loader_refuses_a_duplicate_key_as_ruamel_does():
    from ruamel.yaml.constructor import DuplicateKeyError

    with pytest.raises(DuplicateKeyError):
        render._load_all()("a: 1\na: 2\n")


def test_the_first_specs_and_the_later_ones_give_the_same_objects(monkeypatch):
    """The first render.SMALL_RUN specs of a process are read by ruamel.yaml, the later by libyaml."""
    (c,) = compile_text((ROOT / "examples" / "lmcache-in-container.yaml").read_text(), "x.yaml")
    ctx = c.context
    monkeypatch.setattr(render, "_rendered", 0)
    runs = [typed(render.objects(ctx)) for _ in range(render.SMALL_RUN + 2)]
    assert all(r == runs[0] for r in runs)


TOKENS = [
    "a",
    "b",
    "1",
    "x y",
    ":",
    ": ",
    "- ",
    "\n",
    "\n  ",
    "\n    ",
    "|",
    ">",
    "|-",
    "#",
    " #c",
    "'",
    '"',
    "[",
    "]",
    "{",
    "}",
    ",",
    " ",
    "\t",
    "&x ",
    "*x",
    "?",
    "...",
    "---",
    "%",
    "@",
    "`",
    "é",
    "\\",
    "~",
    "null",
    "017",
    "2024-01-01",
]


@pytest.mark.heavy
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=14).map("".join))
def test_any_text_reads_as_the_round_trip_loader_reads_it(text):
    """Fuzzed near-YAML: the same data or the same error as the round-trip path (libyaml is more
    lenient than ruamel's pure parser in places; those inputs must not take the fast path)."""
    test_edge_inputs_read_as_the_round_trip_loader_reads_them(text)


@pytest.mark.heavy
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(st.text(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()),
        min_size=1,
        max_size=4,
    )
)
def test_any_value_the_templates_write_reads_back_as_ruamel_reads_it(values):
    """Template values are written by render._json: libyaml and ruamel.yaml read them alike."""
    text = "".join(f"k{i}: {render._json(v)}\nl{i}:\n  - {render._json(v)}\n" for i, v in enumerate(values))
    assert typed(render._load_all()(text)) == typed(ruamel_load_all(text))
