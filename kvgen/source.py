"""Reading YAML input while remembering where each value came from.

Specs are read with ruamel.yaml's safe loader (C parser), and, when a position is first asked
for, again with its round-trip loader, which records the line and column of every key and
list item. ``SourceDoc.locate(path)`` turns a spec path into ``file:line:col`` for error
messages. Documents are handed on as plain dicts and lists.
"""

from __future__ import annotations

import io
from functools import cache
from typing import Any

from kvgen.errors import Location, Path, Problem, SpecError


class _Stream:
    """One input text, read with the round-trip loader only when a position is asked for."""

    def __init__(self, text: str, file: str):
        self.text = text
        self.file = file
        self._docs: list[tuple[dict[Path, tuple[int, int]], int]] | None = None
        self._lines: tuple[str, ...] | None = None

    @property
    def lines(self) -> tuple[str, ...]:
        if self._lines is None:
            self._lines = tuple(self.text.splitlines())
        return self._lines

    def positions(self, index: int) -> tuple[dict[Path, tuple[int, int]], int]:
        """(positions, start line) of the ``index``-th non-empty document."""
        if self._docs is None:
            try:
                self._docs = [(doc.positions, doc.start_line) for doc in _load_round_trip(self.text, self.file)]
            except SpecError:  # libyaml read what the pure parser refuses: no positions, not a crash
                self._docs = []
        return self._docs[index] if index < len(self._docs) else ({}, 0)


class SourceDoc:
    """One YAML document of an input file."""

    def __init__(
        self,
        file: str,
        data: Any,  # plain dict/list/scalars
        positions: dict[Path, tuple[int, int]] | None = None,  # 0-based (line, col) per path
        start_line: int = 0,
        lines: tuple[str, ...] = (),  # the whole input's lines, to place values inside embedded YAML
        *,
        stream: _Stream | None = None,
        index: int = 0,
    ):
        self.file = file
        self.data = data
        self._positions = positions
        self._start_line = start_line
        self._lines = lines
        self._stream = stream  # where positions come from when they were not given
        self._index = index

    def _resolve(self) -> None:
        if self._positions is None:
            if self._stream is None:
                self._positions = {}
            else:
                self._positions, self._start_line = self._stream.positions(self._index)

    @property
    def positions(self) -> dict[Path, tuple[int, int]]:
        self._resolve()
        return self._positions  # type: ignore[return-value]

    @property
    def start_line(self) -> int:
        self._resolve()
        return self._start_line

    @property
    def lines(self) -> tuple[str, ...]:
        return self._stream.lines if self._stream is not None else self._lines

    def __repr__(self) -> str:
        return f"SourceDoc(file={self.file!r}, data={self.data!r})"

    def locate(self, path: Path) -> Location:
        """The closest recorded position to ``path`` (walking up to its parents)."""
        p = tuple(path)
        positions = self.positions
        while p:
            if p in positions:
                line, col = positions[p]
                return Location(self.file, line + 1, col + 1)
            p = p[:-1]
        return Location(self.file, self.start_line + 1, 1)


def _plain(node: Any, path: Path, positions: dict[Path, tuple[int, int]]) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

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


def _load_round_trip(text: str, file: str) -> list[SourceDoc]:
    """Every non-empty document with the position of every key and item (ruamel's round-trip
    loader, pure Python), or a SpecError naming file:line."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

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
        docs.append(SourceDoc(file, data, positions, start, lines))
    return docs


class _NotPlain(Exception):
    pass


def _copy_plain(node: Any) -> Any:
    """The safe loader's data as the round-trip path gives it: string keys, fresh containers
    (no aliases shared), only JSON's types; _NotPlain for anything else (a timestamp, a set)."""
    t = type(node)
    if t is dict:
        return {str(k): _copy_plain(v) for k, v in node.items()}
    if t is list:
        return [_copy_plain(v) for v in node]
    if t in (str, int, float, bool) or node is None:
        return node
    raise _NotPlain


@cache
def _safe_loader() -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe")  # the C parser (ruamel.yaml.clib) when it is installed


def load_documents(text: str, file: str) -> list[SourceDoc]:
    """All non-empty documents of a YAML stream, or a SpecError naming file:line.

    The data comes from ruamel.yaml's safe loader (its C parser); positions, needed only to
    report a problem, from the round-trip loader, on first use. Input the safe loader refuses
    or could read differently (a merge key, a tag, a %YAML directive, a timestamp) is read by
    the round-trip loader at once, which also words every YAML error."""
    if "<<" not in text and "!" not in text and "%YAML" not in text:
        try:
            raw = list(_safe_loader().load_all(text))
            data = [_copy_plain(node) for node in raw if node is not None]
        except Exception:  # noqa: BLE001 - malformed, duplicate keys...: the round-trip loader reports it
            pass
        else:
            stream = _Stream(text, file)
            return [SourceDoc(file, d, stream=stream, index=i) for i, d in enumerate(data)]
    return _load_round_trip(text, file)
