"""Fast contract tier: every command line kvgen renders, checked against the committed
snapshots of what vLLM 0.33.0 and LMCache 0.5.6 accept (charts/kvgen/files/contract/*.json, captured by
scripts/capture-contract). No vLLM or LMCache needed; the live tier is test_contract_live.py."""

from __future__ import annotations

import json

import contract_check
import contract_support as cs
import pytest
from conftest import compile_spec, spec

from kvgen.data import catalog

RENDERED = cs.rendered()


@pytest.mark.parametrize("r", RENDERED, ids=[r.id for r in RENDERED])
def test_rendered_command_line_passes_the_snapshot(r):
    assert cs.check(r.line.kind, r.argv) == []


def test_rendered_lines_reach_every_construct_the_check_knows():
    """The examples (plus tests/contract_support.EXTRA_SPECS) exercise every connector, spec,
    tier and adapter kvgen can emit, so a clean check above covers all of them."""
    rt = catalog.runtime()
    vllm = [r for r in RENDERED if r.line.kind == "vllm"]
    lmcache = [r for r in RENDERED if r.line.kind == "lmcache"]
    kvs = [kv for kv in (cs.kv_config(r.argv) for r in vllm) if kv]
    assert {kv["kv_connector"] for kv in kvs} == set(rt["connectors"].values())
    extras = [kv.get("kv_connector_extra_config", {}) for kv in kvs if kv["kv_connector"] == "OffloadingConnector"]
    assert {e["spec_name"] for e in extras} == {"CPUOffloadingSpec", "TieringOffloadingSpec"}
    assert {e["eviction_policy"] for e in extras} == {"lru", "arc"}
    assert {t["type"] for e in extras for t in e.get("secondary_tiers", [])} == {"fs"}
    adapters = [json.loads(r.argv[i + 1]) for r in lmcache for i, a in enumerate(r.argv) if a == "--l2-adapter"]
    assert {a["type"] for a in adapters} == {"fs", "fs_native", "resp"}
    assert {r.argv[r.argv.index("--eviction-policy") + 1] for r in lmcache} == {"LRU", "ARC"}
    assert any("--headless" in r.argv for r in vllm)  # the worker ranks of a multi-node server
    assert all(r.argv[-2] == "--l1-size-gb" for r in lmcache)  # completed by the launcher
    # gpuAccess in-container: both lines come out of the vLLM container's launcher args
    in_container = {
        (r.line.kind, r.line.workload) for r in RENDERED if r.line.container == "vllm" and r.line.launcher_args
    }
    in_container |= {("vllm", r.line.workload) for r in vllm if r.compiled.plan.in_container}
    assert {k for k, _w in in_container} == {"lmcache", "vllm"}
    assert any("--headless" in r.argv for r in vllm if r.compiled.plan.in_container)


def test_lmcache_lines_are_what_the_rendered_launcher_execs():
    """The LMCache argv checked is the rendered launcher's dry-run output for the rendered pod:
    the server command after '--' plus the L1 size it measured (the instance's RAM x 0.5 / TP,
    capped by the sidecar's memory limit)."""
    c = compile_spec(spec(kvCacheOffloading={"backend": "lmcache", "cpuMemoryUtilization": 0.5}))
    (line,) = [cl for cl in contract_check.command_lines(c.objects, "demo") if cl.kind == "lmcache"]
    argv = cs.launcher_exec_argv(line, c)
    assert argv[: len(line.argv)] == list(line.argv)
    assert argv[len(line.argv)] == "--l1-size-gb" and len(argv) == len(line.argv) + 2
    size = float(argv[-1])
    host = c.plan.instance.memory_bytes * 0.5 / c.spec.parallelism.tensor / cs.GiB
    assert 1 <= size <= host + 0.01


