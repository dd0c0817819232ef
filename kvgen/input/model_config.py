"""``model.config``: a model described by its Hugging Face config.json, read beside the spec (issue 36).

A fine-tune, or any model the catalog lacks, needs its catalog row: the KV-cache geometry, the sizes tensor
parallelism must divide, the layer kinds, the checkpoint's quantization, the weights. Its config.json holds all
of it, and kvgen.data.hf_config derives the row as the built-in rows are derived (``kvgen catalog import`` prints
the same row for a catalog file or Helm values). ``model.config`` names a config.json, or a directory holding a
Hugging Face snapshot (its config.json, and a ModelOpt checkpoint's hf_quant_config.json beside it), relative to
the spec's file. The row is the spec's own ``catalog.models[model.id]``, under the fields the spec's catalog
already sets for it. A config kvgen cannot size is refused with the reason, never guessed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvgen.core import reads
from kvgen.core.errors import KvgenError, Problem
from kvgen.input.source import SourceDoc

STDIN = "<stdin>"  # the file name of a spec read from stdin: model.config is relative to the working directory
MAX_BYTES = 16 << 20  # a config.json is a few KiB; hf_quant_config.json too
PATH = ("model", "config")
HINT = "name a Hugging Face config.json, or the directory of a downloaded snapshot holding one, relative to the spec"


class ConfigError(KvgenError):
    """A config.json that cannot be read or sized: the reason."""


def _json(path: Path) -> Any:
    try:
        return json.loads(reads.read_bytes(str(path), MAX_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read {path}: {reason}") from None


def row(path: Path) -> tuple[dict[str, Any], Path]:
    """The catalog row of the config.json at ``path`` (or in the directory ``path``), and the config's path."""
    config_path = path / "config.json" if path.is_dir() else path
    quant_path = config_path.parent / "hf_quant_config.json"  # a ModelOpt checkpoint's, beside it
    config = _json(config_path)
    quant = _json(quant_path) if quant_path.is_file() else None
    if not isinstance(config, dict):
        raise ConfigError(f"{config_path} is not a config.json: it holds a JSON object")
    from kvgen.data import hf_config  # a spec that names a config only

    try:
        found, notes = hf_config.derive(config, quant)
    except hf_config.CatalogError as exc:
        raise ConfigError(f"{config_path}: {exc}") from None
    found["source"] = "; ".join([f"HF config.json: {config_path}", *notes])
    return found, config_path


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def apply(doc: SourceDoc) -> list[Problem]:
    """Read the spec's model.config and make its row the spec's own catalog row for model.id (``doc.data`` is
    replaced by a copy that has it); the problems when it cannot be read or sized. A spec without
    model.config, or whose model or config is not what the schema says, is left to the schema."""
    data = doc.data
    model = data.get("model") if isinstance(data, dict) else None
    config = model.get("config") if isinstance(model, dict) else None
    model_id = model.get("id") if isinstance(model, dict) else None
    if not isinstance(config, str) or not config or not isinstance(model_id, str):
        return []
    spec_dir = Path.cwd() if doc.file == STDIN else Path(doc.file).parent  # FILE@REV (kvgen diff): FILE's
    try:
        found, _path = row(spec_dir / config)
    except ConfigError as exc:
        return [Problem(PATH, str(exc), HINT, doc.locate(PATH))]
    own_catalog = _mapping(data.get("catalog"))
    models = _mapping(own_catalog.get("models"))
    own = _mapping(models.get(model_id))
    doc.data = {**data, "catalog": {**own_catalog, "models": {**models, model_id: {**found, **own}}}}
    return []


__all__ = ["ConfigError", "apply", "row"]
