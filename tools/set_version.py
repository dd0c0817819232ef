"""kvgen's version, written once and carried everywhere a user reads it.

The one place is `kvgen/__init__.py` (`__version__`): the package's metadata reads it (hatch's
dynamic version) and so does `kvgen --version`. Every other mention is a copy for a reader that
cannot import kvgen: Chart.yaml (`version`, and `appVersion`, the tag of kvgen's runtime image),
the install commands of the README and the chart README, the GitOps and CI examples, the runtime
image the examples name, the GitHub Action's and the GitLab template's defaults. MENTIONS below
finds each copy; `scripts/set-version NEW` rewrites them all (then `scripts/regenerate` for the
goldens), and tests/test_version.py fails on a copy that disagrees with the source.

    python -m tools.set_version NEW    (scripts/set-version NEW)
    python -m tools.set_version --check
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "kvgen" / "__init__.py"
SOURCE_PATTERN = re.compile(r'^__version__ = "(?P<v>[^"]+)"$', re.M)
# A release version as kvgen tags them: X.Y.Z with an optional pre-release (PEP 440 and SemVer
# read it alike only in this form; Helm's chart version must be SemVer).
VERSION = r"(?P<v>\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?)"


@dataclass(frozen=True)
class Mention:
    """Where a copy of the version stands: files (globs from the root) and the text around it."""

    files: tuple[str, ...]
    pattern: re.Pattern[str]
    what: str


# Text files a user reads (the goldens are left to scripts/regenerate).
READ = ("README.md", "docs/*.md", "examples/**/*.yaml", "charts/kvgen/README.md", ".pre-commit-hooks.yaml")
MENTIONS = (
    Mention(("charts/kvgen/Chart.yaml",), re.compile(rf"^version: {VERSION}$", re.M), "the chart's version"),
    Mention(("charts/kvgen/Chart.yaml",), re.compile(rf'^appVersion: "{VERSION}"$', re.M), "the chart's appVersion"),
    Mention(
        (*READ, "charts/kvgen/Chart.yaml", "action.yml", "ci/**/*.yml"),
        re.compile(rf"ghcr\.io/kvgen-dev/(?:vllm-lmcache|kvgen):{VERSION}\b"),
        "a kvgen image's tag",
    ),
    Mention((*READ,), re.compile(rf"\bvllm-lmcache,?\s+tag: \"?{VERSION}\b"), "the runtime image's tag"),
    Mention((*READ, "action.yml", "ci/**/*.yml"), re.compile(rf"\bkvgen==\s*{VERSION}\b"), "a pip pin"),
    Mention((*READ,), re.compile(rf"kvgen-dev/kvgen(?:\.git)?@v{VERSION}\b"), "a git ref"),
    Mention((*READ,), re.compile(rf"\bkvgen-{VERSION}\.tgz\b"), "the packaged chart"),
    Mention(
        READ, re.compile(rf"oci://ghcr\.io/kvgen-dev/charts/kvgen\b[^\n]*--version {VERSION}\b"), "a chart install"
    ),
    Mention((*READ,), re.compile(rf"(?:targetRevision|rev): v?{VERSION}\b"), "a pinned ref"),
    Mention((*READ,), re.compile(rf'semver: "{VERSION}"'), "a chart semver"),
    Mention(("action.yml",), re.compile(rf"default: \"?{VERSION}\"?"), "the action's default version"),
    Mention(("README.md",), re.compile(rf"^\| {VERSION} \|", re.M), "the Install table's release"),
    Mention(
        ("images/Dockerfile", "images/kvgen.Dockerfile"),
        re.compile(rf"^ARG KVGEN_VERSION={VERSION}$", re.M),
        "an image's KVGEN_VERSION default",
    ),
    Mention(READ, re.compile(rf"`kvgen {VERSION} \(vLLM"), "kvgen --version's output"),
)


def source_version(root: Path = ROOT) -> str:
    match = SOURCE_PATTERN.search((root / "kvgen" / "__init__.py").read_text())
    if match is None:
        raise SystemExit(f"set-version: no __version__ in {root / 'kvgen' / '__init__.py'}")
    return match["v"]


def _files(root: Path, globs: tuple[str, ...]) -> list[Path]:
    return sorted({p for g in globs for p in root.glob(g) if p.is_file()})


def found(root: Path = ROOT) -> list[tuple[str, int, str, str]]:
    """Every copy: (file relative to root, line, the version it carries, what it is)."""
    out = []
    for mention in MENTIONS:
        for path in _files(root, mention.files):
            text = path.read_text()
            for m in mention.pattern.finditer(text):
                out.append((str(path.relative_to(root)), text.count("\n", 0, m.start()) + 1, m["v"], mention.what))
    return sorted(set(out))


def stale(root: Path = ROOT) -> list[str]:
    """The copies that disagree with kvgen/__init__.py, one line each."""
    want = source_version(root)
    return [
        f"{f}:{line}: {what} is {v}, kvgen/__init__.py says {want}" for f, line, v, what in found(root) if v != want
    ]


def set_version(new: str, root: Path = ROOT) -> list[str]:
    """Write NEW into the source and every copy; returns the files changed."""
    if not re.fullmatch(VERSION, new):
        raise SystemExit(f"set-version: {new!r} is not a release version (X.Y.Z, or X.Y.ZrcN)")
    changed = []
    source = root / "kvgen" / "__init__.py"
    text = source.read_text()
    text2 = SOURCE_PATTERN.sub(f'__version__ = "{new}"', text)
    if text2 != text:
        source.write_text(text2)
        changed.append("kvgen/__init__.py")
    for path in sorted({p for m in MENTIONS for p in _files(root, m.files)}):
        text = path.read_text()
        new_text = text
        for mention in MENTIONS:
            if path in _files(root, mention.files):
                new_text = mention.pattern.sub(lambda m: m[0].replace(m["v"], new), new_text)
        if new_text != text:
            path.write_text(new_text)
            changed.append(str(path.relative_to(root)))
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/set-version", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("version", nargs="?", help="the new version, X.Y.Z")
    group.add_argument("--check", action="store_true", help="fail when a copy disagrees with kvgen/__init__.py")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    for name in set_version(args.version):
        print(f"set-version: wrote {name}")
    print("set-version: now run scripts/regenerate (the goldens name the runtime image's tag)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
