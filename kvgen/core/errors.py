"""Problems found in a spec, and the errors kvgen raises.

A ``Problem`` names its path in the spec, its file:line, what is wrong and how to fix it. It is
the one problem type of kvgen: the spec checks, the catalog, the sizing, the dialects and the
contract checks (``kvgen.data.contract``) all report them. kvgen reports every problem of a spec at
once (bitnami "VALUES VALIDATION" style), sorted by file and line (then path), so a user fixes
a spec in one pass instead of one error per run.

Every exception kvgen raises on purpose derives from ``KvgenError``; anything else reaching
the CLI is a bug (exit 4, "internal error").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """("kvCacheOffloading", "secondary", 1, "fileSystem") -> "kvCacheOffloading.secondary[1].fileSystem"."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(spec)"


@dataclass(frozen=True)
class Location:
    file: str
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Problem:
    """One problem: ``path`` in the spec (or, for a command line, the argument's index),
    ``message``, an optional ``hint`` ("did you mean ..."), where it was written, and an
    optional stable ``code`` (the contract checks' categories, such as ``unknown-flag``)."""

    path: Path
    message: str
    hint: str | None = None
    location: Location | None = None
    code: str | None = None

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{format_path(self.path)}: {self.message}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.render()

    def at(self, location: Location | None) -> Problem:
        return replace(self, location=location)

    def under(self, *prefix: str | int) -> Problem:
        """The same problem with its path below ``prefix``."""
        return replace(self, path=(*prefix, *self.path))


# What quoted() escapes, as Python's repr does: the backslash, then the C0 and C1 control characters
# and DEL (a terminal reads ESC and CSI as commands), \t \n \r by name and the others as \xNN.
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))} | {
    ord("\\"): "\\\\",
    ord("\t"): "\\t",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
}


def quoted(value: object) -> str:
    """A value the user wrote, as a message quotes it: Python's repr of a string ('a', "it's",
    'tab\\t', 'esc\\x1b'), the same for any other value's text; other characters repr would escape
    (U+2028, U+00A0) are left as written. The chart's twin is ``kvgen.quoted``
    (templates/_helpers.tpl), so both faces word a problem alike."""
    text = str(value).translate(_ESCAPES)
    if "'" in text and '"' not in text:
        return f'"{text}"'
    return "'" + text.replace("'", "\\'") + "'"


def short_quoted(value: object, limit: int = 40) -> str:
    """``quoted(value)``, cut after ``limit`` characters with their count: a hostile spec's value may be a
    megabyte long. The chart's twin is ``kvgen.shortQuoted`` (templates/_keys.tpl)."""
    text = quoted(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def shown(value: object) -> str:
    """A value the user wrote, in a message: a string quoted (``quoted``), any other value as
    Python writes it (1.5, True, None, [1]), which says it was not a string."""
    return quoted(value) if isinstance(value, str) else repr(value)


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The "did you mean" of a hint: the closest of ``choices`` (difflib's ratio, at least 0.6),
    case-insensitive. The chart's ``kvgen.suggest`` (templates/_suggest.tpl) computes the same."""
    lowered = {c.lower(): c for c in choices}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+")
SHORT_WORD = 4  # letters: a shorter word is a product code (p4d, p4de; g6, g6e): only a swap or a doubling is a typo


def _tokens(name: str) -> list[str]:
    """A name's words and numbers, in order, lowercase: runs of ASCII letters and runs of digits; every
    other character separates them ('Standard_NC24ads_A100_v4' -> standard nc 24 ads a 100 v 4)."""
    return [t.lower() for t in _TOKEN.findall(name)]


def _one_typo(a: str, b: str) -> bool:
    """Whether two different words are one typo apart: two neighbours swapped, or one letter doubled
    (or undoubled); in words of at least SHORT_WORD letters also one letter dropped, added or changed."""
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        swapped = i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
        return swapped or (len(a) >= SHORT_WORD and a[i + 1 :] == b[i + 1 :])
    if len(b) != len(a) + 1 or a[i:] != b[i + 1 :]:
        return False
    # b is a with b[i] added: a doubling when b[i] repeats a neighbour
    return len(a) >= SHORT_WORD or (i > 0 and b[i - 1] == b[i]) or (i + 1 < len(b) and b[i + 1] == b[i])


def near_typo(word: str, choices: Iterable[str]) -> str | None:
    """The "did you mean" of an unknown model or instance type: a choice that differs from ``word`` by
    case, separators (any run of characters that are neither ASCII letters nor digits, and where a
    word meets a number) and at most one typo (``_one_typo``) in one word, with every number equal.
    A different product is never offered: numbers name sizes and versions (g5.2xlarge is not
    g5.12xlarge, Mixtral-8x7B-Instruct-v0.1 not Mistral-7B-Instruct-v0.3), short words variants (p4d,
    p4de). The first such choice in sorted order: an exact match of the words before a typo. The
    chart's twin is ``kvgen.nearTypo`` (templates/_suggest.tpl)."""
    tokens = _tokens(word)
    typo = None
    for choice in sorted(choices):
        other = _tokens(choice)
        if len(other) != len(tokens):
            continue
        differ = [(a, b) for a, b in zip(tokens, other, strict=True) if a != b]
        if not differ:
            return choice
        if typo is None and len(differ) == 1:
            a, b = differ[0]
            if not (a.isdigit() or b.isdigit()) and _one_typo(a, b):
                typo = choice
    return typo


def _path_key(path: Path) -> tuple[tuple[int, int, str], ...]:
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in path)


def sort_key(problem: Problem) -> tuple[str, int, int, tuple[tuple[int, int, str], ...], str]:
    """File, line and column, then path: the order problems are printed in. Problems without a
    location (a whole input, say) come first within their file."""
    loc = problem.location
    return (
        loc.file if loc else "",
        loc.line if loc else 0,
        loc.column if loc else 0,
        _path_key(problem.path),
        problem.message,
    )


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    return sorted(problems, key=sort_key)


class KvgenError(Exception):
    """The base of every error kvgen raises on purpose (bad input, unusable output directory,
    unsupported version, ...); the CLI maps each to its exit code."""


@dataclass
class SpecError(KvgenError):
    """One or more problems with one input (``source``: its file; empty before the problems are
    located in a file), kept sorted by line, then path."""

    source: str
    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.problems = sorted_problems(self.problems)

    def __str__(self) -> str:
        n = len(self.problems)
        head = f"{self.source or 'spec'}: {n} problem{'s' if n != 1 else ''}"
        return "\n".join([head, *("  " + p.render() for p in self.problems)])


class OutputInvalidError(KvgenError):
    """Rendered objects that Kubernetes would reject: a bug in kvgen, never the user's fault."""

    def __init__(self, messages: Iterable[str]):
        self.messages = list(messages)
        super().__init__("\n".join(self.messages))
