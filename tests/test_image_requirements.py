"""The runtime image's requirement check (tools/image_requirements.py) on the committed lock
(images/lock/, written by scripts/lock-runtime-image from PyPI): it passes as committed and names
both sides of every broken pin in mutated copies."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from kvgen.data import catalog
from tools import image_requirements as ir

LOCK = ROOT / "images" / "lock"
RUNTIME_YAML = ROOT / "charts" / "kvgen" / "files" / "runtime.yaml"
RT = catalog.runtime()


def copy(tmp_path: Path) -> tuple[Path, Path]:
    """A scratch copy of images/lock/ and runtime.yaml to break."""
    lock = tmp_path / "lock"
    shutil.copytree(LOCK, lock)
    runtime = tmp_path / "runtime.yaml"
    shutil.copy(RUNTIME_YAML, runtime)
    return lock, runtime


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} in {path.name}"
    path.write_text(text.replace(old, new))


def test_the_committed_lock_passes():
    assert ir.check_files() == []


def test_the_lock_is_runtime_yamls_and_the_base_is_kept():
    lock, base = ir.read_pins(LOCK / "runtime.txt"), ir.read_pins(LOCK / "base.txt")
    assert lock["vllm"].version == str(RT["vllm"]["version"]) == base["vllm"].version
    assert lock["lmcache"].version == str(RT["lmcache"]["version"])
    assert {n: p.version for n, p in base.items()} == {n: p.version for n, p in lock.items() if n in base}


def test_requires_json_holds_lmcache_and_names_the_wheel_each_entry_was_read_from():
    packages = json.loads((LOCK / "requires.json").read_text())["packages"]
    lmcache = packages["lmcache"]
    assert lmcache["version"] == str(RT["lmcache"]["version"])
    # the issue's pins, as LMCache 0.5.6's cp312 x86_64 wheel declares them
    for line in ("grpcio>=1.78.0", "numpy<=2.2.6", "opentelemetry-api<=1.40.0,>=1.20.0", "protobuf<7,>=6.31.1"):
        assert line in lmcache["requires_dist"]
    assert 'grpcio-observability==1.78.0; platform_system == "Linux"' in lmcache["requires_dist"]
    assert lmcache["file"] == "lmcache-0.5.6-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
    for name, entry in packages.items():
        assert entry["url"].startswith("https://files.pythonhosted.org/") and entry["url"].endswith(entry["file"]), name
        assert len(entry["sha256"]) == 64, name


def test_the_lock_names_its_source_and_command():
    for stem in ("base", "runtime"):
        head = (LOCK / f"{stem}.txt").read_text().split("\n")[:6]
        (command,) = [line for line in head if line.startswith("#   uv pip compile ")]
        assert command.startswith(
            f"#   uv pip compile images/lock/{stem}.in --python-version 3.12 --python-platform x86_64-manylinux_2_28 "
            "--index-url https://pypi.org/simple --exclude-newer 2026-11-02T10:13:42Z"
        ), command
    assert "requirements/kv_connectors.txt of vllm-0.33.0.tar.gz" in (LOCK / "base.txt").read_text().split("\n", 3)[1]
    base_in = (LOCK / "base.in").read_text()
    assert "vllm-0.33.0.tar.gz (sha256 " in base_in and "INSTALL_KV_CONNECTORS=true" in base_in
    assert "\nvllm==0.33.0\n" in base_in and "\nlmcache >= 0.5.6\n" in base_in  # vLLM's kv_connectors.txt


def test_a_base_grpcio_below_lmcaches_pins_fails_naming_both_sides(tmp_path):
    lock, runtime = copy(tmp_path)
    edit(lock / "base.txt", "\ngrpcio==1.78.0\n", "\ngrpcio==1.76.0\n")
    assert ir.check_files(lock, runtime) == [
        "lmcache 0.5.6 requires grpcio>=1.78.0; the base image has grpcio 1.76.0",
        "grpcio-status 1.78.0 requires grpcio>=1.78.0; the base image has grpcio 1.76.0",
        "grpcio-observability 1.78.0 requires grpcio==1.78.0; the base image has grpcio 1.76.0",
        "requires.json has grpcio 1.78.0; the base image has grpcio 1.76.0",
        "the base image has grpcio 1.76.0; the lock has grpcio 1.78.0 (installing LMCache would change it)",
    ]


def test_a_base_numpy_above_lmcaches_cap_fails(tmp_path):
    lock, runtime = copy(tmp_path)
    edit(lock / "base.txt", "\nnumpy==2.2.6\n", "\nnumpy==2.3.0\n")
    assert ir.check_files(lock, runtime) == [
        "lmcache 0.5.6 requires numpy<=2.2.6; the base image has numpy 2.3.0",
        "requires.json has numpy 2.2.6; the base image has numpy 2.3.0",
        "the base image has numpy 2.3.0; the lock has numpy 2.2.6 (installing LMCache would change it)",
    ]


def test_a_lock_line_removed_fails(tmp_path):
    lock, runtime = copy(tmp_path)
    edit(lock / "runtime.txt", "\ncupy-cuda13x==14.2.0\n", "\n")
    assert ir.check_files(lock, runtime) == ["the base image has cupy-cuda13x 14.2.0; the lock lacks cupy-cuda13x"]


def test_a_requirement_neither_side_has_fails(tmp_path):
    lock, runtime = copy(tmp_path)
    for name in ("base.txt", "runtime.txt"):
        edit(lock / name, "\naiofile==3.12.3\n", "\n")
    assert ir.check_files(lock, runtime) == [
        "lmcache 0.5.6 requires aiofile; neither the base image nor the lock has aiofile"
    ]


def test_a_package_the_lock_adds_is_checked_at_the_locks_version(tmp_path):
    """What the lock adds over the base (here caio, taken out of the base) is held to the lock's pin."""
    lock, runtime = copy(tmp_path)
    edit(lock / "base.txt", "\ncaio==0.12.10\n", "\n")
    assert ir.check_files(lock, runtime) == []
    edit(lock / "runtime.txt", "\ncaio==0.12.10\n", "\ncaio==0.11.0\n")
    assert ir.check_files(lock, runtime) == [
        "aiofile 3.12.3 requires caio~=0.12.0; the lock has caio 0.11.0",
        "requires.json has caio 0.12.10; the lock has caio 0.11.0",
    ]


