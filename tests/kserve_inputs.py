"""KServe LLMInferenceService inputs and facts of KServe's, shared by the KServe tests
(tests/test_kserve_operator.py, tests/test_kserve_router.py, tests/test_routing.py,
tests/test_warnings_everywhere.py)."""

from __future__ import annotations

import textwrap

from kvgen.app.compiler import compile_inputs
from kvgen.input.dialects import Options

HEAD = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata:
  name: qwen
spec:
  model:
    uri: hf://Qwen/Qwen2.5-7B-Instruct
"""


def compile_svc(body: str, instance: str | None = "Standard_NC24ads_A100_v4", name: str = "svc.yaml"):
    text = HEAD + textwrap.indent(textwrap.dedent(body), "  ")
    return compile_inputs([(name, text)], options=Options(instance))


MAIN = """\
template:
  {selector}containers:
    - name: main
      resources:
        limits: {limits}
        requests: {requests}
"""


def main(limits: str, requests: str = "{}", selector: str = "") -> str:
    return MAIN.format(limits=limits, requests=requests, selector=selector)


# KServe v0.20's default scheduler profile, as (pluginRef, weight) in order (pkg/controller/v1alpha2/
# llmisvc/scheduler.go schedulerConfigText; asserted by its TestSchedulerConfigTextDefault)
KSERVE_DEFAULT_PROFILE = [
    ("queue-scorer", 2),
    ("kv-cache-utilization-scorer", 2),
    ("prefix-cache-scorer", 3),
    ("no-hit-lru-scorer", 2),
    ("max-score-picker", None),
]
