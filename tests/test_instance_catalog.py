"""files/instances.yaml: every row has every field, each cloud's ephemeral-storage rule holds for
every row, and every row, copied into a catalog file as `kvgen catalog show` prints it, is accepted
by both faces (kvgen's spec schema and the chart's values schema)."""

from __future__ import annotations

import json
import re
from collections import Counter

import helm
import pytest
from conftest import ROOT, compile_spec, spec

from kvgen.core import quantity
from kvgen.data import catalog
from kvgen.spec.models import Catalog

GiB = 1024**3
FIELDS = {"cloud", "gpus", "gpuModel", "gpuMemory", "memory", "cpu", "arch", "localDisk", "ephemeralStorage", "source"}
CLOUDS = {"azure", "aws", "gcp", "oci", "onprem"}
ROWS = catalog.load("instances.yaml")["instances"]


def _gib(value: str) -> float:
    return quantity.to_bytes(value) / GiB


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_row_has_every_field(name):
    row = ROWS[name]
    expected = FIELDS | ({"nodeSelector"} if row["cloud"] == "onprem" else set())
    assert set(row) == expected, name
    assert row["cloud"] in CLOUDS and row["arch"] in ("amd64", "arm64")
    assert isinstance(row["gpus"], int) and row["gpus"] >= 0 and isinstance(row["cpu"], int) and row["cpu"] > 0
    if row["gpus"]:
        assert isinstance(row["gpuModel"], str) and _gib(row["gpuMemory"]) > 0
        assert row["gpuModel"] in catalog.load("instances.yaml")["gpuModels"], row["gpuModel"]
    else:
        assert row["gpuModel"] is None and row["gpuMemory"] == "0"
    for key in ("memory", "localDisk", "ephemeralStorage"):
        assert isinstance(row[key], str) and _gib(row[key]) >= 0, key
    assert _gib(row["memory"]) > 0 and _gib(row["ephemeralStorage"]) > 0
    assert isinstance(row["source"], str) and "ephemeralStorage:" in row["source"]


def _aks_managed_disk(cpu: int) -> str:
    return "128Gi" if cpu < 8 else "256Gi" if cpu < 16 else "512Gi" if cpu < 64 else "1024Gi"


@pytest.mark.parametrize("name", sorted(ROWS))
def test_ephemeral_storage_follows_the_clouds_rule(name):
    """The header's rule per cloud: EKS 20 GiB, GKE 100 GB (93 GiB), OKE 50 GB (46 GiB), AKS an
    ephemeral OS disk the size of a temp storage of 128 GiB or more else a managed disk sized by
    vCPUs, on-prem the OS drive (and a nodeSelector, as on-prem nodes carry no instance-type label)."""
    row = ROWS[name]
    eph = row["ephemeralStorage"]
    if row["cloud"] == "aws":
        assert eph == "20Gi"
    elif row["cloud"] == "gcp":
        assert eph == "93Gi"
    elif row["cloud"] == "oci":
        assert eph == "46Gi" and "OKE default boot volume 50 GB" in row["source"]
    elif row["cloud"] == "azure":
        assert eph == _aks_managed_disk(row["cpu"]) or (
            _gib(eph) >= 128 and "ephemeral OS disk the size of" in row["source"]
        )
    else:
        # the OS drive is part of the local disk (all of it where the server lists no data drives)
        assert "the OS drive" in row["source"] and _gib(eph) <= _gib(row["localDisk"])
        assert row["nodeSelector"] == {
            "nvidia.com/gpu.product": row["nodeSelector"]["nvidia.com/gpu.product"],
            "nvidia.com/gpu.count": str(row["gpus"]),
        }


def test_every_row_copied_into_a_catalog_file_is_a_valid_row():
    """`kvgen catalog show NAME` prints a row to copy into a catalog file: kvgen's schema takes each
    (its cloud included: oci and onprem as well as azure, aws and gcp), a CPU type's gpuMemory "0"
    and a localDisk "0" (none) as the file writes them."""
    rows = {f"copy-of-{name}": json.loads(json.dumps(row)) for name, row in ROWS.items()}
    assert any(row["gpuMemory"] == "0" for row in rows.values()) and any(r["localDisk"] == "0" for r in rows.values())
    Catalog.model_validate_json(json.dumps({"instances": rows}))


