"""Issue 35: hit ratios from a trace (kvgen.traffic, kvgen explain --trace).

The replay is held against an independent LRU cache (an OrderedDict, one capacity at a time, prefix
semantics) on Mooncake's two FAST'25 traces, against the paper's own statements about them, and against
hand-made traces whose answers are known; the recommendation is held against a second run of the
changed spec."""

from __future__ import annotations

import gzip
import json
from collections import OrderedDict
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.core.errors import SpecError
from kvgen.traffic import replay, routing, stack, trace

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "examples" / "traces"
CONVERSATION = TRACES / "mooncake-conversation.jsonl.gz"
SYNTHETIC = TRACES / "mooncake-synthetic.jsonl.gz"
EXAMPLE = ROOT / "examples" / "trace-sizing.yaml"
BS = trace.MOONCAKE_BLOCK_TOKENS


@pytest.fixture(scope="module")
def traces() -> dict[str, trace.Trace]:
    return {"conversation": trace.read(str(CONVERSATION)), "synthetic": trace.read(str(SYNTHETIC))}


def lru_hit_tokens(requests: list[trace.Request], capacity_blocks: int, block_size: int = BS) -> int:
    """An independent LRU cache of ``capacity_blocks`` blocks: a request's hit is its longest run of leading
    blocks present when it arrives (the last token always computed); then it stores every block, head last."""
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    for r in requests:
        n = 0
        for b in r.blocks:
            if b not in cache:
                break
            n += 1
        if n == len(r.blocks):
            hits += r.input_tokens - 1
        else:
            hits += n * block_size
        for b in reversed(r.blocks):
            cache[b] = None
            cache.move_to_end(b)
        while len(cache) > capacity_blocks:
            cache.popitem(last=False)
    return hits


def run_cli(args: list[str]):
    return CliRunner().invoke(app, args)


def req(ts: int, tokens: int, *blocks: int) -> trace.Request:
    return trace.Request(ts, tokens, 0, tuple(blocks))


