"""Reading YAML input while remembering where each value came from.

Specs are read with ruamel.yaml's round-trip loader, which records the line and column of
every key and list item. ``SourceDoc.locate(path)`` turns a spec path into ``file:line:col``
for error messages. Documents are handed on as plain dicts and lists.

Fast path: positions are needed only to report a problem, so an input is first read by
ruamel.yaml's safe loader (its C parser, libyaml), and read again by the round-trip loader
only when a position is first asked for. Whatever the safe loader could read differently, or
that the checks below refuse, goes to the round-trip loader at once: a merge key, a tag, a
%YAML directive, a \\u escape, a tab, a block scalar (| or >), a timestamp, an integer
beyond 64 bits, nesting beyond ``MAX_DEPTH``, more than half ``MAX_NODES`` values or
``MAX_EXPANDED`` characters, a parse error, and any input with more than ``FAST_INDICATORS``
of the characters that open a level of nesting (the C parser composes recursively: deep
enough nesting would overflow its stack).

Input is untrusted (a pull request's specs in CI), so reading it has bounded cost and every
way it can be wrong is a problem with its ``file:line``, never a crash:

- UTF-8 only (a BOM is allowed): UTF-16, Latin-1 and binary files are refused where the first
  undecodable byte is; NUL and other characters YAML forbids are located by line;
- at most ``MAX_INPUT_BYTES`` per input, nesting at most ``MAX_DEPTH`` levels deep;
- at most ``MAX_NODES`` values and ``MAX_EXPANDED`` characters of scalars per input, each YAML
  alias counted as the whole subtree it repeats: aliases are allowed, but an alias bomb is
  refused while it is parsed, before anything is copied (and parsing stays within seconds);
- a %YAML directive names YAML 1.2 or 1.1 (``YAML_VERSIONS``), and directives are followed by
  ``---``: otherwise a problem at the directive (ruamel.yaml asserts on ``%YAML 1.3``, or fails with
  a KeyError on one after a first document);
- integers must fit in 64 bits (what Kubernetes and Helm hold); timestamps stay the strings
  they were written as (as Helm reads them); other YAML types (``!!binary``, ``!!set``,
  ``!!omap``, custom tags) are refused;
- an explicit tag is taken only where the value fits it (``!!int "8"``; not ``!!int lmcache``,
  nor ``!!set 5``): the misfit is a problem at its path, before any of ruamel's constructors sees it;
- a plain scalar that YAML 1.1 (Helm's and kubectl's reader) reads otherwise than YAML 1.2 (``on``
  a boolean, ``010`` octal 8, ``1:20`` sexagesimal) is a problem with the code ``YAML11_CODE``:
  the two faces of kvgen would read different values from the same file.
"""

from __future__ import annotations

import io
import json
import re
import warnings
from functools import cache
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer, MaxDepthExceededError
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError, YAMLWarning
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scanner import RoundTripScanner, ScannerError

from kvgen.core.errors import KvgenError, Location, Path, Problem, SpecError, quoted
from kvgen.core.plain_tags import remember, yaml11_differs

MAX_INPUT_BYTES = 1024 * 1024  # per input file; a spec is a few KB, a KServe resource tens of KB
MAX_DEPTH = 100  # nesting levels; the deepest real field (an affinity term's values) is about 12
MAX_NODES = 20_000  # YAML nodes per input, aliases expanded; a spec has ~100, a KServe resource a few hundred
MAX_EXPANDED = MAX_INPUT_BYTES  # characters of all scalars per input, aliases expanded
INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # Kubernetes' and Helm's integers are int64
# the code of a problem with a plain scalar that YAML 1.1 (Helm, kubectl) reads otherwise than kvgen (on, 010)
YAML11_CODE = "yaml-1.1-differs"
_MAX_INT_TEXT = 40  # longer integer literals are out of range without converting them

