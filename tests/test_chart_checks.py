"""The chart's templates check each value's bound, length, pattern and literals (files/spec-checks.json, issue 36):
Helm's values schema would stop the render before any template ran, so a value out of range would hide every
problem the templates find. Each kind of check words its problem as kvgen does, and a refused value is left out
on both faces alike (its default, or an empty list), so that what planning finds next is the same."""

from __future__ import annotations

import json

import helm
import pytest
from conftest import problem_set, spec

from kvgen.spec.schema import spec_checks, spec_checks_text

LONG = "x" * 30 + " " + "y" * 30  # a value longer than a problem quotes

CASES = {
    "ge": spec(replicas=-1),
    "le": spec(service={"port": 99999}),
    "gt": spec(vllm={"gpuMemoryUtilization": 0}),
    "maxLength": spec(name="a" * 53),
    "minLength": spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "hfTokenSecret": {"name": "", "key": "t"}}),
    "pattern": spec(name="Bad_Name"),
    "pattern-cut-short": spec(vllm={"env": [{"name": LONG, "value": "1"}]}),
    "pattern-unicode": spec(vllm={"env": [{"name": "ï" * 45 + " é", "value": "1"}]}),  # cut at characters
    "enum": spec(deployment={"strategy": {"type": "Canary"}}),
    "minItems": spec(service={"loadBalancerSourceRanges": []}, routing={"mode": "none"}),
    "maxItems": spec(
        replicas=2,
        routing={"mode": "gateway", "gateway": {"parentRefs": [{"name": f"g{i}"} for i in range(33)]}},
    ),
    "two-in-one-list": spec(vllm={"env": [{"name": "a b", "value": "1"}, {"name": "c d", "value": "2"}]}),
    "decisive": spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "evictionPolicy": "fifo"}),
}


def test_the_checks_file_is_generated_from_the_spec_models() -> None:
    assert (helm.CHART / "files" / "spec-checks.json").read_text() == spec_checks_text()
    kinds = {c["check"] for name, keys in spec_checks().items() if name != "$independent" for e in keys.values()
             for c in e["checks"]}  # fmt: skip
    assert kinds == {"ge", "gt", "le", "maxLength", "minLength", "pattern", "enum", "minItems", "maxItems"}


@pytest.mark.heavy
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_each_kind_of_check_is_worded_by_the_chart_as_kvgen_words_it(case):
    values = CASES[case]
    ours = problem_set(values)
    assert ours, "kvgen accepts it"
    theirs = helm.problems(values)
    assert theirs == ours, json.dumps(values)
    if case == "pattern-cut-short":
        ((_path, message, _hint),) = ours
        assert message.startswith(f"'{LONG[:39]}... (63 characters) is not valid here")


@pytest.mark.heavy
def test_a_refused_value_in_a_section_planning_does_without_is_left_out_on_both_faces():
    """service.port refused: both faces plan with its default (8000), so a problem the refused value would
    cause elsewhere is not reported, and the node fit still is."""
    values = spec(
        model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
        service={"port": 99999},
        vllm={"env": [{"name": "bad name", "value": "1"}]},
    )
    ours = problem_set(values)
    assert {p for p, _m, _h in ours} == {"service.port", "vllm.env[0].name", "parallelism.tensor"}, ours
    assert helm.problems(values) == ours
