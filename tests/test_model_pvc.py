"""model.uri pvc://CLAIM/PATH: the weights from an existing claim, mounted read-only, served
under the model's id, nothing downloaded; in kvgen and in the chart alike."""

from __future__ import annotations

import helm
import pytest
from conftest import compile_spec, container, problem_set, spec

from kvgen.data import catalog

DIR = "/mnt/models/meta-llama--Llama-3.1-8B-Instruct"  # the served path names the model (LMCache keys by it)
PVC = spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "uri": "pvc://model-store/models/llama-8b/"})


def test_the_model_is_served_from_the_claim_under_its_id():
    compiled = compile_spec(PVC)
    assert helm.by_identity(helm.objects(PVC)) == helm.by_identity(compiled.objects)
    vllm = container(compiled, "vllm")
    assert vllm["args"][:2] == [f"{DIR}", "--served-model-name=meta-llama/Llama-3.1-8B-Instruct"]
    assert "meta-llama/Llama-3.1-8B-Instruct" not in vllm["args"][0]
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in vllm["env"]
    assert {
        "name": "model-weights",
        "mountPath": DIR,
        "readOnly": True,
        "subPath": "models/llama-8b",
    } in vllm["volumeMounts"]
    pod = compiled.objects[-1]["spec"]["template"]["spec"]
    assert {"name": "model-weights", "persistentVolumeClaim": {"claimName": "model-store", "readOnly": True}} in pod[
        "volumes"
    ]
    # the LMCache sidecar needs no weights
    sidecar = container(compiled, "lmcache-mp-server")
    assert all(m["name"] != "model-weights" for m in sidecar["volumeMounts"])


def test_nothing_is_downloaded_so_the_model_cache_holds_no_weights():
    def cache(values):
        vols = compile_spec(values).objects[-1]["spec"]["template"]["spec"]["volumes"]
        return next(v["emptyDir"]["sizeLimit"] for v in vols if v["name"] == "model-cache")

    hub = spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct"})
    assert cache(hub) != cache(PVC)
    assert cache(PVC) == f"{catalog.load('sizing.yaml')['modelCache']['headroomGiB']}Gi"  # the headroom alone


def test_a_claim_without_a_path_is_mounted_whole_and_a_served_name_of_ones_own_wins():
    values = spec(
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "uri": "pvc://model-store"},
        vllm={"extraArgs": ["--served-model-name=llama"]},
    )
    compiled = compile_spec(values)
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(compiled.objects)
    vllm = container(compiled, "vllm")
    assert vllm["args"][0] == DIR
    assert [a for a in vllm["args"] if "served-model-name" in a] == ["--served-model-name=llama"]
    (mount,) = [m for m in vllm["volumeMounts"] if m["name"] == "model-weights"]
    assert "subPath" not in mount


@pytest.mark.heavy
def test_bad_claims_are_refused_alike():
    for uri, words in (
        ("pvc://Model_Store/x", "cannot name a PersistentVolumeClaim"),
        ("pvc://model-store/a/../b", "must not contain '..'"),
    ):
        values = spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "uri": uri})
        ours = problem_set(values)
        assert helm.problems(values) == ours
        assert [p for p, m, _h in ours if p == "model.uri" and words in m], ours
    ours = problem_set(spec(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "uri": "s3://bucket/model"}))
    assert {p for p, _m, _h in ours} == {"model.uri"}
