"""The command line's conventions (issue 13, "The CLI"): what a helm / kubectl user's hands expect."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import BASE, ROOT, dump, run_kvgen
from ruamel.yaml import YAML

EXAMPLE = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
WORKFLOW = ROOT / "examples" / "ci" / "github-actions.yaml"
ARGOCD = ROOT / "examples" / "argocd" / "rendered-kustomize.yaml"
KAITO_SEED = ROOT / "examples" / "seeds" / "kaito-gemma-4-12b.yaml"


def _specs_dir(tmp_path):
    """A directory as a repository holds it: a spec, a CI workflow, an Argo CD Application."""
    root = tmp_path / "specs"
    (root / "ci").mkdir(parents=True)
    (root / "argocd").mkdir()
    (root / "demo.yaml").write_text(dump(BASE))
    shutil.copy(WORKFLOW, root / "ci" / "github-actions.yaml")
    shutil.copy(ARGOCD, root / "argocd" / "app.yaml")
    return root


# ---------------------------------------------------------------- directories: files that are not kvgen's


@pytest.mark.heavy
def test_validate_a_directory_skips_a_workflow_and_foreign_manifests_one_line_each(tmp_path):
    root = _specs_dir(tmp_path)
    result = run_kvgen("validate", str(root))
    assert result.returncode == 0, result.stderr
    skipped = [line for line in result.stderr.splitlines() if line.startswith("kvgen: skipped ")]
    assert skipped == [
        f"kvgen: skipped {root}/argocd/app.yaml: argoproj.io/v1alpha1 Application, a kind kvgen does not read",
        f"kvgen: skipped {root}/ci/github-actions.yaml: not a kvgen spec (no model; keys name, on, permissions, jobs)",
    ]
    assert f"ok: {root}/demo.yaml: demo" in result.stderr


@pytest.mark.heavy
def test_render_a_directory_skips_quietly_with_quiet(tmp_path):
    root = _specs_dir(tmp_path)
    result = run_kvgen("render", "-q", str(root))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    kinds = [d["kind"] for d in YAML(typ="safe").load_all(result.stdout)]
    assert "Application" not in kinds and "Deployment" in kinds


@pytest.mark.heavy
def test_the_examples_directory_validates_but_for_what_it_holds_on_purpose():
    """`kvgen validate examples/` used to fail on examples/ci's workflow; now that is skipped."""
    result = run_kvgen("validate", "--kube-version", "1.34", "--exclude", "seeds", str(ROOT / "examples"))
    assert result.returncode == 0, result.stderr
    assert "skipped examples/ci/github-actions.yaml" in result.stderr.replace(str(ROOT) + "/", "")


@pytest.mark.heavy
def test_a_spec_with_a_typo_in_a_directory_is_still_an_error(tmp_path):
    (tmp_path / "typo.yaml").write_text(
        "name: demo\nmodle: {id: meta-llama/Llama-3.1-8B-Instruct}\ninstnace: {type: Standard_NC24ads_A100_v4}\n"
    )
    result = run_kvgen("validate", str(tmp_path))
    assert result.returncode == 1
    assert "unknown key 'modle'" in result.stderr and "skipped" not in result.stderr


@pytest.mark.heavy
def test_a_file_named_explicitly_is_never_skipped():
    result = run_kvgen("validate", str(WORKFLOW))
    assert result.returncode == 1
    assert "unknown key 'jobs'" in result.stderr and "skipped" not in result.stderr


@pytest.mark.heavy
def test_a_directory_of_nothing_but_foreign_files_is_an_error_that_says_so(tmp_path):
    (tmp_path / "wf.yaml").write_text(WORKFLOW.read_text())
    result = run_kvgen("validate", str(tmp_path))
    assert result.returncode == 1
    assert "no spec found" in result.stderr and "(1 file skipped as not kvgen's)" in result.stderr


