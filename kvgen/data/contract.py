"""Read the contract snapshots of vLLM and LMCache and walk an argv the way their parsers would.

The snapshots (``charts/kvgen/files/contract/vllm-<v>.json``, ``lmcache-<v>.json``, shipped in
the wheel) are captured from the real packages by ``scripts/capture-contract``. kvgen checks a
spec's ``vllm.extraArgs`` with them (``kvgen.data.flags``, ``kvgen.plan.extra_args``): this module
reads them as plain data and walks an argv the way argparse would with the snapshot's options,
without importing either package: unknown flags, a value missing or given to a switch, a bad
int/float, a choice outside the list.

It is stricter than the runtimes' parsers, on purpose: option names must be spelled out
(argparse accepts a unique prefix). Values whose parsers are functions of vLLM (``--max-model-len``'s
``1k``, for example) are left to the live contract tier (``pytest -m contract``), which runs the
real parsers.

The checks of whole rendered command lines (the ``--kv-transfer-config`` JSON, the LMCache server
line, the command lines of rendered objects) run only in the tests: ``tests/contract_check.py``.

Standard library only, so that the fast test tier needs neither package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvgen.core.errors import Path as ErrPath
from kvgen.core.errors import Problem, quoted, suggest

# Problem categories (stable strings: tests and reports use them; tests/contract_check.py adds
# those of the whole-line checks)
UNKNOWN_FLAG = "unknown-flag"
MISSING_VALUE = "missing-value"
UNEXPECTED_VALUE = "unexpected-value"
BAD_VALUE = "bad-value"
BAD_CHOICE = "bad-choice"
UNEXPECTED_ARGUMENT = "unexpected-argument"


def _p(code: str, message: str, at: ErrPath = (), hint: str | None = None) -> Problem:
    """A contract problem: ``at`` is the argument's index in the checked argv (or () for the
    whole line), ``code`` one of the categories above."""
    return Problem(at, message, hint, code=code)


@dataclass(frozen=True)
class Snapshots:
    vllm: Mapping[str, Any]
    lmcache: Mapping[str, Any]

    @classmethod
    def load(cls, directory: Path, vllm_version: str, lmcache_version: str) -> Snapshots:
        def read(name: str) -> Mapping[str, Any]:
            return json.loads((directory / name).read_text(encoding="utf-8"))

        return cls(read(f"vllm-{vllm_version}.json"), read(f"lmcache-{lmcache_version}.json"))


# ----------------------------------------------------------------------------- argv walking


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclass
class Parsed:
    """What an argv set: option string -> list of values (None for a switch), in order."""

    given: dict[str, list[str | None]] = field(default_factory=dict)
    at: dict[str, list[int]] = field(default_factory=dict)  # the argv index of each value's option
    positionals: list[tuple[int, str]] = field(default_factory=list)  # (argv index, token)
    # every option given: (its argv index, the option as the parser knows it, the indexes of its tokens)
    options: list[tuple[int, str, list[int]]] = field(default_factory=list)

    def has(self, option_dest_or_flag: str) -> bool:
        return option_dest_or_flag in self.given

    def record(self, key: str, values: list[str | None], index: int) -> None:
        self.given.setdefault(key, []).extend(values)
        self.at.setdefault(key, []).extend([index] * len(values))


def _looks_like_value(token: str) -> bool:
    return not token.startswith("-") or bool(_NEGATIVE_NUMBER.match(token))


# int() and float() literals (Python's grammar, ASCII whitespace): the chart reads values with the
# same patterns (templates/plan/_vllmargs.tpl)
_DIGITS = r"[0-9](?:_?[0-9])*"
_INT = re.compile(rf"^[ \t\n\r\f\v]*[+-]?{_DIGITS}[ \t\n\r\f\v]*$")
_FLOAT = re.compile(
    rf"^[ \t\n\r\f\v]*[+-]?(?:(?:{_DIGITS}\.(?:{_DIGITS})?|\.{_DIGITS}|{_DIGITS})(?:[eE][+-]?{_DIGITS})?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])[ \t\n\r\f\v]*$"
)


def _check_value(option: str, spec: Mapping[str, Any], value: str, problems: list[Problem], arg: ErrPath) -> None:
    """int/float/optional[...] conversions and choices, the way argparse applies them."""
    kind = spec.get("type")
    converted: Any = value
    optional = isinstance(kind, str) and kind.startswith("optional[")
    inner = kind[len("optional[") : -1] if isinstance(kind, str) and optional else kind
    if optional and value in ("", "None"):
        return
    if inner in ("int", "float"):
        if not (_INT if inner == "int" else _FLOAT).match(value):
            problems.append(
                _p(
                    BAD_VALUE,
                    f"{option} takes {inner} values, got {quoted(value)}",
                    arg,
                    "a whole number" if inner == "int" else "a number",
                )
            )
            return
        converted = int(value) if inner == "int" else float(value)
    choices = spec.get("choices")
    if choices is not None and converted not in choices and value not in [str(c) for c in choices]:
        close = suggest(value, [str(c) for c in choices])
        problems.append(
            _p(
                BAD_CHOICE,
                f"{option}: {quoted(value)} is not one of {', '.join(map(str, choices))}",
                arg,
                f"did you mean {quoted(close)}?" if close else None,
            )
        )


OPTIMIZATION_LEVEL = "--optimization-level"  # vLLM reads -O3, -O=3, -Odecode and -O 3 as this option


def walk_argv(argv: list[str], parser: Mapping[str, Any], problems: list[Problem], offset: int = 0) -> Parsed:
    """Consume ``argv`` the way argparse would with the snapshot's options (exact names; for vLLM,
    after its own rewriting: '_' for '-', dotted keys of JSON options, -O). Problems point at the
    index of the token (plus ``offset``) they are about. The chart walks a spec's vllm.extraArgs
    the same way (templates/plan/_vllmargs.tpl)."""
    options: Mapping[str, Any] = parser["options"]
    normalize = parser.get("normalizes_underscores", False)
    parsed = Parsed()
    i = 0
    while i < len(argv):
        token = argv[i]
        here = (offset + i,)
        i += 1
        if token == "--":
            parsed.positionals += [(offset + j, argv[j]) for j in range(i, len(argv))]
            break
        if not token.startswith("-") or _NEGATIVE_NUMBER.match(token):
            parsed.positionals.append((here[0], token))
            continue
        name, has_inline, inline = token.partition("=")
        if normalize and OPTIMIZATION_LEVEL in options and token.startswith("-O"):
            if token != "-O":
                name, has_inline, inline = OPTIMIZATION_LEVEL, "=", token[3:] if token[2:3] == "=" else token[2:]
            elif i < len(argv) and argv[i] in ("0", "1", "2", "3"):
                name = OPTIMIZATION_LEVEL
        if normalize and name.startswith("--"):
            name = normalize_flag(name)
        sub_key = None
        if normalize and "." in name and name not in options:
            name, _, sub_key = name.partition(".")  # --kv-transfer-config.kv_connector X
        if (
            name not in options
            and not name.startswith("--")
            and not has_inline
            and len(name) > 2
            and options.get(name[:2], {}).get("takes_value")
        ):
            name, has_inline, inline = name[:2], "=", name[2:]  # argparse: -n2 is -n 2
        spec = options.get(name)
        if spec is None:
            problems.append(
                _p(UNKNOWN_FLAG, f"{name} is not an option of {parser['prog']}", here, _unknown_hint(name, parser))
            )
            if not has_inline and i < len(argv) and _looks_like_value(argv[i]):
                i += 1  # skip what is probably its value, so it is not reported as a positional
            continue
        occurrence: list[int] = [here[0]]
        parsed.options.append((here[0], name, occurrence))
        if sub_key is not None:
            name = f"{name}.{sub_key}"
        values: list[str | None]
        value_at = [here] if has_inline else []
        if not spec["takes_value"]:
            if has_inline:
                problems.append(
                    _p(
                        UNEXPECTED_VALUE,
                        f"{name} is a switch and takes no value",
                        here,
                        f"write {token.split('=', 1)[0]} alone",
                    )
                )
            values = [None]
        elif has_inline:
            values = [inline]
        else:
            nargs = spec.get("nargs")
            if nargs in (None, 1) or isinstance(nargs, int):
                count = 1 if nargs is None else nargs
                taken: list[str] = []
                while len(taken) < count and i < len(argv) and _looks_like_value(argv[i]):
                    taken.append(argv[i])
                    value_at.append((offset + i,))
                    i += 1
                occurrence += [at[0] for at in value_at]
                if len(taken) < count:
                    problems.append(_p(MISSING_VALUE, f"{name} expects {count} value(s)", here, f"write {name}=VALUE"))
                    continue
                values = list(taken)
            else:  # '?', '*', '+'
                taken = []
                while i < len(argv) and _looks_like_value(argv[i]) and (nargs != "?" or not taken):
                    taken.append(argv[i])
                    value_at.append((offset + i,))
                    i += 1
                occurrence += [at[0] for at in value_at]
                if nargs == "+" and not taken:
                    problems.append(_p(MISSING_VALUE, f"{name} expects at least one value", here))
                    continue
                values = list(taken) or [None]
        if sub_key is not None:  # one key of a JSON option: recorded apart from the whole value
            parsed.record(name, values, here[0])
            continue
        for value, at in zip(values, value_at, strict=False):  # [None] has no position
            if value is not None:
                _check_value(name, spec, value, problems, at)
        parsed.record(name, values, here[0])
        parsed.record(spec["dest"], values, here[0])
    return parsed


def _unknown_hint(name: str, parser: Mapping[str, Any]) -> str:
    """An option that starts with ``name`` (argparse would take the abbreviation: kvgen wants it
    written out), else the closest option, else where to look."""
    shown = [o for o, s in parser["options"].items() if not s.get("hidden")]
    prefixed = [o for o in shown if o.startswith(name)]
    close = prefixed[0] if len(prefixed) == 1 else suggest(name, shown)
    return f"did you mean {close}?" if close else f"see `{parser['prog']} --help`"


def normalize_flag(name: str) -> str:
    """vLLM: '_' and '-' are interchangeable up to the first '.' (argparse_utils.py):
    '--max_model_len' -> '--max-model-len', '--kv_transfer_config.kv_connector' ->
    '--kv-transfer-config.kv_connector'."""
    head, dot, tail = name[2:].partition(".")
    return "--" + head.replace("_", "-") + dot + tail
