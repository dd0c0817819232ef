"""YAML directives (issue 33, 1): a %YAML directive naming a version kvgen does not read, or directives
not followed by ---, are a problem at their file:line (exit 1, nothing written), in a spec and in a
--catalog file alike; ruamel.yaml on its own asserts on `%YAML 1.3` at the top of a file (which kvgen
took for a misplaced comment) and fails with a KeyError on one after a first document (exit 4)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.core.errors import SpecError
from kvgen.input import source

SPEC = "examples/routing-gateway.yaml"
UNSUPPORTED = "is not supported: kvgen reads YAML 1.2 (and 1.1)"
NO_DOCUMENT_START = "directive on line {} must be followed by a '---' line"

# id -> (the file, the line reported, the message's fragment)
BAD: dict[str, tuple[str, int, str]] = {
    "1.3-after-a-document": ("name: a\n---\n%YAML 1.3\n---\nname: b\n", 3, "YAML 1.3 " + UNSUPPORTED),
    "1.3-after-a-document-end": ("name: a\n...\n%YAML 1.3\n---\nname: b\n", 3, "YAML 1.3 " + UNSUPPORTED),
    "1.3-after-empty-documents": ("---\n---\n...\n%YAML 1.3\n---\nname: b\n", 4, "YAML 1.3 " + UNSUPPORTED),
    "1.3-after-a-1.1-document": (
        "%YAML 1.1\n---\na: 1\n...\n%YAML 1.3\n---\nname: b\n",
        5,
        "YAML 1.3 " + UNSUPPORTED,
    ),
    "1.3-at-the-top": ("%YAML 1.3\n---\nname: a\n", 1, "YAML 1.3 " + UNSUPPORTED),
    "1.3-without-dashes": ("%YAML 1.3\nname: a\n", 1, "YAML 1.3 " + UNSUPPORTED),
    "1.0": ("%YAML 1.0\n---\nname: a\n", 1, "YAML 1.0 " + UNSUPPORTED),
    "2.0": ("%YAML 2.0\n---\nname: a\n", 1, "YAML 2.0 " + UNSUPPORTED),
    "5000-digit-minor": ("%YAML 1." + "9" * 5000 + "\n---\nname: a\n", 1, UNSUPPORTED),
    "repeated-with-1.3": ("%YAML 1.2\n%YAML 1.3\n---\nname: a\n", 2, "YAML 1.3 " + UNSUPPORTED),
    "repeated": ("%YAML 1.2\n%YAML 1.2\n---\nname: a\n", 2, "found duplicate YAML directive"),
    "yaml-without-dashes": ("%YAML 1.2\nname: a\n", 2, NO_DOCUMENT_START.format(1)),
    "yaml-then-a-comment-without-dashes": ("%YAML 1.2\n# c\nname: a\n", 3, NO_DOCUMENT_START.format(1)),
    "tag-without-dashes": ("%TAG !e! tag:yaml.org,2002:\nname: a\n", 2, NO_DOCUMENT_START.format(1)),
    "later-yaml-without-dashes": ("name: a\n...\n%YAML 1.2\nname: b\n", 4, NO_DOCUMENT_START.format(3)),
    "yaml-at-the-end": ("name: a\n...\n%YAML 1.2\n", 4, NO_DOCUMENT_START.format(3)),
    "repeated-tag-handle": (
        "%TAG !e! tag:a.com,2000:\n%TAG !e! tag:b.com,2000:\n---\nname: a\n",
        2,
        "duplicate tag handle '!e!'",
    ),
    "tag-of-another-document": (
        "%TAG !e! tag:yaml.org,2002:\n---\na: 1\n---\nreplicas: !e!int 3\n",
        5,
        "undefined tag handle '!e!'",
    ),
    "tag-to-another-prefix": ("%TAG !! tag:example.com,2000:\n---\nname: !!str a\n", 3, "is not supported here"),
}


def cli(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return result


def reported(result, f) -> list[str]:
    return [ln.strip() for ln in result.stderr.splitlines() if ln.strip().startswith(f"{f}:")]


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_directive_kvgen_does_not_read_is_a_problem_at_its_line(case, tmp_path):
    text, line, fragment = BAD[case]
    f = tmp_path / "spec.yaml"
    f.write_text(text, encoding="utf-8")
    result = cli("validate", str(f))
    assert result.exit_code == 1, result.output
    assert any(ln.startswith(f"{f}:{line}:") and fragment in ln for ln in reported(result, f)), result.stderr
    assert "nothing was written" in result.stderr


@pytest.mark.parametrize("case", ["1.3-after-a-document", "1.3-after-a-document-end", "1.3-at-the-top"])
def test_a_directive_kvgen_does_not_read_in_a_catalog_file_is_a_problem_at_its_line(case, tmp_path):
    text, line, fragment = BAD[case]
    f = tmp_path / "catalog.yaml"
    f.write_text(text.replace("name: ", "catalog: "), encoding="utf-8")
    result = cli("validate", "--catalog", str(f), SPEC)
    assert result.exit_code == 1, result.output
    assert any(ln.startswith(f"{f}:{line}:") and fragment in ln for ln in reported(result, f)), result.stderr
    assert "nothing was written" in result.stderr


def test_the_problem_says_what_to_write_instead():
    with pytest.raises(SpecError) as err:
        source.load_documents("name: a\n---\n%YAML 1.3\n---\nname: b\n", "spec.yaml")
    (problem,) = err.value.problems
    assert problem.message == "YAML 1.3 is not supported: kvgen reads YAML 1.2 (and 1.1)"
    assert problem.hint and "%YAML 1.2" in problem.hint
    assert (problem.location.line, problem.location.column) == (3, 1)


@pytest.mark.parametrize(
    "text",
    [
        "%YAML 1.2\n---\nname: a\n",
        "%YAML 1.1\n---\nname: a\n",
        "%YAML 1.2 # a comment\n# another\n\n---\nname: a\n",
        "%YAML 1.2\n--- # a comment\nname: a\n",
        "name: b\n...\n%YAML 1.2\n---\nname: a\n",
        "%TAG !e! tag:yaml.org,2002:\n---\nname: !e!str a\n",
        "name: b\n---\n%TAG !e! tag:yaml.org,2002:\n---\nname: !e!str a\n",
        "a:  1\n %YAML 1.3\n",  # not at the start of a line: text of a plain scalar, not a directive
    ],
)
def test_directives_kvgen_reads_are_read(text):
    docs = source.load_documents(text, "spec.yaml")
    assert docs and all(isinstance(d.data, dict) for d in docs)


@pytest.mark.parametrize(
    "text",
    [
        "name: a\nmodel: &a\n  <<: *a\n  id: Qwen/Qwen3-8B\n",
        "name: a\nmodel: &a\n  x: {<<: *a}\n  id: Qwen/Qwen3-8B\n",
        "name: a\nmodel: &a\n  <<: [*a]\n  id: Qwen/Qwen3-8B\n",
    ],
    ids=["itself", "its ancestor", "in a list"],
)
def test_a_merge_key_that_merges_the_mapping_it_is_in_is_a_problem_not_exit_4(text):
    """Found by the fuzzer (issue 33): ruamel crashed on the half-built mapping (exit 4, AttributeError)."""
    with pytest.raises(SpecError) as exc:
        source.load_documents(text, "spec.yaml")
    (problem,) = exc.value.problems
    assert "a merge key (<<) cannot merge the mapping it is in" in problem.message


@pytest.mark.heavy
def test_ruamels_own_warnings_do_not_reach_stderr(tmp_path):
    """Found by the fuzzer (issue 33): a reused anchor and a YAML 1.1 float without a dot printed ruamel's
    warnings raw (its source path, "<file>"), even with -q. A real process: pytest records warnings itself."""
    import subprocess
    import sys

    f = tmp_path / "s.yaml"
    f.write_text(
        "%YAML 1.1\n---\nname: &x demo\nmodel: {id: &x Qwen/Qwen3-8B, maxModelLen: 1e+3}\n"
        "instance: {type: Standard_NC24ads_A100_v4}\n"
    )
    result = subprocess.run([sys.executable, "-m", "kvgen", "validate", "-q", str(f)], capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    assert not any(w in result.stderr for w in ("ReusedAnchorWarning", "MantissaNoDot", "warnings.simplefilter"))
