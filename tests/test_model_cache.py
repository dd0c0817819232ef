"""model.cache: weights on a claim that survives a pod's re-creation, filled once by an init
container (`hf download`), served from /mnt/models offline; in kvgen and in the chart alike."""

from __future__ import annotations

import json

import helm
import pytest
from conftest import compile_spec, problem_set, spec, validate_strictly

from kvgen.core.errors import SpecError
from kvgen.data import catalog, connector
from kvgen.spec.models import Spec

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
TOKEN = {"name": "hf-token", "key": "token"}
DIR = "/mnt/models/meta-llama--Llama-3.1-8B-Instruct"  # the served path names the model and revision (LMCache's keys)
TEMPLATE = spec(
    model={"id": LLAMA, "hfTokenSecret": TOKEN, "cache": {"claimTemplate": {"storageClassName": "gp3"}}},
    replicas=2,
    vllm={"extraArgs": ["--revision", "abc123", "--max-num-seqs=64"]},
)
SHARED = spec(model={"id": LLAMA, "cache": {"claim": {"name": "models"}}})


def _both(values):
    compiled = compile_spec(values)
    ours = helm.by_identity(compiled.objects)
    assert helm.by_identity(helm.objects(values)) == ours, helm.first_difference(
        ours, helm.by_identity(helm.objects(values))
    )
    return compiled, ours


def _pod(obj):
    return obj["spec"]["template"]["spec"] if "template" in obj["spec"] else obj["spec"]


def _named(items, name):
    (found,) = [i for i in items if i["name"] == name]
    return found


