"""Capability rules: decide whether KV-cache offloading can run, and record why not.

The table (codes, order, conditions, reasons, sources) is data in ``charts/kvgen/files/rules.yaml``,
shared with the Helm chart; this module interprets it, as templates/plan/_rules.tpl does. A rule
turns offloading off; it never fails a render. ``holds`` and ``child`` also read the conditions
and fields of files/apiserver.yaml (kvgen.plan.apiserver).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_snake

from kvgen.data import catalog
from kvgen.data.catalog import InstanceInfo, ModelInfo
from kvgen.spec.models import Spec


@dataclass(frozen=True)
class Facts:
    spec: Spec
    model: ModelInfo
    instance: InstanceInfo


@cache
def _attributes(model: type[BaseModel]) -> dict[str, str]:
    return {field.alias or name: name for name, field in model.model_fields.items()}


def child(node: Any, key: str) -> Any:
    """``node``'s field ``key`` as the spec writes it (camelCase), None when unset: of a spec
    model (by alias), a fact (a dataclass) or a mapping."""
    if isinstance(node, BaseModel):
        name = _attributes(type(node)).get(key)
        return getattr(node, name) if name else None
    if dataclasses.is_dataclass(node):
        return getattr(node, to_snake(key), None)
    return node.get(key) if isinstance(node, Mapping) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _compare(op: str, value: Any, want: Any) -> bool:
    """One field against a row's value: ``is`` (set and true, or unset/false/0/empty), ``eq`` and
    ``ne`` (numbers by value, text as text), ``gt`` and ``lt`` (numbers; an unset field is neither)."""
    if op == "is":
        return bool(value) == want
    n = _number(value)
    if op in ("eq", "ne"):
        same = n == want if _number(want) is not None else isinstance(value, str) and value == want
        return same == (op == "eq")
    if op in ("gt", "lt"):
        return n is not None and (n > want if op == "gt" else n < want)
    raise AssertionError(f"rules: unknown op {op!r}")


def holds(when: Mapping[str, Any], facts: Mapping[str, Any]) -> bool:
    """A condition of the tables: all/any/not of {field, op, value}; field is a dotted path
    whose first name is a fact (spec, model, instance)."""
    if "all" in when:
        return all(holds(c, facts) for c in when["all"])
    if "any" in when:
        return any(holds(c, facts) for c in when["any"])
    if "not" in when:
        return not holds(when["not"], facts)
    return _compare(when["op"], field(when["field"], facts), when["value"])


def field(path: str, facts: Mapping[str, Any]) -> Any:
    """The value at a dotted path whose first name is a fact (None when unset)."""
    root, *keys = path.split(".")
    value = facts[root]
    for key in keys:
        value = child(value, key)
    return value


_PLACEHOLDER = re.compile(r"\{([A-Za-z]\w*(?:\.\w+)+)\}")


def unused_settings(facts: Mapping[str, Any]) -> list[str]:
    """The warnings of files/rules.yaml ``warnings``, in order: a setting that applies only to others
    (facts: spec, model, instance, gpuAccess); {fact.path} in a message is that field's value."""
    return [
        _PLACEHOLDER.sub(lambda m: str(field(m[1], facts)), row["message"])
        for row in catalog.load("rules.yaml")["warnings"]
        if holds(row["when"], facts)
    ]


@dataclass(frozen=True)
class RuleResult:
    code: str
    matched: bool
    reason: str


@dataclass(frozen=True)
class Decision:
    enabled: bool
    reason_code: str | None
    reason: str | None
    checked: tuple[RuleResult, ...]


LORA_ON, LORA_OFF = ("--enable-lora",), ("--no-enable-lora", "--disable-lora")


def lora_enabled(extra_args: list[str]) -> bool:
    """Whether vllm.extraArgs switch LoRA on: the last of --enable-lora and its negations, in any spelling vLLM
    reads (underscores for dashes). The chart's kvgen.loraEnabled reads the same."""
    on = False
    for token in extra_args:
        name = token.split("=", 1)[0].replace("_", "-")
        if name in LORA_ON or name in LORA_OFF:
            on = name in LORA_ON
    return on


def decide(facts: Facts) -> Decision:
    """Evaluate every rule in table order; the first match gives the reason."""
    known = {
        "spec": facts.spec,
        "model": facts.model,
        "instance": facts.instance,
        "vllm": {"lora": facts.spec.model.lora is not None or lora_enabled(list(facts.spec.vllm.extra_args))},
    }
    checked = tuple(RuleResult(r["code"], holds(r["when"], known), r["reason"]) for r in catalog.rules())
    first = next((r for r in checked if r.matched), None)
    if first is None:
        return Decision(True, None, None, checked)
    return Decision(False, first.code, first.reason, checked)
