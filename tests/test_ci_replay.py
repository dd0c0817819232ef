"""Issue 36, "done when": the GitHub Action's annotations and job summary, and the GitLab template's code-quality
report, shown working in runs replayed offline.

The Action is replayed as the runner runs a composite action: action.yml's steps in order, each `run:` script
in `bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`) with the environment the step declares,
its `${{ }}` expressions substituted from the inputs (action.yml's defaults under the ones given), the event and
the earlier steps' outputs. Two steps are not run: actions/setup-python (a `uses:` step) and the install step,
which would pip install kvgen from PyPI; $RUNNER_TEMP/kvgen-venv, where it installs, is a link to this test's
venv instead. The workspace is a temporary git repository whose head commit changes a spec; $GITHUB_STEP_SUMMARY
is a file; the workflow commands in the log are parsed as the runner parses them (actions/runner's
ActionCommand: `::name k=v,...::data`, unescaped). An expression or a step condition the replay does not know
fails the test rather than being guessed.

The GitLab template's jobs are replayed as a runner runs them: `before_script` and `script` lines in `sh -e`,
the job's variables in the environment, kvgen on PATH (the CLI image's entrypoint), in the project directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from codequality import check_codequality
from conftest import ROOT
from ruamel.yaml import YAML

load = YAML(typ="safe", pure=True).load
ACTION = ROOT / "action.yml"
GITLAB = ROOT / "ci" / "gitlab" / "kvgen.gitlab-ci.yml"
TRACE = ROOT / "examples" / "trace-sizing.yaml"
TP2 = ROOT / "examples" / "lmcache-tp2.yaml"
GATEWAY = ROOT / "examples" / "routing-gateway.yaml"
RAISE_THE_CPU_TIER = ("cpuMemoryUtilization: 0.5", "cpuMemoryUtilization: 0.7")
BAD = "name: Bad_Name\nmodel:\n  id: nope/none\ninstance:\n  type: p5.48xlarge\n"
VENV = Path(sys.prefix)  # the venv running the tests: its bin/kvgen is this checkout's
# what `kvgen diff` says of the raised CPU tier (tests/test_diff.py has the same figures)
TIER_ROW = "| KV-cache tier cpu | 500.0 GiB, 9,363,126 tokens | 700.1 GiB, 13,108,388 tokens |"
MEMORY_ROW = "| pod memory | 530.0 GiB | 730.0 GiB |"

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
PROPERTY_PATH = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*")
COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


def evaluate(text: str, context: dict[str, Any]) -> str:
    """The `${{ }}` of a value as the runner substitutes them: a property path into a context (a missing
    property is null, written as ''). Operators, functions and literals are not replayed: they fail."""

    def one(m: re.Match[str]) -> str:
        expression = m[1]
        assert PROPERTY_PATH.fullmatch(expression), f"the replay does not evaluate ${{{{ {expression} }}}}"
        head, *rest = expression.split(".")
        assert head in context, f"the replay has no context {head!r}"
        if head == "inputs":
            assert rest and rest[0] in context["inputs"], f"{expression}: no such input in action.yml"
        value: Any = context[head]
        for part in rest:
            value = value.get(part) if isinstance(value, dict) else None
        return "" if value is None else str(value)

    return EXPRESSION.sub(one, text)


def _unescape(text: str, property_: bool) -> str:
    """actions/runner's ActionCommand unescaping (%25 last, so an escaped '%0A' stays as written)."""
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if property_ else [])
    for escaped, plain in [*pairs, ("%25", "%")]:
        text = text.replace(escaped, plain)
    return text


def workflow_commands(log: str) -> list[dict[str, str]]:
    """The ::error / ::warning / ::notice lines of a log as the runner reads them: level, properties, message."""
    found = []
    for line in log.splitlines():
        m = COMMAND.match(line)
        if m is None:
            continue
        properties = {}
        for item in (m[2] or "").split(","):
            if item:
                key, _, value = item.partition("=")
                properties[key] = _unescape(value, True)
        found.append({"level": m[1], **properties, "message": _unescape(m[3], False)})
    return found


