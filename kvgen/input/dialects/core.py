"""A translation with provenance: a native spec built from another format, where every value
remembers the document, path and line it came from.

A converter reads one foreign resource (a KAITO InferenceSet, a KServe LLMInferenceService)
through a ``Tracker``, which records every source path it handled, and writes native values
through a ``SpecBuilder``, which records each value's ``Origin``. Afterwards the tracker walks
the resource and reports every field nobody handled, so nothing is dropped silently; and a
problem kvgen later finds in the native spec (a bad size, an unknown model) is translated
back to the field and ``file:line`` the user wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kvgen.core.errors import Location, Path, Problem, SpecError, format_path, shown
from kvgen.input.source import SourceDoc


@dataclass(frozen=True)
class Origin:
    """Where a native value came from. ``subtree``: the value is a copy of the source
    subtree with the same shape, so a deeper native path maps to the same deeper source path."""

    doc: SourceDoc
    path: Path
    subtree: bool = False
    location: Location | None = None  # for values inside embedded YAML (a ConfigMap's file)

    def locate(self, suffix: Path = ()) -> tuple[Path, Location]:
        path = (*self.path, *suffix) if self.subtree else self.path
        if self.location is not None and not suffix:
            return path, self.location
        return path, self.doc.locate(path)


@dataclass
class Converted:
    """One native spec translated from a foreign resource."""

    doc: SourceDoc  # the foreign resource
    dialect: str  # "kaito" | "kserve"
    api_version: str
    kind: str
    spec: dict[str, Any]  # the native spec, plain data
    origins: dict[Path, Origin]
    warnings: list[Problem] = field(default_factory=list)  # fields kvgen does not honour
    notes: list[str] = field(default_factory=list)  # how values were derived (kvgen convert prints them)

    @property
    def resource(self) -> str:
        meta = self.doc.data.get("metadata") or {}
        return f"{self.kind}/{meta.get('name', '?')}"

    def origin_of(self, native: Path) -> tuple[Origin, Path]:
        """The origin recorded for the longest prefix of ``native``, and the rest of the path."""
        for k in range(len(native), -1, -1):
            origin = self.origins.get(tuple(native[:k]))
            if origin is not None:
                return origin, tuple(native[k:])
        return Origin(self.doc, ()), tuple(native)

    def translate(self, problem: Problem) -> Problem:
        """A problem found in the native spec, re-addressed to the field the user wrote."""
        origin, rest = self.origin_of(problem.path)
        path, location = origin.locate(rest)
        native = format_path(problem.path)
        message = problem.message
        if native != format_path(path):
            message += f" [kvgen spec: {native}]"
        return Problem(path, message, problem.hint, location)

    def native_doc(self) -> SourceDoc:
        """The native spec as a source document of the same file: native paths whose origin
        is in this file point at that origin's line."""
        positions: dict[Path, tuple[int, int]] = {}
        for native, origin in self.origins.items():
            if origin.doc is not self.doc or origin.location is not None:
                continue
            loc = origin.doc.locate(origin.path)
            positions[native] = (loc.line - 1, loc.column - 1)
        return SourceDoc(self.doc.file, self.spec, positions, self.doc.start_line, self.doc.lines)


class Tracker:
    """The source side: which fields of a resource were handled, and what was said about them."""

    def __init__(self, doc: SourceDoc):
        self.doc = doc
        self.used: set[tuple[int, Path]] = set()
        self.warnings: list[Problem] = []
        self.errors: list[Problem] = []

    def use(self, path: Path, doc: SourceDoc | None = None) -> None:
        self.used.add((id(doc or self.doc), tuple(path)))

    def _problem(
        self, path: Path, message: str, hint: str | None, doc: SourceDoc | None, location: Location | None, covers: bool
    ) -> Problem:
        doc = doc or self.doc
        if covers:
            self.use(path, doc)
        return Problem(tuple(path), message, hint, location or doc.locate(tuple(path)))

    def warn(
        self,
        path: Path,
        message: str,
        hint: str | None = None,
        *,
        doc: SourceDoc | None = None,
        location: Location | None = None,
        covers: bool = True,
    ) -> None:
        """A warning about ``path``. ``covers``: the warning accounts for the whole field, so it
        is not reported again as unhandled (False for a remark about a field that is still read)."""
        self.warnings.append(self._problem(path, message, hint, doc, location, covers))

    def error(
        self,
        path: Path,
        message: str,
        hint: str | None = None,
        *,
        doc: SourceDoc | None = None,
        location: Location | None = None,
    ) -> None:
        self.errors.append(self._problem(path, message, hint, doc, location, True))

    def _covered(self, doc: SourceDoc, path: Path) -> bool:
        return any((id(doc), path[:k]) in self.used for k in range(len(path) + 1))

    def _below(self, doc: SourceDoc, path: Path) -> bool:
        n = len(path)
        return any(d == id(doc) and len(p) > n and p[:n] == path for d, p in self.used)

    def report_unused(self, reasons: dict[str, str], doc: SourceDoc | None = None, root: Path = ()) -> None:
        """Warn about every field under ``root`` that no converter handled: at the highest
        unhandled level (``spec.router`` once, not each of its keys). ``reasons`` maps a path
        pattern (``spec.router``, ``spec.template.containers[].ports``) to why it is left out."""
        doc = doc or self.doc

        def walk(node: Any, path: Path) -> None:
            if self._covered(doc, path):
                return
            if path and not self._below(doc, path):
                pattern = re.sub(r"\[\d+\]", "[]", format_path(path))
                reason = reasons.get(pattern) or _generic_reason(pattern, reasons)
                self.warn(path, f"not honoured: {reason}", doc=doc)
                return
            if isinstance(node, dict):
                for key, value in node.items():
                    walk(value, (*path, key))
            elif isinstance(node, list):
                for i, value in enumerate(node):
                    walk(value, (*path, i))

        node = doc.data
        for part in root:
            node = node[part]
        walk(node, tuple(root))

    def raise_errors(self) -> None:
        if self.errors:
            raise SpecError(self.doc.file, list(self.errors))


