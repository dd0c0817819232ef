"""The context of one spec: the chart's layout (kvgen/context/layout.py, translated from
``kvgen.layout``) run on what the chart gives it: the plan document, the values, the release and the
chart's data files. Nothing here decides anything; it hands the layout its inputs as Helm does.
"""

from __future__ import annotations

from typing import Any

from kvgen.context import layout
from kvgen.context.types import Context
from kvgen.core import paths
from kvgen.data import catalog
from kvgen.plan.types import PlanDocument
from kvgen.spec.models import Spec


class Files:
    """The chart's ``.Files``: ``Get "files/NAME"`` is the text of a data file (the layout reads the launcher)."""

    def Get(self, name: str) -> str:  # Helm's name
        return (paths.files_dir() / name.removeprefix("files/")).read_text(encoding="utf-8")


def values(spec: Spec) -> dict[str, Any]:
    """The spec as the chart's .Values: its keys, camelCase, with what it leaves unset at the schema's
    defaults (the chart's values.yaml holds the same) and an unset optional value left out."""
    return spec.model_dump(mode="json", by_alias=True, exclude_none=True)


def _as_read(node: Any) -> Any:
    """The context as the object templates read it back (Helm's toJson, then fromJson): a whole
    float is an integer, as Go's encoding/json writes it."""
    if isinstance(node, dict):
        return {k: _as_read(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_as_read(v) for v in node]
    if isinstance(node, float) and node.is_integer() and abs(node) < 1e21:
        return int(node)
    return node


def inputs(document: PlanDocument, spec: Spec) -> dict[str, Any]:
    """What the chart hands kvgen.layout ($L in kvgen.buildContext), for a planned spec (its plan document,
    kvgen.plan.document)."""
    rt = catalog.runtime()  # shared, not copied: the layout changes none of its inputs (a test holds it)
    return {
        "V": values(spec),
        "plan": document,
        "release": {"name": spec.object_name, "service": "kvgen", "chartLabel": ""},
        "namespace": spec.namespace or "",
        "rt": rt,
        "W": rt["wiring"],
        "C": catalog.load("sizing.yaml"),
        "F": Files(),
    }


def build(document: PlanDocument, spec: Spec) -> Context:
    """The context of a planned spec: the layout run on its inputs, as the object templates read it (a copy:
    nothing in it is shared with the inputs)."""
    state = inputs(document, spec)
    layout.t_kvgen_layout(state)
    return _as_read(state["context"])
