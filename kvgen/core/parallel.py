"""Compiling a large batch on every core: the units split among worker processes.

Once the inputs are translated (kvgen.app.compiler does that first, across all of them: a KAITO
resource may name another file's ConfigMap), each unit compiles on its own. A batch of many units
(a GitOps repository's specs) is spread over worker processes forked from this one: they inherit
its imported modules, its caches and the units, compile a contiguous share each, and send back each
unit's result (its Compiled with the YAML already written, or its SpecError). Results come back in
unit order, so the output is the same bytes as a serial run's, and every problem is still reported.

Serial when: the batch is small (fewer than MIN_UNITS_PER_JOB units per worker), one job is asked
for (--jobs 1, KVGEN_JOBS=1), or the platform cannot fork (Windows; macOS forks unsafely). A worker
ignores Ctrl-C: the parent drops the shares not started, lets the running ones end (a fraction of a
second) and reports the interrupt as a serial run does. A worker that dies fails the batch.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

MIN_UNITS_PER_JOB = 50  # below this, a worker's start and the results' transfer cost more than they save
MAX_AUTO_JOBS = 8  # the default's cap: a container may see a host's cores but have a CPU quota of few

T = TypeVar("T")
R = TypeVar("R")

_work: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # set before the fork, read by the workers


CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" in µs, or "max <period>"


def _cgroup_cpus() -> int | None:
    """The CPU quota of this container (a pod's CPU limit) in whole CPUs, rounded up; None if none."""
    try:
        with open(CGROUP_CPU_MAX) as fh:
            quota, period = fh.read().split()[:2]
        return max(1, -(-int(quota) // int(period)))
    except (OSError, ValueError):  # no cgroup v2, or "max": no quota
        return None


def available_cpus() -> int:
    """The CPUs this process may use: its affinity mask (or the machine's CPUs), capped by the
    container's CPU quota, which a pod in a CI cluster has while it sees all of the node's CPUs."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpus()
    return min(cpus, quota) if quota else cpus


def _can_fork() -> bool:
    import multiprocessing

    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def jobs_for(units: int, requested: int | None = None) -> int:
    """How many worker processes compile ``units`` units: ``requested`` (--jobs / KVGEN_JOBS), else
    the available CPUs up to MAX_AUTO_JOBS; never more than one per MIN_UNITS_PER_JOB units; 1 (serial,
    in this process) when the platform cannot fork."""
    most = units // MIN_UNITS_PER_JOB
    if most < 2 or requested == 1:  # a small batch (every single render) asks nothing of the system
        return 1
    wanted = requested if requested is not None else min(available_cpus(), MAX_AUTO_JOBS)
    jobs = min(wanted, most)
    return jobs if jobs > 1 and _can_fork() else 1


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def _run_share(bounds: tuple[int, int]) -> list[Any]:
    assert _work is not None  # set by imap_ordered before the workers were forked
    function, items = _work
    return [function(items[i]) for i in range(*bounds)]


def imap_ordered(function: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[R]:
    """``function`` of every item, in order, computed by ``jobs`` forked workers (``jobs`` > 1).

    The workers are forked here, before this returns (so before the caller starts a thread, such as
    a progress bar's); they inherit ``function`` and ``items``, are sent only index ranges, and
    pickle each result back. Shares are small, so results arrive steadily, a slow spec does not
    leave a worker idle for long, and Ctrl-C waits for a fraction of a second at most. A worker
    that dies (the OOM killer) fails the batch (BrokenProcessPool: an internal error), not hangs."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _work
    share = max(1, min(MIN_UNITS_PER_JOB // 2, len(items) // (jobs * 8)))
    bounds = [(start, min(start + share, len(items))) for start in range(0, len(items), share)]
    for stream in (sys.stdout, sys.stderr):  # a worker must not write this process's buffered output again
        stream.flush()
    _work = (function, items)
    try:
        # with fork, the first submit forks every worker, before the executor starts its thread
        executor = ProcessPoolExecutor(jobs, multiprocessing.get_context("fork"), _ignore_interrupts)
        futures = [executor.submit(_run_share, b) for b in bounds]
    except OSError:  # no POSIX semaphores (a sandbox without /dev/shm), no fork allowed: compile here
        return map(function, items)
    finally:
        _work = None  # the workers have their copy
    return _results(executor, futures)


def _results(executor: Any, futures: list[Any]) -> Iterator[R]:
    try:
        for future in futures:
            yield from future.result()
    finally:
        # done, or stopped (Ctrl-C, a failure): the shares not started are dropped, the running ones end
        executor.shutdown(wait=True, cancel_futures=True)
