"""Hostile input reaching kvgen's outputs other than Kubernetes objects (issue 33).

- ``render -o DIR``: every kustomization.yaml is written by a serializer. A --kustomize-resource
  value, or a spec directory's name, that YAML reads otherwise (``*`` an alias, ``a: b`` a mapping,
  ``on`` a boolean to YAML 1.1, ``{x}`` a flow mapping, a quote, a line break) is quoted, so that
  a YAML 1.1 reader (PyYAML, as kustomize's go-yaml v2) reads back exactly the value given; what no
  kustomization can name (a control character on the command line, a name that is not UTF-8) is
  refused with exit 2 and nothing written. Ordinary names stay plain, byte for byte as before.
- ``explain``: user text (a model id named in a catalog, an input's file name) reaches the text view
  with its control characters escaped and its brackets as text, never as rich markup; the SVG
  is XML whatever the input holds.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

import pytest
import yaml
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from kvgen.app import explain
from kvgen.output import tree

EXAMPLES = ROOT / "examples"
GEMMA = EXAMPLES / "kaito-gemma-4-12b.yaml"
KAITO_SEED = EXAMPLES / "seeds" / "kaito-workspace-gemma-4-12b.yaml"
# what no text output may hold raw: C0 controls but tab and newline, DEL, C1 controls, lone surrogates
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def kvgen(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The CLI in a subprocess, its output as bytes decoded losslessly (a raw byte that is not
    UTF-8 comes back as a lone surrogate, which RAW_CONTROL finds)."""
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
        "KVGEN_REPLAY": "off",  # what is tested is the run itself, never a replay of it
        **(env or {}),
    }
    result = subprocess.run([sys.executable, "-m", "kvgen", *args], capture_output=True, cwd=cwd, env=env)
    return subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode("utf-8", "surrogateescape"),
        result.stderr.decode("utf-8", "surrogateescape"),
    )


def yaml11(text: str):
    """As a YAML 1.1 reader (kustomize's go-yaml v2, kubectl, PyYAML) reads it."""
    return yaml.safe_load(text)


def yaml12(text: str):
    return YAML(typ="safe", pure=True).load(text)


