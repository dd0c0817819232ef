"""gpuAccess in-container: the launcher supervises the LMCache server and vLLM as real child
processes (tests/data/standin.py stands in for both): vLLM starts only once the server's
health endpoint answers; when either exits the launcher stops the other and exits non-zero;
SIGTERM and SIGINT reach both; a server that never becomes healthy times out."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import lmcache_dist
import pytest
from conftest import ROOT

LAUNCHER = ROOT / "charts" / "kvgen" / "files" / "lmcache_launcher.py"
STANDIN = ROOT / "tests" / "data" / "standin.py"
# as kvgen renders them (runtime.yaml: lmcache.supported, wiring.lmcache.healthPaths)
VERSIONS = ["--lmcache-min=0.4.4", "--lmcache-below=0.6.0"]
HEALTH_PATHS = ["--health-path=0.4.4:/api/healthcheck", "--health-path=0.4.5:/healthcheck"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Pod:
    """One launcher run: the server and vLLM stand-ins, their state files, the launcher process."""

    def __init__(
        self,
        tmp_path,
        server=(),
        vllm=(),
        health_timeout=10,
        grace=2,
        then_command=None,
        lmcache="0.5.6",
        health_path="/healthcheck",
    ):
        self.state = tmp_path / "state"
        self.state.mkdir()
        (tmp_path / "proc").mkdir()  # no meminfo, no cgroup: --max-bytes alone sizes L1
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{health_path}"
        server_cmd = [
            sys.executable,
            str(STANDIN),
            "server",
            str(self.state),
            f"port={self.port}",
            f"health-path={health_path}",
            *server,
        ]
        vllm_cmd = then_command or [sys.executable, str(STANDIN), "vllm", str(self.state), f"probe={self.url}", *vllm]
        self.argv = [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={tmp_path}",
            f"--max-bytes={2 * 1024**3}",
            *VERSIONS,
            f"--http-url=http://127.0.0.1:{self.port}",
            *HEALTH_PATHS,
            f"--health-timeout={health_timeout}",
            f"--grace-period={grace}",
            "--poll-interval=0.05",
            "--",
            *server_cmd,
            "--then",
            *vllm_cmd,
        ]
        site = lmcache_dist.install(tmp_path / "site-packages", lmcache)  # the image's LMCache
        self.proc = subprocess.Popen(self.argv, stderr=subprocess.PIPE, text=True, env=lmcache_dist.env(site))

    def wait_for(self, name: str, timeout: float = 10) -> str:
        path = self.state / name
        deadline = time.monotonic() + timeout
        while not path.exists():
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"{name} never appeared; launcher said:\n{self.proc.communicate()[1]}")
            time.sleep(0.02)
        time.sleep(0.02)  # the writer finished its one write
        return path.read_text()

    def pid(self, role: str) -> int:
        return int(self.wait_for(f"{role}.pid"))

    def finish(self, timeout: float = 15) -> tuple[int, str]:
        try:
            _out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the launcher did not exit:\n{self.proc.communicate()[1]}") from None
        return self.proc.returncode, err

    def seen(self, name: str) -> bool:
        return (self.state / name).exists()


def gone(pid: int, timeout: float = 5) -> bool:
    """The process no longer exists (or is a zombie about to be reaped by init)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.heavy
def test_vllm_starts_only_once_the_server_is_healthy_and_the_server_gets_its_l1_size(tmp_path):
    pod = Pod(tmp_path, server=["healthy-after=0.6"])
    server, vllm = pod.pid("server"), pod.pid("vllm")
    assert pod.wait_for("vllm.probe") == "200"  # the server answered /healthcheck before vLLM started
    assert json.loads(pod.wait_for("server.argv"))[-2:] == ["--l1-size-gb", "2.00"]
    assert json.loads(pod.wait_for("vllm.argv")) == ["vllm", str(pod.state), f"probe={pod.url}"]
    pod.proc.send_signal(signal.SIGTERM)
    code, err = pod.finish()
    assert code == 128 + signal.SIGTERM, err
    assert "LMCache server is healthy" in err
    assert gone(server) and gone(vllm)


@pytest.mark.heavy
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_reaches_both_and_both_stop(tmp_path, sig):
    pod = Pod(tmp_path)
    server, vllm = pod.pid("server"), pod.pid("vllm")
    pod.proc.send_signal(sig)
    code, err = pod.finish()
    assert code == 128 + sig, err
    name = signal.Signals(sig).name
    assert pod.wait_for("server.term") == name and pod.wait_for("vllm.term") == name  # forwarded as received
    assert gone(server) and gone(vllm)
    assert f"received {signal.Signals(sig).name}: stopping both" in err


@pytest.mark.heavy
def test_server_dies_the_container_exits_non_zero_and_vllm_is_stopped(tmp_path):
    pod = Pod(tmp_path, server=["exit-after=1", "exit=3"])
    server, vllm = pod.pid("server"), pod.pid("vllm")
    code, err = pod.finish()
    assert code == 3, err
    assert pod.seen("vllm.term")
    assert gone(server) and gone(vllm)
    assert "LMCache server" in err and "exited with status 3" in err


@pytest.mark.heavy
def test_server_killed_by_a_signal_exits_128_plus_the_signal(tmp_path):
    pod = Pod(tmp_path, server=["exit-after=1", "exit=kill"])
    vllm = pod.pid("vllm")
    code, err = pod.finish()
    assert code == 128 + signal.SIGKILL, err
    assert "exited with signal SIGKILL" in err
    assert gone(vllm)


