"""The suite's tiers, as a pytest plugin (conftest.py loads it): which worker runs what, and where
the time went.

- Grouping for pytest-xdist (``--dist loadgroup``, what scripts/test passes): tests that share a
  module- or session-scoped fixture of ours (a batch of CLI runs, a server, a wheel, the contract
  venv's parser process) run on one worker, so the fixture is built once; every `emulator` test
  runs on one worker (the emulator's pods, its parser daemon and its process checks share the
  machine). Other tests are spread one by one.
- A summary at the end of every run: seconds per tier and per module (a printed figure, never an
  assertion: these machines are noisy), and the drift of the `heavy` mark. `heavy` is written on
  the test itself (``@pytest.mark.heavy`` or a module's ``pytestmark``) where a measurement put it:
  a test function whose cases take HEAVY_TOTAL seconds together, or one case's call HEAVY_CASE
  seconds (its call: a module fixture's setup, shared by the tests that use it, counts in the total
  of the function that happens to run first, not as one slow case).
  The summary names the unmarked functions that now measure heavy and the marked ones that measure
  light (under LIGHT_TOTAL), so the mark is re-decided from a run, not from memory.

KVGEN_TEST_TIMES=FILE also writes every test's seconds (setup, call and teardown) as JSON.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from typing import Any

import pytest

HEAVY_TOTAL = 1.5  # seconds, all cases of one test function together
HEAVY_CASE = 0.3  # seconds, the slowest case of one test function
LIGHT_TOTAL = 0.1  # a marked function under this is marked for nothing
TIERS = ("emulator", "contract", "scan", "slow", "fuzz", "heavy")  # the first of these a test has is its tier


def tier_of(item: pytest.Item) -> str:
    for name in TIERS:
        if item.get_closest_marker(name) is not None:
            return name
    return "quick"


# ----------------------------------------------------------------------------- xdist groups


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """The module- or session-scoped fixtures of the project's own (not pytest's or a plugin's)
    that ``item`` uses, by where they are defined."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    out = []
    for name in info.names_closure:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope in ("module", "package", "session") and fixturedef.baseid:
                out.append(f"{fixturedef.baseid}::{name}")
    return out


def assign_groups(items: list[pytest.Item]) -> None:
    """An ``xdist_group`` for each set of tests joined by a shared fixture (union-find), and one for
    every emulator test."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    keys: dict[int, list[str]] = {}
    for i, item in enumerate(items):
        ks = _shared_fixtures(item)
        if item.get_closest_marker("emulator") is not None:
            ks.append("emulator")
        if ks:
            keys[i] = ks
            for k in ks[1:]:
                parent[find(k)] = find(ks[0])
    emulator = find("emulator") if "emulator" in parent else None
    for i, ks in keys.items():
        root = find(ks[0])
        group = "emulator" if root == emulator else re.sub(r"[^A-Za-z0-9_.-]+", "_", root)
        items[i].add_marker(pytest.mark.xdist_group(group))


# ----------------------------------------------------------------------------- timing


class Times:
    """Each test's seconds (setup + call + teardown), its tier and its function, gathered from the
    reports (under xdist the controller sees every worker's)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.call: dict[str, float] = defaultdict(float)
        self.tier: dict[str, str] = {}
        self.marked_heavy: dict[str, bool] = {}

    def add(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] += report.duration
        if report.when == "call":
            self.call[report.nodeid] += report.duration
        props = dict(report.user_properties)
        if "kvgen_tier" in props:
            self.tier[report.nodeid] = str(props["kvgen_tier"])
            self.marked_heavy[report.nodeid] = bool(props["kvgen_heavy"])

    @staticmethod
    def function(nodeid: str) -> str:
        return nodeid.split("[", 1)[0]

    @staticmethod
    def module(nodeid: str) -> str:
        return nodeid.split("::", 1)[0].rsplit("/", 1)[-1]

    def summary(self) -> list[str]:
        lines = []
        tiers: dict[str, list[float]] = defaultdict(list)
        modules: dict[str, float] = defaultdict(float)
        functions: dict[str, list[float]] = defaultdict(list)
        for nodeid, s in self.seconds.items():
            tiers[self.tier.get(nodeid, "?")].append(s)
            modules[self.module(nodeid)] += s
            functions[self.function(nodeid)].append(s)
        total = sum(self.seconds.values())
        lines.append(f"test seconds (setup + call + teardown, all workers): {total:.1f} in {len(self.seconds)} tests")
        for name in ("quick", *TIERS, "?"):
            if name in tiers:
                lines.append(f"  tier {name:<9} {sum(tiers[name]):8.1f} s  {len(tiers[name]):5d} tests")
        lines.append("modules, slowest first (seconds, tests):")
        counts: dict[str, int] = defaultdict(int)
        for nodeid in self.seconds:
            counts[self.module(nodeid)] += 1
        for name, s in sorted(modules.items(), key=lambda kv: -kv[1])[:25]:
            lines.append(f"  {s:8.1f} {counts[name]:5d}  {name}")
        heavy_now, light_marked = [], []
        for func, cases in sorted(functions.items()):
            ids = [n for n in self.seconds if self.function(n) == func]
            tiers_here = {self.tier.get(n) for n in ids}
            if tiers_here - {"quick", "heavy"}:
                continue  # a tier of its own (contract, emulator, ...): left out of --quick anyway
            marked = any(self.marked_heavy.get(n) for n in ids)
            measured = sum(cases) >= HEAVY_TOTAL or max(self.call.get(n, 0.0) for n in ids) >= HEAVY_CASE
            if measured and not marked:
                heavy_now.append(f"  {sum(cases):7.2f} s {len(cases):4d} tests  {func}")
            elif marked and sum(cases) < LIGHT_TOTAL:
                light_marked.append(f"  {sum(cases):7.2f} s {len(cases):4d} tests  {func}")
        if heavy_now:
            lines.append(
                f"unmarked test functions that measure heavy (>= {HEAVY_TOTAL} s in all or {HEAVY_CASE} s a call):"
                " mark them @pytest.mark.heavy"
            )
            lines += heavy_now
        if light_marked:
            lines.append(f"heavy-marked test functions under {LIGHT_TOTAL} s: drop the mark")
            lines += light_marked
        return lines


_TIMES = Times()


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    assign_groups(items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # what the controller needs to sort the times: the tier and the mark as the worker saw them
    item.user_properties.append(("kvgen_tier", tier_of(item)))
    item.user_properties.append(("kvgen_heavy", item.get_closest_marker("heavy") is not None))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller counts it
    _TIMES.add(report)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") or not _TIMES.seconds:
        return
    terminalreporter.section("kvgen: where the time went")
    for line in _TIMES.summary():
        terminalreporter.write_line(line)
    path = os.environ.get("KVGEN_TEST_TIMES")
    if path:
        data = {n: {"seconds": round(s, 4), "tier": _TIMES.tier.get(n)} for n, s in sorted(_TIMES.seconds.items())}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