def files_below(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def specs(tmp_path):
    root = tmp_path / "specs"
    root.mkdir()
    shutil.copy(GEMMA, root / "gemma.yaml")
    return root


# ----------------------------------------------------------------------------- kustomization.yaml

# (--kustomize-resource value, what it is to a YAML reader when written plain)
RESOURCES = {
    "alias": "*",
    "mapping": "a: b",
    "yaml11-boolean": "on",
    "flow-mapping": "{x}",
    "single-quote": "it's 'mine'.yaml",
    "double-quote": '"quoted".yaml',
    "newline": "a\nb.yaml",
    "carriage-return": "extras.yaml\r",
    "escape": "a\x1b[31m.yaml",
    "comment": "a #b.yaml",
    "octal-to-yaml11": "010",
    "flow-sequence": "[x]",
    "anchor": "&a",
    "tag": "!x",
    "dash": "- x",
    "leading-space": " x.yaml",
    "backslash": "a\\b.yaml",
    "unicode": "ü ñ 😀.yaml",
}


@pytest.mark.heavy
@pytest.mark.parametrize("value", RESOURCES.values(), ids=RESOURCES.keys())
def test_a_kustomize_resource_round_trips_or_is_refused(specs, tmp_path, value):
    """Each value either reads back exactly from the written kustomization.yaml (YAML 1.1 and 1.2
    readers alike), or is refused as a usage error (exit 2) with nothing written."""
    root = tmp_path / "rendered"
    result = kvgen("render", str(specs), "-o", str(root), "--kustomize-resource", value)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    if result.returncode == 2:
        assert "error: --kustomize-resource " in result.stderr, result.stderr
        assert not root.exists(), "a refused render wrote something"
        return
    assert result.returncode == 0, result.stderr
    text = (root / "kustomization.yaml").read_text(encoding="utf-8")
    for load in (yaml11, yaml12):
        assert load(text) == {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": ["gemma-4-12b.yaml", value],
        }
    # kvgen knows the file as its own: the tree is up to date, and a render replaces nothing
    before = files_below(root)
    check = kvgen("render", str(specs), "-o", str(root), "--check", "--kustomize-resource", value)
    assert check.returncode == 0, check.stdout + check.stderr
    again = kvgen("render", str(specs), "-o", str(root), "--kustomize-resource", value)
    assert again.returncode == 0, again.stderr
    assert files_below(root) == before


@pytest.mark.heavy
@pytest.mark.parametrize(
    "value",
    ["a\nb.yaml", "extras.yaml\r", "a\x1b[31m.yaml", "x\x7f", "x\x85", "\udcff.yaml"],
    ids=["newline", "carriage-return", "escape", "del", "c1", "not-utf-8"],
)
def test_a_kustomize_resource_no_kustomization_should_name_is_refused(specs, tmp_path, value):
    """A control character in a path given on the command line is a quoting accident (a CR from a
    CRLF script); a name that is not UTF-8 cannot be written in a UTF-8 file: exit 2, said clearly,
    its character escaped in the message, nothing written."""
    root = tmp_path / "rendered"
    result = kvgen("render", str(specs), "-o", str(root), "--kustomize-resource", value)
    assert result.returncode == 2, result.stderr
    assert "error: --kustomize-resource '" in result.stderr
    assert "holds a control character" in result.stderr or "is not UTF-8 text" in result.stderr
    assert not RAW_CONTROL.search(result.stderr.replace("\udcff", "")), repr(result.stderr)  # escaped
    assert not root.exists()


@pytest.mark.heavy
def test_a_kustomize_resource_url_is_refused_as_a_url(specs, tmp_path):
    root = tmp_path / "rendered"
    result = kvgen(
        "render", str(specs), "-o", str(root), "--kustomize-resource", "https://github.com/org/repo//base?ref=v1"
    )
    assert result.returncode == 2
    assert "is a URL, and kvgen lists only files of yours inside the output directory" in result.stderr
    assert not root.exists()


@pytest.mark.heavy
def test_spec_directories_yaml_reads_otherwise_round_trip_and_are_pruned(specs, tmp_path):
    """A spec directory's name is a resource of the kustomization above it: quoted alike, read back
    exactly, kvgen's own on the next render, and pruned when its specs are gone."""
    names = ["on", "a: b", "*", "{x}", "it's", "new\nline"]
    for n in names:
        (specs / n).mkdir()
        shutil.copy(EXAMPLES / "lmcache-tp2.yaml", specs / n / "tp2.yaml")
    root = tmp_path / "rendered"
    result = kvgen("render", str(specs), "-o", str(root))
    assert result.returncode == 0, result.stderr
    top = (root / "kustomization.yaml").read_text(encoding="utf-8")
    assert yaml11(top)["resources"] == yaml12(top)["resources"] == ["gemma-4-12b.yaml", *sorted(names)]
    for n in names:
        assert yaml11((root / n / "kustomization.yaml").read_text())["resources"] == ["qwen3-32b-tp2.yaml"]
    assert kvgen("render", str(specs), "-o", str(root), "--check").returncode == 0
    for n in names:
        shutil.rmtree(specs / n)
    result = kvgen("render", str(specs), "-o", str(root))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in root.iterdir()) == [".kvgen-manifest.json", "gemma-4-12b.yaml", "kustomization.yaml"]


@pytest.mark.heavy
def test_a_spec_directory_whose_name_is_not_utf8_is_refused(specs, tmp_path):
    bad = os.fsdecode(b"caf\xe9")  # Latin-1 bytes: no UTF-8 kustomization.yaml can name this directory
    (specs / bad).mkdir()
    shutil.copy(EXAMPLES / "lmcache-tp2.yaml", specs / bad / "tp2.yaml")
    root = tmp_path / "rendered"
    result = kvgen("render", str(specs), "-o", str(root))
    assert result.returncode == 2, result.stderr
    assert "is not UTF-8 text" in result.stderr and "rename the directory" in result.stderr
    assert not root.exists()


def test_ordinary_names_are_written_as_before():
    """The bytes of an ordinary tree do not change (examples/argocd/rendered is compared byte for byte)."""
    assert tree.kustomization(["a.yaml", "qwen3-32b-tp2.yaml", "prod", "eu-west/ns.yaml", "extras"]) == (
        "# Generated by kvgen render: the rendered specs of this directory, for kustomize, Argo CD and Flux. "
        "Do not edit;\n"
        "# re-run kvgen render (kvgen render --check tells when this is stale).\n"
        "apiVersion: kustomize.config.k8s.io/v1beta1\n"
        "kind: Kustomization\n"
        "resources:\n"
        "  - a.yaml\n"
        "  - qwen3-32b-tp2.yaml\n"
        "  - prod\n"
        "  - eu-west/ns.yaml\n"
        "  - extras\n"
    )


