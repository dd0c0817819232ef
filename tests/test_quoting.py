"""A value the user wrote is quoted the same way in every message of both faces: kvgen's
core/errors.py quoted() and the chart's kvgen.quoted (templates/_helpers.tpl)."""

from __future__ import annotations

import json
import shutil

import helm
import helm_python
from hypothesis import given, settings
from hypothesis import strategies as st

from kvgen.core.errors import quoted

WORDS = ["a", "v1'x", 'say "hi"', "both ' and \"", "back\\slash", "tab\there", "line\nbreak", "", "ü-é", "12"]
CONTROLS = ["esc\x1b[31mred", "nul\x00", "del\x7f", "nel\x85", "csi\x9b2J", "bell\x07", "\x1f\xa0"]


def chart_quoted(tmp_path, words: list[str]) -> list[str]:
    root = tmp_path / "quoting"
    (root / "templates").mkdir(parents=True, exist_ok=True)
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: quoting\nversion: 0.1.0\n")
    shutil.copy(helm.CHART / "templates" / "_helpers.tpl", root / "templates" / "_helpers.tpl")
    (root / "templates" / "out.txt").write_text(
        '{{ range .Values.words }}{{ include "kvgen.quoted" . | toJson }}\n{{ end }}'
    )
    out = helm.render({"words": words}, chart_=helm_python.Chart.load(str(root)))["quoting/templates/out.txt"]
    return [json.loads(line) for line in out.splitlines()]


def test_quoted_is_pythons_repr_of_a_printable_string_or_one_with_control_characters():
    for word in WORDS + CONTROLS[:-1]:
        assert quoted(word) == repr(word), word
    assert quoted("\x1f\xa0") == "'\\x1f\xa0'"  # repr would escape the no-break space too: left as written


def test_the_chart_quotes_as_kvgen_does(tmp_path):
    assert chart_quoted(tmp_path, WORDS + CONTROLS) == [quoted(w) for w in WORDS + CONTROLS]


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab'\"\\\t\n é-\x00\x1b\x7f\x85\x9b\u2028"), max_size=8),
        min_size=1,
        max_size=8,
    )
)
def test_the_chart_quotes_any_text_as_kvgen_does(tmp_path_factory, words):
    assert chart_quoted(tmp_path_factory.mktemp("q"), words) == [quoted(w) for w in words]
