"""A stand-in for `lmcache server` and `vllm serve` in the launcher's supervision tests.

    standin.py ROLE STATE_DIR [key=value ...] [--anything ...]

Writes STATE_DIR/ROLE.pid and ROLE.argv at start and ROLE.term when SIGTERM or SIGINT arrives
(then exits 0, unless ignore-term=1). Keys: port=N serve 200 on /healthcheck (or on
health-path=PATH, as LMCache 0.4.4 serves /api/healthcheck) after healthy-after=S seconds
(never with healthy-after=never); probe=URL fetch URL once at start and
write the HTTP status (or the error) to ROLE.probe; exit-after=S exit=CODE exit with CODE after S
seconds (exit=kill: SIGKILL itself). Arguments starting with -- are recorded and ignored.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from pathlib import Path

role, state = sys.argv[1], Path(sys.argv[2])
opts = dict(a.split("=", 1) for a in sys.argv[3:] if "=" in a and not a.startswith("--"))
(state / f"{role}.argv").write_text(json.dumps(sys.argv[1:]))
start = time.monotonic()


def on_term(signum, _frame):
    (state / f"{role}.term").write_text(signal.Signals(signum).name)
    if opts.get("ignore-term") != "1":
        os._exit(0)


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGINT, on_term)


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        after = opts.get("healthy-after", "0")
        ready = after != "never" and time.monotonic() - start >= float(after)
        path = opts.get("health-path", "/healthcheck")
        self.send_response((200 if ready else 503) if self.path == path else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


if "port" in opts:
    # the pid first: a launcher that sees the server healthy may stop it at once (its vLLM cannot
    # start), and the test must still learn the pid
    (state / f"{role}.pid").write_text(str(os.getpid()))
    server = http.server.HTTPServer(("127.0.0.1", int(opts["port"])), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
if "probe" in opts:
    try:
        with urllib.request.urlopen(opts["probe"], timeout=2) as response:
            (state / f"{role}.probe").write_text(str(response.status))
    except Exception as exc:  # recorded for the test to read
        (state / f"{role}.probe").write_text(repr(exc))
(state / f"{role}.pid").write_text(str(os.getpid()))  # last: the test waits for it
deadline = start + float(opts.get("exit-after", "3600"))
while time.monotonic() < deadline:
    time.sleep(0.02)
if opts.get("exit") == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(int(opts.get("exit", "0")))