# any text but lone surrogates (kvgen refuses names that are not UTF-8 before writing them)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)


@pytest.mark.heavy
@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, max_size=4))
def test_every_resource_list_round_trips_one_line_each(resources):
    text = tree.kustomization(resources)
    assert text.count("\n") == 5 + len(resources)  # kvgen's head, then one line per resource
    assert yaml11(text)["resources"] == yaml12(text)["resources"] == (resources or None)
    # and kvgen reads back what it wrote, line by line (no YAML parser on a file of OUT)
    assert tree.resources_of(text.encode()) == resources
    assert tree.written_by_kvgen(PurePosixPath("kustomization.yaml"), text.encode())


def test_a_kustomization_of_an_earlier_kvgen_is_still_its_own():
    """Earlier versions wrote every name plain: such a file is still kvgen's form (so a render
    replaces it), and lists the names as written."""
    earlier = tree.kustomization([]) + "  - on\n  - a: b\n"
    assert tree.resources_of(earlier.encode()) == ["on", "a: b"]
    assert tree.written_by_kvgen(PurePosixPath("kustomization.yaml"), earlier.encode())
    assert not tree.written_by_kvgen(PurePosixPath("kustomization.yaml"), (earlier + "namespace: x\n").encode())


# ----------------------------------------------------------------------------- explain

# ... and the Unicode bidirectional controls, which reorder what a terminal shows ("Trojan Source")
HOSTILE = "m\x1b]0;owned\x07\x1b[2J\x00\x08\r\x7f\x85\x9b\ufffe[bold]b[/][/x][red\u202e\u2066\u200f\u061c"
SHOWN = "m\\x1b]0;owned\\x07\\x1b[2J\\x00\\x08\\x0d\\x7f\\x85\\x9b\\ufffe[bold]b[/][/x][red\\u202e\\u2066\\u200f\\u061c"  # as the view shows it


# A model id served from a claim is a name, not a Hugging Face repo id: anything but whitespace and
# control characters (kvgen.data.catalog.check_model_id); here rich markup, and U+FFFE, which XML forbids
MODEL_ID = "acme/m[bold]b[/][/x][red\ufffe"


def inline_model_spec(model_id: str) -> str:
    """A spec whose model (and node) are rows of its own catalog, its weights on a claim."""
    import json

    return json.dumps(
        {
            "name": "demo",
            "model": {"id": model_id, "uri": "pvc://weights/m"},
            "instance": {"type": "node-a"},
            "catalog": {
                "models": {
                    model_id: {
                        "architecture": "LlamaForCausalLM",
                        "layers": 32,
                        "kvHeads": 8,
                        "headDim": 128,
                        "weights": "15Gi",
                        "maxModelLen": 131072,
                    }
                },
                "instances": {
                    "node-a": {
                        "gpus": 1,
                        "gpuModel": "NVIDIA A100-SXM4-80GB",
                        "gpuMemory": "80Gi",
                        "memory": "256Gi",
                        "cpu": 32,
                        "arch": "amd64",
                        "ephemeralStorage": "500Gi",
                        "nodeSelector": {"pool": "a"},
                    }
                },
            },
        }
    )


def assert_valid_svg(path: Path) -> None:
    root = ET.fromstring(path.read_text(encoding="utf-8"))
    assert root.tag.endswith("svg")


@pytest.mark.heavy
def test_explain_shows_a_model_id_with_markup_as_text_and_writes_a_valid_svg(tmp_path):
    """A model id holding "[/x]" stopped explain with rich's MarkupError (an internal error), one
    holding "[bold]" lost it into bold, and U+FFFE made the SVG invalid XML."""
    spec = tmp_path / "spec.json"
    spec.write_text(inline_model_spec(MODEL_ID), encoding="utf-8")
    svg = tmp_path / "plan.svg"
    result = kvgen("explain", str(spec), "--svg", str(svg))
    assert result.returncode == 0, result.stderr
    assert not RAW_CONTROL.search(result.stdout) and "\ufffe" not in result.stdout
    assert "demo: acme/m[bold]b[/][/x][red\\ufffe on node-a: KV-cache offloading" in result.stdout
    assert_valid_svg(svg)


