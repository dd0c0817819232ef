"""The wheel: what ships in it (kvgen's modules and the data they read; nothing the tests or the
generators use), and a regular (non-editable) install of it in a fresh venv renders an example
exactly as the checkout does: templates, schemas and the chart's data files (the vLLM contract
snapshot included) ship inside the wheel."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path, PurePosixPath

import pytest
from conftest import GOLDEN, ROOT

pytestmark = pytest.mark.slow

# kvgen's packages, bottom layer to top (the wheel ships these and no other Python package)
PACKAGES = {
    "kvgen",
    "kvgen/core",
    "kvgen/data",
    "kvgen/spec",
    "kvgen/input",
    "kvgen/traffic",
    "kvgen/input/dialects",
    "kvgen/plan",
    "kvgen/context",
    "kvgen/render",
    "kvgen/output",
    "kvgen/app",
}
# the data kvgen reads at run time: kvgen/_data/<name> is the checkout's <folder>
DATA = {"templates": ROOT / "templates", "schemas": ROOT / "schemas", "files": ROOT / "charts" / "kvgen" / "files"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (built,) = dist.glob("kvgen-*.whl")
    return built


def _tracked(folder: Path) -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "."], cwd=folder, capture_output=True, text=True, check=True
    ).stdout
    return {name for name in listed.split("\0") if name}


def test_the_wheel_ships_kvgen_and_its_data_only(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = {n for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    shipped = set(names) - dist_info
    outside = sorted(n for n in shipped if not n.startswith("kvgen/"))
    assert outside == [], f"the wheel ships files outside kvgen/ (tests, tools?): {outside}"
    # PEP 561: type checkers read kvgen's annotations only when the package carries py.typed
    assert "kvgen/py.typed" in shipped
    code = {n for n in shipped if not n.startswith("kvgen/_data/")}
    modules = {n for n in code if n.endswith(".py")}
    assert {str(PurePosixPath(n).parent) for n in modules} == PACKAGES
    assert code == modules | {"kvgen/py.typed"}, sorted(code - modules)
    source = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kvgen").rglob("*.py")}
    assert modules == source
    # the data: the three folders, each file the checkout tracks there
    data = {n.removeprefix("kvgen/_data/") for n in shipped if n.startswith("kvgen/_data/")}
    assert {n.split("/", 1)[0] for n in data} == set(DATA)
    for name, folder in DATA.items():
        tracked = {f"{name}/{n}" for n in _tracked(folder)}
        assert tracked and tracked <= data, sorted(tracked - data)


def _defined(tree: ast.Module) -> set[str]:
    """The public functions and classes a module defines."""
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef) and not n.name.startswith("_")}


def test_the_tests_contract_checks_do_not_ship(wheel):
    """The checking half of the contract snapshots (tests/contract_check.py: whole command lines,
    the command lines of rendered objects) is used only by the tests: no shipped module defines
    any of its functions or classes."""
    moved = _defined(ast.parse((ROOT / "tests" / "contract_check.py").read_text()))
    assert {"check_vllm_argv", "check_lmcache_argv", "command_lines", "CommandLine"} <= moved
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.endswith(".py"):
                shipped = _defined(ast.parse(archive.read(name).decode()))
                assert not shipped & moved, f"{name} defines {sorted(shipped & moved)} (test-only)"


def test_wheel_in_a_fresh_venv_renders_an_example(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    subprocess.run([str(bin_dir / "pip"), "install", "--quiet", str(wheel)], check=True, capture_output=True, text=True)
    # run outside the checkout so nothing can be picked up from the source tree
    example = ROOT / "examples" / "kserve-qwen2-7b.yaml"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [str(bin_dir / "kvgen"), "render", str(example)], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / example.name).read_text()
    # what `pipx install .` (or `pipx install git+https://...`) gives: the command, its version, its completion
    version = subprocess.run(
        [str(bin_dir / "kvgen"), "--version"], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert version.returncode == 0 and version.stdout.startswith("kvgen "), version.stderr
    completion = subprocess.run(
        [str(bin_dir / "kvgen"), "completion", "bash"], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert "complete -o default -F _kvgen_completion kvgen" in completion.stdout, completion.stderr
    # your own catalog over the shipped one (the shipped models.yaml with its gated list included)
    onprem = ROOT / "examples" / "onprem-dgx-a100.yaml"
    own = subprocess.run(
        [str(bin_dir / "kvgen"), "render", "-q", str(onprem)], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert own.returncode == 0, own.stderr
    assert own.stdout == (GOLDEN / onprem.name).read_text()
    located = subprocess.run(
        [str(bin_dir / "python"), "-c", "import kvgen.core.paths as p; print(p.files_dir())"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=True,
    )
    assert str(env_dir) in located.stdout  # data came from the installed wheel
    # the vLLM contract snapshot ships too: validate checks vllm.extraArgs against vLLM's flags offline
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: demo\nmodel: {id: meta-llama/Llama-3.1-8B-Instruct}\ninstance: {type: Standard_NC24ads_A100_v4}\n"
        "vllm: {extraArgs: [--swap-space=4]}\n"
    )
    refused = subprocess.run(
        [str(bin_dir / "kvgen"), "validate", str(spec)], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert refused.returncode == 1, refused.stderr
    assert "vllm.extraArgs[0]: --swap-space is not an option of vllm serve" in refused.stderr
