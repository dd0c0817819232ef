"""Issue 36: `--codequality FILE` (GitLab's code-quality report) and `--summary FILE` (a Markdown summary, the
GitHub Action's job summary) on validate and render: every problem, warning and stale file, whatever the outcome.
tests/test_ci_replay.py runs them through the Action and the GitLab template; docs/ci.md says what they hold."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from codequality import CODEQUALITY_SCHEMA, check_codequality
from conftest import ROOT
from typer.testing import CliRunner

from kvgen.app import cli, findings
from kvgen.app.cli import app

BAD = "name: Bad_Name\nmodel:\n  id: nope/none\ninstance:\n  type: p5.48xlarge\n"
GATEWAY = ROOT / "examples" / "routing-gateway.yaml"
TRACE = ROOT / "examples" / "trace-sizing.yaml"


def kvgen(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def chdir(tmp_path, monkeypatch) -> Path:
    """CI runs in the checkout's root: findings are reported relative to it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_schema_refuses_what_gitlab_would_not_read():
    good = {
        "description": "d",
        "check_name": "c",
        "fingerprint": "f",
        "severity": "minor",
        "location": {"path": "a.yaml", "lines": {"begin": 1}},
    }
    validator = jsonschema.Draft202012Validator(CODEQUALITY_SCHEMA)
    assert validator.is_valid([good])
    for bad in (
        {**good, "severity": "error"},
        {k: v for k, v in good.items() if k != "fingerprint"},
        {**good, "location": {"path": "/abs/a.yaml", "lines": {"begin": 1}}},
        {**good, "location": {"path": "a.yaml"}},
        {**good, "location": {"path": "a.yaml", "lines": {"begin": 0}}},
    ):
        assert not validator.is_valid([bad]), bad


def test_every_problem_is_a_major_finding_at_its_line(chdir):
    (chdir / "specs").mkdir()
    (chdir / "specs" / "bad.yaml").write_text(BAD)
    # an absolute path below the working directory is reported relative to it, as GitLab wants
    result = kvgen("validate", str(chdir / "specs"), "--codequality", "report.json", "--summary", "summary.md")
    assert result.exit_code == 1
    report = check_codequality(chdir / "report.json")
    assert [(f["location"]["path"], f["location"]["lines"]["begin"], f["severity"]) for f in report] == [
        ("specs/bad.yaml", 1, "major"),
        ("specs/bad.yaml", 3, "major"),
    ]
    assert [f["check_name"] for f in report] == ["kvgen/name", "kvgen/model.id"]
    assert report[0]["description"].startswith("name: 'Bad_Name' is not valid")
    assert "hint: use lowercase letters" in report[0]["description"] and "\n" not in report[0]["description"]
    summary = (chdir / "summary.md").read_text()
    assert summary.startswith(
        "### kvgen validate: failed (exit 1), 2 errors\n\n2 problems found; nothing was written\n"
    )
    assert "| error | `specs/bad.yaml:3` | model.id: model 'nope/none' is not in the catalog" in summary
    assert "error: " in result.stderr  # the text on stderr is kept


@pytest.mark.heavy
def test_a_warning_is_a_minor_finding_and_passing_writes_the_report_too(chdir):
    spec = chdir / "one.yaml"
    spec.write_text(GATEWAY.read_text().replace("replicas: 3", "replicas: 1"))
    result = kvgen("validate", "one.yaml", "--codequality", "report.json", "--summary", "summary.md", "-q")
    assert result.exit_code == 0, result.output
    (warning,) = check_codequality(chdir / "report.json")  # --quiet leaves stderr, not the report
    assert warning["severity"] == "minor" and warning["check_name"] == "kvgen/warning"
    assert warning["location"] == {"path": "one.yaml", "lines": {"begin": 1}}
    assert "routing.mode gateway with one replica" in warning["description"]
    summary = (chdir / "summary.md").read_text()
    assert summary.startswith("### kvgen validate: passed, 1 warning\n\n1 spec and the objects it renders are valid\n")
    # --strict: the same warning is an error
    strict = kvgen("validate", "one.yaml", "--codequality", "report.json", "--strict")
    assert strict.exit_code == 1
    (error,) = check_codequality(chdir / "report.json")
    assert error["severity"] == "major" and error["location"]["path"] == "one.yaml"
    clean = kvgen("validate", str(TRACE), "--codequality", "report.json")
    assert clean.exit_code == 0 and check_codequality(chdir / "report.json") == []


