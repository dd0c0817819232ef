"""vLLM command-line arguments found in a foreign resource, mapped onto the native spec.

KAITO users put vLLM settings in the ``vllm:`` section of ``inference_config.yaml``; KServe users
put them in the ``main`` container's ``args`` or in ``VLLM_ADDITIONAL_ARGS``. Flags that kvgen
sets itself become spec fields (``--max-model-len`` is ``model.maxModelLen``); flags that
would fight kvgen's own wiring are refused; everything else passes through to
``vllm.extraArgs`` unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kvgen.core.errors import Location, Path, quoted, shown
from kvgen.data import flags
from kvgen.input.dialects.core import SpecBuilder, Tracker
from kvgen.input.source import SourceDoc


def _tokens(text: str) -> int:
    """vLLM's --max-model-len: an integer, or with a k/m/g suffix (1k = 1000, 1K = 1024)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", text.strip())
    if not m:
        raise ValueError(f"{quoted(text)} is not a token count")
    number, suffix = Decimal(m.group(1)), m.group(2)  # exact: a float would overflow on a long number
    scale = {"": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "K": 1024, "M": 1024**2, "G": 1024**3}[suffix]
    value = number * scale
    if value != value.to_integral_value():
        raise ValueError(f"{quoted(text)} is not a whole number of tokens")
    return int(value)


def _int(text: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()):
        raise ValueError(f"{quoted(text)} is not a whole number")
    return int(text)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{quoted(text)} is not a number") from None


_PARSERS: dict[str, Callable[[str], Any]] = {"tokens": _tokens, "int": _int, "float": _float}


def _native_path(dotted: str) -> Path:
    return tuple(dotted.split("."))


# The one table of flags kvgen owns (files/managed-flags.yaml, see kvgen.data.flags): those with an
# `input` parser become their spec field; the others are refused.
MAPPED: dict[str, tuple[Path, Callable[[str], Any]]] = {
    flag: (_native_path(row["from"]), _PARSERS[row["input"]]) for flag, row in flags.table().items() if row.get("input")
}
PARALLEL = {flag for flag, (path, _parse) in MAPPED.items() if path[0] == "parallelism"}
REFUSED: dict[str, tuple[str, str]] = {flag: flags.refusal(flag) for flag in flags.table() if flag not in MAPPED}
SWITCHES = {flag for flag, row in flags.table().items() if row.get("switch")}


def flag_name(token: str) -> str:
    """'--max_model_len=4k' -> '--max-model-len' (vLLM accepts either spelling)."""
    return flags.flag_name(token)


@dataclass
class Arg:
    flag: str  # normalised flag name; "" for a positional token
    tokens: list[str]  # as written
    value: str | None  # the value of a mapped or refused flag
    index: int  # index of the first token in the source list


def split(tokens: list[str]) -> list[Arg]:
    """Group tokens into arguments. Only mapped and refused flags take a separate value token
    (they all take one); any other token passes through on its own, as written."""
    out: list[Arg] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        flag = flag_name(tok)
        if flag in MAPPED or flag in REFUSED:
            if "=" in tok:
                out.append(Arg(flag, [tok], tok.split("=", 1)[1], i))
                i += 1
                continue
            if flag not in SWITCHES and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                out.append(Arg(flag, [tok, tokens[i + 1]], tokens[i + 1], i))
                i += 2
                continue
            out.append(Arg(flag, [tok], None, i))
            i += 1
            continue
        out.append(Arg(flag, [tok], None, i))
        i += 1
    return out


Where = Callable[[int], tuple[Path, SourceDoc | None, Location | None]]


def apply(
    args: list[Arg], tracker: Tracker, builder: SpecBuilder, where: Where, *, parallel_note: str | None = None
) -> None:
    """Map each argument onto the spec. ``where(index)`` gives the source path (and, for
    embedded YAML, the document and location) of the token at ``index``. With
    ``parallel_note`` the parallel sizes are not taken (the resource's format sets them
    itself) and each is reported with that note."""
    for arg in args:
        path, doc, location = where(arg.index)
        if arg.flag in REFUSED:
            message, hint = REFUSED[arg.flag]
            tracker.error(path, message, hint, doc=doc, location=location)
            continue
        if arg.flag in MAPPED:
            native, parse = MAPPED[arg.flag]
            if arg.value is None:
                tracker.error(path, f"{arg.flag} needs a value", doc=doc, location=location)
                continue
            if parallel_note and arg.flag in PARALLEL:
                tracker.warn(path, f"not honoured: {arg.flag}: {parallel_note}", doc=doc, location=location)
                continue
            try:
                value = parse(arg.value)
            except ValueError as exc:
                tracker.error(path, f"{arg.flag}: {exc}", doc=doc, location=location)
                continue
            previous = builder.origins.get(native)
            if previous is not None and builder.get(native) != value:
                tracker.error(
                    path,
                    f"{arg.flag} {arg.value} conflicts with {shown(builder.get(native))} set elsewhere in this resource",
                    doc=doc,
                    location=location,
                )
                continue
            builder.set(native, value, path, doc=doc, location=location)
            continue
        for tok in arg.tokens:
            builder.append(("vllm", "extraArgs"), tok, path, doc=doc, location=location)


def tokens_from_mapping(key: str, value: Any) -> list[str]:
    """A ``vllm:`` entry of KAITO's inference_config.yaml as vLLM argv tokens, the way the
    KAITO launcher hands them to vLLM: ``key: v`` -> ``--key=v``; ``true`` -> ``--key``;
    ``false`` -> ``--no-key``; a list -> ``--key v1 v2``; a mapping -> ``--key=<JSON>``."""
    flag = "--" + key.replace("_", "-")
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + flag[2:]]
    if isinstance(value, list):
        return [flag, *(json.dumps(v) if isinstance(v, (dict, list)) else str(v) for v in value)]
    if isinstance(value, dict):
        return [f"{flag}={json.dumps(value, separators=(',', ':'))}"]
    return [f"{flag}={value}"]


__all__ = ["MAPPED", "REFUSED", "PARALLEL", "SWITCHES", "Arg", "apply", "flag_name", "split", "tokens_from_mapping"]
