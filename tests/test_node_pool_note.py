"""Issue 36: what the disk budget assumes of the node pool is said before it fails. A catalog type's kubelet disk
is the OS disk of the cloud's default node pool (EKS managed node groups: 20 GiB); a render that relies on it for
more than half of its room says so (a warning on both faces, NOTES.txt for the chart), and explain shows it."""

from __future__ import annotations

import helm
import pytest
from conftest import dump, spec

from kvgen.app.compiler import compile_text

ON_EKS = spec(
    model={"id": "Qwen/Qwen2-7B-Instruct"},
    kvCacheOffloading={"enabled": False},
    instance={"type": "g5.xlarge"},
)
NOTE = (
    "the pod's 17.0 GiB of ephemeral storage is 94% of what the kubelet of g5.xlarge has for it (18.0 GiB), taken "
    "from the OS disk of a default node pool (20.0 GiB); on a node pool with a smaller OS disk the pod stays "
    "Pending: set instance.ephemeralStorage to your node pool's"
)


def warnings(values: dict) -> list[str]:
    (compiled,) = compile_text(dump(values), "spec.yaml")
    return compiled.plan.warnings


@pytest.mark.heavy
def test_a_render_that_relies_on_the_default_os_disk_says_so_on_both_faces():
    assert NOTE in warnings(ON_EKS)
    assert NOTE in helm.notes_warnings(helm.notes(ON_EKS))


def test_no_note_where_the_spec_states_the_disk_or_the_pod_uses_little_of_it():
    stated = spec(**{**ON_EKS, "instance": {"type": "g5.xlarge", "ephemeralStorage": "30Gi"}})
    assert not [w for w in warnings(stated) if "OS disk of a default node pool" in w]
    roomy = spec(model={"id": "Qwen/Qwen2-7B-Instruct"}, instance={"type": "Standard_NC24ads_A100_v4"})
    assert not [w for w in warnings(roomy) if "OS disk of a default node pool" in w]
