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


def dumps(obj: Any) -> str:
    """Compact JSON with sorted keys: the same bytes Helm's toJson produces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


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


def lmcache_server_argv(eviction_policy: str, tier_count: int, init_gib: int) -> list[str]:
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
    for i in range(tier_count):
        argv += ["--l2-adapter", dumps({"type": "fs", "base_path": tier_path(i)})]
    return argv
