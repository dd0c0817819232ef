"""kvgen.render.emitter writes exactly what ruamel.yaml's dumper writes, or declines (None) and the
render falls back to ruamel.yaml."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import EXAMPLES, ROOT, kube_version_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvgen.app.compiler import compile_text
from kvgen.render import templates as render
from kvgen.render.emitter import Emitter

SHARED = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False))  # its memo grows across examples

tricky_text = st.lists(
    st.sampled_from(
        list("abcXYZ019 .:-_/#'\"{}[],&*!|>%@`?=~\\\t\n\x01é中") + ["true", "null", "0x1", "1e3", "---", "..."]
    ),
    max_size=12,
).map("".join)
plain_text = st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True)
single_line = st.one_of(
    tricky_text,
    plain_text,
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.floats(allow_nan=False),
    st.sampled_from(
        [
            "8000",
            "true",
            "True",
            "yes",
            "on",
            "~",
            "",
            " lead",
            "trail ",
            "a: b",
            "a #b",
            "- x",
            "--port=8000",
            "2024-01-01",
            "-1",
            ".inf",
            "x" * 1999,
            "x " * 1100,
            0.0,
            -0.0,
            1,
            True,
            1.0,
        ]
    ),
)
multi_line = st.one_of(
    st.sampled_from(["line\nline", "\nlead break", "end\n", "kept\n\n", " sp\nx", "a\n  - b\n", "---\nx", "x\n...\n"]),
    st.lists(st.one_of(tricky_text, plain_text), min_size=2, max_size=5).map("\n".join),
)
keys = st.one_of(
    tricky_text, plain_text, st.sampled_from(["name", "app.kubernetes.io/name", "true", "8080", "a" * 99, "a" * 130])
)
# the shapes kvgen renders: mappings of scalars, mappings, lists of scalars or of mappings
mappings = st.recursive(
    st.dictionaries(keys, st.one_of(single_line, multi_line), max_size=4),
    lambda inner: st.dictionaries(
        keys, st.one_of(single_line, multi_line, inner, st.lists(st.one_of(single_line, inner), max_size=3)), max_size=4
    ),
    max_leaves=25,
)
# and others, which the emitter must decline or get right
anything = st.recursive(
    st.one_of(single_line, multi_line, st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
    max_leaves=10,
)


def check(docs, fresh):
    emitter = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False)) if fresh else SHARED
    fast = emitter.dump_all(docs)
    if fast is not None:
        assert fast == render.ruamel_yaml(docs)
    return fast


@pytest.mark.heavy
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(mappings.filter(bool), min_size=1, max_size=3), st.booleans())
def test_kvgen_shapes_same_bytes_as_ruamel_or_none(docs, fresh):
    check(docs, fresh)


@pytest.mark.heavy
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.dictionaries(keys, anything, min_size=1, max_size=4), min_size=1, max_size=2), st.booleans())
def test_any_shape_same_bytes_as_ruamel_or_none(docs, fresh):
    check(docs, fresh)


@pytest.mark.heavy
def test_the_fast_path_is_taken_for_most_kvgen_shapes():
    """Not a vacuous property: most random documents of kvgen's shapes are written by the emitter."""
    taken = []

    @settings(
        max_examples=200,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(mappings.filter(bool), min_size=1, max_size=2))
    def run(docs):
        taken.append(check(docs, False) is not None)

    run()
    assert sum(taken) > 0.5 * len(taken)


@pytest.mark.heavy
def test_every_example_is_written_by_the_fast_path_and_equals_ruamel():
    for example in EXAMPLES:
        for c in compile_text(example.read_text(), str(example), kube_version_of(example)):
            fast = SHARED.dump_all(c.objects)
            assert fast is not None, example.name
            assert fast == render.ruamel_yaml(c.objects), example.name


def test_shapes_outside_kvgens_output_are_declined():
    e = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False))
    for docs in (
        [{"a": None}],
        [{"a": [[1]]}],
        [{"a": ["x\ny"]}],
        [{"a": "kept\n\n"}],
        [{1: "x"}],
        [{}],
        [[1]],
        [{"a" * 130: 1}],
        [{"a": "x " * 1500}],
    ):
        assert e.dump_all(docs) is None, docs
        render.ruamel_yaml(docs)  # what the render writes instead


def test_render_falls_back_to_ruamel_for_a_declined_shape():
    assert render.to_yaml([{"a": None, "b": [[1, 2]]}]) == render.ruamel_yaml([{"a": None, "b": [[1, 2]]}])