@pytest.mark.parametrize("name", ["Standard_D16s_v5", "c7g.4xlarge"])
def test_a_copied_cpu_row_renders_alike_on_both_faces(name):
    """A CPU type copied whole (gpuMemory "0", localDisk "0") is a row both faces take and plan alike."""
    row = json.loads(json.dumps(ROWS[name]))
    assert row["gpus"] == 0 and row["gpuMemory"] == "0" and row["localDisk"] == "0"
    values = spec(
        model={"id": "meta-llama/Llama-3.2-1B-Instruct"},
        catalog={"instances": {"my-cpu-node": row}},
        instance={"type": "my-cpu-node"},
    )
    ours = helm.by_identity(compile_spec(values).objects)
    assert helm.by_identity(helm.objects(values)) == ours


@pytest.mark.heavy
def test_a_gpu_row_with_gpu_memory_0_is_missing_its_gpu_memory_on_both_faces():
    """gpuMemory "0" is a CPU type's: a row with GPUs that says it has no GPU memory to plan from
    (one written so, or a built-in GPU row given "0") is refused as lacking it, by both faces."""
    for catalog_rows, instance in [
        ({"gpu-box": {**json.loads(json.dumps(ROWS["g5.12xlarge"])), "gpuMemory": "0"}}, {"type": "gpu-box"}),
        ({"g5.12xlarge": {"gpuMemory": "0Gi"}}, {"type": "g5.12xlarge"}),
    ]:
        values = spec(catalog={"instances": catalog_rows}, instance=instance)
        with pytest.raises(Exception) as ours:
            compile_spec(values)
        assert "describe the node: missing instance.gpuMemory" in str(ours.value)
        with pytest.raises(Exception) as chart:
            helm.objects(values)
        assert "describe the node: missing instance.gpuMemory" in str(chart.value)


@pytest.mark.parametrize(
    "name", ["BM.GPU.H100.8", "nvidia-dgx-h100", "asrockrack-4u8g-rome2-l40s", "nvidia-rtx-pro-server"]
)
def test_a_copied_oci_or_onprem_row_renders_alike_on_both_faces(name):
    """The chart's values schema takes the row's cloud as kvgen's does, and both plan from it alike;
    the on-prem row's pods select its nodes by its nodeSelector, not by instance type."""
    values = spec(
        catalog={"instances": {"my-node": json.loads(json.dumps(ROWS[name]))}},
        instance={"type": "my-node"},
        parallelism={"tensor": 8},
    )
    ours = helm.by_identity(compile_spec(values).objects)
    assert helm.by_identity(helm.objects(values)) == ours
    (workload,) = [o for o in ours.values() if o["kind"] in ("Deployment", "StatefulSet")]
    selector = workload["spec"]["template"]["spec"].get("nodeSelector") or {}
    if ROWS[name]["cloud"] == "onprem":
        assert selector.items() >= ROWS[name]["nodeSelector"].items()
        assert "node.kubernetes.io/instance-type" not in selector
    else:
        assert selector["node.kubernetes.io/instance-type"] == "my-node"


@pytest.mark.parametrize(
    "name, more",
    [
        # 32 GiB of RAM leaves too little for the default CPU tier beside vLLM: a small one
        ("g5.2xlarge", {"kvCacheOffloading": {"cpu": "8Gi"}}),
        ("a3-megagpu-8g", {}),
        ("VM.GPU.A10.1", {}),
        ("nvidia-dgx-b200", {}),
        ("asrockrack-4u8g-rome2-l40s", {}),
        ("nvidia-rtx-pro-server", {}),
    ],
)
def test_new_built_in_rows_render_alike_on_both_faces(name, more):
    values = spec(instance={"type": name}, parallelism={"tensor": ROWS[name]["gpus"]}, **more)
    ours = helm.by_identity(compile_spec(values).objects)
    assert helm.by_identity(helm.objects(values)) == ours


