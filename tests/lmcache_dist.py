"""A stand-in for an installed LMCache, as the launcher sees it: only the distribution's metadata
(``lmcache-<version>.dist-info/METADATA``), which ``importlib.metadata.version("lmcache")`` reads.
Put the directory on PYTHONPATH of the launcher's process (``env(...)``)."""

from __future__ import annotations

import os
from pathlib import Path


def install(site: Path, version: str) -> Path:
    """``site`` holding the metadata of lmcache ``version``; returns ``site``."""
    info = site / f"lmcache-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: lmcache\nVersion: {version}\n")
    return site


def env(site: Path, **extra: str) -> dict[str, str]:
    """The test process's environment with ``site`` first on PYTHONPATH (and ``extra`` set)."""
    paths = [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **extra}
