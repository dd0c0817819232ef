#!/usr/bin/env python3
"""Print `name==version` for every distribution installed in this Python, except those named
on the command line: a constraints file that keeps every package the vLLM image pinned where it
is while LMCache is added (images/Dockerfile). Standard library only.

    python3 installed_constraints.py lmcache > constraints.txt
"""

from __future__ import annotations

import re
import sys
from importlib import metadata


def canonical(name: str) -> str:
    """The PEP 503 normalized form: Foo_Bar.baz and foo-bar-baz are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def constraints(exclude: list[str]) -> list[str]:
    skip = {canonical(n) for n in exclude}
    pins: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and canonical(name) not in skip:
            pins.setdefault(canonical(name), f"{name}=={dist.version}")  # the first on sys.path wins, as for imports
    return [pins[k] for k in sorted(pins)]


if __name__ == "__main__":
    print("\n".join(constraints(sys.argv[1:])))
