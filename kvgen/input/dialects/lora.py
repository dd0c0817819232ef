"""LoRA adapters from an operator's manifest onto ``model.lora``: what KServe's and KAITO's
readers share once each has turned its adapters into (name, uri) pairs.

Both operators switch LoRA on with ``--enable-lora`` and pass the limits they know of; both let
the user's own vLLM arguments win: KServe skips its whole injection when the container already
sets ``--lora-modules`` (kserve pkg/controller/v1alpha2/llmisvc/workload_lora.go:195-199,
219-227) and puts the user's args after its own (:266-267); KAITO's launcher scans its adapter
directory only when ``--lora-modules`` is not given (kaito presets/workspace/inference/vllm/
inference_api.py:551-553) and appends the ConfigMap's ``vllm:`` section last. So here:

- no ``--lora-modules`` of the user's: ``model.lora`` with the adapters, the operator's limits,
  and the LoRA limit flags of the user's vLLM arguments folded in (theirs win, as in vLLM's
  argv); a plain ``--enable-lora`` there is dropped (``model.lora`` switches LoRA on), a
  ``--no-enable-lora`` is an error;
- a ``--lora-modules`` of the user's: no ``model.lora``; the user's flags stay in
  ``vllm.extraArgs`` (warned); a module path under the operator's adapter mount root is an
  error, since kvgen mounts nothing there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kvgen.core.errors import Path, quoted
from kvgen.data import flags
from kvgen.input.dialects.core import Origin, SpecBuilder, Tracker

LIMITS = {"--max-lora-rank": "maxRank", "--max-loras": "maxLoras", "--max-cpu-loras": "maxCpuLoras"}
LORA_ON, LORA_OFF = ("--enable-lora",), ("--no-enable-lora", "--disable-lora")  # as kvgen/plan/rules.py reads them
MODULES = "--lora-modules"
VLLM_DEFAULT_MAX_LORAS = 1  # vLLM 0.33 LoRAConfig.max_loras (vllm/config/lora.py)
EXTRA = ("vllm", "extraArgs")


@dataclass(frozen=True)
class Adapter:
    """One adapter as model.lora takes it, with where its name and uri were written."""

    name: str
    uri: str
    source: Path  # the adapter's entry
    name_src: Path
    uri_src: Path


def _user_modules(b: SpecBuilder) -> list[tuple[int, list[str]]]:
    """Each --lora-modules in vllm.extraArgs: (its index, its values)."""
    args = [str(a) for a in b.get(EXTRA) or []]
    found = []
    for i, tok in enumerate(args):
        if flags.flag_name(tok) != MODULES:
            continue
        if "=" in tok:
            found.append((i, [tok.split("=", 1)[1]]))
            continue
        values = []
        for value in args[i + 1 :]:
            if value.startswith("-"):
                break
            values.append(value)
        found.append((i, values))
    return found


def _module_path(value: str) -> str | None:
    """The path of one --lora-modules value: NAME=PATH or {"name": ..., "path": ...} (vLLM's two forms)."""
    text = value.strip().strip("'")
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return str(data.get("path")) if isinstance(data, dict) and data.get("path") is not None else None
    return text.split("=", 1)[1] if "=" in text else None


def _origin(b: SpecBuilder, t: Tracker, index: int) -> Origin:
    return b.origins.get((*EXTRA, index)) or Origin(t.doc, ())


def _fold(t: Tracker, b: SpecBuilder, operator: str) -> None:
    """The user's LoRA switch and limit flags in vllm.extraArgs, folded into model.lora."""
    args = list(b.get(EXTRA) or [])
    kept: list[tuple[Any, Origin | None]] = []
    i = 0
    while i < len(args):
        tok, origin = str(args[i]), b.origins.get((*EXTRA, i))
        name = flags.flag_name(tok)
        where = origin or Origin(t.doc, ())
        if name in LIMITS:
            if "=" in tok:
                value, step = tok.split("=", 1)[1], 1
            elif i + 1 < len(args) and not str(args[i + 1]).startswith("-"):
                value, step = str(args[i + 1]), 2
            else:
                t.error(where.path, f"{name} needs a value", doc=where.doc, location=where.location)
                i += 1
                continue
            i += step
            if not value.strip().isdigit():
                t.error(
                    where.path, f"{name}: {quoted(value)} is not a whole number", doc=where.doc, location=where.location
                )
                continue
            key = LIMITS[name]
            b.spec["model"]["lora"][key] = int(value)
            b.origins[("model", "lora", key)] = where
            b.note(
                f"model.lora.{key} {int(value)}: from {name} in the vLLM arguments, which come after {operator}'s "
                "own and so win"
            )
            continue
        if name in LORA_ON:
            b.note(f"{name} in the vLLM arguments: model.lora switches LoRA on (kvgen passes --enable-lora)")
            t.use(where.path, where.doc)
            i += 1
            continue
        if name in LORA_OFF:
            t.error(
                where.path,
                f"{name} switches LoRA off, but the adapters are served with LoRA on",
                "remove it, or remove the adapters",
                doc=where.doc,
                location=where.location,
            )
        kept.append((args[i], origin))
        i += 1
    if len(kept) == len(args):
        return
    for k in range(len(args)):
        b.origins.pop((*EXTRA, k), None)
    if kept:
        b.spec["vllm"]["extraArgs"] = [tok for tok, _o in kept]
        for k, (_tok, origin) in enumerate(kept):
            if origin is not None:
                b.origins[(*EXTRA, k)] = origin
    else:
        del b.spec["vllm"]["extraArgs"]
        if not b.spec["vllm"]:
            del b.spec["vllm"]


def apply(
    t: Tracker,
    b: SpecBuilder,
    adapters: list[Adapter],
    limits: dict[str, tuple[int, Path]],
    source: Path,
    list_src: Path,
    operator: str,
    mount_root: str,
) -> None:
    """Set model.lora from the adapters and the operator's limits (native key -> (value, source path)),
    unless the user's vLLM arguments carry their own --lora-modules (then the operator adds no LoRA
    flags, and neither does kvgen). ``source``: the operator's LoRA field (warned about then), ``list_src`` its
    list of adapters. ``mount_root``: where the operator mounts its adapters."""
    if not adapters:
        return
    modules = _user_modules(b)
    if modules:
        for index, values in modules:
            where = _origin(b, t, index)
            for value in values:
                path = _module_path(value)
                if path is not None and (path == mount_root or path.startswith(mount_root + "/")):
                    t.error(
                        where.path,
                        f"--lora-modules path {path} is where {operator} mounts its adapters; kvgen mounts nothing "
                        "there, so vLLM would not find it",
                        f"remove --lora-modules: kvgen then serves {source[-1]} itself (model.lora, each adapter "
                        "mounted at /mnt/lora/NAME)",
                        doc=where.doc,
                        location=where.location,
                    )
        t.warn(
            source,
            f"not carried over: the vLLM arguments set their own --lora-modules, so {operator} adds no LoRA flags "
            "and vLLM serves the modules given there; kvgen keeps them in vllm.extraArgs and mounts or downloads "
            "none of these adapters",
            f"remove --lora-modules to have kvgen serve these adapters (model.lora), or remove {source[-1]}",
        )
        return
    b.set(("model", "lora", "adapters"), [{"name": a.name, "uri": a.uri} for a in adapters], list_src, use=False)
    for i, a in enumerate(adapters):
        b.origins[("model", "lora", "adapters", i)] = Origin(t.doc, a.source)
        b.origins[("model", "lora", "adapters", i, "name")] = Origin(t.doc, a.name_src)
        b.origins[("model", "lora", "adapters", i, "uri")] = Origin(t.doc, a.uri_src)
        t.use(a.name_src)
        t.use(a.uri_src)
    for key, (limit, limit_src) in limits.items():
        b.set(("model", "lora", key), limit, limit_src)
    _fold(t, b, operator)
    if "maxLoras" not in b.spec["model"]["lora"]:
        b.set(("model", "lora", "maxLoras"), VLLM_DEFAULT_MAX_LORAS, source, use=False)
        b.note(
            f"model.lora.maxLoras {VLLM_DEFAULT_MAX_LORAS}: {operator} passes no --max-loras, so vLLM's default "
            f"({VLLM_DEFAULT_MAX_LORAS}: one adapter per batch) applies; kvgen's default would be the number of adapters"
        )


__all__ = ["Adapter", "LIMITS", "VLLM_DEFAULT_MAX_LORAS", "apply"]
