"""The LMCache launcher (charts/kvgen/files/lmcache_launcher.py) against fake /proc and
cgroup trees, in dry-run mode: it prints the argv it would exec."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import lmcache_dist
import pytest
from conftest import ROOT

LAUNCHER = ROOT / "charts" / "kvgen" / "files" / "lmcache_launcher.py"
GiB = 1024**3
SERVER = ["lmcache", "server", "--host", "127.0.0.1", "--port", "5555", "--eviction-policy", "LRU"]


def node(tmp_path, available_gib: float | None, v2: str | None = None, v1: str | None = None):
    (tmp_path / "proc").mkdir(exist_ok=True)
    if available_gib is not None:
        kib = int(available_gib * 1024 * 1024)
        (tmp_path / "proc" / "meminfo").write_text(f"MemTotal: {kib * 2} kB\nMemFree: 1 kB\nMemAvailable: {kib} kB\n")
    if v2 is not None:
        (tmp_path / "sys/fs/cgroup").mkdir(parents=True, exist_ok=True)
        (tmp_path / "sys/fs/cgroup/memory.max").write_text(v2 + "\n")
    if v1 is not None:
        (tmp_path / "sys/fs/cgroup/memory").mkdir(parents=True, exist_ok=True)
        (tmp_path / "sys/fs/cgroup/memory/memory.limit_in_bytes").write_text(v1 + "\n")
    return tmp_path


def launch(root, *args: str, server: list[str] = SERVER):
    return subprocess.run(
        [sys.executable, str(LAUNCHER), f"--proc-root={root}", "--dry-run", *args, "--", *server],
        capture_output=True,
        text=True,
        timeout=60,
    )


def l1(result) -> str:
    assert result.returncode == 0, result.stderr
    argv = json.loads(result.stdout)
    assert argv[: len(SERVER)] == SERVER
    assert argv[-2] == "--l1-size-gb"
    return argv[-1]


def test_seed_400gib_half_tp2_is_100gib(tmp_path):
    r = launch(
        node(tmp_path, 400, v2="max"), "--utilization=0.5", "--utilization-scope=rank", "--tensor-parallel-size=2"
    )
    assert l1(r) == "100.00"
    assert "Offload KV cache to LMCache MP server: 1.00 GB initial, 100.00 GB final (utilization=0.5, tp=2)" in r.stderr
    assert "available 400.00 GB x 0.5 / 2" in r.stderr


def test_the_default_scope_is_the_whole_pod_at_any_tensor_parallel_size(tmp_path):
    """Issue 32 finding 8: one LMCache server per pod holds every rank's chunks in one pool, so the
    utilization is the pod's share for the whole tier (400 GiB x 0.5 at TP 2 is 200 GiB, not 100)."""
    r = launch(node(tmp_path, 400, v2="max"), "--utilization=0.5", "--tensor-parallel-size=2")
    assert l1(r) == "200.00"
    assert "available 400.00 GB x 0.5;" in r.stderr
    assert l1(launch(tmp_path, "--utilization=0.5", "--utilization-scope=pod", "--tensor-parallel-size=8")) == "200.00"


def test_cgroup_v2_limit_smaller_than_host_ram_caps_l1(tmp_path):
    r = launch(
        node(tmp_path, 400, v2=str(60 * GiB)),
        "--utilization=0.5",
        "--tensor-parallel-size=1",
        f"--reserve-bytes={5 * GiB}",
    )
    assert l1(r) == "55.00"
    assert "cgroup v2: limit 60.00 GB" in r.stderr


def test_cgroup_v1_limit_is_read_when_v2_is_absent(tmp_path):
    r = launch(
        node(tmp_path, 400, v1=str(30 * GiB)),
        "--utilization=1",
        "--tensor-parallel-size=1",
        f"--reserve-bytes={5 * GiB}",
    )
    assert l1(r) == "25.00"
    assert "cgroup v1" in r.stderr


def test_cgroup_v1_unlimited_is_no_limit(tmp_path):
    r = launch(node(tmp_path, 64, v1=str(9223372036854771712)), "--utilization=0.5", "--tensor-parallel-size=1")
    assert l1(r) == "32.00"
    assert "cgroup v1: no limit" in r.stderr


