"""The release automation (issue 22): the workflows, action.yml and the GitLab CI template pass
actionlint, zizmor and their schemas (and each check fails on a deliberately bad file, so it can
fail); the GitHub Action's and the GitLab template's commands run against the checkout's kvgen;
the offline half of the release runs here: `python -m build` + `twine check --strict` (slow),
`helm package` + `helm lint` of the package, which holds only files the templates read, the
release notes from CHANGELOG.md and the tag check (scripts/release-notes, scripts/check-release-tag).

The tools are the `test` extra's pins (pyproject.toml), run from this venv."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import helm
import helm_cli
import pytest
from conftest import ROOT
from ruamel.yaml import YAML

from kvgen import __version__

load = YAML(typ="safe", pure=True).load  # YAML 1.2: a workflow's `on:` stays a string
BIN = Path(sys.executable).parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
GITLAB = ROOT / "ci" / "gitlab" / "kvgen.gitlab-ci.yml"
CHANGELOG = ROOT / "CHANGELOG.md"
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
CI = ROOT / ".github" / "workflows" / "ci.yml"
SPEC = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
NO_NAMESPACE = ROOT / "examples" / "lmcache-disk-tier.yaml"  # a spec without one: --namespace changes its output
TP2 = ROOT / "examples" / "lmcache-tp2.yaml"  # another without one (a spec's own namespace must be -n's)
# the release's coordinates (the lead's RELEASE-NAMES for issue 22)
CHART_REPOSITORY = "oci://ghcr.io/kvgen-dev/charts"
RUNTIME_IMAGE = "ghcr.io/kvgen-dev/vllm-lmcache"
CLI_IMAGE = "ghcr.io/kvgen-dev/kvgen"
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<rest>.*)$", re.M)
PINNED = re.compile(r"^(?P<action>[\w.-]+/[\w./-]+)@(?P<sha>[0-9a-f]{40})$")
VERSION_COMMENT = re.compile(r"^\s+# v\d+\.\d+\.\d+$")


def tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN))
    assert path, f"{name} is not in {BIN}: pip install -e '.[test]' (pyproject.toml pins it)"
    return path


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})


def actionlint(root: Path, *files: str) -> subprocess.CompletedProcess:
    """actionlint with shellcheck on the run: scripts (pyflakes off: no Python steps)."""
    return run(tool("actionlint"), "-shellcheck", tool("shellcheck"), "-pyflakes=", "-oneline", *files, cwd=root)


def zizmor(*paths: Path) -> list[dict[str, Any]]:
    """zizmor's findings (offline: no GitHub API), [] when clean."""
    result = run(tool("zizmor"), "--offline", "--no-progress", "--format=json", *map(str, paths))
    assert result.stdout.strip(), result.stderr
    findings: list[dict[str, Any]] = json.loads(result.stdout)
    assert (result.returncode == 0) == (findings == []), (result.returncode, result.stderr[-2000:])
    return findings


def uses_every_input(action: Path) -> str:
    """A workflow that runs the local action `./` with every input it declares: actionlint reads a
    local action's metadata only through a workflow that uses it."""
    inputs = load(action.read_text())["inputs"]
    with_ = "".join(f"          {name}: x\n" for name in inputs)
    return (
        "name: uses-the-action\non: push\npermissions: {}\njobs:\n  kvgen:\n    runs-on: ubuntu-24.04\n"
        f"    steps:\n      - uses: ./\n        with:\n{with_}"
    )


def lint_tree(tmp_path: Path, action_text: str) -> Path:
    """A copy of the workflows and action.yml in tmp_path, with a workflow using the action."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for f in WORKFLOWS:
        shutil.copy(f, workflows / f.name)
    (tmp_path / "action.yml").write_text(action_text)
    (workflows / "uses-the-action.yml").write_text(uses_every_input(tmp_path / "action.yml"))
    # actionlint finds a local action (`uses: ./`) from the project root, the repository's top
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


# ----------------------------------------------------------------------------- actionlint, zizmor


@pytest.mark.heavy
def test_the_copy_me_workflow_passes_actionlint(tmp_path):
    """Issue 36: examples/ci/github-actions.yaml is what users copy: actionlint flagged its actions/checkout@v4
    (a runner too old); it now pins checkout's commit as the project's own workflows do."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "ci" / "github-actions.yaml", workflows / "kvgen.yml")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = actionlint(tmp_path, ".github/workflows/kvgen.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    old = (
        (workflows / "kvgen.yml")
        .read_text()
        .replace("actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1", "actions/checkout@v4")
    )
    (workflows / "kvgen.yml").write_text(old)
    assert actionlint(tmp_path, ".github/workflows/kvgen.yml").returncode == 1  # what it flagged


