"""Capability rules: decide whether KV-cache offloading can run, and record why not.

The table (codes, order, reasons, sources) is data in ``charts/kvgen/files/rules.yaml``,
shared with the Helm chart. This module holds only each rule's predicate. A rule turns
offloading off; it never fails a render.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvgen.data import catalog
from kvgen.data.catalog import InstanceInfo, ModelInfo
from kvgen.spec.models import Spec


@dataclass(frozen=True)
class Facts:
    spec: Spec
    model: ModelInfo
    instance: InstanceInfo


def _disabled_by_config(c: Facts) -> bool:
    o = c.spec.kv_cache_offloading
    return not o.enabled or o.cpu_memory_utilization == 0


def _hybrid(c: Facts) -> bool:
    o = c.spec.kv_cache_offloading
    opted_in = o.allow_hybrid and o.backend == "native"
    return c.model.hybrid and not opted_in


PREDICATES: dict[str, Callable[[Facts], bool]] = {
    "disabled-by-config": _disabled_by_config,
    "cpu-instance": lambda c: c.instance.gpus == 0,
    "mig-partition": lambda c: c.instance.mig is not None,
    "data-parallel": lambda c: c.spec.parallelism.data > 1,
    "multi-node-pipeline-parallel": lambda c: c.spec.parallelism.pipeline > 1 and c.spec.parallelism.nodes > 1,
    # the native backend keeps its tiers beside NIXL (a MultiConnector); LMCache's server does not
    "prefill-decode-disaggregation": lambda c: (
        c.spec.disaggregation.role != "none" and c.spec.kv_cache_offloading.backend == "lmcache"
    ),
    "hybrid-architecture": _hybrid,
}


@dataclass(frozen=True)
class RuleResult:
    code: str
    matched: bool
    reason: str


@dataclass(frozen=True)
class Decision:
    enabled: bool
    reason_code: str | None
    reason: str | None
    checked: tuple[RuleResult, ...]


def decide(ctx: Facts) -> Decision:
    """Evaluate every rule in table order; the first match gives the reason."""
    table = catalog.rules()
    missing = {r["code"] for r in table} ^ set(PREDICATES)
    if missing:
        raise AssertionError(f"rules.yaml and kvgen/plan/rules.py disagree on: {sorted(missing)}")
    checked = tuple(RuleResult(r["code"], PREDICATES[r["code"]](ctx), r["reason"]) for r in table)
    first = next((r for r in checked if r.matched), None)
    if first is None:
        return Decision(True, None, None, checked)
    return Decision(False, first.code, first.reason, checked)
