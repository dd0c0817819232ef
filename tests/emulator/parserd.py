#!/usr/bin/env python3
"""The real vLLM 0.33.0 and LMCache 0.5.6 parsers as a daemon, for the pod emulator's stand-ins.

Run with the contract venv's python (scripts/contract-env.sh):

    parserd.py SOCKET_PATH

It imports tests/contract/live_check.py's VllmChecker and LMCacheChecker once (several seconds),
prints ``ready`` on stdout, then answers on an AF_UNIX stream socket, one thread per connection,
newline-delimited JSON: a request ``{"kind": "vllm" | "lmcache" | "hf", "argv": [...]}`` (vllm: the
arguments after ``vllm serve``, the model first; lmcache: the whole command, ``lmcache server
...``; hf: the arguments after ``hf``, ``download REPO ...``) gets the checker's result
``{"ok", "stage", "error", "facts"}``; a malformed request gets
``{"ok": false, "stage": "request", ...}``. Library output goes to stderr. SIGTERM ends it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socketserver
import sys
import threading
from pathlib import Path
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("LMCACHE_DISABLE_BANNER", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))

CHECKERS: dict[str, Any] = {}
LOCK = threading.Lock()  # the parsers keep state (argparse namespaces, registries): one check at a time


def answer(line: bytes) -> dict[str, Any]:
    try:
        request = json.loads(line)
        kind, argv = request["kind"], request["argv"]
        if kind not in CHECKERS or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise ValueError(f"kind must be one of {sorted(CHECKERS)} and argv a list of strings")
    except (ValueError, KeyError, TypeError) as exc:
        return {"ok": False, "stage": "request", "error": f"bad request: {exc}", "facts": {}}
    with LOCK, contextlib.redirect_stdout(sys.stderr):
        result: dict[str, Any] = CHECKERS[kind].check(argv)
    return result


class Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        for line in self.rfile:
            if line.strip():
                self.wfile.write(json.dumps(answer(line), default=str).encode() + b"\n")
                self.wfile.flush()


class Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: parserd.py SOCKET_PATH", file=sys.stderr)
        return 2
    path = Path(argv[0])
    with contextlib.redirect_stdout(sys.stderr):
        from live_check import HfChecker, LMCacheChecker, VllmChecker

        CHECKERS.update(vllm=VllmChecker(), lmcache=LMCacheChecker(), hf=HfChecker())
    path.unlink(missing_ok=True)
    with Server(str(path), Handler) as server:
        print("ready", flush=True)
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