@pytest.mark.heavy
def test_workflows_and_the_action_pass_actionlint(tmp_path):
    root = lint_tree(tmp_path, ACTION.read_text())
    files = sorted(str(p.relative_to(root)) for p in (root / ".github" / "workflows").glob("*.yml"))
    assert len(files) == len(WORKFLOWS) + 1 and len(WORKFLOWS) >= 2
    result = actionlint(root, *files)
    assert result.returncode == 0, result.stdout + result.stderr


BAD_WORKFLOW = """\
name: bad
on: pull_request
jobs:
  greet:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.event.pull_request.title }}"
      - run: if [ -n "$GITHUB_SHA" ]; echo yes; fi
"""


def test_actionlint_fails_a_bad_workflow_and_a_bad_action(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    root = lint_tree(tmp_path / "bad", ACTION.read_text().replace("\nruns:", "\nrunz:"))
    (root / ".github" / "workflows" / "bad.yml").write_text(BAD_WORKFLOW)
    result = actionlint(root, ".github/workflows/bad.yml", ".github/workflows/uses-the-action.yml")
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert '"github.event.pull_request.title" is potentially untrusted' in out  # expression checks
    assert "[shellcheck]" in out and "SC1049" in out  # shellcheck ran on the run: script
    assert '"runs.using" is missing in local action "kvgen"' in out  # action.yml read through uses: ./
    # and the inputs a workflow gives the action are checked against action.yml's
    good = lint_tree(tmp_path / "good", ACTION.read_text())
    uses = good / ".github" / "workflows" / "uses-the-action.yml"
    uses.write_text(uses.read_text() + "          not-an-input: x\n")
    result = actionlint(good, ".github/workflows/uses-the-action.yml")
    assert result.returncode == 1 and 'input "not-an-input" is not defined in action "kvgen"' in result.stdout


def test_workflows_and_the_action_have_no_zizmor_findings():
    findings = zizmor(*WORKFLOWS, ACTION)
    assert findings == [], [(f["ident"], f["desc"]) for f in findings]


def test_zizmor_fails_a_bad_workflow_and_a_bad_action(tmp_path):
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.write_text(BAD_WORKFLOW)
    assert {f["ident"] for f in zizmor(bad)} >= {"template-injection", "unpinned-uses", "artipacked"}
    # the action with an input written into its shell script instead of passed by env
    action = tmp_path / "action.yml"
    text = ACTION.read_text()
    assert "read -r -d '' -a specs <<< \"$KVGEN_SPECS\"" in text
    action.write_text(text.replace('<<< "$KVGEN_SPECS"', '<<< "${{ inputs.specs }}"'))
    assert {f["ident"] for f in zizmor(action)} == {"template-injection"}


# ----------------------------------------------------------------------------- schemas


SCHEMAS = {"vendor.github-workflows": WORKFLOWS, "vendor.github-actions": [ACTION], "vendor.gitlab-ci": [GITLAB]}


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess:
    return run(tool("check-jsonschema"), "--builtin-schema", schema, *map(str, files))


def merged(base: Any, over: Any) -> Any:
    """GitLab's `extends`: mappings merged key by key (deeply), anything else replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: merged(base[k], v) if k in base else v for k, v in over.items()}}
    return over


def as_user_jobs(template_text: str, tmp_path: Path) -> Path:
    """The template's hidden jobs as the visible jobs a user's `extends:` makes of them, resolved:
    GitLab's schema accepts anything under a hidden key, so the jobs are checked in this form."""
    template = load(template_text)

    def resolve(name: str) -> dict[str, Any]:
        job = dict(template[name])
        parent = job.pop("extends", None)
        return merged(resolve(parent), job) if parent else job

    jobs = {name.lstrip("."): resolve(name) for name in template if name != ".kvgen"}
    assert jobs
    out = tmp_path / "user-jobs.json"
    out.write_text(json.dumps(jobs))
    return out


@pytest.mark.heavy
@pytest.mark.parametrize("schema", sorted(SCHEMAS))
def test_ci_files_match_their_schemas(tmp_path, schema):
    files = SCHEMAS[schema]
    if schema == "vendor.gitlab-ci":
        files = [*files, as_user_jobs(GITLAB.read_text(), tmp_path)]
    result = check_jsonschema(schema, *files)
    assert result.returncode == 0, result.stdout + result.stderr


# a mistake in each: a step of neither `run` nor `uses`, an action that runs nothing, a script
# that is not a list of commands
BROKEN = {
    "vendor.github-workflows": (CI, "        run: sudo --", "        runs: sudo --"),
    "vendor.github-actions": (ACTION, "\nruns:\n", "\nrunz:\n"),
    "vendor.gitlab-ci": (GITLAB, "  before_script:\n", "  before_scripts:\n"),
}


@pytest.mark.heavy
@pytest.mark.parametrize("schema", sorted(BROKEN))
def test_the_schema_check_fails_a_broken_file(tmp_path, schema):
    source, old, new = BROKEN[schema]
    text = source.read_text()
    assert text.count(old) == 1, old
    broken = tmp_path / source.name
    broken.write_text(text.replace(old, new))
    if schema == "vendor.gitlab-ci":
        broken = as_user_jobs(broken.read_text(), tmp_path)
    result = check_jsonschema(schema, broken)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Schema validation errors were encountered" in result.stdout + result.stderr


# ----------------------------------------------------------------------------- the workflows


def workflow(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = load(path.read_text())
    return data


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job["steps"])


def test_every_action_is_pinned_to_a_commit_sha_with_its_release_in_a_comment():
    seen: dict[str, set[tuple[str, str]]] = {}
    for path in [*WORKFLOWS, ACTION]:
        for m in USES.finditer(path.read_text()):
            ref = m["ref"]
            if ref.startswith("./"):
                continue
            pin = PINNED.match(ref)
            assert pin, f"{path.name}: {ref} is not pinned to a full commit SHA"
            assert VERSION_COMMENT.match(m["rest"]), f"{path.name}: {ref} has no '# vX.Y.Z' comment"
            seen.setdefault(pin["action"], set()).add((pin["sha"], m["rest"].strip()))
    assert seen
    # one action, one pin, wherever it is used
    assert {a: pins for a, pins in seen.items() if len(pins) > 1} == {}


def test_ci_runs_the_readme_test_command_and_lints_the_automation():
    jobs = workflow(CI)["jobs"]
    runs = [s.get("run", "") for job in jobs.values() for s in steps(job)]
    # the README's test command, the full tier, as root as CI runs it (.ci/run execs scripts/test)
    assert 'sudo --preserve-env=KVGEN_WHEEL_DIR,KVGEN_HYPOTHESIS env "PATH=$PATH" .ci/run' in runs
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()
    assert any(r.startswith(".venv/bin/actionlint") for r in runs)
    assert any(r.startswith(".venv/bin/zizmor") for r in runs)
    assert workflow(CI)["on"]["push"]["branches"] == ["main"] and "pull_request" in workflow(CI)["on"]
    # nightly: the same run with Hypothesis's deep profile (tests/budget.py), given the time it takes
    (test_job,) = [job for job in jobs.values() if any(".ci/run" in s.get("run", "") for s in steps(job))]
    (ci_step,) = [s for s in steps(test_job) if ".ci/run" in s.get("run", "")]
    assert workflow(CI)["on"]["schedule"] and "'deep'" in ci_step["env"]["KVGEN_HYPOTHESIS"]
    assert "schedule" in str(test_job["timeout-minutes"])


def test_release_workflow_publishes_the_release_names_signed_after_the_checks():
    wf = workflow(RELEASE)
    assert wf["on"] == {"push": {"tags": ["v*"]}} and wf["permissions"] == {}
    assert wf["env"] == {"CHART_REPOSITORY": CHART_REPOSITORY, "RUNTIME_IMAGE": RUNTIME_IMAGE, "CLI_IMAGE": CLI_IMAGE}
    jobs = wf["jobs"]
    verify = [s.get("run", "") for s in steps(jobs["verify"])]
    assert any("scripts/check-release-tag" in r for r in verify) and "scripts/test" in verify
    for name, job in jobs.items():
        # nothing is built or published before the tag check and the tests passed
        if name != "verify":
            needs = [job["needs"]] if isinstance(job["needs"], str) else job["needs"]
            assert "verify" in needs, name
        # each job says what it may do; only the publishing jobs get an OIDC token
        assert "permissions" in job, name
        assert (job["permissions"].get("id-token") == "write") == (
            name in {"pypi", "chart", "runtime-image", "cli-image"}
        ), name
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    assert any("twine upload" in s.get("run", "") for s in steps(jobs["pypi"]))
    # the images: the lock checked first, SBOM and provenance, signed by digest
    for name, dockerfile, image in (
        ("runtime-image", "images/Dockerfile", "RUNTIME_IMAGE"),
        ("cli-image", "images/kvgen.Dockerfile", "CLI_IMAGE"),
    ):
        job_steps = steps(jobs[name])
        (build,) = (s for s in job_steps if s.get("uses", "").startswith("docker/build-push-action@"))
        assert build["with"]["file"] == dockerfile and build["with"]["push"] is True
        assert build["with"]["tags"] == f"${{{{ env.{image} }}}}:${{{{ needs.verify.outputs.version }}}}"
        assert build["with"]["sbom"] is True and build["with"]["provenance"] == "mode=max"
        sign = job_steps[-1]
        assert sign["run"] == f'cosign sign --yes "${image}@$DIGEST"'
        assert sign["env"]["DIGEST"] == f"${{{{ steps.{build['id']}.outputs.digest }}}}"
    runtime = [s.get("run", "") for s in steps(jobs["runtime-image"])]
    lock = next(i for i, r in enumerate(runtime) if "scripts/lock-runtime-image --check" in r)
    assert lock < next(
        i for i, s in enumerate(steps(jobs["runtime-image"])) if "docker/build-push" in s.get("uses", "")
    )
    chart = "\n".join(s.get("run", "") for s in steps(jobs["chart"]))
    for command in ('"$helm" package charts/kvgen', '"$helm" lint --strict "$package"', '"$helm" push "$package"'):
        assert command in chart
    assert 'cosign sign --yes "${CHART_REPOSITORY#oci://}/kvgen@$DIGEST"' in chart
    notes = "\n".join(s.get("run", "") for s in steps(jobs["github-release"]))
    assert 'scripts/release-notes "$VERSION"' in notes and "gh release create" in notes


def test_workflows_install_the_tools_the_test_extra_pins():
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    pins = dict(req.split("==", 1) for req in extra if "==" in req)
    installed = re.findall(r'"([A-Za-z0-9_.-]+)==(\d[^"]*)"', "\n".join(p.read_text() for p in WORKFLOWS))
    assert installed
    for name, version in installed:
        assert pins.get(name) == version, (
            f"a workflow installs {name}=={version}; pyproject's test extra: {pins.get(name)}"
        )


# ----------------------------------------------------------------------------- the GitHub Action


def action_steps() -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in load(ACTION.read_text())["runs"]["steps"]}


