"""`kvgen explain`, the planning view: KV-cache capacity of each tier checked against numbers
computed by hand from the catalogs, the memory and disk budgets, --output json and --svg."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import helm
import pytest
from conftest import EXAMPLES, ROOT, compile_spec, kube_version_of, run_kvgen, spec
from gpu_profile import non_kv
from parity import PLAN

from kvgen import __version__
from kvgen.app import explain
from kvgen.app.compiler import compile_inputs
from kvgen.input.dialects import Options

GiB, MiB = 1024**3, 1024**2
GEMMA = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
GEMMA_SEED = ROOT / "examples" / "seeds" / "kaito-gemma-4-12b.yaml"
DEEPSEEK = ROOT / "examples" / "deepseek-v3-mla.yaml"


def report_of(path, instance=None):
    (c,) = compile_inputs([(str(path), path.read_text())], kube_version_of(path), options=Options(instance)).compiled
    return explain.report(c.plan, c.conversion, c.source)


def tiers(report):
    return {t["tier"]: t for t in report["kvCache"]["tiers"]}


def allocatable(ram_gib: int) -> int:
    """Node RAM minus kube-reserved (25% of the first 4 GiB, 20% of the next 4, 10% of the next 8,
    6% of the next 112, 2% of the rest) minus the 100 MiB eviction threshold."""
    reserved = 0.25 * 4 + 0.20 * 4 + 0.10 * 8 + 0.06 * 112 + 0.02 * (ram_gib - 128)
    return ram_gib * GiB - math.ceil(reserved * GiB) - 100 * MiB


# ----------------------------------------------------------------------------- hand-computed capacities


@pytest.mark.parametrize("path", [GEMMA, GEMMA_SEED], ids=["native", "kaito-seed"])
def test_gemma_tokens_per_tier_match_the_hand_computation(path):
    """gemma-4-12B-it (40 sliding layers of 8 KV heads x 256, 8 full layers of 2 KV heads x 512,
    window 1024, 23 GiB of weights, 262144 tokens) on Standard_NC24ads_A100_v4 (1 x 80 GiB A100, which
    reports 81,050 MiB to CUDA; 220 GiB RAM), TP 1, bf16 KV, utilization 0.25."""
    r = report_of(path)
    per_token = 8 * 2 * 2 * 512 * 2 + 40 * 2 * 8 * 256 * 2  # every layer x (K, V) x KV heads x head dim x 2 bytes
    assert per_token == 360_448
    assert r["kvCache"]["bytesPerTokenPerGpu"] == r["kvCache"]["podBytesPerToken"] == per_token
    # GPU: 81,050 MiB (as the A100 reports it) x 0.84 (KAITO's gpu-memory-utilization for an A100), minus
    # what vLLM's profiling charges (gemma-4-12B's config: hidden 3840, intermediate 15360, vocab 262144,
    # 48 layers), x 90%
    gpu = (81_050 * MiB * 840_000 // 1_000_000 - non_kv(23 * GiB, 3840, 15360, 262144, 48)) * 90 // 100
    assert gpu == 40_246_970_029 and gpu // per_token == 111_658
    # CPU (LMCache L1): allocatable RAM x 0.25 / TP 1, whole MiB
    cpu = int(allocatable(220) * 0.25) // MiB * MiB
    assert cpu == 53_438 * MiB and cpu // per_token == 155_456
    t = tiers(r)
    assert (t["gpu"]["bytes"], t["gpu"]["tokens"]) == (gpu, 111_658)
    assert (t["cpu"]["bytes"], t["cpu"]["tokens"], t["cpu"]["kind"]) == (cpu, 155_456, "lmcache")
    # the model's 262144 tokens fit: a sliding layer keeps at most 1023 + 2 x 2048 in-flight tokens,
    # so one sequence costs 32,768 x (262,144 + 256) + 327,680 x (5,119 + 256) bytes: 3 fit the GPU
    assert r["kvCache"]["maxModelLen"] == 262_144 and r["kvCache"]["context"]["flag"] is None
    assert t["gpu"]["sequences"] == gpu // (32_768 * (262_144 + 256) + 327_680 * (5_119 + 256)) == 3
    assert t["cpu"]["sequences"] == 155_456 // 262_144 == 0
    assert r["kvCache"]["cpuLargerThanGpu"] is True  # 52.2 GiB > 37.5 GiB: no mirror warning
    assert not any("not larger than the GPU KV cache" in w for w in r["warnings"])


def test_gemma_with_a_shorter_max_model_len_counts_full_length_sequences():
    c = compile_spec(
        spec(
            model={"id": "google/gemma-4-12B-it", "maxModelLen": 32768},
            kvCacheOffloading={"cpuMemoryUtilization": 0.25},
        )
    )
    t = tiers(explain.report(c.plan))
    one = 32_768 * (32_768 + 256) + 327_680 * (5_119 + 256)  # what one sequence of 32768 tokens costs on the GPU
    gpu = (81_050 * MiB * 920_000 // 1_000_000 - non_kv(23 * GiB, 3840, 15360, 262144, 48)) * 90 // 100
    assert (t["gpu"]["sequences"], t["cpu"]["sequences"]) == (gpu // one, 155_456 // 32768) == (16, 4)


def test_deepseek_v3_mla_tokens_per_tier_match_the_hand_computation():
    """DeepSeek-V3 (MLA: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64), no K/V factor 2,
    one copy per tensor-parallel rank; 642 GiB of weights) on Standard_ND96isr_H200_v5
    (8 x 141 GiB H200, which report 143,155 MiB to CUDA; 1850 GiB RAM), TP 8, max-model-len 65536,
    utilization 0.5."""
    r = report_of(DEEPSEEK)
    per_rank = 61 * (512 + 64) * 2
    assert per_rank == 70_272 and r["kvCache"]["bytesPerTokenPerGpu"] == per_rank  # not divided by TP
    pod = per_rank * 8
    assert r["kvCache"]["podBytesPerToken"] == pod == 562_176
    # an H200 (141 GB) runs vLLM's 8192 batched tokens and 1024 sequences; DeepSeek-V3's config: hidden 7168,
    # 256 experts of 2048 (8 a token), vocab 129280
    usable = 143_155 * MiB * 920_000 // 1_000_000
    per_gpu = (usable - non_kv(642 * GiB, 7168, 2048, 129280, 61, tp=8, k=8, n=8192, seqs=1024)) * 90 // 100
    assert per_gpu == 43_767_553_051
    gpu = per_gpu * 8
    cpu = int(allocatable(1850) * 0.5) // MiB * MiB  # the pod's share for the whole tier, not divided by TP
    t = tiers(r)
    # full-length sequences on the GPU: one of 65536 tokens costs 70,272 x (65,536 + 256) bytes on every rank
    assert (t["gpu"]["bytes"], t["gpu"]["tokens"], t["gpu"]["sequences"]) == (
        gpu,
        622_830,
        per_gpu // (70_272 * 65_792),
    )
    assert t["gpu"]["sequences"] == 9
    assert (t["cpu"]["bytes"], t["cpu"]["tokens"], t["cpu"]["sequences"]) == (cpu, cpu // pod, cpu // (pod * 65_536))
    assert gpu // pod == 622_830 and cpu // pod == 1_724_841
    # issue 32 finding 8: at TP 8 the tier was 113 GiB (RAM x 0.5 / 8), behind 303 GiB of GPU KV cache, and
    # kvgen warned that it only mirrored the GPU; the pod's half of the RAM is 903 GiB, three times the GPU's
    assert r["kvCache"]["cpuLargerThanGpu"] is True
    assert not any("is not larger than the GPU KV cache" in w for w in r["warnings"])


def test_tensor_parallel_shards_standard_attention_but_not_mla():
    llama_tp1 = compile_spec(spec(instance={"type": "Standard_NC48ads_A100_v4"}))
    llama_tp2 = compile_spec(spec(instance={"type": "Standard_NC48ads_A100_v4"}, parallelism={"tensor": 2}))
    one, two = (explain.report(c.plan)["kvCache"] for c in (llama_tp1, llama_tp2))
    assert one["bytesPerTokenPerGpu"] == 32 * 8 * 128 * 2 * 2 == 2 * two["bytesPerTokenPerGpu"]
    assert one["podBytesPerToken"] == two["podBytesPerToken"]  # the whole token is the same size


def test_disk_tiers_are_counted_in_tokens_and_an_existing_claim_is_unknown():
    r = report_of(ROOT / "examples" / "kserve-mixed-tiers.yaml")
    t = tiers(r)
    per_token = 28 * 4 * 128 * 2 * 2  # Qwen2.5-7B
    assert r["kvCache"]["podBytesPerToken"] == per_token
    assert (t["cpu"]["bytes"], t["cpu"]["tokens"]) == (20 * GiB, 20 * GiB // per_token)
    assert (t["disk-0"]["kind"], t["disk-0"]["path"], t["disk-0"]["tokens"]) == (
        "emptyDir",
        "/mnt/kv-cache-0",
        200 * GiB // per_token,
    )
    assert t["disk-0"]["sequences"] == 200 * GiB // per_token // 32768
    assert (t["disk-1"]["kind"], t["disk-1"]["bytes"], t["disk-1"]["tokens"]) == ("pvc-ref", None, None)
    assert r["kvCache"]["totalTokens"] is None


def test_disabled_offloading_has_only_the_gpu_tier():
    r = report_of(ROOT / "examples" / "rule-mig-partition.yaml")
    assert [t["tier"] for t in r["kvCache"]["tiers"]] == ["gpu"]


# ----------------------------------------------------------------------------- budgets


@pytest.mark.heavy
@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_memory_items_add_up_to_what_sizing_computes(example):
    r = report_of(example)
    mem = r["memory"]
    by_container = {c["name"]: c for c in mem["containers"]}
    for name, c in by_container.items():
        total = sum(i["bytes"] for i in mem["items"] if i["container"] == name and not i["soft"])
        assert total == c["computedBytes"]
        if not c["explicit"]:
            assert c["requestBytes"] == total, f"{example.name}: {name} items drifted from kvgen.plan.sizing"
    assert mem["requestBytes"] == r["sizing"]["podMemoryBytes"]
    assert mem["fits"] == (mem["requestBytes"] <= mem["allocatableBytes"])


def test_gemma_memory_and_disk_budget():
    r = report_of(GEMMA)
    mem = r["memory"]
    items = {(i["container"], i["item"]): i["bytes"] for i in mem["items"]}
    assert items[("vllm", "model-loading")] == 23 * GiB  # soft: the weights' page cache, not requested
    assert [i["item"] for i in mem["items"] if i["soft"]] == ["model-loading"] and mem["softBytes"] == 23 * GiB
    assert items[("vllm", "runtime")] == 4 * GiB and items[("vllm", "gpu-workers")] == 4 * GiB
    assert items[("vllm", "shm")] == 1 * GiB
    assert (
        items[("vllm", "mm-processor-cache")] == 4 * GiB
    )  # gemma takes images: vLLM's processor cache, in the engine core
    assert items[("lmcache-mp-server", "cpu-tier")] == 53_438 * MiB
    assert items[("lmcache-mp-server", "runtime")] == 5 * GiB
    assert mem["allocatableBytes"] == allocatable(220)
    assert mem["requestBytes"] == (13 + 58) * GiB and mem["fits"]
    disk = r["disk"]
    assert disk["localDiskBytes"] == 960 * GiB  # NVMe, not the kubelet's on a default AKS pool
    assert disk["ephemeralStorageBytes"] == 512 * GiB and disk["ephemeralStorageSource"] == "default OS disk"
    assert disk["assumption"] == (  # issue 36: the node pool's OS disk, said before it fails
        "the kubelet's ephemeral storage on Standard_NC24ads_A100_v4 is its default node pool's OS disk, 512Gi (AKS: "
        "64 GiB temp storage < 128 GiB, so a managed OS disk for 24 vCPUs (P20, 512 GiB)); if your node pool's "
        "differs, set instance.ephemeralStorage to its size"
    )
    assert disk["allocatableBytes"] == 512 * GiB - 512 * GiB // 10
    assert disk["items"] == [{"item": "model-cache", "label": "model download cache (emptyDir)", "bytes": 25 * GiB}]
    assert disk["fits"] is True


def test_explicit_resources_are_shown_as_such():
    r = report_of(ROOT / "examples" / "kserve-qwen2-7b.yaml")
    (vllm,) = r["memory"]["containers"]
    assert vllm["explicit"] and vllm["requestBytes"] == 32 * GiB and vllm["limitBytes"] == 64 * GiB
    assert vllm["computedBytes"] == 19 * GiB  # 4 + 4 + 1 (/dev/shm) + 10 (CPU tier in /dev/shm); the weights are soft


# ----------------------------------------------------------------------------- GPU access


def test_gpu_access_states_the_mode_its_requirement_and_the_server_image():
    from kvgen.plan import gpu_access

    r = report_of(ROOT / "examples" / "lmcache-dra.yaml")
    row = gpu_access.modes()["dra"]
    assert r["gpuAccess"] == {
        "mode": "dra",
        "summary": " ".join(row["summary"].split()),
        "requirement": " ".join(row["requirement"].split()),
        "deviceClassName": "gpu.nvidia.com",
        "minKubeVersion": "1.34",
        "serverImage": f"ghcr.io/kvgen-dev/vllm-lmcache:{__version__}",
        "sameImageAsVllm": True,
    }
    assert report_of(GEMMA)["gpuAccess"]["mode"] == "visible-devices"
    assert report_of(ROOT / "examples" / "native-arc-eviction.yaml")["gpuAccess"] is None
    other = explain.report(
        compile_spec(spec(images={"lmcache": {"repository": "lmcache/standalone", "tag": "v0.5.6"}})).plan
    )
    assert (
        other["gpuAccess"]["serverImage"] == "lmcache/standalone:v0.5.6"
        and other["gpuAccess"]["sameImageAsVllm"] is False
    )


def test_in_container_memory_is_one_container_holding_the_servers_items():
    r = report_of(ROOT / "examples" / "lmcache-in-container.yaml")
    mem = r["memory"]
    (vllm,) = mem["containers"]
    assert vllm["name"] == "vllm" and not vllm["explicit"]
    assert {i["container"] for i in mem["items"]} == {"vllm"}
    items = {i["item"]: i for i in mem["items"]}
    assert items["lmcache-cpu-tier"]["label"] == "CPU tier (LMCache L1, in the vLLM container)"
    assert items["lmcache-runtime"]["bytes"] == 5 * GiB
    assert vllm["requestBytes"] == sum(i["bytes"] for i in mem["items"] if not i["soft"]) == mem["requestBytes"]
    assert [row["item"] for row in r["sizing"]["memory"]] == ["vLLM container (with the LMCache server)"]


@pytest.mark.heavy
def test_text_output_states_the_gpu_access_mode_and_its_requirement():
    result = run_kvgen(
        "explain", "--kube-version", "1.34", str(ROOT / "examples" / "lmcache-dra.yaml"), env={"COLUMNS": "250"}
    )
    assert result.returncode == 0, result.stderr
    assert "LMCache GPU access: dra: a native sidecar that shares the pod's GPUs" in result.stdout
    assert "requires: Kubernetes 1.34 or newer (resource.k8s.io/v1)" in result.stdout
    assert f"LMCache server image: ghcr.io/kvgen-dev/vllm-lmcache:{__version__} (the vLLM image)" in result.stdout


# ----------------------------------------------------------------------------- command line


TOP_LEVEL_KEYS = {
    "version",
    "plan",
    "name",
    "namespace",
    "input",
    "model",
    "instance",
    "parallelism",
    "decision",
    "routing",
    "gpuAccess",
    "sizing",
    "memory",
    "disk",
    "kvCache",
    "lora",
    "warnings",
    "fits",
    "problems",
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["routing-gateway", "lmcache-in-container", "shared-valkey-tier", "lmcache-dra"])
def test_json_output_carries_the_plan_document_the_chart_writes(name):
    """explain -o json's plan is the plan document, the same that the chart's plan writes (kvgen.planDocument)."""
    (example,) = [p for p in EXAMPLES if p.stem == name]
    version = kube_version_of(example)
    result = run_kvgen("explain", "--output", "json", "--kube-version", version, str(example))
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)["plan"]
    PLAN.validate_python(plan)
    assert helm.first_difference(plan, helm.plan(helm.values_of(example), kube_version=version)) is None
    assert plan["warnings"] == json.loads(result.stdout)["warnings"]


@pytest.mark.heavy
def test_json_output_has_stable_keys_and_the_hand_computed_tokens():
    result = run_kvgen("explain", "--output", "json", str(GEMMA), str(DEEPSEEK))
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout)
    assert [r["name"] for r in reports] == ["gemma-4-12b", "deepseek-v3"]
    for r in reports:
        assert set(r) == TOP_LEVEL_KEYS and r["version"] == 1
        assert set(r["kvCache"]) >= {
            "dtypeBytes",
            "bytesPerTokenPerGpu",
            "podBytesPerToken",
            "maxModelLen",
            "tiers",
            "cpuLargerThanGpu",
        }
        for t in r["kvCache"]["tiers"]:
            assert set(t) >= {"tier", "kind", "bytes", "tokens", "sequences"}
        assert set(r["memory"]) >= {"allocatableBytes", "requestBytes", "freeBytes", "fits", "containers", "items"}
        assert set(r["disk"]) >= {
            "localDiskBytes",
            "ephemeralStorageBytes",
            "allocatableBytes",
            "requestBytes",
            "fits",
            "items",
            "claims",
        }
        assert set(r["kvCache"]["context"]) >= {
            "modelMaxLen",
            "requested",
            "fits",
            "served",
            "flag",
            "planned",
            "budgetBytesPerGpu",
        }
    assert [t["tokens"] for t in reports[0]["kvCache"]["tiers"]] == [111_658, 155_456]
    assert [t["tokens"] for t in reports[1]["kvCache"]["tiers"]] == [622_830, 1_724_841]  # the pod's RAM x 0.5, at TP 8


@pytest.mark.heavy
def test_json_of_a_translated_input_says_where_it_came_from():
    result = run_kvgen("explain", "--output", "json", str(GEMMA_SEED))
    r = json.loads(result.stdout)
    assert r["input"]["format"] == "kaito" and r["input"]["kind"] == "InferenceSet"
    assert any("spec.labelSelector" in w for w in r["input"]["warnings"])
    assert [t["tokens"] for t in r["kvCache"]["tiers"]] == [111_658, 155_456]


@pytest.mark.heavy
def test_text_output_has_tables_and_a_bar_per_budget():
    result = run_kvgen("explain", str(GEMMA), env={"COLUMNS": "140"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Sizing: memory budget of one pod" in out and "Disk budget" in out and "KV-cache capacity" in out
    assert "memory █" in out and "71.0 GiB of 208.7 GiB (34%)" in out
    assert "disk   █" in out and "25.0 GiB of 460.8 GiB (5%)" in out
    assert "111,658" in out and "155,456" in out
    assert "(23.0 GiB)" in out  # the soft page cache, in parentheses


@pytest.mark.heavy
def test_svg_is_written(tmp_path):
    target = tmp_path / "plan.svg"
    result = run_kvgen("explain", str(DEEPSEEK), "--svg", str(target), "--output", "json")
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)  # stdout stays machine-readable
    svg = target.read_text()
    assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "KV-cache" in svg and "622,830" in svg


def _plain_env() -> dict[str, str]:
    """The environment of a pipe into another program: no COLUMNS asking for a width."""
    import os

    return {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


@pytest.mark.heavy
def test_text_output_into_a_pipe_is_not_wrapped():
    """Into a pipe (grep, less, a CI log) every line is whole: rich would wrap at 80 columns."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "kvgen", "explain", str(ROOT / "examples" / "lmcache-tp2.yaml")],
        capture_output=True,  # stdout is a pipe
        text=True,
        env=_plain_env(),
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "qwen3-32b-tp2: Qwen/Qwen3-32B on Standard_NC48ads_A100_v4: KV-cache offloading enabled (lmcache backend)"
    )
    reason = "hybrid Mamba/linear-attention models need extra configuration; without it LMCache can return corrupt KV"
    assert any(reason in line for line in lines)
    assert any(line.startswith("  requires: ") and line.endswith("it sees theirs too") for line in lines)
    assert max(len(line) for line in lines) > 80
    assert all(line == line.rstrip() for line in lines)  # no padding to a width
    assert "\x1b[" not in result.stdout  # no colour


