"""Hypothesis budgets, one place for all property tests.

The default is what CI runs: a fixed number of draws per test, derandomized (the same draws every
run, so a red CI is reproducible and a green one is not luck). KVGEN_HYPOTHESIS=deep (a nightly or a
release) draws ten times as many, fresh each run:

    KVGEN_HYPOTHESIS=deep scripts/test -m "not contract" tests/test_chart_property.py
"""

from __future__ import annotations

import os

DEEP = os.environ.get("KVGEN_HYPOTHESIS", "") == "deep"
DERANDOMIZE = not DEEP


def examples(n: int) -> int:
    """The draws a test gets: ``n`` by default, ten times as many in the deep profile."""
    return n * 10 if DEEP else n
