"""The command line as a user drives it: inputs, outputs, versions, exit codes."""

from __future__ import annotations

import json

import pytest
from conftest import BASE, EXAMPLES, GOLDEN, ROOT, dump, kube_version_of, run_kvgen
from ruamel.yaml import YAML

EXAMPLE = ROOT / "examples" / "kaito-gemma-4-12b.yaml"


@pytest.mark.heavy
def test_render_to_stdout_equals_golden():
    result = run_kvgen("render", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / EXAMPLE.name).read_text()
    assert "KV-cache offloading enabled (lmcache backend)" in result.stderr


@pytest.mark.heavy
def test_render_reads_stdin():
    result = run_kvgen("render", "-", input=EXAMPLE.read_text())
    assert result.returncode == 0
    assert result.stdout == (GOLDEN / EXAMPLE.name).read_text()


@pytest.mark.heavy
def test_render_writes_one_file_per_spec(tmp_path):
    out = tmp_path / "rendered"
    result = run_kvgen("render", "-q", str(ROOT / "examples" / "kserve-qwen2-7b.yaml"), str(EXAMPLE), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    assert sorted(p.name for p in out.iterdir()) == [
        ".kvgen-manifest.json",
        "gemma-4-12b.yaml",
        "kustomization.yaml",
        "qwen2-7b-kv-cache-offloading.yaml",
    ]
    assert (out / "gemma-4-12b.yaml").read_text() == (GOLDEN / EXAMPLE.name).read_text()


@pytest.mark.heavy
def test_render_a_directory_and_a_multi_document_file(tmp_path):
    a = dict(BASE, name="a")
    b = dict(BASE, name="b")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "two.yaml").write_text(dump(a) + "---\n" + dump(b))
    result = run_kvgen("render", "-q", str(tmp_path / "specs"))
    assert result.returncode == 0, result.stderr
    names = [d["metadata"]["name"] for d in YAML(typ="safe").load_all(result.stdout) if d["kind"] == "Deployment"]
    assert names == ["a", "b"]


@pytest.mark.heavy
def test_same_name_twice_with_output_dir_is_a_usage_error(tmp_path):
    f = tmp_path / "twice.yaml"
    f.write_text(dump(BASE) + "---\n" + dump(BASE))
    result = run_kvgen("render", str(f), "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "several specs are named demo" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.heavy
def test_same_name_twice_on_stdout_is_the_same_usage_error_as_with_an_output_dir(tmp_path):
    """Issue 20: on stdout two specs of one name printed the same objects twice, exit 0, where -o refused."""
    for n in ("a", "b", "c"):
        (tmp_path / f"{n}.yaml").write_text(dump(BASE))
    (tmp_path / "other.yaml").write_text(dump(dict(BASE, name="other")))
    to_stdout = run_kvgen("render", str(tmp_path))
    to_dir = run_kvgen("render", str(tmp_path), "-o", str(tmp_path / "out"))
    assert to_stdout.returncode == to_dir.returncode == 2, to_stdout.stderr
    assert to_stdout.stdout == ""
    sources = ", ".join(str(tmp_path / f"{n}.yaml") for n in ("a", "b", "c"))
    said = f"several specs are named demo and would all be written to {{}} ({sources}); each needs its own name to get its own {{}}"
    assert said.format("stdout", "objects") in to_stdout.stderr
    assert said.format("demo.yaml", "file") in to_dir.stderr


@pytest.mark.heavy
def test_same_name_in_two_namespaces_is_two_sets_of_objects(tmp_path):
    (tmp_path / "a.yaml").write_text(dump(dict(BASE, namespace="one")))
    (tmp_path / "b.yaml").write_text(dump(dict(BASE, namespace="two")))
    result = run_kvgen("render", "-q", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert [
        d["metadata"]["namespace"] for d in YAML(typ="safe").load_all(result.stdout) if d["kind"] == "Deployment"
    ] == ["one", "two"]


@pytest.mark.heavy
def test_kube_version_option():
    ok = run_kvgen("render", "-q", "--kube-version", "1.29", str(EXAMPLE))
    assert ok.returncode == 0 and ok.stdout
    old = run_kvgen("render", "--kube-version", "1.27", str(EXAMPLE))
    assert old.returncode == 2 and "1.28 or newer" in old.stderr
    bogus = run_kvgen("render", "--kube-version", "latest", str(EXAMPLE))
    assert bogus.returncode == 2 and "not a Kubernetes version" in bogus.stderr


@pytest.mark.heavy
def test_usage_errors_exit_2_without_traceback(tmp_path):
    missing = run_kvgen("render", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    unknown = run_kvgen("render", "--frobnicate", str(EXAMPLE))
    assert unknown.returncode == 2
    for r in (missing, unknown):
        assert "Traceback" not in r.stderr


def test_help_documents_exit_codes():
    result = run_kvgen("--help")
    assert result.returncode == 0
    for code in ("0 ok", "1 invalid input", "2 usage error", "3 invalid output"):
        assert code in result.stdout


@pytest.mark.heavy
def test_validate_reports_ok_and_writes_nothing_to_stdout():
    for version in sorted({kube_version_of(p) for p in EXAMPLES}):
        examples = [p for p in EXAMPLES if kube_version_of(p) == version]
        result = run_kvgen("validate", "--kube-version", version, *map(str, examples))
        assert result.returncode == 0, result.stderr
        assert result.stdout == ""
        assert result.stderr.count("ok: ") == len(examples)


@pytest.mark.heavy
def test_explain_json_has_the_decision_and_every_rule():
    result = run_kvgen("explain", "--output", "json", str(ROOT / "examples" / "rule-mig-partition.yaml"))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["decision"]["offloading"] == "disabled"
    assert report["decision"]["reasonCode"] == "mig-partition"
    assert [r["code"] for r in report["decision"]["rules"] if r["matched"]] == ["mig-partition"]
    from kvgen.data import catalog

    assert [r["code"] for r in report["decision"]["rules"]] == [r["code"] for r in catalog.rules()]  # every rule


@pytest.mark.heavy
def test_explain_text_shows_decision_and_sizing_table():
    result = run_kvgen("explain", str(EXAMPLE), env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "KV-cache offloading enabled" in result.stdout
    assert "Capability rules" in result.stdout and "Sizing" in result.stdout
    assert "LMCache MP server sidecar memory" in result.stdout


def test_version():
    result = run_kvgen("--version")
    assert result.returncode == 0 and result.stdout.startswith("kvgen ")
