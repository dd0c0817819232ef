"""What the runtimes are told: vLLM's --kv-transfer-config and the LMCache MP server's argv.

Every key and flag here exists in the pinned runtimes (vLLM 0.33.0, LMCache 0.5.6; see
``reference/runtime.md``); the contract tests hold them to it.
"""

from __future__ import annotations

import json
from typing import Any

from kvgen.data import catalog

GiB = 1024**3


def wiring() -> dict[str, Any]:
    """Hosts, ports, paths, label and annotation keys: ``wiring`` in charts/kvgen/files/runtime.yaml,
    which the chart reads too."""
    return catalog.runtime()["wiring"]


# What Go's encoding/json (Helm's toJson) escapes that Python's json, writing UTF-8 as is, does not: the
# HTML characters (json.Marshal's HTMLEscape) and the JavaScript line terminators. Both write the other
# control characters alike (\b, \f, \n, \r, \t, else \u00XX in lower-case hex; Go since 1.22).
_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dumps(obj: Any) -> str:
    """Compact JSON with sorted keys: the bytes Helm's toJson produces (Go's encoding/json), for any string."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).translate(_GO_ESCAPES)


def lmcache_http_url() -> str:
    """The server's HTTP front end (LMCache's default 127.0.0.1:8080)."""
    lm = wiring()["lmcache"]
    return f"http://{lm['host']}:{lm['httpPort']}"


def lmcache_health_args() -> list[str]:
    """The launcher's options that find the health endpoint: the front end and, per LMCache
    version that moved it, the path (200 once the engine is initialised, 503 before)."""
    paths = [f"--health-path={p['since']}:{p['path']}" for p in wiring()["lmcache"]["healthPaths"]]
    return [f"--http-url={lmcache_http_url()}", *paths]


def lmcache_version_args(server_urls: bool = False) -> list[str]:
    """The launcher's options that bound the LMCache version it accepts in the image: from
    ``serverUrlsSince`` on where the rendered config names ``lmcache.mp.server_urls`` (multi-node)."""
    lm = catalog.runtime()["lmcache"]
    low = lm["serverUrlsSince"] if server_urls else lm["supported"]["min"]
    return [f"--lmcache-min={low}", f"--lmcache-below={lm['supported']['below']}"]


def lmcache_health_probe() -> list[str]:
    """The sidecar's startup and liveness probes: the launcher in probe mode, which picks the
    health path of the installed LMCache (the image has no curl guarantee)."""
    return [catalog.runtime()["lmcache"]["python"], launcher_path(), "--probe", *lmcache_health_args()]


def tier_path(index: int) -> str:
    """Where disk tier ``index`` is mounted (and where vLLM or LMCache writes it)."""
    return f"{wiring()['tierMountPrefix']}{index}"


def launcher_path() -> str:
    """The LMCache launcher inside the container that runs the server."""
    launcher = wiring()["launcher"]
    return f"{launcher['dir']}/{launcher['file']}"


def lmcache_kv_transfer_config(server_urls: list[str] | None = None) -> dict[str, Any]:
    """The LMCacheMPConnector's config: the pod's own server on loopback, or ``server_urls``, one
    server per node in node-rank order (a server spanning several nodes: ``lmcache_server_urls``)."""
    lm = wiring()["lmcache"]
    extra: dict[str, Any]
    if server_urls:
        extra = {"lmcache.mp.server_urls": server_urls}
    else:
        # keep the tcp:// scheme: the connector joins host and port into a ZMQ endpoint
        extra = {"lmcache.mp.host": f"tcp://{lm['host']}", "lmcache.mp.port": lm["port"]}
    return {
        "kv_connector": catalog.runtime()["connectors"]["lmcache"],
        "kv_role": "kv_both",
        "kv_connector_extra_config": extra,
    }


def lmcache_server_urls(hosts: list[str]) -> list[str]:
    """``lmcache.mp.server_urls`` of a server spanning several nodes: one MP server per node, ``hosts``
    in node-rank order. LMCache 0.5.6 (integration/vllm/lmcache_mp_connector.py) gives worker rank
    ``r`` the server ``server_urls[r // (world_size // len(server_urls))]``, and vLLM numbers the ranks
    node by node (``node_rank * local_world_size + local_rank``, v1/executor/multiproc_executor.py), so
    entry ``i`` must be node ``i``'s pod; the scheduler (rank 0's pod) looks up every entry."""
    port = wiring()["lmcache"]["port"]
    return [f"tcp://{host}:{port}" for host in hosts]


CPU_SPEC, TIERING_SPEC = "CPUOffloadingSpec", "TieringOffloadingSpec"


def native_spec_name(tier_count: int, spec_name: str | None = None) -> str:
    """vLLM's offloading spec: the spec's kvCacheOffloading.specName, else CPUOffloadingSpec for
    the CPU tier alone and TieringOffloadingSpec with disk tiers (KServe's controller always
    renders TieringOffloadingSpec, a subclass of CPUOffloadingSpec whose tiers are optional)."""
    return spec_name or (TIERING_SPEC if tier_count else CPU_SPEC)


def native_kv_transfer_config(
    cpu_bytes: int, eviction_policy: str, tier_count: int, spec_name: str | None = None
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "cpu_bytes_to_use": cpu_bytes,
        "eviction_policy": eviction_policy,
        "spec_name": native_spec_name(tier_count, spec_name),
    }
    if tier_count:
        extra["secondary_tiers"] = [{"type": "fs", "root_dir": tier_path(i)} for i in range(tier_count)]
    return {
        "kv_connector": catalog.runtime()["connectors"]["native"],
        "kv_role": "kv_both",
        "kv_connector_extra_config": extra,
    }


def nixl_kv_transfer_config() -> dict[str, Any]:
    """Prefill/decode without a local cache: NIXL alone, with KAITO's load-failure policy."""
    return {
        "kv_connector": catalog.runtime()["connectors"]["disaggregation"],
        "kv_role": "kv_both",
        "kv_load_failure_policy": catalog.runtime()["kvLoadFailurePolicy"],
    }


