"""The engines' HTTP endpoints for the pod emulator's stand-ins, from the contract snapshots.

The snapshots (charts/kvgen/files/contract/vllm-<v>.json, lmcache-<v>.json) carry an
``endpoints`` section that scripts/capture-contract reads from the real vLLM and LMCache code:
every HTTP route (path and methods) their API servers register, the health and metrics paths,
and the parsers' defaults for where they listen. ``write(path)`` puts both into the one JSON file
the stand-ins read (``KVGEN_EMU_ENDPOINTS``):

    {"vllm": {"routes": [{"path": ..., "methods": [...]}, ...], "health": "/health",
              "metrics": "/metrics", "defaults": {"host": null, "port": 8000}, ...},
     "lmcache": {... "defaults": {"host": ..., "port": ..., "http_host": ..., "http_port": ...}}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvgen.data import catalog

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "charts" / "kvgen" / "files" / "contract"
ENGINES = ("vllm", "lmcache")


def load() -> dict[str, Any]:
    """{engine: the endpoints section of its snapshot, for the versions kvgen pins}."""
    runtime = catalog.runtime()
    out = {}
    for engine in ENGINES:
        snapshot = SNAPSHOT_DIR / f"{engine}-{runtime[engine]['version']}.json"
        out[engine] = json.loads(snapshot.read_text(encoding="utf-8"))["endpoints"]
    return out


def write(path: Path) -> Path:
    """Write the stand-ins' endpoints file at ``path`` and return it."""
    path.write_text(json.dumps(load(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path