def test_multi_node_args_get_the_node_rank_kubernetes_would_substitute():
    """--node-rank=$(NODE_RANK) comes from the pod-index label: 0 on rank 0's StatefulSet, the
    first ordinal (1) on the workers'."""
    lines = [r for r in RENDERED if any(a.startswith("--node-rank=") for a in r.argv)]
    ranks = {("--headless" in r.argv): [a for a in r.argv if a.startswith("--node-rank=")] for r in lines}
    assert ranks == {False: ["--node-rank=0"], True: ["--node-rank=1"]}


def test_unresolvable_env_reference_is_left_as_written():
    container = {
        "env": [{"name": "A", "value": "7"}, {"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    }
    assert contract_check.expand_env("--x=$(A)-$(B)-$(C)", container, {}) == "--x=7-$(B)-$(C)"


# ----------------------------------------------------------------------------- broken fixtures

BROKEN = cs.broken()


@pytest.mark.parametrize("b", BROKEN, ids=[b.id for b in BROKEN])
def test_broken_fixture_is_caught_by_the_snapshot_check(b):
    problems = cs.check(b.kind, b.argv)
    assert {p.code for p in problems} == b.snapshot, [str(p) for p in problems]


def test_every_category_has_a_broken_fixture():
    wanted = {
        contract_check.UNKNOWN_FLAG,
        contract_check.BAD_CHOICE,
        contract_check.MISSING_VALUE,
        contract_check.BAD_VALUE,
        contract_check.UNEXPECTED_VALUE,
        contract_check.UNKNOWN_KV_TRANSFER_KEY,
        contract_check.MISSING_KV_TRANSFER_KEY,
        contract_check.UNREGISTERED_CONNECTOR,
        contract_check.UNKNOWN_EXTRA_CONFIG_KEY,
        contract_check.MISSING_EXTRA_CONFIG_KEY,
        contract_check.UNKNOWN_SPEC,
        contract_check.UNKNOWN_EVICTION_POLICY,
        contract_check.UNKNOWN_TIER_TYPE,
        contract_check.UNKNOWN_TIER_KEY,
        contract_check.MISSING_TIER_KEY,
        contract_check.MISSING_REQUIRED_FLAG,
        contract_check.CONFLICTING_FLAGS,
        contract_check.UNKNOWN_L2_ADAPTER_TYPE,
        contract_check.UNKNOWN_L2_ADAPTER_KEY,
        contract_check.MISSING_L2_ADAPTER_KEY,
    }
    assert wanted <= {c for b in BROKEN for c in b.snapshot}
    # and the issue's three named breakages are among those both tiers must catch
    both = {b.id for b in BROKEN if b.stage is not None}
    assert {"vllm-swap-space", "kv-buffer-size", "lmcache-no-eviction-policy"} <= both


def test_problem_messages_name_the_offender():
    by_id = {b.id: b for b in BROKEN}
    text = lambda i: " | ".join(map(str, cs.check(by_id[i].kind, by_id[i].argv)))  # noqa: E731
    assert "--swap-space" in text("vllm-swap-space")
    assert "'kv_buffer_size'" in text("kv-buffer-size")
    assert "--eviction-policy" in text("lmcache-no-eviction-policy")
    assert "'SharedStorageConnector'" in text("unregistered-connector")
    assert "'size'" in text("offloading-unknown-fs-key") and "root_dir" in text("offloading-unknown-fs-key")
    assert "'lmcache.mp.hosts'" in text("lmcache-mp-unknown-key")
    assert "'disk'" in text("l2-unknown-type")


@pytest.mark.parametrize(
    "argv, category",
    [
        (["m", "--kv-transfer-config={not json"], contract_check.BAD_JSON),
        (["m", "--tensor_parallel_size=2"], None),  # vLLM treats '_' and '-' alike
        (["m", "--kv-transfer-config.kv_connector=OffloadingConnector"], None),  # dotted form
        (["m", "-tp", "2", "--enable-prefix-caching", "--no-enable-prefix-caching", "--disable-prefix-caching"], None),
        (["m", "extra-positional"], contract_check.UNEXPECTED_ARGUMENT),
        (["m", "--gpu-memory-utilization", "-0.5"], None),  # a negative number is a value, not a flag
    ],
)
def test_vllm_argv_forms(argv, category):
    problems = cs.check("vllm", argv)
    assert [p.code for p in problems] == ([category] if category else []), [str(p) for p in problems]


def test_lmcache_argv_must_be_the_lmcache_server_command():
    (problem,) = cs.check("lmcache", ["/opt/venv/bin/python", "-m", "lmcache.v1.multiprocess.server"])
    assert problem.code == contract_check.UNKNOWN_COMMAND


def test_external_connector_and_out_of_tree_tier_are_not_second_guessed():
    kv = {
        "kv_connector": "MyConnector",
        "kv_role": "kv_both",
        "kv_connector_module_path": "my.mod",
        "kv_connector_extra_config": {"anything": 1},
    }
    assert contract_check.check_kv_transfer_config(json.dumps(kv), cs.snapshots()) == []
    kv = {
        "kv_connector": "OffloadingConnector",
        "kv_role": "kv_both",
        "kv_connector_extra_config": {
            "cpu_bytes_to_use": 1,
            "spec_name": "TieringOffloadingSpec",
            "secondary_tiers": [{"type": "MyTier", "module_path": "my.mod", "x": 1}],
        },
    }
    assert contract_check.check_kv_transfer_config(json.dumps(kv), cs.snapshots()) == []


# ----------------------------------------------------------------------------- the live tier's venv


@pytest.fixture
def no_venv(tmp_path, monkeypatch):
    """A machine without the contract venv: an empty cache dir, no explicit interpreter."""
    monkeypatch.setenv("KVGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("KVGEN_ENV_CACHE_DIR", str(tmp_path))  # where scripts/contract-env.sh looks first
    monkeypatch.delenv(cs.PYTHON_ENV, raising=False)
    return tmp_path


@pytest.mark.parametrize("value", [None, "", "0"])
def test_missing_venv_skips_when_not_required(no_venv, monkeypatch, value):
    if value is None:
        monkeypatch.delenv(cs.REQUIRE_ENV, raising=False)
    else:
        monkeypatch.setenv(cs.REQUIRE_ENV, value)
    with pytest.raises(pytest.skip.Exception, match="scripts/contract-env.sh"):
        cs.contract_python_or_skip()


def test_missing_venv_fails_when_required(no_venv, monkeypatch):
    monkeypatch.setenv(cs.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="KVGEN_REQUIRE_CONTRACT is set"):
        cs.contract_python_or_skip()


def test_explicit_interpreter_that_does_not_exist_is_not_available(no_venv, monkeypatch):
    monkeypatch.setenv(cs.PYTHON_ENV, str(no_venv / "nope" / "python"))
    python, why = cs.contract_python()
    assert python is None and cs.PYTHON_ENV in why


@pytest.mark.heavy
def test_a_required_contract_run_without_the_venv_fails_instead_of_passing(no_venv):
    """End to end, as CI runs it: KVGEN_REQUIRE_CONTRACT=1 and no venv is a red run (exit 1),
    never a green run of skipped tests."""
    import os
    import subprocess
    import sys

    base = {k: v for k, v in os.environ.items() if k not in (cs.PYTHON_ENV, cs.REQUIRE_ENV)}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "contract",
        str(cs.ROOT / "tests" / "test_contract_live.py"),
        "-k",
        "pinned_versions",
    ]
    required = subprocess.run(cmd, capture_output=True, text=True, cwd=cs.ROOT, env={**base, cs.REQUIRE_ENV: "1"})
    assert required.returncode == 1, required.stdout[-2000:]
    assert "1 error" in required.stdout and "KVGEN_REQUIRE_CONTRACT is set" in required.stdout
