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


MISSING_SYMBOL = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb"  # LMCache 0.5.6's wheel in torch 2.14.0


def install_kernels(site: Path, loads: bool, torch: str = "2.14.0") -> Path:
    """An importable ``lmcache`` package in ``site`` whose ``cuda_ops`` extension loads, or fails as a
    wheel built against another torch does (CPython's dlopen with RTLD_NOW: ImportError naming the
    undefined symbol); with torch's distribution metadata at ``torch``."""
    package = site / "lmcache"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    body = (
        "KERNELS = 44\n"
        if loads
        else "raise ImportError('/usr/local/lib/python3.12/dist-packages/lmcache/cuda_ops.cpython-312-x86_64-linux-gnu.so: "
        f"undefined symbol: {MISSING_SYMBOL}')\n"
    )
    (package / "cuda_ops.py").write_text(body)
    info = site / f"torch-{torch}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {torch}\n")
    return site


def env(site: Path, **extra: str) -> dict[str, str]:
    """The test process's environment with ``site`` first on PYTHONPATH (and ``extra`` set)."""
    paths = [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), **extra}