def test_action_installs_this_release_and_keeps_inputs_out_of_its_scripts():
    action = load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    assert action["inputs"]["version"]["default"] == __version__
    assert action["inputs"]["command"]["default"] == "render-check"
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]  # zizmor's template-injection, by env instead
    assert '"kvgen==$KVGEN_VERSION"' in action_steps()["Install kvgen"]["run"]


def test_action_scripts_pass_shellcheck(tmp_path):
    for i, step in enumerate(s for s in action_steps().values() if "run" in s):
        script = tmp_path / f"step{i}.sh"
        script.write_text(step["run"])
        result = run(tool("shellcheck"), "--shell=bash", str(script))
        assert result.returncode == 0, (step["name"], result.stdout)


@pytest.fixture
def runner_temp(tmp_path: Path) -> Path:
    """$RUNNER_TEMP as the action's install step leaves it, its kvgen the checkout's."""
    kvgen = tmp_path / "kvgen-venv" / "bin" / "kvgen"
    kvgen.parent.mkdir(parents=True)
    kvgen.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kvgen "$@"\n')
    kvgen.chmod(kvgen.stat().st_mode | stat.S_IXUSR)
    return tmp_path


def run_action(runner_temp: Path, command: str, specs: str, output_dir: str = "", args: str = ""):
    script = next(s for s in action_steps().values() if s.get("env", {}).get("KVGEN_COMMAND"))["run"]
    env = {
        "RUNNER_TEMP": str(runner_temp),
        "KVGEN_COMMAND": command,
        "KVGEN_SPECS": specs,
        "KVGEN_OUTPUT_DIR": output_dir,
        "KVGEN_ARGS": args,
        "KVGEN_SUMMARY": "false",  # no job summary (tests/test_ci_replay.py replays the one the action writes)
    }
    return run("bash", "-e", "-o", "pipefail", "-c", script, env=env)


