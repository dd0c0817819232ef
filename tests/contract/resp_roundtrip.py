"""Run in the contract venv (LMCache 0.5.6, CPU-only torch): build LMCache's resp L2 adapter from a
rendered ``lmcache server`` argv, exactly as the server does (its parser, parse_args_to_config,
the adapter factory), against a live Valkey/Redis server, and store, look up and load bytes.

    python resp_roundtrip.py ARGV_JSON OUTPUT_JSON

ARGV_JSON is the argv of the rendered server (``lmcache server ... --l2-adapter {...}``); the
password comes from the environment (LMCACHE_RESP_PASSWORD), as the rendered pod passes it. The
output names each step's result, or the step that failed and its error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

TIMEOUT_S = float(os.environ.get("KVGEN_RESP_TIMEOUT", "20"))


def _wait(poll: Any, what: str) -> Any:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        result = poll()
        if result is not None:
            return result
        time.sleep(0.01)
    raise TimeoutError(f"{what}: no result within {TIMEOUT_S} s")


def roundtrip(argv: list[str], out: dict[str, Any]) -> None:
    from lmcache.cli.commands import register_commands
    from lmcache.v1.distributed.api import ObjectKey
    from lmcache.v1.distributed.config import parse_args_to_config
    from lmcache.v1.distributed.l2_adapters.config import get_type_name_for_config
    from lmcache.v1.distributed.l2_adapters.factory import create_l2_adapter_from_registry
    from lmcache.v1.memory_management import BytesBufferMemoryObj

    out["step"] = "parse"
    parser = argparse.ArgumentParser(prog="lmcache")
    register_commands(parser.add_subparsers(dest="command"), ["server"])
    ns = parser.parse_args(argv[1:])
    (config,) = [
        a for a in parse_args_to_config(ns).l2_adapter_config.adapters if get_type_name_for_config(a) == "resp"
    ]
    out["step"] = "create"
    adapter = create_l2_adapter_from_registry(config)  # reads LMCACHE_RESP_PASSWORD, connects
    try:
        payloads = [b"kvgen shared tier " + bytes([i]) * 4096 for i in range(3)]
        keys = [ObjectKey(chunk_hash=bytes([i]) * 16, model_name="kvgen/test", kv_rank=0) for i in range(3)]
        missing = ObjectKey(chunk_hash=b"\xff" * 16, model_name="kvgen/test", kv_rank=0)

        out["step"] = "store"
        # the C++ workers read the buffers after submit returns: keep them alive until the store completes
        sources = [BytesBufferMemoryObj(bytearray(p)) for p in payloads]
        task = adapter.submit_store_task(keys, sources)
        stored = _wait(lambda: adapter.pop_completed_store_tasks().get(task), "store")
        del sources
        out["stored"] = str(stored)

        out["step"] = "lookup"
        task = adapter.submit_lookup_and_lock_task([*keys, missing], {})
        found = _wait(lambda: adapter.query_lookup_and_lock_result(task), "lookup")
        out["found"] = [found.test(i) for i in range(len(keys) + 1)]
        adapter.submit_unlock(keys)

        out["step"] = "load"
        buffers = [bytearray(len(p)) for p in payloads]
        targets = [BytesBufferMemoryObj(b) for b in buffers]
        task = adapter.submit_load_task(keys, targets)
        loaded = _wait(lambda: adapter.query_load_result(task), "load")
        out["loaded"] = [loaded.test(i) for i in range(len(keys))]
        out["identical"] = [bytes(b) == p for b, p in zip(buffers, payloads, strict=True)]
        out["step"] = "done"
    finally:
        adapter.close()


def main() -> int:
    argv_file, output = Path(sys.argv[1]), Path(sys.argv[2])
    argv = json.loads(argv_file.read_text(encoding="utf-8"))
    result: dict[str, Any] = {}
    with contextlib.redirect_stdout(sys.stderr):
        try:
            roundtrip(argv, result)
            result["ok"] = result["step"] == "done"
        except Exception as exc:
            result.update(ok=False, error=f"{type(exc).__name__}: {exc}")
            traceback.print_exc()
    output.write_text(json.dumps(result, indent=1, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
