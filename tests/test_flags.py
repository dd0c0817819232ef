"""The one table of vLLM flags kvgen owns (charts/kvgen/files/managed-flags.yaml): each flag is
refused in a native spec's vllm.extraArgs by kvgen and by the chart with the same words, mapped
onto its spec field or refused in KServe input, and the table lists every spelling vLLM 0.33
accepts for those options (checked against the shipped contract snapshot)."""

from __future__ import annotations

import textwrap

import contract_support as cs
import helm
import pytest
from conftest import problem_set, spec
from specs import LLMISVC

from kvgen.app.compiler import InputErrors, convert_inputs
from kvgen.core.errors import format_path
from kvgen.data import flags
from kvgen.plan import extra_args
from tools import chart_options

TABLE = flags.table()
VALUES = {"tokens": "4k", "int": "2", "float": "0.5"}


def _token(flag: str) -> str:
    row = TABLE[flag]
    return flag if row.get("switch") else f"{flag}={VALUES.get(row.get('input') or '', 'x')}"


def _expected(flag: str, index: int) -> tuple[str, str, str]:
    row = TABLE[flag]
    message = f"{flag} is set by kvgen from {row['from']}" + (f": {row['why']}" if row.get("why") else "")
    return f"vllm.extraArgs[{index}]", message, row.get("hint") or f"remove it and set {row['from']}"


@pytest.mark.heavy
@pytest.mark.parametrize("flag", sorted(TABLE))
def test_every_flag_of_the_table_is_refused_in_a_native_spec_by_kvgen_and_the_chart(flag):
    data = spec(vllm={"extraArgs": ["--max-num-seqs=64", _token(flag)]})
    assert problem_set(data) == {_expected(flag, 1)}
    assert helm.problems(data) == {_expected(flag, 1)}


@pytest.mark.parametrize(
    "token,flag",
    [
        ("--kv_transfer_config.kv_connector=OffloadingConnector", "--kv-transfer-config"),  # one key of the JSON option
        ("--max_model_len=4096", "--max-model-len"),
        ("--device_memory_utilization=0.5", "--device-memory-utilization"),
    ],
)
def test_every_spelling_vllm_reads_is_refused(token, flag):
    data = spec(vllm={"extraArgs": [token]})
    assert problem_set(data) == {_expected(flag, 0)}
    assert helm.problems(data) == {_expected(flag, 0)}


def test_a_refused_flag_and_its_value_are_one_problem():
    data = spec(vllm={"extraArgs": ["--kv-offloading-size", "abc", "--enforce-eager"]})
    assert problem_set(data) == {_expected("--kv-offloading-size", 0)}


KSERVE = LLMISVC + textwrap.indent(
    textwrap.dedent("""\
    template:
      containers:
        - name: main
          args: ["--max-num-seqs=64", "%s"]
    """),
    "  ",
)


@pytest.mark.parametrize("flag", sorted(TABLE))
def test_every_flag_of_the_table_is_mapped_or_refused_in_kserve_input(flag):
    text = KSERVE % _token(flag)
    row = TABLE[flag]
    if row.get("input"):
        (unit,), _warnings = convert_inputs([("svc.yaml", text)])
        node = unit.doc.data
        for key in row["from"].split("."):
            node = node[key]
        assert str(node) in (VALUES[row["input"]], "4000")  # 4k tokens
        assert flag not in " ".join(unit.doc.data.get("vllm", {}).get("extraArgs", []))
        return
    with pytest.raises(InputErrors) as err:
        convert_inputs([("svc.yaml", text)])
    problems = {(format_path(p.path), p.message, p.hint) for e in err.value.errors for p in e.problems}
    _path, message, hint = _expected(flag, 1)
    assert problems == {("spec.template.containers[0].args[1]", message, hint)}


def test_the_table_lists_every_spelling_of_its_options_and_only_real_flags():
    """Never invented: each flag is a `vllm serve` option of the pinned vLLM; complete: every other
    option string vLLM 0.33 maps to the same option (its dest) is in the table too."""
    options = flags.vllm_snapshot().vllm["serve"]["options"]
    assert set(TABLE) <= set(options)
    owned = {options[f]["dest"] for f in TABLE}
    spellings = {o for o, s in options.items() if s["dest"] in owned}
    assert spellings == set(TABLE)
    # the ones vLLM reads without a value are the table's switches
    assert {f for f in TABLE if not options[f]["takes_value"]} == {f for f in TABLE if TABLE[f].get("switch")}


