"""Every command of the README's `bash` blocks works as written: each one runs, in a copy of the
checkout, with kvgen and the real helm v4 CLI (tests/helm_cli.py) on PATH, and exits 0. A command
that needs what a test machine has not (a cluster, a container runtime, a package index) is named
in NEEDS_MORE with the reason; nothing else is left out, and every entry there must still match a
README command, so the list cannot go stale or hide a command silently."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import helm_cli
import pytest
from conftest import ROOT

BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)

# a command's start -> why it does not run here (the README's commands that need more than a checkout)
NEEDS_MORE = {
    "python3 -m venv .venv": "creates the venv the next command fills; the tests' own venv stands in for it",
    ".venv/bin/pip install .": "installs kvgen's dependencies from a package index",
    "scripts/test": "runs the whole test suite, this test included, and builds its environments",
    "pipx install kvgen==": "installs a release from PyPI",
    "helm install ": "needs a cluster",
    "helm test ": "needs a cluster (and a release installed in it)",
    "docker run ": "needs a container runtime and the released image from its registry",
}


def readme_commands(text: str) -> list[str]:
    """The commands of the `bash` blocks: one a line, comments (whole-line and trailing) removed,
    `a && b` split into its commands."""
    commands = []
    for block in BASH_BLOCK.findall(text):
        for line in block.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            commands += [part.strip() for part in line.split(" && ") if part.strip()]
    return commands


def needs_more(command: str) -> str | None:
    return next((why for start, why in NEEDS_MORE.items() if command.startswith(start)), None)


def test_the_commands_are_found_with_their_comments_removed() -> None:
    text = "x\n```bash\n# a comment\na --b c   # what it does\nd && e\n```\n```yaml\nf: 1\n```\n"
    assert readme_commands(text) == ["a --b c", "d", "e"]


def test_every_command_left_out_is_in_the_documented_list_and_every_entry_is_used() -> None:
    commands = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    unused = [start for start in NEEDS_MORE if not any(c.startswith(start) for c in commands)]
    assert unused == [], "NEEDS_MORE names commands the README no longer has"
    runnable = [c for c in commands if needs_more(c) is None]
    unknown = [c for c in runnable if c.split()[0] not in ("kvgen", "helm", ".venv/bin/kvgen")]
    assert unknown == [], "a README command this test can neither run nor explain"
    assert any(c.startswith("helm ") for c in runnable) and any("kvgen " in c for c in runnable)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout whose `.venv` is the tests' venv (what the README's install makes)."""
    copy = tmp_path_factory.mktemp("readme") / "kvgen"
    skip = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".*_cache", "*.egg-info", "build", "dist")
    shutil.copytree(ROOT, copy, ignore=skip, symlinks=True)
    (copy / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return copy


def _environment(tmp: Path) -> dict[str, str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    helm = bin_dir / "helm"
    if not helm.exists():
        helm.symlink_to(helm_cli.binary())
    kvgen = Path(sys.executable).parent / "kvgen"
    assert kvgen.is_file(), f"no kvgen script beside {sys.executable}"
    home = tmp / "helm-home"
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{kvgen.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_DATA_HOME": str(home / "data"),
    }


@pytest.mark.heavy
@pytest.mark.parametrize(
    "command",
    [c for c in readme_commands((ROOT / "README.md").read_text(encoding="utf-8")) if needs_more(c) is None],
)
def test_a_readme_command_works_as_written(command: str, checkout: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", "-c", command], cwd=checkout, env=_environment(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"


def test_the_quick_start_says_what_the_test_command_downloads() -> None:
    """scripts/test builds the contract venv and checkov's and fetches helm the first time: the
    README's first block says so, with sizes, and names the tier that builds none of them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = BASH_BLOCK.search(readme)
    assert first is not None
    comments = " ".join(line.lstrip("# ") for line in first[1].splitlines() if line.startswith("#"))
    for what in ("scripts/contract-env.sh", "scripts/checkov-env.sh", "helm", ".venv", "scripts/test --quick"):
        assert what in comments, what
    assert re.search(r"\d(\.\d)? GB", comments) and re.search(r"~\d+ MB", comments)
    script = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    assert "scripts/contract-env.sh" in script and "scripts/checkov-env.sh" in script
