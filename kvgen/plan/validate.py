"""Turn an input document into a Spec, or into a list of problems with spec paths.

pydantic collects every field error of a document in one pass; this module rewrites them
for people: the spec path (``kvCacheOffloading.secondary[1].fileSystem``), the file:line it
came from, and a hint (a "did you mean" for unknown keys).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from kvgen.core import quantity
from kvgen.core.errors import Problem, quoted, suggest
from kvgen.input.source import SourceDoc
from kvgen.plan import credentials
from kvgen.spec.models import Spec


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
        message = f"{quantity.shorten(error['input'])} is not valid here (must match {error['ctx']['pattern']})"
        if loc[-1] == "name":
            hint = "use lowercase letters, digits and '-', starting with a letter (a DNS-1035 label)"
    else:
        message = str(error["msg"])
    return Problem(loc, message, hint, doc.locate(loc))


def _name_missing(doc: SourceDoc) -> list[Problem]:
    """kvgen's objects need a name: the spec's, or its fullnameOverride (the chart can take the release's)."""
    data = doc.data
    if data.get("name") is not None or data.get("fullnameOverride") is not None:
        return []
    hint = "kvgen has no release to name the objects after: set name (the Helm chart uses the release name)"
    return [Problem(("name",), "required key is missing", hint, doc.locate(("name",)))]


def parse_spec(doc: SourceDoc) -> tuple[Spec | None, list[Problem]]:
    if not isinstance(doc.data, dict):
        return None, [Problem((), f"a spec must be a mapping, not {type(doc.data).__name__}", location=doc.locate(()))]
    literal = [p.at(doc.locate(p.path)) for p in credentials.literals(doc.data)]
    unnamed = _name_missing(doc)
    try:
        spec = Spec.model_validate(doc.data)
    except ValidationError as exc:
        return None, [problem_of(e, doc) for e in exc.errors(include_url=False)] + unnamed + literal
    if unnamed or literal:
        return None, unnamed + literal
    if spec.name is None:
        spec = spec.model_copy(update={"name": spec.fullname_override})
    return spec, []
