"""Version compatibility: the runtime pins (charts/kvgen/files/runtime.yaml), the contract
snapshots (charts/kvgen/files/contract/), the contract venv's pins (scripts/contract-env.sh) and the
images all name the same vLLM and LMCache versions, and kvgen's connectors exist in them."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

import contract_check
import contract_support as cs
import pytest
from conftest import ROOT
from ruamel.yaml import YAML

from kvgen.data import catalog, connector

RT = catalog.runtime()
VERSIONS = {"vllm": str(RT["vllm"]["version"]), "lmcache": str(RT["lmcache"]["version"])}


def _snapshot_files(package: str) -> list[str]:
    return sorted(p.name for p in cs.SNAPSHOT_DIR.glob(f"{package}-*.json"))


@pytest.mark.parametrize("package", ["vllm", "lmcache"])
def test_exactly_one_snapshot_per_package_and_it_is_the_pinned_version(package):
    assert _snapshot_files(package) == [f"{package}-{VERSIONS[package]}.json"]
    data = json.loads((cs.SNAPSHOT_DIR / f"{package}-{VERSIONS[package]}.json").read_text())
    assert data["package"] == package and data["version"] == VERSIONS[package]


def test_contract_env_pins_the_runtime_versions():
    text = (ROOT / "scripts" / "contract-env.sh").read_text()
    pins = dict(re.findall(r"^(VLLM_VERSION|LMCACHE_VERSION)=(\S+)$", text, re.M))
    assert pins == {"VLLM_VERSION": VERSIONS["vllm"], "LMCACHE_VERSION": VERSIONS["lmcache"]}


def test_snapshots_were_captured_together():
    snaps = cs.snapshots()
    assert snaps.vllm["captured_with"]["other"] == {"lmcache": VERSIONS["lmcache"]}
    assert snaps.lmcache["captured_with"]["other"] == {"vllm": VERSIONS["vllm"]}


def test_image_tags_are_the_pinned_versions():
    assert RT["vllm"]["image"]["tag"] == f"v{VERSIONS['vllm']}"
    for arch, image in RT["vllm"]["cpuImage"].items():
        assert image["tag"] == f"v{VERSIONS['vllm']}", arch
    # kvgen's runtime image (images/Dockerfile) is tagged with the kvgen version, not the pins: its
    # labels carry them (dev.kvgen.vllm.version, dev.kvgen.lmcache.version)
    assert set(RT["runtimeImage"]) == {"repository"}


def test_the_runtime_image_lock_pins_the_runtime_versions():
    """images/lock/ (scripts/lock-runtime-image) resolves these versions; the image installs from it."""
    from tools.image_requirements import read_pins

    lock, base = read_pins(ROOT / "images" / "lock" / "runtime.txt"), read_pins(ROOT / "images" / "lock" / "base.txt")
    assert (lock["vllm"].version, lock["lmcache"].version) == (VERSIONS["vllm"], VERSIONS["lmcache"])
    assert base["vllm"].version == VERSIONS["vllm"]


def test_helm_chart_default_images_are_the_pins():
    """values.yaml leaves the images unset, so the chart takes runtime.yaml's pins as kvgen does: vLLM's image,
    or kvgen's runtime image with the lmcache backend (a value written here would hide that choice)."""
    images = YAML(typ="safe", pure=True).load((ROOT / "charts" / "kvgen" / "values.yaml").read_text())["images"]
    assert images["vllm"] == {}
    assert images["lmcache"] == {}  # unset: the server runs from the vLLM container's image (one LMCache install)


@pytest.mark.parametrize("role", sorted(RT["connectors"]))
def test_runtime_connectors_are_registered_in_vllm(role):
    assert RT["connectors"][role] in cs.snapshots().vllm["connectors"]["registered"]


def test_connector_names_the_snapshot_check_keys_on_match_runtime_yaml():
    snaps = cs.snapshots()
    assert snaps.vllm["offloading_connector"]["connector"] == RT["connectors"]["native"]
    assert snaps.lmcache["lmcache_mp_connector"]["connector"] == RT["connectors"]["lmcache"]


def test_the_sidecar_runs_the_command_the_lmcache_snapshot_describes():
    program, command = cs.snapshots().lmcache["server"]["command"]
    assert PurePosixPath(RT["lmcache"]["server"]).name == program
    assert command == "server"


def test_the_in_container_command_line_is_split_as_the_launcher_and_the_image_run_it():
    """tests/contract_check.py repeats the vLLM image's entrypoint and the launcher's --then
    separator to split an in-container command line; they must not drift."""
    launcher = (ROOT / "charts" / "kvgen" / "files" / "lmcache_launcher.py").read_text()
    assert list(contract_check.VLLM_ENTRYPOINT) == RT["vllm"]["entrypoint"]
    assert contract_check.THEN == connector.wiring()["launcher"]["then"]
    assert f'THEN = "{connector.wiring()["launcher"]["then"]}"' in launcher
