#!/usr/bin/env python3
"""kvgen's LMCache MP server launcher (the lmcache-mp-server sidecar, or the vLLM container).

Sizes the LMCache L1 (CPU memory) pool when the pod starts, then starts the LMCache server.
Standard library only, so any image with Python and LMCache runs it unchanged.

    L1 = available host RAM x utilization / tensor-parallel size         (KAITO's formula)
       capped by the container's cgroup memory limit minus --reserve-bytes
       capped by --max-bytes (kvCacheOffloading.cpu)

Without --utilization the L1 is --max-bytes, still capped by the cgroup limit. The server
starts with a 1 GiB pinned pool and grows it lazily to L1 (--l1-use-lazy).

Any invalid input (an option out of range, an unreadable or non-ASCII /proc/meminfo or cgroup
file, an L1 below the initial size, a server binary that cannot be started) is logged on one
line and the launcher exits with status 2: the sidecar then restarts and the pod never becomes
ready, rather than serving with a cache it cannot hold. It never prints a traceback.

The L1 size is passed with two decimals, rounded down, so it never exceeds the cap.

Sidecar (gpuAccess visible-devices, dra): the launcher replaces itself with the server.

    lmcache_launcher.py [options] -- lmcache server --host ... (no --l1-size-gb)

In-container (gpuAccess in-container): the launcher stays, as the container's main process,
and supervises two children: it starts the server, waits until --health-url answers 200 (at
most --health-timeout seconds), then starts the command after --then (vLLM).

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
import json
import logging
import os
import signal
import sys
import time
import urllib.request

GIB = 1024**3
EXIT_INVALID = 2
EXIT_FAILED = 1  # the server never became healthy, or a child exited with status 0
THEN = "--then"  # separates the server command from the command run once it is healthy
log = logging.getLogger("kvgen.lmcache_launcher")


class LaunchError(Exception):
    pass


def _read(path: str) -> str:
    """The file as text; LaunchError when it is not ASCII (OSError is left to the caller)."""
    with open(path, "rb") as fh:
        raw = fh.read(1 << 20)
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
            try:
                return int(parts[1]) * 1024  # reported in kB (KiB)
            except (IndexError, ValueError):
                break
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
        try:
            value = int(raw)
        except ValueError:
            raise LaunchError(f"{path} holds {raw!r}, not a byte count") from None
        if value >= _V1_UNLIMITED:
            return None, f"cgroup {version}: no limit"
        return value, f"cgroup {version}: limit {value / GIB:.2f} GB"
    return None, "no cgroup memory controller found"


def _check_options(args: argparse.Namespace) -> None:
    if args.utilization is not None and not 0 <= args.utilization <= 1:
        raise LaunchError(f"utilization must be within [0, 1], got {args.utilization}")
    for option, value, least in (
        ("--tensor-parallel-size", args.tensor_parallel_size, 1),
        ("--initial-gb", args.initial_gb, 1),
        ("--reserve-bytes", args.reserve_bytes, 0),
        ("--max-bytes", args.max_bytes, 1),
    ):
        if value is not None and value < least:
            raise LaunchError(f"{option} must be at least {least}, got {value}")
    for option, value in (
        ("--health-timeout", args.health_timeout),
        ("--grace-period", args.grace_period),
        ("--poll-interval", args.poll_interval),
    ):
        if not value > 0:
            raise LaunchError(f"{option} must be greater than 0, got {value}")


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
        candidates.append(
            (int(avail * args.utilization / args.tensor_parallel_size), f"available {avail / GIB:.2f} GB x {args.utilization} / {args.tensor_parallel_size}")
        )
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


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str], list[str] | None]:
    """(options, the server command, the command after --then or None)."""
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
    p = _Parser(prog="lmcache_launcher.py", description=__doc__.splitlines()[0])
    p.add_argument("--utilization", type=float, help="share of available host RAM (KAITO kv_cache_cpu_memory_utilization)")
    p.add_argument("--tensor-parallel-size", type=int, default=1)
    p.add_argument("--max-bytes", type=int, help="upper bound for L1 in bytes")
    p.add_argument("--reserve-bytes", type=int, default=0, help="container memory kept for the server process itself")
    p.add_argument("--initial-gb", type=int, default=1, help="pinned pool allocated at start (--l1-init-size-gb)")
    p.add_argument("--proc-root", default="/", help="root for /proc and /sys (tests)")
    p.add_argument("--dry-run", action="store_true", help="print the server argv as JSON instead of starting it")
    p.add_argument("--health-url", default="http://127.0.0.1:8080/healthcheck",
                   help=f"with {THEN}: the server is ready when this answers 200 (LMCache's /healthcheck)")
    p.add_argument("--health-timeout", type=float, default=300.0, help=f"with {THEN}: seconds to wait for the server")
    p.add_argument("--grace-period", type=float, default=25.0,
                   help=f"with {THEN}: seconds the children get to stop before they are killed")
    p.add_argument("--poll-interval", type=float, default=1.0, help=f"with {THEN}: seconds between checks")
    args = p.parse_args(own)
    if not server:
        raise LaunchError("no LMCache server command after '--'")
    if "--l1-size-gb" in server:
        raise LaunchError("the server command must not carry --l1-size-gb; the launcher computes it")
    return args, server, then


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


def healthy(url: str, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (a loopback URL kvgen sets)
            return response.status == 200
    except Exception:  # refused, 503 (an HTTPError), a timeout, a malformed reply: not yet
        return False


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


def supervise(args: argparse.Namespace, server: list[str], then: list[str]) -> int:
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
            if healthy(args.health_url, min(2.0, args.health_timeout)):
                log.info("LMCache server is healthy (%s)", args.health_url)
                try:
                    sup.start(then[0], then)
                except LaunchError as exc:
                    log.error("%s: stopping the LMCache server", exc)
                    sup.stop()
                    return EXIT_INVALID
                main_started = True
                continue
            if time.monotonic() >= deadline:
                log.error("LMCache server not healthy at %s after %gs: stopping it", args.health_url, args.health_timeout)
                sup.stop()
                return EXIT_FAILED
        time.sleep(args.poll_interval)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(asctime)s lmcache_launcher] %(message)s", stream=sys.stderr)
    try:
        args, server, then = parse(list(sys.argv[1:] if argv is None else argv))
        hundredths, why = l1_size(args)
    except LaunchError as exc:
        log.error("LMCache MP server not started: %s", exc)
        return EXIT_INVALID
    utilization = "none" if args.utilization is None else f"{args.utilization:g}"
    log.info(
        "Offload KV cache to LMCache MP server: %.2f GB initial, %s GB final (utilization=%s, tp=%d)",
        float(args.initial_gb), gib_text(hundredths), utilization, args.tensor_parallel_size,
    )
    log.info("L1 bounded by: %s", why)
    command = [*server, "--l1-size-gb", gib_text(hundredths)]
    if args.dry_run:
        print(json.dumps(command))
        return 0
    if then is not None:
        try:
            return supervise(args, command, then)
        except LaunchError as exc:
            log.error("LMCache MP server not started: %s", exc)
            return EXIT_INVALID
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(command[0], command)
    except OSError as exc:
        log.error("LMCache MP server not started: cannot start %s: %s", command[0], exc.strerror or exc)
        return EXIT_INVALID
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
