"""Shared helpers: compile a spec given as a dict, run the CLI, find examples."""

from __future__ import annotations

import atexit
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from kvgen.app.compiler import Compiled, compile_text
from kvgen.data import kube

ROOT = Path(__file__).resolve().parent.parent

# The tests' kvgen runs (in-process and the CLI's subprocesses) keep their caches (parsed data, the
# emitter's memo, replay records) in a directory of the session's own: thousands of fuzzed specs
# once filled the user's emitter memo, and the benchmark, which reads it, measured a slower kvgen.
# The test environments (the contract and checkov venvs, scripts/*-env.sh) stay where
# scripts/test built them: KVGEN_ENV_CACHE_DIR names their parent for the scripts the tests call.
# Each pytest process has its own (an xdist worker inherits the controller's environment, so the
# owner is written beside it): a test that reads the cache sees only its own process's entries.
_OWNER = os.environ.get("PYTEST_XDIST_WORKER", "main")
if "KVGEN_CACHE_DIR" not in os.environ or os.environ.get("KVGEN_TEST_CACHE_OWNER", _OWNER) != _OWNER:
    os.environ.setdefault("KVGEN_ENV_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "kvgen"))
    os.environ["KVGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="kvgen-test-cache-")
    os.environ["KVGEN_TEST_CACHE_OWNER"] = _OWNER
    atexit.register(shutil.rmtree, os.environ["KVGEN_CACHE_DIR"], True)

# A pytest-xdist worker starts with COLUMNS=80 and LINES=24 in its environment, which the one-process
# run does not have: kvgen's text views wrap at $COLUMNS, so a worker's CLI runs would print
# otherwise. The controller notes whether the user's environment had them; a worker drops them if not.
if "PYTEST_XDIST_WORKER" not in os.environ:
    os.environ["KVGEN_TEST_TERMINAL_SIZE"] = "1" if "COLUMNS" in os.environ or "LINES" in os.environ else "0"
elif os.environ.get("KVGEN_TEST_TERMINAL_SIZE") == "0":
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

# tests/tiers.py: xdist groups, the time summary, the heavy mark's drift; tests/valkey_support.py:
# the valkey_server fixture
pytest_plugins = ["tiers", "valkey_support"]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
GOLDEN = ROOT / "golden"
DEFAULT_KUBE = kube.DEFAULT_VERSION  # kvgen's --kube-version default, files/kubernetes.json
_KUBE_FIELD = re.compile(r"^kubeVersion: \"(\d+\.\d+)\"$", re.M)


# every kind kvgen renders of its own (some spec renders each): the tests that cover them all check this set
KVGEN_KINDS = frozenset(
    {
        "ConfigMap",
        "Deployment",
        "DestinationRule",  # routing.gateway.provider istio
        "GCPBackendPolicy",  # provider gke
        "HealthCheckPolicy",  # provider gke
        "HorizontalPodAutoscaler",
        "HTTPRoute",
        "InferencePool",
        "LeaderWorkerSet",
        "PodDisruptionBudget",
        "PodMonitor",
        "PrometheusRule",  # metrics.prometheusRule
        "ResourceClaimTemplate",
        "Role",
        "RoleBinding",
        "ScaledObject",
        "Service",
        "ServiceAccount",
        "ServiceMonitor",
        "StatefulSet",
    }
)


def validate_strictly(obj: dict[str, Any], version: str) -> None:
    """kubernetes-validate's strict check of a built-in kind; a custom resource (PodMonitor,
    ScaledObject, ...), which it has no schema for, against kvgen's vendored CRD schema."""
    import kubernetes_validate

    from kvgen.data import kube

    if kube.crd_file(obj["kind"], obj["apiVersion"]) is not None:
        errors = kube.validate_object(obj, version.rsplit(".", 1)[0] if version.count(".") == 2 else version)
        assert errors == [], (obj["kind"], errors)
        return
    kubernetes_validate.validate(obj, version, strict=True)


def kube_version_of(example: Path) -> str:
    """The Kubernetes version an example is rendered for: the spec's kubeVersion (kvgen and the chart
    render for it when given no version), else kvgen's default."""
    m = _KUBE_FIELD.search(example.read_text(encoding="utf-8"))
    return m[1] if m else DEFAULT_KUBE


BASE: dict[str, Any] = {
    "name": "demo",
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "instance": {"type": "Standard_NC24ads_A100_v4"},
}


def spec(**overrides: Any) -> dict[str, Any]:
    """BASE with top-level keys replaced (deep-copied)."""
    out = copy.deepcopy(BASE)
    out.update(copy.deepcopy(overrides))
    return out


def dump(data: Any) -> str:
    import io

    from kvgen.core.plain_tags import for_yaml11_readers

    y = YAML(typ="safe", pure=True)
    y.default_flow_style = False
    for_yaml11_readers(y)  # "yes", "y", "on" quoted: kvgen refuses them plain, as Helm does (YAML 1.1)
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


def compile_spec(data: dict[str, Any], version: str = "1.33") -> Compiled:
    (result,) = compile_text(dump(data), "spec.yaml", version)
    return result


def kind(compiled: Compiled, k: str) -> dict[str, Any]:
    (obj,) = [o for o in compiled.objects if o["kind"] == k]
    return obj


def workload(compiled: Compiled) -> dict[str, Any]:
    """The Deployment, or the rank-0 StatefulSet of a multi-node server."""
    return [o for o in compiled.objects if o["kind"] in ("Deployment", "StatefulSet")][0]


def container(compiled: Compiled, name: str) -> dict[str, Any]:
    pod = workload(compiled)["spec"]["template"]["spec"]
    (c,) = [c for c in pod.get("containers", []) + pod.get("initContainers", []) if c["name"] == name]
    return c


def kv_transfer_config(compiled: Compiled) -> dict[str, Any] | None:
    for arg in container(compiled, "vllm")["args"]:
        if arg.startswith("--kv-transfer-config="):
            return json.loads(arg.split("=", 1)[1])
    return None


def cached_tool_or_skip(script: Path, require_env: str, what: str) -> str:
    """The executable a cached-environment script (scripts/checkov-env.sh, scripts/promtool-env.sh) prints last
    with --check; otherwise skip, or FAIL when ``require_env`` is set (scripts/test sets it after building, hence
    CI: a test needing the tool never passes by being skipped there)."""
    import os

    result = subprocess.run([str(script), "--check"], capture_output=True, text=True)
    if result.returncode == 0:
        return result.stdout.strip().splitlines()[-1]
    why = f"{what} is not built ({result.stderr.strip()}); build it with scripts/{script.name}"
    if os.environ.get(require_env, "") not in ("", "0"):
        pytest.fail(f"{require_env} is set but {why}", pytrace=False)
    pytest.skip(f"{why} (set {require_env}=1 to make this a failure)")


def run_kvgen(
    *args: str, input: str | None = None, cwd: Path | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess: exit codes, stdout and stderr as a user sees them."""
    import os

    return subprocess.run(
        [sys.executable, "-m", "kvgen", *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(params=EXAMPLES, ids=[p.stem for p in EXAMPLES])
def example(request) -> Path:
    return request.param


def text_problems(text: str, version: str = "1.33", instance: str | None = None) -> set[tuple[str, str]]:
    """Every problem kvgen finds in one input (native, KAITO or KServe), as (spec path, message):
    what a test of a spec with several problems compares, rather than fragments of the output."""
    from kvgen.app.compiler import InputErrors, compile_inputs
    from kvgen.core.errors import format_path
    from kvgen.input.dialects import Options

    try:
        compile_inputs([("spec.yaml", text)], version, Options(instance))
    except InputErrors as err:
        return {(format_path(p.path), p.message) for e in err.errors for p in e.problems}
    return set()


def assert_refused_at_once(tmp_path: Path, text: str, expected: set[tuple[str, str]]) -> None:
    """kvgen finds exactly ``expected`` in ``text`` ((path, message) pairs), and the CLI refuses the
    file with all of them at once: exit 1, their count, nothing written."""
    assert text_problems(text) == expected
    f = tmp_path / "many.yaml"
    f.write_text(text)
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1
    assert f"kvgen: {len(expected)} problems found; nothing was written" in result.stderr


def problem_set(data: dict[str, Any], version: str = "1.33") -> set[tuple[str, str, str | None]]:
    """The problems kvgen finds in a native spec, as (path, message, hint): what the chart's
    problems are compared with (tests/helm.py problems)."""
    from kvgen.core.errors import SpecError

    try:
        compile_spec(data, version)
    except SpecError as err:
        return problem_triples(err)
    return set()


def problem_triples(err: Any) -> set[tuple[str, str, str | None]]:
    """A SpecError's problems as (path, message, hint), the form tests/helm.py problems gives."""
    from kvgen.core.errors import format_path

    return {(format_path(p.path), p.message, p.hint) for p in err.problems}


def distinct_names(paths: list[Path]) -> list[Path]:
    """The specs among paths whose names no earlier one has: render refuses same-named specs together."""
    from kvgen.app.compiler import compile_text

    seen: set[str] = set()
    out = []
    for p in paths:
        names = {c.spec.object_name for c in compile_text(p.read_text(), str(p), kube_version_of(p))}
        if not names & seen:
            seen |= names
            out.append(p)
    return out


@pytest.fixture(autouse=True)
def _catalog_rows_of_one_test():
    """`kvgen --catalog FILE` merges its rows over the catalog for the rest of the process (kvgen.data.catalog
    use_rows): a test that runs the CLI in-process with it must not hand them to the next test."""
    from kvgen.data import catalog

    before = {table: dict(rows) for table, rows in catalog._overlay.items()}
    yield
    if catalog._overlay != before:
        catalog._overlay.clear()
        catalog._overlay.update(before)
        catalog._merged.clear()