@pytest.mark.heavy
def test_vllm_dies_the_server_is_stopped_and_the_container_exits_non_zero(tmp_path):
    pod = Pod(tmp_path, vllm=["exit-after=0.3", "exit=7"])
    server = pod.pid("server")
    pod.pid("vllm")
    code, err = pod.finish()
    assert code == 7, err
    assert pod.wait_for("server.term") == "SIGTERM"
    assert gone(server)


@pytest.mark.heavy
def test_a_child_exiting_with_status_0_still_fails_the_container(tmp_path):
    pod = Pod(tmp_path, vllm=["exit-after=0.3", "exit=0"])
    code, err = pod.finish()
    assert code == 1, err
    assert pod.seen("server.term")


@pytest.mark.heavy
def test_health_never_ready_times_out_non_zero_and_vllm_never_starts(tmp_path):
    pod = Pod(tmp_path, server=["healthy-after=never"], health_timeout=1)
    server = pod.pid("server")
    code, err = pod.finish()
    assert code == 1, err
    assert "not healthy" in err and pod.url in err
    assert pod.seen("server.term") and not pod.seen("vllm.pid")
    assert gone(server)


@pytest.mark.heavy
def test_server_exiting_before_it_is_healthy_fails_without_starting_vllm(tmp_path):
    pod = Pod(tmp_path, server=["healthy-after=never", "exit-after=0.2", "exit=5"])
    code, err = pod.finish()
    assert code == 5, err
    assert not pod.seen("vllm.pid")


@pytest.mark.heavy
def test_a_child_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path):
    pod = Pod(tmp_path, vllm=["ignore-term=1"], grace=1)
    vllm = pod.pid("vllm")
    started = time.monotonic()
    pod.proc.send_signal(signal.SIGTERM)
    code, err = pod.finish()
    assert code == 128 + signal.SIGTERM, err
    assert pod.wait_for("vllm.term") == "SIGTERM"  # it got the signal, and ignored it
    assert gone(vllm)
    assert 0.9 <= time.monotonic() - started < 10
    assert "still running after 1s: killing it" in err


@pytest.mark.heavy
def test_vllm_that_cannot_start_stops_the_server_and_exits_2(tmp_path):
    pod = Pod(tmp_path, then_command=[str(tmp_path / "no-such-vllm"), "serve"])
    server = pod.pid("server")
    code, err = pod.finish()
    assert code == 2, err
    assert "cannot start" in err and "no-such-vllm" in err
    assert "Traceback" not in err
    assert gone(server)


def test_nothing_after_then_is_one_error_line(tmp_path):
    (tmp_path / "proc").mkdir()
    r = subprocess.run(
        [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={tmp_path}",
            "--max-bytes=2147483648",
            "--",
            "lmcache",
            "server",
            "--then",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert r.stderr.strip().endswith("no command after --then") and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("option", ["--health-timeout=0", "--grace-period=-1", "--poll-interval=0"])
def test_supervision_times_must_be_positive(tmp_path, option):
    (tmp_path / "proc").mkdir()
    r = subprocess.run(
        [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={tmp_path}",
            "--max-bytes=2147483648",
            option,
            "--",
            "lmcache",
            "server",
            "--then",
            "vllm",
            "serve",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "must be greater than 0" in r.stderr


# --- issue 19: the health path of the LMCache installed; issue 20: bounded times --------------


@pytest.mark.heavy
def test_with_lmcache_0_4_4_the_launcher_waits_on_api_healthcheck(tmp_path):
    """LMCache 0.4.4 (vLLM's CUDA 12 images) serves /api/healthcheck, not /healthcheck: the
    launcher picks the path for the version it finds, so vLLM starts."""
    pod = Pod(tmp_path, lmcache="0.4.4", health_path="/api/healthcheck")
    server, vllm = pod.pid("server"), pod.pid("vllm")
    assert pod.wait_for("vllm.probe") == "200"
    pod.proc.send_signal(signal.SIGTERM)
    code, err = pod.finish()
    assert code == 128 + signal.SIGTERM, err
    assert f"LMCache server is healthy (http://127.0.0.1:{pod.port}/api/healthcheck)" in err
    assert gone(server) and gone(vllm)


def _refused(tmp_path, *options: str, lmcache: str | None = None):
    """The launcher in-container, refusing to start: one line, exit 2, no child. With ``lmcache``
    that version is installed and the rendered version options given; without, neither (the
    time checks come first)."""
    (tmp_path / "proc").mkdir(exist_ok=True)
    site = lmcache_dist.install(tmp_path / "site-packages", lmcache) if lmcache else tmp_path
    rendered = [*VERSIONS, *HEALTH_PATHS] if lmcache else []
    r = subprocess.run(
        [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={tmp_path}",
            "--max-bytes=2147483648",
            *rendered,
            *options,
            "--",
            sys.executable,
            str(STANDIN),
            "server",
            str(tmp_path),
            "--then",
            sys.executable,
            str(STANDIN),
            "vllm",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=lmcache_dist.env(site),
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert not (tmp_path / "server.pid").exists() and not (tmp_path / "vllm.pid").exists()  # nothing started
    return line


def test_an_lmcache_outside_the_range_starts_neither_child(tmp_path):
    line = _refused(tmp_path, lmcache="0.6.1")
    assert line.endswith(
        "LMCache MP server not started: LMCache 0.6.1 is installed; kvgen supports LMCache >=0.4.4,<0.6.0"
    )


@pytest.mark.parametrize(
    "option",
    [
        "--poll-interval=inf",
        "--health-timeout=inf",
        "--grace-period=inf",
        "--health-timeout=nan",
        "--poll-interval=1e308",
        "--grace-period=3601",
    ],
)
def test_supervision_times_must_be_finite_and_bounded(tmp_path, option):
    line = _refused(tmp_path, option)
    assert f"{option.split('=')[0]} must be " in line
