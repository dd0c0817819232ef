#!/usr/bin/env python3
"""kvgen's LMCache MP server launcher (the lmcache-mp-server sidecar, or the vLLM container).

Sizes the LMCache L1 (CPU memory) pool when the pod starts, then starts the LMCache server.
Standard library only, so any image with Python and LMCache runs it unchanged.

    L1 = available host RAM x utilization                  (--utilization-scope=pod, the default)
    L1 = available host RAM x utilization / tensor-parallel size  (--utilization-scope=rank: KAITO's)
       capped by the container's cgroup memory limit minus --reserve-bytes
       capped by --max-bytes (kvCacheOffloading.cpu)

Without --utilization the L1 is --max-bytes, still capped by the cgroup limit. The server
starts with a 1 GiB pinned pool and grows it lazily to L1 (--l1-use-lazy).

Any invalid input (an option out of range or not finite, an unreadable, non-ASCII or
non-regular /proc/meminfo, cgroup or LMCache metadata file, a number in them too large to be a
memory size, an L1 below the initial size, an LMCache outside the supported versions, a server
command not found on PATH or carrying its own --l1-size-gb) is logged on one line and the
launcher exits with status 2: the sidecar then restarts and the pod never becomes ready, rather
than serving with a cache it cannot hold. It never prints a traceback. The /proc, cgroup and
metadata files are opened without blocking and read only when they are regular files (a FIFO or
a device there is refused, not waited on).

LMCache's CUDA kernels: with --kernels=required the launcher imports lmcache.cuda_ops in a child
Python (its own process never imports torch) and refuses to start, with one line naming the
import's error (the undefined symbol of a wheel built against another torch) and the fix, when
it does not load: LMCache would catch that ImportError and run its pure-torch fallback, which no
probe can see. --kernels=optional logs the same line as a warning and starts the server.

LMCache version: the launcher reads the version of the `lmcache` distribution installed in its
own Python (the image's python3, where LMCache is pip-installed): the Version header of the
metadata file importlib.metadata finds, opened without blocking, a regular file only, its first
64 KiB. With --lmcache-min/--lmcache-below (kvgen renders both, from runtime.yaml's
lmcache.supported) a version outside [min, below) is refused with one line naming it and the
range. The server's health path moved between versions (LMCache 0.4.4: /api/healthcheck; 0.4.5
on: /healthcheck): each --health-path=SINCE:PATH says PATH is served from version SINCE on, and
the launcher polls --http-url plus the path of the newest SINCE not above the installed version.

The L1 size is passed with two decimals, rounded down, so it never exceeds the cap.

Sidecar (gpuAccess visible-devices, dra): the launcher replaces itself with the server. A
bare command name is looked up on PATH (as a shell would; os.execv alone would not), and the
path found is logged.

    lmcache_launcher.py [options] -- lmcache server --host ... (no --l1-size-gb)

Probe (the sidecar's startup and liveness probes): exit 0 when the installed LMCache's health
path answers 200 within --probe-timeout seconds, else 1 with one line on stderr.

    lmcache_launcher.py --probe --http-url=URL --health-path=SINCE:PATH ...

In-container (gpuAccess in-container): the launcher stays, as the container's main process,
and supervises two children: it starts the server, waits until --health-url answers 200 (at
most --health-timeout seconds; the URL as in Probe), then starts the command after --then (vLLM).

    lmcache_launcher.py [options] -- lmcache server ... --then vllm serve MODEL ...

- when either child exits, the launcher stops the other and exits non-zero (the child's status,
  128+N for a signal N, or 1 when it exited with 0), so Kubernetes restarts the container:
  vLLM's connector cannot survive a restarted server, nor the server a lost vLLM;
- SIGTERM and SIGINT are forwarded to both (vLLM first); a child still running after
  --grace-period seconds is killed with its process group; the launcher then exits 128+N;
- a server that never becomes healthy is stopped, and the launcher exits 1;
- it reaps every process re-parented to it (it is PID 1 in the container).
Exit 2, as above, for invalid input or a command that cannot be started.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import logging
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import urllib.request

GIB = 1024**3
EXIT_INVALID = 2
EXIT_FAILED = 1  # the server never became healthy, or a child exited with status 0
THEN = "--then"  # separates the server command from the command run once it is healthy
EXIT_UNHEALTHY = 1  # --probe: the server did not answer 200
# Bounds on every number the launcher reads, so that none overflows a float or a sleep.
MAX_BYTES = 1 << 62  # 4 EiB: more than any node holds; cgroup v1's "no limit" is about 8 EiB
MAX_KIB_DIGITS = 19  # MemAvailable in kB: at most 19 digits (still below 2**64 kB)
MAX_INITIAL_GB = 1 << 20  # 1 PiB
MAX_TP = 1 << 16
# seconds: (option, least exclusive, most inclusive)
TIME_BOUNDS = (("--health-timeout", "health_timeout", 86400.0), ("--grace-period", "grace_period", 3600.0),
               ("--poll-interval", "poll_interval", 60.0), ("--probe-timeout", "probe_timeout", 60.0))
log = logging.getLogger("kvgen.lmcache_launcher")


class LaunchError(Exception):
    pass


def _read_bytes(path: str, limit: int) -> bytes:
    """The file's first ``limit`` bytes; LaunchError when it is not a regular file (OSError, e.g. a
    missing file, is left to the caller). Opened with O_NONBLOCK, so a FIFO or a device in its
    place is refused instead of hanging the launcher."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LaunchError(f"{path} is not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size < limit:
            chunk = os.read(fd, limit - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read(path: str) -> str:
    """The file as text (its first MiB, read by _read_bytes); LaunchError when it is not ASCII."""
    raw = _read_bytes(path, 1 << 20)
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise LaunchError(f"{path} is not ASCII text") from None


def available_memory(proc_root: str) -> int:
    """MemAvailable from /proc/meminfo, in bytes."""
    path = os.path.join(proc_root, "proc/meminfo")
    try:
        text = _read(path)
    except OSError as exc:
        raise LaunchError(f"cannot read {path}: {exc.strerror or exc}") from None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            if len(parts) < 2 or not re.fullmatch(r"[0-9]+", parts[1]):
                break
            if len(parts[1]) > MAX_KIB_DIGITS:
                raise LaunchError(f"{path}: MemAvailable has {len(parts[1])} digits, more than any memory size")
            return int(parts[1]) * 1024  # reported in kB (KiB)
    raise LaunchError(f"{path} has no readable MemAvailable line")


# cgroup v1 reports "no limit" as a page-rounded huge number.
_V1_UNLIMITED = 1 << 62


def cgroup_limit(proc_root: str) -> tuple[int | None, str]:
    """The container's memory limit in bytes (None: unlimited or unknown) and where it came from."""
    v2 = os.path.join(proc_root, "sys/fs/cgroup/memory.max")
    v1 = os.path.join(proc_root, "sys/fs/cgroup/memory/memory.limit_in_bytes")
    for path, version in ((v2, "v2"), (v1, "v1")):
        try:
            raw = _read(path).strip()
        except OSError:
            continue
        if raw == "max":
            return None, f"cgroup {version}: no limit"
        if not re.fullmatch(r"-?[0-9]{1,30}", raw):
            raise LaunchError(f"{path} holds {raw[:40]!r}, not a byte count")
        value = int(raw)
        if value >= _V1_UNLIMITED:
            return None, f"cgroup {version}: no limit"
        return value, f"cgroup {version}: limit {value / GIB:.2f} GB"
    return None, "no cgroup memory controller found"


def _check_options(args: argparse.Namespace) -> None:
    if args.utilization is not None and not 0 <= args.utilization <= 1:
        raise LaunchError(f"utilization must be within [0, 1], got {args.utilization}")
    for option, value, least, most in (
        ("--tensor-parallel-size", args.tensor_parallel_size, 1, MAX_TP),
        ("--initial-gb", args.initial_gb, 1, MAX_INITIAL_GB),
        ("--reserve-bytes", args.reserve_bytes, 0, MAX_BYTES),
        ("--max-bytes", args.max_bytes, 1, MAX_BYTES),
    ):
        if value is not None and value < least:
            raise LaunchError(f"{option} must be at least {least}, got {_short(value)}")
        if value is not None and value > most:
            raise LaunchError(f"{option} must be at most {most}, got {_short(value)}")
    check_times(args)


def _short(value: object) -> str:
    """A number for a log line: a huge one is shortened, not printed in full."""
    text = str(value)
    return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} digits)"


