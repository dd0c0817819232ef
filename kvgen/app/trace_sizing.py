"""``kvgen explain --trace``: a trace replayed through the tiers a spec's plan holds, and the change to the
spec that reaches 90% of the trace's maximum hit ratio (docs/sizing.md, "Hit ratios from a trace").

The replay itself is kvgen.traffic's; this module hands it the plan's tiers (per pod, as explain shows
them) and its routing, and turns the capacity the target needs into a spec change. Every change it
recommends is planned and replayed again before it is offered: the expected figures are those of the
changed spec, and a change whose pod would not fit its node is not offered (its reason is).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvgen.core.errors import Problem, SpecError
from kvgen.core.quantity import GiB
from kvgen.data import connector
from kvgen.plan import build as planning
from kvgen.plan.types import Plan
from kvgen.spec.models import Spec
from kvgen.traffic import replay
from kvgen.traffic.routing import Scorers

TARGET = 0.9  # the share of the maximum hit ratio a recommendation reaches
ROUNDS = 4  # a change that falls short (the picker routes anew at a new capacity) is raised this often
MARGIN = 1.1  # by this factor each time


def _watermarks() -> tuple[float, float]:
    """The share of its size an LMCache L1, and an L2 it bounds, holds before it evicts."""
    lm = connector.wiring()["lmcache"]
    return lm["l1Eviction"]["triggerWatermark"], lm["l2Eviction"]["triggerWatermark"]


def tiers_of(kv: dict[str, Any], replicas: int, backend: str | None) -> tuple[list[replay.Tier], list[str]]:
    """The replayed tiers of explain's kvCache view, and a note for each tier left out (capacity unknown).
    With the lmcache backend, the L1 and every L2 of known size evict from a watermark: they hold that
    share of their size (a disk tier of unknown size, LMCache's fs adapter, never evicts)."""
    l1, l2 = _watermarks()
    out, notes = [], []
    for t in kv["tiers"]:
        shared = bool(t.get("shared"))
        tokens = t["tokens"]
        if tokens is None and not shared:
            notes.append(f"{t['tier']}: capacity unknown, left out of the replay")
            continue
        if shared and tokens is not None:
            tokens *= replicas  # each replica's LMCache fills its own share of the server
        held = None
        if backend == "lmcache" and tokens is not None and t["tier"] != "gpu":
            held = int(tokens * (l1 if t["tier"] == "cpu" else l2))
        out.append(replay.Tier(t["tier"], tokens, shared, held))
    return out, notes


def _scorers(plan: Plan) -> Scorers:
    picker = plan.spec.routing.picker
    if picker is None:
        return Scorers()
    return Scorers.of(picker.scorers.model_dump(by_alias=True))


def analyse(plan: Plan, kv: dict[str, Any], rp: replay.Replayer) -> dict[str, Any]:
    spec = plan.spec
    tiers, notes = tiers_of(kv, spec.replicas, plan.backend)
    if not tiers:
        raise SpecError("", [Problem(("instance",), "--trace needs the GPU tier's size: set instance.gpuMemory")])
    out = rp.analyse(tiers, spec.replicas, spec.routing.mode, _scorers(plan))
    out["source"] = rp.trace.source
    out["notes"] = notes
    return out


def _replanned(plan: Plan, change: Change) -> tuple[Plan | None, str]:
    data = plan.spec.model_dump(by_alias=True, exclude_none=True, mode="json")
    change.apply(data)
    try:
        new = planning.build(Spec.model_validate(data), plan.k8s_version)
    except (SpecError, ValueError) as exc:
        return None, str(exc).splitlines()[-1].strip()
    if new.problems:
        return None, new.problems[0].message
    return new, ""


def _gib(n: float) -> str:
    return f"{max(1, math.ceil(n / GiB))}Gi"


@dataclass(frozen=True)
class Change:
    """One spec change: the knob (``cpuShare``, ``cpuSize`` or ``disk``), its path and its value."""

    knob: str
    path: str
    value: float | str

    def apply(self, data: dict[str, Any]) -> None:
        o = data["kvCacheOffloading"]
        if self.knob == "cpuShare":
            o["cpuMemoryUtilization"] = self.value
        elif self.knob == "cpuSize":
            o["cpu"] = self.value
        else:
            tiers = o.setdefault("secondary", [])
            if not tiers:
                tiers.append({"fileSystem": {"emptyDir": {}}})
            tiers[0]["fileSystem"]["emptyDir"]["size"] = self.value


def _candidates(plan: Plan, kv: dict[str, Any], tokens: int) -> list[Change]:
    """Spec changes that let one local tier hold ``tokens`` tokens per pod: the CPU tier, then a disk tier
    (sized over the share of its size it holds: tiers_of)."""
    per_token = kv["podBytesPerToken"]
    l1, l2 = _watermarks() if plan.backend == "lmcache" else (1.0, 1.0)
    need = tokens * per_token / l1
    o = plan.spec.kv_cache_offloading
    s = plan.sizing
    out = []
    if plan.backend == "lmcache" and o.cpu is None and s.utilization and s.cpu_tier:
        share = min(1.0, math.ceil(s.utilization * need / s.cpu_tier * 100) / 100)
        out.append(Change("cpuShare", "kvCacheOffloading.cpuMemoryUtilization", share))
    elif plan.backend is not None:
        out.append(Change("cpuSize", "kvCacheOffloading.cpu", _gib(need)))
    first = o.secondary[0].file_system if o.secondary else None
    if plan.backend is not None and o.spec_name != "CPUOffloadingSpec" and (first is None or first.empty_dir):
        size = _gib(tokens * per_token / l2)
        out.append(Change("disk", "kvCacheOffloading.secondary[0].fileSystem.emptyDir.size", size))
    return out


KvView = Callable[[Plan], dict[str, Any]]


def report(plan: Plan, kv: dict[str, Any], rp: replay.Replayer, kv_view: KvView) -> dict[str, Any]:
    """The ``trace`` object of explain's report: the replay of the plan's tiers and the recommendation
    (``kv_view``: how explain shows a plan's tiers, for the changed specs)."""
    found = analyse(plan, kv, rp)
    found["recommendation"] = recommend(plan, kv, rp, found, kv_view)
    return found


def recommend(
    plan: Plan, kv: dict[str, Any], rp: replay.Replayer, found: dict[str, Any], kv_view: KvView
) -> dict[str, Any]:
    """What reaches TARGET of the maximum: nothing (already), a spec change (checked by planning and
    replaying the changed spec), or why no tier of this pod can."""
    best = found["maxHitRatio"]
    goal = TARGET * best
    base = {"target": round(goal, 6), "targetShareOfMax": TARGET}
    if best == 0:
        return {**base, "action": "none", "why": "no prompt of the trace shares a prefix with an earlier one"}
    if found["hitRatio"] >= goal:
        return {
            **base,
            "action": "none",
            "why": f"the planned tiers reach {found['hitRatio'] / best:.0%} of the maximum",
        }
    if plan.backend is None:
        return {**base, "action": "none", "why": "offloading is off for this spec: only the GPU tier holds prefixes"}
    need = found["perPod"]["capacityFor"][str(TARGET)]
    reasons = []
    if need is None:
        better = [r for r in found["routing"] if r["hitRatio"] >= goal]
        why = f"routing.mode {plan.spec.routing.mode} spreads the prefixes: no capacity per pod reaches the target"
        out = {**base, "action": "routing", "why": why, "modes": [r["mode"] for r in better]}
        one = found["capacityFor"][str(TARGET)]
        if plan.backend == "lmcache" and one is not None:
            # a shared tier is one LRU over every replica's requests: one cache's capacity for the target
            _l1, l2 = _watermarks()
            size = one * kv["podBytesPerToken"] / l2
            out["sharedTier"] = {
                "capacityTokens": one,
                "bytes": math.ceil(size),
                "path": "kvCacheOffloading.remote.capacity",
                "valuePerReplica": _gib(size / plan.spec.replicas),
            }
        return out
    for first in _candidates(plan, kv, need):
        change: Change | None = first
        tokens = need
        for _ in range(ROUNDS):
            if change is None:
                break
            new, why = _replanned(plan, change)
            if new is None:
                reasons.append(f"{change.path}: {why}")
                break
            again = analyse(new, kv_view(new), rp)
            if again["hitRatio"] >= goal:
                return {
                    **base,
                    "action": "change",
                    "capacityTokens": need,
                    "changes": [{"path": change.path, "value": change.value}],
                    "expected": {
                        "hitRatio": again["hitRatio"],
                        "shareOfMax": round(again["hitRatio"] / best, 4),
                        "tiers": [{"tier": t["tier"], "capacityTokens": t["capacityTokens"]} for t in again["tiers"]],
                    },
                    "notTaken": reasons,
                }
            tokens = int(tokens * MARGIN)  # the picker routed anew at the new size: a little more
            change = next((c for c in _candidates(plan, kv, tokens) if c.knob == first.knob), None)
        else:
            reasons.append(f"{first.path}: {ROUNDS} sizes fell short")
    return {**base, "action": "none", "capacityTokens": need, "why": "; ".join(reasons) or "no tier to grow"}