def step_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: name=value lines and name<<DELIMITER blocks."""
    outputs: dict[str, str] = {}
    lines = iter(path.read_text().splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for more in lines:
                if more == delimiter:
                    break
                value.append(more)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value_ = line.split("=", 1)
            outputs[name] = value_
    return outputs


def clean_env(home: Path) -> dict[str, str]:
    """A runner's environment, not this test's (no KVGEN_CATALOG, no git configuration of the user's)."""
    home.mkdir(exist_ok=True)
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass
class ActionRun:
    rc: int
    log: str
    summary: str
    annotations: list[dict[str, str]]

    def errors(self) -> list[dict[str, str]]:
        return [a for a in self.annotations if a["level"] == "error"]


def replay_action(
    workspace: Path, tmp: Path, inputs: dict[str, str], event_name: str = "pull_request", event: Any = None
) -> ActionRun:
    action = load(ACTION.read_text())
    declared = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    assert set(inputs) <= set(declared), set(inputs) - set(declared)
    tmp.mkdir()
    runner_temp = tmp / "runner-temp"
    runner_temp.mkdir()
    assert (VENV / "bin" / "kvgen").is_file(), f"no kvgen in {VENV}: pip install -e '.[test]'"
    (runner_temp / "kvgen-venv").symlink_to(VENV, target_is_directory=True)
    summary = tmp / "step-summary.md"
    summary.touch()
    event_path = tmp / "event.json"
    event_path.write_text(json.dumps(event or {}))
    context: dict[str, Any] = {
        "inputs": {**declared, **inputs},
        "github": {"event_name": event_name, "event": event or {}, "workspace": str(workspace)},
        "steps": {},
    }
    base = {
        **clean_env(tmp / "home"),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_ACTION_PATH": str(ROOT),
        "RUNNER_TEMP": str(runner_temp),
        "RUNNER_OS": "Linux",
    }
    log, rc = [], 0
    for i, step in enumerate(action["runs"]["steps"]):
        assert "if" not in step, f"{step.get('name')}: the replay does not evaluate step conditions"
        env = {name: evaluate(str(value), context) for name, value in (step.get("env") or {}).items()}
        if "uses" in step:
            assert step["uses"].startswith("actions/setup-python@"), step["uses"]
            {name: evaluate(str(value), context) for name, value in (step.get("with") or {}).items()}
            context["steps"][step["id"]] = {"outputs": {"python-path": sys.executable}}
            continue
        if step["name"] == "Install kvgen":  # the link in $RUNNER_TEMP is its venv
            assert 'venv="$RUNNER_TEMP/kvgen-venv"' in step["run"] and env["KVGEN_PYTHON"] == sys.executable
            continue
        assert step["shell"] == "bash", step["name"]
        script, output = tmp / f"step-{i}.sh", tmp / f"output-{i}"
        script.write_text(step["run"])
        output.touch()
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env={**base, "GITHUB_OUTPUT": str(output), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=300,
        )
        log.append(result.stdout)
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": step_outputs(output)}
        if result.returncode:
            rc = result.returncode
            break  # a failed step ends the action
    text = "".join(log)
    return ActionRun(rc, text, summary.read_text(), workflow_commands(text))


# ----------------------------------------------------------------------------- the repository


def git(cwd: Path, *args: str) -> str:
    env = {**clean_env(cwd.parent / "git-home"), "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z"}
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args]
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return result.stdout.strip()


def render(workspace: Path) -> None:
    result = subprocess.run(
        [str(VENV / "bin" / "kvgen"), "render", "specs/", "-o", "rendered/", "-q"], cwd=workspace, capture_output=True
    )
    assert result.returncode == 0, result.stderr


@dataclass
class Repo:
    path: Path
    base: str  # the pull request's base commit

    def pull_request(self) -> dict[str, Any]:
        """The pull_request event's payload, as much of it as the action reads."""
        return {"pull_request": {"base": {"sha": self.base, "ref": "main"}, "number": 1}}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """specs/ (two examples) and rendered/ on a base commit; a head commit that raises one spec's CPU tier and
    commits its output."""
    work = tmp_path_factory.mktemp("repository") / "work"
    (work / "specs").mkdir(parents=True)
    (work / "specs" / "trace.yaml").write_text(TRACE.read_text())
    (work / "specs" / "tp2.yaml").write_text(TP2.read_text())
    render(work)
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "base")
    base = git(work, "rev-parse", "HEAD")
    spec = work / "specs" / "trace.yaml"
    assert spec.read_text().count(RAISE_THE_CPU_TIER[0]) == 1
    spec.write_text(spec.read_text().replace(*RAISE_THE_CPU_TIER))
    render(work)
    git(work, "commit", "-qam", "raise the CPU tier")
    return Repo(work, base)


@pytest.fixture
def repo(built: Repo, tmp_path: Path) -> Repo:
    """A copy of the repository for one test."""
    copy = tmp_path / "work"
    shutil.copytree(built.path, copy, symlinks=True)
    return Repo(copy, built.base)


# ----------------------------------------------------------------------------- the GitHub Action


