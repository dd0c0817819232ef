"""Issue 36: `--format github` on validate and render: every problem and warning as a GitHub Actions workflow
command, which the runner turns into an annotation on the spec's line (it reads commands on stderr as on
stdout: actions/runner src/Runner.Worker/Handlers/ScriptHandler.cs gives both streams an OutputManager)."""

from __future__ import annotations

from conftest import ROOT
from typer.testing import CliRunner

from kvgen.app import cli
from kvgen.app.cli import app

BAD = "name: Bad_Name\nmodel:\n  id: nope/none\ninstance:\n  type: p5.48xlarge\n"


def kvgen(*args: str):
    return CliRunner().invoke(app, list(args))


def commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::")]


def test_every_problem_is_an_error_annotation_at_its_line(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    result = kvgen("validate", str(f), "--format", "github")
    assert result.exit_code == 1
    found = commands(result.stderr)
    assert len(found) == 2
    assert found[0].startswith(f"::error file={f},line=1,col=1,title=kvgen%3A name::name: 'Bad_Name' is not valid")
    assert "%0A    hint: use lowercase letters" in found[0]  # the hint, on the annotation's next line
    assert found[1].startswith(f"::error file={f},line=3,col=3,title=kvgen%3A model.id::model.id: model 'nope/none'")
    assert "error: " in result.stderr  # the plain report stays in the log
    plain = kvgen("validate", str(f))
    assert commands(plain.stderr) == []  # and only with --format github


def test_a_warning_is_a_warning_annotation_on_its_file(tmp_path):
    spec = ROOT / "examples" / "routing-gateway.yaml"
    text = spec.read_text()
    f = tmp_path / "one.yaml"
    assert "replicas: 3" in text
    f.write_text(text.replace("replicas: 3", "replicas: 1"))  # a routing mode with one replica warns
    result = kvgen("validate", str(f), "--format", "github")
    assert result.exit_code == 0, result.output
    warnings = [c for c in commands(result.stderr) if c.startswith("::warning ")]
    assert warnings and all(c.startswith(f"::warning file={f},title=kvgen::") for c in warnings)


def test_render_keeps_its_yaml_on_stdout(tmp_path):
    result = kvgen("render", str(ROOT / "examples" / "lmcache-tp2.yaml"), "--format", "github")
    assert result.exit_code == 0
    assert commands(result.stdout) == [] and result.stdout.startswith("---\n")
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    failed = kvgen("render", str(f), "--format", "github")
    assert failed.exit_code == 1 and len(commands(failed.stderr)) == 2 and failed.stdout == ""


def test_messages_and_properties_are_escaped_as_the_runner_unescapes_them():
    assert cli._command_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert cli._command_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_the_format_is_one_commands(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    kvgen("validate", str(f), "--format", "github")
    assert cli._annotate is False
    assert commands(kvgen("explain", str(f)).stderr) == []
