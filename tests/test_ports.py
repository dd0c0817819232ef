"""service.port must not be a port another process of the pod binds (kvgen/plan/ports.py and the
chart's kvgen.checkPorts): containers of a pod share one network namespace, so vLLM would fail
to bind it and the pod would crash-loop. Refused by both faces with the spec path."""

from __future__ import annotations

import helm
import helm_python
import pytest
from conftest import compile_spec, dump, run_kvgen, spec

from kvgen.core.errors import SpecError
from kvgen.data import catalog

LMCACHE = {
    "model": {"id": "Qwen/Qwen3-32B"},
    "instance": {"type": "Standard_NC96ads_A100_v4"},
    "parallelism": {"tensor": 2},
}
MULTI_NODE = {
    "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
    "instance": {"type": "p5.48xlarge", "ephemeralStorage": "28312Gi"},
    "parallelism": {"tensor": 16, "nodes": 2},
    "kvCacheOffloading": {"enabled": False},
}
PREFILL = {**LMCACHE, "disaggregation": {"role": "prefill"}}
NATIVE = {**LMCACHE, "kvCacheOffloading": {"backend": "native", "cpu": "20Gi"}}

CASES = [  # (spec, port, refused)
    (LMCACHE, 5555, True),
    (LMCACHE, 8080, True),
    (LMCACHE, 8081, False),
    (LMCACHE, 29500, False),
    ({**LMCACHE, "kvCacheOffloading": {"lmcache": {"gpuAccess": "in-container"}}}, 8080, True),
    ({**LMCACHE, "kvCacheOffloading": {"enabled": False}}, 8080, False),  # no LMCache server then
    (NATIVE, 8080, False),
    (NATIVE, 5555, False),
    (MULTI_NODE, 29500, True),
    (MULTI_NODE, 8080, False),
    (PREFILL, 5600, True),
    (LMCACHE, 5600, False),
]


@pytest.mark.heavy
@pytest.mark.parametrize("data, port, refused", CASES)
def test_cli_and_chart_refuse_a_port_the_pod_already_binds(data, port, refused):
    values = spec(**data, service={"port": port})
    if not refused:
        objs = compile_spec(values).objects
        assert helm.by_identity(helm.objects(values)) == helm.by_identity(objs)
        return
    with pytest.raises(SpecError) as err:
        compile_spec(values)
    (problem,) = err.value.problems
    assert problem.path == ("service", "port")
    assert f"port {port} is " in problem.message and "vLLM could not bind it" in problem.message
    with pytest.raises(helm_python.HelmRenderError) as chart_err:
        helm.render(values)
    assert f"service.port: port {port} is " in str(chart_err.value)


def test_every_port_row_is_used_and_names_a_known_condition():
    rows = catalog.runtime()["podPorts"]
    assert {r["when"] for r in rows} == {"lmcache", "multiNode", "disaggregation"}
    refused_ports = {port for _data, port, refused in CASES if refused}
    assert {r["port"] for r in rows} == refused_ports  # each row is exercised above


@pytest.mark.heavy
def test_the_cli_names_file_and_line(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(dump(spec(**LMCACHE, service={"port": 8080})))
    result = run_kvgen("render", str(path))
    assert result.returncode == 1 and result.stdout == ""
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "port: 8080" in text)
    assert (
        f"{path}:{line}:" in result.stderr
        and "service.port: port 8080 is the LMCache MP server's HTTP port" in result.stderr
    )
