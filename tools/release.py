"""The release's checks that need no network: the release notes read from CHANGELOG.md
(scripts/release-notes) and a tag checked against every place that names the version
(scripts/check-release-tag). .github/workflows/release.yml runs both; tests/test_release.py
holds them.

The version has one source, ``kvgen/__init__.py`` ``__version__``; the tag is ``v<version>``, and
Chart.yaml's ``version`` and ``appVersion``, the default ``version`` input of action.yml, the
CLI image of the GitLab CI template and CHANGELOG.md's newest release section must say the same.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = "CHANGELOG.md"
CHART = "charts/kvgen/Chart.yaml"
ACTION = "action.yml"
GITLAB_TEMPLATE = "ci/gitlab/kvgen.gitlab-ci.yml"
CLI_IMAGE = "ghcr.io/kvgen-dev/kvgen"

# Keep a Changelog 1.1.0: "## [1.2.3] - 2026-12-02", or "## [Unreleased]"
_SECTION = re.compile(r"^## \[(?P<name>[^\]]+)\](?P<rest>.*)$")
# the link definitions at the end of the file: "[1.2.3]: https://..."
_LINK = re.compile(r"^\[[^\]]+\]:\s")
_DATE = re.compile(r"^\s+-\s+(?P<date>\d{4}-\d{2}-\d{2})\s*$")


class ReleaseError(Exception):
    """A check of the release failed; the message says what to change."""


@dataclass(frozen=True)
class Section:
    name: str  # a version (0.1.0) or Unreleased
    date: str | None  # YYYY-MM-DD of "## [1.2.3] - YYYY-MM-DD", else None
    body: str  # the section's text without its heading, blank lines at either end removed
    line: int  # the heading's line number (1-based)


def sections(text: str) -> list[Section]:
    """CHANGELOG.md's `## [...]` sections in file order."""
    found: list[Section] = []
    current: tuple[str, str | None, int] | None = None
    body: list[str] = []

    def close() -> None:
        if current is not None:
            found.append(Section(current[0], current[1], "\n".join(body).strip("\n"), current[2]))

    for number, line in enumerate(text.splitlines(), start=1):
        m = _SECTION.match(line)
        if m or line.startswith("## ") or _LINK.match(line):
            close()
            current, body = None, []
            if m:
                date = _DATE.match(m["rest"])
                current = (m["name"], date["date"] if date else None, number)
            continue
        if current is not None:
            body.append(line.rstrip())
    close()
    return found


def _shown(path: Path) -> str:
    """PATH as a message names it: relative to the working directory when below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def release_notes(version: str, changelog: Path) -> str:
    """The body of CHANGELOG.md's section for VERSION (a leading v is allowed)."""
    version = version.removeprefix("v")
    try:
        text = changelog.read_text(encoding="utf-8")
    except OSError as e:
        raise ReleaseError(f"{_shown(changelog)}: cannot read it: {e.strerror}") from None
    found = sections(text)
    for s in found:
        if s.name == version:
            if not s.body.strip():
                raise ReleaseError(f"{_shown(changelog)}:{s.line}: the section for {version} is empty")
            return s.body + "\n"
    listed = ", ".join(s.name for s in found) or "none"
    raise ReleaseError(f"{_shown(changelog)}: no section '## [{version}]' (sections: {listed})")


def package_version(root: Path) -> str:
    """``__version__`` of ROOT/kvgen/__init__.py (for this checkout: ``from kvgen import __version__``)."""
    init = root / "kvgen" / "__init__.py"
    spec = importlib.util.spec_from_file_location("_kvgen_version_of_checkout", init)
    if spec is None or spec.loader is None:
        raise ReleaseError(f"{init}: cannot load it")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    version = getattr(module, "__version__", None)
    if not isinstance(version, str):
        raise ReleaseError(f"{init}: no __version__ string")
    return version


def _yaml(path: Path) -> Any:
    import yaml  # PyYAML: a kvgen dependency; imported here so release_notes needs the standard library only

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def tag_problems(tag: str, root: Path = ROOT) -> list[str]:
    """Every place that disagrees with TAG (``v`` + kvgen's version), one line each; [] when the
    tag can be released."""
    version = package_version(root)
    problems: list[str] = []
    if tag != f"v{version}":
        problems.append(f"tag {tag!r} is not 'v' + kvgen/__init__.py __version__ ({version!r}): expected v{version}")
    release = tag.removeprefix("v")

    def want(where: str, got: object) -> None:
        if got != release:
            problems.append(f"{where} is {got!r}, the tag says {release!r}")

    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    if "version" in pyproject:  # a static version (else hatch reads kvgen/__init__.py: dynamic)
        want("pyproject.toml [project] version", pyproject["version"])
    chart = _yaml(root / CHART)
    want(f"{CHART} version", chart.get("version"))
    want(f"{CHART} appVersion", chart.get("appVersion"))
    action = _yaml(root / ACTION)
    want(f"{ACTION} inputs.version.default", action.get("inputs", {}).get("version", {}).get("default"))
    gitlab = _yaml(root / GITLAB_TEMPLATE)
    image = gitlab.get(".kvgen", {}).get("image", {}).get("name", "")
    want(f"{GITLAB_TEMPLATE} .kvgen image tag ({image})", image.removeprefix(f"{CLI_IMAGE}:"))
    try:
        release_notes(release, root / CHANGELOG)
    except ReleaseError as e:
        problems.append(str(e))
    else:
        section = next(s for s in sections((root / CHANGELOG).read_text(encoding="utf-8")) if s.name == release)
        if section.date is None:
            problems.append(
                f"{CHANGELOG}:{section.line}: the section for {release} has no release date (## [{release}] - YYYY-MM-DD)"
            )
    return problems
