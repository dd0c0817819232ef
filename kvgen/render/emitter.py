"""kvgen's output YAML, written fast and byte for byte as ruamel.yaml writes it.

The output style is ruamel.yaml's round-trip dumper's (``kvgen.render.templates.ruamel_dumper``): block
mappings indented by 2, sequences by 4 with the dash at 2, multi-line strings as ``|`` blocks,
``---`` before each document. No C emitter writes that style (libyaml cannot indent a
sequence inside a mapping), and ruamel.yaml's pure-Python emitter takes about 25 ms per spec.

So this module lays out the block structure itself (a mapping key per line, ``- `` per item)
and leaves every scalar's text to ruamel.yaml: a scalar it has not seen is dumped by the
ruamel dumper in the same context (a mapping key, a mapping value, a sequence item) and the
text is remembered, so each distinct key or value costs one ruamel call per process. Strings
of letters, digits and ``._/-`` that start with a letter are plain whenever ruamel's own
resolver, and a YAML 1.1 reader (kubectl, Helm: ``on``, ``y``, ``no`` are booleans to them),
read them back as strings; that is decided without a dump. ruamel's dumper is given the same
YAML 1.1 check (``kvgen.core.plain_tags.for_yaml11_readers``), so every scalar it writes loads alike.

Anything outside the shapes kvgen renders (a ``None``, a list in a list, a multi-line string
in a list or kept with trailing newlines, a scalar too long for one line, a non-string key)
makes ``dump_all`` return None, and the caller dumps with ruamel.yaml itself. A property
test compares both on random documents (tests/test_emitter.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kvgen.core.errors import KvgenError
from kvgen.core.plain_tags import STR, fixed_resolver, yaml11_tag

LONGEST = 2000  # longer scalars could be folded at ruamel's width of 4096 columns: not ours
SIMPLE_KEY = 100  # ruamel writes a key of 128 characters or more as an explicit "? key"
_SIMPLE = re.compile(r"[A-Za-z][A-Za-z0-9._/-]*")
_LITERAL_HEAD = re.compile(r"k: (\|2?-?)\n")
_BREAKS = re.compile("[\n\r\x85\u2028\u2029]")


class Unsupported(KvgenError):
    """A shape this module does not lay out; ruamel.yaml dumps the document instead."""


class Emitter:
    def __init__(self, ruamel_dump: Callable[[Any], str]):
        """``ruamel_dump(doc)``: one document as the reference dumper writes it, without ``---``."""
        self._ruamel = ruamel_dump
        self._resolver: Any = None
        self._str_tag: Any = None
        self._keys: dict[Any, str] = {}
        self._values: dict[Any, str] = {}  # " text" after "key:", one line
        self._items: dict[Any, str] = {}  # "text" after "- "
        self._literals: dict[str, tuple[str, tuple[str, ...]]] = {}  # text -> (header, body lines at indent 0)
        # what this process used, in the order first used: (section, memo, text), ruamel's or the store's
        self._learned: list[tuple[str, Any, Any]] = []
        self._stored: dict[str, dict[Any, Any]] = {}  # the store's entries not used yet: section -> memo -> text
        self._new = 0  # how many of _learned ruamel said in this process (not in the store)

    # ------------------------------------------------------------------ what ruamel said, kept

    # Entries kept: a memo, not an archive of every spec's names. What a process used (learned from
    # ruamel or took from the store) is kept ahead of the store's other entries, so a full memo still
    # takes a new scalar in (a changed launcher script) and drops what recent runs did not use.
    LIMIT = 2000  # one-line scalars (keys, values, items)
    LITERALS = 16  # multi-line blocks (the launcher script), kept apart: they are few, large, and the dearest to dump
    LITERAL_LIMIT = 65536  # characters of one block

    def export(self) -> dict[str, list[Any]]:
        """What ruamel said about scalars, as JSON data (``load`` reads it back): the entries this
        process used first, then the store's other entries, up to LIMIT and LITERALS."""
        out: dict[str, list[Any]] = {"keys": [], "values": [], "items": [], "literals": []}
        unused = [(section, memo, text) for section, stored in self._stored.items() for memo, text in stored.items()]
        scalars = 0
        for section, memo, text in self._learned + unused:
            if section == "literals":
                if len(memo) <= self.LITERAL_LIMIT and len(out["literals"]) < self.LITERALS:
                    out["literals"].append([memo, text[0], list(text[1])])
                continue
            if scalars >= self.LIMIT:
                continue
            scalars += 1
            if section == "keys":
                out["keys"].append([memo, text])
            elif memo[0] in (str, int, bool, float):
                out[section].append([memo[0].__name__, memo[1], text])
        return out

    def load(self, data: Any) -> None:
        """Take back what ``export`` gave; ignores data of another shape."""
        types = {"str": str, "int": int, "bool": bool, "float": float}
        try:
            learned: list[tuple[str, Any, Any]] = []
            for k, text in data["keys"]:
                learned.append(("keys", str(k), str(text)))
            for section in ("values", "items"):
                for name, v, text in data[section]:
                    t = types[name]
                    if (t is float and type(v) is not str) or (t is not float and type(v) is not t):
                        raise TypeError(name)
                    learned.append((section, (t, v), str(text)))
            for text, header, lines in data["literals"]:
                learned.append(("literals", str(text), (str(header), tuple(map(str, lines)))))
        except (KeyError, TypeError, ValueError):
            return
        for section, memo, text in learned:
            if memo not in getattr(self, "_" + section):
                self._stored.setdefault(section, {}).setdefault(memo, text)

    @property
    def unsaved(self) -> bool:
        """This process learned something from ruamel that the store it loaded does not hold."""
        return self._new > 0

    def _taken(self, section: str, memo: Any) -> Any:
        """The store's text for ``memo``, now in use (kept ahead at the next save), or None."""
        stored = self._stored.get(section)
        text = stored.pop(memo, None) if stored else None
        if text is not None:
            getattr(self, "_" + section)[memo] = text
            self._learned.append((section, memo, text))
        return text

    def _said(self, section: str, memo: Any, text: Any) -> None:
        self._learned.append((section, memo, text))
        self._new += 1

    # ------------------------------------------------------------------ ruamel, once per scalar

    def _plain_ok(self, text: str) -> bool:
        """``text`` is written plain: ruamel's analysis allows it, and both its YAML 1.2 resolver and
        a YAML 1.1 reader (kubectl, Helm) read it back as a string."""
        if not _SIMPLE.fullmatch(text):
            return False
        if self._resolver is None:
            from ruamel.yaml.nodes import ScalarNode
            from ruamel.yaml.resolver import VersionedResolver

            self._resolver = (fixed_resolver((1, 2)), ScalarNode)  # YAML 1.2: VersionedResolver's default
            self._str_tag = VersionedResolver.DEFAULT_SCALAR_TAG
        resolver, node = self._resolver
        return resolver.resolve(node, text, (True, False)) == self._str_tag and yaml11_tag(text) == STR

    def _one_line(self, out: str, prefix: str, suffix: str = "\n") -> str:
        if not (out.startswith(prefix) and out.endswith(suffix)) or len(out) < len(prefix) + len(suffix):
            raise Unsupported
        text = out[len(prefix) : len(out) - len(suffix)]
        if "\n" in text or len(text) > LONGEST:
            raise Unsupported
        return text

    def key(self, k: Any) -> str:
        if type(k) is not str:
            raise Unsupported
        text = self._keys.get(k)
        if text is None:
            if len(k) <= SIMPLE_KEY and self._plain_ok(k):
                text = k
            else:
                text = self._taken("keys", k)
                if text is not None:
                    return text
                text = self._one_line(self._ruamel({k: 0}), "", ": 0\n")
                self._said("keys", k, text)
            self._keys[k] = text
        return text

    @staticmethod
    def _memo(v: Any) -> tuple[Any, ...]:
        t = type(v)
        return (t, repr(v)) if t is float else (t, v)  # -0.0 == 0.0, but is written "-0.0"

    def value(self, v: Any) -> str:
        memo = self._memo(v)
        text = self._values.get(memo)
        if text is None:
            if type(v) is str and len(v) <= LONGEST and self._plain_ok(v):
                text = " " + v
            else:
                text = self._taken("values", memo)
                if text is not None:
                    return text
                text = self._one_line(self._ruamel({"k": v}), "k:")
                if not text.startswith(" "):
                    raise Unsupported
                self._said("values", memo, text)
            self._values[memo] = text
        return text

    def item(self, v: Any) -> str:
        memo = self._memo(v)
        text = self._items.get(memo)
        if text is None:
            if type(v) is str and len(v) <= LONGEST and self._plain_ok(v):
                text = v
            else:
                text = self._taken("items", memo)
                if text is not None:
                    return text
                text = self._one_line(self._ruamel({"k": [v]}), "k:\n  - ")
                self._said("items", memo, text)
            self._items[memo] = text
        return text

    def literal(self, v: str) -> tuple[str, tuple[str, ...]]:
        """A multi-line string as a mapping value: its ``|`` header and its lines (at indent 0)."""
        got = self._literals.get(v)
        if got is None:
            got = self._taken("literals", v)
            if got is not None:
                return got
            out = self._ruamel({"k": v})
            m = _LITERAL_HEAD.match(out)
            if m is None:  # not a | block (a double-quoted string), or kept newlines (|+ ends the document)
                raise Unsupported
            lines = out[m.end() :].split("\n")
            if lines[-1] != "" or any(line and not line.startswith("  ") for line in lines):
                raise Unsupported
            got = (m[1], tuple(line[2:] for line in lines[:-1]))
            self._literals[v] = got
            self._said("literals", v, got)
        return got

    # ------------------------------------------------------------------ many scalars in one ruamel call

    def _collect(self, node: Any, keys: dict[Any, Any], values: dict[Any, Any], items: dict[Any, Any]) -> None:
        if type(node) is dict:
            for k, v in node.items():
                if type(k) is str and k not in self._keys and len(k) <= SIMPLE_KEY and not _BREAKS.search(k):
                    if self._taken("keys", k) is None:
                        keys[k] = k
                if type(v) in (dict, list):
                    self._collect(v, keys, values, items)
                elif self._batchable(v) and self._memo(v) not in self._values:
                    if self._taken("values", self._memo(v)) is None:
                        values[self._memo(v)] = v
        elif type(node) is list:
            for v in node:
                if type(v) in (dict, list):
                    self._collect(v, keys, values, items)
                elif self._batchable(v) and self._memo(v) not in self._items:
                    if self._taken("items", self._memo(v)) is None:
                        items[self._memo(v)] = v

    @staticmethod
    def _batchable(v: Any) -> bool:
        t = type(v)
        return t in (int, bool, float) or (t is str and len(v) <= LONGEST and not _BREAKS.search(v))

    def prepare(self, docs: list[Any]) -> None:
        """Learn, in one ruamel dump, the text of every scalar of ``docs`` not seen before (what
        ``key``, ``value`` and ``item`` would learn one dump each). A batch whose output is not
        one line per scalar teaches nothing; those scalars are then dumped one by one."""
        keys: dict[str, str] = {}
        values: dict[Any, Any] = {}
        items: dict[Any, Any] = {}
        for doc in docs:
            self._collect(doc, keys, values, items)
        # plain scalars: what key, value and item would say, decided here once
        for k in [k for k in keys if self._plain_ok(k)]:
            self._keys[k] = keys.pop(k)
        for m in [m for m, v in values.items() if type(v) is str and self._plain_ok(v)]:
            self._values[m] = " " + values.pop(m)
        for m in [m for m, v in items.items() if type(v) is str and self._plain_ok(v)]:
            self._items[m] = items.pop(m)
        if not (keys or values or items):
            return
        batch = {
            "v": {f"k{i}": v for i, v in enumerate(values.values())},
            "i": list(items.values()),
            "m": {k: 0 for k in keys},
        }
        lines = self._ruamel(batch).split("\n")
        expected = 3 + len(values) + len(items) + len(keys) + 1
        if len(lines) != expected or lines[-1] != "":
            return
        at = 0

        def section(name: str, empty: str) -> bool:
            nonlocal at
            head = lines[at]
            at += 1
            return head == f"{name}:" or head == f"{name}: {empty}"

        learned_values, learned_items, learned_keys = {}, {}, {}
        if not section("v", "{}"):
            return
        for i, memo in enumerate(values):
            prefix = f"  k{i}:"
            if not lines[at].startswith(prefix + " ") or len(lines[at]) - len(prefix) > LONGEST:
                return
            learned_values[memo] = lines[at][len(prefix) :]
            at += 1
        if not section("i", "[]"):
            return
        for memo in items:
            if not lines[at].startswith("  - ") or len(lines[at]) - 4 > LONGEST:
                return
            learned_items[memo] = lines[at][4:]
            at += 1
        if not section("m", "{}"):
            return
        for k in keys:
            if not (lines[at].startswith("  ") and lines[at].endswith(": 0")) or lines[at].startswith("  ? "):
                return
            learned_keys[k] = lines[at][2:-3]
            at += 1
        self._values.update(learned_values)
        self._items.update(learned_items)
        self._keys.update(learned_keys)
        for part, learned in (("values", learned_values), ("items", learned_items), ("keys", learned_keys)):
            for memo, text in learned.items():
                self._said(part, memo, text)

    # ------------------------------------------------------------------ block structure

    def mapping(self, node: dict[Any, Any], indent: int, first: str, out: list[str]) -> None:
        """``node`` at ``indent``; its first key's line starts with ``first``."""
        pad = " " * indent
        lead = first
        for k, v in node.items():
            out.append(lead)
            lead = pad
            out.append(self.key(k))
            t = type(v)
            if t is dict:
                if v:
                    out.append(":\n")
                    self.mapping(v, indent + 2, " " * (indent + 2), out)
                else:
                    out.append(": {}\n")
            elif t is list:
                if v:
                    out.append(":\n")
                    self.sequence(v, indent + 2, out)
                else:
                    out.append(": []\n")
            elif t is str and "\n" in v:
                header, lines = self.literal(v)
                out.append(": ")
                out.append(header)
                out.append("\n")
                inner = " " * (indent + 2)
                for line in lines:
                    if line:
                        out.append(inner)
                        out.append(line)
                    out.append("\n")
            elif v is None:
                raise Unsupported
            else:
                out.append(":")
                out.append(self.value(v))
                out.append("\n")

    def sequence(self, node: list[Any], indent: int, out: list[str]) -> None:
        dash = " " * indent + "- "
        for v in node:
            t = type(v)
            if t is dict:
                if v:
                    self.mapping(v, indent + 2, dash, out)
                else:
                    out.append(dash + "{}\n")
            elif t is list:
                if v:
                    raise Unsupported
                out.append(dash + "[]\n")
            elif v is None or (t is str and "\n" in v):
                raise Unsupported
            else:
                out.append(dash)
                out.append(self.item(v))
                out.append("\n")

    def dump_all(self, docs: list[Any]) -> str | None:
        """The documents as ruamel's dumper writes them with ``explicit_start``, or None."""
        out: list[str] = []
        try:
            self.prepare(docs)
            for doc in docs:
                if type(doc) is not dict or not doc:
                    raise Unsupported
                out.append("---\n")
                self.mapping(doc, 0, "", out)
        except Exception:
            return None
        return "".join(out)