@pytest.mark.heavy
def test_action_render_check_fails_stale_output_and_passes_fresh(runner_temp, tmp_path):
    out = tmp_path / "rendered"
    out.mkdir()
    specs = f"{TP2}\n{NO_NAMESPACE}\n"  # one a line, as `specs: |` gives them
    stale = run_action(runner_temp, "render-check", specs, str(out), "--namespace llm")
    assert stale.returncode == 5, stale.stdout + stale.stderr
    rendered = run(
        sys.executable,
        "-m",
        "kvgen",
        "render",
        str(TP2),
        str(NO_NAMESPACE),
        "-o",
        str(out),
        "--namespace",
        "llm",
        "-q",
    )
    assert rendered.returncode == 0, rendered.stderr
    fresh = run_action(runner_temp, "render-check", specs, str(out), "--namespace llm")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    # the extra arguments reach kvgen: without --namespace the committed tree is stale
    assert run_action(runner_temp, "render-check", specs, str(out)).returncode == 5


@pytest.mark.heavy
def test_action_validate_and_its_usage_errors(runner_temp, tmp_path):
    assert run_action(runner_temp, "validate", f"{SPEC} {SPEC.parent / 'lmcache-tp2.yaml'}").returncode == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.read_text().replace("Standard_NC24ads_A100_v4", "Standard_NC24ads_A100_v9"))
    invalid = run_action(runner_temp, "validate", str(bad))
    assert invalid.returncode == 1 and "Standard_NC24ads_A100_v9" in invalid.stderr
    unknown = run_action(runner_temp, "render", str(SPEC))
    assert unknown.returncode == 2 and "command must be render-check or validate, not 'render'" in unknown.stdout
    assert run_action(runner_temp, "validate", " \n ").returncode == 2
    assert run_action(runner_temp, "render-check", str(SPEC), "").returncode == 2


