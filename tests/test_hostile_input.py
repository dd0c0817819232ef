"""Careless and hostile input: every bad file is a problem with its file:line (exit 1) or a
usage error said as what it is (exit 2), never an internal error (exit 4) or a traceback; and
reading it has bounded cost. The cost tests have no timing assertions: an alias bomb that
kvgen expanded would take minutes and gigabytes, so the suite finishing is the proof."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, run_kvgen
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.core import quantity
from kvgen.input import source
from kvgen.render import templates as render

SEEDS = ROOT / "examples" / "seeds"
# the gemma example up to its vllm section (KAITO's settings), so that cases can append a vllm
# section of their own, and tiers under kvCacheOffloading, which then ends the file
NATIVE = (ROOT / "examples" / "kaito-gemma-4-12b.yaml").read_text().split("# as KAITO runs it")[0]
KAITO = (SEEDS / "kaito-gemma-4-12b.yaml").read_text()
KSERVE = (SEEDS / "kserve-qwen2-7b.yaml").read_text()


def cli(*args: str, input: bytes | None = None):
    result = CliRunner().invoke(app, list(args), input=input)
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    return result


def line_of(data: bytes | str, needle: bytes | str) -> int:
    if isinstance(data, bytes):
        assert isinstance(needle, bytes)
        return data[: data.index(needle)].count(b"\n") + 1
    assert isinstance(needle, str)
    return data[: data.index(needle)].count("\n") + 1


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


# id -> (file content, text on the reported line (or its line number), message fragment)
BAD_FILES: dict[str, tuple[bytes, bytes | int, str]] = {
    "binary": (b"name: demo\n\xff\xd8\xff\xe0\x00\x10JFIF", 2, "not UTF-8 text: byte 0xff"),
    "utf-16": (NATIVE.encode("utf-16"), 1, "the file is UTF-16 text; kvgen reads UTF-8"),
    "latin-1": (
        replace_once(NATIVE, "namespace: default", "namespace: d\xe9faut").encode("latin-1"),
        b"namespace:",
        "not UTF-8 text: byte 0xe9",
    ),
    "nul-byte": (replace_once(NATIVE, "instance:", "inst\0ance:").encode(), b"inst\0ance", "a NUL byte"),
    "control-character": (replace_once(NATIVE, "id: google", "id: \x07google").encode(), b"\x07", "U+0007"),
    "5000-digit-integer": ((NATIVE + "replicas: " + "9" * 5000 + "\n").encode(), b"replicas:", "out of range"),
    "integer-beyond-int64": ((NATIVE + "replicas: 9223372036854775808\n").encode(), b"replicas:", "out of range"),
    "nesting-400-deep": (
        (NATIVE + "scheduling:\n  affinity: " + "[" * 400 + "]" * 400 + "\n").encode(),
        b"affinity:",
        "nested more than 100 levels",
    ),
    "block-nesting-400-deep": (
        (NATIVE + "".join(" " * i + "a:\n" for i in range(400))).encode(),
        NATIVE.count("\n") + 100,  # the 101st level, below the example's lines
        "nested more than 100 levels",
    ),
    "lone-surrogate-escape": (
        (NATIVE + 'vllm:\n  extraArgs: ["--x=\\ud800"]\n').encode(),
        b"extraArgs",
        "lone UTF-16 surrogate",
    ),
    "binary-tag": ((NATIVE + "vllm:\n  extraArgs: !!binary aGVsbG8=\n").encode(), b"extraArgs", "!!binary"),
    "configmap-metadata-string": (
        replace_once(
            KAITO, "metadata:\n  name: inference-params\n  namespace: default\n", "metadata: inference-params\n"
        ).encode(),
        b"metadata: inference-params",
        "metadata: must be a mapping, not a string",
    ),
    "configmap-data-list": (
        replace_once(
            KAITO, "data:\n  inference_config.yaml: |\n    kv_cache_cpu_memory_utilization: 0.25\n", "data: [a]\n"
        ).encode(),
        b"data: [a]",
        "data: must be a mapping, not a list",
    ),
    "kserve-annotations-string": (
        replace_once(
            KSERVE,
            "  name: qwen2-7b-kv-cache-offloading\n",
            "  name: qwen2-7b-kv-cache-offloading\n  annotations: none\n",
        ).encode(),
        b"annotations: none",
        "metadata.annotations: must be a mapping, not a string",
    ),
    "kserve-containers-mapping": (
        replace_once(
            KSERVE, "    containers:\n      - name: main\n", "    containers:\n      main:\n        name: main\n"
        ).encode(),
        b"containers:",
        "spec.template.containers: must be a list",
    ),
    "kserve-env-name-list": (
        replace_once(KSERVE, "      - name: main\n", "      - name: main\n        env: [{name: [X]}]\n").encode(),
        b"env: [{name",
        "env[0].name: must be a string, not a list",
    ),
    "kaito-instance-type-list": (
        replace_once(KAITO, "instanceType: Standard_NC24ads_A100_v4", "instanceType: [a, b]").encode(),
        b"instanceType",
        "instanceType: must be a string, not a list",
    ),
    "kaito-preset-name-mapping": (
        replace_once(KAITO, "name: google/gemma-4-12B-it", "name: {id: x}").encode(),
        b"name: {id: x}",
        "preset.name: must be a string, not a mapping",
    ),
    "kaito-max-model-len-400-digits": (
        replace_once(
            KAITO,
            "    kv_cache_cpu_memory_utilization: 0.25\n",
            f"    kv_cache_cpu_memory_utilization: 0.25\n    vllm:\n      max-model-len: '{'9' * 400}'\n",
        ).encode(),
        b"max-model-len",
        "less than or equal to 16777216",  # kvgen's bound on a length (files/apiserver.yaml maxCounts)
    ),
    "emptydir-size-beyond-int64": (
        (NATIVE + "  secondary:\n    - fileSystem: {emptyDir: {size: " + "9" * 400 + "Gi}}\n").encode(),
        b"emptyDir",
        "is beyond any size",
    ),
    "emptydir-size-exponent": (
        (NATIVE + "  secondary:\n    - fileSystem: {emptyDir: {size: 1e400Gi}}\n").encode(),
        b"emptyDir",
        "is not a size",
    ),
    "native-cpu-beyond-int64": (
        replace_once(NATIVE, "  cpuMemoryUtilization: 0.25", "  backend: native\n  cpu: " + "9" * 400 + "Gi").encode(),
        b"  cpu: 999",
        "is beyond any size",
    ),
    "pvc-resources-string": (
        (
            NATIVE + "  secondary:\n    - fileSystem:\n        pvc:\n          spec:\n"
            "            accessModes: [ReadWriteOnce]\n            resources: 100Gi\n"
        ).encode(),
        b"resources: 100Gi",
        "resources: ",
    ),
    "pvc-storage-1e999999999": (
        (
            NATIVE + "  secondary:\n    - fileSystem:\n        pvc:\n          spec:\n"
            "            accessModes: [ReadWriteOnce]\n"
            "            resources: {requests: {storage: '1e999999999'}}\n"
        ).encode(),
        b"resources: {requests",
        "'1e999999999' is not a size",
    ),
    "pvc-storage-100GB-lmcache": (
        (
            NATIVE + "  secondary:\n    - fileSystem:\n        pvc:\n          spec:\n"
            "            accessModes: [ReadWriteOnce]\n"
            "            resources: {requests: {storage: 100GB}}\n"
        ).encode(),
        b"resources: {requests",
        "'100GB' is not a size",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_file_is_a_problem_with_its_line_not_an_internal_error(case, tmp_path):
    data, where, fragment = BAD_FILES[case]
    f = tmp_path / f"{case}.yaml"
    f.write_bytes(data)
    result = cli("render", str(f))
    assert result.exit_code == 1, result.output
    line = where if isinstance(where, int) else line_of(data, where)
    reported = [ln.strip() for ln in result.stderr.splitlines() if ln.strip().startswith(f"{f}:")]
    assert any(ln.startswith(f"{f}:{line}:") and fragment in ln for ln in reported), result.stderr
    assert "nothing was written" in result.stderr


def test_a_bad_document_does_not_hide_the_problems_of_other_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"\xff\xfe")
    kaito = tmp_path / "kaito.yaml"
    kaito.write_text(replace_once(KAITO, "instanceType: Standard_NC24ads_A100_v4", "instanceType: [a]"))
    result = cli("validate", str(bad), str(kaito))
    assert result.exit_code == 1
    assert f"{bad}:1:1:" in result.stderr and f"{kaito}:" in result.stderr and "2 problems found" in result.stderr


def test_timestamps_stay_strings_as_helm_reads_them(tmp_path):
    f = tmp_path / "tag.yaml"
    f.write_text(NATIVE + "images:\n  vllm: {tag: 2026-01-01}\n")
    result = cli("render", str(f))
    assert result.exit_code == 0, result.output
    assert "image: ghcr.io/kvgen-dev/vllm-lmcache:2026-01-01" in result.stdout


def test_anchors_and_aliases_within_bounds_are_read(tmp_path):
    f = tmp_path / "anchors.yaml"
    f.write_text(
        NATIVE
        + textwrap.dedent("""\
        vllm:
          extraArgs: &args [--max-num-seqs=64]
          env:
            - &debug {name: VLLM_LOGGING_LEVEL, value: DEBUG}
        scheduling:
          nodeSelector: {pool: gpu}
        """)
    )
    result = cli("render", str(f))
    assert result.exit_code == 0, result.output
    assert "--max-num-seqs=64" in result.stdout and "VLLM_LOGGING_LEVEL" in result.stdout


# ----------------------------------------------------------------------------- what is not a file


def test_a_symlink_loop_is_reported_as_one(tmp_path):
    loop = tmp_path / "loop.yaml"
    loop.symlink_to(loop)
    result = cli("render", str(loop))
    assert result.exit_code == 2
    assert f"{loop}: a symbolic link loop" in result.stderr


def test_dev_zero_is_reported_as_a_device_and_not_read():
    result = cli("render", "/dev/zero")  # reading it would never end
    assert result.exit_code == 2
    assert "/dev/zero: a character device, not a file" in result.stderr


@pytest.mark.heavy
def test_a_fifo_is_reported_as_one_without_blocking(tmp_path):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    # opening a FIFO with no writer blocks forever: run it where a hang fails the test instead
    result = subprocess.run(
        [sys.executable, "-m", "kvgen", "render", str(fifo)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert result.returncode == 2
    assert f"{fifo}: a named pipe (FIFO), not a file" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "kvgen", "render", str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert result.returncode == 2, "a FIFO found in a directory is not skipped silently either"
    assert "a named pipe (FIFO)" in result.stderr


def test_a_missing_file_is_still_no_such_file(tmp_path):
    result = cli("render", str(tmp_path / "missing.yaml"))
    assert result.exit_code == 2
    assert "no such file or directory" in result.stderr


@pytest.mark.heavy
def test_ctrl_c_exits_130_without_a_traceback(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(NATIVE)
    # a real SIGINT, delivered while the command runs (when it reads its inputs)
    code = textwrap.dedent(f"""\
        import os, signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a shell; a background job inherits SIG_IGN
        from kvgen.app import cli
        real = cli._inputs
        def interrupted(*args):
            os.kill(os.getpid(), signal.SIGINT)
            return real(*args)
        cli._inputs = interrupted
        sys.argv = ["kvgen", "render", {str(spec)!r}]
        cli.main()
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr and "kvgen: interrupted" in result.stderr
    assert result.stdout == ""


