"""``kvgen diff OLD NEW``: what a change to a spec does, for a reviewer (issue 36).

Both sides are planned and rendered as ``kvgen explain`` and ``kvgen render`` would; what is compared is
what a reviewer asks about: the offloading decision, the pod's memory and disk, each KV-cache tier's size
and tokens, the context length, routing and replicas, and the objects (added, removed, changed, with the
fields that change). Specs are paired by name (a file may hold several). Written as text, JSON (stable
keys: docs/diff.md) or Markdown for a pull request comment.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.quantity import GiB

# (section, key path in explain's report, label, unit): the figures compared, in the order shown
FIGURES: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("decision", ("decision", "offloading"), "KV-cache offloading", "text"),
    ("decision", ("decision", "backend"), "backend", "text"),
    ("decision", ("decision", "reasonCode"), "rule that decided", "text"),
    ("memory", ("sizing", "podMemoryBytes"), "pod memory", "bytes"),
    ("memory", ("sizing", "shmBytes"), "/dev/shm", "bytes"),
    ("disk", ("sizing", "podEphemeralBytes"), "pod ephemeral storage", "bytes"),
    ("disk", ("sizing", "emptyDirTierBytes"), "emptyDir tiers", "bytes"),
    ("disk", ("sizing", "modelCacheBytes"), "model cache", "bytes"),
    ("context", ("kvCache", "context", "served"), "context length", "tokens"),
    ("routing", ("routing", "mode"), "routing mode", "text"),
    ("routing", ("routing", "replicas"), "replicas", "count"),
    ("fit", ("fits",), "fits its node", "text"),
)
MAX_PATHS = 8  # changed fields listed per object (then "and N more")


def _at(report: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = report
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def shown(value: Any, unit: str) -> str:
    if value is None:
        return "none"
    if unit == "bytes":
        return f"{value / GiB:,.1f} GiB"
    if unit in ("tokens", "count"):
        return f"{value:,}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _tiers(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["tier"]: t for t in (_at(report, ("kvCache", "tiers")) or [])}


def _key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata", {})
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {where}{meta.get('name')}"


def _paths(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The paths (a.b[0].c) at which two objects differ, leaves first found first."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in [*old, *(k for k in new if k not in old)]:
            out += _paths(old.get(k), new.get(k), f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            out += _paths(a, b, f"{prefix}[{i}]")
        return out
    return [] if old == new else [prefix or "(object)"]


def compare(
    old: dict[str, Any] | None,
    new: dict[str, Any] | None,
    old_objects: list[dict[str, Any]],
    new_objects: list[dict[str, Any]],
) -> dict[str, Any]:
    """One spec's changes: ``old``/``new`` its explain reports (None where the spec is only on one side)."""
    changes = []
    if old is not None and new is not None:
        for section, path, label, unit in FIGURES:
            a, b = _at(old, path), _at(new, path)
            if a != b:
                changes.append({"section": section, "what": label, "old": a, "new": b, "unit": unit})
        old_t, new_t = _tiers(old), _tiers(new)
        for name in [*old_t, *(n for n in new_t if n not in old_t)]:
            a, b = old_t.get(name), new_t.get(name)
            before = None if a is None else {"bytes": a["bytes"], "tokens": a["tokens"]}
            after = None if b is None else {"bytes": b["bytes"], "tokens": b["tokens"]}
            if before != after:
                changes.append(
                    {"section": "tiers", "what": f"KV-cache tier {name}", "old": before, "new": after, "unit": "tier"}
                )
    olds = {_key(o): o for o in old_objects}
    news = {_key(o): o for o in new_objects}
    changed = []
    for k in news:  # in the new side's order
        paths = _paths(olds[k], news[k]) if k in olds else []
        if paths:
            changed.append({"object": k, "paths": paths[:MAX_PATHS], "more": max(0, len(paths) - MAX_PATHS)})
    return {
        "changes": changes,
        "objects": {
            "added": [k for k in news if k not in olds],
            "removed": [k for k in olds if k not in news],
            "changed": changed,
        },
    }


def line(change: dict[str, Any]) -> str:
    """One change in words: 'CPU tier: 48.0 GiB -> 96.0 GiB'; a tier with its tokens."""
    if change["unit"] == "tier":
        a, b = change["old"], change["new"]
        if a is None:
            return f"{change['what']}: added, {shown(b['bytes'], 'bytes')} ({shown(b['tokens'], 'tokens')} tokens)"
        if b is None:
            return f"{change['what']}: removed (was {shown(a['bytes'], 'bytes')})"
        return (
            f"{change['what']}: {shown(a['bytes'], 'bytes')} -> {shown(b['bytes'], 'bytes')} "
            f"({shown(a['tokens'], 'tokens')} -> {shown(b['tokens'], 'tokens')} tokens)"
        )
    return f"{change['what']}: {shown(change['old'], change['unit'])} -> {shown(change['new'], change['unit'])}"


def text(result: list[dict[str, Any]]) -> str:
    out = []
    for spec in result:
        head = f"{spec['name']}: "
        if spec["only"]:
            out.append(f"{head}only in {spec['only']}")
            continue
        o = spec["objects"]
        if not spec["changes"] and not any(o.values()):
            out.append(f"{head}no change")
            continue
        out += [head + line(c) for c in spec["changes"]]
        out += [f"{head}object added: {k}" for k in o["added"]]
        out += [f"{head}object removed: {k}" for k in o["removed"]]
        for c in o["changed"]:
            more = f" and {c['more']} more" if c["more"] else ""
            out.append(f"{head}object changed: {c['object']}: {', '.join(c['paths'])}{more}")
    return "\n".join(out) + "\n"


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def markdown(result: list[dict[str, Any]], old_name: str, new_name: str) -> str:
    out = [f"### kvgen diff: `{_cell(old_name)}` → `{_cell(new_name)}`", ""]
    for spec in result:
        out.append(f"#### `{_cell(spec['name'])}`")
        out.append("")
        if spec["only"]:
            out += [f"Only in `{_cell(spec['only'])}`.", ""]
            continue
        o = spec["objects"]
        if not spec["changes"] and not any(o.values()):
            out += ["No change.", ""]
            continue
        if spec["changes"]:
            out += ["| what | before | after |", "|---|---|---|"]
            for c in spec["changes"]:
                if c["unit"] == "tier":
                    a, b = c["old"], c["new"]
                    before = (
                        "none" if a is None else f"{shown(a['bytes'], 'bytes')}, {shown(a['tokens'], 'tokens')} tokens"
                    )
                    after = (
                        "none" if b is None else f"{shown(b['bytes'], 'bytes')}, {shown(b['tokens'], 'tokens')} tokens"
                    )
                else:
                    before, after = shown(c["old"], c["unit"]), shown(c["new"], c["unit"])
                out.append(f"| {_cell(c['what'])} | {_cell(before)} | {_cell(after)} |")
            out.append("")
        for k in o["added"]:
            out.append(f"- added: `{_cell(k)}`")
        for k in o["removed"]:
            out.append(f"- removed: `{_cell(k)}`")
        for c in o["changed"]:
            more = f" and {c['more']} more" if c["more"] else ""
            paths = ", ".join(f"`{_cell(p)}`" for p in c["paths"])
            out.append(f"- changed: `{_cell(c['object'])}`: {paths}{more}")
        out.append("")
    return "\n".join(out)