def test_no_cgroup_limit_uses_host_ram(tmp_path):
    r = launch(node(tmp_path, 100, v2="max"), "--utilization=0.4", "--tensor-parallel-size=1")
    assert l1(r) == "40.00"


def test_explicit_cap_bounds_l1(tmp_path):
    r = launch(node(tmp_path, 400, v2="max"), "--utilization=0.5", f"--max-bytes={10 * GiB}")
    assert l1(r) == "10.00"
    assert "kvCacheOffloading.cpu" in r.stderr


def test_absolute_size_without_utilization(tmp_path):
    r = launch(node(tmp_path, None, v2=str(30 * GiB)), f"--max-bytes={20 * GiB}", f"--reserve-bytes={5 * GiB}")
    assert l1(r) == "20.00"
    assert "(utilization=none, tp=1)" in r.stderr


def test_utilization_zero_refuses_to_start(tmp_path):
    r = launch(node(tmp_path, 400, v2="max"), "--utilization=0")
    assert r.returncode == 2 and r.stdout == ""
    assert "below the 1 GB initial allocation" in r.stderr


@pytest.mark.parametrize("value", ["1.5", "-0.1"])
def test_utilization_outside_unit_interval_exits_2(tmp_path, value):
    r = launch(node(tmp_path, 400, v2="max"), f"--utilization={value}")
    assert r.returncode == 2
    assert "utilization must be within [0, 1]" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1  # one clear log line


def test_unreadable_meminfo_exits_2(tmp_path):
    r = launch(node(tmp_path, None, v2="max"), "--utilization=0.5")
    assert r.returncode == 2
    assert "cannot read" in r.stderr and "meminfo" in r.stderr


def test_garbage_cgroup_file_exits_2(tmp_path):
    r = launch(node(tmp_path, 100, v2="lots"), "--utilization=0.5")
    assert r.returncode == 2 and "not a byte count" in r.stderr