# ----------------------------------------------------------------------------- the real traces


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["conversation", "synthetic"])
def test_the_curve_agrees_with_an_independent_lru_replay(traces, name):
    t = traces[name]
    found = replay.analyse(t, [replay.Tier("gpu", 1_000_000)])
    curve = found["curve"]
    assert len(curve) > 40  # every capacity from one block to the whole trace, 2^(1/4) apart
    for point in curve[4::8] + curve[-1:]:
        expected = lru_hit_tokens(t.requests, point["capacityTokens"] // BS) / t.input_tokens
        assert abs(point["hitRatio"] - expected) <= 0.01, point
    # and at once, since the stack algorithm is exact: equal to the token
    rp = replay.Replayer(t)
    for blocks in (2_000, 6_000, 30_000):
        assert rp.curve.hits(blocks) == lru_hit_tokens(t.requests, blocks)


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["conversation", "synthetic"])
def test_the_papers_two_statements_hold(traces, name):
    """Mooncake FAST'25, section 5.3.1: a 3M-token cache reaches less than half of the theoretical maximum
    hit rate; 50M tokens nearly reaches it."""
    t = traces[name]
    rp = replay.Replayer(t)
    best = rp.curve.max_hits
    assert rp.curve.hits(3_000_000 // BS) < 0.5 * best
    assert rp.curve.hits(50_000_000 // BS) > 0.98 * best
    found = rp.analyse([replay.Tier("gpu", 3_000_000)])
    assert found["hitRatio"] < 0.5 * found["maxHitRatio"]
    assert found["capacityFor"]["0.99"] < 50_000_000 < found["curve"][-1]["capacityTokens"] * 10


def test_the_trace_files_are_mooncakes_unchanged():
    # the provenance examples/traces/README.md gives: the upstream files' sha256
    import hashlib

    sums = {
        CONVERSATION: "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df",
        SYNTHETIC: "bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131",
    }
    for path, digest in sums.items():
        assert hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest() == digest
        assert digest in (TRACES / "README.md").read_text()


# ----------------------------------------------------------------------------- the model, by hand


def test_stack_distances_count_distinct_blocks_since_last_use():
    got = stack.replay([(1, 2, 3), (1, 2, 4), (5,), (1, 2, 3)])
    C = stack.COLD
    # request 2: touched 3, 2, 1 (head last): 1 on top, then 2, then 3
    assert got == [[C, C, C], [1, 2, C], [C], [2, 3, 5]]
    assert got == [stack.LruStack().visit(b) for b in []] or True  # LruStack below gives the same
    s = stack.LruStack()
    assert [s.visit(b) for b in [(1, 2, 3), (1, 2, 4), (5,), (1, 2, 3)]] == got


def test_a_block_twice_in_one_request_is_counted_once():
    assert stack.replay([(7, 7, 8), (7, 8)]) == [[stack.COLD, stack.COLD, stack.COLD], [1, 2]]


def test_a_hit_is_the_run_of_leading_blocks():
    # the second request's first block was never seen: its cached second block serves nothing
    t = trace.Trace("t", BS, [req(0, 1024, 1, 2), req(1, 1024, 3, 2)])
    assert replay.analyse(t, [replay.Tier("gpu", None)])["hitRatio"] == 0


def test_a_repeated_prompt_computes_its_last_token():
    t = trace.Trace("t", BS, [req(0, 1000, 1, 2), req(1, 1000, 1, 2)])
    found = replay.analyse(t, [replay.Tier("gpu", 10_000)])
    assert found["hitRatio"] == round(999 / 2000, 6)


def test_tiers_are_inclusive_and_the_first_holding_a_block_serves_it():
    # distances at the last request: block 1 -> 3, block 2 -> ... a three-deep stack: capacities decide
    t = trace.Trace("t", BS, [req(0, 512, 1), req(1, 512, 2), req(2, 512, 3), req(3, 513, 1, 9)])
    tiers = [replay.Tier("gpu", 512), replay.Tier("cpu", 1024), replay.Tier("disk-0", 2048)]
    found = replay.analyse(t, tiers)
    by = {x["tier"]: x["hitRatio"] for x in found["tiers"]}
    assert by == {"gpu": 0, "cpu": 0, "disk-0": round(512 / 2049, 6)}  # distance 3: only the 4-block tier
    smaller = replay.analyse(t, [replay.Tier("gpu", 2048), replay.Tier("cpu", 512)])
    assert {x["tier"]: x["hitRatio"] for x in smaller["tiers"]}["cpu"] == 0  # inside the GPU's: it adds nothing


def test_a_tier_holds_its_watermark_not_its_size():
    t = trace.Trace("t", BS, [req(0, 512, 1), req(1, 512, 2), req(2, 512, 3), req(3, 513, 1, 9)])
    full = replay.analyse(t, [replay.Tier("gpu", 0), replay.Tier("cpu", 3 * BS)])
    held = replay.analyse(t, [replay.Tier("gpu", 0), replay.Tier("cpu", 3 * BS, held=int(3 * BS * 0.8))])
    assert full["hitRatio"] > 0 and held["hitRatio"] == 0


def test_a_shared_tier_serves_what_another_replica_computed():
    t = trace.Trace("t", BS, [req(0, 1024, 1, 2), req(1, 1025, 1, 2, 3)])
    local = [replay.Tier("gpu", 10_000)]
    alone = replay.analyse(t, local, replicas=2, mode="none")  # round robin: the second runs elsewhere
    assert alone["hitRatio"] == 0
    shared = replay.analyse(t, [*local, replay.Tier("remote", None, shared=True)], replicas=2, mode="none")
    assert {x["tier"]: x["hitRatio"] for x in shared["tiers"]}["remote"] == round(1024 / 2049, 6)


def test_routing_modes_send_requests_where_they_should():
    rs = [req(0, 1536, 1, 2, 3), req(1, 1536, 4, 5, 6), req(2, 2048, 1, 2, 3, 7), req(3, 2048, 4, 5, 6, 8)]
    assert routing.assign("none", rs, 2, BS) == [0, 1, 0, 1]
    # session affinity: a prompt that extends an earlier one follows it
    rs2 = [rs[0], rs[1], rs[3], rs[2]]
    assert routing.assign("sessionAffinity", rs2, 2, BS) == [0, 1, 1, 0]
    # the picker: the pod holding the prefix wins over the one that had the last cold request
    assert routing.assign("gateway", rs2, 2, BS, index_blocks=100, kv_tokens=1_000_000) == [0, 1, 1, 0]
    with pytest.raises(ValueError):
        routing.assign("random", rs, 2, BS)


@pytest.mark.heavy
def test_routing_is_worth_a_number_on_the_conversation_trace(traces):
    found = replay.analyse(traces["conversation"], [replay.Tier("gpu", 2_000_000)], replicas=4, mode="gateway")
    by = {r["mode"]: r["hitRatio"] for r in found["routing"]}
    assert by["none"] < by["sessionAffinity"] < by["gateway"] <= found["maxHitRatio"]
    assert all(0.25 <= r["busiestShare"] < 0.4 for r in found["routing"])


# ----------------------------------------------------------------------------- reading a trace


def test_every_problem_of_a_trace_is_reported_at_its_line(tmp_path):
    text = "\n".join(
        [
            '{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1, 2]}',
            "not json",
            '{"timestamp": 5, "input_length": -1, "hash_ids": [1]}',
            '{"timestamp": 6, "input_length": 600, "hash_ids": [1]}',
            '{"timestamp": 10, "input_length": 10, "hash_ids": [3]}',
            '{"timestamp": 1, "input_length": 10, "hash_ids": [3]}',
            '{"input_length": 10, "hash_ids": ["x"]}',
            "[1, 2]",
        ]
    )
    with pytest.raises(SpecError) as err:
        trace.parse(text, "t.jsonl")
    lines = [(p.location.line, p.message) for p in err.value.problems if p.location]
    assert [n for n, _ in lines] == [2, 3, 4, 6, 7, 7, 8]
    assert "1 block ids for 600 input tokens" in lines[2][1]
    assert "before the previous request's 10" in lines[3][1]
    assert {m.split(":")[0] for n, m in lines if n == 7} == {"missing", "'x' is not a block id (an integer)"}


def test_a_gzip_trace_and_a_plain_one_read_the_same(tmp_path):
    plain = tmp_path / "t.jsonl"
    plain.write_text('{"timestamp": 0, "input_length": 512, "hash_ids": [4]}\n')
    packed = tmp_path / "t.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert trace.read(str(plain)).requests == trace.read(str(packed)).requests
    broken = tmp_path / "b.jsonl.gz"
    broken.write_bytes(b"\x1f\x8bnot gzip")
    with pytest.raises(SpecError, match="cannot read the trace"):
        trace.read(str(broken))


def test_a_bad_trace_fails_the_command_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"timestamp": 0}\n')
    svg = tmp_path / "view.svg"
    result = run_cli(["explain", str(EXAMPLE), "--trace", str(bad), "--svg", str(svg)])
    assert result.exit_code == 1, result.output  # invalid input, as a spec's problems
    assert f"{bad}:1:1: input_length: missing" in result.stderr
    assert "nothing was written" in result.stderr
    assert not svg.exists()


# ----------------------------------------------------------------------------- explain --trace


def _explain(spec: Path, trace_file: Path) -> dict:
    result = run_cli(["explain", str(spec), "--trace", str(trace_file), "-o", "json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["trace"]


@pytest.mark.heavy
def test_the_json_contract_holds_every_key_docs_name():
    t = _explain(EXAMPLE, SYNTHETIC)
    for key in (
        "requests",
        "inputTokens",
        "blockSize",
        "maxHitRatio",
        "hitRatio",
        "tiers",
        "curve",
        "capacityFor",
        "routing",
    ):
        assert key in t
    assert t["requests"] == 3993 and t["blockSize"] == 512
    assert [x["tier"] for x in t["tiers"]] == ["gpu", "cpu"]  # as kvCache.tiers[].tier names them
    assert set(t["capacityFor"]) == {"0.9", "0.99"}
    assert all(set(p) == {"capacityTokens", "hitRatio"} for p in t["curve"])
    assert abs(sum(x["hitRatio"] for x in t["tiers"]) - t["hitRatio"]) < 1e-5
    docs = (ROOT / "docs" / "explain.md").read_text()
    for key in t:
        assert f"`{key}`" in docs, f"docs/explain.md does not name trace.{key}"


@pytest.mark.heavy
@pytest.mark.parametrize("trace_file", [SYNTHETIC, CONVERSATION], ids=["synthetic", "conversation"])
def test_the_recommendation_applied_reaches_ninety_percent_of_the_maximum(tmp_path, trace_file):
    first = _explain(EXAMPLE, trace_file)
    assert first["hitRatio"] < 0.9 * first["maxHitRatio"]  # the example needs a change
    rec = first["recommendation"]
    assert rec["action"] == "change", rec
    yaml = YAML()
    spec = yaml.load(EXAMPLE.read_text())
    for change in rec["changes"]:
        o = spec["kvCacheOffloading"]
        if change["path"] == "kvCacheOffloading.cpuMemoryUtilization":
            o["cpuMemoryUtilization"] = change["value"]
        else:
            assert change["path"] == "kvCacheOffloading.secondary[0].fileSystem.emptyDir.size"
            o["secondary"] = [{"fileSystem": {"emptyDir": {"size": change["value"]}}}]
    changed = tmp_path / "changed.yaml"
    with changed.open("w") as f:
        yaml.dump(spec, f)
    second = _explain(changed, trace_file)
    assert second["hitRatio"] >= 0.9 * second["maxHitRatio"]
    assert second["hitRatio"] == rec["expected"]["hitRatio"]
    assert second["recommendation"]["action"] == "none"
    render = run_cli(["render", str(changed)])
    assert render.exit_code == 0, render.stderr  # and the changed spec renders


@pytest.mark.heavy
def test_text_view_and_svg_show_the_trace(tmp_path):
    svg = tmp_path / "v.svg"
    result = run_cli(["explain", str(EXAMPLE), "--trace", str(SYNTHETIC), "--svg", str(svg)])
    assert result.exit_code == 0, result.stderr
    assert "recommendation: set kvCacheOffloading.cpuMemoryUtilization: 0.7" in result.stdout
    assert "one cache reaches 90% of the maximum at 10,427,392 tokens" in result.stdout
    assert "recommendation" in svg.read_text()


@pytest.mark.heavy
def test_a_changed_trace_is_never_answered_from_a_recorded_run(tmp_path):
    # kvgen replays an unchanged run's output (kvgen.output.replay): the trace's bytes are in its key
    from conftest import run_kvgen

    env = {"KVGEN_CACHE_DIR": str(tmp_path / "cache")}
    t = tmp_path / "t.jsonl"
    one = '{"timestamp": 0, "input_length": 512, "hash_ids": [1]}\n'
    t.write_text(one)
    first = run_kvgen("explain", str(EXAMPLE), "--trace", str(t), "-o", "json", env=env)
    again = run_kvgen("explain", str(EXAMPLE), "--trace", str(t), "-o", "json", env=env)
    t.write_text(one + '{"timestamp": 5, "input_length": 600, "hash_ids": [1, 2]}\n')
    changed = run_kvgen("explain", str(EXAMPLE), "--trace", str(t), "-o", "json", env=env)
    assert first.returncode == again.returncode == changed.returncode == 0, first.stderr
    assert first.stdout == again.stdout
    assert [json.loads(r.stdout)["trace"]["requests"] for r in (first, changed)] == [1, 2]
    assert any((tmp_path / "cache" / "runs").iterdir())  # the first run was recorded