def test_runtime_yaml_naming_another_lmcache_fails(tmp_path):
    lock, runtime = copy(tmp_path)
    edit(runtime, "lmcache:\n  version: 0.5.6\n", "lmcache:\n  version: 0.5.7\n")
    assert ir.check_files(lock, runtime) == ["runtime.yaml pins lmcache 0.5.7; the lock has lmcache 0.5.6"]


def test_a_package_lmcache_pulls_in_without_its_requires_dist_fails(tmp_path):
    lock, runtime = copy(tmp_path)
    data = json.loads((lock / "requires.json").read_text())
    del data["packages"]["caio"]
    (lock / "requires.json").write_text(json.dumps(data))
    assert ir.check_files(lock, runtime) == [
        "requires.json lacks the Requires-Dist of caio 0.12.10, which lmcache pulls in: run scripts/lock-runtime-image"
    ]


@pytest.mark.parametrize("broken", [False, True])
def test_the_command_line_prints_every_problem_and_exits_nonzero(tmp_path, broken):
    lock, runtime = copy(tmp_path)
    if broken:
        edit(lock / "base.txt", "\nnumpy==2.2.6\n", "\nnumpy==2.3.0\n")
    result = subprocess.run(
        [sys.executable, "-m", "tools.image_requirements", "--lock-dir", str(lock), "--runtime", str(runtime)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if broken:
        assert result.returncode == 1 and result.stdout == ""
        assert (
            result.stderr.splitlines()[0]
            == "image requirements: lmcache 0.5.6 requires numpy<=2.2.6; the base image has numpy 2.3.0"
        )
        assert len(result.stderr.splitlines()) == 3
    else:
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert result.stdout.startswith("image requirements: ok (231 pins")


def test_markers_are_evaluated_for_linux_x86_64_cpython_312():
    from packaging.requirements import Requirement

    assert ir._wanted(Requirement('grpcio-observability==1.78.0; platform_system == "Linux"'), ())
    assert not ir._wanted(Requirement('x; sys_platform == "darwin"'), ())
    assert not ir._wanted(Requirement('nixl>=1.3.0; python_version < "3.13" and extra == "nixl"'), ())
    assert ir._wanted(Requirement('nixl>=1.3.0; python_version < "3.13" and extra == "nixl"'), ("nixl",))
    assert not ir._wanted(Requirement('x; python_version >= "3.13"'), ())


def lock_script():
    """scripts/lock-runtime-image as a module (it has no .py suffix)."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("lock_runtime_image", str(ROOT / "scripts" / "lock-runtime-image"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_the_lock_reads_the_requires_dist_of_the_wheel_the_image_installs():
    """requires.json comes from the wheel for cp312 manylinux_2_28 x86_64 (vLLM's aarch64 wheel
    declares another torch): the most specific fitting tag wins, musllinux, aarch64, newer glibc
    and other Pythons never do."""
    best = lock_script().best_wheel

    def files(*names: str) -> list[dict[str, str]]:
        return [{"filename": name} for name in names]

    lmcache = [
        "lmcache-0.5.6-cp312-cp312-manylinux_2_26_aarch64.manylinux_2_28_aarch64.whl",
        "lmcache-0.5.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "lmcache-0.5.6-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
        "lmcache-0.5.6.tar.gz",
    ]
    assert best(files(*lmcache))["filename"] == lmcache[2]
    vllm = ["vllm-0.33.0-cp38-abi3-manylinux_2_28_aarch64.whl", "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl"]
    assert best(files(*vllm))["filename"] == vllm[1]
    assert best(files("x-1-py3-none-any.whl", "x-1-cp312-cp312-manylinux2014_x86_64.whl"))["filename"] == (
        "x-1-cp312-cp312-manylinux2014_x86_64.whl"
    )
    assert best(files("x-1-cp312-cp312-musllinux_1_2_x86_64.whl", "x-1-cp312-cp312-manylinux_2_34_x86_64.whl")) is None
    assert best([{"filename": "x-1-py3-none-any.whl", "yanked": True}]) is None


def test_check_mode_reports_any_difference_from_a_fresh_resolution(tmp_path):
    """--check compares the committed lock with a fresh one file by file (the resolution itself
    needs the network: the release workflow runs it)."""
    differences = lock_script().differences
    fresh = tmp_path / "fresh"
    shutil.copytree(LOCK, fresh)
    assert differences(LOCK, fresh) == []
    edit(fresh / "runtime.txt", "\nnumpy==2.2.6\n", "\nnumpy==2.2.7\n")
    (fresh / "requires.json").unlink()
    diff = "".join(differences(LOCK, fresh))
    assert "-numpy==2.2.6\n+numpy==2.2.7\n" in diff
    assert "--- images/lock/requires.json\n+++ re-resolved requires.json\n" in diff
    assert "base.txt" not in diff