BOMS = {
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\xfe\xff": "UTF-16",
    b"\xff\xfe": "UTF-16",
}


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:g} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def _where(data: bytes | str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of an offset into the input."""
    if isinstance(data, bytes):
        lines, last = data.count(b"\n", 0, offset), data.rfind(b"\n", 0, offset)
    else:
        lines, last = data.count("\n", 0, offset), data.rfind("\n", 0, offset)
    return lines + 1, offset - (last + 1) + 1


def _too_large(file: str) -> Problem:
    return Problem(
        (),
        f"the input is larger than {_size(MAX_INPUT_BYTES)}, the most kvgen reads from one input (a spec is a few KB)",
        "split it into several files",
        Location(file, 1, 1),
    )


def decode(data: bytes, file: str) -> str:
    """The text of an input file, or a SpecError saying why it is not a UTF-8 YAML file
    of a sane size."""
    if len(data) > MAX_INPUT_BYTES:
        raise SpecError(file, [_too_large(file)])
    for bom, encoding in BOMS.items():
        if data.startswith(bom):
            raise SpecError(
                file,
                [
                    Problem(
                        (),
                        f"the file is {encoding} text; kvgen reads UTF-8",
                        f"convert it: iconv -f {encoding} -t UTF-8",
                        Location(file, 1, 1),
                    )
                ],
            )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _where(data, exc.start)
        byte = data[exc.start]
        raise SpecError(
            file,
            [
                Problem(
                    (),
                    f"not UTF-8 text: byte 0x{byte:02x} cannot be decoded (a binary file, or "
                    "another encoding such as Latin-1?)",
                    "save the file as UTF-8",
                    Location(file, line, col),
                )
            ],
        ) from None


class InputBoundError(KvgenError, ConstructorError):
    """Well-formed YAML that kvgen refuses to read (too large once expanded, out of range)."""


class _Composer(Composer):
    """ruamel's composer, measuring the input as if every alias were expanded: the nodes and
    the scalar characters, an alias counting the whole subtree it repeats. Refuses an input
    beyond MAX_NODES or MAX_EXPANDED while it is parsed (an alias bomb costs nothing). Records
    the plain scalars that YAML 1.1 reads otherwise (``on``, ``010``: see ``YAML11_CODE``)."""

    check_yaml11 = True

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self.nodes = 0
        self.chars = 0
        self.subtrees: dict[int, tuple[int, int]] = {}  # anchored node -> (nodes, chars) it holds
        # plain scalar node's id -> (the node, kept so that its id is not reused; what YAML 1.1 reads it as)
        self.ambiguous: dict[int, tuple[Any, str]] = {}

    def _grow(self, nodes: int, chars: int, mark: Any, alias: str | None = None) -> None:
        self.nodes += nodes
        self.chars += chars
        what = f"alias *{alias} (YAML aliases repeat their anchor's whole value)" if alias else "this value"
        if self.nodes > MAX_NODES:
            raise InputBoundError(
                None,
                None,
                f"{what} makes the input hold more than {MAX_NODES:,} values, the most kvgen "
                "reads from one input (a spec holds about a hundred)",
                mark,
            )
        if self.chars > MAX_EXPANDED:
            raise InputBoundError(
                None,
                None,
                f"{what} makes the input's values longer than {_size(MAX_EXPANDED)} in all, "
                "the most kvgen reads from one input",
                mark,
            )

    def compose_scalar_node(self, anchor: Any) -> Any:
        event = self.parser.peek_event()
        node = super().compose_scalar_node(anchor)
        if (
            self.check_yaml11
            and event.ctag is None
            and event.style is None
            and self.resolver.processing_version != (1, 1)
        ):
            other = yaml11_differs(node.value, str(node.tag))
            if other is not None:
                self.ambiguous[id(node)] = (node, other)
        return node

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.parser.check_event(AliasEvent):
            event = self.parser.peek_event()
            node = super().compose_node(parent, index)
            nodes, chars = self.subtrees.get(id(node), (1, len(node.value) if isinstance(node, ScalarNode) else 0))
            self._grow(nodes, chars, event.start_mark, event.anchor)
            return node
        start = (self.nodes, self.chars)
        node = super().compose_node(parent, index)
        self._grow(1, len(node.value) if isinstance(node, ScalarNode) else 0, node.start_mark)
        if node.anchor is not None:
            self.subtrees[id(node)] = (self.nodes - start[0], self.chars - start[1])
        return node


_YAML_TAG = "tag:yaml.org,2002:"
# Explicit tags on a scalar that kvgen takes when the text reads as that type anyway (a float also
# from an integer's text); !!str takes any scalar. Every other tag (!!binary, a custom tag, and any
# tag on a node of the wrong kind: !!set or !!omap on a scalar, !!int on a list) is a problem.
_SCALAR_TAGS = frozenset(_YAML_TAG + t for t in ("int", "float", "bool", "null", "timestamp", "merge"))
_COLLECTION_TAGS = {MappingNode: _YAML_TAG + "map", SequenceNode: _YAML_TAG + "seq"}


def _shown(tag: str) -> str:
    return "!!" + tag[len(_YAML_TAG) :] if tag.startswith(_YAML_TAG) else tag


class Misfit:
    """A value whose explicit YAML tag kvgen does not take, or that its text does not fit
    (``!!int lmcache``, ``!!set 5``): ``_Plain`` reports it as a problem at its path."""

    def __init__(
        self, tag: str, reason: str, text: str | None = None, code: str | None = None, hint: str | None = None
    ):
        self.tag = tag
        self.reason = reason
        self.text = text  # a scalar's text, which names it as a key
        self.hint = hint
        self.code = code

    def __str__(self) -> str:  # in ruamel's messages ("found duplicate key ... with value ...")
        return self.text if self.text is not None else _shown(self.tag)

    # inside a mapping's repr in those messages: the same words, never an object's address
    __repr__ = __str__


def _holds(outer: Any, node: Any) -> bool:
    """Whether ``node`` is ``outer`` or inside it (aliases followed once each): a merge of it would be a cycle."""
    seen: set[int] = set()
    stack = [outer]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, MappingNode):
            stack += [n for pair in current.value for n in pair]
        elif isinstance(current, SequenceNode):
            stack += list(current.value)
    return False


class _Constructor(RoundTripConstructor):
    """Round-trip construction, with 64-bit integers and timestamps kept as written, and explicit
    tags checked against their node before any of ruamel's constructors sees them (those raise
    ValueError, KeyError or AttributeError on a value that does not fit its tag)."""

    def construct_non_recursive_object(self, node: Any, tag: Any = None) -> Any:
        name = str(node.tag if tag is None else tag)
        if isinstance(node, ScalarNode):
            node_other = self.composer.ambiguous.get(id(node))
            if node_other is not None and node_other[0] is node:
                other = node_other[1]
                return Misfit(
                    name,
                    f"{quoted(node.value)} written plain is {other}",
                    node.value,
                    YAML11_CODE,
                    f"write it in quotes for the string ({json.dumps(node.value)}); true or false for a boolean; "
                    "a number without a leading zero",
                )
            if name == _YAML_TAG + "str":
                return str(node.value)  # plain or quoted, or !!str on any scalar: the text itself
            if name not in _SCALAR_TAGS:
                return Misfit(name, f"a YAML {_shown(name)} value is not supported here", node.value)
            implicit = str(self.resolver.resolve(ScalarNode, node.value, (True, False)))
            if implicit != name and not (name == _YAML_TAG + "float" and implicit == _YAML_TAG + "int"):
                what = {
                    "int": "an integer",
                    "float": "a number",
                    "bool": "a boolean",
                    "null": "null",
                    "timestamp": "a date",
                    "merge": "a merge key (<<)",
                }
                fits = what[name[len(_YAML_TAG) :]]
                shown = repr(node.value) if node.value else "an empty value"
                return Misfit(name, f"{shown} is tagged {_shown(name)} but is not {fits}", node.value)
        elif _COLLECTION_TAGS.get(type(node)) != name:
            kind = "mapping" if isinstance(node, MappingNode) else "list"
            return Misfit(name, f"a YAML {_shown(name)} {kind} is not supported here")
        return super().construct_non_recursive_object(node, tag)

    def construct_mapping(self, node: Any, maptyp: Any, deep: bool = False) -> Any:  # type: ignore[override]  # ruamel's round-trip signature
        """A merge key's value must be a plain mapping or a list of them before ruamel merges it
        (``!!merge vllm: !!int {...}`` would hand it a Misfit to merge, fuzzed)."""
        for key_node, value_node in node.value:
            if str(key_node.tag) != _YAML_TAG + "merge":
                continue
            parts = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for part in parts:
                if not isinstance(part, MappingNode) or str(part.tag) != _YAML_TAG + "map":
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"a merge key (<<) takes a mapping or a list of mappings, not a {_shown(str(part.tag))} value",
                        part.start_mark,
                    )
                if _holds(part, node):  # `model: &a {<<: *a}`: ruamel would crash on the half-built mapping
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        "a merge key (<<) cannot merge the mapping it is in (its alias points at its own anchor)",
                        part.start_mark,
                    )
        return super().construct_mapping(node, maptyp, deep)

    def construct_yaml_int(self, node: Any) -> Any:
        text = str(node.value)
        if len(text.replace("_", "")) > _MAX_INT_TEXT:
            raise InputBoundError(
                None,
                None,
                f"an integer of {len(text)} characters is out of range (at most 64 bits, {INT_MAX})",
                node.start_mark,
            )
        digits = text.replace("_", "").lstrip("+-")
        if digits[:2] in ("0b", "0o", "0x"):
            digits = digits[2:]
        if not digits:  # '-_', '0x_': ruamel's int pattern takes them, but they hold no digit (its
            return text  # constructor failed on an empty string); Helm's YAML reads them as strings too
        value = super().construct_yaml_int(node)
        if not INT_MIN <= int(value) <= INT_MAX:
            raise InputBoundError(
                None, None, f"{text} is out of range: integers are at most 64 bits ({INT_MAX})", node.start_mark
            )
        return value

    def construct_yaml_timestamp(self, node: Any, values: Any = None) -> Any:
        return str(node.value)  # Helm (and Kubernetes) read an unquoted date as a string


# The YAML versions a %YAML directive may name: ruamel.yaml reads these two (it asserts on any other
# 1.x when the directive opens the stream, and fails with a KeyError on one after a first document)
YAML_VERSIONS = ((1, 2), (1, 1))
_MAX_VERSION_DIGITS = 9  # a longer number in a %YAML directive is no version (and int() caps digits)


class DirectiveError(KvgenError, ScannerError):
    """A directive kvgen refuses where it is written: a %YAML naming a version kvgen does not read
    (``%YAML 1.3``, ``%YAML 2.0``), or directives not followed by ``---``."""

    def __init__(self, message: str, hint: str, mark: Any):
        super().__init__(None, None, message, mark)
        self.hint = hint


def _unsupported(version: str, mark: Any) -> DirectiveError:
    return DirectiveError(
        f"YAML {version} is not supported: kvgen reads YAML 1.2 (and 1.1)",
        "remove the %YAML line (kvgen reads YAML 1.2), or write %YAML 1.2",
        mark,
    )


class _Scanner(RoundTripScanner):
    """ruamel's scanner, refusing deep flow nesting (``[[[[...``) as it reads it: its search
    for simple keys costs time quadratic in the flow depth, long before the composer's
    depth limit would see the nodes; and, where they are written, a %YAML directive naming a
    version other than ``YAML_VERSIONS`` and directives not followed by ``---`` (ruamel.yaml's
    own error there is about the document's first key: "mapping values are not allowed here")."""

    _directive: tuple[str, Any] | None = None  # (name, mark) of a directive not yet followed by ---

    def reset_scanner(self) -> None:
        super().reset_scanner()
        self._directive = None

    def fetch_directive(self) -> None:
        mark = self.reader.get_mark()
        super().fetch_directive()
        self._directive = (self.tokens[-1].name, mark)

    def fetch_document_start(self) -> None:
        self._directive = None
        super().fetch_document_start()

    def scan_to_next_token(self) -> Any:
        comment = super().scan_to_next_token()
        if comment is None and self._directive is not None:
            ch = self.reader.peek()
            if not (ch == "%" and self.check_directive()) and not (ch == "-" and self.check_document_start()):
                name, mark = self._directive
                raise DirectiveError(
                    f"the %{name} directive on line {mark.line + 1} must be followed by a '---' line, "
                    "the start of the document it applies to",
                    "write --- on the line after the directives",
                    self.reader.get_mark(),
                )
        return comment

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: Any) -> None:
        if len(self.flow_context) >= MAX_DEPTH:
            raise MaxDepthExceededError(None, None, "flow nesting too deep", self.reader.get_mark())
        super().fetch_flow_collection_start(TokenClass, to_push)

    def scan_yaml_directive_number(self, start_mark: Any) -> Any:
        length = 0
        while "0" <= self.reader.peek(length) <= "9":
            length += 1
        if length > _MAX_VERSION_DIGITS:
            raise _unsupported(f"{self.reader.prefix(_MAX_VERSION_DIGITS)}...", start_mark)
        return super().scan_yaml_directive_number(start_mark)

    def scan_yaml_directive_value(self, start_mark: Any) -> Any:
        before = self.yaml_version
        major, minor = version = super().scan_yaml_directive_value(start_mark)
        if version not in YAML_VERSIONS:
            self.yaml_version = before  # never read by the resolver: the error ends the load
            raise _unsupported(f"{major}.{minor}", start_mark)
        return version


