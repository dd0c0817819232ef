"""The YAML tag of a plain scalar, remembered by its text.

Both YAML readers on kvgen's fast paths (ruamel.yaml's for specs, PyYAML's libyaml for the
templates' output) resolve a plain scalar's tag by matching its text against YAML 1.2's regular
expressions, in Python, once per scalar. On those paths the tag depends on the text alone (no
%YAML directive, no path resolvers), and the same keys and values recur from spec to spec, so
each reader keeps a memo; short texts only, and a bounded number of them.
"""

from __future__ import annotations

import re
from typing import Any

MAX_TEXT = 64  # longer texts (arguments, commands) seldom recur
MAX_ENTRIES = 4096


def remember(memo: dict[str, Any], value: str, tag: Any) -> Any:
    """``tag``, kept in ``memo`` for ``value`` when the bounds allow."""
    if len(value) <= MAX_TEXT and len(memo) < MAX_ENTRIES:
        memo[value] = tag
    return tag


# --- plain scalars that YAML 1.1 readers resolve differently ------------------------------------------
#
# kvgen reads and writes YAML 1.2, where ``on``, ``yes``, ``y``, ``010``, ``1:20`` and ``=`` are
# strings (or, for ``010``, ten); kubectl and Helm (go-yaml v2) and PyYAML read YAML 1.1, where
# they are booleans, octal and sexagesimal integers, and the value key. A string written plain
# must mean the same to both: its tag under each version's resolver (ruamel.yaml's, whose
# YAML 1.1 rules are the spec's: y/Y/n/N included, as go-yaml v2 has them) is remembered by text.

_YAML11: dict[str, str] = {}
_resolver11: Any = None


def fixed_resolver(version: tuple[int, int]) -> Any:
    """ruamel.yaml's resolver for one YAML ``version``, resolving texts outside any loader or dumper.

    A VersionedResolver without a loader finds its version again at every scalar through two caught
    AttributeErrors (half of its time); this one returns the version it was made with, and resolves
    alike (the same rules, in the same order)."""
    from ruamel.yaml.resolver import VersionedResolver

    class FixedVersionResolver(VersionedResolver):
        @property
        def processing_version(self) -> Any:
            return self._loader_version

    return FixedVersionResolver(version=version)


def yaml11_tag(value: str) -> str:
    """The tag a YAML 1.1 reader gives ``value`` written as a plain scalar."""
    tag = _YAML11.get(value)
    if tag is None:
        global _resolver11
        from ruamel.yaml.nodes import ScalarNode

        if _resolver11 is None:
            _resolver11 = fixed_resolver((1, 1))
        tag = remember(_YAML11, value, str(_resolver11.resolve(ScalarNode, value, (True, False))))
    return tag


STR = "tag:yaml.org,2002:str"


def dump_resolver() -> type:
    """ruamel.yaml's resolver for dumping: a plain scalar that YAML 1.2 reads as a string but YAML 1.1
    reads otherwise is given its YAML 1.1 tag, so the emitter sees that a string written plain would
    not load back as a string, and quotes it."""
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    class Resolver(VersionedResolver):
        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            tag = super().resolve(kind, value, implicit)
            if kind is ScalarNode and implicit[0] and str(tag) == STR:
                other = yaml11_tag(value)
                if other != STR:
                    return other
            return tag

    return Resolver


_OCTAL11 = re.compile(r"[-+]?0[0-9_]+")  # YAML 1.1 octal (010 is 8); YAML 1.2 reads 010 as 10
INT = "tag:yaml.org,2002:int"
_WHAT = {"str": "a string", "bool": "a boolean", "int": "an integer", "float": "a number", "null": "null"}


def _what(tag: str) -> str:
    name = tag.rsplit(":", 1)[-1]
    return _WHAT.get(name, f"a YAML !!{name}")


def yaml11_differs(value: str, tag12: str) -> str | None:
    """How the plain scalar ``value`` reads to YAML 1.2 (``tag12``: kvgen) and to YAML 1.1 (Helm,
    kubectl), when the two differ (``on``: a string, a boolean; ``010``: 10, octal 8); else None."""
    tag11 = yaml11_tag(value)
    if tag11 != tag12:
        return f"{_what(tag12)} to YAML 1.2 (kvgen) but {_what(tag11)} to YAML 1.1 (Helm, kubectl)"
    if tag12 == INT and _OCTAL11.fullmatch(value):
        octal = int(value.replace("_", "").lstrip("+-"), 8) * (-1 if value.startswith("-") else 1)
        return f"the integer {int(value.replace('_', ''), 10)} to YAML 1.2 (kvgen) but octal {octal} to YAML 1.1 (Helm, kubectl)"
    return None


def for_yaml11_readers(yaml: Any) -> None:
    """Make a ruamel.yaml dumper write what YAML 1.1 readers load as YAML 1.2 readers do: strings they
    read otherwise quoted (``dump_resolver``), and floats with a dot (1.0e+20: 1e+20 is a string to them)."""
    base = yaml.Representer

    class Representer(base):  # type: ignore[misc, valid-type]
        def represent_float(self, data: Any) -> Any:
            node = super().represent_float(data)
            if "e" in node.value and "." not in node.value:
                node.value = node.value.replace("e", ".0e", 1)
            return node

    Representer.add_representer(float, Representer.represent_float)
    yaml.Resolver = dump_resolver()
    yaml.Representer = Representer
