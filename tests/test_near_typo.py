"""Did-you-mean for an unknown model or instance type only for a near typo, never for a different
real product (kvgen.core.errors.near_typo; the chart's kvgen.nearTypo, templates/_suggest.tpl): the
same words and numbers after case and separators, at most one typo in one word, every number equal.
An unknown name's hint says how to describe it inline or in a catalog file, and where the known
ones are listed; both faces word it alike."""

from __future__ import annotations

import json

import helm
import pytest
from conftest import BASE, problem_set, run_kvgen, spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvgen.core.errors import near_typo
from kvgen.data import catalog

MODELS = sorted(catalog.models())
INSTANCES = sorted(catalog.instances())

TYPOS = {  # a near typo -> the catalog name it means
    "Standard_NC24ads_A100_V4": "Standard_NC24ads_A100_v4",  # case
    "standard-nc24ads-a100-v4": "Standard_NC24ads_A100_v4",  # case and separators
    "g5.12xlage": "g5.12xlarge",  # a letter dropped in a word
    "g5.12xlargee": "g5.12xlarge",  # a letter added
    "Standrd_NC24ads_A100_v4": "Standard_NC24ads_A100_v4",
    "p4dd.24xlarge": "p4d.24xlarge",  # a short word: a doubled letter
    "meta-llama/Llama-3.1-8B-Instruc": "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama3.1-8B-Instruct": "meta-llama/Llama-3.1-8B-Instruct",  # a separator left out
    "openai/gtp-oss-20b": "openai/gpt-oss-20b",  # two neighbours swapped
    "google/gemma-4-12B-itt": "google/gemma-4-12B-it",
    "Qwen/Qwen3-32b": "Qwen/Qwen3-32B",
}
OTHER_PRODUCTS = [  # real names the catalog does not hold: no suggestion
    "mistralai/Mixtral-8x7B-Instruct-v0.1",  # not Mistral-7B-Instruct-v0.3
    "g5g.2xlarge",  # Graviton, not g5.2xlarge
    "p5.4xlarge",  # one H100, not p5.48xlarge
    "g6f.4xlarge",  # a fraction of an L4, not g6.4xlarge
    "p4.24xlarge",  # not p4d.24xlarge
    "p5en.24xlarge",
    "Standard_NC24ads_A100_v5",  # not ..._v4
    "Standard_NC24s_A100_v4",  # not NC24ads
    "Standard_ND96asr_A100_v4",
    "Qwen/Qwen3-32B-AWQ",  # a quantized checkpoint is not Qwen3-32B
    "Qwen/Qwen2.5-0.5B",  # not Qwen2.5-1.5B (Qwen/Qwen3-14B, once here, is a catalog row now)
    "meta-llama/Llama-3.1-405B-Instruct",
    "meta-llama/Llama-3.1-8B",  # the base model, not -Instruct
    "google/gemma-3-4b-it",
    "microsoft/phi-3",
    "deepseek-ai/DeepSeek-V2",
]


@pytest.mark.parametrize("word", sorted(TYPOS))
def test_a_near_typo_gets_the_name_it_means(word):
    assert near_typo(word, MODELS + INSTANCES) == TYPOS[word]


@pytest.mark.parametrize("word", OTHER_PRODUCTS)
def test_a_different_real_product_gets_no_suggestion(word):
    assert word not in MODELS + INSTANCES
    assert near_typo(word, MODELS + INSTANCES) is None


@pytest.mark.parametrize(
    ("word", "choice", "near"),
    [
        ("instruc", "instruct", True),  # a word of 4+ letters: dropped, added, changed, swapped
        ("instrct", "instruct", True),
        ("instrucct", "instruct", True),
        ("insrtuct", "instruct", True),
        ("instrvct", "instruct", True),
        ("instruc", "instructs", False),  # two typos
        ("de", "d", False),  # a short word: only a doubling or a swap
        ("dd", "d", True),
        ("ads", "as", False),
        ("asd", "ads", True),
        ("en", "e", False),
        ("itx", "it", False),
    ],
)
def test_one_typo_is_precise(word, choice, near):
    assert (near_typo(f"x/{word}-7b", [f"x/{choice}-7b"]) is not None) is near
    assert (near_typo(f"x/{choice}-7b", [f"x/{word}-7b"]) is not None) is near  # both directions