# ----------------------------------------------------------------------------- the GitLab template


@pytest.mark.heavy
def test_gitlab_template_runs_kvgen_in_this_release_cli_image(tmp_path):
    template = load(GITLAB.read_text())
    assert template[".kvgen"]["image"]["name"] == f"{CLI_IMAGE}:{__version__}"
    assert {".kvgen-render-check", ".kvgen-validate"} <= set(template)
    assert all(name.startswith(".") for name in template)  # hidden jobs only: nothing runs unless extended
    # the scripts, run by sh as the runner does, with the checkout's kvgen on PATH
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kvgen").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kvgen "$@"\n')
    (bin_dir / "kvgen").chmod(0o755)
    out = tmp_path / "rendered"

    def job(name: str, **variables: str) -> subprocess.CompletedProcess:
        env = {**template[".kvgen"]["variables"], **variables, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
        commands = [*template[".kvgen"]["before_script"], *template[name]["script"]]
        # in a project directory of its own: the jobs write their code-quality report there
        return run("sh", "-e", "-c", "\n".join(commands), env=env, cwd=tmp_path)

    specs = f"{TP2} {NO_NAMESPACE}"
    assert job(".kvgen-render-check", KVGEN_SPECS=specs, KVGEN_OUTPUT_DIR=str(out)).returncode == 5
    assert run(sys.executable, "-m", "kvgen", "render", *specs.split(), "-o", str(out), "-q").returncode == 0
    fresh = job(".kvgen-render-check", KVGEN_SPECS=specs, KVGEN_OUTPUT_DIR=str(out))
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert f"kvgen {__version__}" in fresh.stdout
    assert job(".kvgen-render-check", KVGEN_SPECS=specs, KVGEN_OUTPUT_DIR=str(out), KVGEN_ARGS="-n x").returncode == 5
    assert job(".kvgen-validate", KVGEN_SPECS=specs).returncode == 0


# ----------------------------------------------------------------------------- the chart package


def templates_read() -> set[str]:
    """The files/ paths the chart's templates read: every literal `Files.Get "files/..."` (as
    .Files or the context's $s.F), and the one computed path, the launcher named by
    files/runtime.yaml wiring.launcher.file."""
    text = "\n".join(p.read_text() for p in (helm.CHART / "templates").rglob("*") if p.is_file())
    literal = set(re.findall(r'\.(?:Files|F)\.Get\s+"(files/[^"]+)"', text))
    computed = re.findall(r"\.(?:Files|F)\.Get\s+\(printf\s+\"files/%s\"\s+\$L\.file\)", text)
    assert len(computed) == 1, "a new computed Files.Get path: teach templates_read() where it points"
    assert not re.search(r"\.(?:Files|F)\.Glob", text), "a Files.Glob: teach templates_read() what it matches"
    every_get = re.findall(r"\.(?:Files|F)\.Get\b", text)
    assert len(every_get) == sum(text.count(f'Get "{f}"') for f in literal) + len(computed)
    launcher = load((helm.CHART / "files" / "runtime.yaml").read_text())["wiring"]["launcher"]["file"]
    return literal | {f"files/{launcher}"}


@pytest.fixture(scope="module")
def chart_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("chart")
    result = helm_cli.run("package", str(helm.CHART), "-d", str(out))
    assert result.returncode == 0, result.stderr
    (archive,) = out.glob("*.tgz")
    return archive


def test_packaged_chart_holds_only_what_the_templates_read(chart_package):
    assert chart_package.name == f"kvgen-{__version__}.tgz"
    with tarfile.open(chart_package) as tar:
        members = {m.removeprefix("kvgen/") for m in tar.getnames()}
    files = {m for m in members if m.startswith("files/")}
    read = templates_read()
    assert files == read, f"packaged but never read: {sorted(files - read)}; read but missing: {sorted(read - files)}"
    assert not any(m.startswith(("files/contract/", "files/crds/", "ci/")) for m in members)
    # the rest is the chart itself: metadata, values and their schema, the templates
    assert {m for m in members if not m.startswith(("files/", "templates/"))} == {
        "Chart.yaml",
        "values.yaml",
        "values.schema.json",
        "README.md",
        ".helmignore",
    }


def test_packaged_chart_passes_helm_lint(chart_package):
    result = helm_cli.run("lint", "--strict", str(chart_package))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


# ----------------------------------------------------------------------------- release notes, tag


def script(name: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return run(sys.executable, str(ROOT / "scripts" / name), *args, cwd=cwd)


def test_release_notes_print_the_changelog_section_of_a_version():
    result = script("release-notes", __version__)
    assert result.returncode == 0, result.stderr
    notes = result.stdout
    assert notes.strip() and "### Added" in notes
    assert "## [" not in notes and "[Unreleased]:" not in notes  # neither the heading, the next section nor the links
    assert notes == script("release-notes", f"v{__version__}").stdout
    assert notes.strip() in CHANGELOG.read_text()


@pytest.mark.heavy
def test_release_notes_fail_for_a_version_without_a_section(tmp_path):
    result = script("release-notes", "9.9.9")
    assert result.returncode == 1 and result.stdout == ""
    assert f"no section '## [9.9.9]' (sections: Unreleased, {__version__}" in result.stderr
    empty = tmp_path / "CHANGELOG.md"
    empty.write_text("# Changelog\n\n## [1.0.0] - 2026-01-01\n\n## [0.9.0] - 2025-01-01\n\n- x\n")
    result = script("release-notes", "1.0.0", "--changelog", str(empty))
    assert result.returncode == 1 and "the section for 1.0.0 is empty" in result.stderr
    assert script("release-notes", "0.9.0", "--changelog", str(empty)).stdout == "- x\n"


def test_release_tag_of_this_checkout_passes():
    result = script("check-release-tag", f"v{__version__}")
    assert result.returncode == 0, result.stderr


RELEASE_FILES = (
    "pyproject.toml",
    "kvgen/__init__.py",
    "charts/kvgen/Chart.yaml",
    "action.yml",
    "ci/gitlab/kvgen.gitlab-ci.yml",
    "CHANGELOG.md",
)


@pytest.fixture
def release_copy(tmp_path: Path) -> Path:
    for name in RELEASE_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new))


