"""The runtime image's requirement check (images/lock/, written by scripts/lock-runtime-image).

Offline, from committed data only:

- ``base.txt``: the package set of the base image (vllm/vllm-openai at runtime.yaml's vLLM) as
  its published requirements resolve;
- ``runtime.txt``: the image's lock, the same requirements plus LMCache at runtime.yaml's version;
- ``requires.json``: the Requires-Dist of LMCache and of every package of the lock it pulls in,
  read from the wheel the lock installs (each entry names its file, URL and sha256).

It checks, with ``packaging``'s requirements, specifiers and markers evaluated for the image's
platform (Linux x86_64, CPython 3.12):

(a) every requirement of LMCache and of what it pulls in is satisfied by the version the base
    image has (the image keeps every base package) or, for a package the base lacks, the lock's;
(b) installing LMCache changes no package of the base: every base pin is in the lock, at the
    same version;
(c) the lock's vLLM and LMCache are runtime.yaml's, and requires.json describes the versions of
    the lock.

Every failure is one line naming both sides; all are reported at once.

    python -m tools.image_requirements [--lock-dir images/lock] [--runtime charts/kvgen/files/runtime.yaml]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
LOCK_DIR = ROOT / "images" / "lock"
RUNTIME_YAML = ROOT / "charts" / "kvgen" / "files" / "runtime.yaml"

# The image's interpreter and platform, as `uv pip compile --python-version 3.12
# --python-platform x86_64-manylinux_2_28` resolves for (vLLM's images run CPython 3.12 on glibc
# Linux). python_full_version: uv takes `3.12` as 3.12.0.
ENVIRONMENT: dict[str, str] = {
    "implementation_name": "cpython",
    "implementation_version": "3.12.0",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Linux",
    "platform_version": "",
    "python_full_version": "3.12.0",
    "python_version": "3.12",
    "sys_platform": "linux",
}

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)\s*(?:#.*)?$")


@dataclass(frozen=True)
class Pin:
    name: str  # as written in the file
    version: str
    line: int


def read_pins(path: Path) -> dict[str, Pin]:
    """`name==version` lines of a uv pip compile output (comments and `# via` lines skipped)."""
    pins: dict[str, Pin] = {}
    for number, text in enumerate(path.read_text().splitlines(), 1):
        match = _PIN.match(text)
        if match:
            pins[canonicalize_name(match[1])] = Pin(match[1], match[2], number)
    return pins


def runtime_versions(runtime_yaml: Path) -> dict[str, str]:
    """runtime.yaml's vLLM and LMCache versions."""
    data = YAML(typ="safe", pure=True).load(runtime_yaml.read_text())
    return {"vllm": str(data["vllm"]["version"]), "lmcache": str(data["lmcache"]["version"])}


def _satisfied(requirement: Requirement, version: str) -> bool:
    try:
        return requirement.specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def _wanted(requirement: Requirement, extras: Iterable[str]) -> bool:
    """Whether a Requires-Dist line applies on the image's platform, for the extras asked of its
    package (the line without `extra` markers applies whatever the extras)."""
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({**ENVIRONMENT, "extra": extra}) for extra in ("", *extras))


def _shown(requirement: Requirement) -> str:
    """The requirement without its marker: `grpcio>=1.78.0`, `google-api-core[grpc]<3,>=2.11`."""
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{requirement.specifier}"


def check(
    base: Mapping[str, Pin],
    lock: Mapping[str, Pin],
    requires: Mapping[str, Any],
    pinned: Mapping[str, str],
) -> list[str]:
    """Every failure of (a), (b) and (c), one line each, in that order."""
    problems: list[str] = []
    entries = {canonicalize_name(name): entry for name, entry in requires["packages"].items()}

    def has(name: str) -> tuple[str, str] | None:
        """(who, version): the base's version when the base has it (the image keeps it), else the lock's."""
        if name in base:
            return "the base image", base[name].version
        if name in lock:
            return "the lock", lock[name].version
        return None

    # (a) LMCache and what it pulls in: walk its requirements through the lock, extras included
    root = canonicalize_name("lmcache")
    asked: dict[str, set[str]] = {root: set()}
    todo = [root]
    while todo:
        name = todo.pop()
        found = has(name)
        entry = entries.get(name)
        if found is None:
            continue  # reported by whoever requires it
        if entry is None:
            problems.append(
                f"requires.json lacks the Requires-Dist of {name} {found[1]}, which lmcache pulls in: run scripts/lock-runtime-image"
            )
            continue
        if entry["version"] != found[1]:
            problems.append(f"requires.json has {name} {entry['version']}; {found[0]} has {name} {found[1]}")
            continue
        for line in entry["requires_dist"]:
            requirement = Requirement(line)
            if not _wanted(requirement, asked[name]):
                continue
            dep = canonicalize_name(requirement.name)
            need = f"{entry['name']} {entry['version']} requires {_shown(requirement)}"
            dep_has = has(dep)
            if dep_has is None:
                problems.append(f"{need}; neither the base image nor the lock has {requirement.name}")
                continue
            who, version = dep_has
            if not _satisfied(requirement, version):
                problems.append(f"{need}; {who} has {dep} {version}")
            new = set(requirement.extras) - asked.get(dep, set())
            if dep not in asked or new:
                asked.setdefault(dep, set()).update(new)
                todo.append(dep)

    # (b) installing LMCache changes no package of the base
    for key, pin in sorted(base.items()):
        if key not in lock:
            problems.append(f"the base image has {key} {pin.version}; the lock lacks {key}")
        elif lock[key].version != pin.version:
            problems.append(
                f"the base image has {key} {pin.version}; the lock has {key} {lock[key].version} (installing LMCache would change it)"
            )

    # (c) the lock is runtime.yaml's
    for package in ("vllm", "lmcache"):
        got = lock.get(canonicalize_name(package))
        if got is None:
            problems.append(f"runtime.yaml pins {package} {pinned[package]}; the lock has no {package}")
        elif got.version != pinned[package]:
            problems.append(f"runtime.yaml pins {package} {pinned[package]}; the lock has {package} {got.version}")
    vllm = base.get(canonicalize_name("vllm"))
    if vllm is not None and vllm.version != pinned["vllm"]:
        problems.append(f"runtime.yaml pins vllm {pinned['vllm']}; the base image has vllm {vllm.version}")
    return problems


def check_files(lock_dir: Path = LOCK_DIR, runtime_yaml: Path = RUNTIME_YAML) -> list[str]:
    return check(
        read_pins(lock_dir / "base.txt"),
        read_pins(lock_dir / "runtime.txt"),
        json.loads((lock_dir / "requires.json").read_text()),
        runtime_versions(runtime_yaml),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock-dir", type=Path, default=LOCK_DIR)
    parser.add_argument("--runtime", type=Path, default=RUNTIME_YAML)
    args = parser.parse_args(argv)
    problems = check_files(args.lock_dir, args.runtime)
    for problem in problems:
        print(f"image requirements: {problem}", file=sys.stderr)
    if not problems:
        lock = read_pins(args.lock_dir / "runtime.txt")
        print(f"image requirements: ok ({len(lock)} pins; LMCache's requirements hold against the base)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
