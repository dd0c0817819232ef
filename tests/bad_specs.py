"""Bad native specs, one problem each, with where kvgen must report it: read by the CLI's tests
(tests/test_bad_input.py), the chart's (tests/test_chart.py) and the schema's (tests/test_schema.py)."""

from __future__ import annotations

import textwrap

from specs import NATIVE_HEAD

HEAD = NATIVE_HEAD


def _native_tiers(tiers: str) -> str:
    """HEAD with the native backend, a 10Gi CPU tier and ``tiers`` (YAML list items) as its secondary tiers."""
    return (
        HEAD
        + "kvCacheOffloading:\n  backend: native\n  cpu: 10Gi\n  secondary:\n"
        + textwrap.indent(textwrap.dedent(tiers), "    ")
    )


# id -> (spec text, spec path, text on the reported line, message fragment)
CASES = {
    "unknown-key": (
        HEAD + "kvCacheOffloding:\n  enabled: true\n",
        "kvCacheOffloding",
        "kvCacheOffloding:",
        "unknown key 'kvCacheOffloding'",
    ),
    "negative-size": (
        HEAD + "kvCacheOffloading:\n  backend: native\n  cpu: -10Gi\n",
        "kvCacheOffloading.cpu",
        "cpu: -10Gi",
        "negative",
    ),
    "emptydir-and-pvc": (
        _native_tiers("""\
            - fileSystem:
                emptyDir: {size: 100Gi}
            - fileSystem:
                emptyDir: {size: 100Gi}
                pvc: {ref: {name: cache}}
            """),
        "kvCacheOffloading.secondary[1].fileSystem",
        "- fileSystem:",
        "exactly one of emptyDir or pvc must be set; both are set",
    ),
    "neither-emptydir-nor-pvc": (
        _native_tiers("- fileSystem: {}\n"),
        "kvCacheOffloading.secondary[0].fileSystem",
        "- fileSystem: {}",
        "neither is set",
    ),
    "pvc-spec-and-ref": (
        _native_tiers("""\
            - fileSystem:
                pvc:
                  spec: {storageClassName: nvme}
                  ref: {name: cache}
            """),
        "kvCacheOffloading.secondary[0].fileSystem.pvc",
        "pvc:",
        "exactly one of spec or ref must be set; both are set",
    ),
    "missing-ref-name": (
        HEAD
        + "kvCacheOffloading:\n  backend: native\n  cpu: 10Gi\n  secondary:\n    - fileSystem:\n        pvc:\n          ref: {path: kv/}\n",
        "kvCacheOffloading.secondary[0].fileSystem.pvc.ref.name",
        "ref: {path: kv/}",
        "required key is missing",
    ),
    "native-without-cpu": (
        HEAD + "kvCacheOffloading:\n  backend: native\n",
        "kvCacheOffloading",
        "kvCacheOffloading:",
        "the native backend needs the size of its CPU tier",
    ),
    "invalid-name": (
        HEAD.replace("name: demo", "name: Gemma_4"),
        "name",
        "name: Gemma_4",
        "'Gemma_4' is not valid here",
    ),
    "utilization-above-one": (
        HEAD + "kvCacheOffloading:\n  cpuMemoryUtilization: 1.5\n",
        "kvCacheOffloading.cpuMemoryUtilization",
        "cpuMemoryUtilization: 1.5",
        "less than or equal to 1",
    ),
    "utilization-below-zero": (
        HEAD + "kvCacheOffloading:\n  cpuMemoryUtilization: -0.1\n",
        "kvCacheOffloading.cpuMemoryUtilization",
        "cpuMemoryUtilization: -0.1",
        "greater than or equal to 0",
    ),
    "parallelism-exceeds-gpus": (
        HEAD + "parallelism:\n  tensor: 4\n",
        "parallelism",
        "parallelism:",
        "needs 4 GPUs per node, but Standard_NC24ads_A100_v4 has 1",
    ),
    "unknown-instance-type": (
        HEAD.replace("Standard_NC24ads_A100_v4", "Standard_NC24ads_A100_V4"),
        "instance.type",
        "type: Standard_NC24ads_A100_V4",
        "unknown instance type 'Standard_NC24ads_A100_V4'",
    ),
    "unknown-model": (
        HEAD.replace("meta-llama/Llama-3.1-8B-Instruct", "acme/secret-model-7b"),
        "model.id",
        "id: acme/secret-model-7b",
        "is not in the catalog and is not described inline",
    ),
    "malformed-yaml": (
        HEAD + "kvCacheOffloading:\n  cpu: 10Gi: 20Gi\n  evictionPolicy: lru\n",
        "(spec)",
        "cpu: 10Gi: 20Gi",
        "malformed YAML: mapping values are not allowed here",
    ),
    "pod-does-not-fit-node": (
        HEAD + "kvCacheOffloading:\n  backend: native\n  cpu: 500Gi\n",
        "kvCacheOffloading.cpu",
        "cpu: 500Gi",
        "the pod needs",
    ),
    "managed-flag-in-extra-args": (
        HEAD + "vllm:\n  extraArgs:\n    - --max-num-seqs=64\n    - --kv-transfer-config={}\n",
        "vllm.extraArgs[1]",
        "- --kv-transfer-config={}",
        "--kv-transfer-config is set by kvgen",
    ),
    "wrong-type": (
        HEAD + "replicas: two\n",
        "replicas",
        "replicas: two",
        "valid integer",
    ),
    "unknown-gpu-access": (
        HEAD + "kvCacheOffloading:\n  lmcache:\n    gpuAccess: privileged\n",
        "kvCacheOffloading.lmcache.gpuAccess",
        "gpuAccess: privileged",
        "'visible-devices', 'dra' or 'in-container'",
    ),
    "dra-below-kubernetes-1-34": (
        HEAD + "kvCacheOffloading:\n  lmcache:\n    gpuAccess: dra\n",
        "kvCacheOffloading.lmcache.gpuAccess",
        "gpuAccess: dra",
        "needs Kubernetes 1.34 or newer",
    ),
    "invalid-device-class-name": (
        HEAD + "kvCacheOffloading:\n  lmcache:\n    gpuAccess: dra\n    deviceClassName: GPU_Nvidia\n",
        "kvCacheOffloading.lmcache.deviceClassName",
        "deviceClassName: GPU_Nvidia",
        "'GPU_Nvidia' is not valid here",
    ),
    "invalid-embedded-pvc-spec": (
        HEAD
        + "kvCacheOffloading:\n  backend: native\n  cpu: 10Gi\n  secondary:\n    - fileSystem:\n        pvc:\n          spec:\n            storageClassNam: nvme\n",
        "kvCacheOffloading.secondary[0].fileSystem.pvc.spec",
        "spec:",
        "'storageClassNam' was unexpected",
    ),
    "max-model-len-does-not-fit": (
        "name: demo\nmodel:\n  id: Qwen/Qwen3-32B\n  maxModelLen: 36864\ninstance:\n  type: Standard_NC24ads_A100_v4\n",
        "model.maxModelLen",
        "maxModelLen: 36864",
        "36864 tokens do not fit the GPU KV cache",
    ),
    "hybrid-false-on-a-hybrid-architecture": (
        "name: demo\nmodel:\n  id: nvidia/NVIDIA-Nemotron-Nano-9B-v2\n  hybrid: false\ninstance:\n  type: Standard_NC24ads_A100_v4\n",
        "model.hybrid",
        "hybrid: false",
        "NemotronHForCausalLM is a hybrid architecture",
    ),
    "emptydir-tier-beyond-the-kubelet-disk": (
        HEAD.replace("Standard_NC24ads_A100_v4", "p5.48xlarge")
        + "parallelism:\n  tensor: 8\n"
        + "kvCacheOffloading:\n  cpu: 64Gi\n  secondary:\n    - fileSystem:\n        emptyDir: {size: 500Gi}\n",
        "kvCacheOffloading.secondary",
        "secondary:",
        "of ephemeral storage",
    ),
    "literal-hf-token-in-env": (
        HEAD + "vllm:\n  env:\n    - name: HF_TOKEN\n      value: hf_abcdef\n",
        "vllm.env[0].value",
        "value: hf_abcdef",
        "HF_TOKEN carries a credential",
    ),
    "literal-api-key-env": (
        HEAD + "vllm:\n  env:\n    - {name: OPENAI_API_KEY, value: sk-123}\n",
        "vllm.env[0].value",
        "OPENAI_API_KEY",
        "OPENAI_API_KEY carries a credential",
    ),
    "literal-api-key-flag": (
        HEAD + "vllm:\n  extraArgs:\n    - --max-num-seqs=64\n    - --api-key=sk-123\n",
        "vllm.extraArgs[1]",
        "- --api-key=sk-123",
        "--api-key takes a credential",
    ),
    "literal-hf-token-flag-value": (
        HEAD + "vllm:\n  extraArgs:\n    - --hf_token\n    - hf_abcdef\n",
        "vllm.extraArgs[1]",
        "- hf_abcdef",
        "the value of --hf-token is a credential",
    ),
}

HINTS = {
    "unknown-key": "did you mean 'kvCacheOffloading'?",
    "unknown-instance-type": "did you mean 'Standard_NC24ads_A100_v4'?",
    "pod-does-not-fit-node": "lower kvCacheOffloading.cpu to at most",
    "max-model-len-does-not-fit": "set model.maxModelLen to at most 33600",
    "emptydir-tier-beyond-the-kubelet-disk": "pvc.spec tier on a local-NVMe storage class",
    "literal-hf-token-in-env": "set model.hfTokenSecret",
    "literal-api-key-env": "valueFrom: {secretKeyRef:",
    "literal-api-key-flag": "set service.apiKeySecret",
    "literal-hf-token-flag-value": "set model.hfTokenSecret",
}


def line_of(text: str, needle: str) -> int:
    lines = text.splitlines()
    matches = [i + 1 for i, line in enumerate(lines) if needle in line]
    return (
        matches[-1]
        if needle.startswith("- ") or needle.endswith(":") and needle != "kvCacheOffloading:"
        else matches[0]
    )
