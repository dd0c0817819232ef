"""A cache of derived data (parsed catalogs, pruned Kubernetes schemas) in the user's cache dir.

Each entry is a JSON file named after the SHA-256 of everything it was derived from (the
source files' bytes and the kind of derivation), so a changed source is a new entry and an
old entry is never read for it. Entries are written to a temporary file and renamed into
place, so concurrent processes see a whole entry or none. The cache is an optimisation
only: an unreadable, unwritable or corrupt cache dir (or KVGEN_CACHE_DIR=off) just means
the value is derived again, with the same result.

Entries: parsed catalogs (kvgen.data.catalog), pruned Kubernetes schemas (kvgen.data.kube), the text
ruamel.yaml gives each scalar (kvgen.render.emitter), and Jinja's compiled templates (kvgen.render.templates,
Jinja's own bytecode cache, in the "jinja" sub-directory).

Location: $KVGEN_CACHE_DIR, else $XDG_CACHE_HOME/kvgen, else ~/.cache/kvgen.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMAT = "1"  # bump when the meaning of an entry changes


def directory() -> Path | None:
    explicit = os.environ.get("KVGEN_CACHE_DIR")
    if explicit is not None:
        return None if explicit in ("", "off") else Path(explicit) / "data"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kvgen" / "data"


def key(kind: str, *sources: bytes) -> str:
    h = hashlib.sha256(f"kvgen-cache {FORMAT} {kind}\0".encode())
    for s in sources:
        h.update(len(s).to_bytes(8, "big"))
        h.update(s)
    return h.hexdigest()


def _read(path: Path) -> Any:
    with path.open("rb") as fh:
        return json.loads(fh.read())


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file renamed into place); OSError on failure."""
    _write(path, text)


def _entry(kind: str, sources: tuple[bytes, ...]) -> Path | None:
    base = directory()
    return base / f"{kind}-{key(kind, *sources)}.json" if base is not None else None


def read(kind: str, sources: tuple[bytes, ...]) -> Any:
    """The entry derived from ``kind`` and ``sources``, or None (missing, unreadable, corrupt)."""
    path = _entry(kind, sources)
    if path is None:
        return None
    try:
        return _read(path)
    except (OSError, ValueError):
        return None


def write(kind: str, sources: tuple[bytes, ...], value: Any) -> None:
    """Store ``value`` if it survives a JSON round trip unchanged; never fails."""
    path = _entry(kind, sources)
    if path is None:
        return
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if json.loads(text) == value:
            _write(path, text)
    except (OSError, TypeError, ValueError):
        pass  # read-only or full cache dir, or a value JSON cannot hold


def cached(kind: str, sources: tuple[bytes, ...], build: Callable[[], Any]) -> Any:
    """``build()``, or the JSON entry derived earlier from the same ``kind`` and ``sources``.

    Only values that survive a JSON round trip unchanged are stored."""
    value = read(kind, sources)
    if value is None:
        value = build()
        write(kind, sources, value)
    return value