@pytest.mark.heavy
def test_a_claim_per_pod_makes_a_statefulset_that_downloads_once_and_serves_offline():
    compiled, objs = _both(TEMPLATE)
    assert ("Deployment", "demo") not in objs
    sts = objs[("StatefulSet", "demo")]
    assert sts["spec"]["replicas"] == 2
    assert sts["spec"]["serviceName"] == "demo-headless" and ("Service", "demo-headless") in objs
    assert sts["spec"]["podManagementPolicy"] == "Parallel"
    assert sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Delete", "whenScaled": "Retain"}
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    assert claim["metadata"] == {"name": "model-weights"}
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert claim["spec"]["storageClassName"] == "gp3"
    pod = _pod(sts)
    init = _named(pod["initContainers"], "model-download")
    assert pod["initContainers"][0] is init  # before the LMCache sidecar
    assert init["command"] == ["hf", "download"]
    excludes = [f"--exclude={p}" for p in connector.wiring()["modelDownload"]["exclude"]]
    assert init["args"] == [LLAMA, f"--local-dir={DIR}--abc123", *excludes, "--revision=abc123"]
    assert "--exclude=*/*" in excludes and "--exclude=consolidated*.safetensors" in excludes
    assert not any("token" in a for a in init["args"])  # the token is HF_TOKEN from the Secret, never --token
    assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": TOKEN}} in init["env"]
    assert {"name": "HF_HOME", "value": "/root/.cache/huggingface"} in init["env"]
    assert {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"} in init["env"]
    assert {"name": "HF_XET_CHUNK_CACHE_SIZE_BYTES", "value": "0"} in init["env"]  # not 10 GB in a 2Gi emptyDir
    assert {"name": "model-weights", "mountPath": f"{DIR}--abc123"} in init["volumeMounts"]  # read-write
    vllm = _named(pod["containers"], "vllm")
    assert vllm["args"][:2] == [f"{DIR}--abc123", f"--served-model-name={LLAMA}"]
    assert "--max-num-seqs=64" in vllm["args"]
    assert not any(a.startswith("--revision") or a == "abc123" for a in vllm["args"])  # the directory has none
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in vllm["env"]
    assert {"name": "model-weights", "mountPath": f"{DIR}--abc123", "readOnly": True} in vllm["volumeMounts"]
    assert all(v["name"] != "model-weights" for v in pod["volumes"])  # the claim template provides it
    for obj in compiled.objects:
        validate_strictly(obj, "1.33")


@pytest.mark.heavy
def test_the_claims_size_follows_the_checkpoint_and_the_model_cache_holds_headroom_only():
    compiled, objs = _both(TEMPLATE)
    model = compiled.plan.model
    c = catalog.load("sizing.yaml")["modelCache"]
    want = -(-(model.download_bytes * (100 + c["claimSlackPercent"]) // 100 + c["headroomGiB"] * 2**30) // 2**30)
    (claim,) = objs[("StatefulSet", "demo")]["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == f"{want}Gi"
    assert want * 2**30 > model.download_bytes
    cache = _named(_pod(objs[("StatefulSet", "demo")])["volumes"], "model-cache")
    assert cache["emptyDir"]["sizeLimit"] == f"{c['headroomGiB']}Gi"
    pinned = spec(model={"id": LLAMA, "cache": {"claimTemplate": {"size": "500Gi"}}})
    _c, objs = _both(pinned)
    (claim,) = objs[("StatefulSet", "demo")]["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "500Gi"


def test_the_startup_probe_loses_the_download_term_and_a_70b_fits_a_20_gib_root_disk():
    seventy = {"id": "meta-llama/Llama-3.1-70B-Instruct", "hfTokenSecret": TOKEN}
    p5 = {"type": "p5.48xlarge"}
    big_disk = {"type": "p5.48xlarge", "ephemeralStorage": "2000Gi"}
    tp8 = {"tensor": 8}
    # on the default 20 GiB OS disk the emptyDir cache of 134 GiB cannot fit; on a claim it need not
    refused = {p for p, _m, _h in problem_set(spec(model=seventy, instance=p5, parallelism=tp8))}
    assert "instance.ephemeralStorage" in refused
    cached_values = spec(model={**seventy, "cache": {"claimTemplate": {}}}, instance=p5, parallelism=tp8)
    cached, _objs = _both(cached_values)
    hub = compile_spec(spec(model=seventy, instance=big_disk, parallelism=tp8))

    def threshold(c):
        load = [o for o in c.objects if o["kind"] in ("Deployment", "StatefulSet")][0]
        return _named(_pod(load)["containers"], "vllm")["startupProbe"]["failureThreshold"]

    assert threshold(cached) < threshold(hub)


def test_an_existing_claim_keeps_the_deployment_with_a_sub_path_and_the_download_in_its_deadline():
    _c, objs = _both(SHARED)
    dep = objs[("Deployment", "demo")]
    pod = _pod(dep)
    assert {"name": "model-weights", "persistentVolumeClaim": {"claimName": "models"}} in pod["volumes"]
    init = _named(pod["initContainers"], "model-download")
    sub = LLAMA.replace("/", "--")
    assert {"name": "model-weights", "mountPath": DIR, "subPath": sub} in init["volumeMounts"]
    vllm = _named(pod["containers"], "vllm")
    assert {"name": "model-weights", "mountPath": DIR, "readOnly": True, "subPath": sub} in vllm["volumeMounts"]
    startup = vllm["startupProbe"]
    hub = compile_spec(spec(model={"id": LLAMA}))
    hub_dep = [o for o in hub.objects if o["kind"] == "Deployment"][0]
    budget = startup["periodSeconds"] * startup["failureThreshold"]
    # the download is in the Deployment's deadline (it happens before the probe runs), not in the probe's budget
    assert dep["spec"]["progressDeadlineSeconds"] > budget + 600
    assert hub_dep["spec"]["progressDeadlineSeconds"] == hub_dep["spec"]["progressDeadlineSeconds"]


def test_download_false_renders_no_init_container_and_a_given_path_is_the_sub_path():
    values = spec(model={"id": LLAMA, "cache": {"claim": {"name": "models", "path": "/llama/8b/"}, "download": False}})
    _c, objs = _both(values)
    pod = _pod(objs[("Deployment", "demo")])
    assert all(c["name"] != "model-download" for c in pod.get("initContainers", []))
    vllm = _named(pod["containers"], "vllm")
    assert {"name": "model-weights", "mountPath": DIR, "readOnly": True, "subPath": "llama/8b"} in vllm["volumeMounts"]


@pytest.mark.heavy
@pytest.mark.parametrize("engine", ["statefulset", "leaderworkerset"])
def test_every_node_of_a_multi_node_server_gets_its_claim_and_the_download(engine):
    values = spec(
        model={"id": "meta-llama/Llama-3.1-70B-Instruct", "cache": {"claimTemplate": {}}},
        instance={"type": "Standard_NC24ads_A100_v4"},
        parallelism={"tensor": 1, "pipeline": 2, "nodes": 2},
        multiNode={"engine": engine},
        kvCacheOffloading={"enabled": False},
    )
    compiled, objs = _both(values)
    loads = [o for o in compiled.objects if o["kind"] in ("StatefulSet", "LeaderWorkerSet")]
    assert len(loads) == (2 if engine == "statefulset" else 1)
    for load in loads:
        if load["kind"] == "LeaderWorkerSet":
            t = load["spec"]["leaderWorkerTemplate"]
            assert t["volumeClaimTemplates"][0]["metadata"]["name"] == "model-weights"
            assert t["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Delete", "whenScaled": "Retain"}
            pods = [t["leaderTemplate"]["spec"], t["workerTemplate"]["spec"]]
        else:
            assert load["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "model-weights"
            pods = [load["spec"]["template"]["spec"]]
        for pod in pods:
            assert pod["initContainers"][0]["name"] == "model-download"
            assert {"name": "HF_HUB_OFFLINE", "value": "1"} in _named(pod["containers"], "vllm")["env"]
    for obj in compiled.objects:
        validate_strictly(obj, "1.33")  # the LeaderWorkerSet against the vendored LWS v0.10 CRD


@pytest.mark.heavy
def test_problems_are_the_same_on_both_faces():
    cases = {
        "model.cache": spec(model={"id": LLAMA, "uri": "pvc://store/x", "cache": {"claim": {"name": "models"}}}),
        "model.cache.claimTemplate.size": spec(model={"id": LLAMA, "cache": {"claimTemplate": {"size": "1Gi"}}}),
        "model.cache.claimTemplate": spec(
            model={"id": LLAMA, "cache": {"claimTemplate": {}}},
            autoscaling={"maxReplicas": 3, "keda": {"serverAddress": "http://prometheus:9090"}},
        ),
        "model.cache.claim.name": spec(model={"id": LLAMA, "cache": {"claim": {"name": "Bad_Name"}}}),
        "model.cache.claimTemplate.storageClassName": spec(
            model={"id": LLAMA, "cache": {"claimTemplate": {"storageClassName": "Fast SSD"}}}
        ),
        "deployment.strategy": spec(
            model={"id": LLAMA, "cache": {"claimTemplate": {}}}, deployment={"strategy": {"type": "Recreate"}}
        ),
        "model.cache.claim.path": spec(model={"id": LLAMA, "cache": {"claim": {"name": "m", "path": "a/../b"}}}),
    }
    for path, values in cases.items():
        ours = problem_set(values)
        assert path in {p for p, _m, _h in ours}, (path, ours)
        assert all(h for p, _m, h in ours if p == path) or path.endswith("storageClassName")  # hints
        assert helm.problems(values) == ours, path


def test_the_uri_and_cache_problem_says_what_to_keep():
    (problem,) = [
        p
        for p in problem_set(spec(model={"id": LLAMA, "uri": "pvc://store/x", "cache": {"claim": {"name": "models"}}}))
        if p[0] == "model.cache"
    ]
    assert "model.uri and model.cache both say where the weights are" in problem[1]
    assert "model.cache.claim" in (problem[2] or "")


def test_exactly_one_of_claim_template_or_claim():
    with pytest.raises(ValueError, match="exactly one of claimTemplate or claim"):
        Spec.model_validate(spec(model={"id": LLAMA, "cache": {"download": True}}))
    with pytest.raises(ValueError, match="both are set"):
        Spec.model_validate(spec(model={"id": LLAMA, "cache": {"claimTemplate": {}, "claim": {"name": "m"}}}))


def test_a_claim_shared_by_several_pods_warns_that_it_must_be_read_write_many():
    values = {**SHARED, "replicas": 3}
    c = compile_spec(values)
    (warning,) = [w for w in c.plan.warnings if w.startswith("model.cache.claim")]
    assert "mounted by up to 3 pods: it must be ReadWriteMany" in warning
    assert warning in helm.notes_warnings(helm.notes(values))
    assert not [w for w in compile_spec(SHARED).plan.warnings if w.startswith("model.cache.claim")]
    with pytest.raises(SpecError):
        compile_spec({**values, "strict": True})


@pytest.mark.heavy
def test_explain_says_where_the_weights_live_and_that_a_warm_restart_downloads_nothing():
    from conftest import ROOT, run_kvgen

    example = str(ROOT / "examples" / "weights-cache.yaml")
    result = run_kvgen("explain", "--output", "json", example)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout)
    w = r["disk"]["weights"]
    assert w["where"] == "claim-per-pod" and w["downloadedBy"] == "init-container"
    assert w["warmRestartDownloads"] is False and w["claimBytes"] == 19 * 2**30
    assert r["sizing"]["modelCacheBytes"] == 2 * 2**30  # the emptyDir holds the headroom only
    text = run_kvgen("explain", example, env={"COLUMNS": "400"}).stdout
    assert "warm restart: no download" in text and "the init container has no deadline" in text
    hub = run_kvgen("explain", str(ROOT / "examples" / "kaito-gemma-4-12b.yaml"), env={"COLUMNS": "400"}).stdout
    assert "every new pod downloads them again" in hub


def test_an_example_claim_names_a_storage_class_of_its_own_cloud_or_none() -> None:
    """examples/weights-cache.yaml once paired an AKS node (Standard_NC24ads_A100_v4) with EKS's gp3: the
    claim stays Pending on AKS, so vLLM never starts. A class another cloud creates is a wrong class."""
    from pathlib import Path

    from ruamel.yaml import YAML

    root = Path(__file__).resolve().parent.parent
    builtin = YAML(typ="safe").load((root / "tests" / "data" / "storage_classes.yaml").read_text(encoding="utf-8"))
    owner = {name: cloud for cloud, names in builtin.items() for name in names}
    checked = 0
    for example in sorted((root / "examples").glob("*.yaml")):
        values = YAML(typ="safe").load(example.read_text(encoding="utf-8"))
        instance = (values.get("instance") or {}).get("type")
        cloud = catalog.instances().get(instance, {}).get("cloud") if instance else None
        golden = (root / "golden" / example.name).read_text(encoding="utf-8")
        for line in golden.splitlines():
            if line.strip().startswith("storageClassName:"):
                name = line.split(":", 1)[1].strip().strip("'\"")
                checked += 1
                assert owner.get(name, cloud) == cloud, (
                    f"{example.name}: {name} is {owner[name]}'s, the node is {cloud}'s"
                )
    assert checked >= 2  # weights-cache.yaml and kserve-pvc-spec-nvme.yaml name one