@pytest.mark.heavy
def test_explain_shows_a_hostile_file_name_escaped_and_writes_a_valid_svg(tmp_path):
    """A KAITO input's file name is shown ("from kaito.sh/v1beta1 Workspace in FILE"): one with an
    escape sequence, and one that is not UTF-8 (a lone surrogate to Python, which also broke the SVG)."""
    name = os.fsdecode(b"w\x1b[31m\xff.yaml")
    shutil.copy(KAITO_SEED, tmp_path / name)
    svg = tmp_path / "plan.svg"
    result = kvgen("explain", name, "--svg", str(svg), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not RAW_CONTROL.search(result.stdout), repr(RAW_CONTROL.findall(result.stdout))
    assert "from kaito.sh/v1beta1 Workspace in w\\x1b[31m\\udcff.yaml" in result.stdout
    assert_valid_svg(svg)


# the report's enumerations that the view switches on (which row, which label): kept as they are
SWITCHES = frozenset({"tier", "offloading", "container", "item", "where", "downloadedBy", "format", "step"})


def hostile_everywhere(node):
    """Every string of a report with HOSTILE appended (but SWITCHES): what the view prints of any field."""
    if isinstance(node, str):
        return node + HOSTILE
    if isinstance(node, dict):
        return {k: v if k in SWITCHES else hostile_everywhere(v) for k, v in node.items()}
    if isinstance(node, list):
        return [hostile_everywhere(v) for v in node]
    return node


def gemma_report() -> dict:
    from conftest import kube_version_of

    from kvgen.app.compiler import compile_inputs

    (c,) = compile_inputs([(str(GEMMA), GEMMA.read_text())], kube_version_of(GEMMA)).compiled
    return explain.report(c.plan, c.conversion, c.source)


def test_no_field_of_a_report_reaches_the_view_raw(tmp_path):
    """Whatever field holds it, user text is printed visible and literal: no raw control character,
    no markup taking effect, no MarkupError; in a terminal too, and the SVG is XML."""
    from rich.console import Console

    report = hostile_everywhere(gemma_report())
    report["input"]["file"] = "in\\"  # a trailing backslash must not escape the markup after it
    plain = io.StringIO()
    explain.render([report], explain.text_console(plain))
    text = plain.getvalue()
    assert not RAW_CONTROL.search(text), repr(RAW_CONTROL.findall(text))
    assert text.count(SHOWN) >= 20  # every line with a field of the report shows it, escaped and literal
    terminal = io.StringIO()
    explain.render([report], Console(file=terminal, force_terminal=True, color_system="truecolor", width=120))
    sequences = re.sub(r"\x1b\[[0-9;]*m", "", terminal.getvalue())  # rich's own colours, and nothing else
    assert not RAW_CONTROL.search(sequences), repr(RAW_CONTROL.findall(sequences))
    svg = tmp_path / "plan.svg"
    explain.save_svg([report], str(svg))
    assert_valid_svg(svg)


@pytest.mark.parametrize(
    "text",
    ["[bold]x[/]", "[/x]", "x[red", "a\\", "a\\\\\\", "\\[bold]", "[b", "[link=http://x]y[/link]", "plain"],
)
def test_user_text_prints_as_itself_between_the_views_markup(text):
    from rich.console import Console

    for template in ("[bold]{}[/] and {}", "{}{} tail]", "{} [green]ok[/]: {}"):
        out = io.StringIO()
        shown = explain.markup_text(text)
        Console(file=out, width=200, highlight=False).print(template.format(shown, shown))
        expected = template.replace("[bold]", "").replace("[/]", "").replace("[green]", "").format(text, text)
        assert out.getvalue() == expected + "\n", (template, text)


# ----------------------------------------------------------------------------- the record of a run


@pytest.mark.heavy
def test_a_run_whose_messages_hold_a_name_that_is_not_utf8_is_not_recorded_and_does_not_fail(tmp_path):
    """kvgen records a finished run for replay (kvgen.output.replay); a message quoting a file name
    that is not UTF-8 holds a lone surrogate, which the record (UTF-8) cannot hold: the run is not
    recorded, and still ends as it would (exit 1 and its problems), with no traceback."""
    name = os.fsdecode(b"spec-\xff.yaml")
    (tmp_path / name).write_text("name: x\nmodel: {id: Qwen/Qwen3-32B}\n")
    cache = tmp_path / "cache"
    for _ in range(2):
        result = kvgen("validate", name, cwd=tmp_path, env={"KVGEN_REPLAY": "", "KVGEN_CACHE_DIR": str(cache)})
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr and "spec-\\udcff.yaml:1:1: instance: required key is missing" in (
            result.stderr
        )
