"""Ports the pod's own processes bind: ``service.port`` (vLLM's API) must be none of them.

A pod's containers share one network namespace, so vLLM cannot bind a port the LMCache server,
torch.distributed or NIXL already holds, and the pod would crash-loop. The ports and when each is
in force are data (``podPorts`` in ``charts/kvgen/files/runtime.yaml``), read by the chart's
``kvgen.checkPorts`` too.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Problem
from kvgen.data import catalog
from kvgen.spec.models import Spec


def in_force(spec: Spec, backend: str | None) -> list[dict[str, Any]]:
    """The rows of ``podPorts`` whose process this pod runs (``backend``: the backend in force, or None)."""
    when = {
        "lmcache": backend == "lmcache",
        "multiNode": spec.parallelism.nodes > 1,
        "disaggregation": spec.disaggregation.role != "none",
    }
    return [row for row in catalog.runtime()["podPorts"] if when[row["when"]]]


def check(spec: Spec, backend: str | None) -> list[Problem]:
    port = spec.service.port
    taken = [row for row in in_force(spec, backend) if row["port"] == port]
    return [
        Problem(
            ("service", "port"),
            f"port {port} is {row['what']}; vLLM could not bind it in the same pod",
            f"pick another port, e.g. {type(spec.service).model_fields['port'].default}",
        )
        for row in taken
    ]


__all__ = ["check", "in_force"]
