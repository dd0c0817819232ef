#!/usr/bin/env python3
"""What `hf download` keeps of a repository, and which of those files vLLM then loads.

Runs inside the contract venv (scripts/contract-env.sh): the REAL huggingface_hub (the filter
`hf download`'s snapshot_download applies to a repository's file list: --include/--exclude) and the
REAL vLLM default loader (how `vllm serve DIR` picks its weight files in a local directory).

    python weights_selection.py BATCH.json RESULT.json

BATCH.json: {"repos": [{"id": str, "files": [path, ...], "include": [pattern, ...] | null,
                        "exclude": [pattern, ...]}]}
RESULT.json: {"results": {id: {"kept": [path, ...], "format": "hf" | "mistral" | ...,
                               "loaded": [path, ...] | null, "error": str | null,
                               "loaded_from_all": [path, ...] | null}}}

Files are made empty in a scratch directory (vLLM's selection reads names, and the safetensors
index for which shards it names: the index is written naming every top-level model-*.safetensors
of the list, as a sharded checkpoint's index does). `loaded_from_all` is what vLLM loads from the
whole repository (nothing excluded), for comparison.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


def _materialize(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    shards = sorted(f for f in files if "/" not in f and fnmatch.fnmatchcase(f, "model-*.safetensors"))
    if "model.safetensors.index.json" in files:
        weight_map = {f"layer.{i}.weight": shard for i, shard in enumerate(shards)}
        (root / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))


def _import_loader() -> Any:
    """vLLM's DefaultModelLoader. Its module's imports reach vision attention code that imports einops,
    which the contract venv does not install (vLLM is installed there without its GPU runtime
    dependencies); nothing the weight selection runs uses it, so an empty stand-in satisfies the import."""
    import types

    for name in ("einops",):
        try:
            __import__(name)
        except ModuleNotFoundError:
            stub = types.ModuleType(name)
            stub.rearrange = stub.repeat = stub.reduce = None  # type: ignore[attr-defined]
            sys.modules[name] = stub
    from vllm.model_executor.model_loader.default_loader import DefaultModelLoader

    return DefaultModelLoader


def _loaded(files: list[str]) -> tuple[str | None, list[str] | None, str | None]:
    from vllm.config.load import LoadConfig

    DefaultModelLoader = _import_loader()

    with tempfile.TemporaryDirectory(prefix="kvgen-weights-") as tmp:
        root = Path(tmp)
        _materialize(root, files)
        loader = DefaultModelLoader(LoadConfig())
        try:
            folder, weights, _safetensors, _index = loader._prepare_weights(str(root), None, None, True, None)
        except Exception as exc:  # vLLM's own refusal (no weights found): reported, not raised
            return None, None, f"{type(exc).__name__}: {exc}"
        fmt = "mistral" if any(Path(w).name.startswith("consolidated") for w in weights) else "hf"
        return fmt, sorted(str(Path(w).relative_to(folder)) for w in weights), None


def main() -> int:
    from huggingface_hub.utils import filter_repo_objects

    batch, output = Path(sys.argv[1]), Path(sys.argv[2])
    results: dict[str, Any] = {}
    with contextlib.redirect_stdout(sys.stderr):
        for repo in json.loads(batch.read_text(encoding="utf-8"))["repos"]:
            kept = sorted(
                filter_repo_objects(repo["files"], allow_patterns=repo.get("include"), ignore_patterns=repo["exclude"])
            )
            fmt, loaded, error = _loaded(kept)
            _fmt_all, loaded_all, _error_all = _loaded(repo["files"])
            results[repo["id"]] = {
                "kept": kept,
                "format": fmt,
                "loaded": loaded,
                "error": error,
                "loaded_from_all": loaded_all,
            }
    output.write_text(json.dumps({"results": results}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