for _tag in ("int", "timestamp"):
    _Constructor.add_default_constructor(_tag)


class _Composer12(_Composer):
    check_yaml11 = False


def _yaml(check_yaml11: bool = True) -> YAML:
    yaml = YAML(typ="rt")
    yaml.Scanner = _Scanner
    yaml.Composer = _Composer if check_yaml11 else _Composer12
    yaml.Constructor = _Constructor
    yaml.max_depth = MAX_DEPTH
    return yaml


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
            except SpecError:  # libyaml read what the round-trip loader refuses: no positions, not a crash
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


_SURROGATE = re.compile("[\ud800-\udfff]")
_TAGS = {"bytes": "!!binary", "CommentedSet": "!!set"}  # Python types of YAML values kvgen does not take


class _Plain:
    """ruamel's round-trip objects as plain dicts, lists and scalars, with the position of
    every key and item; values of other YAML types are problems."""

    def __init__(self, file: str, start: int):
        self.file = file
        self.start = start
        self.positions: dict[Path, tuple[int, int]] = {}
        self.problems: list[Problem] = []

    def __call__(self, node: Any, path: Path) -> Any:
        if isinstance(node, CommentedMap):
            out = {}
            for key, value in node.items():
                child = (*path, str(key) if not isinstance(key, Misfit) else key.text or f"({_shown(key.tag)} key)")
                try:
                    self._position(child, node.lc.key(key))
                except (KeyError, TypeError):  # keys from merges have no position of their own
                    pass
                if isinstance(key, Misfit):
                    self._misfit(child, key)
                    continue
                if _SURROGATE.search(str(key)):
                    self._surrogate(child, "key")
                out[str(key)] = self(value, child)
            return out
        if isinstance(node, CommentedSeq):
            out_list = []
            for i, value in enumerate(node):
                child = (*path, i)
                try:
                    self._position(child, node.lc.item(i))
                except (KeyError, TypeError, IndexError):
                    pass
                out_list.append(self(value, child))
            return out_list
        if isinstance(node, str):
            if _SURROGATE.search(node):
                self._surrogate(path, "value")
                return ""
            return str(node)  # drop ruamel's scalar-string subclasses
        if isinstance(node, bool):
            return bool(node)
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            return float(node)
        if node is None:
            return None
        if isinstance(node, Misfit):
            self._misfit(path, node)
            return None
        tag = getattr(getattr(node, "tag", None), "value", None) or _TAGS.get(type(node).__name__, type(node).__name__)
        self.problems.append(
            Problem(
                path,
                f"a YAML {tag} value is not supported here",
                "write a string, number, boolean, list or mapping (quote it to make it a string)",
                self._locate(path),
            )
        )
        return None

    def _position(self, path: Path, at: Any) -> None:
        """Record ``at`` for ``path`` when it is a (line, column); ruamel records None for the
        keys of some collections (an !!omap's)."""
        if isinstance(at, (tuple, list)) and len(at) == 2 and all(type(n) is int for n in at):
            self.positions[path] = (at[0], at[1])

    def _misfit(self, path: Path, misfit: Misfit) -> None:
        self.problems.append(
            Problem(
                path,
                misfit.reason,
                misfit.hint
                or "drop the tag, or write a string, number, boolean, list or mapping (quote it to make it a string)",
                self._locate(path),
                code=misfit.code,
            )
        )

    def _surrogate(self, path: Path, what: str) -> None:
        """A lone UTF-16 surrogate, from an escape such as "\\ud800": not a character, and no
        output can be written with it."""
        self.problems.append(
            Problem(
                path,
                f"the {what} holds a lone UTF-16 surrogate (an escape such as \\ud800), which is not a character",
                "write the character itself",
                self._locate(path),
            )
        )

    def _locate(self, path: Path) -> Location:
        return SourceDoc(self.file, None, self.positions, self.start).locate(path)


