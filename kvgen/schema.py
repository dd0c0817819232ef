"""The spec's JSON Schema, generated from the pydantic models.

``schemas/kvgen.schema.json`` is this output, committed; a test fails when it is stale
(regenerate with ``kvgen schema > schemas/kvgen.schema.json``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from kvgen.spec import Spec


class _Generator(GenerateJsonSchema):
    def generate(self, schema, mode="validation"):  # type: ignore[override]
        out = super().generate(schema, mode=mode)
        out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        return out


def _strip_titles(node: Any) -> Any:
    """pydantic adds a title per property; they repeat the key and only add noise."""
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if not (k == "title" and isinstance(v, str) and "properties" not in node)}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def spec_schema() -> dict[str, Any]:
    return _strip_titles(Spec.model_json_schema(by_alias=True, schema_generator=_Generator))


def schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=False) + "\n"
