"""kvgen's layout is the chart's, translated (tools/gotemplate.py -> kvgen/context/layout.py): the
translation is current, and what it computes is what Helm v4 computes from the same template, held here
case by case on the Go and Sprig semantics the layout relies on (the examples and the generated specs of
tests/test_chart_property.py hold the whole layout)."""

from __future__ import annotations

import ast
import copy
import shutil
import tempfile
from pathlib import Path

import helm
import helm_python
import pytest
from conftest import EXAMPLES, compile_spec, kube_version_of, spec

from kvgen.app.compiler import compile_text
from kvgen.context import gotmpl, layout, run
from kvgen.plan.document import document
from tools import gotemplate

# each case: a define's body, rendered by Helm and by its translation from the same values
VALUES = {
    "n": 8000,
    "f": 0.92,
    "whole": 1.0,
    "big": 1e21,
    "tiny": 0.00001,
    "zero": 0,
    "no": False,
    "s": "a<b>&c é",
    "ctl": "tab\there\bback\fform\x01one\u2028line",
    "m": {"b": 2, "a": {"x": 1}, "c": ""},
    "l": ["x", None, "y"],
}
CASES = {
    "printf": '{{ printf "%d|%s|%v|%q|%c|%02x|%v|%v|%v|%v" (int64 .n) .s .f .s 65 10 .whole .big .tiny .m }}',
    "printf-wrong-verb": '{{ printf "%d %s" .f (int64 3) }}',  # a literal 3 is Go's int: kvgen's runtime has int64 only
    "tojson": "{{ toJson . }}",
    # the text toJson wrote is what fromJson reads back, whatever happens to the map afterwards
    "tojson-then-set": '{{- $d := dict "a" (list 1) -}}{{- $j := toJson $d -}}{{- $_ := set $d "b" 2 -}}{{- $_ := set $d "a" (append $d.a 3) -}}{{ toJson (fromJson $j) }}',
    "prettyjson": "{{ toPrettyJson .m }}",
    "merge-takes-empty": '{{ toJson (merge (dict "a" false "b" 0 "c" "" "d" 1 "e" (dict "x" 1)) (dict "a" true "b" 5 "c" "z" "d" 2 "e" (dict "x" 2 "y" 3) "f" nil)) }}',
    "merge-many": '{{ toJson (merge (dict) (deepCopy .m) (dict "a" (dict "z" 9) "b" 7 "d" (list 1))) }}',
    "merge-overwrite": '{{ toJson (mergeOverwrite (dict "a" 1 "b" (dict "x" 1 "y" 2) "c" (list 1) "d" "keep" "e" 5) (dict "a" "" "b" (dict "x" 9) "c" (list) "e" nil "f" 0)) }}',
    # merge puts the source's own map into the destination: a later merge into it changes the source
    "merge-aliases": '{{- $m := dict "a" (dict "x" 1) -}}{{- $d := merge (dict) $m -}}{{- $_ := merge $d (dict "a" (dict "z" 9)) -}}{{ toJson $m }}',
    "division": "{{ div -7 2 }} {{ mod -7 2 }} {{ div 7 -2 }} {{ max 3 9 1 }} {{ sub 1 5 }} {{ mul 3 .n }} {{ add 1 2 3 }}",
    "casts": '{{ int64 "12" }} {{ int64 3.9 }} {{ int64 nil }} {{ toString (int64 .n) }} {{ toString .f }} {{ float64 "1.5" }} {{ toString nil }}',
    "default": '{{ default "d" .zero }} {{ default "d" .no }} {{ default "d" "" }} {{ default "d" .missing }} {{ default "d" .n }}',
    "truth": '{{ if .m }}m{{ end }}{{ if .zero }}z{{ end }}{{ if .l }}l{{ end }}{{ if (dict) }}e{{ end }}{{ and 1 0 2 }} {{ or 0 "" "x" }} {{ not .no }}',
    "range-map": "{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}{{ range .l }}[{{ . }}]{{ end }}{{ range $i, $x := .l }}{{ $i }}{{ end }}",
    "range-else": "{{ range (list) }}x{{ else }}none{{ end }} {{ range $i := until 3 }}{{ $i }}{{ end }}",
    "with": "{{ with .m.a }}{{ .x }}{{ end }}{{ with .missing }}x{{ else }}w{{ end }}{{ with $y := .n }}{{ $y }}{{ end }}",
    "scopes": "{{- $x := 1 -}}{{- range $i := until 2 -}}{{- $x := 5 -}}{{- end -}}{{- if true -}}{{- $x = 2 -}}{{- end -}}{{ $x }}",
    "strings": '{{ join "," .l }} {{ replace "a" "b" "banana" }} {{ upper "x" }} {{ contains "an" "banana" }} {{ regexMatch "^b.n" "banana" }} {{ sha256sum "x" }} {{ trunc 3 "banana" }}|{{ trunc -2 "banana" }}|{{ trunc 9 "ab" }}|{{ trunc -9 "ab" }}|{{ trunc 0 "ab" }}',
    "lists": '{{ toJson (concat (list 1) (list 2 3)) }} {{ toJson (rest (list 1 2)) }} {{ first (list 4 5) }} {{ has 2 (list 1 2) }} {{ toJson (sortAlpha (list "b" "a" "C")) }} {{ toJson (untilStep 1 9 3) }} {{ len .l }}',
    "maps": '{{ toJson (pick .m "a" "z") }} {{ toJson (omit .m "a") }} {{ hasKey .m "c" }} {{ toJson (keys .m | sortAlpha) }} {{ index .m "a" "x" }} {{ index .l 2 }} {{ .m.nothing }}',
    "kinds": '{{ kindIs "map" .m }} {{ kindIs "string" .s }} {{ kindIs "invalid" .missing }} {{ kindIs "slice" .l }} {{ ternary "t" "f" (eq (int64 .n) 8000) }} {{ eq "a" "b" "a" }} {{ ne 1 2 }}',
    "set-unset": '{{- $d := dict "a" 1 -}}{{- $_ := set $d "b" (list) -}}{{- $_ := unset $d "a" -}}{{ toJson $d }} {{ toJson (deepCopy .m) }}',
}


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    """Each case as Helm v4 renders it (helm-python-sdk's engine): templates/<case>.yaml includes its define."""
    root = Path(tempfile.mkdtemp(prefix="kvgen-gotemplate-")) / "cases"
    try:
        (root / "templates").mkdir(parents=True)
        (root / "Chart.yaml").write_text("apiVersion: v2\nname: cases\nversion: 0.1.0\n", encoding="utf-8")
        defines = "".join(f'{{{{- define "case.{name}" -}}}}{body}{{{{- end -}}}}\n' for name, body in CASES.items())
        (root / "templates" / "_cases.tpl").write_text(defines, encoding="utf-8")
        for name in CASES:
            (root / "templates" / f"{name}.yaml").write_text(
                f'{{{{- include "case.{name}" .Values -}}}}', encoding="utf-8"
            )
        out = helm.render(VALUES, name="cases", chart_=helm_python.Chart.load(str(root)))
        return {Path(k).stem: v for k, v in out.items() if k.endswith(".yaml")}
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def translated() -> dict[str, object]:
    defines = "".join(f'{{{{- define "case.{name}" -}}}}{body}{{{{- end -}}}}\n' for name, body in CASES.items())
    return gotemplate.translate_text(defines, "cases.tpl")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_translation_computes_what_helm_computes(case, rendered, translated):
    ours = translated[f"case.{case}"](ast.literal_eval(repr(VALUES)))
    # Helm's engine writes a file with every "<no value>" (a nil printed) taken out
    assert ours.replace("<no value>", "") == rendered[case]