def test_exit_code_130_is_documented():
    readme = (ROOT / "README.md").read_text()
    assert "| 130 |" in readme
    assert "130" in run_kvgen("--help").stdout


# ----------------------------------------------------------------------------- bounded cost

BOMB = textwrap.dedent("""\
    a: &a [x,x,x,x,x,x,x,x,x]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
    """)


def test_a_300_byte_alias_bomb_is_refused_while_parsing(tmp_path):
    assert len(BOMB) < 320
    f = tmp_path / "bomb.yaml"
    f.write_text(BOMB)
    result = cli("render", str(f))
    assert result.exit_code == 1
    assert f"{f}:5:" in result.stderr  # *d: 9^4 = 6,561 values so far, the 9 aliases of d pass 20,000
    assert "alias *d" in result.stderr and "more than 20,000 values" in result.stderr


def test_an_alias_bomb_inside_a_kserve_resource_is_refused(tmp_path):
    f = tmp_path / "kserve.yaml"
    long = "v" * 200_000
    f.write_text(
        replace_once(
            KSERVE,
            "  router:\n",
            f"  annotations: {{big: &big {long}}}\n  router:\n    x: [*big, *big, *big, *big, *big]\n",
        )
    )
    result = cli("render", str(f))
    assert result.exit_code == 1
    assert "alias *big" in result.stderr and "longer than 1 MiB" in result.stderr


