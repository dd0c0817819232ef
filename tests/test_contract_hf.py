"""model.cache's init container: `hf download ...` against huggingface_hub's real CLI.

The command line of every rendered `model-download` container (the goldens', and the chart's for
the same specs) is parsed by huggingface_hub's own click command in the contract venv
(tests/contract/live_check.py HfChecker), as vLLM's and LMCache's lines are; the bare `hf` the
container runs is the console script of the huggingface_hub the vLLM image installs
(images/lock/base.txt), which the pod emulator's image facts put on PATH (tests/emulator/images.yaml).
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path
from typing import Any

import contract_support as cs
import pytest
import yaml
from conftest import GOLDEN, ROOT

from kvgen.data import connector

DOWNLOAD = connector.wiring()["modelDownload"]


def _downloads() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for golden in sorted(GOLDEN.glob("*.yaml")):
        for obj in yaml.load_all(golden.read_text(), Loader=yaml.CSafeLoader):  # libyaml: at collection
            if not obj or obj.get("kind") not in ("Deployment", "StatefulSet", "LeaderWorkerSet"):
                continue
            spec = obj["spec"]
            templates = (
                [spec["leaderWorkerTemplate"]["leaderTemplate"], spec["leaderWorkerTemplate"]["workerTemplate"]]
                if obj["kind"] == "LeaderWorkerSet"
                else [spec["template"]]
            )
            for t in templates:
                for c in t["spec"].get("initContainers") or []:
                    if c["name"] == DOWNLOAD["container"]:
                        out.append((f"{golden.stem}/{obj['metadata']['name']}", c))
    return out


DOWNLOADS = _downloads()


def _base_pin() -> str:
    text = (ROOT / "images" / "lock" / "base.txt").read_text()
    found = re.search(r"^huggingface-hub==(\S+)$", text, re.M)
    assert found, "images/lock/base.txt pins no huggingface-hub: the vLLM image's hf is unknown"
    return found.group(1)


def test_a_golden_renders_the_download():
    assert DOWNLOADS, "no golden renders model.cache's init container (examples/weights-cache.yaml)"


@pytest.mark.parametrize("where,c", DOWNLOADS, ids=[w for w, _ in DOWNLOADS])
def test_the_download_is_a_bare_hf_with_the_token_from_the_environment(where, c):
    assert c["command"] == DOWNLOAD["command"] == ["hf", "download"]
    assert not any(a == "--token" or a.startswith("--token=") for a in c["args"]), where
    token = [e for e in c.get("env") or [] if e["name"] == "HF_TOKEN"]
    assert all("secretKeyRef" in e.get("valueFrom", {}) for e in token), where


def test_every_vllm_image_the_emulator_knows_carries_hf_on_its_path():
    """The image facts the emulator runs the bare `hf` from (podinit looks it up in PATH)."""
    facts = yaml.safe_load((ROOT / "tests" / "emulator" / "images.yaml").read_text())["images"]
    vllm_images = [image for image in facts if "vllm" in image["engines"]]
    assert len(vllm_images) >= 4, [image["name"] for image in facts]
    for image in vllm_images:
        assert "hf" in image["engines"], image["name"]
        assert image["engines"]["hf"] in image["env"]["PATH"].split(":"), image["name"]


@pytest.mark.contract
def test_the_real_hf_cli_accepts_every_rendered_download_line():
    python = cs.contract_python_or_skip()
    lines = [{"id": w, "kind": "hf", "argv": c["command"][1:] + c["args"]} for w, c in DOWNLOADS]
    lines.append({"id": "broken:unknown-option", "kind": "hf", "argv": ["download", "org/name", "--no-such-option"]})
    lines.append(
        {"id": "broken:two-dirs", "kind": "hf", "argv": ["download", "org/name", "--local-dir=/a", "--cache-dir=/b"]}
    )
    results = cs.run_live(python, lines)["results"]
    for w, c in DOWNLOADS:
        r = results[w]
        assert r["ok"], (w, r)
        facts = r["facts"]
        # the directory vLLM serves: the mount path, then <org>--<name>[--<revision>] (model_source.model_dir)
        mount = connector.wiring()["modelPvc"]["mountPath"]
        assert facts["local_dir"].startswith(f"{mount}/{c['args'][0].replace('/', '--')}"), facts["local_dir"]
        assert facts["repo_id"] == c["args"][0]
        assert facts["exclude"] == DOWNLOAD["exclude"]
        assert facts["token"] is None
    assert results["broken:unknown-option"]["stage"] == "parse"
    assert "--no-such-option" in results["broken:unknown-option"]["error"]
    assert results["broken:two-dirs"]["stage"] == "download"


@pytest.mark.contract
def test_hf_is_the_console_script_of_the_huggingface_hub_the_image_pins():
    """The contract venv resolved the huggingface_hub the vLLM image installs (images/lock/base.txt),
    and that release's console scripts include `hf` (its entry point, not a guess at the image)."""
    python = cs.contract_python_or_skip()
    site = next(Path(python).parent.parent.glob("lib/python3*/site-packages"))  # the venv (not its interpreter)
    dists = list(metadata.distributions(path=[str(site)]))
    (hub,) = [d for d in dists if (d.metadata["Name"] or "").lower().replace("_", "-") == "huggingface-hub"]
    assert hub.version == _base_pin()
    scripts = {e.name: e.value for e in hub.entry_points if e.group == "console_scripts"}
    assert scripts.get("hf") == "huggingface_hub.cli.hf:main"