def test_the_fingerprint_is_the_findings_not_its_lines():
    """GitLab tells a new finding from a fixed one by its fingerprint: a line added above a problem keeps it;
    two identical findings in one file keep theirs apart."""
    a = findings.Finding("error", "model.id: no", "specs/a.yaml", 3, "model.id", "kvgen/model.id")
    moved = findings.Finding("error", "model.id: no", "specs/a.yaml", 9, "model.id", "kvgen/model.id")
    other = findings.Finding("error", "model.id: no", "specs/b.yaml", 3, "model.id", "kvgen/model.id")
    (one,) = findings.codequality([a])
    (two,) = findings.codequality([moved])
    assert one["fingerprint"] == two["fingerprint"] and one["location"]["lines"]["begin"] == 3
    twice = findings.codequality([a, moved, other])
    assert len({f["fingerprint"] for f in twice}) == 3
    assert twice[0]["fingerprint"] == one["fingerprint"]  # the first of identical ones is the one alone


def test_stale_files_are_findings_at_their_first_changed_line(chdir):
    spec = chdir / "trace.yaml"
    spec.write_text(TRACE.read_text())
    assert kvgen("render", "trace.yaml", "-o", "out", "-q").exit_code == 0
    spec.write_text(TRACE.read_text().replace("cpuMemoryUtilization: 0.5", "cpuMemoryUtilization: 0.7"))
    result = kvgen(
        "render",
        "trace.yaml",
        "-o",
        "out",
        "--check",
        "--codequality",
        "r.json",
        "--summary",
        "s.md",
        "--format",
        "github",
    )
    assert result.exit_code == 5
    (stale,) = check_codequality(chdir / "r.json")
    assert stale["location"]["path"] == "out/qwen2-7b-trace-sized.yaml" and stale["check_name"] == "kvgen/stale"
    assert kvgen("render", "trace.yaml", "-o", "new", "-q").exit_code == 0
    old, new = ((chdir / d / "qwen2-7b-trace-sized.yaml").read_text().splitlines() for d in ("out", "new"))
    line = stale["location"]["lines"]["begin"]
    assert line > 1 and old[: line - 1] == new[: line - 1] and old[line - 1] != new[line - 1]  # the first that differs
    assert f"::error file=out/qwen2-7b-trace-sized.yaml,line={line},title=kvgen%3A stale::" in result.stderr
    summary = (chdir / "s.md").read_text()
    assert summary.startswith("### kvgen render --check: stale (exit 5), 1 error\n\nout is stale: 1 differ;")


def test_stdout_is_validates_only_and_an_unwritable_file_is_a_usage_error(chdir):
    spec = chdir / "one.yaml"
    spec.write_text(GATEWAY.read_text().replace("replicas: 3", "replicas: 1"))
    result = kvgen("validate", "one.yaml", "--codequality", "-", "-q")
    assert result.exit_code == 0
    assert json.loads(result.stdout)[0]["severity"] == "minor"
    refused = kvgen("render", "one.yaml", "--codequality", "-")
    assert refused.exit_code == 2 and "give --codequality a file" in refused.stderr and refused.stdout == ""
    missing = kvgen("validate", "one.yaml", "--codequality", "no/such/dir/r.json")
    assert missing.exit_code == 2 and "no/such/dir/r.json: cannot write it" in missing.stderr
    # a usage error writes no report (an empty file is no JSON), but says so in the summary
    usage = kvgen("validate", "nothing.yaml", "--codequality", "r.json", "--summary", "s.md")
    assert usage.exit_code == 2 and not (chdir / "r.json").exists()
    assert (
        (chdir / "s.md")
        .read_text()
        .startswith("### kvgen validate: usage error (exit 2)\n\nerror: nothing.yaml: no such file or directory\n")
    )


def test_the_summary_is_appended_and_its_cells_are_escaped(chdir):
    summary = chdir / "s.md"
    summary.write_text("before\n")
    (chdir / "bad.yaml").write_text(BAD)
    kvgen("validate", "bad.yaml", "--summary", "s.md")
    assert summary.read_text().startswith("before\n### kvgen validate: failed")
    row = findings.summary("validate", 1, "", [findings.Finding("error", "a | b <script>", "x.yaml", 2, "", "c")])
    assert "| error | `x.yaml:2` | a \\| b &lt;script> |" in row


def test_the_options_are_one_commands(chdir):
    (chdir / "bad.yaml").write_text(BAD)
    kvgen("validate", "bad.yaml", "--codequality", "r.json")
    assert cli._sink is None
    (chdir / "r.json").unlink()
    kvgen("validate", "bad.yaml")
    assert not (chdir / "r.json").exists()
