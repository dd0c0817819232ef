"""Live contract tier (`pytest -m contract`): every command line kvgen renders, parsed by the
REAL vLLM 0.33.0 and LMCache 0.5.6 parsers in the contract venv (scripts/contract-env.sh).

One subprocess per session (tests/contract/live_check.py) loads each package once and checks
the whole batch: the example lines, the broken fixtures shared with the snapshot tier, and a
fresh capture of the snapshots. Without the venv these tests skip, unless KVGEN_REQUIRE_CONTRACT
is set (CI, scripts/test): then they fail.
"""

from __future__ import annotations

import json

import contract_support as cs
import pytest

from kvgen.data import catalog, connector
from kvgen.plan import lora as kvgen_lora
from kvgen.plan import model_source
from kvgen.plan import remote as kvgen_remote

pytestmark = pytest.mark.contract

RENDERED = cs.rendered()
BROKEN = cs.broken()


@pytest.fixture(scope="session")
def live():
    python = cs.contract_python_or_skip()
    lines = [{"id": r.id, "kind": r.line.kind, "argv": list(r.argv)} for r in RENDERED]
    lines += [{"id": f"broken:{b.id}", "kind": b.kind, "argv": list(b.argv)} for b in BROKEN]
    base = list(cs.extra_args_base())
    lines += [
        {"id": f"extra-args:{k}", "kind": "vllm", "argv": base + list(v)} for k, v in cs.EXTRA_ARGS_ACCEPTED.items()
    ]
    lines += [
        {"id": f"extra-args:{k}", "kind": "vllm", "argv": base + list(v)}
        for k, (v, _c) in cs.EXTRA_ARGS_REFUSED.items()
    ]
    lines += [{"id": f"lora:{k}", "kind": "vllm", "argv": base + list(v)} for k, v in LORA_LIMITS.items()]
    return cs.run_live(python, lines, capture=True)


# what vLLM's LoRAConfig refuses though the parser takes it (vllm/config/lora.py): the live tier builds it
LORA_LIMITS = {
    "cpu-below-slots": ("--enable-lora", "--max-loras=4", "--max-cpu-loras=2"),
    "no-slots": ("--enable-lora", "--max-loras=0"),
}


def test_the_real_packages_are_the_pinned_versions(live):
    rt = catalog.runtime()
    assert live["versions"]["vllm"] == str(rt["vllm"]["version"])
    assert live["versions"]["lmcache"] == str(rt["lmcache"]["version"])


def _ok(live, rid):
    result = live["results"][rid]
    assert result["ok"], f"{rid}: rejected at {result['stage']}: {result['error']}"
    return result["facts"]


@pytest.mark.parametrize("r", [r for r in RENDERED if r.line.kind == "vllm"], ids=lambda r: r.id)
def test_rendered_vllm_line_passes_vllm(live, r):
    facts = _ok(live, r.id)
    # the real parser understood what the spec meant, not merely "no error"
    spec, rt = r.compiled.spec, catalog.runtime()
    if not model_source.local(spec):
        assert facts["model"] == spec.model.id
    else:  # weights on a claim (model.uri or model.cache): vLLM loads the mounted directory, served as the model's id
        assert facts["model"] == model_source.model_dir(spec)  # one path per model and revision (LMCache's keys)
        assert facts["model"].startswith(connector.wiring()["modelPvc"]["mountPath"] + "/")
        assert facts["served_model_name"] in (spec.model.id, [spec.model.id])
    assert facts["tensor_parallel_size"] == spec.parallelism.tensor
    assert facts["pipeline_parallel_size"] == spec.parallelism.pipeline
    assert facts["data_parallel_size"] == spec.parallelism.data
    # a decode server behind the picker: llm-d's routing sidecar takes service.port, vLLM its --vllm-port
    sidecar = spec.disaggregation.role == "decode" and spec.routing.mode == "gateway"
    port = catalog.runtime()["picker"]["sidecar"]["vllmPort"] if sidecar else spec.service.port
    assert facts["port"] == port
    # the spec's model.maxModelLen, or the longest context that fits when the model's own does not
    assert facts["max_model_len"] == r.compiled.plan.context_length.flag
    if "--enable-prefix-caching" in r.argv:
        assert facts["enable_prefix_caching"] is True
    kv = cs.kv_config(r.argv)
    if kv is None:
        assert facts["kv_connector"] is None
    else:
        assert facts["kv_connector"] == kv["kv_connector"] and facts["kv_role"] == kv["kv_role"]
        assert facts["kv_connector_extra_config"] == kv.get("kv_connector_extra_config", {})
    backend = r.compiled.plan.backend
    if backend and spec.disaggregation.role != "none":  # NIXL first, then the offloading connector
        assert facts["kv_connector"] == rt["connectors"]["multi"]
        children = facts["kv_connector_extra_config"]["connectors"]
        assert [c["kv_connector"] for c in children] == [rt["connectors"]["disaggregation"], rt["connectors"][backend]]
    elif backend:
        assert facts["kv_connector"] == rt["connectors"][backend]
    if spec.parallelism.nodes > 1:
        assert facts["nnodes"] == spec.parallelism.nodes
        assert facts["headless"] == (facts["node_rank"] != 0)


