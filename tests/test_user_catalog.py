"""A catalog file's model rows (kvgen --catalog FILE, KVGEN_CATALOG): attentionHeads and experts, which
files/models.yaml has on every row, are optional there, validated as its other int fields are; a row
without them plans with none (attention_heads None, experts 0)."""

from __future__ import annotations

import pytest

from kvgen.core.errors import SpecError
from kvgen.data import catalog
from kvgen.input import user_catalog
from kvgen.spec.models import ModelSpec

NEW = "acme/support-llama"
ROW = "architecture: LlamaForCausalLM\n      layers: 32\n      kvHeads: 8\n      headDim: 128\n      weights: 15Gi\n"


def _file(more: str = "") -> str:
    return f"catalog:\n  models:\n    {NEW}:\n      {ROW}{more}"


def test_a_row_without_attention_heads_and_experts_is_accepted_and_plans_with_none():
    rows = user_catalog.parse(_file(), "own.yaml")
    assert "attentionHeads" not in rows["models"][NEW] and "experts" not in rows["models"][NEW]
    info, problems = catalog.resolve_model(ModelSpec.model_validate({"id": NEW}), rows["models"])
    assert not problems and info is not None
    assert info.attention_heads is None and info.experts == 0


def test_a_row_with_them_keeps_them():
    rows = user_catalog.parse(_file("      attentionHeads: 32\n      experts: 8\n"), "own.yaml")
    assert rows["models"][NEW]["attentionHeads"] == 32 and rows["models"][NEW]["experts"] == 8
    info, _ = catalog.resolve_model(ModelSpec.model_validate({"id": NEW}), rows["models"])
    assert info is not None and (info.attention_heads, info.experts) == (32, 8)
    dense = user_catalog.parse(_file("      experts: 0\n"), "own.yaml")
    assert dense["models"][NEW]["experts"] == 0


@pytest.mark.parametrize(
    "more, message",
    [
        ("      attentionHeads: 0\n", "attentionHeads: Input should be greater than or equal to 1"),
        ("      attentionHeads: '32'\n", "attentionHeads: Input should be a valid integer"),
        ("      experts: -1\n", "experts: Input should be greater than or equal to 0"),
        ("      experts: true\n", "experts: Input should be a valid integer"),
    ],
)
def test_a_bad_value_is_refused_with_its_line(more, message):
    with pytest.raises(SpecError) as refused:
        user_catalog.parse(_file(more), "own.yaml")
    assert f"own.yaml:9:7: catalog.models.{NEW}.{message}" in str(refused.value)
