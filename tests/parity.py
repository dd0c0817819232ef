"""Helpers for the tests that hold the chart's context equal to kvgen's (tests/test_context_contract.py,
tests/test_chart_property.py, tests/test_operator_native.py)."""

from __future__ import annotations

import json
from typing import Any

import helm
from pydantic import TypeAdapter

from kvgen.app.compiler import compile_text
from kvgen.context.types import Context
from kvgen.plan.document import document
from kvgen.plan.types import PlanDocument

CONTEXT = TypeAdapter(Context)
PLAN = TypeAdapter(PlanDocument)


# Kubernetes objects the context passes through as the spec wrote them (a "" env value is a value)
PASSED_THROUGH = {"env", "tolerations", "affinity", "ephemeral", "nodeSelector", "extraObjects"}


def empty_values(node: Any, path: str = "") -> list[str]:
    """Paths holding None, "", [] or {}: the context says "absent" only by leaving a key out."""
    if node is None or (isinstance(node, (str, list, dict)) and not node):
        return [path]
    if path.rsplit(".", 1)[-1] in PASSED_THROUGH:
        return []
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in empty_values(v, f"{path}.{k}" if path else k)]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in empty_values(v, f"{path}[{i}]")]
    return []


def assert_same_context(values: dict[str, Any], version: str = "1.33", replaced: tuple = ()) -> Context:
    """kvgen's context equals the chart's, both are a valid Context, and absent is a missing key."""
    (ours,) = [r.context for r in compile_text(helm_dump(values), "spec.yaml", version)]
    _objects, theirs = helm.objects_and_context(values, kube_version=version, replaced=replaced)
    difference = helm.first_difference(ours, theirs)
    assert difference is None, difference
    CONTEXT.validate_python(ours)
    CONTEXT.validate_json(json.dumps(theirs))
    assert empty_values(ours) == []
    return ours


def assert_same_plan(values: dict[str, Any], version: str = "1.33", replaced: tuple = ()) -> PlanDocument:
    """kvgen's plan document equals the chart's (kvgen.planDocument), both valid PlanDocuments."""
    (compiled,) = compile_text(helm_dump(values), "spec.yaml", version)
    ours = document(compiled.plan)
    theirs = helm.plan(values, kube_version=version, replaced=replaced)
    difference = helm.first_difference(ours, theirs)
    assert difference is None, difference
    PLAN.validate_python(ours)
    PLAN.validate_json(json.dumps(theirs))
    assert json.loads(json.dumps(ours)) == ours  # plain JSON data
    return ours


def helm_dump(values: dict[str, Any]) -> str:
    from conftest import dump

    return dump(values)


def assert_same_render(values: dict[str, Any]) -> None:
    """kvgen's context and objects equal the chart's for a native spec."""
    (ours,) = compile_text(helm_dump(values), "spec.yaml")
    theirs, context = helm.objects_and_context(values)
    difference = helm.first_difference(ours.context, context)
    assert difference is None, difference
    assert helm.by_identity(theirs) == helm.by_identity(ours.objects)
