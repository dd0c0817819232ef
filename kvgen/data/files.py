"""The chart's data files (``charts/kvgen/files/``), read: each parsed once per process and once per
content (kvgen.core.diskcache keeps the parsed form, keyed by the file's hash). The modules of
kvgen/data/ read their tables through ``load``; kvgen.data.catalog re-exports it for the layers above."""

from __future__ import annotations

from functools import cache
from typing import Any

from kvgen.core import diskcache, paths


def parse_yaml(raw: bytes) -> Any:
    """YAML 1.2 as ruamel.yaml's safe loader reads it (its C parser when ruamel.yaml.clib is there)."""
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(raw.decode("utf-8"))


@cache
def load(name: str) -> dict[str, Any]:
    """One data file of charts/kvgen/files, parsed (cached in the process and on disk)."""
    raw = (paths.files_dir() / name).read_bytes()
    return diskcache.cached("files", (name.encode(), raw), lambda: parse_yaml(raw))
