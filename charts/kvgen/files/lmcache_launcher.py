#!/usr/bin/env python3
"""kvgen's LMCache MP server launcher (runs in the lmcache-mp-server sidecar).

Sizes the LMCache L1 (CPU memory) pool when the pod starts, then replaces itself with the
LMCache server. Standard library only, so the stock LMCache image runs it unchanged.

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

Usage: lmcache_launcher.py [options] -- /opt/venv/bin/lmcache server --host ... (no --l1-size-gb)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

GIB = 1024**3
EXIT_INVALID = 2
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


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise LaunchError("missing '--' before the LMCache server command")
    split = argv.index("--")
    own, server = argv[:split], argv[split + 1 :]
    p = _Parser(prog="lmcache_launcher.py", description=__doc__.splitlines()[0])
    p.add_argument("--utilization", type=float, help="share of available host RAM (KAITO kv_cache_cpu_memory_utilization)")
    p.add_argument("--tensor-parallel-size", type=int, default=1)
    p.add_argument("--max-bytes", type=int, help="upper bound for L1 in bytes")
    p.add_argument("--reserve-bytes", type=int, default=0, help="container memory kept for the server process itself")
    p.add_argument("--initial-gb", type=int, default=1, help="pinned pool allocated at start (--l1-init-size-gb)")
    p.add_argument("--proc-root", default="/", help="root for /proc and /sys (tests)")
    p.add_argument("--dry-run", action="store_true", help="print the server argv as JSON instead of exec'ing it")
    args = p.parse_args(own)
    if not server:
        raise LaunchError("no LMCache server command after '--'")
    if "--l1-size-gb" in server:
        raise LaunchError("the server command must not carry --l1-size-gb; the launcher computes it")
    return args, server


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(asctime)s lmcache_launcher] %(message)s", stream=sys.stderr)
    try:
        args, server = parse(list(sys.argv[1:] if argv is None else argv))
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
