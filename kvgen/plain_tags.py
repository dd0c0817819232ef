"""The YAML tag of a plain scalar, remembered by its text.

Both YAML readers on kvgen's fast paths (ruamel.yaml's for specs, PyYAML's libyaml for the
templates' output) resolve a plain scalar's tag by matching its text against YAML 1.2's regular
expressions, in Python, once per scalar. On those paths the tag depends on the text alone (no
%YAML directive, no path resolvers), and the same keys and values recur from spec to spec, so
each reader keeps a memo; short texts only, and a bounded number of them.
"""

from __future__ import annotations

from typing import Any

MAX_TEXT = 64  # longer texts (arguments, commands) seldom recur
MAX_ENTRIES = 4096


def remember(memo: dict[str, Any], value: str, tag: Any) -> Any:
    """``tag``, kept in ``memo`` for ``value`` when the bounds allow."""
    if len(value) <= MAX_TEXT and len(memo) < MAX_ENTRIES:
        memo[value] = tag
    return tag