@pytest.mark.heavy
def test_text_output_on_a_terminal_fits_the_terminal():
    """On a terminal the view keeps rich's behaviour: wrapped to the terminal's width."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 100, 0, 0))  # 50 rows, 100 columns
    env = {**_plain_env(), "TERM": "xterm-256color"}  # rich takes a dumb terminal as 80 columns
    proc = subprocess.Popen(
        [sys.executable, "-m", "kvgen", "explain", str(ROOT / "examples" / "lmcache-tp2.yaml")],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=120) == 0
    os.close(leader)
    text = b"".join(chunks).decode("utf-8")
    import re

    lines = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line) for line in text.replace("\r\n", "\n").splitlines()]
    assert lines and max(len(line) for line in lines) <= 100
    assert any(len(line) > 80 for line in lines)  # the terminal's width, not 80


# ----------------------------------------------------------------------------- a spec that does not fit

HEAD_8B = "name: demo\nmodel:\n  id: meta-llama/Llama-3.1-8B-Instruct\ninstance:\n  type: Standard_NC24ads_A100_v4\n"
UNFIT = {  # a spec whose pod does not fit its node -> (the line marked in the text view, the problem's code)
    "cpu-tier-beyond-the-ram": (
        HEAD_8B + "kvCacheOffloading:\n  backend: native\n  cpu: 500Gi\n",
        ["✗ CPU tier (native, in /dev/shm)", "✗ node RAM 220.0 GiB, allocatable 208.7 GiB; this pod's share (100%)"],
        "pod-memory-does-not-fit",
    ),
    "weights-beyond-the-gpus": (
        HEAD_8B.replace("Llama-3.1-8B", "Llama-3.1-70B"),
        ["✗ GPU (after weights)", "✗ context: not even 16 tokens of meta-llama/Llama-3.1-70B-Instruct fit"],
        "weights-do-not-fit-the-gpus",
    ),
    "emptydir-beyond-the-kubelet-disk": (
        HEAD_8B.replace("Standard_NC24ads_A100_v4", "p5.48xlarge")
        + "parallelism:\n  tensor: 8\n"
        + "kvCacheOffloading:\n  cpu: 64Gi\n  secondary:\n    - fileSystem:\n        emptyDir: {size: 500Gi}\n",
        ["✗ ephemeral-storage requested"],
        "pod-disk-does-not-fit",
    ),
    "context-beyond-the-kv-cache": (
        HEAD_8B.replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B\n  maxModelLen: 36864"),
        ["✗ context: 36864 tokens do not fit the GPU KV cache of Standard_NC24ads_A100_v4"],
        "context-does-not-fit",
    ),
}


def _plain(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kvgen", *args], capture_output=True, text=True, env=_plain_env(), cwd=ROOT, **kw
    )


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(UNFIT))
def test_explain_of_a_spec_that_does_not_fit_shows_the_budget_marked_then_the_problems(case, tmp_path):
    text, marked, code = UNFIT[case]
    f = tmp_path / "spec.yaml"
    f.write_text(text)
    result = _plain("explain", str(f))
    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert out[1].startswith("✗ does not fit: ")
    for table in ("Capability rules", "Sizing: memory budget of one pod", "Disk budget", "KV-cache capacity"):
        assert any(line.startswith(table) for line in out), table
    for line in marked:
        assert any(line in o for o in out), line
    # the problems, as validate prints them: on stderr, each with its file:line and hint
    validate = _plain("validate", str(f))
    assert validate.returncode == 1 and result.stderr == validate.stderr
    assert f"error: {f}: " in result.stderr and "    hint: " in result.stderr


@pytest.mark.heavy
@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("case", sorted(UNFIT))
def test_explain_json_of_a_spec_that_does_not_fit_carries_the_budget_and_the_problems(case, fmt, tmp_path):
    from ruamel.yaml import YAML

    text, _marked, code = UNFIT[case]
    f = tmp_path / "spec.yaml"
    f.write_text(text)
    result = _plain("explain", "-o", fmt, str(f))
    assert result.returncode == 1 and "error: " in result.stderr
    r = json.loads(result.stdout) if fmt == "json" else YAML(typ="safe", pure=True).load(result.stdout)
    assert set(r) == TOP_LEVEL_KEYS and r["fits"] is False
    assert code in {p["code"] for p in r["problems"]}
    first = r["problems"][0]
    assert set(first) == {"code", "path", "location", "message", "hint"} and first["location"].startswith(str(f))
    if code == "pod-memory-does-not-fit":  # the budget's numbers are the problem's
        assert r["memory"]["fits"] is False and r["memory"]["requestBytes"] == 509 * GiB
        assert first["path"] == "kvCacheOffloading.cpu" and "needs 509.0 GiB of memory" in first["message"]
    if code == "pod-disk-does-not-fit":
        assert r["disk"]["fits"] is False


def test_explain_of_a_spec_that_fits_has_no_problems():
    r = json.loads(_plain("explain", "-o", "json", str(GEMMA)).stdout)
    assert r["fits"] is True and r["problems"] == []


@pytest.mark.heavy
@pytest.mark.parametrize(
    "text",
    [
        HEAD_8B + "kvCacheOffloding: {}\n",  # a schema error
        HEAD_8B.replace("meta-llama/Llama-3.1-8B-Instruct", "acme/unknown"),  # an unknown model
        HEAD_8B + "parallelism:\n  tensor: 4\n",  # more GPUs than the node has: no pod to size
    ],
    ids=["schema", "unknown-model", "gpus"],
)
def test_explain_of_a_spec_without_a_budget_prints_only_the_problems(text, tmp_path):
    f = tmp_path / "spec.yaml"
    f.write_text(text)
    result = _plain("explain", str(f))
    assert result.returncode == 1 and result.stdout == "" and "error: " in result.stderr


@pytest.mark.heavy
def test_a_batch_with_a_spec_without_a_budget_prints_every_problem_and_no_budget(tmp_path):
    unfit, broken = tmp_path / "a.yaml", tmp_path / "b.yaml"
    unfit.write_text(UNFIT["cpu-tier-beyond-the-ram"][0])
    broken.write_text(HEAD_8B.replace("demo", "other") + "kvCacheOffloding: {}\n")
    result = _plain("explain", str(unfit), str(broken))
    assert result.returncode == 1 and result.stdout == ""
    assert "kvCacheOffloading.cpu: the pod needs" in result.stderr and "unknown key 'kvCacheOffloding'" in result.stderr


@pytest.mark.heavy
def test_a_batch_shows_every_budget_in_order_the_unfit_marked(tmp_path):
    unfit = tmp_path / "a.yaml"
    unfit.write_text(UNFIT["cpu-tier-beyond-the-ram"][0].replace("demo", "too-big"))
    result = _plain("explain", "-o", "json", str(GEMMA), str(unfit), "--kube-version", "1.33")
    assert result.returncode == 1
    reports = json.loads(result.stdout)
    assert [(r["name"], r["fits"]) for r in reports] == [("gemma-4-12b", True), ("too-big", False)]


@pytest.mark.heavy
def test_explain_shows_how_requests_reach_the_replicas_and_the_hit_path():
    """routing (docs/routing.md): the gateway mode's route and picker, and the cache hit path from the
    router's affinity through every tier to recompute; the default mode says requests are spread."""
    routed = run_kvgen("explain", "-o", "json", str(ROOT / "examples" / "routing-gateway.yaml"))
    assert routed.returncode == 0, routed.stderr
    r = json.loads(routed.stdout)["routing"]
    assert r["mode"] == "gateway" and r["replicas"] == 3
    assert "InferencePool llama-8b-routed-pool" in r["path"]
    assert r["picker"]["scorers"] == {
        "queue-scorer": 2,
        "kv-cache-utilization-scorer": 2,
        "prefix-cache-scorer": 3,
        "no-hit-lru-scorer": 2,
    }
    assert r["picker"]["blockSizeTokens"] == 256 and r["picker"]["clusterScopedObjects"] == []
    assert r["picker"]["prefillScorers"] is None
    pair = json.loads(run_kvgen("explain", "-o", "json", str(ROOT / "examples" / "routing-prefill-decode.yaml")).stdout)
    picker = pair["routing"]["picker"]  # a prefill/decode pair: KServe's decode and prefill profiles
    assert picker["scorers"] == {"active-request-scorer": 2, "prefix-cache-scorer": 3}
    assert picker["prefillScorers"] == {"prefix-cache-scorer": 3, "queue-scorer": 2, "kv-cache-utilization-scorer": 2}
    assert "a prefill server of the pair" in pair["routing"]["path"]
    assert [h["step"] for h in r["hitPath"]] == ["routing", "gpu", "cpu", "disk-0", "recompute"]
    shared = json.loads(run_kvgen("explain", "-o", "json", str(ROOT / "examples" / "shared-valkey-tier.yaml")).stdout)
    assert shared["routing"]["picker"] is None and shared["routing"]["hitPath"][-2]["step"] == "remote"
    assert "1/N" in shared["routing"]["hitPath"][0]["where"]
    text = run_kvgen("explain", str(ROOT / "examples" / "routing-gateway.yaml")).stdout
    assert "cache hit path: the picker sends a prompt" in text and "recompute" in text


def test_docs_plan_md_names_every_key_of_the_plan_document():
    """docs/plan.md is the plan document's reference: every key of PlanDocument and of its parts is named."""
    from typing import get_type_hints

    from kvgen.plan import types

    text = (ROOT / "docs" / "plan.md").read_text(encoding="utf-8")
    parts = [types.PlanDocument, types.ModelRow, types.InstanceRow, types.DecisionDoc, types.GpuAccessDoc]
    parts += [types.ContextLengthDoc, types.ContainerSizeDoc, types.Sizes, types.Images, types.Weights]
    parts += [types.RoutingDoc, types.RemoteDoc, types.LoraDoc, types.LoraDownloadDoc]
    missing = sorted({k for t in parts for k in get_type_hints(t)} - set(re.findall(r"`(\w+)(?:\[\])?`", text)))
    assert missing == []
