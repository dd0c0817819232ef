"""The sections of a spec planning does without: where a refused value does not stop validation (issue 36).

kvgen.plan.validate leaves such a value out (its default) and plans the rest, so that every problem is reported
in one run; the chart's templates do the same from files/spec-checks.json (``$independent``).
"""

from __future__ import annotations

from kvgen.core.errors import Path

# The sections of a spec whose refused values planning can do without: validation goes on past the schema's
# problems there (issue 36: every problem in one run), planning the spec with them left at their defaults.
# A refused value anywhere else (the model, the instance, parallelism, the KV cache, resources, the vLLM
# flags, the catalog) would change what planning decides and sizes, so validation stops at the schema's
# problems. An unknown key is left out wherever it is: nothing reads it (the chart's templates go on
# past it too).
INDEPENDENT: frozenset[Path] = frozenset(
    {
        *(
            (key,)
            for key in (
                "name",
                "fullnameOverride",
                "nameOverride",
                "namespace",
                "replicas",
                "images",
                "scheduling",
                "pod",
                "deployment",
                "service",
                "routing",
                "probes",
                "disruptionBudget",
                "metrics",
                "autoscaling",
                "commonLabels",
                "commonAnnotations",
                "extraObjects",
                "strict",
            )
        ),
        ("vllm", "env"),
        ("vllm", "envFrom"),
        ("vllm", "volumeMounts"),
    }
)