@pytest.mark.heavy
def test_a_pull_request_gets_the_diff_of_its_changed_spec_in_the_job_summary(repo, tmp_path):
    run = replay_action(
        repo.path, tmp_path / "run", {"specs": "specs/", "output-dir": "rendered/"}, event=repo.pull_request()
    )
    assert run.rc == 0, run.log
    assert run.annotations == []
    short = git(repo.path, "rev-parse", "--short", repo.base)
    summary = run.summary
    # lmcache-tp2 relies on the AKS default OS disk for more than half of its room: the render's one warning
    assert summary.startswith("### kvgen render --check: passed, 1 warning\n\nrendered is up to date (")
    assert "OS disk of a default node pool" in summary
    assert f"against its base commit `{short}`" in summary
    assert f"### kvgen diff: `specs/trace.yaml@{short}` → `specs/trace.yaml`" in summary
    assert TIER_ROW in summary and MEMORY_ROW in summary
    assert "specs/tp2.yaml@" not in summary  # an unchanged spec is not compared (its warning is listed above)
    # the step gave kvgen --format github and --summary, and the diff --against the event's base commit
    assert "--format github" in ACTION.read_text() and "KVGEN_BASE_SHA: ${{ github.event.pull_request.base.sha }}" in (
        ACTION.read_text()
    )


@pytest.mark.heavy
def test_a_broken_spec_is_annotated_at_its_lines_and_listed_in_the_summary(repo, tmp_path):
    (repo.path / "specs" / "bad.yaml").write_text(BAD)
    git(repo.path, "add", "specs/bad.yaml")
    git(repo.path, "commit", "-qm", "a broken spec")
    run = replay_action(
        repo.path, tmp_path / "run", {"command": "validate", "specs": "specs/"}, event=repo.pull_request()
    )
    assert run.rc == 1, run.log
    assert [(a["file"], a["line"], a["col"], a["title"]) for a in run.errors()] == [
        ("specs/bad.yaml", "1", "1", "kvgen: name"),
        ("specs/bad.yaml", "3", "3", "kvgen: model.id"),
    ]
    first = run.errors()[0]["message"]
    assert first.startswith("name: 'Bad_Name' is not valid") and "\n    hint: use lowercase letters" in first
    assert "::error file=specs/bad.yaml,line=1,col=1,title=kvgen%3A name::" in run.log
    summary = run.summary
    assert summary.startswith("### kvgen validate: failed (exit 1), 2 errors\n\n2 problems found; nothing was written")
    assert "| error | `specs/bad.yaml:3` | model.id: model 'nope/none' is not in the catalog" in summary
    # the diff still says what the other change does, and names the new file
    assert "- `specs/bad.yaml`: a new file (not at the base commit)" in summary
    assert TIER_ROW in summary
    # summary: false: the annotations alone
    quiet = replay_action(
        repo.path,
        tmp_path / "run-no-summary",
        {"command": "validate", "specs": "specs/", "summary": "false"},
        event=repo.pull_request(),
    )
    assert quiet.rc == 1 and quiet.summary == "" and len(quiet.errors()) == 2


@pytest.mark.heavy
def test_stale_output_on_a_push_is_annotated_and_summarized_without_a_diff(repo, tmp_path):
    spec = repo.path / "specs" / "trace.yaml"
    spec.write_text(spec.read_text().replace(RAISE_THE_CPU_TIER[1], "cpuMemoryUtilization: 0.6"))
    git(repo.path, "commit", "-qam", "a change not rendered")
    run = replay_action(repo.path, tmp_path / "run", {"specs": "specs/", "output-dir": "rendered/"}, event_name="push")
    assert run.rc == 5, run.log
    (stale,) = run.errors()
    assert (stale["file"], stale["title"]) == ("rendered/qwen2-7b-trace-sized.yaml", "kvgen: stale")
    assert int(stale["line"]) > 1 and "differs from what kvgen renders" in stale["message"]
    assert "+      - --max-bytes=" in run.log or "@@" in run.log  # the unified diff stays in the log
    assert run.summary.startswith(
        "### kvgen render --check: stale (exit 5), 1 error, 1 warning\n\nrendered is stale: 1 differ;"
    )
    assert f"`rendered/qwen2-7b-trace-sized.yaml:{stale['line']}`" in run.summary
    assert "kvgen diff" not in run.summary  # no pull request, no base to compare with


