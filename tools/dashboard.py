"""Write charts/kvgen/files/dashboard.json: the Grafana dashboard of one kvgen server (metrics.dashboard).

    python -m tools.dashboard            write it (scripts/regenerate runs this)
    python -m tools.dashboard --check    exit 1 if the file is not what this writes

Built with grafana-foundation-sdk (Grafana 11.6's models), not by hand. Every metric name comes from
``monitoring.metrics`` in charts/kvgen/files/runtime.yaml, where each is checked against the pinned
vLLM, LMCache and picker source (tests/test_monitoring.py). The dashboard's variables say which server
it shows: ``namespace``, ``pod`` and ``picker`` (textboxes: regexes of pod names), ``expectedHitRatio``,
``cpuTierBytes`` and ``diskTierBytes`` (hidden constants). The file holds them as an importing user
sets them; the layout (templates/context/_operations.tpl) sets them to one server's values in the
ConfigMap it renders.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as dash
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import units
from grafana_foundation_sdk.models.dashboard import DataSourceRef, Threshold, ThresholdsMode

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "charts" / "kvgen" / "files" / "dashboard.json"
DS = DataSourceRef(type_val="prometheus", uid="${datasource}")
SERVER = 'namespace=~"$namespace",pod=~"$pod"'
PICKER = 'namespace=~"$namespace",pod=~"$picker"'
WINDOW = "$__rate_interval"


def metrics() -> dict[str, dict[str, str]]:
    runtime = yaml.safe_load((ROOT / "charts" / "kvgen" / "files" / "runtime.yaml").read_text(encoding="utf-8"))
    return {group: {k: v["name"] for k, v in rows.items()} for group, rows in runtime["monitoring"]["metrics"].items()}


def query(expr: str, legend: str, ref: str = "A") -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(ref).datasource(DS)


def thresholds(*steps: tuple[float | None, str]) -> dash.ThresholdsConfig:
    return dash.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps([Threshold(value=v, color=c) for v, c in steps])


def series(pid: int, title: str, unit: str, description: str, *targets: prometheus.Dataquery) -> timeseries.Panel:
    panel = (
        timeseries.Panel()
        .id(pid)
        .title(title)
        .description(description)
        .datasource(DS)
        .unit(unit)
        .span(12)
        .height(8)
        .line_width(1)
        .fill_opacity(10)
        .legend(
            cb.VizLegendOptions()
            .display_mode(cm.LegendDisplayMode.LIST)
            .placement(cm.LegendPlacement.BOTTOM)
            .show_legend(True)
        )
    )
    for t in targets:
        panel = panel.with_target(t)
    return panel


def single(pid: int, title: str, unit: str, description: str, target: prometheus.Dataquery) -> stat.Panel:
    return (
        stat.Panel()
        .id(pid)
        .title(title)
        .description(description)
        .datasource(DS)
        .unit(unit)
        .span(6)
        .height(4)
        .with_target(target)
        .thresholds(thresholds((None, "blue")))
        .graph_mode(cm.BigValueGraphMode.AREA)
        .color_mode(cm.BigValueColorMode.VALUE)
        .reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
    )


def build() -> Any:
    m = metrics()
    v, lm, pk = m["vllm"], m["lmcache"], m["picker"]
    prompt = f"sum(rate({v['promptTokens']}{{{SERVER}}}[1h]))"
    by_source = v["promptTokensBySource"]
    failures = ("l1AllocationFailures", "l1ReadFailures", "l2PrefetchFailures", "timeouts")
    b = (
        dash.Dashboard("kvgen: KV-cache tiers")
        .uid("kvgen-kv-cache")
        .description(
            "What each KV-cache tier of one vLLM server serves, as vLLM's and LMCache's metrics say, against what "
            "kvgen planned (written by kvgen's tools/dashboard.py; metrics.dashboard renders it per server)."
        )
        .tags(["kvgen", "vllm", "lmcache"])
        .time("now-6h", "now")
        .refresh("1m")
        .timezone("browser")
        .readonly()
        .with_variable(dash.DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
        .with_variable(dash.TextBoxVariable("namespace").label("Namespace (regex)").default_value(".*"))
        .with_variable(dash.TextBoxVariable("pod").label("Server pods (regex)").default_value("NAME-.*"))
        .with_variable(dash.TextBoxVariable("picker").label("Picker pods (regex)").default_value("NAME-epp-.*"))
        .with_variable(dash.ConstantVariable("expectedHitRatio").value("NaN"))
        .with_variable(dash.ConstantVariable("cpuTierBytes").value("NaN"))
        .with_variable(dash.ConstantVariable("diskTierBytes").value("NaN"))
        .with_row(dash.Row("Hit ratio: the prompt tokens a KV-cache tier serves").id(1))
        .with_panel(
            single(
                2,
                "Hit ratio, all tiers (1h)",
                units.PercentUnit,
                "Prompt tokens served from the GPU prefix cache or an offloaded tier, over all prompt tokens.",
                query(f"sum(rate({v['promptTokensCached']}{{{SERVER}}}[1h])) / {prompt}", "all tiers"),
            )
        )
        .with_panel(
            single(
                3,
                "Expected (kvgen explain --trace)",
                units.PercentUnit,
                "metrics.expectedHitRatio: the hit ratio kvgen explain --trace predicted for this spec (empty: not set).",
                query("vector($expectedHitRatio)", "expected"),
            )
        )
        .with_panel(
            single(
                4,
                "GPU prefix cache (1h)",
                units.PercentUnit,
                "Prompt tokens vLLM found in its own GPU prefix cache.",
                query(f'sum(rate({by_source}{{{SERVER},source="local_cache_hit"}}[1h])) / {prompt}', "GPU"),
            )
        )
        .with_panel(
            single(
                5,
                "Offloaded tiers (1h)",
                units.PercentUnit,
                "Prompt tokens loaded through the KV connector: the CPU, disk and shared tiers.",
                query(f'sum(rate({by_source}{{{SERVER},source="external_kv_transfer"}}[1h])) / {prompt}', "offloaded"),
            )
        )
        .with_panel(
            series(
                6,
                "Prompt tokens by source",
                "short",
                "Prompt tokens per second: computed, found in the GPU prefix cache, loaded from an offloaded tier.",
                query(f"sum by (source) (rate({by_source}{{{SERVER}}}[{WINDOW}]))", "{{source}}"),
            )
        )
        .with_panel(
            series(
                7,
                "Hit ratio: observed and expected",
                units.PercentUnit,
                "The observed hit ratio (all tiers) against metrics.expectedHitRatio.",
                query(
                    f"sum(rate({v['promptTokensCached']}{{{SERVER}}}[{WINDOW}])) / "
                    f"sum(rate({v['promptTokens']}{{{SERVER}}}[{WINDOW}]))",
                    "observed",
                ),
                query("vector($expectedHitRatio)", "expected", "B"),
            ).min(0)
        )
        .with_row(dash.Row("CPU and disk tiers (the LMCache server: metrics.podMonitor with lmcacheServer)").id(8))
        .with_panel(
            series(
                9,
                "LMCache lookups: tokens found in L1 (CPU) and L2 (disk, shared)",
                "short",
                "Tokens per second LMCache was asked for, and those its CPU tier and its L2 tiers held.",
                query(f"sum(rate({lm['lookupRequested']}{{{SERVER}}}[{WINDOW}]))", "asked"),
                query(f"sum(rate({lm['lookupHitL1']}{{{SERVER}}}[{WINDOW}]))", "L1 (CPU)", "B"),
                query(f"sum(rate({lm['lookupHitL2']}{{{SERVER}}}[{WINDOW}]))", "L2 (disk, shared)", "C"),
            )
        )
        .with_panel(
            series(
                10,
                "CPU tier in use against its planned size",
                units.BytesIEC,
                "LMCache's L1 bytes in use per pod; kvgen's planned CPU tier (it evicts from 80% full).",
                query(f"sum by (pod) ({lm['l1UsageBytes']}{{{SERVER}}})", "{{pod}}"),
                query("vector($cpuTierBytes)", "planned", "B"),
            )
        )
        .with_panel(
            series(
                11,
                "CPU tier writes and evictions",
                "short",
                "Chunks per second written to and evicted from L1: evictions near the writes mean a tier too small.",
                query(f"sum(rate({lm['l1Writes']}{{{SERVER}}}[{WINDOW}]))", "written"),
                query(f"sum(rate({lm['l1Evictions']}{{{SERVER}}}[{WINDOW}]))", "evicted", "B"),
            )
        )
        .with_panel(
            series(
                12,
                "Disk and shared tiers in use",
                units.BytesIEC,
                "LMCache's L2 bytes in use per adapter; kvgen's planned disk tiers of known size.",
                query(f"sum by (pod, l2_name) ({lm['l2UsageBytes']}{{{SERVER}}})", "{{pod}} {{l2_name}}"),
                query("vector($diskTierBytes)", "planned disk", "B"),
            )
        )
        .with_panel(
            series(
                13,
                "LMCache errors",
                "short",
                "Failures per second: L1 allocations without memory, L1 reads, L2 prefetches, timeouts.",
                *(
                    query(f"sum(rate({lm[name]}{{{SERVER}}}[{WINDOW}]))", name, chr(ord("A") + i))
                    for i, name in enumerate(failures)
                ),
            )
        )
        .with_row(dash.Row("GPU KV cache").id(14))
        .with_panel(
            series(
                15,
                "GPU KV cache usage",
                units.PercentUnit,
                "vLLM's KV cache in use per pod: above 95% requests wait or are preempted.",
                query(f"max by (pod) ({v['kvCacheUsage']}{{{SERVER}}})", "{{pod}}"),
            )
            .min(0)
            .max(1)
            .thresholds(thresholds((None, "green"), (0.95, "red")))
        )
        .with_panel(
            series(
                16,
                "Preemptions and waiting requests",
                "short",
                "Preemptions per second and requests waiting; the native backend's CPU tier allocation failures.",
                query(f"sum(rate({v['preemptions']}{{{SERVER}}}[{WINDOW}]))", "preemptions/s"),
                query(f"sum({v['requestsWaiting']}{{{SERVER}}})", "waiting", "B"),
                query(f"sum(rate({v['offloadAllocationFailures']}{{{SERVER}}}[{WINDOW}]))", "CPU tier full/s", "C"),
            )
        )
        .with_row(dash.Row("Endpoint picker (routing.mode gateway; scrape its metrics port)").id(17))
        .with_panel(
            series(
                18,
                "Picker: share of the prompt its prefix index matched",
                units.PercentUnit,
                "The picker's estimate of the prefix the chosen server holds (not a cache hit).",
                query(
                    f"sum(rate({pk['prefixIndexerHitRatio']}_sum{{{PICKER}}}[{WINDOW}])) / "
                    f"sum(rate({pk['prefixIndexerHitRatio']}_count{{{PICKER}}}[{WINDOW}]))",
                    "mean",
                ),
            ).min(0)
        )
        .with_panel(
            series(
                19,
                "Picker: requests and prefix index size",
                "short",
                "Requests per second the picker routed, and the blocks its prefix index holds.",
                query(f"sum(rate({pk['requests']}{{{PICKER}}}[{WINDOW}]))", "requests/s"),
                query(f"sum({pk['prefixIndexerSize']}{{{PICKER}}})", "index blocks", "B"),
            )
        )
    )
    return b.build()


def text() -> str:
    return json.dumps(build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    want = text()
    if args.check:
        if OUT.read_text(encoding="utf-8") != want:
            print(f"{OUT.relative_to(ROOT)} is stale: run python -m tools.dashboard", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(want, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
