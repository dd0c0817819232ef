"""The ``vllm``, ``lmcache`` and ``hf`` commands of the pod emulator: shell wrappers around standin.py.

``install(bin_dir, env)`` writes ``bin_dir/vllm``, ``bin_dir/lmcache`` and ``bin_dir/hf``; each exports the
stand-in's configuration (``KVGEN_EMU_PARSERD``, ``KVGEN_EMU_ENDPOINTS``, ``KVGEN_EMU_REPORT``,
``KVGEN_EMU_TIMEOUT``: see standin.py) and execs ``python standin.py ENGINE "$@"``. Paths are as
the container sees them (inside its chroot), so ``python`` and ``standin`` are arguments.
"""

from __future__ import annotations

import shlex
from pathlib import Path

STANDIN = Path(__file__).resolve().parent / "standin.py"
ENGINES = ("vllm", "lmcache", "hf")


def script(engine: str, env: dict[str, str], python: str, standin: str) -> str:
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in sorted(env.items()))
    return f'#!/bin/sh\n{exports}exec {shlex.quote(python)} {shlex.quote(standin)} {engine} "$@"\n'


def install(
    bin_dir: Path, env: dict[str, str], python: str = "/usr/bin/python3", standin: str = str(STANDIN)
) -> list[Path]:
    """Write the wrappers into ``bin_dir`` (created if missing); ``env`` maps KVGEN_EMU_* to values."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for engine in ENGINES:
        path = bin_dir / engine
        path.write_text(script(engine, env, python, standin), encoding="utf-8")
        path.chmod(0o755)
        written.append(path)
    return written