@pytest.mark.heavy
def test_the_base_commit_is_fetched_from_origin_and_its_absence_is_said(repo, tmp_path):
    """actions/checkout's default fetch-depth 1 leaves the base commit out: the step fetches it from origin; where
    it cannot, the summary and a warning say to check out with fetch-depth: 0, and the job's outcome is kvgen's."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(origin))
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(shallow))
    assert subprocess.run(["git", "cat-file", "-e", f"{repo.base}^{{commit}}"], cwd=shallow).returncode != 0
    inputs = {"command": "validate", "specs": "specs/trace.yaml"}
    fetched = replay_action(shallow, tmp_path / "run-fetched", inputs, event=repo.pull_request())
    assert fetched.rc == 0, fetched.log
    assert TIER_ROW in fetched.summary and fetched.annotations == []
    cut_off = tmp_path / "cut-off"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(cut_off))
    git(cut_off, "remote", "set-url", "origin", str(tmp_path / "no-such-origin.git"))
    missing = replay_action(cut_off, tmp_path / "run-missing", inputs, event=repo.pull_request())
    assert missing.rc == 0, missing.log
    assert f"the base commit `{repo.base}` is not in the checkout" in missing.summary
    assert TIER_ROW not in missing.summary and missing.summary.startswith("### kvgen validate: passed")
    (warning,) = missing.annotations
    assert warning["level"] == "warning" and "fetch-depth: 0" in warning["message"]


def test_the_replay_substitutes_what_github_would_and_refuses_what_it_cannot():
    context = {"inputs": {"specs": "a b"}, "github": {"event": {}}, "steps": {"python": {"outputs": {"x": "1"}}}}
    assert evaluate("${{ inputs.specs }} ${{ steps.python.outputs.x }}", context) == "a b 1"
    assert evaluate("${{ github.event.pull_request.base.sha }}", context) == ""  # a push has no pull_request
    for unknown in ("${{ inputs.nope }}", "${{ github.sha || 'x' }}", "${{ toJSON(github) }}", "${{ secrets.X }}"):
        with pytest.raises(AssertionError):
            evaluate(unknown, context)
    assert workflow_commands("x\n::error file=a%2Cb.yaml,line=3,title=kvgen%3A p::50%25 a%0Ab\n") == [
        {"level": "error", "file": "a,b.yaml", "line": "3", "title": "kvgen: p", "message": "50% a\nb"}
    ]


# ----------------------------------------------------------------------------- the GitLab template


def gitlab_job(name: str, workspace: Path, tmp: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """A job of the template as a runner runs it: its (and .kvgen's) variables, before_script and script."""
    template = load(GITLAB.read_text())
    job = template[name]
    assert job["extends"] == ".kvgen"
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "kvgen").exists():
        (bin_dir / "kvgen").symlink_to(VENV / "bin" / "kvgen")  # the CLI image's kvgen
    env = clean_env(tmp / "home")
    env = {**env, **template[".kvgen"]["variables"], **variables, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}
    script = "\n".join([*template[".kvgen"]["before_script"], *job["script"]])
    return subprocess.run(["sh", "-e", "-c", script], cwd=workspace, env=env, capture_output=True, text=True)


def test_the_gitlab_jobs_declare_the_report_they_write_even_when_they_fail():
    template = load(GITLAB.read_text())
    artifacts = template[".kvgen"]["artifacts"]
    report = artifacts["reports"]["codequality"]
    assert artifacts["when"] == "always" and report == "gl-code-quality-report.json"
    for name in (".kvgen-render-check", ".kvgen-validate"):
        (line,) = template[name]["script"]
        assert f"--codequality {report}" in line, name


@pytest.mark.heavy
def test_the_gitlab_jobs_write_a_codequality_report_of_problems_warnings_and_stale_files(tmp_path):
    project = tmp_path / "project"  # $CI_PROJECT_DIR, where a job runs
    (project / "specs").mkdir(parents=True)
    (project / "specs" / "bad.yaml").write_text(BAD)
    report = project / "gl-code-quality-report.json"
    validate = gitlab_job(".kvgen-validate", project, tmp_path)
    assert validate.returncode == 1 and "kvgen 0.1" in validate.stdout and "error: " in validate.stderr
    found = check_codequality(report)
    assert [(f["location"]["path"], f["location"]["lines"]["begin"], f["severity"]) for f in found] == [
        ("specs/bad.yaml", 1, "major"),
        ("specs/bad.yaml", 3, "major"),
    ]
    assert found[1]["description"].startswith("model.id: model 'nope/none' is not in the catalog")
    # a warning and a stale output directory: minor and major
    (project / "specs" / "bad.yaml").unlink()
    assert GATEWAY.read_text().count("replicas: 3") == 1
    (project / "specs" / "one.yaml").write_text(GATEWAY.read_text().replace("replicas: 3", "replicas: 1"))
    check = gitlab_job(".kvgen-render-check", project, tmp_path)
    assert check.returncode == 5, check.stderr
    found = check_codequality(report)
    assert [(f["severity"], f["check_name"], f["location"]["path"]) for f in found] == [
        ("minor", "kvgen/warning", "specs/one.yaml"),
        ("major", "kvgen/stale", "rendered/kustomization.yaml"),
        ("major", "kvgen/stale", "rendered/llama-8b-routed.yaml"),
    ]
    assert "routing.mode gateway with one replica" in found[0]["description"]
    # fixed: the report is empty, which tells GitLab the findings are resolved
    render(project)
    assert gitlab_job(".kvgen-render-check", project, tmp_path).returncode == 0
    assert [f["check_name"] for f in check_codequality(report)] == ["kvgen/warning"]
