"""Bad specs fail with every problem listed: the spec path, file:line, a clear message,
exit code 1, no traceback, and no output written."""

from __future__ import annotations

import textwrap

import cli_batch
import pytest
from bad_specs import CASES, HEAD, HINTS, line_of
from conftest import assert_refused_at_once, run_kvgen


@pytest.fixture(scope="module")
def rendered_bad(tmp_path_factory) -> cli_batch.Batch:
    """Every case through one `kvgen render FILE... -o OUT` (each file's problems under its header)."""
    root = tmp_path_factory.mktemp("bad")
    return cli_batch.run(
        "render", {case: text for case, (text, *_rest) in CASES.items()}, root / "specs", "-o", str(root / "out")
    )


def test_bad_specs_are_rejected_together_and_nothing_is_written(rendered_bad):
    result = rendered_bad.result
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    out_dir = next(iter(rendered_bad.files.values())).parent.parent / "out"
    assert not out_dir.exists() or not any(out_dir.iterdir()), "no file may be written"
    assert set(rendered_bad.blocks) == set(CASES), "every file is reported under its own header"


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_spec_is_rejected_with_path_and_line(case, rendered_bad):
    text, path, line_text, fragment = CASES[case]
    expected = f"{rendered_bad.files[case]}:{line_of(text, line_text)}:"
    problem_lines = rendered_bad.problems(case)
    assert any(line.startswith(expected) and f" {path}: " in line and fragment in line for line in problem_lines), (
        rendered_bad.blocks.get(case)
    )
    if case in HINTS:
        assert HINTS[case] in rendered_bad.blocks[case]


@pytest.mark.heavy
def test_unterminated_yaml_names_where_the_open_bracket_started(tmp_path):
    f = tmp_path / "open.yaml"
    f.write_text(HEAD + "kvCacheOffloading:\n  cpu: [10Gi\n")
    result = run_kvgen("validate", str(f))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "malformed YAML" in result.stderr and "started at line 7" in result.stderr


@pytest.mark.heavy
def test_every_problem_is_reported_at_once(tmp_path):
    text = HEAD.replace("name: demo", "name: Bad_Name") + textwrap.dedent("""\
        replicas: -1
        kvCacheOffloding: {}
        kvCacheOffloading:
          cpuMemoryUtilization: 2
          evictionPolicy: fifo
          secondary:
            - fileSystem:
                emptyDir: {size: -5Gi}
        """)
    assert_refused_at_once(
        tmp_path,
        text,
        {
            ("name", "'Bad_Name' is not valid here (must match ^[a-z]([-a-z0-9]*[a-z0-9])?$)"),
            ("replicas", "Input should be greater than or equal to 0"),
            ("kvCacheOffloding", "unknown key 'kvCacheOffloding'"),
            ("kvCacheOffloading.cpuMemoryUtilization", "Input should be less than or equal to 1"),
            ("kvCacheOffloading.evictionPolicy", "Input should be 'lru' or 'arc'"),
            (
                "kvCacheOffloading.secondary[0].fileSystem.emptyDir.size",
                "-5Gi is negative; a size must be greater than zero, e.g. 10Gi",
            ),
        },
    )


@pytest.mark.heavy
def test_problems_of_several_files_are_all_reported_and_nothing_is_written(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(HEAD)
    bad1 = tmp_path / "bad1.yaml"
    bad1.write_text(HEAD + "replicas: two\n")
    bad2 = tmp_path / "bad2.yaml"
    bad2.write_text(HEAD + "kvCacheOffloding: {}\n")
    out = tmp_path / "out"
    result = run_kvgen("render", str(good), str(bad1), str(bad2), "-o", str(out))
    assert result.returncode == 1
    assert str(bad1) in result.stderr and str(bad2) in result.stderr
    assert not out.exists()


@pytest.mark.heavy
def test_a_token_literal_is_not_a_field(tmp_path):
    f = tmp_path / "token.yaml"
    f.write_text(
        HEAD.replace(
            "  id: meta-llama/Llama-3.1-8B-Instruct", "  id: meta-llama/Llama-3.1-8B-Instruct\n  hfToken: hf_abcdef"
        )
    )
    result = run_kvgen("render", str(f))
    assert result.returncode == 1
    assert "unknown key 'hfToken'" in result.stderr
    assert "hfTokenSecret" in result.stderr  # the hint points at the Secret reference


def test_the_dns_label_hint_is_given_for_the_spec_name_only():
    # a name field of another kind (an environment variable's) is no DNS-1035 label: the hint misled
    from conftest import problem_set, spec

    named = {(path, hint) for path, _, hint in problem_set(spec(name="Bad_Name"))}
    assert ("name", "use lowercase letters, digits and '-', starting with a letter (a DNS-1035 label)") in named
    env = {(path, hint) for path, _, hint in problem_set(spec(vllm={"env": [{"name": "1 bad", "value": "x"}]}))}
    assert env == {("vllm.env[0].name", None)}