def check_times(args: argparse.Namespace) -> None:
    """Every time option finite, above 0 and at most its bound (time.sleep(inf) overflows)."""
    for option, name, most in TIME_BOUNDS:
        value = getattr(args, name)
        if not value > 0:
            raise LaunchError(f"{option} must be greater than 0, got {value}")
        if not (math.isfinite(value) and value <= most):
            raise LaunchError(f"{option} must be at most {most:g} seconds, got {value}")


def hundredths_of_gib(size: int) -> int:
    """``size`` bytes in GiB, as a whole number of hundredths, rounded down."""
    return max(size, 0) * 100 // GIB


def l1_size(args: argparse.Namespace) -> tuple[int, str]:
    """The L1 size in hundredths of a GiB (rounded down) and a note on what bounded it."""
    _check_options(args)
    if args.utilization is None and args.max_bytes is None:
        raise LaunchError("give --utilization, --max-bytes or both")
    candidates: list[tuple[int, str]] = []
    if args.utilization is not None:
        avail = available_memory(args.proc_root)
        if args.utilization_scope == "rank":  # KAITO's arithmetic: one rank's share
            candidates.append(
                (int(avail * args.utilization / args.tensor_parallel_size), f"available {avail / GIB:.2f} GB x {args.utilization} / {args.tensor_parallel_size}")
            )
        else:  # the whole pool of the pod, shared by every tensor-parallel rank
            candidates.append((int(avail * args.utilization), f"available {avail / GIB:.2f} GB x {args.utilization}"))
    if args.max_bytes is not None:
        candidates.append((args.max_bytes, "kvCacheOffloading.cpu"))
    limit, origin = cgroup_limit(args.proc_root)
    if limit is not None:
        candidates.append((limit - args.reserve_bytes, f"{origin} minus {args.reserve_bytes / GIB:.2f} GB reserved"))
    size, why = min(candidates)
    hundredths = hundredths_of_gib(size)
    if hundredths < args.initial_gb * 100:
        raise LaunchError(
            f"L1 would be {size / GIB:.2f} GB ({why}), below the {args.initial_gb} GB initial allocation; "
            "give the container more memory or raise the utilization"
        )
    return hundredths, f"{why}; {origin}"


