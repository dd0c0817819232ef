"""Shared by the two contract tiers (tests/test_contract_snapshot.py: snapshots, no venv;
tests/test_contract_live.py: the real parsers in the contract venv).

- the command lines kvgen renders for every example (and a few specs for constructs the
  examples do not reach), with the LMCache line completed by running the rendered launcher;
- the deliberately broken fixtures, each with what the snapshot check and what the real parser
  must say about it;
- locating the contract venv, and the one subprocess per session that runs the real parsers.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import contract_check
import lmcache_dist
import pytest
from conftest import BASE, EXAMPLES, ROOT, dump, kube_version_of

from kvgen.app.compiler import Compiled, compile_text
from kvgen.core import quantity
from kvgen.core.errors import Problem
from kvgen.data import catalog, connector, contract

CONTRACT_DIR = ROOT / "tests" / "contract"  # the live tier's runner and the capture module
LIVE_CHECK = CONTRACT_DIR / "live_check.py"
SNAPSHOT_DIR = ROOT / "charts" / "kvgen" / "files" / "contract"  # shipped: kvgen checks vllm.extraArgs with them
CONTRACT_ENV = ROOT / "scripts" / "contract-env.sh"
GiB = 1024**3

REQUIRE_ENV = "KVGEN_REQUIRE_CONTRACT"  # set (CI, scripts/test): a missing venv fails the contract tests
PYTHON_ENV = "KVGEN_CONTRACT_PYTHON"  # optional: the contract venv's python, instead of scripts/contract-env.sh --check


@cache
def snapshots() -> contract.Snapshots:
    rt = catalog.runtime()
    return contract.Snapshots.load(SNAPSHOT_DIR, str(rt["vllm"]["version"]), str(rt["lmcache"]["version"]))


# ----------------------------------------------------------------------------- rendered lines

# Specs for what kvgen emits but no example reaches: an LMCache disk tier on an existing claim
# (unknown size: the unbounded "fs" L2 adapter), one below 1 GiB (also "fs"), and the
# in-container launcher on every rank of a multi-node server, and a remote tier with a capacity.
EXTRA_SPECS: dict[str, dict[str, Any]] = {
    "lmcache-pvc-ref-tier": {
        **copy.deepcopy(BASE),
        "name": "lmcache-pvc-ref",
        "kvCacheOffloading": {
            "backend": "lmcache",
            "cpuMemoryUtilization": 0.5,
            "secondary": [{"fileSystem": {"pvc": {"ref": {"name": "shared-cephfs-pvc", "path": "kv/"}}}}],
        },
    },
    # gpuAccess in-container on a multi-node server: every rank's launcher line, workers headless
    "lmcache-in-container-multi-node": {
        **copy.deepcopy(BASE),
        "name": "in-container-multi-node",
        "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
        # the kubelet on the instance NVMe: a default EKS pool's 20 GiB would not hold the 134 GiB model cache
        "instance": {"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
        "parallelism": {"tensor": 16, "nodes": 2},
        "kvCacheOffloading": {"lmcache": {"gpuAccess": "in-container"}},
    },
    # a remote tier with a capacity (max_capacity_gb and the eviction block) in the vLLM container
    "lmcache-remote-capacity-in-container": {
        **copy.deepcopy(BASE),
        "name": "lmcache-remote-capacity",
        "kvCacheOffloading": {
            "backend": "lmcache",
            "cpuMemoryUtilization": 0.5,
            "lmcache": {"gpuAccess": "in-container"},
            "secondary": [{"fileSystem": {"emptyDir": {"size": "50Gi"}}}],
            "remote": {
                "url": "valkey://10.0.0.7:6380",
                "capacity": "200Gi",
                "passwordSecret": {"name": "valkey", "key": "password"},
            },
        },
    },
    "lmcache-two-tiers-arc": {
        **copy.deepcopy(BASE),
        "name": "lmcache-two-tiers",
        "kvCacheOffloading": {
            "backend": "lmcache",
            "cpu": "16Gi",
            "evictionPolicy": "arc",
            "secondary": [
                {"fileSystem": {"emptyDir": {"size": "512Mi"}}},
                {"fileSystem": {"emptyDir": {"size": "50Gi"}}},
            ],
        },
    },
}


@dataclass(frozen=True)
class Rendered:
    line: contract_check.CommandLine
    compiled: Compiled

    @property
    def id(self) -> str:
        return self.line.id

    @cached_property
    def argv(self) -> tuple[str, ...]:
        """vLLM: the container args; LMCache: what the launcher execs (it runs the launcher: asked
        for by the tests that use it, not at collection)."""
        if self.line.kind == "lmcache":
            return tuple(launcher_exec_argv(self.line, self.compiled))
        return tuple(self.line.argv)


class LauncherRefused(AssertionError):
    pass


def launcher_exec_argv(line: contract_check.CommandLine, compiled: Compiled) -> list[str]:
    """The argv the pod's launcher would start the server with: the launcher from the rendered
    ConfigMap, run in dry-run mode on a fake node whose host RAM is the instance's and whose
    cgroup limit is the memory limit of the container it runs in (the sidecar, or the vLLM
    container with gpuAccess in-container)."""
    (pod,) = [
        t["spec"]
        for o in compiled.objects
        for name, t, _env in contract_check.pod_templates(o)
        if name == line.workload
    ]
    (runs_in,) = [c for c in [*pod.get("initContainers", []), *pod["containers"]] if c["name"] == line.container]
    (volume,) = [
        v for v in pod["volumes"] if "configMap" in v and any(m["name"] == v["name"] for m in runs_in["volumeMounts"])
    ]
    (cm,) = [
        o for o in compiled.objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == volume["configMap"]["name"]
    ]
    script = cm["data"][connector.wiring()["launcher"]["file"]]
    limit = quantity.to_bytes(runs_in["resources"]["limits"]["memory"])
    with tempfile.TemporaryDirectory(prefix="kvgen-node-") as tmp:
        root = Path(tmp)
        (root / "proc").mkdir()
        kib = compiled.plan.instance.memory_bytes // 1024
        (root / "proc" / "meminfo").write_text(f"MemTotal: {kib} kB\nMemAvailable: {kib} kB\n")
        (root / "sys" / "fs" / "cgroup").mkdir(parents=True)
        (root / "sys" / "fs" / "cgroup" / "memory.max").write_text(f"{limit}\n")
        (root / connector.wiring()["launcher"]["file"]).write_text(script)
        # the image's LMCache: the pinned version, whose CUDA kernels load (the runtime image's, built against its torch)
        site = lmcache_dist.install(root / "site-packages", catalog.runtime()["lmcache"]["version"])
        lmcache_dist.install_kernels(site, loads=True)
        result = subprocess.run(
            [
                sys.executable,
                str(root / connector.wiring()["launcher"]["file"]),
                f"--proc-root={root}",
                "--dry-run",
                *line.launcher_args,
                "--",
                *line.argv,
            ],
            capture_output=True,
            text=True,
            env=lmcache_dist.env(site),
        )
    if result.returncode != 0:
        raise LauncherRefused(f"{line.id}: the launcher would not start the server: {result.stderr.strip()}")
    return json.loads(result.stdout)


@cache
def rendered() -> tuple[Rendered, ...]:
    """Every command line of every example and extra spec, as the runtimes would receive it."""
    sources = [(p.stem, p.read_text(encoding="utf-8"), str(p), kube_version_of(p)) for p in EXAMPLES]
    sources += [(name, dump(data), f"{name}.yaml", "1.33") for name, data in EXTRA_SPECS.items()]
    out = []
    for stem, text, file, version in sources:
        for compiled in compile_text(text, file, version):
            for line in contract_check.command_lines(compiled.objects, stem):
                out.append(Rendered(line, compiled))
    return tuple(out)


def kv_config(argv: tuple[str, ...] | list[str]) -> dict[str, Any] | None:
    for arg in argv:
        if arg.startswith("--kv-transfer-config="):
            return json.loads(arg.split("=", 1)[1])
    return None


# ----------------------------------------------------------------------------- broken fixtures


@dataclass(frozen=True)
class Broken:
    """A deliberately broken command line and what each tier must say about it.

    ``snapshot``: the exact set of problem categories kvgen.data.contract reports.
    ``stage`` / ``error``: where the real runtime rejects it (live_check.py's stage) and a
    substring of its message. ``stage=None`` marks a line the runtime accepts silently: only
    the snapshot check catches it (the reason that tier is stricter).
    """

    id: str
    kind: str
    argv: tuple[str, ...]
    snapshot: frozenset[str]
    stage: str | None
    error: str | None = None


def _base(kind: str, predicate: Callable[[Rendered], bool]) -> tuple[str, ...]:
    for r in rendered():
        if r.line.kind == kind and predicate(r):
            return r.argv
    raise AssertionError(f"no rendered {kind} line to build broken fixtures from")


def _lmcache_mp_line(r: Rendered) -> bool:
    return (kv_config(r.argv) or {}).get("kv_connector") == "LMCacheMPConnector"


def _tiering_line(r: Rendered) -> bool:
    extra = (kv_config(r.argv) or {}).get("kv_connector_extra_config", {})
    return extra.get("spec_name") == "TieringOffloadingSpec" and len(extra.get("secondary_tiers", [])) >= 1


def _multi_line(r: Rendered) -> bool:
    return (kv_config(r.argv) or {}).get("kv_connector") == "MultiConnector"


def _child(index: int, mutate: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """Change one MultiConnector child (a KVTransferConfig of its own)."""
    return lambda kv: mutate(kv["kv_connector_extra_config"]["connectors"][index])


def _l2_line(r: Rendered) -> bool:
    return "--l2-adapter" in r.argv


def _with_kv(argv: tuple[str, ...], mutate: Callable[[dict[str, Any]], None]) -> tuple[str, ...]:
    out = []
    for arg in argv:
        if arg.startswith("--kv-transfer-config="):
            data = json.loads(arg.split("=", 1)[1])
            mutate(data)
            arg = "--kv-transfer-config=" + connector.dumps(data)
        out.append(arg)
    return tuple(out)


def _replace(argv: tuple[str, ...], flag: str, value: str | None) -> tuple[str, ...]:
    """Set (or, with None, drop) the value of a '--flag value' or '--flag=value' option."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == flag:
            i += 2
            if value is not None:
                out += [flag, value]
            continue
        if arg.startswith(flag + "="):
            i += 1
            if value is not None:
                out.append(f"{flag}={value}")
            continue
        out.append(arg)
        i += 1
    return tuple(out)


def _replaced(**values: Any) -> Callable[[dict[str, Any]], None]:
    """A mutation that replaces the whole object with ``values``."""

    def mutate(d: dict[str, Any]) -> None:
        d.clear()
        d.update(values)

    return mutate


def _l2(argv: tuple[str, ...], mutate: Callable[[dict[str, Any]], None]) -> tuple[str, ...]:
    out = list(argv)
    i = out.index("--l2-adapter") + 1
    data = json.loads(out[i])
    mutate(data)
    out[i] = json.dumps(data)
    return tuple(out)


def _tier0(mutate: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda kv: mutate(kv["kv_connector_extra_config"]["secondary_tiers"][0])


def _extra(mutate: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda kv: mutate(kv["kv_connector_extra_config"])


@cache
def broken() -> tuple[Broken, ...]:
    c = contract_check
    mp = _base("vllm", _lmcache_mp_line)
    tiering = _base("vllm", _tiering_line)
    lm = _base("lmcache", _l2_line)
    multi = _base("vllm", _multi_line)
    return (
        # --- vLLM flags
        Broken(
            "vllm-swap-space",
            "vllm",
            (*mp, "--swap-space=4"),
            frozenset({c.UNKNOWN_FLAG}),
            "parse",
            "unrecognized arguments: --swap-space=4",
        ),
        Broken(
            "vllm-bad-choice",
            "vllm",
            (*mp, "--dtype=float7"),
            frozenset({c.BAD_CHOICE}),
            "parse",
            "invalid choice: 'float7'",
        ),
        Broken(
            "vllm-bad-int",
            "vllm",
            _replace(mp, "--tensor-parallel-size", "two"),
            frozenset({c.BAD_VALUE}),
            "parse",
            "invalid int value: 'two'",
        ),
        Broken(
            "vllm-missing-value",
            "vllm",
            (*mp, "--max-model-len"),
            frozenset({c.MISSING_VALUE}),
            "parse",
            "expected one argument",
        ),
        Broken(
            "vllm-switch-with-value",
            "vllm",
            (*mp, "--enable-prefix-caching=yes"),
            frozenset({c.UNEXPECTED_VALUE}),
            "parse",
            "ignored explicit argument 'yes'",
        ),
        # --- --kv-transfer-config
        Broken(
            "kv-buffer-size",
            "vllm",
            _with_kv(mp, lambda kv: kv.update(kv_buffer_size=1_000_000_000)),
            frozenset({c.UNKNOWN_KV_TRANSFER_KEY}),
            "parse",
            "kv_buffer_size",
        ),
        Broken(
            "kv-role-missing",
            "vllm",
            _with_kv(mp, lambda kv: kv.pop("kv_role")),
            frozenset({c.MISSING_KV_TRANSFER_KEY}),
            "parse",
            "Please specify kv_role",
        ),
        Broken(
            "kv-role-bad-choice",
            "vllm",
            _with_kv(mp, lambda kv: kv.update(kv_role="sideways")),
            frozenset({c.BAD_CHOICE}),
            "parse",
            "kv_role",
        ),
        Broken(
            "unregistered-connector",
            "vllm",
            _with_kv(mp, lambda kv: kv.update(kv_connector="SharedStorageConnector")),
            frozenset({c.UNREGISTERED_CONNECTOR}),
            "connector_registry",
            "SharedStorageConnector",
        ),
        # --- OffloadingConnector extra config
        Broken(
            "offloading-unknown-spec",
            "vllm",
            _with_kv(tiering, _extra(lambda e: e.update(spec_name="DiskOffloadingSpec"))),
            frozenset({c.UNKNOWN_SPEC}),
            "connector_config",
            "Unsupported spec type: DiskOffloadingSpec",
        ),
        Broken(
            "offloading-unknown-eviction-policy",
            "vllm",
            _with_kv(tiering, _extra(lambda e: e.update(eviction_policy="fifo"))),
            frozenset({c.UNKNOWN_EVICTION_POLICY}),
            "connector_config",
            "Unknown cache policy: 'fifo'",
        ),
        Broken(
            "offloading-unknown-tier-type",
            "vllm",
            _with_kv(tiering, _tier0(lambda t: t.update(type="disk"))),
            frozenset({c.UNKNOWN_TIER_TYPE}),
            "connector_config",
            "Unknown secondary tier type: 'disk'",
        ),
        Broken(
            "offloading-unknown-fs-key",
            "vllm",
            _with_kv(tiering, _tier0(lambda t: t.update(size="100Gi"))),
            frozenset({c.UNKNOWN_TIER_KEY}),
            "connector_config",
            "unexpected keyword argument 'size'",
        ),
        Broken(
            "offloading-fs-missing-root-dir",
            "vllm",
            _with_kv(tiering, _tier0(lambda t: t.pop("root_dir"))),
            frozenset({c.MISSING_TIER_KEY}),
            "connector_config",
            "missing a required argument: 'root_dir'",
        ),
        Broken(
            "offloading-fs-bad-locality",
            "vllm",
            _with_kv(tiering, _tier0(lambda t: t.update(locality="NEAR"))),
            frozenset({c.BAD_CHOICE}),
            None,
        ),  # Locality('NEAR') fails only when the tier is built
        # --- MultiConnector (prefill/decode with the native backend): each child is a KVTransferConfig
        Broken(
            "multi-child-unknown-key",
            "vllm",
            _with_kv(multi, _child(0, lambda k: k.update(kv_buffer_size=1))),
            frozenset({c.UNKNOWN_KV_TRANSFER_KEY}),
            "connector_config",
            "kv_buffer_size",
        ),
        Broken(
            "multi-child-unregistered",
            "vllm",
            _with_kv(multi, _child(0, lambda k: k.update(kv_connector="NixlConnectorV2"))),
            frozenset({c.UNREGISTERED_CONNECTOR}),
            "connector_config",
            "NixlConnectorV2",
        ),
        Broken(
            "multi-child-unknown-spec",
            "vllm",
            _with_kv(multi, _child(1, _extra(lambda e: e.update(spec_name="DiskOffloadingSpec")))),
            frozenset({c.UNKNOWN_SPEC}),
            "connector_config",
            "Unsupported spec type: DiskOffloadingSpec",
        ),
        Broken(
            "multi-no-children",
            "vllm",
            _with_kv(multi, _extra(lambda e: e.update(connectors=[]))),
            frozenset({c.MISSING_EXTRA_CONFIG_KEY}),
            "connector_config",
            "MultiConnector needs",
        ),
        # --- LMCache server flags
        Broken(
            "lmcache-no-eviction-policy",
            "lmcache",
            _replace(lm, "--eviction-policy", None),
            frozenset({c.MISSING_REQUIRED_FLAG}),
            "storage_manager_config",
            "Legacy L1 configuration requires --l1-size-gb and --eviction-policy",
        ),
        Broken(
            "lmcache-no-l1-size",
            "lmcache",
            _replace(lm, "--l1-size-gb", None),
            frozenset({c.MISSING_REQUIRED_FLAG}),
            "storage_manager_config",
            "Legacy L1 configuration requires --l1-size-gb and --eviction-policy",
        ),
        Broken(
            "lmcache-bad-eviction-policy",
            "lmcache",
            _replace(lm, "--eviction-policy", "FIFO"),
            frozenset({c.BAD_CHOICE}),
            "parse",
            "invalid choice: 'FIFO'",
        ),
        Broken(
            "lmcache-bad-port",
            "lmcache",
            _replace(lm, "--port", "abc"),
            frozenset({c.BAD_VALUE}),
            "parse",
            "invalid int value: 'abc'",
        ),
        Broken(
            "lmcache-old-cpu-buffer-size",
            "lmcache",
            (*lm, "--cpu-buffer-size", "10"),
            frozenset({c.UNKNOWN_FLAG}),
            "parse",
            "unrecognized arguments: --cpu-buffer-size 10",
        ),
        Broken(
            "lmcache-l1-manager-and-legacy",
            "lmcache",
            (*lm, "--l1-manager", '{"type":"DRAM","size_gb":4}'),
            frozenset({c.CONFLICTING_FLAGS}),
            "storage_manager_config",
            "Use either --l1-manager or legacy L1 flags",
        ),
        # --- LMCache L2 adapters
        Broken(
            "l2-unknown-type",
            "lmcache",
            _l2(lm, _replaced(type="disk", path="/mnt/kv-cache-0")),
            frozenset({c.UNKNOWN_L2_ADAPTER_TYPE}),
            "storage_manager_config",
            "unknown adapter type 'disk'",
        ),
        Broken(
            "l2-fs-wrong-key",
            "lmcache",
            _l2(lm, lambda d: d.update(base_dir=d.pop("base_path"))),
            frozenset({c.UNKNOWN_L2_ADAPTER_KEY, c.MISSING_L2_ADAPTER_KEY}),
            "storage_manager_config",
            "base_path must be a non-empty string",
        ),
        Broken(
            "l2-bad-eviction-policy",
            "lmcache",
            _l2(lm, lambda d: d.update(eviction={"eviction_policy": "lru"})),
            frozenset({c.BAD_CHOICE}),
            "storage_manager_config",
            "eviction.eviction_policy must be",
        ),
        Broken(
            "l2-resp-no-port",
            "lmcache",
            _l2(lm, _replaced(type="resp", host="valkey", shared=True)),
            frozenset({c.MISSING_L2_ADAPTER_KEY}),
            "storage_manager_config",
            "port must be a positive integer",
        ),
        # --- caught by the snapshot check only: the runtimes accept these silently
        Broken(
            "offloading-removed-num-cpu-blocks",
            "vllm",
            _with_kv(tiering, _extra(lambda e: e.update(num_cpu_blocks=1000))),
            frozenset({c.UNKNOWN_EXTRA_CONFIG_KEY}),
            None,
        ),
        Broken(
            "offloading-missing-cpu-bytes",
            "vllm",
            _with_kv(tiering, _extra(lambda e: e.pop("cpu_bytes_to_use"))),
            frozenset({c.MISSING_EXTRA_CONFIG_KEY}),
            None,
        ),  # fails only when the engine starts
        Broken(
            "lmcache-mp-unknown-key",
            "vllm",
            _with_kv(mp, _extra(lambda e: e.update({"lmcache.mp.hosts": "tcp://x"}))),
            frozenset({c.UNKNOWN_EXTRA_CONFIG_KEY}),
            None,
        ),
        Broken(
            "l2-resp-url-key",
            "lmcache",
            _l2(lm, _replaced(type="resp", host="valkey", port=6379, url="redis://valkey:6379")),
            frozenset({c.UNKNOWN_L2_ADAPTER_KEY}),
            None,
        ),  # LMCache ignores the key
        Broken(
            "l2-fs-native-typo",
            "lmcache",
            _l2(lm, lambda d: d.update(max_capacity_gbs=d.get("max_capacity_gb", 1))),
            frozenset({c.UNKNOWN_L2_ADAPTER_KEY}),
            None,
        ),
        Broken(
            "vllm-abbreviated-flag",
            "vllm",
            _replace(mp, "--tensor-parallel-size", None) + ("--tensor-parallel=2",),
            frozenset({c.UNKNOWN_FLAG}),
            None,
        ),  # argparse accepts a unique prefix
    )


# ----------------------------------------------------------------------------- a spec's vllm.extraArgs

# what users write in vllm.extraArgs, and what kvgen (kvgen.plan.extra_args.check_extra_args) says about it:
# accepted as vLLM reads it (its own rewriting included), or refused with these problem codes. The
# live tier holds vLLM to the same verdicts: kvgen never refuses an argument vLLM accepts.
EXTRA_ARGS_ACCEPTED: dict[str, tuple[str, ...]] = {
    "underscores": ("--enforce_eager", "--max_num_seqs=64"),
    "separate-values": ("--max-num-seqs", "64", "--served-model-name", "chat", "chat-2"),
    "optimization-level": ("-O3",),
    "optimization-level-apart": ("-O", "2"),
    "short-option-with-its-value": ("-qfp8",),
    "negative-number": ("--seed=-5",),
    "dotted-json-key": ("-cc.mode=3",),
    "int-choice-written-loosely": ("--max-lora-rank= 8 ",),
    "python-number-literals": ("--max-num-seqs=1_000", "--cpu-offload-gb=.5e1"),
}
EXTRA_ARGS_REFUSED: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "removed-flag": (("--swap-space=4",), frozenset({contract_check.UNKNOWN_FLAG})),
    "abbreviation": (("--max-num-seq=64",), frozenset({contract_check.UNKNOWN_FLAG})),
    "bad-choice": (("--dtype", "float7"), frozenset({contract_check.BAD_CHOICE})),
    "bad-int": (("--max-num-seqs=abc",), frozenset({contract_check.BAD_VALUE})),
    "bad-float": (("--cpu-offload-gb=1,5",), frozenset({contract_check.BAD_VALUE})),
    "switch-with-value": (("--enforce-eager=yes",), frozenset({contract_check.UNEXPECTED_VALUE})),
    "missing-value": (("--max-num-seqs",), frozenset({contract_check.MISSING_VALUE})),
    "stray-positional": (("--enforce-eager", "yes"), frozenset({contract_check.UNEXPECTED_ARGUMENT})),
}


def extra_args_base() -> tuple[str, ...]:
    """A rendered vLLM line (single node, lmcache) the extraArgs cases are appended to."""
    return _base("vllm", lambda r: _lmcache_mp_line(r) and not any(a.startswith("--nnodes") for a in r.argv))


def check(kind: str, argv: tuple[str, ...] | list[str]) -> list[Problem]:
    fn = contract_check.check_vllm_argv if kind == "vllm" else contract_check.check_lmcache_argv
    return fn(list(argv), snapshots())


# ----------------------------------------------------------------------------- the contract venv


def required() -> bool:
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def contract_python() -> tuple[str | None, str]:
    """(the contract venv's python, "") or (None, why it is not available). Builds nothing."""
    explicit = os.environ.get(PYTHON_ENV)
    if explicit:
        return (
            (explicit, "") if os.access(explicit, os.X_OK) else (None, f"{PYTHON_ENV}={explicit} is not an executable")
        )
    result = subprocess.run([str(CONTRACT_ENV), "--check"], capture_output=True, text=True)
    if result.returncode != 0:
        return (
            None,
            f"the contract venv is not built ({result.stderr.strip() or 'scripts/contract-env.sh --check failed'})",
        )
    return result.stdout.strip().splitlines()[-1], ""


def contract_python_or_skip() -> str:
    """The contract venv's python; otherwise skip, or FAIL when KVGEN_REQUIRE_CONTRACT is set
    (CI sets it, so a contract test can never pass by being skipped there)."""
    python, why = contract_python()
    if python is None:
        message = f"{why}; build it with scripts/contract-env.sh"
        if required():
            pytest.fail(f"{REQUIRE_ENV} is set but {message}", pytrace=False)
        pytest.skip(f"{message} (set {REQUIRE_ENV}=1 to make this a failure)")
    return python


def run_live(python: str, lines: list[dict[str, Any]], capture: bool = False) -> dict[str, Any]:
    """One run of tests/contract/live_check.py in the contract venv over all ``lines``."""
    with tempfile.TemporaryDirectory(prefix="kvgen-live-") as tmp:
        batch, output = Path(tmp) / "batch.json", Path(tmp) / "result.json"
        batch.write_text(json.dumps({"lines": lines}), encoding="utf-8")
        env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "LMCACHE_DISABLE_BANNER": "1", "PYTHONPATH": ""}
        result = subprocess.run(
            [python, str(LIVE_CHECK), str(batch), str(output), *(["--capture"] if capture else [])],
            capture_output=True,
            text=True,
            cwd=tmp,
            env=env,
        )
        if result.returncode != 0 or not output.exists():
            raise AssertionError(f"live_check.py failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
        return json.loads(output.read_text(encoding="utf-8"))
