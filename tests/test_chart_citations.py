"""The chart's templates cite the Python twin of what they compute as `kvgen/<module>.py <name>`
(e.g. `kvgen/plan/images.py warnings`): each cited module exists and defines the name, so a
function moved or renamed on the Python side cannot leave a stale pointer in the chart."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "charts" / "kvgen" / "templates"
CITATION = re.compile(r"\b(kvgen/[a-z_/]+\.py) ([A-Za-z_][A-Za-z0-9_]*\*?)")


def citations() -> list[tuple[str, str, str]]:
    """(template:line, module path, name) for every citation in the templates."""
    out = []
    for tpl in sorted(TEMPLATES.rglob("*")):
        if tpl.suffix not in (".tpl", ".yaml", ".txt"):
            continue
        for number, line in enumerate(tpl.read_text(encoding="utf-8").splitlines(), 1):
            for module, name in CITATION.findall(line):
                out.append((f"{tpl.relative_to(TEMPLATES)}:{number}", module, name))
    return out


@cache
def defined(module: str) -> frozenset[str]:
    """Every function, class, top-level name and class field a module defines."""
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def test_the_templates_cite_python():
    assert len(citations()) > 20  # the pattern finds them (see the module docstring)


@pytest.mark.parametrize("where,module,name", citations(), ids=[f"{w} {m} {n}" for w, m, n in citations()])
def test_each_cited_python_name_exists(where, module, name):
    assert (ROOT / module).is_file(), f"{where} cites {module}, which does not exist"
    names = defined(module)
    found = any(n.startswith(name[:-1]) for n in names) if name.endswith("*") else name in names
    assert found, f"{where} cites {module} {name}, which {module} does not define"