def gib_text(hundredths: int) -> str:
    return f"{hundredths // 100}.{hundredths % 100:02d}"


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad option is a LaunchError (one log line), not usage text on stderr."""

    def error(self, message: str):  # type: ignore[override]
        raise LaunchError(message)


def _parser() -> _Parser:
    p = _Parser(prog="lmcache_launcher.py", description=(__doc__ or "").splitlines()[0])
    p.add_argument("--utilization", type=float, help="share of available host RAM (KAITO kv_cache_cpu_memory_utilization)")
    p.add_argument("--utilization-scope", choices=["pod", "rank"], default="pod",
                   help="the utilization is a share for the whole pod (pod) or per tensor-parallel rank (rank: KAITO's)")
    p.add_argument("--tensor-parallel-size", type=int, default=1)
    p.add_argument("--max-bytes", type=int, help="upper bound for L1 in bytes")
    p.add_argument("--reserve-bytes", type=int, default=0, help="container memory kept for the server process itself")
    p.add_argument("--initial-gb", type=int, default=1, help="pinned pool allocated at start (--l1-init-size-gb)")
    p.add_argument("--proc-root", default="/", help="root for /proc and /sys (tests)")
    p.add_argument("--dry-run", action="store_true", help="print the server argv as JSON instead of starting it")
    p.add_argument("--lmcache-min", type=parse_version, help="the oldest LMCache version supported (inclusive)")
    p.add_argument("--lmcache-below", type=parse_version, help="the first LMCache version not supported")
    p.add_argument("--http-url", default="http://127.0.0.1:8080", help="the server's HTTP front end (scheme, host, port)")
    p.add_argument("--health-path", action="append", default=[], type=_health_path, metavar="SINCE:PATH",
                   help="from LMCache version SINCE on, the health check is served at PATH (repeat per change)")
    p.add_argument("--health-timeout", type=float, default=300.0, help=f"with {THEN}: seconds to wait for the server")
    p.add_argument("--grace-period", type=float, default=25.0,
                   help=f"with {THEN}: seconds the children get to stop before they are killed")
    p.add_argument("--poll-interval", type=float, default=1.0, help=f"with {THEN}: seconds between checks")
    p.add_argument("--kernels", choices=["required", "optional"],
                   help="import lmcache.cuda_ops first: refuse to start (required) or warn (optional) when it fails")
    p.add_argument("--probe", action="store_true", help="check the server's health once: exit 0 (200) or 1")
    p.add_argument("--probe-timeout", type=float, default=2.0, help="seconds one health request may take")
    return p


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str], list[str] | None]:
    """(options, the server command, the command after --then or None); --probe takes no command."""
    if "--probe" in argv and "--" not in argv:
        args = _parser().parse_args(argv)
        check_times(args)
        return args, [], None
    if "--" not in argv:
        raise LaunchError("missing '--' before the LMCache server command")
    split = argv.index("--")
    own, server = argv[:split], argv[split + 1 :]
    then = None
    if THEN in server:
        split = server.index(THEN)
        server, then = server[:split], server[split + 1 :]
        if not then:
            raise LaunchError(f"no command after {THEN}")
    args = _parser().parse_args(own)
    if args.probe:
        raise LaunchError("--probe takes no server command")
    if not server:
        raise LaunchError("no LMCache server command after '--'")
    for token in server:  # LMCache's argparse takes the last one, and any unambiguous prefix (from --l1-s)
        name = token.partition("=")[0]
        if len(name) >= len("--l1-s") and "--l1-size-gb".startswith(name.replace("_", "-")):
            raise LaunchError(f"the server command must not carry {name}: the launcher sizes L1 (--l1-size-gb) from "
                              "--utilization/--max-bytes (kvCacheOffloading.cpuMemoryUtilization / kvCacheOffloading.cpu)")
    return args, server, then


# ----------------------------------------------------------------------------- LMCache's version

Version = tuple[int, ...]


def parse_version(text: str) -> Version:
    """The release numbers of a version (``0.5.6``, ``0.5.7.dev3+cu129`` -> (0, 5, 7)); a
    pre-release sorts as its release (0.6.0rc1 is refused by a range ending below 0.6.0)."""
    match = re.match(r"v?([0-9]{1,6}(?:\.[0-9]{1,6}){0,3})(?![0-9])", text.strip())
    if match is None:
        raise LaunchError(f"{text[:40]!r} is not a version")
    release = tuple(int(part) for part in match.group(1).split("."))
    return release + (0,) * (3 - len(release))


def show(version: Version) -> str:
    return ".".join(map(str, version))


def _health_path(text: str) -> tuple[Version, str]:
    since, sep, path = text.partition(":")
    if not sep or not path.startswith("/"):
        raise LaunchError(f"--health-path takes SINCE:PATH (e.g. 0.4.5:/healthcheck), got {text[:60]!r}")
    return parse_version(since), path


def distribution_version(name: str, label: str) -> str | None:
    """The Version header of the installed distribution ``name`` (None: not installed, "": no
    header). Found as importlib.metadata finds it (its dist-info METADATA, its egg-info PKG-INFO),
    but read as /proc is: a FIFO or a device in its place is refused, and only its first 64 KiB
    (the headers come first) are read. Any other failure is a LaunchError naming ``label``."""
    try:
        dist = next(iter(importlib.metadata.Distribution.discover(name=name)), None)
        if dist is None:
            return None
        folder = str(getattr(dist, "_path", ""))  # a PathDistribution's .dist-info or .egg-info
        if not folder:
            raise LaunchError(f"{type(dist).__name__} is not a distribution on disk")
        for path in [os.path.join(folder, "METADATA"), os.path.join(folder, "PKG-INFO")] if os.path.isdir(folder) else [folder]:
            try:
                raw = _read_bytes(path, 64 * 1024)
            except (FileNotFoundError, NotADirectoryError):
                continue
            for line in re.split(r"\r\n|\r|\n", raw.decode("utf-8", "replace")):
                if not line:  # the end of the headers
                    break
                key, sep, value = line.partition(":")
                if sep and key.lower() == "version":
                    return value.strip()
            return ""
        raise LaunchError(f"{folder} holds no METADATA or PKG-INFO file")
    except LaunchError as exc:
        raise LaunchError(f"cannot read {label}'s version: {exc}") from None
    except Exception as exc:  # OSError, a broken path entry: one line, not a traceback
        raise LaunchError(f"cannot read {label}'s version: {exc}") from None


def installed_lmcache() -> str:
    """The version of the lmcache distribution this Python imports (the image's pip install)."""
    version = distribution_version("lmcache", "LMCache")
    if version is None:
        raise LaunchError(f"LMCache is not installed in this Python ({sys.executable})")
    if not version:
        raise LaunchError("LMCache's metadata carries no version")
    return version


def supported_range(args: argparse.Namespace) -> str:
    parts = ([f">={show(args.lmcache_min)}"] if args.lmcache_min else []) + (
        [f"<{show(args.lmcache_below)}"] if args.lmcache_below else [])
    return ",".join(parts)


def check_lmcache(args: argparse.Namespace, found: str) -> Version:
    """The installed version, refused outside --lmcache-min/--lmcache-below."""
    try:
        version = parse_version(found)
    except LaunchError:
        raise LaunchError(f"LMCache {found[:40]!r} is not a version kvgen can compare; "
                          f"kvgen supports LMCache {supported_range(args) or 'any version'}") from None
    if (args.lmcache_min and version < args.lmcache_min) or (args.lmcache_below and version >= args.lmcache_below):
        raise LaunchError(f"LMCache {found} is installed; kvgen supports LMCache {supported_range(args)}")
    return version


KERNELS_TIMEOUT = 300.0  # seconds the child Python may take to import torch and the extension


def kernels_problem() -> str | None:
    """None when lmcache.cuda_ops imports in this Python, else why not (the undefined symbol, if that is it)."""
    try:
        child = subprocess.run([sys.executable, "-c", "import lmcache.cuda_ops"], capture_output=True, text=True,
                               timeout=KERNELS_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"importing lmcache.cuda_ops took more than {KERNELS_TIMEOUT:g} seconds"
    if child.returncode == 0:
        return None
    lines = [line.strip() for line in child.stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else f"exit status {child.returncode}"
    symbol = re.search(r"undefined symbol: ([A-Za-z0-9_.@$]+)", last)  # the ImportError: the traceback's last line
    if symbol:
        try:
            torch = distribution_version("torch", "torch") or "not installed"
        except LaunchError:  # a FIFO, a device in place of its METADATA
            torch = "version unreadable"
        return (f"lmcache.cuda_ops needs {symbol.group(1)}, which this image's torch ({torch}) does not export: "
                "the LMCache wheel was built against another torch")
    return last[:500]


def check_kernels(args: argparse.Namespace) -> None:
    """--kernels: LMCache's compiled CUDA kernels load, or one line says why (refused when required)."""
    if args.kernels is None:
        return
    problem = kernels_problem()
    if problem is None:
        log.info("LMCache's CUDA kernels load (lmcache.cuda_ops)")
        return
    text = (f"LMCache's CUDA kernels do not load: {problem}. Use an image whose LMCache is built against its own torch "
            "(kvgen's runtime image ghcr.io/kvgen-dev/vllm-lmcache, images/Dockerfile), or set "
            "kvCacheOffloading.lmcache.allowTorchFallback: true to run LMCache's slower pure-torch fallback")
    if args.kernels == "required":
        raise LaunchError(text)
    log.warning("%s (allowTorchFallback: starting on the fallback)", text)


def health_url(args: argparse.Namespace, version: Version, found: str) -> str:
    """--http-url plus the health path of the newest --health-path not above ``version``."""
    if not args.health_path:
        raise LaunchError("no --health-path given")
    known = [(since, path) for since, path in args.health_path if since <= version]
    if not known:
        oldest = min(since for since, _ in args.health_path)
        raise LaunchError(f"LMCache {found} is older than any known health path (from {show(oldest)})")
    return args.http_url.rstrip("/") + max(known)[1]


def probe(args: argparse.Namespace) -> int:
    """One health check (the sidecar's startup and liveness probes): 0 when it answers 200."""
    found = installed_lmcache()
    url = health_url(args, check_lmcache(args, found), found)
    problem = health_problem(url, args.probe_timeout)
    if problem is None:
        return 0
    print(f"LMCache {found} not healthy at {url}: {problem}", file=sys.stderr)
    return EXIT_UNHEALTHY


def resolve(command: str) -> str:
    """``command`` as the exec will find it: a name without a slash is searched on PATH."""
    found = shutil.which(command, path=os.environ.get("PATH", os.defpath))
    if found is None:
        where = "is not an executable file" if "/" in command else f"is not on PATH ({os.environ.get('PATH', os.defpath)})"
        raise LaunchError(f"cannot start {command}: {command} {where}")
    return found


def exit_status(code: int) -> int:
    """A child's wait status as a shell reports it: N, or 128+N when killed by signal N."""
    return 128 - code if code < 0 else code


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


def health_problem(url: str, timeout: float) -> str | None:
    """None when ``url`` answers 200 within ``timeout`` seconds, else what went wrong."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (a loopback URL kvgen sets)
            return None if response.status == 200 else f"HTTP {response.status}"
    except Exception as exc:  # refused, 503 (an HTTPError), a timeout, a malformed reply: not yet
        return str(exc)[:200] or type(exc).__name__


def healthy(url: str, timeout: float) -> bool:
    return health_problem(url, timeout) is None


class Supervisor:
    """Children in their own process groups, reaped with waitpid(-1) (PID 1 reaps orphans too)."""

    def __init__(self, grace: float, poll: float):
        self.grace, self.poll = grace, poll
        self.names: dict[int, str] = {}  # pid -> name, in start order
        self.exited: dict[int, int] = {}  # pid -> wait status as os.waitstatus_to_exitcode gives it
        self.signal: int | None = None

    def start(self, name: str, argv: list[str]) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.posix_spawnp(argv[0], argv, os.environ, setsid=True,
                                  setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGINT))
        except OSError as exc:
            raise LaunchError(f"cannot start {name} ({argv[0]}): {exc.strerror or exc}") from None
        self.names[pid] = name
        log.info("started %s (pid %d): %s", name, pid, " ".join(argv))
        return pid

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.names and pid not in self.exited:
                self.exited[pid] = os.waitstatus_to_exitcode(status)

    def running(self) -> list[int]:
        return [pid for pid in self.names if pid not in self.exited]

    def first_exited(self) -> int | None:
        return next((pid for pid in self.names if pid in self.exited), None)

    def _wait(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while self.running() and time.monotonic() < deadline:
            time.sleep(min(self.poll, 0.05))
            self.reap()

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """``signum`` to each running child (the last started first), SIGKILL to the process
        group of any still running after the grace period, then to what is left of every group."""
        for pid in reversed(self.running()):
            log.info("stopping %s (pid %d) with %s", self.names[pid], pid, signal.Signals(signum).name)
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass
        self._wait(self.grace)
        for pid in self.running():
            log.warning("%s (pid %d) still running after %gs: killing it", self.names[pid], pid, self.grace)
        for pid in self.names:  # leftovers of exited children too (e.g. vLLM's workers)
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self._wait(self.grace)


def supervise(args: argparse.Namespace, server: list[str], then: list[str], url: str) -> int:
    sup = Supervisor(args.grace_period, args.poll_interval)

    def on_signal(signum, _frame):
        if sup.signal is None:
            sup.signal = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sup.start("LMCache server", server)
    deadline = time.monotonic() + args.health_timeout
    main_started = False
    while True:
        sup.reap()
        if sup.signal is not None:
            log.info("received %s: stopping both", signal.Signals(sup.signal).name)
            sup.stop(sup.signal)
            return 128 + sup.signal
        pid = sup.first_exited()
        if pid is not None:
            code = sup.exited[pid]
            log.error("%s (pid %d) exited with %s: stopping the container so that Kubernetes restarts it",
                      sup.names[pid], pid, _describe(code))
            sup.stop()
            return exit_status(code) or EXIT_FAILED
        if not main_started:
            if healthy(url, min(2.0, args.health_timeout)):
                log.info("LMCache server is healthy (%s)", url)
                try:
                    sup.start(then[0], then)
                except LaunchError as exc:
                    log.error("%s: stopping the LMCache server", exc)
                    sup.stop()
                    return EXIT_INVALID
                main_started = True
                continue
            if time.monotonic() >= deadline:
                log.error("LMCache server not healthy at %s after %gs: stopping it", url, args.health_timeout)
                sup.stop()
                return EXIT_FAILED
        time.sleep(args.poll_interval)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(asctime)s lmcache_launcher] %(message)s", stream=sys.stderr)
    try:
        args, server, then = parse(list(sys.argv[1:] if argv is None else argv))
        if args.probe:
            return probe(args)
        _check_options(args)  # every option in range before anything is read
        url = None
        if args.lmcache_min or args.lmcache_below or then is not None:
            found = installed_lmcache()
            version = check_lmcache(args, found)
            if then is not None:
                url = health_url(args, version, found)
            log.info("LMCache %s installed (kvgen supports %s)", found, supported_range(args) or "any version")
        check_kernels(args)
        hundredths, why = l1_size(args)
        if not args.dry_run and then is None:
            executable = resolve(server[0])
    except LaunchError as exc:
        if args_probe(argv):
            print(f"LMCache health probe failed: {exc}", file=sys.stderr)
            return EXIT_UNHEALTHY
        log.error("LMCache MP server not started: %s", exc)
        return EXIT_INVALID
    utilization = "none" if args.utilization is None else f"{args.utilization:g}"
    log.info(
        "Offload KV cache to LMCache MP server: %d.00 GB initial, %s GB final (utilization=%s, tp=%d)",
        args.initial_gb, gib_text(hundredths), utilization, args.tensor_parallel_size,
    )
    log.info("L1 bounded by: %s", why)
    command = [*server, "--l1-size-gb", gib_text(hundredths)]
    if args.dry_run:
        print(json.dumps(command))
        return 0
    if then is not None:
        assert url is not None
        try:
            return supervise(args, command, then, url)
        except LaunchError as exc:
            log.error("LMCache MP server not started: %s", exc)
            return EXIT_INVALID
    log.info("starting the LMCache server: %s (the command %s, looked up on PATH)", executable, command[0])
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(executable, command)
    except OSError as exc:
        log.error("LMCache MP server not started: cannot start %s (%s): %s", command[0], executable, exc.strerror or exc)
        return EXIT_INVALID
    return 0  # not reached


def args_probe(argv: list[str] | None) -> bool:
    """--probe among the launcher's own options (a probe failing on bad input exits 1, not 2)."""
    own = list(sys.argv[1:] if argv is None else argv)
    return "--probe" in (own[: own.index("--")] if "--" in own else own)


if __name__ == "__main__":
    sys.exit(main())