@pytest.mark.parametrize("r", [r for r in RENDERED if r.line.kind == "lmcache"], ids=lambda r: r.id)
def test_rendered_lmcache_line_passes_lmcache(live, r):
    facts = _ok(live, r.id)
    spec = r.compiled.spec
    # where LMCacheMPConnector looks: loopback, or (a server spanning nodes) every interface, its
    # pod named in lmcache.mp.server_urls
    host = "0.0.0.0" if spec.parallelism.nodes > 1 else "127.0.0.1"
    assert (facts["host"], facts["port"]) == (host, 5555)
    assert facts["eviction_policy"] == spec.kv_cache_offloading.eviction_policy.upper()
    # the size the launcher computed is the size LMCache will use (no lazy/init facts: without
    # CUDA, LMCache turns lazy allocation off)
    assert facts["l1_size_bytes"] == int(float(r.argv[r.argv.index("--l1-size-gb") + 1]) * cs.GiB)
    adapters = [json.loads(r.argv[i + 1]) for i, a in enumerate(r.argv) if a == "--l2-adapter"]
    assert facts["l2_adapters"] == [a["type"] for a in adapters]
    remote = spec.kv_cache_offloading.remote
    disks = [f"/mnt/kv-cache-{i}" for i in range(len(spec.kv_cache_offloading.secondary))]
    assert facts["l2_base_paths"] == disks + ([None] if remote else [])
    if remote is None:
        assert facts["l2_remotes"] == []
        return
    # the remote tier, last: the URL's host and port, shared, no password on the command line
    (got,) = facts["l2_remotes"]
    capacity = remote.capacity.bytes // cs.GiB if remote.capacity else 0
    want_host, want_port = kvgen_remote.endpoint(remote.url).host, kvgen_remote.endpoint(remote.url).port
    assert got == {
        "host": want_host,
        "port": want_port,
        "username": remote.username or "",
        "password": "",
        "max_capacity_gb": float(capacity),
        "shared": True,
        "eviction": bool(remote.capacity),
    }


@pytest.mark.parametrize("b", [b for b in BROKEN if b.stage is not None], ids=lambda b: b.id)
def test_broken_fixture_is_rejected_by_the_real_parser(live, b):
    result = live["results"][f"broken:{b.id}"]
    assert not result["ok"], f"{b.id} was accepted by the real {b.kind} parser"
    assert result["stage"] == b.stage, result["error"]
    assert b.error in result["error"]
    assert cs.check(b.kind, b.argv), "the snapshot check must catch it too"


@pytest.mark.parametrize("b", [b for b in BROKEN if b.stage is None], ids=lambda b: b.id)
def test_snapshot_only_fixture_is_accepted_by_the_runtime(live, b):
    """These break at run time (or are silently ignored) but pass the parsers: the reason the
    snapshot tier is stricter. If one starts failing here, the runtime got stricter: move the
    fixture to the 'both' group with its stage and message."""
    result = live["results"][f"broken:{b.id}"]
    assert result["ok"], result
    assert cs.check(b.kind, b.argv)


def test_committed_snapshots_match_a_fresh_capture(live):
    assert "capture_error" not in live, live.get("capture_error")
    captured = live["snapshots"]
    assert sorted(captured) == sorted(p.name for p in cs.SNAPSHOT_DIR.glob("*.json"))
    for name, text in captured.items():
        assert (cs.SNAPSHOT_DIR / name).read_text(encoding="utf-8") == text, (
            f"{name} is stale: run scripts/capture-contract"
        )


def test_committed_hybrid_architectures_match_a_fresh_scan_of_vllm(live):
    """charts/kvgen/files/hybrid-architectures.yaml (read by kvgen and the chart) is what a fresh
    scan of the installed vLLM finds: every registry architecture whose class implements IsHybrid."""
    assert "capture_error" not in live, live.get("capture_error")
    committed = (cs.ROOT / "charts" / "kvgen" / "files" / "hybrid-architectures.yaml").read_text(encoding="utf-8")
    assert live["hybrid_architectures"] == committed, "hybrid-architectures.yaml is stale: run scripts/capture-contract"


@pytest.mark.parametrize("case", sorted(cs.EXTRA_ARGS_ACCEPTED))
def test_extra_args_kvgen_accepts_vllm_accepts(live, case):
    _ok(live, f"extra-args:{case}")


@pytest.mark.parametrize("case", sorted(cs.EXTRA_ARGS_REFUSED))
def test_extra_args_kvgen_refuses_vllm_refuses(live, case):
    """Except the abbreviation: argparse takes a unique prefix, kvgen wants the flag written out
    (a prefix could hide a flag kvgen owns), and says which one."""
    result = live["results"][f"extra-args:{case}"]
    assert result["ok"] == (case == "abbreviation"), result


@pytest.mark.parametrize("case", sorted(LORA_LIMITS))
def test_lora_limits_vllm_refuses_at_start_are_caught_by_the_live_tier(live, case):
    """The parser takes --max-cpu-loras below --max-loras and --max-loras 0; vLLM refuses them when it builds
    its LoRAConfig at start (engine/arg_utils.py create_engine_config), so the live tier builds it too; kvgen
    refuses the first itself (model.lora.maxCpuLoras) and its schema the second (maxLoras >= 1)."""
    result = live["results"][f"lora:{case}"]
    assert not result["ok"] and result["stage"] == "lora_config", result


@pytest.mark.parametrize(
    "r", [r for r in RENDERED if r.line.kind == "vllm" and r.compiled.spec.model.lora], ids=lambda r: r.id
)
def test_the_real_parser_reads_every_adapter_kvgen_renders(live, r):
    """model.lora: vLLM's own parser (LoRAParserAction) reads exactly kvgen's adapters from the one
    --lora-modules, LoRA is on, and vLLM's LoRAConfig takes the limits."""
    facts = _ok(live, r.id)
    assert facts["enable_lora"] is True
    assert facts["lora_modules"] == kvgen_lora.adapters(r.compiled.spec)
