"""Your own models and node types: catalog files given with ``--catalog FILE`` or ``KVGEN_CATALOG``.

A catalog file is a Helm values file too (``helm template ... -f FILE``): its one top-level key is
``catalog:``, with ``models:`` and ``instances:`` rows as in ``charts/kvgen/files/``. Each is
validated as a spec's ``catalog:`` is (``kvgen.spec.models.Catalog``, then ``kvgen.data.catalog.check_rows``:
model ids, nodeSelector labels, kvgen's bound on sizes), every problem with its file:line, and a row for a
model or type the catalog does not have must be complete. Rows are merged over
the built-in catalog field by field, later files over earlier ones (``kvgen.data.catalog.use_rows``).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from kvgen.core.errors import KvgenError, Problem, SpecError, quoted
from kvgen.data import catalog
from kvgen.input.source import load_documents
from kvgen.input.spec_errors import problem_of
from kvgen.spec.models import MODEL_CONFIG, Catalog, Model

ENV = "KVGEN_CATALOG"  # catalog files, separated by os.pathsep (':'), read before --catalog ones
MODEL_REQUIRED = ("architecture", "layers", "kvHeads", "headDim", "weights")


class CatalogFile(Model):
    model_config = ConfigDict(**MODEL_CONFIG, title="kvgen catalog file")

    catalog: Catalog = Field(description="Rows merged over the built-in catalog.")


def from_env(environ: dict[str, str] | None = None) -> list[str]:
    value = (os.environ if environ is None else environ).get(ENV, "")
    return [p for p in value.split(os.pathsep) if p]


def _incomplete(
    rows: dict[str, Any], models: dict[str, Any], instances: dict[str, Any]
) -> list[tuple[tuple[Any, ...], str]]:
    """(path, message) for each new row that lacks what kvgen needs to size it."""
    out: list[tuple[tuple[Any, ...], str]] = []
    for mid, row in (rows.get("models") or {}).items():
        if mid not in models:
            missing = [f for f in MODEL_REQUIRED if row.get(f) is None]
            if missing:
                out.append((("catalog", "models", mid), f"model {quoted(mid)} is new and lacks {', '.join(missing)}"))
    for itype, row in (rows.get("instances") or {}).items():
        if itype not in instances:
            missing = [f for f in ("gpus", "memory") if row.get(f) is None]
            if row.get("gpus") and row.get("gpuMemory") is None:
                missing.append("gpuMemory")
            if missing:
                out.append(
                    (
                        ("catalog", "instances", itype),
                        f"instance type {quoted(itype)} is new and lacks {', '.join(missing)}",
                    )
                )
    return out


def parse(text: bytes | str, file: str) -> dict[str, Any]:
    """One catalog file's rows ({"models": ..., "instances": ...}); SpecError with every problem."""
    docs = load_documents(text, file)
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        raise SpecError(file, [Problem((), "a catalog file is one YAML mapping with a top-level catalog: key")])
    doc = docs[0]
    try:
        parsed = CatalogFile.model_validate(doc.data)
    except ValidationError as exc:
        raise SpecError(file, [problem_of(e, doc) for e in exc.errors(include_url=False)]) from None
    rows = parsed.catalog.model_dump(by_alias=True, exclude_none=True)
    # what the pod would get from a row (its nodeSelector, its sizes) and model ids, checked as a spec's own rows
    # are (kvgen.data.catalog.check_rows; the chart checks a file given with helm -f alike)
    problems = [p.at(doc.locate(p.path)) for p in catalog.check_rows(rows)]
    problems += [
        Problem(path, message, "describe it fully (see files/models.yaml, files/instances.yaml)", doc.locate(path))
        for path, message in _incomplete(rows, catalog.models(), catalog.instances())
    ]
    if problems:
        raise SpecError(file, problems)
    return rows


class CatalogErrors(KvgenError):
    """Problems with the catalog files, one SpecError per file."""

    def __init__(self, errors: list[SpecError]):
        self.errors = errors
        super().__init__("\n".join(map(str, errors)))


def use(files: list[tuple[str, bytes]]) -> None:
    """Merge every file's rows over the built-in catalog, in order; CatalogErrors with the problems of all."""
    failed: list[SpecError] = []
    for name, text in files:
        try:
            catalog.use_rows(parse(text, name))
        except SpecError as exc:
            failed.append(exc)
    if failed:
        raise CatalogErrors(failed)
