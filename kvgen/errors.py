"""Problems found in a spec: each names its path in the spec, its file:line, and how to fix it.

kvgen reports every problem of a spec at once (bitnami "VALUES VALIDATION" style), so a
user fixes a spec in one pass instead of one error per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

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
    path: Path
    message: str
    hint: str | None = None
    location: Location | None = None

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{format_path(self.path)}: {self.message}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


@dataclass
class SpecError(Exception):
    """One or more problems with one input document."""

    source: str
    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        n = len(self.problems)
        head = f"{self.source}: {n} problem{'s' if n != 1 else ''}"
        return "\n".join([head, *("  " + p.render() for p in self.problems)])


class OutputInvalidError(Exception):
    """Rendered objects that Kubernetes would reject: a bug in kvgen, never the user's fault."""

    def __init__(self, messages: Iterable[str]):
        self.messages = list(messages)
        super().__init__("\n".join(self.messages))
