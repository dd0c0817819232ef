"""golden/*.yaml scanned by checkov, a third-party Kubernetes scanner (marker `scan`).

checkov runs from its own venv (scripts/checkov-env.sh, cached under ~/.cache/kvgen by version),
offline. Every finding must be in tests/data/checkov-allow.yaml with the reason kvgen keeps it,
and every entry there must still match a finding. Without the venv the test skips, unless
KVGEN_REQUIRE_CHECKOV is set (scripts/test sets it after building the venv, hence CI): then it fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import GOLDEN, ROOT, cached_tool_or_skip
from ruamel.yaml import YAML

pytestmark = pytest.mark.scan

ENV_SCRIPT = ROOT / "scripts" / "checkov-env.sh"
ALLOW = ROOT / "tests" / "data" / "checkov-allow.yaml"
REQUIRE_ENV = "KVGEN_REQUIRE_CHECKOV"


def checkov_or_skip() -> str:
    return cached_tool_or_skip(ENV_SCRIPT, REQUIRE_ENV, "checkov's venv")


def allowed() -> list[dict]:
    return YAML(typ="safe").load(ALLOW.read_text(encoding="utf-8"))


def scan(checkov: str, directory: Path, tmp: Path) -> list[dict]:
    """checkov's failed checks over every manifest in ``directory``, offline."""
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"}
    result = subprocess.run(
        [checkov, "-d", str(directory), "--framework", "kubernetes", "-o", "json", "--quiet", "--skip-download"],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=env,
        timeout=600,
    )
    assert result.returncode in (0, 1) and result.stdout.strip(), result.stderr[-3000:]
    reports = json.loads(result.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    assert all(r["summary"]["parsing_errors"] == 0 for r in reports), reports
    return [f for r in reports for f in r["results"]["failed_checks"]]


def unexplained(findings: list[dict], allow: list[dict]) -> tuple[list[str], list[str]]:
    """(findings no entry allows, entries that allow nothing)."""
    used: set[int] = set()
    left = []
    for f in findings:
        hits = [
            i
            for i, a in enumerate(allow)
            if a["id"] == f["check_id"] and any(re.fullmatch(r, f["resource"]) for r in a.get("resources", [".*"]))
        ]
        used.update(hits)
        if not hits:
            left.append(f"{f['check_id']} {f['check_name']}: {f['resource']} ({f['file_path']})")
    return sorted(set(left)), [a["id"] for i, a in enumerate(allow) if i not in used]


def test_the_allow_list_gives_a_reason_for_each_check():
    allow = allowed()
    assert len({a["id"] for a in allow}) == len(allow)
    for a in allow:
        assert set(a) <= {"id", "reason", "resources"} and re.fullmatch(r"CKV2?_K8S_\d+", a["id"]), a
        assert len(a["reason"]) > 40, a


def test_checkov_finds_nothing_in_the_goldens_beyond_the_allow_list(tmp_path):
    checkov = checkov_or_skip()
    left, stale = unexplained(scan(checkov, GOLDEN, tmp_path), allowed())
    assert not left, "checkov findings not in tests/data/checkov-allow.yaml:\n" + "\n".join(left)
    assert not stale, f"allow-list entries no golden file needs any more: {stale}"


def test_the_scan_catches_what_the_secure_defaults_removed(tmp_path):
    """The scan is live: a golden stripped of kvgen's securityContexts and with the API token
    mounted fails on exactly the checks those defaults fix."""
    checkov = checkov_or_skip()
    yaml = YAML(typ="safe")
    docs = list(yaml.load_all((GOLDEN / "kaito-gemma-4-12b.yaml").read_text(encoding="utf-8")))
    for doc in docs:
        if doc["kind"] == "Deployment":
            pod = doc["spec"]["template"]["spec"]
            del pod["securityContext"], pod["automountServiceAccountToken"]
            for c in pod["containers"] + pod.get("initContainers", []):
                del c["securityContext"]
    insecure = tmp_path / "in"
    insecure.mkdir()
    with (insecure / "insecure.yaml").open("w", encoding="utf-8") as out:
        yaml.dump_all(docs, out)
    left, _ = unexplained(scan(checkov, insecure, tmp_path), allowed())
    found = {line.split()[0] for line in left}
    assert {"CKV_K8S_20", "CKV_K8S_28", "CKV_K8S_31", "CKV_K8S_37", "CKV_K8S_38"} <= found, left
