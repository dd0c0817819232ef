"""What the runtimes are told: vLLM's --kv-transfer-config and the LMCache MP server's argv.

Every key and flag here exists in the pinned runtimes (vLLM 0.33.0, LMCache 0.5.6; see
``reference/runtime.md``); the contract tests hold them to it.
"""

from __future__ import annotations

import json
from typing import Any

from kvgen import catalog

# Where the LMCache MP server listens: loopback inside the pod (KAITO's MP commit).
LMCACHE_HOST = "127.0.0.1"
LMCACHE_PORT = 5555
# LMCache chunk size in tokens (KAITO passes --chunk-size 256; also LMCache's default).
LMCACHE_CHUNK_SIZE = 256
# Disk tiers are mounted at /mnt/kv-cache-<index> (KServe's convention).
TIER_MOUNT_PREFIX = "/mnt/kv-cache-"
# The launcher ConfigMap is mounted here in the sidecar.
LAUNCHER_DIR = "/opt/kvgen"
LAUNCHER_FILE = "lmcache_launcher.py"
# LMCache's own defaults for its L2 eviction trigger and the share evicted each time.
L2_EVICTION_WATERMARK = 0.8
L2_EVICTION_RATIO = 0.2
# gpuAccess in-container: the launcher's separator between the server command and vLLM's.
THEN = "--then"
GiB = 1024**3


def dumps(obj: Any) -> str:
    """Compact JSON with sorted keys: the same bytes Helm's toJson produces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def lmcache_health_url() -> str:
    """The server's HTTP front end (LMCache's default 127.0.0.1:8080): 200 on /healthcheck once
    the engine is initialised, 503 before."""
    return catalog.runtime()["lmcache"]["healthUrl"]


def lmcache_health_probe() -> str:
    """The sidecar's startup probe: a Python one-liner (the image has no curl guarantee)."""
    return f"import urllib.request; urllib.request.urlopen('{lmcache_health_url()}', timeout=2)"


def tier_path(index: int) -> str:
    return f"{TIER_MOUNT_PREFIX}{index}"


def lmcache_kv_transfer_config() -> dict[str, Any]:
    return {
        "kv_connector": catalog.runtime()["connectors"]["lmcache"],
        "kv_role": "kv_both",
        "kv_connector_extra_config": {
            # keep the tcp:// scheme: the connector joins host and port into a ZMQ endpoint
            "lmcache.mp.host": f"tcp://{LMCACHE_HOST}",
            "lmcache.mp.port": LMCACHE_PORT,
        },
    }


def native_kv_transfer_config(cpu_bytes: int, eviction_policy: str, tier_count: int) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "cpu_bytes_to_use": cpu_bytes,
        "eviction_policy": eviction_policy,
        # CPU only: CPUOffloadingSpec; with disk tiers: TieringOffloadingSpec (kserve#6086)
        "spec_name": "TieringOffloadingSpec" if tier_count else "CPUOffloadingSpec",
    }
    if tier_count:
        extra["secondary_tiers"] = [{"type": "fs", "root_dir": tier_path(i)} for i in range(tier_count)]
    return {
        "kv_connector": catalog.runtime()["connectors"]["native"],
        "kv_role": "kv_both",
        "kv_connector_extra_config": extra,
    }


def nixl_kv_transfer_config() -> dict[str, Any]:
    return {"kv_connector": catalog.runtime()["connectors"]["disaggregation"], "kv_role": "kv_both"}


def l2_adapter(index: int, capacity_bytes: int | None) -> dict[str, Any]:
    """An LMCache L2 disk adapter for tier ``index``.

    LMCache 0.5.6's ``fs`` adapter declares no capacity and ignores an eviction block, so it
    grows until the volume is full: on an emptyDir that gets the pod evicted. When the tier's
    size is known, kvgen uses ``fs_native`` instead, bounded by ``max_capacity_gb`` with LRU
    eviction from 80% full (the LMCache defaults); an existing claim of unknown size keeps
    ``fs``.
    """
    if capacity_bytes is None or capacity_bytes < GiB:
        return {"type": "fs", "base_path": tier_path(index)}
    return {
        "type": "fs_native",
        "base_path": tier_path(index),
        "max_capacity_gb": capacity_bytes // GiB,
        "eviction": {"eviction_policy": "LRU", "trigger_watermark": L2_EVICTION_WATERMARK, "eviction_ratio": L2_EVICTION_RATIO},
    }


def lmcache_server_argv(eviction_policy: str, tier_capacities: list[int | None], init_gib: int) -> list[str]:
    """`lmcache server ...` without --l1-size-gb, which the launcher adds at start-up."""
    rt = catalog.runtime()["lmcache"]
    argv = [
        rt["server"], "server",
        "--host", LMCACHE_HOST,
        "--port", str(LMCACHE_PORT),
        "--chunk-size", str(LMCACHE_CHUNK_SIZE),
        "--l1-use-lazy",
        "--l1-init-size-gb", str(init_gib),
        "--eviction-policy", eviction_policy.upper(),
    ]  # fmt: skip
    for i, capacity in enumerate(tier_capacities):
        argv += ["--l2-adapter", dumps(l2_adapter(i, capacity))]
    return argv
