"""pod.volumes and vllm.volumeMounts: extra volumes for the vLLM container, checked against the
Kubernetes definitions and kvgen's own names and paths, in kvgen and in the chart alike."""

from __future__ import annotations

import helm
import pytest
from conftest import compile_spec, container, dump, problem_set, run_kvgen, spec, workload

VOLUMES = spec(
    pod={
        "volumes": [
            {"name": "certs", "secret": {"secretName": "internal-ca"}},
            {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
        ]
    },
    vllm={
        "volumeMounts": [
            {"name": "certs", "mountPath": "/etc/ssl/internal", "readOnly": True},
            {"name": "scratch", "mountPath": "/tmp"},
        ]
    },
)


@pytest.mark.heavy
def test_extra_volumes_are_mounted_into_the_vllm_container_after_kvgens_own():
    compiled = compile_spec(VOLUMES)
    assert helm.by_identity(helm.objects(VOLUMES)) == helm.by_identity(compiled.objects)
    pod = workload(compiled)["spec"]["template"]["spec"]
    assert pod["volumes"][-2:] == VOLUMES["pod"]["volumes"]
    assert pod["volumes"][0]["name"] == "dshm"
    assert container(compiled, "vllm")["volumeMounts"][-2:] == VOLUMES["vllm"]["volumeMounts"]
    assert all(m["name"] not in ("certs", "scratch") for m in container(compiled, "lmcache-mp-server")["volumeMounts"])


def test_collisions_with_kvgens_volumes_and_mounts_are_refused_alike():
    values = spec(
        pod={
            "volumes": [
                {"name": "dshm", "emptyDir": {}},
                {"name": "kv-cache-secondary-0", "emptyDir": {}},
                {"name": "Data", "emptyDir": {}},
                {"name": "data", "emptyDir": {}},
                {"name": "data", "emptyDir": {}},
            ]
        },
        vllm={
            "volumeMounts": [
                {"name": "data", "mountPath": "/root/.cache/huggingface"},
                {"name": "data", "mountPath": "/mnt"},
                {"name": "data", "mountPath": "/mnt/kv-cache-3"},
                {"name": "data", "mountPath": "/data"},
                {"name": "data", "mountPath": "/data/"},
                {"name": "missing", "mountPath": "/other"},
            ]
        },
    )
    ours = problem_set(values)
    assert helm.problems(values) == ours
    assert {p for p, _m, _h in ours} == {
        "pod.volumes[0].name",
        "pod.volumes[1].name",
        "pod.volumes[2].name",
        "pod.volumes[4].name",
        "vllm.volumeMounts[0].mountPath",
        "vllm.volumeMounts[1].mountPath",
        "vllm.volumeMounts[2].mountPath",
        "vllm.volumeMounts[4].mountPath",
        "vllm.volumeMounts[5].name",
    }, ours


@pytest.mark.heavy
def test_volumes_are_checked_against_the_kubernetes_definitions(tmp_path):
    bad = spec(
        pod={"volumes": [{"name": "x", "hostPth": {"path": "/data"}}]},
        vllm={"volumeMounts": [{"name": "x", "mountPath": "/x", "readOnly": "yes"}]},
    )
    f = tmp_path / "bad.yaml"
    f.write_text(dump(bad))
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "pod.volumes[0]" in result.stderr and "hostPth" in result.stderr, result.stderr
    assert "vllm.volumeMounts[0].readOnly" in result.stderr, result.stderr
