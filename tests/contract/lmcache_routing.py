"""Run in the contract venv (LMCache 0.5.6): where a multi-node server's KV is written and looked up.

Input (argv[1], JSON): {"cases": [{"id", "server_urls", "tp", "nodes", "mla"}]}. For every vLLM rank
(numbered node by node, as vLLM's multiproc executor does) this takes LMCache's own ParallelStrategy
for ``len(server_urls)`` servers, the server a worker connects to (``server_urls[rank //
ranks_per_server]``, integration/vllm/lmcache_mp_connector.py) and the KV ranks it writes; then the
KV ranks the scheduler's lookup expects on each server (``_lookup_kv_ranks``, v1/distributed/api.py).
Output (argv[2], JSON): per case, per server URL, the written and the looked-up KV ranks, and which
node's ranks reached it.
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

from lmcache.integration.vllm.vllm_multi_process_adapter import ParallelStrategy
from lmcache.v1.distributed.api import _lookup_kv_ranks


def route(case: dict) -> dict:
    urls, tp, nodes = case["server_urls"], case["tp"], case["nodes"]
    local = tp // nodes  # vLLM: rank = node_rank * local_world_size + local_rank
    servers: dict[str, dict] = {u: {"written": set(), "nodes": set(), "lookup": None} for u in urls}
    for rank in range(tp):
        s = ParallelStrategy(
            mla_only=case["mla"], vllm_world_size=tp, vllm_worker_id=rank, tp_size=tp, pp_size=1, n_servers=len(urls)
        )
        server = servers[urls[rank // s.ranks_per_server]]
        server["nodes"].add(rank // local)
        if s.is_kv_writer:
            key = SimpleNamespace(world_size=s.kv_world_size, worker_id=s.kv_worker_id)
            server["written"].update(_lookup_kv_ranks(key))
        lookup = set(_lookup_kv_ranks(SimpleNamespace(world_size=s.kv_world_size, worker_id=None)))
        server["lookup"] = sorted(lookup)
    return {
        u: {"written": sorted(v["written"]), "lookup": v["lookup"], "nodes": sorted(v["nodes"])}
        for u, v in servers.items()
    }


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    out = {c["id"]: route(c) for c in cases}
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
