"""No credential in Git: a literal value for an env var or vLLM flag that carries one is refused.

A spec is committed, so a token written in it (``vllm.env: [{name: HF_TOKEN, value: hf_...}]``,
``extraArgs: [--api-key=sk-...]``) is a leaked token, and an ``HF_TOKEN`` literal would also
override ``model.hfTokenSecret``. The names and flags are data (``charts/kvgen/files/
credentials.yaml``), which the chart checks the same way. KAITO and KServe input is translated
into ``vllm.env`` and ``vllm.extraArgs`` first, so the same check covers it (reported at the
field the user wrote).

Names miss a token written elsewhere (an annotation, a label, an image's ``user:password@``, a
JSON option such as ``--hf-overrides``), so every string of the spec is also searched for the
shapes of well-known tokens (``shapes`` in the same file) and for JSON keys that carry one; the
problem names the spec path and never repeats the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from kvgen.core.errors import Path, Problem, format_path, quoted
from kvgen.data import catalog


def _table() -> dict[str, Any]:
    return catalog.load("credentials.yaml")


def env_field(name: str) -> str | None:
    """The spec field for the Secret reference when ``name`` carries a credential
    ("valueFrom.secretKeyRef" for a name that is not one of kvgen's own); None otherwise."""
    env = _table()["env"]
    upper = name.upper()
    if upper in env["names"]:
        return env["names"][upper]
    if any(upper.endswith(suffix) for suffix in env["suffixes"]):
        return "valueFrom.secretKeyRef"
    return None


def _env(env: Any) -> list[Problem]:
    out: list[Problem] = []
    for i, entry in enumerate(env if isinstance(env, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry.get("value"):
            continue
        field = env_field(entry["name"])
        if field is not None:
            out.append(
                Problem(
                    ("vllm", "env", i, "value"),
                    f"{entry['name']} carries a credential: a literal value would be committed with the spec",
                    _hint(field),
                )
            )
    return out


def _flag(written: str, flags: dict[str, str]) -> str | None:
    """The credential flag ``written`` stands for: vLLM reads --api_key as --api-key, and its
    parser takes an unambiguous prefix (--api-ke) for the whole flag."""
    name = written.replace("_", "-")
    if not name.startswith("--") or len(name) < 3:
        return None
    return next((flag for flag in flags if flag.startswith(name)), None)


def _args(args: Any) -> list[Problem]:
    flags = _table()["flags"]
    out: list[Problem] = []
    pending: str | None = None  # a credential flag whose values are the following tokens
    for i, arg in enumerate(args if isinstance(args, list) else []):
        if not isinstance(arg, str):
            continue
        if arg.startswith("-"):
            written, eq, value = arg.partition("=")
            name = _flag(written, flags)
            pending = name if name and not eq else None
            if name and eq and not _is_reference(value):
                out.append(
                    Problem(
                        ("vllm", "extraArgs", i),
                        f"{written} takes a credential: a literal value would be committed with the spec",
                        _hint(flags[name]),
                    )
                )
        elif pending is not None and not _is_reference(arg):
            out.append(
                Problem(
                    ("vllm", "extraArgs", i),
                    f"the value of {pending} is a credential: a literal value would be committed with the spec",
                    _hint(flags[pending]),
                )
            )
    return out


def _is_reference(value: str) -> bool:
    """$(NAME): not a literal, Kubernetes expands it from the container's env."""
    return re.match(_table()["reference"], value) is not None


def _hint(field: str) -> str:
    if field == "valueFrom.secretKeyRef":
        return "take it from a Secret: valueFrom: {secretKeyRef: {name: SECRET, key: KEY}}"
    return f"put it in a Secret and set {field}: {{name: SECRET, key: KEY}}, or take an env var from it with valueFrom.secretKeyRef"


@cache
def _shapes() -> tuple[tuple[str, re.Pattern[str], str], ...]:
    # ASCII classes (\b, \s), as RE2 reads them in the chart
    return tuple((s["what"], re.compile(s["pattern"], re.ASCII), s["hint"]) for s in _table()["shapes"])


@cache
def _json_pair() -> re.Pattern[str]:
    return re.compile(_table()["jsonPair"], re.ASCII)


def _in_string(path: Path, text: str) -> Problem | None:
    """A well-known token shape anywhere in ``text``, else a JSON key that carries a credential
    ("token": "..."); the problem never repeats the value."""
    if _is_reference(text):
        return None
    for what, pattern, hint in _shapes():
        if pattern.search(text):
            return Problem(path, f"holds {what}: a literal credential would be committed with the spec", hint)
    keys = _table()["jsonKeys"]
    for key, value in _json_pair().findall(text):
        if value and key.lower().replace("-", "_") in keys and not _is_reference(value):
            return Problem(
                path,
                f"the JSON key {quoted(key)} carries a credential: a literal value would be committed with the spec",
                _hint("valueFrom.secretKeyRef")
                + ", then write the value as $(NAME) of that env var (Kubernetes expands it in args)",
            )
    return None


def _strings(node: Any, path: Path) -> Iterator[tuple[Path, str]]:
    """Every string of the spec with its path: mapping keys (at the key's path) and values."""
    if isinstance(node, dict):
        for key, value in node.items():
            at = (*path, str(key))
            if isinstance(key, str):
                yield at, key
            yield from _strings(value, at)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, (*path, i))
    elif isinstance(node, str):
        yield path, node


def _anywhere(data: Any, taken: set[Path]) -> list[Problem]:
    own = set(_table()["ownCheck"])
    out: list[Problem] = []
    for path, text in _strings(data, ()):
        if path in taken or format_path(path) in own:
            continue
        problem = _in_string(path, text)
        if problem is not None:
            out.append(problem)
            taken.add(path)
    return out


def literals(data: Any) -> list[Problem]:
    """Every credential written literally in a native spec (plain data, checked before or
    without the model validation, so it is reported with the spec's other problems): values of
    the env vars and flags that carry one, and the shapes of well-known tokens anywhere."""
    vllm = data.get("vllm") if isinstance(data, dict) else None
    named = _env(vllm.get("env")) + _args(vllm.get("extraArgs")) if isinstance(vllm, dict) else []
    return named + _anywhere(data, {p.path for p in named})


__all__ = ["env_field", "literals"]
