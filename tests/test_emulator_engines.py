"""The pod emulator's stand-in engines (tests/emulator/engines/standin.py) and parser daemon
(tests/emulator/parserd.py), run on the host: no chroot, the KVGEN_EMU_* variables set directly
by the wrapper scripts the emulator installs.

The stand-ins parse with the real vLLM 0.33.0 / LMCache 0.5.6 parsers (parserd, in the contract
venv): those tests skip without the venv, and fail without it when KVGEN_REQUIRE_CONTRACT is set.
The resp tests use the real valkey-server tests/test_remote_tier.py starts.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import contract_support as cs
import pytest
from emulator import endpoints
from emulator.engines import standin, wrappers
from valkey_support import SECRETS

pytestmark = pytest.mark.emulator
PARSERD = Path(__file__).resolve().parent / "emulator" / "parserd.py"
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable  # the container's, no venv
PASSWORD = SECRETS[("valkey-auth", "password")]  # the ACL user kvgen's password on the test server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def parserd() -> Iterator[str]:
    """parserd.py in the contract venv, on a socket in a temporary directory."""
    python = cs.contract_python_or_skip()
    with tempfile.TemporaryDirectory(prefix="kvgen-parserd-") as tmp:
        path = str(Path(tmp) / "parserd.sock")
        env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "LMCACHE_DISABLE_BANNER": "1", "PYTHONPATH": ""}
        with open(Path(tmp) / "log", "w+b") as log:
            proc = subprocess.Popen([python, str(PARSERD), path], stdout=subprocess.PIPE, stderr=log, env=env, cwd=tmp)
            try:
                assert proc.stdout is not None
                if proc.stdout.readline() != b"ready\n":
                    log.seek(0)
                    raise AssertionError(f"parserd did not start: {log.read()[-4000:].decode(errors='replace')}")
                yield path
            finally:
                proc.terminate()
                proc.wait(timeout=10)


@pytest.fixture
def engines(parserd: str, tmp_path: Path) -> Iterator[Any]:
    """start(engine, *args, env=..., timeout=...) runs a wrapper; stopped (SIGTERM) afterwards."""
    endpoints_file = endpoints.write(tmp_path / "endpoints.json")
    started: list[subprocess.Popen[str]] = []

    def start(engine: str, *args: str, env: dict[str, str] | None = None, timeout: float = 10) -> Engine:
        n = len(started)
        report = tmp_path / f"{engine}-{n}.json"
        bin_dir = tmp_path / f"bin-{n}"
        wrappers.install(
            bin_dir,
            {
                "KVGEN_EMU_PARSERD": parserd,
                "KVGEN_EMU_ENDPOINTS": str(endpoints_file),
                "KVGEN_EMU_REPORT": str(report),
                "KVGEN_EMU_TIMEOUT": str(timeout),
            },
            python=PYTHON,
        )
        proc = subprocess.Popen(
            [str(bin_dir / engine), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        started.append(proc)
        return Engine(proc, report)

    yield start
    statuses: list[int | str] = []
    for proc in reversed(started):  # workers before their master (a worker that loses it exits 1)
        if proc.poll() is None:
            proc.terminate()
            try:
                statuses.append(proc.wait(timeout=90))  # a real LMCache server stops slowly on a loaded machine
            except subprocess.TimeoutExpired:
                proc.kill()
                statuses.append("killed")
    assert all(status == 0 for status in statuses), statuses  # SIGTERM: exit 0


class Engine:
    def __init__(self, proc: subprocess.Popen[str], report: Path) -> None:
        self.proc, self.report_path = proc, report

    def started(self, timeout: float = 60) -> dict[str, Any]:
        """The report once the stand-in started; fails with its stderr if it exited instead."""
        deadline = time.monotonic() + timeout
        while not self.report_path.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"exit {self.proc.returncode}: {self.proc.communicate()[1]}")
            assert time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.05)
        return self.report()

    def report(self) -> dict[str, Any]:
        return json.loads(self.report_path.read_text(encoding="utf-8"))

    def failed(self, timeout: float = 60) -> tuple[int, str]:
        """(exit status, stderr) of a stand-in that must refuse to start."""
        _, stderr = self.proc.communicate(timeout=timeout)
        assert not self.report_path.exists()
        return self.proc.returncode, stderr


def get(url: str, method: str = "GET") -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as r:
            return r.status, r.headers["Content-Type"], r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read().decode()


def lmcache_args(port: int, http_port: int, *more: str) -> tuple[str, ...]:
    return (
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--http-host",
        "127.0.0.1",
        "--http-port",
        str(http_port),
        "--l1-size-gb",
        "1",
        "--eviction-policy",
        "LRU",
        *more,
    )


def lmcache_kv(port: int) -> str:
    return "--kv-transfer-config=" + json.dumps(
        {
            "kv_connector": "LMCacheMPConnector",
            "kv_role": "kv_both",
            "kv_connector_extra_config": {"lmcache.mp.host": "tcp://127.0.0.1", "lmcache.mp.port": port},
        }
    )


# ----------------------------------------------------------------------------- the endpoints file


def test_the_endpoints_come_from_the_snapshots_with_the_documented_paths():
    data = endpoints.load()
    assert data["lmcache"]["health"] == "/healthcheck" and data["lmcache"]["metrics"] == "/metrics"
    assert data["vllm"]["health"] == "/health" and data["vllm"]["metrics"] == "/metrics"
    assert data["vllm"]["defaults"] == {"host": None, "port": 8000}
    assert data["lmcache"]["defaults"]["http_port"] == 8080 and data["lmcache"]["defaults"]["http_host"] == "127.0.0.1"
    vllm_routes = {(r["path"], m) for r in data["vllm"]["routes"] for m in r["methods"] or ["*"]}
    assert {("/v1/models", "GET"), ("/v1/chat/completions", "POST"), ("/metrics", "*")} <= vllm_routes
    lmcache_routes = {(r["path"], m) for r in data["lmcache"]["routes"] for m in r["methods"] or ["*"]}
    assert {("/healthcheck", "GET"), ("/metrics", "GET"), ("/metrics/reset", "POST")} <= lmcache_routes


# ----------------------------------------------------------------------------- pure helpers (no venv)


def test_lmcache_urls_are_read_as_lmcaches_connector_reads_them():
    assert standin.lmcache_urls({}) == ["tcp://localhost:5555"]
    assert standin.lmcache_urls({"lmcache.mp.host": "tcp://lm", "lmcache.mp.port": 6555}) == ["tcp://lm:6555"]
    assert standin.lmcache_urls({"lmcache.mp.server_urls": " a:1, tcp://b:2 ,"}) == ["tcp://a:1", "tcp://b:2"]
    assert standin.lmcache_urls({"lmcache.mp.server_urls": ["a:1", " "], "lmcache.mp.host": "x"}) == ["tcp://a:1"]


def test_each_node_reaches_the_server_of_its_workers_and_the_api_node_every_server():
    extra = {"lmcache.mp.server_urls": ["tcp://n0:1", "tcp://n1:1"]}
    facts = {"tensor_parallel_size": 4, "pipeline_parallel_size": 2, "nnodes": 2}
    assert standin.lmcache_targets({**facts, "node_rank": 0, "headless": False}, extra) == ["tcp://n0:1", "tcp://n1:1"]
    assert standin.lmcache_targets({**facts, "node_rank": 1, "headless": True}, extra) == ["tcp://n1:1"]
    one = {"lmcache.mp.host": "tcp://lm", "lmcache.mp.port": 1}  # one server for the whole world
    assert standin.lmcache_targets({**facts, "node_rank": 1, "headless": True}, one) == ["tcp://lm:1"]


# ----------------------------------------------------------------------------- parserd


def test_parserd_answers_each_request_with_the_real_parsers_result(parserd):
    requests = [
        {"kind": "vllm", "argv": ["m", "--port", "9000"]},
        {"kind": "nope", "argv": []},
        {"kind": "lmcache", "argv": ["lmcache", "server", "--bogus"]},
    ]
    with socket.socket(socket.AF_UNIX) as s:  # several requests on one connection
        s.connect(parserd)
        f = s.makefile("rwb")
        answers = []
        for request in requests:
            f.write(json.dumps(request).encode() + b"\n")
            f.flush()
            answers.append(json.loads(f.readline()))
    ok, bad, refused = answers
    assert ok["ok"] and ok["facts"]["model"] == "m" and ok["facts"]["port"] == 9000
    assert (bad["ok"], bad["stage"]) == (False, "request")
    assert (refused["ok"], refused["stage"]) == (False, "parse") and "unrecognized arguments: --bogus" in refused[
        "error"
    ]


# ----------------------------------------------------------------------------- vllm serve


def test_a_wrong_flag_exits_2_with_the_real_parsers_message(engines):
    status, stderr = engines("vllm", "serve", "demo", "--no-such-flag=1").failed()
    assert status == 2
    assert "error: unrecognized arguments: --no-such-flag=1" in stderr


def test_vllm_that_cannot_reach_its_lmcache_server_fails_loudly(engines):
    port = free_port()  # nothing listens there
    status, stderr = engines("vllm", "serve", "demo", lmcache_kv(port), timeout=1).failed()
    assert status == 1
    assert f"cannot reach the LMCache server tcp://127.0.0.1:{port}" in stderr


def test_vllm_reaches_the_lmcache_server_it_names_then_serves_the_captured_routes(engines, tmp_path):
    mp, http, api = free_port(), free_port(), free_port()
    lm = engines("lmcache", *lmcache_args(mp, http))
    lm.started()
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    vllm = engines(
        "vllm", "serve", str(model), "--served-model-name=demo", f"--port={api}", "--host=127.0.0.1", lmcache_kv(mp)
    )
    report = vllm.started()
    assert report["reached"] == [{"what": "lmcache", "url": f"tcp://127.0.0.1:{mp}"}]
    assert {"what": "http", "host": "127.0.0.1", "port": api} in report["listening"]
    assert [c["host"] for c in lm.report()["clients"]] == ["127.0.0.1"]  # the server saw it
    base = f"http://127.0.0.1:{api}"
    assert get(base + "/health")[0] == 200
    assert json.loads(get(base + "/v1/models")[2])["data"][0]["id"] == "demo"
    status, ctype, text = get(base + "/metrics")
    assert status == 200 and ctype.startswith("text/plain")
    assert 'vllm:num_requests_waiting{model_name="demo",engine="0"} 0.0' in text.splitlines()
    assert get(base + "/v1/nothing")[0] == 404
    assert get(base + "/health", "POST")[0] == 405


def test_an_offloading_buffer_larger_than_dev_shm_fails_loudly(engines):
    kv = {
        "kv_connector": "OffloadingConnector",
        "kv_role": "kv_both",
        "kv_connector_extra_config": {"cpu_bytes_to_use": 1 << 60},
    }
    status, stderr = engines("vllm", "serve", "demo", "--kv-transfer-config=" + json.dumps(kv)).failed()
    assert status == 1 and "does not fit in /dev/shm" in stderr


def test_multi_node_ranks_meet_at_the_master_address(engines):
    master = free_port()
    common = ("--nnodes=2", "--master-addr=localhost", f"--master-port={master}")
    leader = engines("vllm", "serve", "demo", f"--port={free_port()}", *common, "--node-rank=0")
    worker = engines("vllm", "serve", "demo", *common, "--node-rank=1", "--headless")
    assert worker.started()["reached"][0]["what"] == "master"
    report = leader.started()
    assert [p["node_rank"] for p in report["peers"]] == [1]
    assert "http" not in [listen["what"] for listen in worker.report()["listening"]]  # headless: no API server
    leader.proc.terminate()
    assert leader.proc.wait(timeout=30) == 0
    assert worker.proc.wait(timeout=30) == 1  # it lost its master, as a vLLM worker would
    assert "lost the master" in worker.proc.communicate()[1]


def test_a_worker_whose_master_never_comes_fails_loudly(engines):
    args = ("--nnodes=2", "--master-addr=localhost", f"--master-port={free_port()}", "--node-rank=1", "--headless")
    status, stderr = engines("vllm", "serve", "demo", *args, timeout=1).failed()
    assert status == 1 and "cannot reach the master" in stderr


# ----------------------------------------------------------------------------- lmcache server


def test_the_lmcache_servers_health_endpoint_answers_on_the_captured_path(engines):
    mp, http = free_port(), free_port()
    report = engines("lmcache", *lmcache_args(mp, http)).started()
    assert {"what": "mp", "host": "127.0.0.1", "port": mp} in report["listening"]
    base = f"http://127.0.0.1:{http}"
    assert get(base + "/healthcheck") == (200, "application/json", json.dumps({"status": "healthy"}))
    status, ctype, _ = get(base + "/metrics")
    assert status == 200 and ctype.startswith("text/plain")
    assert get(base + "/healthcheck", "POST")[0] == 405
    assert get(base + "/api/healthcheck")[0] == 404  # LMCache 0.4.4's path, not 0.5.6's
    socket.create_connection(("127.0.0.1", mp), timeout=5).close()


def tgkill(pid: int, tid: int, signum: int) -> None:
    """Send ``signum`` to one thread of ``pid`` (Linux's tgkill; os.kill lets the kernel choose)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(234 if platform.machine() == "x86_64" else 131, pid, tid, signum) != 0:  # SYS_tgkill
        raise OSError(ctypes.get_errno(), "tgkill")


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"), reason="tgkill")
def test_a_sigterm_a_server_thread_receives_stops_the_stand_in_at_once(engines):
    """The kernel hands a process's SIGTERM to any thread; the stand-in still exits 0 within seconds
    (CI once waited 90 s on one whose main thread slept for an hour)."""
    lm = engines("lmcache", *lmcache_args(free_port(), free_port()))
    lm.started()
    threads = sorted(int(t) for t in os.listdir(f"/proc/{lm.proc.pid}/task") if int(t) != lm.proc.pid)
    assert threads, "the stand-in serves from threads of its own"
    tgkill(lm.proc.pid, threads[-1], signal.SIGTERM)
    assert lm.proc.wait(timeout=5) == 0


def test_an_fs_adapter_without_its_directory_fails_loudly(engines, tmp_path):
    adapter = json.dumps({"type": "fs", "base_path": str(tmp_path / "not-mounted")})
    status, stderr = engines("lmcache", *lmcache_args(free_port(), free_port(), "--l2-adapter", adapter)).failed()
    assert status == 1 and f"{tmp_path / 'not-mounted'} is not a directory" in stderr


def resp_adapter(valkey: dict[str, Any]) -> tuple[str, str]:
    return "--l2-adapter", json.dumps(
        {"type": "resp", "host": "127.0.0.1", "port": valkey["port"], "username": "kvgen"}
    )


def test_a_resp_tier_authenticates_and_pings_a_real_valkey(engines, valkey_server):
    lm = engines(
        "lmcache",
        *lmcache_args(free_port(), free_port(), *resp_adapter(valkey_server)),
        env={"LMCACHE_RESP_PASSWORD": PASSWORD},
    )
    report = lm.started()
    assert report["reached"] == [
        {"what": "resp", "host": "127.0.0.1", "port": valkey_server["port"], "username": "kvgen", "authenticated": True}
    ]
    assert PASSWORD not in lm.report_path.read_text(encoding="utf-8")


def test_a_resp_tier_with_the_wrong_password_fails_loudly(engines, valkey_server):
    lm = engines(
        "lmcache",
        *lmcache_args(free_port(), free_port(), *resp_adapter(valkey_server)),
        env={"LMCACHE_RESP_PASSWORD": "not-the-password"},
    )
    status, stderr = lm.failed()
    assert status == 1 and "AUTH as kvgen failed: -WRONGPASS" in stderr


# -- model.cache: the hf stand-in and what vLLM needs of a local model ---------------------------------
def test_hf_download_fills_a_directory_once_then_skips_every_file(engines, tmp_path):
    target = tmp_path / "claim"
    target.mkdir()
    args = ("download", "org/model", f"--local-dir={target}", "--exclude=original/*", "--revision=abc")
    first = engines("hf", *args, env={"HF_TOKEN": "t"})
    assert first.proc.wait(timeout=60) == 0, first.proc.communicate()[1]
    report = first.report()
    assert "config.json" in report["downloaded"] and report["skipped"] == []
    assert not any(n.startswith("original/") for n in report["downloaded"])  # --exclude, as hf reads it
    assert report["token_from"] == "HF_TOKEN" and report["facts"]["revision"] == "abc"
    assert (target / ".cache" / "huggingface" / "download" / "config.json.metadata").is_file()
    second = engines("hf", *args)
    assert second.proc.wait(timeout=60) == 0
    assert second.report()["downloaded"] == [] and second.report()["skipped"] == report["downloaded"]


def test_hf_refuses_what_the_real_cli_refuses(engines, tmp_path):
    status, stderr = engines("hf", "download", "org/model", "--no-such-option").failed()
    assert status == 2 and "No such option" in stderr


def test_vllm_refuses_an_empty_directory_and_an_uncached_repo_offline(engines, tmp_path):
    status, stderr = engines("vllm", "serve", str(tmp_path)).failed()
    assert status == 1 and "holds no config.json" in stderr
    offline = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    status, stderr = engines("vllm", "serve", "org/model", env=offline).failed()
    assert status == 1 and "HF_HUB_OFFLINE is set and org/model is not in the Hugging Face cache" in stderr
