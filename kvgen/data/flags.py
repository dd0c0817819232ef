"""vLLM flags in a spec: the ones kvgen owns, and vLLM's own list.

``charts/kvgen/files/managed-flags.yaml`` is the one table of the flags kvgen sets itself (or that
would fight its wiring), each with the spec field that owns it. A native spec's
``vllm.extraArgs`` may hold none of them; KAITO and KServe input map some onto their field
(``kvgen.input.dialects.vllm_args``) and refuse the others, with the same words. The chart reads the
same table (``templates/plan/_vllmargs.tpl``, ``kvgen.checkExtraArgs``).

Every other ``vllm.extraArgs`` token is checked against the flag list of the pinned vLLM,
offline: the contract snapshot ``charts/kvgen/files/contract/vllm-<version>.json`` (captured from
vLLM by ``scripts/capture-contract``) and ``kvgen.data.contract``: an unknown or removed flag, a value
of the wrong type or outside the choices, a value missing or given to a switch, each a problem
at ``vllm.extraArgs[i]`` with a "did you mean".
"""

from __future__ import annotations

from functools import cache
from typing import Any

from kvgen.core import paths
from kvgen.data import catalog, contract

EXTRA_ARGS = ("vllm", "extraArgs")


def table() -> dict[str, dict[str, Any]]:
    """flag -> {from, input?, why?, hint?, switch?} (files/managed-flags.yaml)."""
    return catalog.load("managed-flags.yaml")["flags"]


def flag_name(token: str) -> str:
    """The option a token names, as vLLM reads it: '--max_model_len=4k' -> '--max-model-len',
    '--kv_transfer_config.kv_connector=X' -> '--kv-transfer-config' (one key of a JSON option);
    '' for a value or positional token."""
    if not token.startswith("-"):
        return ""
    name = token.split("=", 1)[0]
    if name.startswith("--"):
        name = contract.normalize_flag(name).split(".", 1)[0]
    return name


def refusal(flag: str) -> tuple[str, str]:
    """(message, hint) for a flag of the table where it may not be written."""
    row = table()[flag]
    message = f"{flag} is set by kvgen from {row['from']}" + (f": {row['why']}" if row.get("why") else "")
    return message, row.get("hint") or f"remove it and set {row['from']}"


@cache
def vllm_snapshot() -> contract.Snapshots:
    """What the pinned vLLM and LMCache accept (files/contract/*.json, shipped in the wheel)."""
    rt = catalog.runtime()
    return contract.Snapshots.load(
        paths.files_dir() / "contract", str(rt["vllm"]["version"]), str(rt["lmcache"]["version"])
    )


__all__ = ["EXTRA_ARGS", "flag_name", "refusal", "table", "vllm_snapshot"]