def test_the_on_prem_rows_cover_the_common_servers_and_say_what_is_unconfirmed():
    """On-prem: the HGX/DGX boxes and 8-GPU L40S and RTX PRO 6000 servers, each GPU one of
    gpuModels; a row whose host figures no vendor build confirms says so in its source."""
    onprem = {name: row for name, row in ROWS.items() if row["cloud"] == "onprem"}
    by_gpu = Counter(row["gpuModel"] for row in onprem.values())
    assert {
        "NVIDIA A100 80GB SXM",
        "NVIDIA H100 80GB SXM",
        "NVIDIA H200 141GB",
        "NVIDIA B200 180GB",
        "NVIDIA L40S 48GB",
        "NVIDIA RTX PRO 6000 Blackwell 96GB",
    } <= set(by_gpu)
    assert all(row["gpus"] == 8 for row in onprem.values())
    assert "host figures unconfirmed" in onprem["nvidia-rtx-pro-server"]["source"]
    assert "ephemeralStorage: on-prem rule: the OS drive, unconfirmed" in onprem["asrockrack-4u8g-rome2-l40s"]["source"]


def test_the_docs_count_the_rows_per_cloud():
    """docs/catalog.md says how many node types each cloud has: it stays the catalog's count."""
    text = " ".join((ROOT / "docs" / "catalog.md").read_text().split())
    counts = Counter(row["cloud"] for row in ROWS.values())
    said = re.search(
        r"(\d+) node types: AWS (\d+) .*?, GCP (\d+) .*?, Azure (\d+) .*?, OCI (\d+) .*? and (\d+) on-prem servers",
        text,
    )
    assert said, "docs/catalog.md lost its count of node types"
    assert [int(n) for n in said.groups()] == [
        len(ROWS),
        counts["aws"],
        counts["gcp"],
        counts["azure"],
        counts["oci"],
        counts["onprem"],
    ]


@pytest.mark.heavy
def test_instance_gpus_that_contradict_a_catalog_type_are_refused_and_parallelism_takes_a_share():
    """Issue 32 finding 9: instance.gpus 2 on an 8-GPU row kept the row's node (its nodeSelector, on-prem
    nvidia.com/gpu.count "8") and budgeted the whole node to the pod: Pending on a 2-GPU server, oversized on
    an 8-GPU one. A catalog type is one node: both faces refuse the contradiction and point at the parallel
    sizes, which give the pod its share of the node."""
    from conftest import container, workload

    from kvgen.core.errors import SpecError

    for type_ in ("p5.48xlarge", "nvidia-dgx-h100"):
        values = spec(instance={"type": type_, "gpus": 2})
        with pytest.raises(SpecError) as exc:
            compile_spec(values)
        (problem,) = exc.value.problems
        message = (
            f"instance.type '{type_}' is a node with 8 GPUs, but instance.gpus says 2: the pod would be scheduled "
            "onto a node with 8 GPUs and sized for all of it"
        )
        assert (problem.path, problem.message) == (("instance", "gpus"), message)
        assert helm.problems(values) == {("instance.gpus", message, problem.hint)}
    # the row's own count, and a MIG profile's device count, are not contradictions
    compile_spec(spec(instance={"type": "nvidia-dgx-h100", "gpus": 8}, parallelism={"tensor": 2}))
    # the share: 2 of the node's 8 GPUs, a quarter of its memory, and the node's own selector
    values = spec(instance={"type": "nvidia-dgx-h100"}, parallelism={"tensor": 2})
    c = compile_spec(values)
    assert c.plan.sizing.gpus_per_pod == 2 and c.plan.sizing.gpu_share == 0.25
    assert container(c, "vllm")["resources"]["limits"]["nvidia.com/gpu"] == 2
    assert workload(c)["spec"]["template"]["spec"]["nodeSelector"]["nvidia.com/gpu.count"] == "8"
    assert c.plan.sizing.pod_allocatable == c.plan.sizing.node_allocatable // 4
    assert helm.problems(values) == set()
