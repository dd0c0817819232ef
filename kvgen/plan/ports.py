"""Ports the pod's own processes bind: ``service.port`` (vLLM's API) must be none of them.

A pod's containers share one network namespace, so vLLM cannot bind a port the LMCache server,
torch.distributed or NIXL already holds, and the pod would crash-loop. The ports and when each is
in force are data (``podPorts`` in ``charts/kvgen/files/runtime.yaml``), read by the chart's
``kvgen.checkPorts`` too.
"""

from __future__ import annotations

from typing import Any

from kvgen.core.errors import Problem, quoted
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
    problems = [
        Problem(
            ("service", "port"),
            f"port {port} is {row['what']}; vLLM could not bind it in the same pod",
            f"pick another port, e.g. {type(spec.service).model_fields['port'].default}",
        )
        for row in taken
    ]
    return problems + _check_extra_ports(spec, backend)


def _check_extra_ports(spec: Spec, backend: str | None) -> list[Problem]:
    """service.extraPorts: unique names and port/protocol pairs with the API's http (ValidateService:
    Duplicate value), and no target kvgen's own processes bind (their ports stay inside the pod)."""
    problems: list[Problem] = []
    names = {"http": "the API's port"}
    pairs = {(spec.service.port, "TCP"): "service.port, the API's"}
    internal = in_force(spec, backend)
    for i, p in enumerate(spec.service.extra_ports):
        here = f"service.extraPorts[{i}]"
        if p.name in names:
            problems.append(
                Problem(
                    ("service", "extraPorts", i, "name"),
                    f"{quoted(p.name)} is already the name of {names[p.name]} (ValidateService: Duplicate value)",
                    "use another name",
                )
            )
        names.setdefault(p.name, here)
        pair = (p.port, p.protocol)
        if pair in pairs:
            problems.append(
                Problem(
                    ("service", "extraPorts", i, "port"),
                    f"port {p.port}/{p.protocol} is already {pairs[pair]} (ValidateService: Duplicate value)",
                    "use another port",
                )
            )
        pairs.setdefault(pair, here)
        target = p.target_port if p.target_port is not None else p.port
        for row in internal:
            if target == row["port"]:
                problems.append(
                    Problem(
                        ("service", "extraPorts", i, "targetPort" if p.target_port is not None else "port"),
                        f"port {target} is {row['what']}; kvgen keeps it inside the pod",
                        "target vLLM's API (targetPort: http) or leave the port out",
                    )
                )
    return problems


__all__ = ["check", "in_force"]