@pytest.mark.heavy
def test_a_kaito_configmap_in_a_directory_is_read_not_skipped(tmp_path):
    shutil.copy(KAITO_SEED, tmp_path / "kaito.yaml")
    result = run_kvgen("validate", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr


@pytest.mark.heavy
def test_exclude_leaves_files_out_by_directory_name_path_or_file_name(tmp_path):
    root = _specs_dir(tmp_path)
    (root / "broken.yaml").write_text("name: x\nmodel: 3\n")
    bad = run_kvgen("validate", "-q", str(root))
    assert bad.returncode == 1 and "broken.yaml" in bad.stderr
    for globs in (["broken.yaml", "ci", "argocd/*"], ["*/github-actions.yaml", "argocd", "b*.yaml"]):
        args = [a for g in globs for a in ("--exclude", g)]
        result = run_kvgen("validate", *args, str(root))
        assert result.returncode == 0, (globs, result.stderr)
        assert "skipped" not in result.stderr  # excluded files are not even read
        assert f"ok: {root}/demo.yaml" in result.stderr


@pytest.mark.heavy
def test_exclude_everything_is_a_usage_error(tmp_path):
    root = _specs_dir(tmp_path)
    result = run_kvgen("render", "--exclude", "*", str(root))
    assert result.returncode == 2
    assert "no .yaml or .yml files in this directory (after --exclude)" in result.stderr


@pytest.mark.heavy
def test_two_copies_of_one_configmap_across_files_name_both_places(tmp_path):
    shutil.copy(KAITO_SEED, tmp_path / "a.yaml")
    shutil.copy(KAITO_SEED, tmp_path / "b.yaml")
    result = run_kvgen("validate", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"))
    assert result.returncode == 1
    assert (
        f"{tmp_path}/b.yaml:4:3: metadata.name: ConfigMap default/inference-params is defined twice: "
        f"here and at {tmp_path}/a.yaml:4:3"
    ) in result.stderr
    assert "--exclude GLOB" in result.stderr


# ---------------------------------------------------------------- explain -o json|yaml


@pytest.mark.heavy
def test_explain_o_yaml_is_the_same_data_as_json():
    as_json = run_kvgen("explain", "-o", "json", str(EXAMPLE))
    as_yaml = run_kvgen("explain", "-o", "yaml", str(EXAMPLE))
    assert as_json.returncode == 0 and as_yaml.returncode == 0, as_yaml.stderr
    assert YAML(typ="safe").load(as_yaml.stdout) == json.loads(as_json.stdout)
    assert as_yaml.stdout.startswith("version: 1\nname: gemma-4-12b\n")  # block style, keys in order


@pytest.mark.heavy
def test_explain_output_long_form_still_works_and_render_o_is_a_directory(tmp_path):
    long_form = run_kvgen("explain", "--output", "yaml", str(EXAMPLE))
    assert long_form.returncode == 0 and long_form.stdout.startswith("version: 1\n")
    out = tmp_path / "out"
    rendered = run_kvgen("render", "-q", str(EXAMPLE), "--output-dir", str(out))
    assert rendered.returncode == 0, rendered.stderr
    assert (out / "gemma-4-12b.yaml").is_file()


@pytest.mark.heavy
def test_explain_o_refuses_an_unknown_format():
    result = run_kvgen("explain", "-o", "wide", str(EXAMPLE))
    assert result.returncode == 2
    assert "'wide' is not one of 'text', 'json', 'yaml'" in result.stderr


# ---------------------------------------------------------------- gated models


@pytest.mark.heavy
def test_a_gated_model_without_a_token_is_warned_on_render_and_quiet_with_a_token(tmp_path):
    bare = tmp_path / "bare.yaml"
    bare.write_text(dump(BASE))
    result = run_kvgen("render", str(bare))
    assert result.returncode == 0, result.stderr
    assert (
        "kvgen: demo: warning: meta-llama/Llama-3.1-8B-Instruct is gated on Hugging Face and model.hfTokenSecret "
        "is not set"
    ) in result.stderr
    with_token = tmp_path / "token.yaml"
    with_token.write_text(
        dump(
            {
                **BASE,
                "name": "token",
                "model": {**BASE["model"], "hfTokenSecret": {"name": "hf", "key": "HF_TOKEN"}},
            }
        )
    )
    env_token = tmp_path / "env.yaml"
    env_token.write_text(
        dump(
            {
                **BASE,
                "name": "env",
                "vllm": {"env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}]},
            }
        )
    )
    open_model = tmp_path / "qwen.yaml"
    open_model.write_text(dump({**BASE, "name": "qwen", "model": {"id": "Qwen/Qwen3-8B"}}))
    quiet = run_kvgen("render", str(with_token), str(env_token), str(open_model))  # one process, three specs
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.count("kind: Deployment") == 3
    assert "gated" not in quiet.stderr


def test_the_gated_list_is_catalog_data_with_a_source():
    from kvgen.data import catalog

    rows = catalog.load("models.yaml")["gated"]
    assert rows and all(r["source"] and r["pattern"] for r in rows)
    assert catalog.gated("meta-llama/Llama-3.1-8B-Instruct") and catalog.gated("google/gemma-3-27b-it")
    assert not catalog.gated("Qwen/Qwen3-8B") and not catalog.gated("deepseek-ai/DeepSeek-R1-Distill-Llama-8B")


# ---------------------------------------------------------------- your own catalog


ONPREM = ROOT / "examples" / "onprem-dgx-a100.yaml"
ONPREM_CATALOG = ROOT / "examples" / "catalogs" / "onprem.yaml"
GOLDEN_ONPREM = ROOT / "golden" / "onprem-dgx-a100.yaml"
safe = YAML(typ="safe", pure=True)


def _without_catalog(tmp_path):
    data = safe.load(ONPREM.read_text())
    del data["catalog"]
    path = tmp_path / "support-bot.yaml"
    path.write_text(dump(data))
    return path, data


def test_the_example_keeps_the_catalog_files_rows():
    assert safe.load(ONPREM.read_text())["catalog"] == safe.load(ONPREM_CATALOG.read_text())["catalog"]


@pytest.mark.heavy
def test_catalog_file_and_env_render_what_the_inline_catalog_renders(tmp_path):
    spec_file, _ = _without_catalog(tmp_path)
    bare = run_kvgen("render", "-q", str(spec_file))
    assert bare.returncode == 1 and "'acme/support-llama-3.1-8b' is not in the catalog" in bare.stderr
    by_flag = run_kvgen("render", "-q", "--catalog", str(ONPREM_CATALOG), str(spec_file))
    assert by_flag.returncode == 0, by_flag.stderr
    assert by_flag.stdout == GOLDEN_ONPREM.read_text()
    by_env = run_kvgen("render", "-q", str(spec_file), env={"KVGEN_CATALOG": str(ONPREM_CATALOG)})
    assert by_env.returncode == 0, by_env.stderr
    assert by_env.stdout == GOLDEN_ONPREM.read_text()


def test_an_on_prem_type_is_selected_by_its_node_selector_not_pinned_by_instance_type():
    objs = [d for d in safe.load_all(GOLDEN_ONPREM.read_text()) if d and d["kind"] == "Deployment"]
    selector = objs[0]["spec"]["template"]["spec"]["nodeSelector"]
    assert selector == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8"}


def test_the_chart_takes_the_same_catalog_file_as_values(tmp_path):
    import helm

    from kvgen.data.catalog import deep_merge

    _, data = _without_catalog(tmp_path)
    values = deep_merge(safe.load(ONPREM_CATALOG.read_text()), data)  # helm template -f catalog -f spec
    ours = [d for d in safe.load_all(GOLDEN_ONPREM.read_text()) if d]
    assert helm.by_identity(helm.objects(values)) == helm.by_identity(ours)


@pytest.mark.heavy
def test_a_catalog_row_changes_a_built_in_type_field_by_field_and_keeps_its_pin(tmp_path):
    cat = tmp_path / "cat.yaml"
    cat.write_text("catalog:\n  instances:\n    Standard_NC24ads_A100_v4: {ephemeralStorage: 2Ti}\n")
    spec_file = tmp_path / "demo.yaml"
    spec_file.write_text(dump(BASE))
    before = json.loads(run_kvgen("explain", "-o", "json", str(spec_file)).stdout)
    after = run_kvgen("explain", "-o", "json", "--catalog", str(cat), str(spec_file))
    assert after.returncode == 0, after.stderr
    data = json.loads(after.stdout)
    assert data["disk"]["ephemeralStorageBytes"] == 2 * 1024**4 != before["disk"]["ephemeralStorageBytes"]
    assert data["instance"]["memoryBytes"] == before["instance"]["memoryBytes"]  # other fields kept
    rendered = run_kvgen("render", "-q", "--catalog", str(cat), str(spec_file))
    assert "node.kubernetes.io/instance-type: Standard_NC24ads_A100_v4" in rendered.stdout


@pytest.mark.heavy
def test_catalog_problems_are_listed_with_file_and_line_and_nothing_is_written(tmp_path):
    cat = tmp_path / "bad.yaml"
    cat.write_text(
        "catalog:\n"
        "  instances:\n"
        "    rack-h100:\n"
        "      gpus: '8'\n"
        "      memroy: 1Ti\n"
        "  models:\n"
        "    acme/half-described: {layers: 32}\n"
    )
    spec_file = tmp_path / "demo.yaml"
    spec_file.write_text(dump(BASE))
    result = run_kvgen("render", "--catalog", str(cat), str(spec_file))
    assert result.returncode == 1 and result.stdout == ""
    assert f"{cat}:4:7: catalog.instances.rack-h100.gpus: Input should be a valid integer" in result.stderr
    assert f"{cat}:5:7: catalog.instances.rack-h100.memroy: unknown key 'memroy'" in result.stderr
    assert "did you mean 'memory'?" in result.stderr
    fixed = cat.read_text().replace("'8'", "8").replace("memroy", "cpu")
    cat.write_text(fixed.replace("cpu: 1Ti", "cpu: 64"))
    incomplete = run_kvgen("render", "--catalog", str(cat), str(spec_file))
    assert incomplete.returncode == 1
    assert (
        f"{cat}:3:5: catalog.instances.rack-h100: instance type 'rack-h100' is new and lacks memory, gpuMemory"
        in incomplete.stderr
    )
    assert (
        f"{cat}:7:5: catalog.models.acme/half-described: model 'acme/half-described' is new and lacks "
        "architecture, kvHeads, headDim, weights"
    ) in incomplete.stderr


@pytest.mark.heavy
def test_a_missing_catalog_file_is_a_usage_error_naming_where_it_came_from(tmp_path):
    spec_file = tmp_path / "demo.yaml"
    spec_file.write_text(dump(BASE))
    flag = run_kvgen("validate", "--catalog", str(tmp_path / "nope.yaml"), str(spec_file))
    assert flag.returncode == 2 and "nope.yaml: no such file or directory" in flag.stderr
    env = run_kvgen("validate", str(spec_file), env={"KVGEN_CATALOG": str(tmp_path / "gone.yaml")})
    assert env.returncode == 2 and f"KVGEN_CATALOG: {tmp_path}/gone.yaml: no such file" in env.stderr


@pytest.mark.heavy
def test_a_catalog_file_in_a_directory_of_specs_is_skipped_as_such(tmp_path):
    shutil.copy(ONPREM_CATALOG, tmp_path / "catalog.yaml")
    (tmp_path / "demo.yaml").write_text(dump(BASE))
    result = run_kvgen("validate", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (
        f"kvgen: skipped {tmp_path}/catalog.yaml: a kvgen catalog file (give it with --catalog FILE)" in result.stderr
    )


# ---------------------------------------------------------------- shell completion


@pytest.mark.heavy
def test_completion_bash_prints_a_script_that_completes_kvgen_in_bash(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    result = run_kvgen("completion", "bash")
    assert result.returncode == 0, result.stderr
    assert "complete -o default -F _kvgen_completion kvgen" in result.stdout
    assert "_KVGEN_COMPLETE=complete_bash" in result.stdout
    script = tmp_path / "kvgen.bash"
    script.write_text(result.stdout)
    bash = shutil.which("bash")
    assert bash, "bash is needed to check the completion script"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for words, cword, expected in (
        (["kvgen", "ren"], 1, ["render"]),
        (["kvgen", "explain", "-o", ""], 3, ["text", "json", "yaml"]),
    ):
        line = " ".join(f"'{w}'" for w in words)
        run = subprocess.run(
            [
                bash,
                "-c",
                f"source {script}; COMP_WORDS=({line}); COMP_CWORD={cword}; _kvgen_completion kvgen; "
                'printf "%s\\n" "${COMPREPLY[@]}"',
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == expected, (words, run.stdout, run.stderr)


@pytest.mark.heavy
def test_completion_zsh_and_fish():
    for shell, mark in (("zsh", "#compdef kvgen"), ("fish", "complete --command kvgen")):
        result = run_kvgen("completion", shell)
        assert result.returncode == 0 and mark in result.stdout, (shell, result.stdout[:200])
    bad = run_kvgen("completion", "tcsh")
    assert bad.returncode == 2


# ---------------------------------------------------------------- explain --svg


@pytest.mark.heavy
def test_explain_svg_has_no_external_font_links_and_keeps_model_ids_whole(tmp_path):
    import re

    spec_file = tmp_path / "g3.yaml"
    spec_file.write_text(
        dump(
            {
                **BASE,
                "name": "g3",
                "model": {"id": "google/gemma-3-12b-it", "hfTokenSecret": {"name": "hf", "key": "HF_TOKEN"}},
            }
        )
    )
    target = tmp_path / "plan.svg"
    result = run_kvgen("explain", str(spec_file), "--svg", str(target), "-o", "json")
    assert result.returncode == 0, result.stderr
    svg = target.read_text()
    assert "@font-face" not in svg and "@import" not in svg
    assert not re.search(r"url\(\s*['\"]?https?:", svg)  # nothing fetched from the network
    texts = re.findall(r">([^<]*)</text>", svg)
    assert any("google/gemma-3-12b-it" in t for t in texts), [t for t in texts if "gemma" in t]


# ---------------------------------------------------------------- the chart reads the same catalog: values

ROW = {"gpus": 4, "gpuMemory": "48Gi", "memory": "512Gi", "cpu": 64, "ephemeralStorage": "900Gi"}
CATALOG_CASES = {
    "built-in-field": {"instances": {"Standard_NC24ads_A100_v4": {"ephemeralStorage": "2Ti"}}},
    "own-type-selector": {"instances": {"l40s-rack": {**ROW, "nodeSelector": {"example.com/pool": "l40s"}}}},
    "own-type-cloud-false": {"instances": {"l40s-rack": {**ROW, "cloud": False}}},
    "own-model": {"models": {"meta-llama/Llama-3.1-8B-Instruct": {"maxModelLen": 8192}}},
}


def _catalog_spec(case):
    cat = CATALOG_CASES[case]
    instance = next(iter(cat.get("instances", {"Standard_NC24ads_A100_v4": {}})))
    return {
        **BASE,
        "instance": {"type": instance},
        "catalog": cat,
        "model": {**BASE["model"], "hfTokenSecret": {"name": "hf", "key": "HF_TOKEN"}},
        "scheduling": {"nodeSelector": {"example.com/zone": "a"}},
    }


@pytest.mark.heavy
def test_catalog_values_render_the_same_objects_in_the_chart():
    import helm
    from conftest import compile_spec

    for case in CATALOG_CASES:
        values = _catalog_spec(case)
        ours = compile_spec(values).objects
        theirs = helm.objects(values)
        assert helm.by_identity(theirs) == helm.by_identity(ours), case
        (deploy,) = [o for o in ours if o["kind"] == "Deployment"]
        selector = deploy["spec"]["template"]["spec"]["nodeSelector"]
        assert selector.get("example.com/zone") == "a", case
        pinned = "node.kubernetes.io/instance-type" in selector
        assert pinned == (case in ("built-in-field", "own-model")), (case, selector)
        if case == "own-type-selector":
            assert selector["example.com/pool"] == "l40s"


def test_an_incomplete_own_row_is_refused_alike_by_kvgen_and_the_chart():
    import helm
    from conftest import problem_set

    values = {**BASE, "instance": {"type": "l40s-rack"}, "catalog": {"instances": {"l40s-rack": {"gpus": 4}}}}
    ours = problem_set(values)
    assert ours and ours == helm.problems(values)
    assert any("memory" in message for _path, message, _hint in ours)


@pytest.mark.heavy
def test_a_misspelt_catalog_field_is_refused_by_the_chart_and_by_kvgen(tmp_path):
    import helm

    values = {**BASE, "catalog": {"instances": {"Standard_NC24ads_A100_v4": {"ephemeralStorag": "2Ti"}}}}
    assert helm.problems(values) == {
        (
            "catalog.instances.Standard_NC24ads_A100_v4.ephemeralStorag",
            "unknown key 'ephemeralStorag'",
            "did you mean 'ephemeralStorage'?",
        )
    }
    spec_file = tmp_path / "typo.yaml"
    spec_file.write_text(dump(values))
    result = run_kvgen("validate", str(spec_file))
    assert result.returncode == 1
    assert "catalog.instances.Standard_NC24ads_A100_v4.ephemeralStorag: unknown key 'ephemeralStorag'" in result.stderr
    assert "did you mean 'ephemeralStorage'?" in result.stderr


# ---------------------------------------------------------------- replay (kvgen.output.replay) sees the new options


@pytest.mark.heavy
def test_a_changed_catalog_file_is_a_new_run_in_every_spelling(tmp_path):
    """kvgen.output.replay replays an identical run; a catalog file's bytes are part of "identical"."""
    spec_file, _ = _without_catalog(tmp_path)
    cat, other = tmp_path / "a.yaml", tmp_path / "b.yaml"
    other.write_text("catalog: {}\n")
    cache = tmp_path / "cache"
    for args, env in (
        (["--catalog", str(cat)], {}),
        ([f"--catalog={cat}"], {}),
        ([], {"KVGEN_CATALOG": f"{other}:{cat}"}),
    ):
        cat.write_text(ONPREM_CATALOG.read_text())
        first = run_kvgen("render", "-q", *args, str(spec_file), env={"KVGEN_CACHE_DIR": str(cache), **env})
        assert first.returncode == 0 and first.stdout == GOLDEN_ONPREM.read_text(), (args, env, first.stderr)
        cat.write_text(ONPREM_CATALOG.read_text().replace("memory: 2Ti", "memory: 1Ti"))
        changed = run_kvgen("render", "-q", *args, str(spec_file), env={"KVGEN_CACHE_DIR": str(cache), **env})
        assert changed.returncode == 0 and changed.stdout != first.stdout, (args, env)


@pytest.mark.heavy
def test_render_output_dir_is_never_replayed(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    first = run_kvgen("render", "-q", str(EXAMPLE), "--output-dir", str(out), env={"KVGEN_CACHE_DIR": str(cache)})
    assert first.returncode == 0 and (out / "gemma-4-12b.yaml").is_file()
    assert not list((cache / "runs").glob("*.json")) if (cache / "runs").is_dir() else True
    shutil.rmtree(out)
    again = run_kvgen("render", "-q", str(EXAMPLE), "--output-dir", str(out), env={"KVGEN_CACHE_DIR": str(cache)})
    assert again.returncode == 0 and (out / "gemma-4-12b.yaml").is_file()


@pytest.mark.parametrize(
    "doc, ours",
    [
        ({"name": "ci", "on": {"push": None}, "jobs": {"render": {}}}, False),  # jobs is close to probes
        ({"name": "ci", "on": {"push": None}, "permissions": {}, "jobs": {}}, False),
        ({"modle": {"id": "x"}}, True),  # a typo of the only key: still a spec
        ({"name": "x", "modle": {"id": "x"}}, True),
        ({"name": "x", "modle": {"id": "x"}, "instanse": {}}, True),
        ({"name": "x", "replicas": 2, "jobs": {}}, True),  # a spec key: a spec, whatever else it holds
    ],
)
def test_a_document_is_ours_with_a_spec_key_or_mostly_typos(doc, ours):
    from kvgen.input.dialects import foreign

    assert (foreign(doc) is None) == ours, foreign(doc)