def test_a_64_mib_value_is_refused_by_the_input_size_cap(tmp_path):
    f = tmp_path / "huge.yaml"
    with f.open("w") as out:
        out.write(NATIVE + "vllm:\n  extraArgs: ['")
        chunk = "x" * (1 << 20)
        for _ in range(64):
            out.write(chunk)
        out.write("']\n")
    result = cli("render", str(f))
    assert result.exit_code == 1
    assert f"{f}:1:1:" in result.stderr and "larger than 1 MiB" in result.stderr


def test_the_size_cap_applies_to_stdin():
    result = cli("render", "-", input=b"a: '" + b"x" * (2 << 20) + b"'\n")
    assert result.exit_code == 1
    assert "<stdin>:1:1:" in result.stderr and "larger than 1 MiB" in result.stderr


@pytest.mark.heavy
def test_an_input_just_under_the_cap_is_read(tmp_path):
    f = tmp_path / "long.yaml"
    head = NATIVE + "vllm:\n  env:\n    - name: NOTE\n      value: '"
    f.write_text(head + "x" * (source.MAX_INPUT_BYTES - len(head.encode()) - 2) + "'\n")
    assert f.stat().st_size == source.MAX_INPUT_BYTES
    result = cli("render", str(f))
    assert result.exit_code == 0, result.stderr