@pytest.mark.contract
def test_the_download_env_names_only_variables_the_pinned_libraries_read():
    """Every variable the init container sets is one huggingface_hub (its constants) or hf_xet (the
    names compiled into its extension) of the contract venv reads (utils/_auth.py: HF_TOKEN): a misspelt name would be ignored."""
    python = cs.contract_python_or_skip()
    site = next(Path(python).parent.parent.glob("lib/python3*/site-packages"))
    read = "".join(
        (site / "huggingface_hub" / f).read_text(encoding="utf-8") for f in ("constants.py", "utils/_auth.py")
    )
    read += "".join(p.read_bytes().decode("latin-1") for p in (site / "hf_xet").glob("*.so"))
    for name in [*DOWNLOAD["env"], "HF_HOME", "HF_TOKEN"]:
        # quoted in the constants, or in the extension's run of names, followed by the next name or the end
        assert re.search(rf'"{name}"|{name}(?=HF_|[^A-Z0-9_]|$)', read), name
    assert DOWNLOAD["env"]["HF_XET_CHUNK_CACHE_SIZE_BYTES"] == "0"  # the xet chunk cache never fills the emptyDir


WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.ckpt", "*.gguf")  # any weight format


def _repos() -> list[dict[str, Any]]:
    return yaml.safe_load((ROOT / "tests" / "data" / "hf-repos.yaml").read_text())["repositories"]


def _group_bytes(repo: dict[str, Any], kept: list[str]) -> int:
    """The bytes of the kept files, from the source's groups; a group is kept whole or not at all."""
    import fnmatch

    total, named = 0, set()
    for pattern, size in repo["bytes"].items():
        if pattern == "other":
            continue
        members = [f for f in repo["files"] if fnmatch.fnmatchcase(f, pattern)]
        named.update(members)
        assert members and (set(members) <= set(kept) or not set(members) & set(kept)), (repo["repo"], pattern)
        total += size if set(members) <= set(kept) else 0
    return total + repo["bytes"]["other"]  # every other file, as if all were kept (an upper bound)


@pytest.mark.contract
def test_the_download_keeps_exactly_the_weights_vllm_loads_from_real_repository_lists(tmp_path):
    """Issue: `hf download --exclude=original/*` fetched gpt-oss-20b's metal/model.bin and Mistral's
    consolidated.safetensors beside the shards vLLM loads: 25.7 GiB into a 17Gi claim, ENOSPC, the init
    container crash-loops. Each real file list (tests/data/hf-repos.yaml) goes through huggingface_hub's
    own filter with the rendered patterns, then through vLLM 0.33's own weight selection of a local
    directory (tests/contract/weights_selection.py): every weight file kept is loaded, vLLM finds
    weights, config.json and a tokenizer are there, and the kept bytes fit the claim kvgen plans."""
    import fnmatch
    import json
    import os
    import subprocess

    python = cs.contract_python_or_skip()
    (where, container), *_ = DOWNLOADS
    excludes = [a.removeprefix("--exclude=") for a in container["args"] if a.startswith("--exclude=")]
    includes = [a.removeprefix("--include=") for a in container["args"] if a.startswith("--include=")] or None
    assert excludes == DOWNLOAD["exclude"], where
    batch = {
        "repos": [{"id": r["repo"], "files": r["files"], "include": includes, "exclude": excludes} for r in _repos()]
    }
    (tmp_path / "batch.json").write_text(json.dumps(batch))
    run = subprocess.run(
        [python, str(ROOT / "tests" / "contract" / "weights_selection.py"), "batch.json", "result.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "VLLM_TARGET_DEVICE": "cpu", "PYTHONPATH": ""},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((tmp_path / "result.json").read_text())["results"]
    from conftest import compile_spec, spec

    from kvgen.plan import sizing

    for repo in _repos():
        r = results[repo["repo"]]
        assert r["error"] is None and r["loaded"], (repo["repo"], r)
        weights = [f for f in r["kept"] if any(fnmatch.fnmatchcase(f, p) for p in WEIGHT_PATTERNS)]
        assert sorted(weights) == r["loaded"], (
            repo["repo"],
            "downloaded but never loaded",
            set(weights) - set(r["loaded"]),
        )
        assert "config.json" in r["kept"] and {"tokenizer.json", "tokenizer.model"} & set(r["kept"]), repo["repo"]
        if not any(f.startswith("consolidated") for f in repo["files"]):
            assert r["loaded"] == r["loaded_from_all"], repo["repo"]  # the weights vLLM reads from the whole repo
        else:  # Mistral's two copies: the HF shards, with config.json (vLLM's hf format)
            assert r["format"] == "hf" and all(f.startswith("model-") for f in r["loaded"]), r
        if "bytes" in repo:
            compiled = compile_spec(spec(model={"id": repo["repo"], "cache": {"claimTemplate": {}}}))
            claim = sizing.weights_claim_size(compiled.plan.spec, compiled.plan.model)
            kept = _group_bytes(repo, r["kept"])
            assert kept <= claim, f"{repo['repo']}: {kept} bytes downloaded into a {claim}-byte claim"