def test_the_charts_copy_of_vllms_options_is_generated_from_the_snapshot():
    """charts/kvgen/files/vllm-serve-options.json is what scripts/regenerate writes (the chart
    parses it on every render: the part of the snapshot its walk reads, not all 151 KB)."""
    from kvgen.core import paths

    assert (paths.files_dir() / chart_options.CHART_OPTIONS).read_text() == chart_options.chart_options(), (
        "stale: run scripts/regenerate"
    )


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(cs.EXTRA_ARGS_ACCEPTED))
def test_extra_args_vllm_reads_are_accepted(case):
    """vLLM's own spellings (tests/test_contract_live.py parses the same with vLLM): no problem."""
    args = list(cs.EXTRA_ARGS_ACCEPTED[case])
    assert extra_args.check_extra_args(args) == []
    data = spec(vllm={"extraArgs": args})
    assert problem_set(data) == helm.problems(data) == set()


@pytest.mark.heavy
@pytest.mark.parametrize("case", sorted(cs.EXTRA_ARGS_REFUSED))
def test_extra_args_vllm_refuses_are_problems_at_their_index(case, tmp_path):
    """Each a problem at vllm.extraArgs[i] with its file:line, the same in the chart."""
    from conftest import run_kvgen

    args, codes = cs.EXTRA_ARGS_REFUSED[case]
    problems = extra_args.check_extra_args(["--max-num-seqs=8", *args])
    assert {p.code for p in problems} == codes
    assert all(p.path[:2] == ("vllm", "extraArgs") and p.path[2] >= 1 for p in problems)
    data = spec(vllm={"extraArgs": ["--max-num-seqs=8", *args]})
    assert problem_set(data) == helm.problems(data)
    path = tmp_path / "spec.yaml"
    path.write_text(
        "name: demo\nmodel: {id: meta-llama/Llama-3.1-8B-Instruct}\ninstance: {type: Standard_NC24ads_A100_v4}\n"
        "vllm:\n  extraArgs:\n    - --max-num-seqs=8\n" + "".join(f"    - {a!r}\n" for a in args)
    )
    result = run_kvgen("validate", str(path))
    assert result.returncode == 1
    first = min(p.path[2] for p in problems)
    assert f"{path}:{6 + first}:7: vllm.extraArgs[{first}]: " in result.stderr, result.stderr


def test_extra_args_problems_name_the_flag_and_suggest_one():
    by_index = {
        p.path[2]: p
        for p in extra_args.check_extra_args(
            [
                "--swap-space=4",
                "--max-num-sequences=4",
                "--max-num-seq=64",
                "--dtype",
                "float7",
                "--num-gpu-blocks-override",
            ]
        )
    }
    assert (by_index[0].message, by_index[0].hint) == (
        "--swap-space is not an option of vllm serve",
        "see `vllm serve --help`",
    )
    assert (by_index[1].message, by_index[1].hint) == (
        "--max-num-sequences is not an option of vllm serve",
        "did you mean --max-num-seqs?",
    )
    assert by_index[2].hint == "did you mean --max-num-seqs?"  # the one option it abbreviates
    assert (by_index[4].message, by_index[4].hint) == (
        "--dtype: 'float7' is not one of auto, bfloat16, float, float16, float32, half",
        "did you mean 'float'?",
    )
    assert (by_index[5].message, by_index[5].hint) == (
        "--num-gpu-blocks-override expects 1 value(s)",
        "write --num-gpu-blocks-override=VALUE",
    )


def test_kserve_args_vllm_refuses_point_at_the_kserve_field():
    text = KSERVE % "--swap-space=4"
    from kvgen.app.compiler import compile_inputs

    with pytest.raises(InputErrors) as err:
        compile_inputs([("svc.yaml", text)])
    (problem,) = [p for e in err.value.errors for p in e.problems]
    assert format_path(problem.path) == "spec.template.containers[0].args[1]"
    assert problem.message.startswith("--swap-space is not an option of vllm serve")
    assert problem.location is not None and problem.location.line == 12
