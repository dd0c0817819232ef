"""Reading YAML input while remembering where each value came from.

Specs are read with ruamel.yaml's round-trip loader, which records the line and column of
every key and list item. ``SourceDoc.locate(path)`` turns a spec path into ``file:line:col``
for error messages. Documents are handed on as plain dicts and lists.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from kvgen.errors import Location, Path, Problem, SpecError


@dataclass
class SourceDoc:
    """One YAML document of an input file."""

    file: str
    data: Any  # plain dict/list/scalars
    positions: dict[Path, tuple[int, int]]  # 0-based (line, col) per path
    start_line: int = 0
    lines: tuple[str, ...] = ()  # the whole input's lines, to place values inside embedded YAML

    def locate(self, path: Path) -> Location:
        """The closest recorded position to ``path`` (walking up to its parents)."""
        p = tuple(path)
        while p:
            if p in self.positions:
                line, col = self.positions[p]
                return Location(self.file, line + 1, col + 1)
            p = p[:-1]
        return Location(self.file, self.start_line + 1, 1)


def _plain(node: Any, path: Path, positions: dict[Path, tuple[int, int]]) -> Any:
    if isinstance(node, CommentedMap):
        out = {}
        for key, value in node.items():
            child = (*path, str(key))
            try:
                positions[child] = node.lc.key(key)
            except (KeyError, TypeError):  # keys from merges have no position of their own
                pass
            out[str(key)] = _plain(value, child, positions)
        return out
    if isinstance(node, CommentedSeq):
        out_list = []
        for i, value in enumerate(node):
            child = (*path, i)
            try:
                positions[child] = node.lc.item(i)
            except (KeyError, TypeError, IndexError):
                pass
            out_list.append(_plain(value, child, positions))
        return out_list
    if isinstance(node, str):
        return str(node)  # drop ruamel's scalar-string subclasses
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def load_documents(text: str, file: str) -> list[SourceDoc]:
    """All non-empty documents of a YAML stream, or a SpecError naming file:line."""
    yaml = YAML(typ="rt")
    try:
        raw = list(yaml.load_all(io.StringIO(text)))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else None
        message = str(exc.problem or "")
        if exc.context:
            message = f"{exc.context} (started at line {exc.context_mark.line + 1}): {message}" if exc.context_mark else f"{exc.context}: {message}"
        raise SpecError(file, [Problem((), f"malformed YAML: {message}", location=loc)]) from None
    except YAMLError as exc:
        raise SpecError(file, [Problem((), f"malformed YAML: {exc}")]) from None
    docs = []
    lines = tuple(text.splitlines())
    for node in raw:
        if node is None:
            continue
        positions: dict[Path, tuple[int, int]] = {}
        data = _plain(node, (), positions)
        start = node.lc.line if hasattr(node, "lc") and node.lc.line is not None else 0
        docs.append(SourceDoc(file=file, data=data, positions=positions, start_line=start, lines=lines))
    return docs
