"""A stand-in for `vllm serve` and `lmcache server` in the pod emulator (standard library only).

It runs with the container's own python3 (no vLLM, no LMCache), put on the container's PATH by
two wrapper scripts (tests/emulator/engines/wrappers.py) as ``vllm`` and ``lmcache``:

    standin.py vllm serve MODEL [options]       (the vLLM image's entrypoint is `vllm serve`)
    standin.py lmcache server [options]
    standin.py hf download REPO [options]       (model.cache's init container; exits when done)

Its configuration comes from the wrapper, never from the pod:

- ``KVGEN_EMU_PARSERD``: the socket of tests/emulator/parserd.py, which parses the command line
  with the real vLLM 0.33.0 / LMCache 0.5.6 parsers and returns what they understood;
- ``KVGEN_EMU_ENDPOINTS``: a JSON file of both engines' HTTP routes and listen defaults, captured
  from their source (tests/emulator/endpoints.py builds it from the contract snapshots);
- ``KVGEN_EMU_REPORT``: where it writes, once started, a JSON report of what it checked, where it
  listens and which peers it reached (rewritten when a client connects);
- ``KVGEN_EMU_TIMEOUT``: seconds to wait for a peer (default 20).

A command line the real parser refuses exits 2 with the parser's message (argparse's own exit);
any other problem the real engine would hit at start-up, or a peer it cannot reach, exits 1 with
a message on stderr. SIGTERM and SIGINT exit 0.

vllm serve: an OffloadingConnector's ``cpu_bytes_to_use`` must fit in /dev/shm's free space and
each secondary tier's ``root_dir`` must be a writable directory; an LMCacheMPConnector (alone or
inside a MultiConnector) must reach the LMCache servers its extra config names, the way LMCache's
vLLM-side connector picks them (``lmcache.mp.server_urls``, else ``lmcache.mp.host`` +
``lmcache.mp.port``; the scheduler on the API node reaches every server, each node's workers the
server of their block of ranks); a model given as a path must exist and, a directory, hold
config.json; a repository id under HF_HUB_OFFLINE=1 must be in the Hugging Face cache. With ``--nnodes N > 1``
node rank 0 listens on ``--master-port`` and waits for the N-1 other ranks, which resolve
``--master-addr`` and connect to it (a rank whose master goes away exits 1). Ranks that are not
``--headless`` then serve the captured vLLM routes on ``--host``:``--port``. A ``VLLM_PORT`` in
the environment that is not an integer (a Service named vllm, through the kubelet's service
links) is refused with vLLM's own message (vllm/envs.py get_vllm_port).

lmcache server: listens on ``--host``:``--port`` (the ZMQ endpoint; a plain TCP listener) and
serves the captured MP HTTP API on ``--http-host``:``--http-port``; every ``fs``/``fs_native``
L2 adapter's ``base_path`` must be a writable directory; every ``resp`` adapter's server must
answer AUTH (with LMCache's precedence: the adapter's own username/password, else
LMCACHE_RESP_USERNAME / LMCACHE_RESP_PASSWORD) and PING with +PONG.

Stricter than the engines on two points, on purpose: vLLM and LMCache create a missing tier
directory (no volume mounted there: the cache lands in the container's root file system), and
LMCache keeps running when its resp workers fail AUTH (no store ever completes).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENGINE = "standin"
REPORT: dict[str, Any] = {}
REPORT_LOCK = threading.Lock()


class Refused(Exception):
    """A start-up failure: message to stderr, exit status."""

    def __init__(self, message: str, status: int = 1, verbatim: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.verbatim = verbatim  # already the engine's own message ("vllm: error: ...")


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise Refused(f"{name} is not set (the wrapper sets it)")
    return value


def timeout() -> float:
    return float(os.environ.get("KVGEN_EMU_TIMEOUT", "20"))


def write_report() -> None:
    """The report, replaced in one step (a reader never sees half of it)."""
    path = Path(env("KVGEN_EMU_REPORT"))
    with REPORT_LOCK:
        text = json.dumps(REPORT, indent=1, sort_keys=True, default=str)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def record(key: str, item: Any) -> None:
    with REPORT_LOCK:
        REPORT.setdefault(key, []).append(item)


# ----------------------------------------------------------------------------- the real parsers


def parse(kind: str, argv: list[str]) -> dict[str, Any]:
    """The facts the real parser (via parserd) read from ``argv``; Refused when it refused it."""
    path = env("KVGEN_EMU_PARSERD")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(120)
            s.connect(path)
            s.sendall(json.dumps({"kind": kind, "argv": argv}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        raise Refused(f"the parser daemon at {path} did not answer: {exc}") from None
    result: dict[str, Any] = json.loads(data)
    if not result["ok"]:
        if result["stage"] == "parse":  # argparse prints "prog: error: ..." and exits 2
            raise Refused(result["error"], 2, verbatim=True)
        raise Refused(f"{result['stage']}: {result['error']}")  # a later stage raises: exit 1
    facts: dict[str, Any] = result["facts"]
    return facts


def endpoints(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(env("KVGEN_EMU_ENDPOINTS")).read_text(encoding="utf-8"))
    return data[kind]


# ----------------------------------------------------------------------------- HTTP


def route_table(routes: list[dict[str, Any]]) -> list[tuple[re.Pattern[str], str, set[str] | None]]:
    """(the regex Starlette matches the path with, the path, its methods or None: any) of each route."""
    return [(re.compile(r["regex"]), r["path"], None if r["methods"] is None else set(r["methods"])) for r in routes]


Answer = Callable[[], tuple[int, str, str]]  # (status, content type, body)


def serve_http(
    what: str, host: str | None, port: int, routes: list[dict[str, Any]], special: dict[tuple[str, str], Answer]
) -> None:
    """Serve exactly ``routes`` on host:port: ``special`` (method, route path) -> its answer;
    other captured GET routes 200 with a small JSON body, other captured methods 501, a known
    path with another method 405, anything else 404."""
    table = route_table(routes)

    def answer(req: http.server.BaseHTTPRequestHandler) -> tuple[int, str, bytes]:
        path = urllib.parse.urlsplit(req.path).path
        matches = [(template, methods) for rx, template, methods in table if rx.match(path)]
        serving = [template for template, methods in matches if methods is None or req.command in methods]
        if not matches:
            status, ctype, body = 404, "application/json", json.dumps({"detail": "Not Found"})
        elif not serving:
            status, ctype, body = 405, "application/json", json.dumps({"detail": "Method Not Allowed"})
        elif (req.command, serving[0]) in special:
            status, ctype, body = special[(req.command, serving[0])]()
        elif req.command in ("GET", "HEAD"):
            status, ctype, body = 200, "application/json", json.dumps({"standin": ENGINE, "route": serving[0]})
        else:
            status, ctype, body = (
                501,
                "application/json",
                json.dumps({"detail": f"the {ENGINE} stand-in runs no model"}),
            )
        return status, ctype, body.encode()

    serve_answers(what, host, port, answer)


def serve_answers(
    what: str,
    host: str | None,
    port: int,
    answer: Callable[[http.server.BaseHTTPRequestHandler], tuple[int, str, bytes]],
) -> None:
    """Serve on host:port every method with ``answer(request)``: (status, content type, body)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            status, ctype, data = answer(self)
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = bind(host, port, Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    record("listening", {"what": what, "host": host, "port": port})


def bind(host: str | None, port: int, handler: Any) -> http.server.ThreadingHTTPServer:
    """An HTTP server on host:port (None or "": every IPv4 address), loud when it cannot listen."""
    try:
        family = socket.getaddrinfo(host or "0.0.0.0", port, type=socket.SOCK_STREAM)[0][0]
        server = type("Server", (http.server.ThreadingHTTPServer,), {"address_family": family, "daemon_threads": True})
        return server((host or "0.0.0.0", port), handler)
    except OSError as exc:
        raise Refused(f"cannot listen on {host or '0.0.0.0'}:{port}: {exc}") from None


def listen_tcp(what: str, host: str | None, port: int, on_client: Any) -> socket.socket:
    """A plain TCP listener; ``on_client(conn, address)`` runs in a thread per connection."""
    try:
        family = socket.getaddrinfo(host or "0.0.0.0", port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host or "0.0.0.0", port))
        sock.listen(64)
    except OSError as exc:
        raise Refused(f"cannot listen on {host or '0.0.0.0'}:{port} ({what}): {exc}") from None

    def accept() -> None:
        while True:
            conn, address = sock.accept()
            threading.Thread(target=on_client, args=(conn, address), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    record("listening", {"what": what, "host": host, "port": port})
    return sock


def connect(what: str, host: str, port: int) -> socket.socket:
    """A TCP connection to host:port, retried until KVGEN_EMU_TIMEOUT; Refused when it never opens."""
    deadline = time.monotonic() + timeout()
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=5)
            sock.settimeout(None)
            return sock
        except OSError as exc:
            if time.monotonic() > deadline:
                raise Refused(f"cannot reach {what} at {host}:{port} within {timeout():g} s: {exc}") from None
            time.sleep(0.2)