def _generic_reason(pattern: str, reasons: dict[str, str]) -> str:
    # a reason given for a parent pattern with "*" applies to every key below it
    parts = pattern.split(".")
    for k in range(len(parts), 0, -1):
        wildcard = ".".join(parts[:k]) + ".*"
        if wildcard in reasons:
            return reasons[wildcard]
    return "kvgen has no equivalent for this field; it is left out of the rendered objects"


class SpecBuilder:
    """The native side: a spec built value by value, each with its origin."""

    def __init__(self, tracker: Tracker):
        self.tracker = tracker
        self.spec: dict[str, Any] = {}
        self.origins: dict[Path, Origin] = {}
        self.notes: list[str] = []

    def set(
        self,
        native: Path,
        value: Any,
        src: Path | None = None,
        *,
        doc: SourceDoc | None = None,
        subtree: bool = False,
        location: Location | None = None,
        use: bool = True,
    ) -> None:
        """Set ``native`` (a path of camelCase keys) to ``value``, taken from ``src``."""
        node: dict[Any, Any] = self.spec  # keyed by a Path (str | int); native paths use strings
        for key in native[:-1]:
            node = node.setdefault(key, {})
        node[native[-1]] = value
        if src is not None:
            doc = doc or self.tracker.doc
            self.origins[tuple(native)] = Origin(doc, tuple(src), subtree, location)
            # a problem reported on a parent (``parallelism``) points at the first value set in it
            for k in range(1, len(native)):
                self.origins.setdefault(tuple(native[:k]), Origin(doc, tuple(src), False, location))
            if use:
                self.tracker.use(src, doc)

    def get(self, native: Path, default: Any = None) -> Any:
        node: Any = self.spec
        for key in native:
            if not isinstance(node, dict) or key not in node:
                return default
            node = node[key]
        return node

    def append(
        self,
        native: Path,
        value: Any,
        src: Path | None = None,
        *,
        doc: SourceDoc | None = None,
        location: Location | None = None,
    ) -> None:
        """Append to the list at ``native``; the item's origin is ``src``."""
        items = self.get(native)
        if items is None:
            self.set(native, [])
            items = self.get(native)
        items.append(value)
        if src is not None:
            doc = doc or self.tracker.doc
            self.origins[(*native, len(items) - 1)] = Origin(doc, tuple(src), False, location)
            self.tracker.use(src, doc)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def ordered(self) -> dict[str, Any]:
        """The spec with its top-level keys in the native spec's order."""
        from kvgen.spec.models import Spec

        order = [f.alias or n for n, f in Spec.model_fields.items()]
        return {k: self.spec[k] for k in order if k in self.spec} | {
            k: v for k, v in self.spec.items() if k not in order
        }

    def result(self, dialect: str, warnings: list[Problem] | None = None) -> Converted:
        data = self.tracker.doc.data
        return Converted(
            doc=self.tracker.doc,
            dialect=dialect,
            api_version=str(data.get("apiVersion")),
            kind=str(data.get("kind")),
            spec=self.ordered(),
            origins=dict(self.origins),
            warnings=list(warnings or []),
            notes=list(self.notes),
        )


def embedded_location(doc: SourceDoc, key_path: Path, inner: SourceDoc, inner_path: Path) -> Location:
    """The file:line of ``inner_path`` inside YAML that is embedded as a literal block (``key: |``)
    at ``key_path`` of ``doc``. Falls back to the key's own line for other scalar styles."""
    return embedded_at(doc, key_path, inner.locate(inner_path))


def embedded_at(doc: SourceDoc, key_path: Path, inner: Location | None) -> Location:
    """The file:line of ``inner`` (a location in the text of the YAML embedded at ``key_path``,
    as its reader reports it) in ``doc``'s file; the key's own line when the text is not a
    literal block or ``inner`` is None."""
    outer = doc.locate(key_path)
    if inner is not None and key_path in doc.positions and doc.lines:
        line0 = doc.positions[key_path][0]
        text = doc.lines[line0] if line0 < len(doc.lines) else ""
        if re.search(r":\s*\|[-+0-9]*\s*(#.*)?$", text):
            target = line0 + inner.line  # content starts on the line after the key
            first = next((ln for ln in doc.lines[line0 + 1 :] if ln.strip()), "")
            indent = len(first) - len(first.lstrip(" "))  # the block's indentation
            if target < len(doc.lines):
                return Location(doc.file, target + 1, indent + inner.column)
    return outer


def mapping(
    tracker: Tracker, path: Path, value: Any, what: str = "a mapping", *, doc: SourceDoc | None = None
) -> dict[str, Any]:
    """``value`` if it is a mapping (None counts as empty), else an error and {}."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    tracker.error(path, f"must be {what}, not {type(value).__name__}", doc=doc)
    return {}


def integer(tracker: Tracker, path: Path, value: Any, *, doc: SourceDoc | None = None) -> int | None:
    """A whole number, also from a string such as "2" (Kubernetes quantities are strings)."""
    if isinstance(value, bool):
        tracker.error(path, f"must be a whole number, not {shown(value)}", doc=doc)
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d+", value.strip()):
        return int(value)
    tracker.error(path, f"must be a whole number, not {shown(value)}", doc=doc)
    return None


__all__ = [
    "Converted",
    "Origin",
    "SpecBuilder",
    "Tracker",
    "embedded_at",
    "embedded_location",
    "integer",
    "mapping",
]
