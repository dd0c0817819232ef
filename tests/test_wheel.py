"""A regular (non-editable) install of the wheel in a fresh venv renders an example exactly
as the checkout does: templates, schemas and the chart's data files (the vLLM contract snapshot
included) ship inside the wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile

import pytest
from conftest import GOLDEN, ROOT

pytestmark = pytest.mark.slow


def test_wheel_in_a_fresh_venv_renders_an_example(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = dist.glob("kvgen-*.whl")
    # PEP 561: type checkers read kvgen's annotations only when the package carries py.typed
    assert "kvgen/py.typed" in zipfile.ZipFile(wheel).namelist()
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