# ----------------------------------------------------------------------------- file systems


def writable_dir(what: str, path: str) -> None:
    """``path`` must be an existing directory a file can be written in."""
    if not os.path.isdir(path):
        raise Refused(f"{what}: {path} is not a directory (no volume mounted there?)")
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise Refused(f"{what}: cannot write in {path}: {exc}") from None
    record("checked", {"what": what, "path": path, "device": os.stat(path).st_dev})


# ----------------------------------------------------------------------------- lmcache server


def resp_command(sock: socket.socket, *words: str) -> str:
    """Send one RESP command (an array of bulk strings) and read the first line of the reply."""
    data = f"*{len(words)}\r\n".encode() + b"".join(
        f"${len(w.encode())}\r\n".encode() + w.encode() + b"\r\n" for w in words
    )
    sock.sendall(data)
    line = b""
    while not line.endswith(b"\r\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise Refused("the RESP server closed the connection")
        line += chunk
    return line[:-2].decode(errors="replace")


def resp_check(remote: dict[str, Any]) -> None:
    """AUTH and PING the way LMCache's resp adapter (its native client) would authenticate."""
    # lmcache/v1/distributed/l2_adapters/resp_l2_adapter.py: config first, the environment second
    host = remote.get("host") or os.environ.get("LMCACHE_RESP_HOST", "")
    port = int(remote.get("port") or os.environ.get("LMCACHE_RESP_PORT", "0"))
    username = remote.get("username") or os.environ.get("LMCACHE_RESP_USERNAME", "")
    password = remote.get("password") or os.environ.get("LMCACHE_RESP_PASSWORD", "")
    where = f"the resp L2 adapter's server {host}:{port}"
    sock = connect(where, host, port)
    with sock:
        sock.settimeout(timeout())
        if password:
            answer = resp_command(sock, "AUTH", *([username] if username else []), password)
            if answer != "+OK":
                raise Refused(f"{where}: AUTH as {username or 'default'} failed: {answer}")
        answer = resp_command(sock, "PING")
        if answer != "+PONG":
            raise Refused(f"{where}: PING answered {answer}")
    record(
        "reached",
        {"what": "resp", "host": host, "port": port, "username": username or None, "authenticated": bool(password)},
    )


def lmcache_server(argv: list[str]) -> None:
    if argv[:1] != ["server"]:
        raise Refused(f"the stand-in runs only `lmcache server`, not {argv[:1]}", 2)
    facts = parse("lmcache", ["lmcache", *argv])
    REPORT["facts"] = redacted(facts)
    for kind, path in zip(facts["l2_adapters"], facts["l2_base_paths"], strict=True):
        if kind in ("fs", "fs_native"):
            writable_dir(f"the {kind} L2 adapter's base_path", path)
    for remote in facts["l2_remotes"]:
        resp_check(remote)

    def client(conn: socket.socket, address: Any) -> None:
        record("clients", {"host": address[0], "port": address[1]})
        if REPORT.get("started"):
            write_report()
        with conn:
            while conn.recv(65536):
                pass

    listen_tcp("mp", facts["host"], facts["port"], client)
    api = endpoints("lmcache")
    metrics = "# HELP lmcache_standin_up The LMCache stand-in is up.\n# TYPE lmcache_standin_up gauge\nlmcache_standin_up 1.0\n"
    special = {
        ("GET", api["health"]): lambda: (200, "application/json", json.dumps({"status": "healthy"})),
        ("GET", api["metrics"]): lambda: (200, "text/plain; version=0.0.4; charset=utf-8", metrics),
    }
    serve_http("http", facts["http_host"], facts["http_port"], api["routes"], special)


def redacted(facts: dict[str, Any]) -> dict[str, Any]:
    out = dict(facts)
    if "l2_remotes" in out:
        out["l2_remotes"] = [{**r, "password": "<set>" if r.get("password") else ""} for r in out["l2_remotes"]]
    return out


# ----------------------------------------------------------------------------- vllm serve


def connectors(kv: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """(connector, extra config) of a kv-transfer config and of a MultiConnector's children."""
    if not kv or not kv.get("kv_connector"):
        return []
    extra = dict(kv.get("kv_connector_extra_config") or {})
    if kv["kv_connector"] == "MultiConnector":
        return [c for child in extra.get("connectors", []) for c in connectors(child)]
    return [(kv["kv_connector"], extra)]


def lmcache_urls(extra: dict[str, Any]) -> list[str]:
    """The server URLs LMCache's vLLM-side connector uses (integration/vllm/lmcache_mp_connector.py)."""
    urls = extra.get("lmcache.mp.server_urls")
    if urls:
        items = urls if isinstance(urls, list) else str(urls).split(",")
        found = [u.strip() for u in items if u.strip()]
    else:
        found = [f"{extra.get('lmcache.mp.host', 'tcp://localhost')}:{extra.get('lmcache.mp.port', 5555)}"]
    return [u if "://" in u else f"tcp://{u}" for u in found]


def lmcache_targets(facts: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """The servers this node reaches: all of them from the API node (the scheduler), and the one of
    each local worker (worker id // (world size // number of servers))."""
    urls = lmcache_urls(extra)
    world = facts["tensor_parallel_size"] * facts["pipeline_parallel_size"]
    nnodes, rank = facts.get("nnodes") or 1, facts.get("node_rank") or 0
    per_node = max(1, world // nnodes)
    per_server = max(1, world // len(urls))
    mine = {min(len(urls) - 1, w // per_server) for w in range(rank * per_node, (rank + 1) * per_node)}
    return urls if not facts["headless"] else [urls[i] for i in sorted(mine)]


def reach_lmcache(url: str) -> None:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme != "tcp" or not parsed.hostname or not parsed.port:
        raise Refused(f"LMCache server URL {url!r}: the stand-in reaches tcp://HOST:PORT only")
    sock = connect(f"the LMCache server {url}", parsed.hostname, parsed.port)
    sock.close()
    record("reached", {"what": "lmcache", "url": url})


def offloading(extra: dict[str, Any]) -> None:
    need = int(extra.get("cpu_bytes_to_use", 0))
    st = os.statvfs("/dev/shm")
    free = st.f_bavail * st.f_frsize
    if need > free:
        raise Refused(f"OffloadingConnector cpu_bytes_to_use={need} does not fit in /dev/shm ({free} bytes free)")
    record("checked", {"what": "cpu_bytes_to_use", "bytes": need, "shm_free": free})
    for tier in extra.get("secondary_tiers", []):
        if "root_dir" in tier:
            writable_dir(f"the {tier.get('type')} secondary tier's root_dir", tier["root_dir"])


def rendezvous(facts: dict[str, Any]) -> None:
    """Rank 0 waits for the other nodes on the master port; the others connect to it."""
    nnodes, rank = facts["nnodes"], facts["node_rank"]
    addr, port = facts["master_addr"], facts["master_port"]
    if rank == 0:
        joined: dict[int, Any] = {}
        arrived = threading.Condition()

        def worker(conn: socket.socket, address: Any) -> None:
            hello = json.loads(conn.makefile("rb").readline() or b"{}")
            with arrived:
                joined[int(hello.get("node_rank", -1))] = conn
                arrived.notify_all()
            conn.sendall(b"ok\n")
            record("peers", {"node_rank": hello.get("node_rank"), "host": address[0]})

        listen_tcp("master", "0.0.0.0", port, worker)
        with arrived:
            if not arrived.wait_for(lambda: set(joined) >= set(range(1, nnodes)), timeout()):
                missing = sorted(set(range(1, nnodes)) - set(joined))
                raise Refused(f"node ranks {missing} did not join on port {port} within {timeout():g} s")
        return
    sock = connect(f"the master (node rank 0) {addr}", addr, port)  # resolved on each try (/etc/hosts, DNS)
    resolved = sock.getpeername()[0]
    sock.sendall(json.dumps({"node_rank": rank}).encode() + b"\n")
    reader = sock.makefile("rb")
    if reader.readline() != b"ok\n":
        raise Refused(f"the master at {addr}:{port} did not accept node rank {rank}")
    record("reached", {"what": "master", "host": addr, "address": resolved, "port": port})

    def watch() -> None:
        reader.read()  # returns when the master's end closes
        print(f"{ENGINE}: error: lost the master {addr}:{port}", file=sys.stderr, flush=True)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def vllm_port_env() -> None:
    """vLLM 0.33 reads VLLM_PORT as the first port of its own (vllm/envs.py get_vllm_port, used for
    the engine's distributed init even on one GPU) and refuses a value that is not an integer,
    which is what a Service named `vllm` injects through the kubelet's service links."""
    port = os.environ.get("VLLM_PORT")
    if port is None:
        return
    try:
        int(port)
    except ValueError:
        if "://" in port:
            raise Refused(
                f"ValueError: VLLM_PORT '{port}' appears to be a URI. This may be caused by a Kubernetes "
                "service discovery issue, check the warning in: https://docs.vllm.ai/en/stable/serving/env_vars.html"
            ) from None
        raise Refused(f"ValueError: VLLM_PORT '{port}' must be a valid integer") from None


TRUE_VALUES = {"1", "ON", "YES", "TRUE"}  # huggingface_hub.constants ENV_VARS_TRUE_VALUES


def hub_cache() -> str:
    """huggingface_hub's cache directory: HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return os.path.join(home, "hub")


def model_source(model: str) -> None:
    """What vLLM 0.33 needs of the model before anything else: a local directory is a model only
    with its config.json (transformers' config loader); a repository id under HF_HUB_OFFLINE=1
    must be in the Hugging Face cache already (vllm/transformers_utils/repo_utils.py
    get_model_path: snapshot_download(local_files_only=True), no cache_dir)."""
    if model.startswith("/"):
        if not os.path.exists(model):
            raise Refused(f"the model path {model} does not exist")
        if os.path.isdir(model) and not os.path.isfile(os.path.join(model, "config.json")):
            raise Refused(f"the model directory {model} holds no config.json: it is not a model (an empty claim?)")
        return
    if (os.environ.get("HF_HUB_OFFLINE") or "").upper() in TRUE_VALUES:
        repo = os.path.join(hub_cache(), "models--" + model.replace("/", "--"), "snapshots")
        if not os.path.isdir(repo):
            raise Refused(
                f"HF_HUB_OFFLINE is set and {model} is not in the Hugging Face cache ({hub_cache()}): "
                "vLLM cannot download it offline"
            )


def lora_adapters(facts: dict) -> list[dict]:
    """--lora-modules as vLLM 0.33 loads them at start (entrypoints/openai/models/serving.py init_static_loras:
    any failure stops the server): LoRA must be enabled (worker's _ensure_lora_enabled), an absolute path
    must be an adapter directory (vllm/lora/lora_model.py from_local_checkpoint: adapter_config.json and
    adapter_model.safetensors, .bin or .pt), any other path is a Hugging Face repo id (lora/utils.py
    get_adapter_absolute_path), which under HF_HUB_OFFLINE must be in the cache already."""
    modules = facts.get("lora_modules") or []
    if modules and not facts.get("enable_lora"):
        raise Refused("RuntimeError: LoRA is not enabled. Use --enable-lora to enable LoRA.")
    for m in modules:
        path = m["path"]
        if path.startswith("/"):
            if not os.path.isfile(os.path.join(path, "adapter_config.json")):
                raise Refused(f"LoRAAdapterNotFoundError: adapter {m['name']}: {path} holds no adapter_config.json")
            if not any(os.path.isfile(os.path.join(path, f"adapter_model.{x}")) for x in ("safetensors", "bin", "pt")):
                raise Refused(f"ValueError: {path} doesn't contain tensors")
        elif (os.environ.get("HF_HUB_OFFLINE") or "").upper() in TRUE_VALUES:
            cached = os.path.join(hub_cache(), "models--" + path.replace("/", "--"), "snapshots")
            if not os.path.isdir(cached):
                raise Refused(
                    f"LoRAAdapterNotFoundError: adapter {m['name']}: {path} is not in the Hugging Face cache (HF_HUB_OFFLINE)"
                )
        record("checked", {"what": "lora adapter", "name": m["name"], "path": path})
    return modules


def vllm_serve(argv: list[str]) -> None:
    if argv[:1] != ["serve"]:
        raise Refused(f"the stand-in runs only `vllm serve`, not {argv[:1]}", 2)
    facts = parse("vllm", argv[1:])
    REPORT["facts"] = facts
    vllm_port_env()
    model = facts["model"]
    model_source(model)
    found = connectors(
        {"kv_connector": facts["kv_connector"], "kv_connector_extra_config": facts["kv_connector_extra_config"]}
    )
    for name, extra in found:
        if name == "OffloadingConnector":
            offloading(extra)
    if (facts.get("nnodes") or 1) > 1:
        rendezvous(facts)
    for name, extra in found:
        if name == "LMCacheMPConnector":
            for url in lmcache_targets(facts, extra):
                reach_lmcache(url)
    adapters = lora_adapters(facts)
    if facts["headless"]:
        return
    api = endpoints("vllm")
    names = facts["served_model_name"] or [model]
    names = [names] if isinstance(names, str) else names
    models = {
        "object": "list",
        "data": [{"id": n, "object": "model", "owned_by": "vllm", "root": model} for n in names]
        + [
            {"id": a["name"], "object": "model", "owned_by": "vllm", "root": a["path"], "parent": names[0]}
            for a in adapters
        ],
    }
    REPORT["models"] = models  # what GET /v1/models answers
    labels = f'model_name="{names[0]}",engine="0"'
    metrics = (
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
        "# TYPE vllm:num_requests_waiting gauge\n"
        f"vllm:num_requests_waiting{{{labels}}} 0.0\n"
        "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        f"vllm:kv_cache_usage_perc{{{labels}}} 0.0\n"
    )
    special = {
        ("GET", api["health"]): lambda: (200, "application/json", ""),
        ("GET", "/v1/models"): lambda: (200, "application/json", json.dumps(models)),
        ("GET", api["metrics"]): lambda: (200, "text/plain; version=0.0.4; charset=utf-8", metrics),
    }
    port = facts["port"] if facts["port"] is not None else api["defaults"]["port"]
    serve_http("http", facts["host"], port, api["routes"], special)


# ----------------------------------------------------------------------------- the Endpoint Picker


# the vLLM metrics the picker's scorers read (llm-d router v0.9.0 pkg/epp/server/options.go defaults)
EPP_METRICS = ("vllm:num_requests_waiting", "vllm:kv_cache_usage_perc")


def epp_flags(argv: list[str]) -> dict[str, str]:
    """The picker's command line against the flags the pinned router defines (KVGEN_EMU_EPP_FLAGS, from
    tests/data/routing/): an unknown one exits 2 with pflag's message."""
    known = set(json.loads(env("KVGEN_EMU_EPP_FLAGS")))
    out: dict[str, str] = {}
    i = 0
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if not name.startswith("-"):
            raise Refused(f"unexpected argument {argv[i]!r}", 2)
        name = "--" + name.lstrip("-")
        if name not in known:
            raise Refused(f"Error: unknown flag: {name}", 2, verbatim=True)
        if not eq and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            i += 1
            value = argv[i]
        out[name] = value if (eq or value) else "true"
        i += 1
    return out


def epp(argv: list[str]) -> None:
    """The llm-d router's Endpoint Picker, as far as the pod shows it: its flags are the router's, its
    config file loads with registered plugin types and declared references, and it reaches every pod
    of its InferencePool (KVGEN_EMU_POOLS: what the API server would list) on the pool's target port,
    whose /metrics serves the vLLM metrics its scorers read. Then it listens on its gRPC, health and
    metrics ports (the gRPC probes are emulated as TCP connects)."""
    opts = epp_flags(argv)
    for name in ("NAMESPACE", "POD_NAME"):  # cmd/epp/runner/runner.go reads both
        if not os.environ.get(name):
            raise Refused(f"environment variable {name} is not set")
    pool = opts.get("--pool-name")
    if not pool:
        raise Refused("--pool-name is required (no --endpoint-selector either)")
    path = opts.get("--config-file")
    if not path:
        raise Refused("no --config-file")
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Refused(f"cannot load the config {path}: {exc}") from exc
    registered = set(json.loads(env("KVGEN_EMU_EPP_PLUGINS")))
    declared = {p.get("name", p["type"]) for p in config.get("plugins", [])}
    for p in config.get("plugins", []):
        if p["type"] not in registered:
            raise Refused(f"plugin type {p['type']!r} is not registered")
    for profile in config.get("schedulingProfiles", []):
        for ref in profile.get("plugins", []):
            if ref["pluginRef"] not in declared:
                raise Refused(f"pluginRef {ref['pluginRef']!r} names no plugin")
    record("checked", {"config": path, "plugins": sorted(declared)})
    members = json.loads(env("KVGEN_EMU_POOLS")).get(pool)
    if not members:
        raise Refused(f"InferencePool {pool} selects no pod")
    deadline = time.monotonic() + timeout()
    for member in members:
        url = f"http://{member}/metrics"
        last = ""
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    text = response.read().decode(errors="replace")
                missing = [m for m in EPP_METRICS if not any(line.startswith(m) for line in text.splitlines())]
                if not missing:
                    break
                last = f"{url} serves no {', '.join(missing)}"
            except OSError as exc:
                last = f"{url}: {exc}"
            if time.monotonic() > deadline:
                raise Refused(f"cannot read the pool's metrics: {last}")
            time.sleep(0.2)
        record("reached", {"pool": pool, "endpoint": member, "metrics": list(EPP_METRICS)})

    def client(conn: socket.socket, address: Any) -> None:
        with conn:
            while conn.recv(65536):
                pass

    for what, flag, default in (
        ("grpc", "--grpc-port", 9002),
        ("grpc-health", "--grpc-health-port", 9003),
        ("metrics", "--metrics-port", 9090),
    ):
        listen_tcp(what, None, int(opts.get(flag, default)), client)


# ----------------------------------------------------------------------------- hf download

# What the stand-in "downloads": a model directory vLLM would take (config, tokenizer, a sharded
# safetensors checkpoint with its index), in --local-dir layout, with the metadata huggingface_hub
# keeps beside each file (<local_dir>/.cache/huggingface/download/<file>.metadata: commit hash,
# etag, timestamp; huggingface_hub/_local_folder.py).
SHARD = "model-00001-of-00001.safetensors"


# An adapter repository (the stand-in's convention: an id naming "lora" or "adapter"): what PEFT saves
# (adapter_config.json, adapter_model.safetensors) and a README.
ADAPTER_FILES = {
    "adapter_config.json": json.dumps({"peft_type": "LORA", "r": 16, "target_modules": ["q_proj", "v_proj"]}) + "\n",
    "adapter_model.safetensors": "\0" * 4096,
    "README.md": "# adapter\n",
}


def is_adapter_repo(repo: str) -> bool:
    return "lora" in repo.lower() or "adapter" in repo.lower()


def hf_files(repo: str) -> dict[str, str]:
    if is_adapter_repo(repo):
        return dict(ADAPTER_FILES)
    return {
        "config.json": json.dumps({"_name_or_path": repo, "architectures": ["LlamaForCausalLM"]}) + "\n",
        "generation_config.json": "{}\n",
        "tokenizer.json": json.dumps({"version": "1.0", "model": {"type": "BPE"}}) + "\n",
        "tokenizer_config.json": "{}\n",
        "model.safetensors.index.json": json.dumps({"weight_map": {"lm_head.weight": SHARD}}) + "\n",
        SHARD: "\0" * 4096,
        # copies vLLM never loads from a directory that has the shards (tests/data/hf-repos.yaml: real
        # repositories ship them), which the rendered --exclude patterns skip
        "original/consolidated.00.pth": "\0" * 4096,  # Llama's reference copy
        "metal/model.bin": "\0" * 4096,  # gpt-oss' Apple Metal copy
        "consolidated.safetensors": "\0" * 4096,  # Mistral's single-file copy of the shards
    }


def hf_download(argv: list[str]) -> None:
    """`hf download REPO --local-dir DIR [--revision R] [--exclude GLOB]...`: each file that is not
    there yet (with its metadata) is written, the others skipped, as huggingface_hub 2.4 does for a
    commit it already holds; the report lists both."""
    import fnmatch
    import hashlib

    facts = parse("hf", argv)
    REPORT["facts"] = {k: v for k, v in facts.items() if k != "token"}
    REPORT["token_from"] = "argv" if facts.get("token") else ("HF_TOKEN" if os.environ.get("HF_TOKEN") else None)
    local = facts.get("local_dir")
    if not local:
        raise Refused("the stand-in downloads only into --local-dir (the layout vLLM serves as a directory)", 2)
    if not os.path.isdir(local):  # huggingface_hub makes a missing --local-dir (_local_folder.py: mkdir parents)
        parent = local
        while parent not in ("", "/") and not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if parent in ("", "/") or os.stat(parent).st_dev == os.stat("/").st_dev:
            raise Refused(f"--local-dir: {local} is not on a volume (no volume mounted there?)")
        writable_dir("--local-dir (its parent)", parent)
        os.makedirs(local)
    writable_dir("--local-dir", local)
    repo, revision = facts["repo_id"], facts.get("revision") or "main"
    commit = hashlib.sha1(f"{repo}@{revision}".encode()).hexdigest()
    meta_dir = os.path.join(local, ".cache", "huggingface", "download")
    downloaded: list[str] = []
    skipped: list[str] = []
    include = facts.get("include") or []
    for name, text in hf_files(repo).items():
        if any(fnmatch.fnmatch(name, g) for g in facts.get("exclude") or []):
            continue
        if include and not any(fnmatch.fnmatch(name, g) for g in include):  # huggingface_hub allow_patterns
            continue
        path, meta = os.path.join(local, name), os.path.join(meta_dir, name + ".metadata")
        if os.path.isfile(path) and os.path.isfile(meta) and Path(meta).read_text().split("\n", 1)[0] == commit:
            skipped.append(name)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.makedirs(os.path.dirname(meta), exist_ok=True)
        incomplete = f"{path}.{os.getpid()}.incomplete"
        Path(incomplete).write_text(text)
        os.replace(incomplete, path)
        Path(meta).write_text(f"{commit}\n{hashlib.sha256(text.encode()).hexdigest()}\n{time.time()}\n")
        downloaded.append(name)
    REPORT["downloaded"], REPORT["skipped"] = downloaded, skipped


# ----------------------------------------------------------------------------- the routing sidecar


# where client-go's in-cluster config reads the ServiceAccount's token, CA and namespace
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def pd_sidecar(argv: list[str]) -> None:
    """llm-d's routing sidecar (pd-sidecar), as far as the pod shows it: its flags are the pinned release's
    (KVGEN_EMU_PDSIDECAR_FLAGS, from tests/data/routing/), --inference-pool names NAMESPACE/NAME (its SSRF
    protection lists that pool and its pods: the in-cluster token, CA and namespace are there), and it listens
    on --port: GET /health itself, every other request proxied to vLLM on 127.0.0.1:--vllm-port."""
    known = set(json.loads(env("KVGEN_EMU_PDSIDECAR_FLAGS")))
    opts: dict[str, str] = {}
    for arg in argv:
        name, eq, value = arg.partition("=")
        if not name.startswith("--") or not eq:
            raise Refused(f"unexpected argument {arg!r} (the stand-in reads --flag=value)", 2)
        if name not in known:
            raise Refused(f"Error: unknown flag: {name}", 2, verbatim=True)
        opts[name] = value
    pool = opts.get("--inference-pool", "")
    namespace, _, name = pool.partition("/")
    if not namespace or not name or "$(" in pool:
        raise Refused(f"--inference-pool={pool!r}: not NAMESPACE/NAME")
    if opts.get("--enable-ssrf-protection") == "true":
        missing = [f for f in ("token", "ca.crt", "namespace") if not (Path(SERVICE_ACCOUNT_DIR) / f).is_file()]
        if missing:
            raise Refused(f"SSRF protection lists the InferencePool, and {SERVICE_ACCOUNT_DIR} lacks {missing}")
    port, upstream = int(opts.get("--port", "8000")), int(opts.get("--vllm-port", "8001"))
    record("checked", {"pool": pool, "port": port, "vllmPort": upstream})

    def answer(req: http.server.BaseHTTPRequestHandler) -> tuple[int, str, bytes]:
        if req.command == "GET" and urllib.parse.urlsplit(req.path).path == "/health":
            status, ctype, data = 200, "text/plain", b""
        else:
            length = int(req.headers.get("Content-Length") or 0)
            body = req.rfile.read(length) if length else None
            request = urllib.request.Request(f"http://127.0.0.1:{upstream}{req.path}", data=body, method=req.command)
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    status, ctype, data = response.status, response.headers.get("Content-Type", ""), response.read()
            except urllib.error.HTTPError as exc:
                status, ctype, data = exc.code, exc.headers.get("Content-Type", ""), exc.read()
            except OSError as exc:
                status, ctype, data = 502, "text/plain", str(exc).encode()
        return status, ctype, data

    serve_answers("routing sidecar", None, port, answer)


# ----------------------------------------------------------------------------- main


def main(argv: list[str]) -> int:
    global ENGINE
    ENGINE = argv[0] if argv else ""
    REPORT.update(
        {
            "engine": ENGINE,
            "argv": argv[1:],
            "pid": os.getpid(),
            "started": False,
            **{key: [] for key in ("checked", "listening", "reached", "peers", "clients")},
        }
    )
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    try:
        if ENGINE == "vllm":
            vllm_serve(argv[1:])
        elif ENGINE == "lmcache":
            lmcache_server(argv[1:])
        elif ENGINE == "epp":
            epp(argv[1:])
        elif ENGINE == "pd-sidecar":
            pd_sidecar(argv[1:])
        elif ENGINE == "hf":
            hf_download(argv[1:])
        else:
            raise Refused(f"unknown engine {ENGINE!r} (vllm, lmcache, epp, pd-sidecar or hf)", 2)
        REPORT["started"] = True
        write_report()
    except Refused as exc:
        print(exc if exc.verbatim else f"{ENGINE}: error: {exc}", file=sys.stderr, flush=True)
        return exc.status
    if ENGINE == "hf":  # a command that ends: the init container exits 0
        print(f"hf stand-in: {len(REPORT['downloaded'])} downloaded, {len(REPORT['skipped'])} skipped", file=sys.stderr)
        return 0
    print(f"{ENGINE} stand-in started", file=sys.stderr, flush=True)
    while True:  # short naps: the kernel may hand SIGTERM to a server thread, and CPython runs the
        time.sleep(0.5)  # handler only when the main thread next runs bytecode (a long sleep is not woken)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
