"""`kvgen catalog`: what the catalog holds (charts/kvgen/files/models.yaml and instances.yaml, with the
rows of $KVGEN_CATALOG and --catalog files merged over them, as render sees them).

``models`` and ``instances`` are the rows as listed: sorted by name, each the catalog's row with its
``name`` first (the ``-o json`` form); ``table`` lays them out as plain text columns (no wrapping,
whatever the terminal's width); ``show`` is one row as a catalog file holds it, ready to copy into
one (``catalog: {models: {NAME: ...}}``).
"""

from __future__ import annotations

from typing import Any

from kvgen.core import quantity
from kvgen.core.errors import KvgenError, near_typo, quoted
from kvgen.data import catalog

MODEL_COLUMNS = (  # (header, row key) of `kvgen catalog models`
    ("MODEL", "name"),
    ("WEIGHTS", "weights"),
    ("QUANTIZATION", "quantization"),
    ("LAYERS", "layers"),
    ("KV HEADS", "kvHeads"),
    ("CONTEXT", "maxModelLen"),
)
INSTANCE_COLUMNS = (  # of `kvgen catalog instances`
    ("INSTANCE", "name"),
    ("GPUS", "gpus"),
    ("GPU MODEL", "gpuModel"),
    ("GPU MEMORY", "gpuMemory"),
    ("HOST RAM", "memory"),
    ("LOCAL DISK", "localDisk"),
)


def _plain(value: Any) -> Any:
    """A row's value as data: a size parsed from a catalog file keeps its text; a null field (a CPU
    type's gpuModel) is left out, as a catalog file's null means unset: what is printed loads back as
    the same row."""
    if isinstance(value, quantity.Size):
        return str(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _rows(table: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, **_plain(table[name])} for name in sorted(table)]


def models() -> list[dict[str, Any]]:
    """Model rows; one without a quantization (a catalog file's) says the checkpoint format render
    plans it with (ModelInfo's default, bf16)."""
    return [
        row if row.get("quantization") else {**row, "quantization": catalog.ModelInfo.quantization}
        for row in _rows(catalog.models())
    ]


def gpu_memory_bytes(row: dict[str, Any]) -> int:
    """The memory of one GPU of an instance row (a MIG profile's, when it has one); 0 when unknown."""
    if row.get("mig"):
        return catalog.mig_memory(str(row["mig"]))
    value = row.get("gpuMemory")
    return quantity.to_bytes(value) if value else 0


def instances(gpu: str | None = None, min_gpu_memory: int | None = None) -> list[dict[str, Any]]:
    """Instance rows; ``gpu``: a substring of the GPU model (case-insensitive); ``min_gpu_memory``:
    bytes of memory one GPU has at least."""
    out = []
    for row in _rows(catalog.instances()):
        if gpu is not None and gpu.lower() not in str(row.get("gpuModel") or "").lower():
            continue
        if min_gpu_memory is not None and (not row.get("gpus") or gpu_memory_bytes(row) < min_gpu_memory):
            continue
        out.append(row)
    return out


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def table(rows: list[dict[str, Any]], columns: tuple[tuple[str, str], ...]) -> str:
    """Plain columns, two spaces apart (as kubectl get prints them); a value a row lacks is '-'."""
    cells = [[h for h, _key in columns]] + [[_cell(r.get(key)) for _h, key in columns] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n" for line in cells)


class UnknownName(KvgenError):
    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message = message
        self.hint = hint


def show(name: str) -> dict[str, Any]:
    """One model or instance type as a catalog file holds it; UnknownName when the catalog has neither."""
    found: dict[str, Any] = {}
    for table_name, rows in (("models", catalog.models()), ("instances", catalog.instances())):
        if name in rows:
            found[table_name] = {name: _plain(rows[name])}
    if found:
        return {"catalog": found}
    close = near_typo(name, [*catalog.models(), *catalog.instances()])
    hint = f"did you mean {quoted(close)}? " if close is not None else ""
    hint += "`kvgen catalog models` and `kvgen catalog instances` list what the catalog holds"
    raise UnknownName(f"{quoted(name)} is neither a model nor an instance type of the catalog", hint)


__all__ = ["INSTANCE_COLUMNS", "MODEL_COLUMNS", "UnknownName", "instances", "models", "show", "table"]