def _reader_problem(exc: ReaderError, text: str, file: str) -> Problem:
    line, col = _where(text, exc.position)
    char = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or b"\0")
    what = "a NUL byte (binary data?)" if char == 0 else f"the control character U+{char:04X}"
    return Problem(
        (),
        f"{what} is not allowed in YAML",
        "remove it, or save the file as plain UTF-8 text",
        Location(file, line, col),
    )


def _load_round_trip(text: str, file: str, check_yaml11: bool = True) -> list[SourceDoc]:
    """Every non-empty document with the position of every key and item (ruamel's round-trip
    loader, pure Python, with the bounds above), or a SpecError naming file:line."""
    yaml = _yaml(check_yaml11)
    try:
        with warnings.catch_warnings():
            # ruamel's own warnings (an anchor defined twice, which YAML allows: the later one wins; a YAML 1.1
            # float without a dot) went to stderr raw, naming ruamel's source and "<file>" (found by the fuzzer):
            # kvgen reports what it refuses at file:line itself, and these are not refusals
            warnings.simplefilter("ignore", YAMLWarning)
            raw = list(yaml.load_all(io.StringIO(text)))
    except MaxDepthExceededError as exc:
        mark = exc.problem_mark
        raise SpecError(
            file,
            [
                Problem(
                    (),
                    f"the YAML is nested more than {MAX_DEPTH} levels deep",
                    "a spec is a few levels deep; is this the right file?",
                    Location(file, mark.line + 1, mark.column + 1),
                )
            ],
        ) from None
    except InputBoundError as exc:
        mark = exc.problem_mark
        raise SpecError(
            file, [Problem((), str(exc.problem), location=Location(file, mark.line + 1, mark.column + 1))]
        ) from None
    except DirectiveError as exc:
        mark = exc.problem_mark
        raise SpecError(
            file, [Problem((), str(exc.problem), exc.hint, Location(file, mark.line + 1, mark.column + 1))]
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = Location(file, mark.line + 1, mark.column + 1) if mark else None
        message = str(exc.problem or "")
        if exc.context:
            message = (
                f"{exc.context} (started at line {exc.context_mark.line + 1}): {message}"
                if exc.context_mark
                else f"{exc.context}: {message}"
            )
        raise SpecError(file, [Problem((), f"malformed YAML: {message}", location=loc)]) from None
    except ReaderError as exc:
        raise SpecError(file, [_reader_problem(exc, text, file)]) from None
    except YAMLError as exc:
        raise SpecError(file, [Problem((), f"malformed YAML: {exc}")]) from None
    except TypeError as exc:  # a complex key ('? ') holding a mapping or list ruamel cannot hash ("?\n  : :", fuzzed)
        if "unhashable" not in str(exc):
            raise
        line = next((i for i, x in enumerate(text.splitlines(), 1) if x.lstrip().startswith("?")), None)
        raise SpecError(
            file,
            [
                Problem(
                    (),
                    "malformed YAML for a spec: a mapping key is itself a mapping or a list (YAML's complex key '? '), "
                    "which no spec field has",
                    "write every key as a plain name",
                    Location(file, line, 1) if line else None,
                )
            ],
        ) from None
    except AssertionError:  # ruamel.yaml's own check, failed on comments it cannot place ("\n\n| #", fuzzed)
        raise SpecError(
            file,
            [
                Problem(
                    (),
                    "the YAML reader (ruamel.yaml) failed on this input: it could not place a comment, "
                    "likely one on a block scalar's header line (| or >)",
                    "move that comment to a line of its own, or check that this is a kvgen spec",
                )
            ],
        ) from None
    docs = []
    lines = tuple(text.splitlines())
    problems: list[Problem] = []
    for node in raw:
        if node is None:
            continue
        start = node.lc.line if hasattr(node, "lc") and node.lc.line is not None else 0
        plain = _Plain(file, start)
        data = plain(node, ())
        problems += plain.problems
        docs.append(SourceDoc(file=file, data=data, positions=plain.positions, start_line=start, lines=lines))
    if problems:
        raise SpecError(file, problems)
    return docs


class _NotPlain(KvgenError):
    pass


def _copy_plain(node: Any, budget: list[int], depth: int = 0) -> Any:
    """The safe loader's data as the round-trip path gives it: string keys, fresh containers
    (aliases copied), only JSON's types; _NotPlain for anything the round-trip path would
    read differently or refuse (a timestamp, an integer beyond 64 bits, too deep, too many
    values or characters once aliases are expanded)."""
    if depth > MAX_DEPTH:
        raise _NotPlain
    budget[0] -= 1
    if budget[0] < 0:
        raise _NotPlain
    t = type(node)
    if t is dict:
        return {_copy_key(k, budget): _copy_plain(v, budget, depth + 1) for k, v in node.items()}
    if t is list:
        return [_copy_plain(v, budget, depth + 1) for v in node]
    if t is str:
        budget[1] -= len(node)
        if budget[1] < 0:
            raise _NotPlain
        return node
    if t is int:
        if not INT_MIN <= node <= INT_MAX:
            raise _NotPlain
        return node
    if t is float or t is bool or node is None:
        return node
    raise _NotPlain


def _copy_key(key: Any, budget: list[int]) -> str:
    if type(key) not in (str, int, float, bool) and key is not None:
        raise _NotPlain
    budget[0] -= 1
    text = str(key)
    budget[1] -= len(text)
    if budget[0] < 0 or budget[1] < 0 or (type(key) is int and not INT_MIN <= key <= INT_MAX):
        raise _NotPlain
    return text


AMBIGUOUS = "tag:kvgen,2026:yaml-1.1-differs"


class _PlainTags(VersionedResolver):
    """ruamel.yaml's resolver, remembering the tag of each plain scalar's text: on the fast path
    (no %YAML directive reaches it: YAML 1.2 only, and no path resolvers) the tag depends on the
    text alone, and keys and values recur from spec to spec in a batch."""

    _tags: dict[str, Any] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not ScalarNode or not implicit[0]:
            return super().resolve(kind, value, implicit)
        tag = self._tags.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if yaml11_differs(value, str(tag)) is not None:
                tag = AMBIGUOUS  # no constructor: the round-trip loader reads it and says where it is
            remember(self._tags, value, tag)
        return tag


@cache
def _safe_loader() -> Any:
    yaml = YAML(typ="safe")  # the C parser (ruamel.yaml.clib) when it is installed
    yaml.Resolver = _PlainTags
    return yaml


# Every level of nesting starts with one of "[{-?:", so this many of them bound the depth the C
# parser composes recursively (in C: 100,000 levels overflow its stack; a spec has about 100).
FAST_INDICATORS = 2000
# A merge key, a tag, a directive, an escape that could be a surrogate; and what libyaml reads
# more leniently than ruamel.yaml's pure parser (a tab, a block scalar's header and indentation:
# libyaml takes "a: |#" and "key: value<TAB>", which ruamel refuses, found by fuzzing both).
_SLOW = ("%YAML", "\\u", "\\U", "\t")
# These matter only outside comments: in a comment (or in quoted text) none can be a merge key, a
# tag or a block scalar's header, and specs' comments say "maxReplicas > 1" or "<namespace>".
_SLOW_OUTSIDE_COMMENTS = ("<<", "!", "|", ">")
# A quoted key whose ':' ends a flow entry with no value (["x":] or {"x":}): libyaml reads a pair
# with a null value, ruamel.yaml's parser refuses it (found by fuzzing both).
_SLOW_EMPTY_FLOW_PAIR = re.compile(r"""["']:\s*[,\]}]""")


def _without_comments(text: str) -> str:
    """``text`` less what is surely a comment: from a '#' that starts a line or follows a blank, to the
    end of its line, when no quote comes before it on the line. Conservative: the text cut is either
    a comment or the inside of a quoted or block scalar begun on an earlier line, which holds no
    syntax (a block scalar's own header is never cut: nothing but a comment follows it)."""
    out = []
    for line in text.split("\n"):
        at = line.find("#")
        while at > 0 and line[at - 1] not in " \t":
            at = line.find("#", at + 1)
        if at >= 0 and "'" not in line[:at] and '"' not in line[:at]:
            line = line[:at]
        out.append(line)
    return "\n".join(out)


def _fast(text: str) -> bool:
    """Whether the C parser reads ``text`` exactly as the round-trip loader does."""
    if any(s in text for s in _SLOW) or sum(map(text.count, "[{-?:")) > FAST_INDICATORS:
        return False
    if _SLOW_EMPTY_FLOW_PAIR.search(text):
        return False
    if not any(s in text for s in _SLOW_OUTSIDE_COMMENTS):
        return True
    code = _without_comments(text)
    return not any(s in code for s in _SLOW_OUTSIDE_COMMENTS)


def load_documents(text: str | bytes, file: str, check_yaml11: bool = True) -> list[SourceDoc]:
    """All non-empty documents of a YAML stream, or a SpecError naming file:line.

    The data comes from the safe loader (C parser) when it reads the input as the round-trip
    loader would; positions come from the round-trip loader on first use. A plain scalar that
    YAML 1.1 reads otherwise is a problem (code ``YAML11_CODE``) unless ``check_yaml11`` is false."""
    if not check_yaml11:
        return _load_round_trip(decode(text, file) if isinstance(text, bytes) else text, file, False)
    if isinstance(text, bytes):
        text = decode(text, file)
    elif len(text) > MAX_INPUT_BYTES and len(text.encode("utf-8")) > MAX_INPUT_BYTES:
        raise SpecError(file, [_too_large(file)])
    if _fast(text):
        try:
            budget = [
                MAX_NODES // 2,
                MAX_EXPANDED // 2,
            ]  # well inside the bounds: near them, the round-trip loader decides
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", YAMLWarning)  # as in _load_round_trip
                data = [_copy_plain(node, budget) for node in _safe_loader().load_all(text) if node is not None]
        except Exception:
            pass
        else:
            stream = _Stream(text, file)
            return [SourceDoc(file, d, stream=stream, index=i) for i, d in enumerate(data)]
    return _load_round_trip(text, file)