def test_kvgens_layout_is_the_charts_translated():
    """kvgen/context/layout.py is tools/gotemplate.py's translation of the chart's kvgen.layout (scripts/regenerate)."""
    assert gotemplate.OUTPUT.read_text(encoding="utf-8") == gotemplate.translate(), (
        "kvgen/context/layout.py is stale: run scripts/regenerate"
    )
    assert set(layout.DEFINES) >= {"kvgen.layout", "kvgen.context.vllm", "kvgen.isSet"}


@pytest.mark.parametrize(
    "body, why",
    [
        ('{{ nosuchfunction "x" }}', "nosuchfunction is not a function"),
        ("{{ $undeclared }}", r"\$undeclared is not declared"),
        ("{{ range $i := until 2 }}{{ continue }}{{ end }}", "not translated"),
        ('{{ include "case.missing" . }}', "does not hold"),
    ],
)
def test_the_translation_refuses_what_it_does_not_know(body, why):
    with pytest.raises(gotemplate.TranslationError, match=why):
        gotemplate.translate_text(f'{{{{- define "case.x" -}}}}{body}{{{{- end -}}}}', "x.tpl")


def test_an_error_helm_fails_with_fails_the_translation_too():
    (fn,) = gotemplate.translate_text('{{- define "x" -}}{{ concat (list 1) .missing }}{{- end -}}').values()
    with pytest.raises(gotmpl.TemplateError, match="nil pointer"):
        fn({})
    (fn,) = gotemplate.translate_text('{{- define "x" -}}{{ .a.b }}{{- end -}}').values()
    with pytest.raises(gotmpl.TemplateError, match="nil pointer"):
        fn({})


