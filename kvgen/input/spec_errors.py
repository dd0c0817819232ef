"""pydantic's errors of a document, rewritten for people: the spec path
(``kvCacheOffloading.secondary[1].fileSystem``), the file:line it came from, and a hint (a "did
you mean" for unknown keys). Used for specs (kvgen.plan.validate) and --catalog files
(kvgen.input.user_catalog).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from kvgen.core.errors import Problem, quoted, short_quoted, suggest
from kvgen.input.source import SourceDoc
from kvgen.spec.models import NAME_HINT, Spec


def _unwrap(annotation: Any) -> Any:
    """The model class inside Optional[...] / list[...] / dict[str, ...], if any."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, list, dict, typing.Annotated):
        for arg in typing.get_args(annotation):
            inner = _unwrap(arg)
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
        return None
    return annotation


def model_at(path: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The spec model class that sits at ``path`` (list indexes are skipped)."""
    model: Any = Spec
    keyed = False  # the last field was a dict of models: this part is one of its keys
    for part in path:
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        fields = {f.alias or n: f for n, f in model.model_fields.items()}
        if part not in fields:
            return None
        annotation = fields[part].annotation
        model = _unwrap(annotation)
        keyed = dict in (typing.get_origin(annotation), *map(typing.get_origin, typing.get_args(annotation)))
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
    return model


def allowed_keys(path: tuple[str | int, ...]) -> list[str]:
    model = model_at(path)
    if model is None:
        return []
    return [f.alias or n for n, f in model.model_fields.items()]


def problem_of(error: ErrorDetails, doc: SourceDoc) -> Problem:
    loc = tuple(error["loc"])
    kind = error["type"]
    hint = None
    if kind == "extra_forbidden":
        key = loc[-1]
        keys = allowed_keys(loc[:-1])
        close = suggest(str(key), keys)
        message = f"unknown key {quoted(str(key))}"
        hint = f"did you mean {quoted(close)}?" if close else (f"allowed keys: {', '.join(keys)}" if keys else None)
    elif kind == "missing":
        message = "required key is missing"
    elif kind == "value_error":
        message = str(error["msg"]).removeprefix("Value error, ")
    elif kind == "string_pattern_mismatch":
        message = f"{short_quoted(error['input'])} is not valid here (must match {error['ctx']['pattern']})"
        if loc == ("name",):  # the spec's name; vllm.env[].name and the like are no DNS labels
            hint = NAME_HINT
    else:
        message = str(error["msg"])
    return Problem(loc, message, hint, doc.locate(loc))