def test_server_command_must_not_carry_the_size(tmp_path):
    r = subprocess.run(
        [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={node(tmp_path, 100, v2='max')}",
            "--utilization=0.5",
            "--",
            *SERVER,
            "--l1-size-gb",
            "3",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "must not carry --l1-size-gb" in r.stderr


def test_launcher_uses_only_the_standard_library():
    import ast

    tree = ast.parse(LAUNCHER.read_text())
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert modules <= set(sys.stdlib_module_names) | {"__future__"}


@pytest.mark.parametrize(
    "case, args, message",
    [
        ("unreadable-meminfo", dict(available_gib=None, v2="max"), "cannot read"),
        ("utilization-zero", dict(available_gib=400, v2="max", util="0"), "below the 1 GB initial allocation"),
        (
            "cgroup-limit-below-initial",
            dict(available_gib=400, v2=str(int(5.5 * GiB)), reserve=5 * GiB),
            "below the 1 GB initial allocation",
        ),
        ("utilization-above-one", dict(available_gib=400, v2="max", util="1.5"), "utilization must be within [0, 1]"),
        ("garbage-cgroup", dict(available_gib=100, v2="lots"), "not a byte count"),
    ],
)
def test_every_invalid_input_is_one_error_line_and_exit_2(tmp_path, case, args, message):
    """The documented behaviour (launcher docstring): one log line, exit 2, nothing exec'd."""
    root = node(tmp_path, args["available_gib"], v2=args["v2"])
    r = launch(root, f"--utilization={args.get('util', '0.5')}", f"--reserve-bytes={args.get('reserve', 0)}")
    assert r.returncode == 2 and r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("ERROR ") and "LMCache MP server not started: " in line and message in line


def test_without_dry_run_the_launcher_replaces_itself_with_the_server(tmp_path):
    """The real path: os.execv, not a child process. The 'server' here is python printing its
    pid and argv; the pid is the launcher's own, and the argv carries the computed L1 size."""
    root = node(tmp_path, 400, v2="max")
    server = [
        sys.executable,
        "-c",
        "import json, os, sys; print(json.dumps([os.getpid(), sys.argv[1:]]))",
        "--eviction-policy",
        "LRU",
    ]
    proc = subprocess.Popen(
        [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={root}",
            "--utilization=0.5",
            "--utilization-scope=rank",
            "--tensor-parallel-size=2",
            "--",
            *server,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    pid, argv = json.loads(out)
    assert pid == proc.pid
    assert argv == ["--eviction-policy", "LRU", "--l1-size-gb", "100.00"]
    assert "Offload KV cache to LMCache MP server: 1.00 GB initial, 100.00 GB final (utilization=0.5, tp=2)" in err


# --- issue 8 section 6: never a traceback, round down, refuse negative options ---------------


def _one_error_line(r, message: str) -> None:
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("ERROR ") and "LMCache MP server not started: " in line and message in line, line


@pytest.mark.parametrize("where", ["meminfo", "memory.max"])
@pytest.mark.parametrize(
    "payload", ["MemAvailable: 1000 kB é\n".encode(), b"\xff\xfe\x00\x01binary\x80\n"], ids=["non-ascii", "binary"]
)
def test_undecodable_proc_and_cgroup_files_are_one_error_line(tmp_path, where, payload):
    root = node(tmp_path, 100, v2="max")
    target = root / ("proc/meminfo" if where == "meminfo" else "sys/fs/cgroup/memory.max")
    target.write_bytes(payload)
    r = launch(root, "--utilization=0.5")
    _one_error_line(r, "not ASCII text")


def test_missing_server_binary_is_one_error_line(tmp_path):
    root = node(tmp_path, 400, v2="max")
    r = subprocess.run(
        [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={root}",
            "--utilization=0.5",
            "--",
            str(tmp_path / "no-such-lmcache"),
            "server",
            "--eviction-policy",
            "LRU",
        ],
        capture_output=True,
        text=True,
    )
    # the size was computed and logged (INFO), then exec failed: one ERROR line, exit 2
    assert r.returncode == 2 and "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if not line.startswith("INFO ")]
    assert len(errors) == 1 and errors[0].startswith("ERROR ")
    assert "LMCache MP server not started: cannot start" in errors[0] and "no-such-lmcache" in errors[0]


def test_l1_size_is_rounded_down_never_above_the_cap(tmp_path):
    # a cgroup cap of 10.996 GiB: 11.00 would exceed it, so the launcher must print 10.99
    cap = int(10.996 * GiB)
    r = launch(node(tmp_path, 400, v2=str(cap)), "--utilization=1")
    size = l1(r)
    assert size == "10.99"
    assert float(size) * GiB <= cap


@pytest.mark.parametrize(
    "option",
    [
        "--reserve-bytes=-1",
        "--initial-gb=-1",
        "--initial-gb=0",
        "--max-bytes=0",
        "--max-bytes=-5",
        "--tensor-parallel-size=0",
    ],
)
def test_negative_or_zero_options_are_refused(tmp_path, option):
    r = launch(node(tmp_path, 400, v2="max"), "--utilization=0.5", option)
    _one_error_line(r, option.split("=")[0])


def test_malformed_option_value_is_one_error_line_not_usage_text(tmp_path):
    r = launch(node(tmp_path, 400, v2="max"), "--utilization=half")
    _one_error_line(r, "--utilization")


@pytest.mark.heavy
def test_any_bytes_in_proc_files_exit_0_or_2_without_traceback(tmp_path_factory):
    """Property: whatever /proc/meminfo and memory.max hold, the launcher returns 0 or 2 and
    never raises (in-process, so hypothesis can try many files quickly)."""
    import importlib.util

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    spec = importlib.util.spec_from_file_location("kvgen_launcher_under_test", LAUNCHER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = st.one_of(
        st.binary(max_size=64),
        st.builds(lambda n: f"MemAvailable: {n} kB\n".encode(), st.integers(-10, 10**30)),
        st.sampled_from([b"max\n", b"-1\n", b"9223372036854771712\n", b"0\n", b"\n", b"1e9\n"]),
    )

    @settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(meminfo=lines, cgroup=st.one_of(st.none(), lines), util=st.sampled_from(["0.5", "1", "nan", "inf", "1e-9"]))
    def check(meminfo, cgroup, util):
        root = tmp_path_factory.mktemp("node")
        (root / "proc").mkdir()
        (root / "proc/meminfo").write_bytes(meminfo)
        if cgroup is not None:
            (root / "sys/fs/cgroup").mkdir(parents=True)
            (root / "sys/fs/cgroup/memory.max").write_bytes(cgroup)
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = module.main([f"--proc-root={root}", "--dry-run", f"--utilization={util}", "--", *SERVER])
        assert code in (0, 2)

    check()


# --- issue 19: the server command is found on PATH, as in the pod --------------------------


def _lmcache_on_path(tmp_path):
    """A bare `lmcache` in a PATH directory (as pip installs it in the vLLM image), printing its
    pid and argv; and an empty working directory (the image's WORKDIR holds no `lmcache`)."""
    bin_dir, cwd = tmp_path / "bin", tmp_path / "workdir"
    bin_dir.mkdir()
    cwd.mkdir()
    stub = bin_dir / "lmcache"
    stub.write_text(f"#!{sys.executable}\nimport json, os, sys\nprint(json.dumps([os.getpid(), sys.argv]))\n")
    stub.chmod(0o755)
    return bin_dir, cwd


def test_a_bare_server_command_is_found_on_path_as_in_the_pod(tmp_path):
    """The rendered sidecar runs `... -- lmcache server ...`; os.execv alone does not search PATH
    and failed with 'No such file or directory' from the image's WORKDIR."""
    root = node(tmp_path, 400, v2="max")
    bin_dir, cwd = _lmcache_on_path(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCHER), f"--proc-root={root}", "--utilization=0.5", "--", *SERVER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", os.defpath)])},
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    pid, argv = json.loads(out)
    assert pid == proc.pid  # replaced itself, no child
    assert argv == [str(bin_dir / "lmcache"), *SERVER[1:], "--l1-size-gb", "200.00"]
    assert f"starting the LMCache server: {bin_dir / 'lmcache'}" in err  # says what it found


def test_a_server_command_not_on_path_is_one_error_line(tmp_path):
    root = node(tmp_path, 400, v2="max")
    bin_dir, cwd = _lmcache_on_path(tmp_path)
    (bin_dir / "lmcache").unlink()
    r = subprocess.run(
        [sys.executable, str(LAUNCHER), f"--proc-root={root}", "--utilization=0.5", "--", *SERVER],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PATH": str(bin_dir)},
    )
    _one_error_line(r, f"cannot start lmcache: lmcache is not on PATH ({bin_dir})")


# --- issue 19: the LMCache in the image, its version and its health path ---------------------

VERSIONS = ["--lmcache-min=0.4.4", "--lmcache-below=0.6.0"]  # as kvgen renders them (runtime.yaml)
HEALTH = ["--health-path=0.4.4:/api/healthcheck", "--health-path=0.4.5:/healthcheck"]


def with_lmcache(tmp_path, version: str | None, *args: str, dry_run: bool = True):
    """The launcher run with lmcache ``version`` installed (None: no LMCache at all)."""
    site = tmp_path / "site-packages"
    site.mkdir(exist_ok=True)
    if version is not None:
        lmcache_dist.install(site, version)
    root = node(tmp_path, 400, v2="max")
    return subprocess.run(
        [
            sys.executable,
            str(LAUNCHER),
            f"--proc-root={root}",
            *(["--dry-run"] if dry_run else []),
            "--utilization=0.5",
            *args,
            "--",
            *SERVER,
        ],
        capture_output=True,
        text=True,
        env=lmcache_dist.env(site),
    )


@pytest.mark.parametrize("version", ["0.4.4", "0.4.7", "0.5.6", "0.5.7.dev3+cu129"])
def test_an_lmcache_in_the_supported_range_starts(tmp_path, version):
    r = with_lmcache(tmp_path, version, *VERSIONS)
    assert l1(r) == "200.00"
    assert f"LMCache {version} installed (kvgen supports >=0.4.4,<0.6.0)" in r.stderr


@pytest.mark.parametrize("version", ["0.4.3", "0.3.15", "0.6.0", "0.6.0rc1", "1.0"])
def test_an_lmcache_outside_the_supported_range_is_one_line_naming_both(tmp_path, version):
    r = with_lmcache(tmp_path, version, *VERSIONS)
    _one_error_line(r, f"LMCache {version} is installed; kvgen supports LMCache >=0.4.4,<0.6.0")


@pytest.mark.parametrize(
    "version, message",
    [
        (None, "LMCache is not installed in this Python"),
        ("unknown", "LMCache 'unknown' is not a version kvgen can compare; kvgen supports LMCache >=0.4.4,<0.6.0"),
    ],
)
def test_no_lmcache_or_an_unreadable_version_is_one_line(tmp_path, version, message):
    _one_error_line(with_lmcache(tmp_path, version, *VERSIONS), message)


class _Server:
    """A loopback HTTP server answering 200 on ``path`` only (404 elsewhere), as LMCache does."""

    def __init__(self, path: str):
        import http.server
        import threading

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200 if self.path == path else 404)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def probe(tmp_path, version: str | None, url: str, *extra: str):
    site = tmp_path / "site-packages"
    site.mkdir(exist_ok=True)
    if version is not None:
        lmcache_dist.install(site, version)
    return subprocess.run(
        [sys.executable, str(LAUNCHER), "--probe", f"--http-url={url}", *HEALTH, *extra],
        capture_output=True,
        text=True,
        env=lmcache_dist.env(site),
        timeout=60,
    )


@pytest.mark.heavy
@pytest.mark.parametrize(
    "version, served", [("0.4.4", "/api/healthcheck"), ("0.4.5", "/healthcheck"), ("0.5.6", "/healthcheck")]
)
def test_the_probe_asks_the_installed_lmcache_its_own_health_path(tmp_path, version, served):
    """0.4.4 serves /api/healthcheck, 0.4.5 on /healthcheck: the probe passes against the path
    the installed version serves, and fails against the other."""
    right, wrong = _Server(served), _Server("/healthcheck" if served != "/healthcheck" else "/api/healthcheck")
    try:
        ok, bad = probe(tmp_path, version, right.url), probe(tmp_path, version, wrong.url)
    finally:
        right.close()
        wrong.close()
    assert ok.returncode == 0 and ok.stdout == ok.stderr == "", ok.stderr
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    (line,) = bad.stderr.strip().splitlines()
    assert line.startswith(f"LMCache {version} not healthy at {wrong.url}{served}: ") and "404" in line


@pytest.mark.heavy
def test_the_probe_fails_with_one_line_when_nothing_listens(tmp_path):
    server = _Server("/healthcheck")
    server.close()  # the port is free again: connection refused
    r = probe(tmp_path, "0.5.6", server.url)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.heavy
@pytest.mark.parametrize(
    "version, message", [(None, "LMCache is not installed"), ("0.4.3", "older than any known health path")]
)
def test_the_probe_without_a_usable_lmcache_fails_with_one_line(tmp_path, version, message):
    server = _Server("/healthcheck")
    try:
        r = probe(tmp_path, version, server.url)
    finally:
        server.close()
    assert r.returncode == 1 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("LMCache health probe failed: ") and message in line


def test_the_rendered_sidecar_probes_are_the_launcher_with_the_rendered_health_paths():
    """kvgen's sidecar probe command runs this launcher (its ConfigMap) with runtime.yaml's paths."""
    from kvgen.data import connector

    command = connector.lmcache_health_probe()
    assert command[:3] == ["python3", "/opt/kvgen/lmcache_launcher.py", "--probe"]
    assert command[3:] == ["--http-url=http://127.0.0.1:8080", *HEALTH]


# --- issue 20 class 7: every number bounded, no /proc read blocks ----------------------------


def test_a_401_digit_memavailable_is_one_error_line(tmp_path):
    root = node(tmp_path, None, v2="max")
    (root / "proc" / "meminfo").write_text(f"MemAvailable: {'9' * 401} kB\n")
    _one_error_line(launch(root, "--utilization=0.5"), "MemAvailable has 401 digits")


@pytest.mark.parametrize(
    "option",
    [
        f"--initial-gb={10**400}",
        f"--initial-gb={2**20 + 1}",
        f"--reserve-bytes={10**400}",
        f"--max-bytes={10**400}",
        f"--tensor-parallel-size={10**400}",
    ],
)
def test_a_huge_size_option_is_one_error_line(tmp_path, option):
    _one_error_line(
        launch(node(tmp_path, 400, v2="max"), "--utilization=0.5", option), f"{option.split('=')[0]} must be at most"
    )


@pytest.mark.parametrize("where", ["proc/meminfo", "sys/fs/cgroup/memory.max"])
def test_a_fifo_in_place_of_a_proc_file_is_refused_without_blocking(tmp_path, where):
    root = node(tmp_path, 400, v2="max")
    (root / where).unlink()
    os.mkfifo(root / where)  # nobody writes: a blocking open or read would wait forever
    r = subprocess.run(
        [sys.executable, str(LAUNCHER), f"--proc-root={root}", "--dry-run", "--utilization=0.5", "--", *SERVER],
        capture_output=True,
        text=True,
        timeout=30,
    )
    _one_error_line(r, f"{root / where} is not a regular file")


def test_a_directory_in_place_of_meminfo_is_one_error_line(tmp_path):
    root = node(tmp_path, None, v2="max")
    (root / "proc" / "meminfo").mkdir()
    _one_error_line(launch(root, "--utilization=0.5"), "meminfo")


def _rendered_version_args(values: dict, prefix: str = "--lmcache-") -> list[str]:
    """The launcher arguments starting with ``prefix`` kvgen renders for ``values`` (every pod's)."""
    from conftest import compile_spec

    workloads = [
        o for o in compile_spec(values).objects if o["kind"] in ("StatefulSet", "Deployment", "LeaderWorkerSet")
    ]
    return sorted({a for a in _args_in(workloads) if a.startswith(prefix)})


def _args_in(node) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        for value in node.values():
            out += _args_in(value)
    elif isinstance(node, list):
        for value in node:
            out += [value] if isinstance(value, str) else _args_in(value)
    return out


def test_a_multi_node_server_refuses_an_lmcache_without_server_urls(tmp_path):
    """Issue 32 (6): lmcache.mp.server_urls exists from LMCache 0.5.0; on 0.4.x a multi-node server's dense
    models never hit and MLA requests fail. The launcher kvgen renders for one refuses 0.4.9 and takes
    0.5.6; a single-node server still takes 0.4.4."""
    from conftest import spec

    multi = spec(
        instance={"type": "p5.48xlarge"}, parallelism={"tensor": 16, "nodes": 2}, multiNode={"engine": "statefulset"}
    )
    args = _rendered_version_args(multi)
    assert args == ["--lmcache-below=0.6.0", "--lmcache-min=0.5.0"]
    assert _rendered_version_args(spec()) == sorted(VERSIONS)
    _one_error_line(
        with_lmcache(tmp_path, "0.4.9", *args), "LMCache 0.4.9 is installed; kvgen supports LMCache >=0.5.0,<0.6.0"
    )
    assert l1(with_lmcache(tmp_path, "0.5.6", *args)) is not None


# --- issue 32: LMCache's CUDA kernels load, or the launcher says which symbol is missing -----------


@pytest.mark.parametrize("kernels", ["required", "optional"])
def test_kernels_built_against_another_torch_are_one_line_naming_the_symbol(tmp_path, kernels):
    """LMCache 0.5.6's wheel in vllm/vllm-openai:v0.33.0: `import lmcache.cuda_ops` fails and LMCache would
    run its pure-torch fallback without a word. required (the default): refused, exit 2; optional
    (allowTorchFallback: true): the same line as a warning, then the server starts."""
    site = tmp_path / "site-packages"
    lmcache_dist.install_kernels(lmcache_dist.install(site, "0.5.6"), loads=False)
    r = with_lmcache(tmp_path, "0.5.6", *VERSIONS, f"--kernels={kernels}")
    line = (
        f"LMCache's CUDA kernels do not load: lmcache.cuda_ops needs {lmcache_dist.MISSING_SYMBOL}, which this image's "
        "torch (2.14.0) does not export: the LMCache wheel was built against another torch. Use an image whose LMCache "
        "is built against its own torch (kvgen's runtime image ghcr.io/kvgen-dev/vllm-lmcache, images/Dockerfile), or "
        "set kvCacheOffloading.lmcache.allowTorchFallback: true to run LMCache's slower pure-torch fallback"
    )
    *before, last = r.stderr.strip().splitlines()
    if kernels == "required":
        assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
        assert last.startswith("ERROR ") and last.endswith(f"LMCache MP server not started: {line}"), last
        assert [b for b in before if "LMCache 0.5.6 installed" in b] == before  # nothing else said before it
    else:
        assert l1(r) == "200.00"
        (warning,) = [b for b in before if b.startswith("WARNING ")]
        assert warning.endswith(f"{line} (allowTorchFallback: starting on the fallback)"), warning


def test_kernels_that_load_start_the_server(tmp_path):
    site = tmp_path / "site-packages"
    lmcache_dist.install_kernels(lmcache_dist.install(site, "0.5.6"), loads=True)
    r = with_lmcache(tmp_path, "0.5.6", *VERSIONS, "--kernels=required")
    assert l1(r) == "200.00"
    assert "LMCache's CUDA kernels load (lmcache.cuda_ops)" in r.stderr


def test_kvgen_renders_required_kernels_unless_the_spec_allows_the_fallback():
    from conftest import spec

    assert "--kernels=required" in _rendered_version_args(spec(), "--kernels")
    allowed = spec(kvCacheOffloading={"lmcache": {"allowTorchFallback": True}})
    assert "--kernels=optional" in _rendered_version_args(allowed, "--kernels")


# --- issue 33: LMCache's metadata is read bounded, and the server command never sizes L1 ---------------


def _hostile_metadata(site, kind: str, dist: str = "lmcache", version: str = "0.5.6"):
    """``dist``'s dist-info in ``site`` with a FIFO nobody writes (a blocking open waits forever) or a
    symlink to /dev/zero (an endless read) in place of its METADATA; returns that path."""
    target = site / f"{dist}-{version}.dist-info" / "METADATA"
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")
    return target


def _small_address_space():
    """The launcher under test gets 1 GiB of address space: an unbounded read of /dev/zero fails
    fast (MemoryError) instead of eating the machine's memory until the timeout."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _run(argv: list[str], site):
    return subprocess.run(
        [sys.executable, str(LAUNCHER), *argv],
        capture_output=True,
        text=True,
        env=lmcache_dist.env(site),
        timeout=20,
        preexec_fn=_small_address_space,
    )


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_dev_zero_as_lmcache_metadata_is_one_error_line_not_a_hang(tmp_path, kind):
    """Issue 33 (1): importlib.metadata opens and reads METADATA with no bound (a FIFO hung the
    launcher, /dev/zero read 3.8 GB in 8 s). The launcher reads it without blocking, a regular file only."""
    site = tmp_path / "site-packages"
    metadata = _hostile_metadata(site, kind)
    root = node(tmp_path, 400, v2="max")
    r = _run([f"--proc-root={root}", "--dry-run", "--utilization=0.5", *VERSIONS, "--", *SERVER], site)
    _one_error_line(r, f"cannot read LMCache's version: {metadata} is not a regular file")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_the_probe_with_a_fifo_or_dev_zero_as_lmcache_metadata_fails_with_one_line(tmp_path, kind):
    site = tmp_path / "site-packages"
    metadata = _hostile_metadata(site, kind)
    r = _run(["--probe", "--http-url=http://127.0.0.1:9", *HEALTH], site)  # fails before any request
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line == f"LMCache health probe failed: cannot read LMCache's version: {metadata} is not a regular file"


def test_a_fifo_as_torch_metadata_does_not_hang_the_kernels_check(tmp_path):
    """The torch version named in the kernels line is read the same way (a FIFO: version unknown)."""
    site = tmp_path / "site-packages"
    lmcache_dist.install_kernels(lmcache_dist.install(site, "0.5.6"), loads=False)
    (site / "torch-2.14.0.dist-info" / "METADATA").unlink()
    _hostile_metadata(site, "fifo", "torch", "2.14.0")
    root = node(tmp_path, 400, v2="max")
    r = _run(
        [f"--proc-root={root}", "--dry-run", "--utilization=0.5", *VERSIONS, "--kernels=required", "--", *SERVER], site
    )
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert "ERROR " in r.stderr and "torch (version unreadable) does not export" in r.stderr


@pytest.mark.parametrize(
    "layout",
    ["dist-info", "egg-info", "egg-info-file"],
)
def test_lmcache_metadata_is_found_where_importlib_finds_it(tmp_path, layout):
    """A guard for the bounded read: dist-info METADATA, an egg-info directory's PKG-INFO, an egg-info file."""
    site = tmp_path / "site-packages"
    site.mkdir()
    text = "Metadata-Version: 1.2\nName: lmcache\nVersion: 0.5.6\nSummary: caf\u00e9 \U0001f680\n\nVersion: 9.9.9\n"
    if layout == "dist-info":
        lmcache_dist.install(site, "0.5.6")
        (site / "lmcache-0.5.6.dist-info" / "METADATA").write_text(text, encoding="utf-8")
    elif layout == "egg-info":
        (site / "lmcache.egg-info").mkdir()
        (site / "lmcache.egg-info" / "PKG-INFO").write_text(text, encoding="utf-8")
    else:
        (site / "lmcache-0.5.6-py3.11.egg-info").write_text(text, encoding="utf-8")
    r = with_lmcache(tmp_path, None, *VERSIONS)
    assert l1(r) == "200.00"
    assert "LMCache 0.5.6 installed (kvgen supports >=0.4.4,<0.6.0)" in r.stderr


@pytest.mark.parametrize(
    "given",
    [
        ["--l1-size-gb=3"],
        ["--l1_size_gb", "3"],
        ["--l1_size_gb=3"],
        ["--l1-size", "3"],  # argparse abbreviations LMCache 0.5.6's server parser takes for --l1-size-gb
        ["--l1-s=3"],
        ["--l1-size-g", "3"],
    ],
    ids=lambda given: given[0],
)
def test_the_server_command_never_carries_an_l1_size_in_any_spelling(tmp_path, given):
    """Issue 33 (2): LMCache's argparse takes the last --l1-size-gb (or an abbreviation of it), so a
    user's would be silently overridden by the launcher's own, or the other way round."""
    r = launch(node(tmp_path, 400, v2="max"), "--utilization=0.5", server=[*SERVER, *given])
    name = given[0].partition("=")[0]
    _one_error_line(
        r,
        f"the server command must not carry {name}: the launcher sizes L1 (--l1-size-gb) from --utilization/--max-bytes "
        "(kvCacheOffloading.cpuMemoryUtilization / kvCacheOffloading.cpu)",
    )


def test_the_other_l1_options_and_ambiguous_prefixes_pass_through(tmp_path):
    """--l1-init-size-gb, --l1-use-lazy ... are LMCache's to take; --l1 and --l1- are ambiguous to
    its parser (--l1-manager, --l1-size-gb, ...), which refuses them itself. A guard: passes before the fix."""
    extra = ["--l1-init-size-gb", "2", "--no-l1-use-lazy", "--l1-manager", "{}", "--l1-", "--l1", "--l1-sizegb"]
    r = launch(node(tmp_path, 400, v2="max"), "--utilization=0.5", server=[*SERVER, *extra])
    assert json.loads(r.stdout) == [*SERVER, *extra, "--l1-size-gb", "200.00"], r.stderr
