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

import dataclasses
import json
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
    not_credentials = env["notCredentials"]
    if upper in not_credentials["names"]:
        return None
    stem = upper.removesuffix("_TOKEN")
    if stem != upper and stem.rpartition("_")[2] in not_credentials["tokenWords"]:
        return None  # PAD_TOKEN, MAX_NUM_TOKEN: a tokenizer's special token or a count
    if any(upper.endswith(suffix) for suffix in env["suffixes"]):
        return "valueFrom.secretKeyRef"
    return None


def _env(env: Any, at: Path = ("vllm", "env")) -> list[Problem]:
    out: list[Problem] = []
    for i, entry in enumerate(env if isinstance(env, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry.get("value"):
            continue
        field = env_field(entry["name"])
        if field is not None:
            out.append(
                Problem(
                    (*at, i, "value"),
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


def _dotted_key(written: str) -> str | None:
    """The credential key of vLLM's dotted form of a dict option (--hf-overrides.token=..., whose keys
    vLLM's parser nests into the option's JSON), else None."""
    keys = _table()["jsonKeys"]
    if not written.startswith("--") or "." not in written:
        return None
    return next((k for k in written.split(".")[1:] if k.lower().replace("-", "_") in keys), None)


def _credential_flag(written: str, flags: dict[str, str]) -> tuple[str, str] | None:
    """The credential flag ``written`` spells and the field its value belongs in: a flag of the table (in
    any spelling vLLM reads), or vLLM's dotted form of a JSON key that carries one (--hf-overrides.token),
    whose value belongs in a Secret; None for any other flag."""
    if _dotted_key(written) is not None:
        return written, "valueFrom.secretKeyRef"
    name = _flag(written, flags)
    return (name, flags[name]) if name else None


def _args(args: Any, at: Path = ("vllm", "extraArgs")) -> list[Problem]:
    flags = _table()["flags"]
    out: list[Problem] = []
    pending: tuple[str, str] | None = None  # a credential flag whose value is the next token, and its field
    for i, arg in enumerate(args if isinstance(args, list) else []):
        if not isinstance(arg, str):
            continue
        if arg.startswith("-"):
            written, eq, value = arg.partition("=")
            flag = _credential_flag(written, flags)
            pending = flag if flag and not eq else None
            if flag and eq and not _is_reference(value):
                out.append(
                    Problem(
                        (*at, i),
                        f"{written} takes a credential: a literal value would be committed with the spec",
                        _hint(flag[1]),
                    )
                )
        elif pending is not None and not _is_reference(arg):
            out.append(
                Problem(
                    (*at, i),
                    f"the value of {pending[0]} is a credential: a literal value would be committed with the spec",
                    _hint(pending[1]),
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
def _shapes() -> tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None, str], ...]:
    # ASCII classes (\b, \s), as RE2 reads them in the chart; `also`: a second pattern the string must match
    return tuple(
        (
            s["what"],
            re.compile(s["pattern"], re.ASCII),
            re.compile(s["also"], re.ASCII) if s.get("also") else None,
            s["hint"],
        )
        for s in _table()["shapes"]
    )


@cache
def _json_pair() -> re.Pattern[str]:
    return re.compile(_table()["jsonPair"], re.ASCII)


def _in_string(path: Path, text: str) -> Problem | None:
    """A well-known token shape anywhere in ``text``, else a JSON key that carries a credential
    ("token": "..."); the problem never repeats the value."""
    if _is_reference(text):
        return None
    for what, pattern, also, hint in _shapes():
        if pattern.search(text) and (also is None or also.search(text)):
            return Problem(path, f"holds {what}: a literal credential would be committed with the spec", hint)
    keys = _table()["jsonKeys"]
    for written, value in _json_pair().findall(text):
        key = json.loads(f'"{written}"')  # JSON's \uXXXX escapes decoded: "to\u006ben" is "token"
        if value and key.lower().replace("-", "_") in keys and not _is_reference(value):
            return Problem(
                path,
                f"the JSON key {quoted(key)} carries a credential: a literal value would be committed with the spec",
                _hint("valueFrom.secretKeyRef")
                + ", then write the value as $(NAME) of that env var (Kubernetes expands it in args)",
            )
    return None


MASK = "<credential left out>"


def mask(text: str) -> str:
    """``text`` with every well-known token shape in it replaced by MASK (a message about an input field
    never repeats a credential, not even one written as a key)."""
    for _what, pattern, _also, _hint in _shapes():
        text = pattern.sub(MASK, text)
    return text


def masked(problem: Problem) -> Problem:
    """A problem about the input whose path, message and hint repeat no credential."""
    path = tuple(mask(p) if isinstance(p, str) else p for p in problem.path)
    hint = mask(problem.hint) if problem.hint is not None else None
    if path == problem.path and hint == problem.hint and mask(problem.message) == problem.message:
        return problem
    return dataclasses.replace(problem, path=path, message=mask(problem.message), hint=hint)


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


def kind_of(obj: Any) -> str:
    """An object's kind as the credential rules compare it: trimmed, lower case ("Secret ", "secret")."""
    kind = obj.get("kind") if isinstance(obj, dict) else None
    return kind.strip().lower() if isinstance(kind, str) else ""


def objects(node: Any, path: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """An extraObjects item and, for a List kind (List, SecretList, ...), every object in its items."""
    if not isinstance(node, dict):
        return
    yield path, node
    if kind_of(node).endswith("list") and isinstance(node.get("items"), list):
        for j, item in enumerate(node["items"]):
            yield from objects(item, (*path, "items", j))


def _containers(node: Any, path: Path) -> list[Problem]:
    """Inside a user's object: every env list (a container's) and args/command list, by the rules of
    vllm.env and vllm.extraArgs."""
    out: list[Problem] = []
    if isinstance(node, dict):
        for key, value in node.items():
            at = (*path, str(key))
            if key == "env" and isinstance(value, list):
                out += _env(value, at)
            elif key in ("args", "command") and isinstance(value, list):
                out += _args(value, at)
            else:
                out += _containers(value, at)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _containers(value, (*path, i))
    return out


def _extra_objects(items: Any) -> list[Problem]:
    """extraObjects (List kinds unwrapped): containers' env and args, and a ConfigMap's keys, by the same rules
    (a ConfigMap read with envFrom delivers its keys as env vars)."""
    out: list[Problem] = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        for path, obj in objects(item, ("extraObjects", i)):
            if kind_of(obj) == "configmap":
                for section in ("data", "binaryData"):
                    data = obj.get(section)
                    for key, value in data.items() if isinstance(data, dict) else []:
                        if isinstance(key, str) and value and env_field(key) is not None:
                            out.append(
                                Problem(
                                    (*path, section, key),
                                    f"{key} carries a credential: a ConfigMap's value is a literal committed with the "
                                    "spec, and envFrom would hand it to a container as that env var",
                                    "put it in a Secret created outside kvgen and take it with envFrom.secretRef or "
                                    "valueFrom.secretKeyRef",
                                )
                            )
            elif not kind_of(obj).endswith("list"):
                out += _containers(obj, path)
    return out


def literals(data: Any) -> list[Problem]:
    """Every credential written literally in a native spec (plain data, checked before or
    without the model validation, so it is reported with the spec's other problems): values of
    the env vars and flags that carry one, in vllm and in extraObjects, and the shapes of well-known
    tokens anywhere."""
    vllm = data.get("vllm") if isinstance(data, dict) else None
    named = _env(vllm.get("env")) + _args(vllm.get("extraArgs")) if isinstance(vllm, dict) else []
    if isinstance(data, dict):
        named += _extra_objects(data.get("extraObjects"))
    return named + _anywhere(data, {p.path for p in named})


__all__ = ["env_field", "kind_of", "literals", "objects"]