KNOB_ANCHOR = '{{- with $v.scheduling.schedulerName -}}{{- $_ := set $base "schedulerName" . -}}{{- end -}}'


def test_a_knob_added_to_the_charts_layout_reaches_kvgen_with_no_python():
    """Issue 34: redoing the layout part of a knob commit (4ef4445: schedulerName, terminationGracePeriodSeconds,
    envFrom, probe timings; 54 lines of kvgen/context/build.py then) is one edit of the chart's layout: its
    translation carries it to kvgen."""
    rel = "charts/kvgen/templates/context/_workloads.tpl"
    text = (gotemplate._REPO / rel).read_text(encoding="utf-8")
    assert text.count(KNOB_ANCHOR) == 1
    knob = '{{- with $v.scheduling.exampleKnob -}}{{- $_ := set $base "exampleKnob" . -}}{{- end -}}'
    edited = gotemplate.load(gotemplate.translate({rel: text.replace(KNOB_ANCHOR, KNOB_ANCHOR + "\n" + knob)}))
    compiled = compile_spec(spec())
    state = run.inputs(document(compiled.plan), compiled.spec)
    state["V"]["scheduling"]["exampleKnob"] = "spread"
    edited["t_kvgen_layout"](state)
    assert state["context"]["workloads"][0]["pod"]["exampleKnob"] == "spread"
    state = run.inputs(document(compiled.plan), compiled.spec)
    layout.t_kvgen_layout(state)  # today's layout has no such knob
    assert "exampleKnob" not in state["context"]["workloads"][0]["pod"]


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_layout_changes_none_of_its_inputs(example):
    """kvgen hands the layout the data files' parsed tables as they are cached for the process (no copy): the
    layout only builds new maps from them. Go's maps would let a template write into them; none does."""
    for compiled in compile_text(example.read_text(encoding="utf-8"), str(example), kube_version_of(example)):
        state = run.inputs(document(compiled.plan), compiled.spec)
        before = copy.deepcopy({k: v for k, v in state.items() if k != "F"})
        layout.t_kvgen_layout(state)
        assert {k: state[k] for k in before} == before  # what it builds it keeps under keys of its own
        context = run.build(document(compiled.plan), compiled.spec)
        assert not _shares(context, state["rt"]) and not _shares(context, state["C"])


def _shares(node: object, data: object) -> bool:
    """Whether ``node`` holds one of the maps or lists of ``data`` itself (not a copy)."""
    held: set[int] = set()

    def walk(x: object, into: set[int]) -> None:
        if isinstance(x, (dict, list)):
            into.add(id(x))
            for v in x.values() if isinstance(x, dict) else x:
                walk(v, into)

    walk(data, held)
    mine: set[int] = set()
    walk(node, mine)
    return bool(held & mine)