def test_rendering_imports_no_pure_python_yaml_emitter_for_the_examples():
    """ruamel's emitter runs once per distinct scalar, never once per document: after the
    first render of a spec, a render with another name asks ruamel only for the new names."""
    calls = []
    e = Emitter(lambda doc: calls.append(doc) or render.ruamel_yaml([doc], explicit_start=False))
    text = (ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text()
    (first,) = compile_text(text, "a.yaml")
    e.dump_all(first.objects)
    before = len(calls)
    (second,) = compile_text(text.replace("name: gemma-4-12b", "name: other-gemma"), "b.yaml")
    assert second.spec.name == "other-gemma"
    e.dump_all(second.objects)
    assert before > 0 and len(calls) - before <= 3


@pytest.mark.heavy
def test_cli_output_is_byte_identical_to_the_golden():
    out = subprocess.run(
        [sys.executable, "-m", "kvgen", "render", "-q", "examples/lmcache-in-container.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == (ROOT / "golden" / "lmcache-in-container.yaml").read_text()


def test_what_ruamel_said_is_kept_and_read_back():
    """The memo kvgen keeps in its cache dir: a new process that loads it asks ruamel nothing
    for a spec it has seen, and writes the same bytes."""
    calls = []
    first = Emitter(lambda doc: calls.append(doc) or render.ruamel_yaml([doc], explicit_start=False))
    (c,) = compile_text((ROOT / "examples" / "lmcache-disk-tier.yaml").read_text(), "a.yaml")
    expected = first.dump_all(c.objects)
    assert calls and first.unsaved
    stored = json.loads(json.dumps(first.export()))
    second_calls = []
    second = Emitter(lambda doc: second_calls.append(doc) or render.ruamel_yaml([doc], explicit_start=False))
    second.load(stored)
    assert not second.unsaved
    assert second.dump_all(c.objects) == expected == render.ruamel_yaml(c.objects)
    assert second_calls == []


def test_a_memo_of_another_shape_is_ignored():
    e = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False))
    for junk in (
        {},
        {"keys": [[1]]},
        {"keys": [], "values": [["complex", 1, " x"]], "items": [], "literals": []},
        [1],
        None,
    ):
        e.load(junk)
        assert e._learned == [] and e._values == {}


def _full_memo(n_values, n_literals=0):
    """A stored memo of other runs' scalars (what a fuzz run leaves in the cache dir)."""
    return {
        "keys": [],
        "values": [["int", 10**6 + i, f" {10**6 + i}"] for i in range(n_values)],
        "items": [],
        "literals": [[f"other\nscript {i}", "|-", ["other", f"script {i}"]] for i in range(n_literals)],
    }


def _launcher_spec():
    (c,) = compile_text((ROOT / "examples" / "lmcache-disk-tier.yaml").read_text(), "a.yaml")
    assert any("\n" in v for o in c.objects if o["kind"] == "ConfigMap" for v in o["data"].values())
    return c


def test_a_full_memo_still_learns_and_keeps_what_this_run_used():
    """A memo filled by earlier runs (Emitter.LIMIT scalars, Emitter.LITERALS blocks) must not
    freeze: what a run learns or uses is saved ahead of what it did not use, so the next run
    asks ruamel nothing for the same spec (before, a full memo never took the launcher script's
    block in, and every LMCache render dumped it with ruamel's pure-Python emitter)."""
    c = _launcher_spec()
    first = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False))
    first.load(_full_memo(Emitter.LIMIT, Emitter.LITERALS))
    expected = first.dump_all(c.objects)
    assert first.unsaved
    stored = json.loads(json.dumps(first.export()))
    assert len(stored["keys"]) + len(stored["values"]) + len(stored["items"]) <= Emitter.LIMIT
    assert len(stored["literals"]) <= Emitter.LITERALS
    calls = []
    second = Emitter(lambda doc: calls.append(doc) or render.ruamel_yaml([doc], explicit_start=False))
    second.load(stored)
    assert second.dump_all(c.objects) == expected == render.ruamel_yaml(c.objects)
    assert calls == [] and not second.unsaved


def test_the_memo_keeps_entries_a_run_used_before_those_it_did_not():
    c = _launcher_spec()
    first = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False))
    first.dump_all(c.objects)
    known = json.loads(json.dumps(first.export()))
    # a later run: the launcher's memo, then other runs' entries; it uses the launcher and learns one value
    second = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False))
    full = _full_memo(Emitter.LIMIT, Emitter.LITERALS)
    second.load({s: full[s] + known[s] for s in full})
    second.dump_all(c.objects)
    second.dump_all([{"a": 123456789}])
    stored = second.export()
    assert [m[0] for m in known["literals"]] == [m[0] for m in stored["literals"][: len(known["literals"])]]
    assert ["int", 123456789, " 123456789"] in stored["values"]
    assert all(entry in stored[s] for s in ("keys", "values", "items") for entry in known[s])


def test_a_memo_entry_is_taken_from_the_store_without_a_ruamel_call_in_the_batch():
    c = _launcher_spec()
    first = Emitter(lambda doc: render.ruamel_yaml([doc], explicit_start=False))
    first.dump_all(c.objects)
    calls = []
    second = Emitter(lambda doc: calls.append(doc) or render.ruamel_yaml([doc], explicit_start=False))
    second.load(json.loads(json.dumps(first.export())))
    second.prepare(c.objects)
    assert calls == []


@pytest.mark.heavy
def test_the_render_saves_its_memo_in_the_cache_dir(tmp_path):
    env = {**os.environ, "KVGEN_CACHE_DIR": str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    def run() -> str:
        return subprocess.run(
            [sys.executable, "-m", "kvgen", "render", "-q", "examples/kaito-gemma-4-12b.yaml"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout

    assert run() == (ROOT / "golden" / "kaito-gemma-4-12b.yaml").read_text()
    (memo,) = (tmp_path / "data").glob("emitter-*.json")
    assert json.loads(memo.read_text())["literals"]  # the launcher script's block, kept
    assert run() == (ROOT / "golden" / "kaito-gemma-4-12b.yaml").read_text()