def multi_kv_transfer_config(native: dict[str, Any]) -> dict[str, Any]:
    """Prefill/decode with the native backend: NIXL for the hand-off, then the OffloadingConnector,
    in one MultiConnector (each child a KVTransferConfig of its own; the load-failure policy is
    read from the top level only)."""
    rt = catalog.runtime()
    nixl = {"kv_connector": rt["connectors"]["disaggregation"], "kv_role": "kv_both"}
    return {
        "kv_connector": rt["connectors"]["multi"],
        "kv_role": "kv_both",
        "kv_load_failure_policy": rt["kvLoadFailurePolicy"],
        "kv_connector_extra_config": {"connectors": [nixl, native]},
    }


def l2_adapter(index: int, capacity_bytes: int | None) -> dict[str, Any]:
    """An LMCache L2 disk adapter for tier ``index``.

    LMCache 0.5.6's ``fs`` adapter declares no capacity and ignores an eviction block, so it
    grows until the volume is full: on an emptyDir that gets the pod evicted. When the tier's
    size is known, kvgen uses ``fs_native`` instead, bounded by ``max_capacity_gb`` with LRU
    eviction from 80% full (the LMCache defaults, ``wiring.lmcache.l2Eviction``); an existing
    claim of unknown size keeps ``fs``.
    """
    if capacity_bytes is None or capacity_bytes < GiB:
        return {"type": "fs", "base_path": tier_path(index)}
    e = wiring()["lmcache"]["l2Eviction"]
    return {
        "type": "fs_native",
        "base_path": tier_path(index),
        "max_capacity_gb": capacity_bytes // GiB,
        "eviction": {
            "eviction_policy": e["policy"],
            "trigger_watermark": e["triggerWatermark"],
            "eviction_ratio": e["ratio"],
        },
    }


def lmcache_server_argv(
    eviction_policy: str,
    tier_capacities: list[int | None],
    init_gib: int,
    remote: dict[str, Any] | None = None,
    scraped: bool = False,
    multi_node: bool = False,
) -> list[str]:
    """`lmcache server ...` without --l1-size-gb, which the launcher adds at start-up; ``remote`` is
    the --l2-adapter object of kvCacheOffloading.remote (kvgen.plan.remote.adapter), after the disk tiers.
    ``scraped``: a PodMonitor scrapes its /metrics, so its HTTP front end listens on the pod IP too.
    ``multi_node``: rank 0's scheduler reaches this server from another pod, so it binds every
    interface (``wiring.lmcache.multiNodeHost``), not loopback."""
    rt = catalog.runtime()["lmcache"]
    lm = wiring()["lmcache"]
    argv = [
        rt["server"], "server",
        "--host", lm["multiNodeHost"] if multi_node else lm["host"],
        "--port", str(lm["port"]),
        *(["--http-host", lm["metricsHost"]] if scraped else []),
        "--chunk-size", str(lm["chunkSize"]),
        "--l1-use-lazy",
        "--l1-init-size-gb", str(init_gib),
        "--eviction-policy", eviction_policy.upper(),
    ]  # fmt: skip
    for i, capacity in enumerate(tier_capacities):
        argv += ["--l2-adapter", dumps(l2_adapter(i, capacity))]
    if remote is not None:
        argv += ["--l2-adapter", dumps(remote)]
    return argv
