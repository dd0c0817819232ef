"""Bad specs fail with every problem listed: the spec path, file:line, a clear message,
exit code 1, no traceback, and no output written."""

from __future__ import annotations

import textwrap

import cli_batch
import pytest
from conftest import assert_refused_at_once, run_kvgen
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
        "name: demo\nmodel:\n  id: Qwen/Qwen3-32B\n  maxModelLen: 32768\ninstance:\n  type: Standard_NC24ads_A100_v4\n",
        "model.maxModelLen",
        "maxModelLen: 32768",
        "32768 tokens do not fit the GPU KV cache",
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
    "max-model-len-does-not-fit": "set model.maxModelLen to at most 19712",
    "emptydir-tier-beyond-the-kubelet-disk": "pvc.spec tier on a local-NVMe storage class",
    "literal-hf-token-in-env": "set model.hfTokenSecret",
    "literal-api-key-env": "valueFrom: {secretKeyRef:",
    "literal-api-key-flag": "set service.apiKeySecret",
    "literal-hf-token-flag-value": "set model.hfTokenSecret",
}


def _line_of(text: str, needle: str) -> int:
    lines = text.splitlines()
    matches = [i + 1 for i, line in enumerate(lines) if needle in line]
    return (
        matches[-1]
        if needle.startswith("- ") or needle.endswith(":") and needle != "kvCacheOffloading:"
        else matches[0]
    )


@pytest.fixture(scope="module")
def rendered_bad(tmp_path_factory) -> cli_batch.Batch:
    """Every case through one `kvgen render FILE... -o OUT` (each file's problems under its header)."""
    root = tmp_path_factory.mktemp("bad")
    return cli_batch.run(
        "render", {case: text for case, (text, *_rest) in CASES.items()}, root / "specs", "-o", str(root / "out")
    )


def test_bad_specs_are_rejected_together_and_nothing_is_written(rendered_bad):
    result = rendered_bad.result
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    out_dir = next(iter(rendered_bad.files.values())).parent.parent / "out"
    assert not out_dir.exists() or not any(out_dir.iterdir()), "no file may be written"
    assert set(rendered_bad.blocks) == set(CASES), "every file is reported under its own header"


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_spec_is_rejected_with_path_and_line(case, rendered_bad):
    text, path, line_text, fragment = CASES[case]
    expected = f"{rendered_bad.files[case]}:{_line_of(text, line_text)}:"
    problem_lines = rendered_bad.problems(case)
    assert any(line.startswith(expected) and f" {path}: " in line and fragment in line for line in problem_lines), (
        rendered_bad.blocks.get(case)
    )
    if case in HINTS:
        assert HINTS[case] in rendered_bad.blocks[case]


def test_unterminated_yaml_names_where_the_open_bracket_started(tmp_path):
    f = tmp_path / "open.yaml"
    f.write_text(HEAD + "kvCacheOffloading:\n  cpu: [10Gi\n")
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "malformed YAML" in result.stderr and "started at line 7" in result.stderr


def test_every_problem_is_reported_at_once(tmp_path):
    text = HEAD.replace("name: demo", "name: Bad_Name") + textwrap.dedent("""\
        replicas: -1
        kvCacheOffloding: {}
        kvCacheOffloading:
          cpuMemoryUtilization: 2
          evictionPolicy: fifo
          secondary:
            - fileSystem:
                emptyDir: {size: -5Gi}
        """)
    assert_refused_at_once(
        tmp_path,
        text,
        {
            ("name", "'Bad_Name' is not valid here (must match ^[a-z]([-a-z0-9]*[a-z0-9])?$)"),
            ("replicas", "Input should be greater than or equal to 0"),
            ("kvCacheOffloding", "unknown key 'kvCacheOffloding'"),
            ("kvCacheOffloading.cpuMemoryUtilization", "Input should be less than or equal to 1"),
            ("kvCacheOffloading.evictionPolicy", "Input should be 'lru' or 'arc'"),
            (
                "kvCacheOffloading.secondary[0].fileSystem.emptyDir.size",
                "-5Gi is negative; a size must be greater than zero, e.g. 10Gi",
            ),
        },
    )


def test_problems_of_several_files_are_all_reported_and_nothing_is_written(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(HEAD)
    bad1 = tmp_path / "bad1.yaml"
    bad1.write_text(HEAD + "replicas: two\n")
    bad2 = tmp_path / "bad2.yaml"
    bad2.write_text(HEAD + "kvCacheOffloding: {}\n")
    out = tmp_path / "out"
    result = run_kvgen("render", str(good), str(bad1), str(bad2), "-o", str(out))
    assert result.returncode == 1
    assert str(bad1) in result.stderr and str(bad2) in result.stderr
    assert not out.exists()


def test_a_token_literal_is_not_a_field(tmp_path):
    f = tmp_path / "token.yaml"
    f.write_text(
        HEAD.replace(
            "  id: meta-llama/Llama-3.1-8B-Instruct", "  id: meta-llama/Llama-3.1-8B-Instruct\n  hfToken: hf_abcdef"
        )
    )
    result = run_kvgen("render", str(f))
    assert result.returncode == 1
    assert "unknown key 'hfToken'" in result.stderr
    assert "hfTokenSecret" in result.stderr  # the hint points at the Secret reference


def test_the_dns_label_hint_is_given_for_the_spec_name_only():
    # a name field of another kind (an environment variable's) is no DNS-1035 label: the hint misled
    from conftest import problem_set, spec

    named = {(path, hint) for path, _, hint in problem_set(spec(name="Bad_Name"))}
    assert ("name", "use lowercase letters, digits and '-', starting with a letter (a DNS-1035 label)") in named
    env = {(path, hint) for path, _, hint in problem_set(spec(vllm={"env": [{"name": "1 bad", "value": "x"}]}))}
    assert env == {("vllm.env[0].name", None)}
