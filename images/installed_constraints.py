#!/usr/bin/env python3
"""Print the constraints that install LMCache into the vLLM image from the lock
(images/Dockerfile). Standard library only: it runs in the image's Python.

    python3 installed_constraints.py [--lock runtime.txt] lmcache > constraints.txt

- `name==version` of every distribution installed in this Python, except those named on the
  command line: installing LMCache fails rather than change a package the vLLM image pinned;
- with --lock, `name==version` of every pin of the lock (images/lock/runtime.txt) that is not
  installed: whatever LMCache pulls in beyond the image is the lock's version. Where the image
  and the lock disagree, the image's version is the constraint, and stderr says so: the build
  log shows how the image differs from images/lock/base.txt.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def canonical(name: str) -> str:
    """The PEP 503 normalized form: Foo_Bar.baz and foo-bar-baz are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed(exclude: list[str]) -> dict[str, tuple[str, str]]:
    """canonical name -> (name, version) of every installed distribution but the excluded."""
    skip = {canonical(n) for n in exclude}
    pins: dict[str, tuple[str, str]] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and canonical(name) not in skip:
            pins.setdefault(canonical(name), (name, dist.version))  # the first on sys.path wins, as for imports
    return pins


def lock_pins(text: str) -> dict[str, tuple[str, str]]:
    """canonical name -> (name, version) of a `uv pip compile` output's pins."""
    return {canonical(m[1]): (m[1], m[2]) for m in map(_PIN.match, text.splitlines()) if m}


def constraints(exclude: list[str], lock: str | None = None) -> list[str]:
    pins = installed(exclude)
    if lock is not None:
        for key, (name, version) in sorted(lock_pins(lock).items()):
            if key not in pins:
                pins[key] = (name, version)
            elif pins[key][1].split("+")[0] != version:
                print(
                    f"installed_constraints: the image has {name} {pins[key][1]}, the lock {version}: the image's is kept",
                    file=sys.stderr,
                )
    return [f"{pins[k][0]}=={pins[k][1]}" for k in sorted(pins)]


def main(argv: list[str]) -> int:
    lock = None
    if argv[:1] == ["--lock"]:
        with open(argv[1]) as f:
            lock = f.read()
        argv = argv[2:]
    print("\n".join(constraints(argv, lock)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
