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


# KServe v0.20's prefill/decode scheduler config (pkg/controller/v1alpha2/llmisvc/scheduler.go:540-591
# schedulerConfigText, the spec.prefill branch, without LoRA adapters; asserted by its
# TestSchedulerConfigTextPD, scheduler_test.go:564-610): the plugins declared, in order, and each profile's
# (pluginRef, weight). With adapters lora-affinity-scorer is declared last and heads both profiles at weight 4
# (TestSchedulerConfigTextPDLoRA, scheduler_test.go:114-184).
KSERVE_PD_PLUGINS = [
    "disagg-headers-handler",
    "prefill-filter",
    "decode-filter",
    "queue-scorer",
    "kv-cache-utilization-scorer",
    "active-request-scorer",
    "prefix-cache-scorer",
    "max-score-picker",
    "always-disagg-pd-decider",
    "disagg-profile-handler",
]
KSERVE_PD_HANDLER_PARAMETERS = {"deciders": {"prefill": "always-disagg-pd-decider"}}
KSERVE_PD_PROFILES = {
    "prefill": [
        ("prefill-filter", None),
        ("prefix-cache-scorer", 3),
        ("queue-scorer", 2),
        ("kv-cache-utilization-scorer", 2),
        ("max-score-picker", None),
    ],
    "decode": [
        ("decode-filter", None),
        ("active-request-scorer", 2),
        ("prefix-cache-scorer", 3),
        ("max-score-picker", None),
    ],
}


def kserve_pd_config(lora: bool = False) -> dict:
    """KServe's P/D EndpointPickerConfig as a mapping, as scheduler.go:554-591 writes it."""
    lead = [{"pluginRef": "lora-affinity-scorer", "weight": 4}] if lora else []

    def ref(name: str, weight: int | None) -> dict:
        return {"pluginRef": name} if weight is None else {"pluginRef": name, "weight": weight}

    plugins = [
        {"type": t, "parameters": KSERVE_PD_HANDLER_PARAMETERS} if t == "disagg-profile-handler" else {"type": t}
        for t in KSERVE_PD_PLUGINS
    ] + ([{"type": "lora-affinity-scorer"}] if lora else [])
    return {
        "apiVersion": "llm-d.ai/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": plugins,
        "schedulingProfiles": [
            {"name": name, "plugins": [ref(*profile[0]), *lead, *(ref(*r) for r in profile[1:])]}
            for name, profile in KSERVE_PD_PROFILES.items()
        ],
    }


# KServe's routing sidecar in its decode pods (config/llmisvcconfig/config-llm-decode-template.yaml:240-285):
# an init container restartPolicy Always, its command (the pool named by the controller, :284)
KSERVE_PD_SIDECAR_IMAGE = "ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0"
KSERVE_PD_SIDECAR_COMMAND = [
    "/app/pd-sidecar",
    "--port=8000",
    "--vllm-port=8001",
    "--kv-connector=nixlv2",
    "--enable-ssrf-protection=true",
    "--pool-group=inference.networking.x-k8s.io",
    "--inference-pool=NAMESPACE/NAME-inference-pool",
]
