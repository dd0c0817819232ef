"""The documents by reader (README.md for users, docs/*.md for operators, ARCHITECTURE.md for
contributors) hold together: every relative Markdown link points at a file that exists, and at a
heading of it when it names one (GitHub's anchor rule); every docs/*.md is linked from README.md or
ARCHITECTURE.md; and the README's first screen keeps its two commands for a fresh machine."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
PROJECT = [ROOT / n for n in ("CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md")]  # the repository basics
DOCUMENTS = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *PROJECT, *DOCS]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
# [text](target) or [text](target "title"); images too (the leading ! is not needed to match)
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans, where a bracket is not a link."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    return LINK.findall(prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (code spans and emphasis as their text, a link as
    its label) lower-cased, every character but letters, digits, spaces, hyphens and underscores
    removed, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for m in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(m[2])
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(path: Path) -> list[str]:
    """The relative links of ``path`` that do not resolve, as 'target: why'."""
    bad = []
    for target in links(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not dest.exists():
            bad.append(f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
        elif anchor and dest.suffix == ".md" and unquote(anchor) not in anchors(dest):
            bad.append(f"{target}: no heading with the anchor #{anchor} in {dest.relative_to(ROOT)}")
    return bad


def test_there_are_documents_for_each_reader() -> None:
    assert (ROOT / "README.md").is_file() and (ROOT / "ARCHITECTURE.md").is_file()
    names = {p.name for p in DOCS}
    assert {"sizing.md", "gpu-access.md", "multi-node.md", "security.md", "compatibility.md"} <= names


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_every_operator_document_is_linked_from_the_readme_or_architecture() -> None:
    linked = set()
    for path in (ROOT / "README.md", ROOT / "ARCHITECTURE.md"):
        for target in links(path.read_text(encoding="utf-8")):
            file_part = target.partition("#")[0]
            if file_part:
                linked.add((path.parent / unquote(file_part)).resolve())
    assert [p.name for p in DOCS if p.resolve() not in linked] == []


def test_the_readme_first_screen_gives_the_two_commands_for_a_fresh_machine() -> None:
    """The first code block of the README: one command that installs and renders an example, one
    that installs what the tests need and runs them (what CI runs: .ci/run calls scripts/test)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = FENCE.search(readme)
    assert first and readme[: first.start()].count("\n") < 10, "the commands must be on the first screen"
    commands = [line for line in first[0].splitlines()[1:-1] if line.strip() and not line.startswith("#")]
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/kvgen render examples/kaito-gemma-4-12b.yaml",
        "scripts/test",
    ]
    assert (ROOT / "examples" / "kaito-gemma-4-12b.yaml").is_file()
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.heavy
def test_the_readme_first_screen_shows_a_spec_then_explain_then_render_as_they_are() -> None:
    """Issue 36: what kvgen is, a spec, explain, render, in that order; the spec is the example it names and each
    line of the explain excerpt is a line kvgen explain prints for it (at 100 columns)."""
    import os
    import subprocess
    import sys

    from ruamel.yaml import YAML

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    order = [readme.index(mark) for mark in ("**A spec**", "**`kvgen explain`**", "**`kvgen render`**", "## Install")]
    assert order == sorted(order)
    block = re.search(r"```yaml\n(.*?)```", readme[order[0] :], re.S)
    assert block
    spec = YAML(typ="safe").load(block[1])
    example = YAML(typ="safe").load((ROOT / "examples" / "lmcache-tp2.yaml").read_text(encoding="utf-8"))
    assert spec == example
    excerpt = re.search(r"```console\n\$ (kvgen explain \S+)\n(.*?)```", readme, re.S)
    assert excerpt and excerpt[1] == "kvgen explain examples/lmcache-tp2.yaml"
    run = subprocess.run(
        [sys.executable, "-m", "kvgen", "explain", "examples/lmcache-tp2.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100", "KVGEN_REPLAY": "off"},
        check=True,
    )
    printed = " ".join(run.stdout.split())  # the words as printed, whichever line a long one wrapped at
    assert [line for line in excerpt[2].splitlines() if " ".join(line.split()) not in printed] == []
    render = subprocess.run(
        [sys.executable, "-m", "kvgen", "render", "examples/lmcache-tp2.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "KVGEN_REPLAY": "off"},
        check=True,
    )
    decision, warning = render.stderr.splitlines()
    assert f"`{decision}`" in readme[order[2] :]
    said = re.search(r"`(warning: [^`]*?) \.\.\.`", readme[order[2] :])
    assert said and " ".join(said[1].split()) in warning


# ----------------------------------------------------------------------------- the checker itself


def test_the_slug_follows_githubs_rule() -> None:
    assert slug("`vllm.extraArgs`: checked against vLLM's own flags") == "vllmextraargs-checked-against-vllms-own-flags"
    assert (
        slug("Multi-node servers: StatefulSets or a LeaderWorkerSet")
        == "multi-node-servers-statefulsets-or-a-leaderworkerset"
    )
    assert slug("Pod Security Standards: `baseline`") == "pod-security-standards-baseline"
    assert slug("What a scanner still reports, and why") == "what-a-scanner-still-reports-and-why"


def test_a_broken_link_or_anchor_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("test_docs.ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\n## The part\n\n## The part\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#the-part) [ok](docs/a.md#the-part-1) [ok](#b) [web](https://x.invalid/y)\n"
        "`[not a link](nowhere.md)`\n\n```\n[not a link](nowhere.md)\n```\n\n## B\n\n"
        "[gone](docs/gone.md) [bad anchor](docs/a.md#no-such-part) [bad local](#nope)\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "docs/gone.md: no file docs/gone.md",
        "docs/a.md#no-such-part: no heading with the anchor #no-such-part in docs/a.md",
        "#nope: no heading with the anchor #nope in README.md",
    ]