@pytest.mark.heavy
def test_release_tag_check_names_every_disagreement(release_copy):
    wrong = script("check-release-tag", "v9.9.9", "--root", str(release_copy))
    assert wrong.returncode == 1
    assert f"tag 'v9.9.9' is not 'v' + kvgen/__init__.py __version__ ('{__version__}'): expected v{__version__}" in (
        wrong.stderr
    )
    # no v
    assert "expected v" in script("check-release-tag", __version__, "--root", str(release_copy)).stderr
    # every file that names the version, wrong at once: each is named
    edit(release_copy / "action.yml", f'default: "{__version__}"', 'default: "0.0.9"')
    edit(release_copy / "ci/gitlab/kvgen.gitlab-ci.yml", f"{CLI_IMAGE}:{__version__}", f"{CLI_IMAGE}:0.0.9")
    edit(release_copy / "CHANGELOG.md", f"## [{__version__}] - ", f"## [{__version__}] ")
    result = script("check-release-tag", f"v{__version__}", "--root", str(release_copy))
    assert result.returncode == 1
    assert f"action.yml inputs.version.default is '0.0.9', the tag says '{__version__}'" in result.stderr
    assert f"ci/gitlab/kvgen.gitlab-ci.yml .kvgen image tag ({CLI_IMAGE}:0.0.9) is '0.0.9'" in result.stderr
    assert f"the section for {__version__} has no release date" in result.stderr
    edit(release_copy / "CHANGELOG.md", f"## [{__version__}] ", "## [0.0.1] - 2020-01-01")
    result = script("check-release-tag", f"v{__version__}", "--root", str(release_copy))
    assert f"no section '## [{__version__}]'" in result.stderr


