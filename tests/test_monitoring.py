"""Issue 35: observed, not only predicted. The dashboard (metrics.dashboard) and the PrometheusRule
(metrics.prometheusRule): every metric name against the pinned versions' source, the rules through the real
promtool (`check rules`, and `test rules` with series that fire each alert and series that do not), the
dashboard loaded back through grafana-foundation-sdk, and the server's values in its variables."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, cached_tool_or_skip

RUNTIME = yaml.safe_load((ROOT / "charts" / "kvgen" / "files" / "runtime.yaml").read_text(encoding="utf-8"))
MONITORING = RUNTIME["monitoring"]
DASHBOARD = ROOT / "charts" / "kvgen" / "files" / "dashboard.json"
PICKER_SOURCE = json.loads((ROOT / "tests" / "data" / "routing" / "llm-d-router-v0.9.0.json").read_text())
PROMTOOL_ENV = ROOT / "scripts" / "promtool-env.sh"
REQUIRE_PROMTOOL = "KVGEN_REQUIRE_PROMTOOL"
# a Deployment's pod of examples/trace-sizing.yaml (no namespace) and of examples/native-arc-eviction.yaml
TRACE_POD = "qwen2-7b-trace-sized-7d9f8c6b5-x2k4q"
NATIVE_POD = "llama-8b-arc-5f6d7c8b9-q8w2e"


def names() -> dict[str, dict[str, Any]]:
    """Every metric the monitoring reads: exposed name -> its row."""
    return {row["name"]: row for group in MONITORING["metrics"].values() for row in group.values()}


def used_names(text: str) -> set[str]:
    """The metric names in PromQL text: vllm:..., lmcache_mp_..., llm_d_epp_..., with a __name__ regex's
    alternatives expanded."""
    found = set()
    for prefix, alternatives, suffix in re.findall(r'__name__=~"(\w+?)\(([\w|]+)\)(\w*)"', text):
        found |= {f"{prefix}{a}{suffix}" for a in alternatives.split("|")}
    text = re.sub(r'__name__=~"[^"]*"', "", text)
    found |= set(re.findall(r"\b(?:vllm:[a-z_]+|lmcache_mp_[a-z0-9_]+|llm_d_epp_[a-z_]+)", text))
    return found


def compiled(example: str) -> list[dict[str, Any]]:
    from kvgen.app.compiler import compile_inputs

    path = ROOT / "examples" / example
    return compile_inputs([(str(path), path.read_text())], None).compiled[0].objects


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [
        o for o in objects if o["kind"] == kind and (kind != "ConfigMap" or "dashboard" in o["metadata"]["name"])
    ]
    return found


# ----------------------------------------------------------------------------- names


def test_the_dashboard_and_the_alerts_read_only_known_metrics():
    known = names()
    histogram = {f"{n}{s}" for n, r in known.items() if r["type"] == "histogram" for s in ("_sum", "_count", "_bucket")}
    dashboard = DASHBOARD.read_text()
    alerts = " ".join(a["expr"] for a in MONITORING["alerts"])
    for text in (dashboard, alerts):
        used = used_names(text)
        assert used, "no metric found: the pattern is wrong"
        assert used <= set(known) | histogram, sorted(used - set(known) - histogram)
    # and every name is used by one of them
    assert set(known) <= {n.removesuffix("_sum").removesuffix("_count") for n in used_names(dashboard + alerts)}


def test_the_pickers_metrics_are_the_routers():
    assert {r["name"] for r in MONITORING["metrics"]["picker"].values()} <= set(PICKER_SOURCE["metrics"])


def _package_dir(python: str, package: str) -> Path:
    code = f"import importlib.util; print(importlib.util.find_spec({package!r}).submodule_search_locations[0])"
    return Path(subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip())


@pytest.mark.contract
def test_every_vllm_and_lmcache_name_is_the_pinned_sources():
    """vLLM's names are prometheus_client's (a counter's `vllm:x` exposed as `vllm:x_total`); LMCache's MP
    server exposes OpenTelemetry instruments: '.' as '_', the instrument's unit appended, _total on counters."""
    from contract_support import contract_python_or_skip

    python = contract_python_or_skip()
    vllm_text = "".join(p.read_text() for p in (_package_dir(python, "vllm") / "v1").rglob("*.py"))
    vllm_text += "".join(
        p.read_text() for p in (_package_dir(python, "vllm") / "distributed" / "kv_transfer").rglob("metrics.py")
    )
    lmcache_files = list((_package_dir(python, "lmcache") / "v1").rglob("*.py"))
    lmcache_text = "\n".join(p.read_text() for p in lmcache_files)
    for row in MONITORING["metrics"]["vllm"].values():
        assert re.search(rf'"{re.escape(row["source"])}"', vllm_text), row
        assert row["name"] == row["source"] + ("_total" if row["type"] == "counter" else ""), row
    for row in MONITORING["metrics"]["lmcache"].values():
        m = re.search(rf'"{re.escape(row["source"])}",', lmcache_text)
        assert m, row
        # the instrument's arguments: up to the next instrument
        rest = re.split(r"create_\w+\(|register_gauge\(", lmcache_text[m.end() : m.end() + 600])[0]
        unit = re.search(r'unit="([^"]+)"', rest)
        exposed = row["source"].replace(".", "_") + (f"_{unit[1]}" if unit else "")
        exposed += "_total" if row["type"] == "counter" else ""
        assert row["name"] == exposed, (row, rest)
        if row["type"] == "counter":
            assert "create_counter(" in lmcache_text[max(0, m.start() - 120) : m.start()], row


# ----------------------------------------------------------------------------- the dashboard


def test_the_dashboard_file_is_what_its_generator_writes():
    result = subprocess.run(
        [os.sys.executable, "-m", "tools.dashboard", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.heavy
def test_a_rendered_dashboard_loads_through_the_library_and_shows_its_server():
    from grafana_foundation_sdk.cog.encoder import JSONEncoder
    from grafana_foundation_sdk.cog.plugins import register_default_plugins
    from grafana_foundation_sdk.models import prometheus
    from grafana_foundation_sdk.models.dashboard import Dashboard

    register_default_plugins()
    cm = of_kind(compiled("trace-sizing.yaml"), "ConfigMap")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    ((name, text),) = cm["data"].items()
    assert name == "qwen2-7b-trace-sized.json"
    data = json.loads(text)
    board = Dashboard.from_json(data)
    assert json.loads(json.dumps(board, cls=JSONEncoder)) == data  # nothing the library does not know
    assert all(
        isinstance(t, prometheus.Dataquery) for p in board.panels or [] for t in getattr(p, "targets", None) or []
    )
    values = {v.name: v.query for v in board.templating.list_val}
    assert values["pod"] == "qwen2-7b-trace-sized-([a-z0-9]+-[a-z0-9]+|[0-9]+)"
    assert re.fullmatch(values["pod"], TRACE_POD) and not re.fullmatch(values["pod"], "qwen2-7b-trace-sized-epp-1-2-3")
    assert values["namespace"] == ".*"  # the spec names none
    assert values["expectedHitRatio"] == "0.525"
    plan = json.loads(
        subprocess.run(
            [os.sys.executable, "-m", "kvgen", "explain", "examples/trace-sizing.yaml", "-o", "json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert values["cpuTierBytes"] == str(plan["plan"]["sizes"]["cpuTier"])
    assert values["diskTierBytes"] == "NaN"  # no disk tier
    assert board.uid.startswith("kvgen-") and len(board.uid) <= 40  # Grafana's limit
    other = json.loads(of_kind(compiled("metrics-pdb-keda.yaml"), "ConfigMap")["data"]["qwen3-32b-ops.json"])
    assert other["uid"] != data["uid"] and other["templating"]["list"][1]["query"] == "llm"


@pytest.mark.heavy
def test_the_expected_hit_ratio_of_the_example_is_what_its_trace_predicts():
    from typer.testing import CliRunner

    from kvgen.app.cli import app

    result = CliRunner().invoke(
        app,
        [
            "explain",
            "examples/trace-sizing.yaml",
            "--trace",
            "examples/traces/mooncake-synthetic.jsonl.gz",
            "-o",
            "json",
        ],
    )
    spec = yaml.safe_load((ROOT / "examples" / "trace-sizing.yaml").read_text())
    assert round(json.loads(result.stdout)["trace"]["hitRatio"], 3) == spec["metrics"]["expectedHitRatio"]


# ----------------------------------------------------------------------------- promtool


def promtool() -> str:
    return cached_tool_or_skip(PROMTOOL_ENV, REQUIRE_PROMTOOL, "promtool")


def rules_of(example: str) -> dict[str, Any]:
    rule = of_kind(compiled(example), "PrometheusRule")
    return {"groups": rule["spec"]["groups"]}


def alerts_of(rules: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in rules["groups"] for r in g["rules"]}


@pytest.mark.scan
@pytest.mark.parametrize("example", ["trace-sizing.yaml", "native-arc-eviction.yaml", "metrics-pdb-keda.yaml"])
def test_promtool_accepts_every_rendered_rule(tmp_path, example):
    rules = rules_of(example)
    f = tmp_path / "rules.yaml"
    f.write_text(yaml.safe_dump(rules))
    result = subprocess.run([promtool(), "check", "rules", str(f)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerts_of(rules))} rules found" in result.stdout


def expand(text: str, labels: dict[str, str], value: str = "") -> str:
    """An annotation as Prometheus expands it for these labels (and a $value already humanized)."""
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m[1]], text)
    return text.replace("{{ $value | humanizePercentage }}", value)


def series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


# alert -> (the series that fire it, the series that do not, when to look, $value humanized, labels kept)
POD = {"namespace": "llm", "pod": TRACE_POD}
CASES: dict[
    str, tuple[list[tuple[str, dict[str, str], str]], list[tuple[str, dict[str, str], str]], str, str, bool]
] = {
    "KvgenKVCacheFullAndPreempting": (
        [("vllm:kv_cache_usage_perc", POD, "0.99x40"), ("vllm:num_preemptions_total", POD, "0+5x40")],
        [("vllm:kv_cache_usage_perc", POD, "0.99x40"), ("vllm:num_preemptions_total", POD, "0x40")],
        "30m",
        "",
        True,
    ),
    "KvgenHitRatioBelowExpected": (
        [("vllm:prompt_tokens_cached_total", POD, "0+100x150"), ("vllm:prompt_tokens_total", POD, "0+1000x150")],
        [("vllm:prompt_tokens_cached_total", POD, "0+600x150"), ("vllm:prompt_tokens_total", POD, "0+1000x150")],
        "2h",
        "10%",
        False,
    ),
    "KvgenCPUTierThrashing": (
        [
            # L1 saws as LMCache evicts at 80%: a low sample must not reset the alert's `for`
            ("lmcache_mp_l1_usage_ratio", POD, " ".join(["0.8", "0.65"] * 36)),
            ("lmcache_mp_l1_evicted_chunks_total", POD, "0+60x70"),
            ("lmcache_mp_l1_write_chunks_total", POD, "0+100x70"),
        ],
        [
            ("lmcache_mp_l1_usage_ratio", POD, "0.8x70"),
            ("lmcache_mp_l1_evicted_chunks_total", POD, "0+10x70"),
            ("lmcache_mp_l1_write_chunks_total", POD, "0+100x70"),
        ],
        "60m",
        "",
        True,
    ),
    "KvgenLMCacheErrors": (
        [("lmcache_mp_timeouts_total", {**POD, "exception_type": "TimeoutError"}, "0+1x40")],
        [("lmcache_mp_timeouts_total", {**POD, "exception_type": "TimeoutError"}, "0x40")],
        "30m",
        "",
        True,
    ),
}
NATIVE = {"namespace": "llm", "pod": NATIVE_POD}
NATIVE_CASES = {
    "KvgenCPUTierFull": (
        [("vllm:kv_offload_allocation_failure_total", NATIVE, "0+3x40")],
        [("vllm:kv_offload_allocation_failure_total", NATIVE, "0x40")],
        "30m",
        "",
        True,
    ),
}


def unit_tests(rules: dict[str, Any], cases: dict[str, Any], labels: dict[str, str]) -> list[dict[str, Any]]:
    alerts = alerts_of(rules)
    tests = []
    for name, (firing, quiet, at, value, keeps) in cases.items():
        rule = alerts[name]
        kept = {**labels, "severity": rule["labels"]["severity"]} if keeps else dict(rule["labels"])
        expected = {
            "exp_labels": kept,
            "exp_annotations": {k: expand(v, kept, value) for k, v in rule["annotations"].items()},
        }
        for inputs, alerts_expected in ((firing, [expected]), (quiet, [])):
            tests.append(
                {
                    "interval": "1m",
                    "input_series": [series(*s) for s in inputs],
                    "alert_rule_test": [{"eval_time": at, "alertname": name, "exp_alerts": alerts_expected}],
                }
            )
    return tests


@pytest.mark.scan
def test_promtool_fires_each_alert_on_its_series_and_not_on_quiet_ones(tmp_path):
    # the trace example names no namespace: its rules match any; the series carry one as a scrape would
    rules = rules_of("trace-sizing.yaml")
    assert set(alerts_of(rules)) == set(CASES)  # every lmcache alert, and the expected hit ratio's
    native = rules_of("native-arc-eviction.yaml")
    assert set(alerts_of(native)) == {"KvgenKVCacheFullAndPreempting", *NATIVE_CASES}
    (tmp_path / "lmcache.yaml").write_text(yaml.safe_dump(rules))
    (tmp_path / "native.yaml").write_text(yaml.safe_dump(native))
    for rule_file, cases, labels in (("lmcache.yaml", CASES, POD), ("native.yaml", NATIVE_CASES, NATIVE)):
        suite = {
            "rule_files": [rule_file],
            "evaluation_interval": "1m",
            "tests": unit_tests(rules if rule_file == "lmcache.yaml" else native, cases, labels),
        }
        (tmp_path / f"test-{rule_file}").write_text(yaml.safe_dump(suite, sort_keys=False))
        result = subprocess.run(
            [promtool(), "test", "rules", f"test-{rule_file}"], cwd=tmp_path, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout


@pytest.mark.scan
def test_promtool_test_rules_fails_when_an_alert_does_not_fire(tmp_path):
    # the check itself: a quiet series where the alert is expected fails the run
    rules = rules_of("trace-sizing.yaml")
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(rules))
    firing, quiet, at, value, keeps = CASES["KvgenLMCacheErrors"]
    wrong = unit_tests(rules, {"KvgenLMCacheErrors": (quiet, quiet, at, value, keeps)}, POD)[:1]
    (tmp_path / "t.yaml").write_text(
        yaml.safe_dump({"rule_files": ["r.yaml"], "evaluation_interval": "1m", "tests": wrong})
    )
    result = subprocess.run([promtool(), "test", "rules", "t.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1