@pytest.mark.heavy
def test_too_many_values_are_refused(tmp_path):
    f = tmp_path / "wide.yaml"
    f.write_text(NATIVE + "vllm:\n  extraArgs: [" + ",".join(["a"] * 30_000) + "]\n")
    result = cli("render", str(f))
    assert result.exit_code == 1
    assert "more than 20,000 values" in result.stderr


def test_deep_flow_nesting_is_refused_as_it_is_scanned(tmp_path):
    # the scanner's simple-key search is quadratic in flow depth: 400,000 brackets would take hours
    f = tmp_path / "deep.yaml"
    f.write_text("a: " + "[" * 400_000 + "]" * 400_000 + "\n")
    result = cli("render", str(f))
    assert result.exit_code == 1
    assert f"{f}:1:" in result.stderr and "nested more than 100 levels" in result.stderr


@pytest.mark.heavy
def test_an_object_the_api_server_would_refuse_for_its_size_is_refused(tmp_path):
    # 850,000 quotes: an 850 KB input, 1.6 MiB of JSON once escaped
    f = tmp_path / "big.yaml"
    f.write_text(NATIVE + "vllm:\n  env:\n    - name: QUOTES\n      value: '" + '"' * 850_000 + "'\n")
    result = cli("render", str(f))
    assert result.exit_code == 1
    assert "the rendered Deployment/gemma-4-12b would be 1.6 MiB" in result.stderr
    assert f"refuses objects over {render.MAX_OBJECT_BYTES / 1024 / 1024:g} MiB" in result.stderr


def test_characters_a_yaml_stream_must_not_hold_are_rendered_escaped(tmp_path):
    # DEL and C1 controls are fine in a value (written escaped), but not raw in a YAML stream
    f = tmp_path / "odd.yaml"
    f.write_text(NATIVE + 'vllm:\n  env:\n    - {name: ODD, value: "a\\x7fb\\x85c\\ufeffd"}\n')
    result = cli("render", str(f))
    assert result.exit_code == 0, result.output
    loaded = [d for d in YAML(typ="safe", pure=True).load_all(result.stdout) if d]
    deployment = next(d for d in loaded if d["kind"] == "Deployment")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "ODD", "value": "a\x7fb\x85c\ufeffd"} in env


@pytest.mark.heavy
@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(st.text(st.characters(exclude_categories=["Cs"])))
def test_any_string_survives_the_templates_and_the_yaml_output(value):
    # the templates emit values as JSON for YAML to read back, and the output is YAML again:
    # a value with control characters, NEL or CR once came out as a block YAML cannot read
    loader = YAML(typ="safe", pure=True)
    assert loader.load(render._json({"v": value})) == {"v": value}
    objs = [{"kind": "ConfigMap", "data": {"k": value, "multi": f"{value}\n{value}\n"}}]
    assert [d for d in loader.load_all(render.to_yaml(objs)) if d] == objs


@pytest.mark.parametrize(
    "value", ["1e999999999", "-1e999999999", "1E+400", "9" * 1_000_000, float("inf"), float("nan")]
)
def test_an_absurd_quantity_is_refused_before_it_is_rounded(value):
    # rounding 1e999999999 up to whole bytes would build an integer of a billion digits, and a
    # million-digit size (it fits the 1 MiB input cap) took 30 s to convert
    with pytest.raises(quantity.QuantityError):
        quantity.to_bytes(value)
    assert (
        quantity.to_bytes("8Ei") == 2**63 and quantity.to_bytes("1e-999999999") == 1
    )  # kvgen.plan.apiserver bounds these


@pytest.mark.parametrize("text", ["-_", "+_", "0x_", "0b_", "-0x_"])
def test_a_plain_scalar_ruamel_takes_for_an_integer_without_digits_is_a_string(text):
    # ruamel's int pattern takes '-_' (digits may be underscores), then its constructor indexes an
    # empty string: exit 4 "internal error: IndexError" (found by hypothesis). Helm reads a string.
    (doc,) = source.load_documents(f"name: demo\nmodel:\n  id: {text}\n", "spec.yaml")
    assert doc.data["model"]["id"] == text
    result = cli("validate", "-", input=f"name: demo\nmodel:\n  id: {text}\n".encode())
    assert result.exit_code == 1 and "internal error" not in result.output