def test_a_changed_number_is_never_a_typo():
    assert near_typo("g5.12xlarge", ["g5.13xlarge", "g5.21xlarge", "g5.1xlarge", "g51.2xlarge"]) is None
    assert near_typo("llama-3.1-8b", ["llama-3.1-8", "llama-3-1-8b"]) == "llama-3-1-8b"


def _hint(values):
    ((_path, _message, hint),) = problem_set(values)
    return hint


def test_an_unknown_name_says_how_to_describe_it_and_where_the_known_ones_are():
    model = _hint(spec(model={"id": "mistralai/Mixtral-8x7B-Instruct-v0.1"}))
    assert "did you mean" not in model
    assert "describe it inline (model.architecture, model.layers, model.kvHeads, model.headDim, model.weights" in model
    assert "catalog.models in the spec or in a catalog file (kvgen --catalog FILE, helm -f FILE)" in model
    assert "`kvgen catalog models`" in model
    node = _hint(spec(instance={"type": "p5.4xlarge"}))
    assert "did you mean" not in node
    assert "describe the node inline (instance.gpus, instance.gpuMemory, instance.memory" in node
    assert "catalog.instances in the spec or in a catalog file (kvgen --catalog FILE, helm -f FILE)" in node
    assert "`kvgen catalog instances`" in node
    typo = _hint(spec(instance={"type": "g5.12xlage"}))
    assert typo.startswith("did you mean 'g5.12xlarge'? if not, describe the node inline")


@pytest.mark.heavy
def test_the_cli_suggests_no_other_product(tmp_path):
    f = tmp_path / "spec.yaml"
    f.write_text(json.dumps(spec(model={"id": "mistralai/Mixtral-8x7B-Instruct-v0.1"})))
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1
    assert "Mistral-7B" not in result.stderr and "kvgen catalog models" in result.stderr


@pytest.mark.heavy
@pytest.mark.parametrize("word", sorted(TYPOS) + OTHER_PRODUCTS)
def test_the_chart_suggests_the_same_word_for_word(word):
    values = spec(model={"id": word}) if "/" in word else spec(instance={"type": word})
    assert helm.problems(values) == problem_set(values)


# the chart's helper itself, on many words at once: a copy of the chart with one more template
_PROBE = "near-typo-probe.json"


def _chart_near_typos(cases: list[tuple[str, list[str]]]) -> list[str]:
    """kvgen.nearTypo of each (word, choices), in one render."""
    template = (
        "{{- $out := list -}}{{- range $case := fromJsonArray CASES -}}"
        '{{- $out = append $out (include "kvgen.nearTypo" (list (index $case 0) (index $case 1))) -}}{{- end -}}'
        "{{- toJson $out -}}"
    ).replace("CASES", json.dumps(json.dumps(cases)))
    chart = helm.context_chart((("templates/" + _PROBE, template),))
    rendered = helm.render(BASE, chart_=chart)
    (text,) = [t for name, t in rendered.items() if name.endswith(_PROBE)]
    return json.loads(text)


WORD = st.text(alphabet="abdeiltx0129-_.'\"\\AD", max_size=12)


@pytest.mark.heavy
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(WORD, st.lists(WORD, max_size=4)), min_size=1, max_size=30))
def test_the_charts_near_typo_is_pythons(cases):
    """Random short words against random choices (many near one another): both faces choose alike."""
    assert _chart_near_typos(cases) == [near_typo(word, choices) or "" for word, choices in cases]


@pytest.mark.heavy
def test_the_charts_near_typo_on_the_catalog():
    cases = [(w, MODELS + INSTANCES) for w in [*TYPOS, *OTHER_PRODUCTS]]
    assert _chart_near_typos(cases) == [TYPOS.get(w, "") for w, _ in cases]