# ----------------------------------------------------------------------------- build, twine (slow)


@pytest.mark.slow
def test_build_gives_a_wheel_and_sdist_that_pass_twine_check(tmp_path):
    # python -m build: the sdist, then the wheel built from the sdist (so the sdist is complete)
    built = run(sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT))
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel, sdist = tmp_path / f"kvgen-{__version__}-py3-none-any.whl", tmp_path / f"kvgen-{__version__}.tar.gz"
    assert sorted(tmp_path.iterdir()) == sorted([wheel, sdist])
    checked = run(tool("twine"), "check", "--strict", str(wheel), str(sdist))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"kvgen/_data/files/runtime.yaml", "kvgen/_data/schemas/kvgen.schema.json"} <= names
    with tarfile.open(sdist) as tar:
        top = {n.split("/", 2)[1] for n in tar.getnames() if n.count("/") >= 1}
    assert {"kvgen", "charts", "templates", "schemas", "README.md", "pyproject.toml"} <= top
    # the GitHub Action's install step, with this wheel where PyPI would give kvgen==VERSION
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    step = action_steps()["Install kvgen"]
    env = {"RUNNER_TEMP": str(runner_temp), "KVGEN_PYTHON": sys.executable, "KVGEN_VERSION": __version__}
    installed = run("bash", "-e", "-c", step["run"], env={**env, "PIP_FIND_LINKS": str(tmp_path)})
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    assert f"kvgen {__version__}" in installed.stdout
    out = tmp_path / "rendered"
    assert run_action(runner_temp, "render-check", str(SPEC), str(out)).returncode == 5
