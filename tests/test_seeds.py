"""The numbers the seed documents give hold in kvgen's output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT, compile_spec, container, kv_transfer_config, spec, workload

from kvgen.core import quantity

LAUNCHER = ROOT / "charts" / "kvgen" / "files" / "lmcache_launcher.py"
GiB = 1024**3


def fake_node(tmp_path, available_kib: int, cgroup_v2: str | None = "max"):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "meminfo").write_text(f"MemTotal: {available_kib * 2} kB\nMemAvailable: {available_kib} kB\n")
    if cgroup_v2 is not None:
        (tmp_path / "sys" / "fs" / "cgroup").mkdir(parents=True)
        (tmp_path / "sys" / "fs" / "cgroup" / "memory.max").write_text(cgroup_v2 + "\n")
    return tmp_path


def test_kaito_l1_formula_400gib_half_tp2_is_100gib(tmp_path):
    root = fake_node(tmp_path, 400 * 1024 * 1024)
    out = subprocess.run(
        [
            sys.executable,
            str(LAUNCHER),
            "--utilization=0.5",
            "--utilization-scope=rank",  # KAITO's arithmetic (kvgen's KAITO input renders it)
            "--tensor-parallel-size=2",
            f"--proc-root={root}",
            "--dry-run",
            "--",
            "lmcache",
            "server",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)[-2:] == ["--l1-size-gb", "100.00"]
    assert (
        "Offload KV cache to LMCache MP server: 1.00 GB initial, 100.00 GB final (utilization=0.5, tp=2)" in out.stderr
    )


def test_kaito_seed_spec_wires_lmcache_mp_connector_and_lazy_l1():
    c = compile_spec(spec(model={"id": "google/gemma-4-12B-it"}, kvCacheOffloading={"cpuMemoryUtilization": 0.25}))
    assert kv_transfer_config(c) == {
        "kv_connector": "LMCacheMPConnector",
        "kv_role": "kv_both",
        "kv_connector_extra_config": {"lmcache.mp.host": "tcp://127.0.0.1", "lmcache.mp.port": 5555},
    }
    side = container(c, "lmcache-mp-server")
    assert side["restartPolicy"] == "Always"
    args = side["args"]
    assert "--utilization=0.25" in args and "--tensor-parallel-size=1" in args
    server = args[args.index("--") + 1 :]
    assert server[:2] == ["lmcache", "server"]
    assert "--l1-use-lazy" in server and server[server.index("--l1-init-size-gb") + 1] == "1"
    assert "--l1-size-gb" not in server  # the launcher measures and adds it at start-up


def test_kserve_cpu_10gi_is_cpu_bytes_to_use_10737418240():
    c = compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "evictionPolicy": "lru"}))
    extra = kv_transfer_config(c)["kv_connector_extra_config"]
    assert extra["cpu_bytes_to_use"] == 10737418240
    assert extra["eviction_policy"] == "lru"
    assert extra["spec_name"] == "CPUOffloadingSpec"
    assert kv_transfer_config(c)["kv_role"] == "kv_both"


def test_kserve_emptydir_requests_its_size_as_ephemeral_storage():
    tiers = [{"fileSystem": {"emptyDir": {"size": "100Gi"}}}]
    with_tier = compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "secondary": tiers}))
    without = compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi"}))
    eph = lambda c: quantity.to_bytes(container(c, "vllm")["resources"]["requests"]["ephemeral-storage"])  # noqa: E731
    assert eph(with_tier) - eph(without) == 100 * GiB
    volumes = {v["name"]: v for v in workload(with_tier)["spec"]["template"]["spec"]["volumes"]}
    assert volumes["kv-cache-secondary-0"] == {"name": "kv-cache-secondary-0", "emptyDir": {"sizeLimit": "100Gi"}}


def test_kserve_two_tiers_mount_at_kv_cache_0_and_1():
    tiers = [
        {"fileSystem": {"emptyDir": {"size": "200Gi"}}},
        {"fileSystem": {"pvc": {"ref": {"name": "shared-cephfs-pvc"}}}},
    ]
    c = compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "secondary": tiers}))
    mounts = {m["name"]: m for m in container(c, "vllm")["volumeMounts"]}
    assert mounts["kv-cache-secondary-0"]["mountPath"] == "/mnt/kv-cache-0"
    assert mounts["kv-cache-secondary-1"]["mountPath"] == "/mnt/kv-cache-1"
    extra = kv_transfer_config(c)["kv_connector_extra_config"]
    assert extra["spec_name"] == "TieringOffloadingSpec"
    assert extra["secondary_tiers"] == [
        {"type": "fs", "root_dir": "/mnt/kv-cache-0"},
        {"type": "fs", "root_dir": "/mnt/kv-cache-1"},
    ]
    volumes = {v["name"]: v for v in workload(c)["spec"]["template"]["spec"]["volumes"]}
    assert volumes["kv-cache-secondary-1"]["persistentVolumeClaim"] == {"claimName": "shared-cephfs-pvc"}


def test_kserve_pvc_spec_becomes_an_ephemeral_claim_template():
    # the KServe guide's snippet plus accessModes, which the API server requires of every claim
    pvc_spec = {
        "storageClassName": "fast-local-nvme",
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "100Gi"}},
    }
    c = compile_spec(
        spec(
            kvCacheOffloading={
                "backend": "native",
                "cpu": "10Gi",
                "secondary": [{"fileSystem": {"pvc": {"spec": pvc_spec}}}],
            }
        )
    )
    volumes = {v["name"]: v for v in workload(c)["spec"]["template"]["spec"]["volumes"]}
    assert volumes["kv-cache-secondary-0"]["ephemeral"] == {"volumeClaimTemplate": {"spec": pvc_spec}}
    # an ephemeral claim is not node-local disk: no ephemeral-storage is requested for it
    assert quantity.to_bytes(container(c, "vllm")["resources"]["requests"]["ephemeral-storage"]) < 100 * GiB


def test_kserve_pvc_ref_path_is_a_subpath():
    tier = {"fileSystem": {"pvc": {"ref": {"name": "my-kv-cache-pvc", "path": "kv-cache/"}}}}
    c = compile_spec(spec(kvCacheOffloading={"backend": "native", "cpu": "10Gi", "secondary": [tier]}))
    (mount,) = [m for m in container(c, "vllm")["volumeMounts"] if m["name"] == "kv-cache-secondary-0"]
    assert mount == {"name": "kv-cache-secondary-0", "mountPath": "/mnt/kv-cache-0", "subPath": "kv-cache/"}


@pytest.mark.parametrize("size", ["10Gi", "100Gi", "512Mi"])
def test_native_dev_shm_holds_the_cpu_tier(size):
    """vLLM keeps the native CPU tier in /dev/shm and refuses to start without room for it."""
    c = compile_spec(
        spec(kvCacheOffloading={"backend": "native", "cpu": size}, instance={"type": "Standard_ND96amsr_A100_v4"})
    )
    (dshm,) = [v for v in workload(c)["spec"]["template"]["spec"]["volumes"] if v["name"] == "dshm"]
    assert dshm["emptyDir"]["medium"] == "Memory"
    assert quantity.to_bytes(dshm["emptyDir"]["sizeLimit"]) >= quantity.to_bytes(size)
