"""The house rules of kvgen's layout (ARCHITECTURE.md), checked on the source tree:
- every import of a kvgen module points down the layers or stays in its own package (lazy imports
  inside functions and type-only imports included: a cycle hidden behind TYPE_CHECKING is still one);
- the twin rule: every module of kvgen/plan/ is named by a chart template of templates/plan/, and every
  such template names one of them (the context is written once, in the chart, and translated);
- the generators (tools/) are outside the package and nothing in kvgen/ imports them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kvgen"
TEMPLATES = ROOT / "charts" / "kvgen" / "templates"
LAYERS = ["core", "data", "spec", "input", "plan", "context", "render", "output", "traffic", "app"]  # bottom to top
TWINNED = ("plan",)  # the context is written once, in the chart (kvgen/context/layout.py is its translation)


def modules() -> dict[str, Path]:
    """'kvgen.plan.sizing' -> its file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every kvgen or tools import in a file, wherever it is written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in found if name.split(".")[0] in ("kvgen", "tools")]


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def upward_imports() -> list[str]:
    known = modules()
    bad = []
    for name, path in known.items():
        own = layer(name)
        for line, target in imports(path):
            if target.startswith("tools"):
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {target}: tools/ is not in the wheel")
                continue
            if target not in known:
                continue  # the `from X import name` half of a name, not a module
            theirs = layer(target)
            if own is None or theirs is None or target.split(".")[1] == name.split(".")[1]:
                continue  # kvgen/__init__, __main__, or within one package
            if theirs > own:
                bad.append(
                    f"{path.relative_to(ROOT)}:{line}: {name} ({LAYERS[own]}) imports {target} ({LAYERS[theirs]})"
                )
    return bad


def test_every_package_is_a_known_layer():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYERS)
    loose = {p.name for p in PACKAGE.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert not loose, f"modules outside the layers: {sorted(loose)}"


@pytest.mark.heavy
def test_every_import_points_down_the_layers():
    assert upward_imports() == []


def test_an_upward_import_is_found(monkeypatch, tmp_path):
    # the check itself: a core module importing the plan is reported, even lazily inside a function
    fake = tmp_path / "kvgen" / "core" / "oops.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from kvgen.plan import sizing\n    return sizing\n")
    (tmp_path / "kvgen" / "plan").mkdir()
    (tmp_path / "kvgen" / "plan" / "sizing.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "kvgen")
    assert upward_imports() == ["kvgen/core/oops.py:2: kvgen.core.oops (core) imports kvgen.plan.sizing (plan)"]


def _cited(text: str) -> set[str]:
    return set(re.findall(r"kvgen/[a-z_/]+\.py", text))


@pytest.mark.parametrize("package", TWINNED)
def test_every_module_with_a_twin_is_named_by_its_twin(package):
    twins = {p: _cited(p.read_text(encoding="utf-8")) for p in (TEMPLATES / package).glob("*.tpl")}
    assert twins, f"no templates in charts/kvgen/templates/{package}/"
    cited = set().union(
        *(_cited(p.read_text(encoding="utf-8")) for d in ("plan", "context") for p in (TEMPLATES / d).glob("*.tpl"))
    )
    missing = [
        str(p.relative_to(ROOT))
        for p in sorted((PACKAGE / package).glob("*.py"))
        if p.name != "__init__.py" and str(p.relative_to(ROOT)) not in cited
    ]
    assert not missing, f"modules of kvgen/{package}/ no chart template names (a twin or a move out of {package}/?)"
    for tpl, names in twins.items():
        assert any(n.startswith(("kvgen/plan/", "kvgen/context/")) for n in names), f"{tpl.name} names no Python twin"


def test_templates_outside_the_twin_folders_twin_no_planning_module():
    for tpl in TEMPLATES.glob("*.tpl"):  # _helpers, _suggest, _pod, _resources: helpers and object layout
        names = {n for n in _cited(tpl.read_text(encoding="utf-8")) if n.startswith(("kvgen/plan/", "kvgen/context/"))}
        assert not names, f"{tpl.name} twins {sorted(names)}: it belongs in templates/plan/ or templates/context/"


def test_every_cited_module_exists():
    # a twin that names a moved or renamed module is stale (templates, data files, docs)
    texts = [*TEMPLATES.rglob("*.tpl"), *(ROOT / "charts" / "kvgen" / "files").glob("*.yaml"), *PACKAGE.rglob("*.py")]
    stale = sorted(
        {
            f"{p.relative_to(ROOT)}: {n}"
            for p in texts
            for n in _cited(p.read_text(encoding="utf-8"))
            if not (ROOT / n).exists()
        }
    )
    assert not stale


def module_imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The kvgen modules a file imports, wherever the import is written: ``from pkg import mod`` is an import
    of pkg.mod (Python runs pkg's __init__ first, but pkg.mod need not import pkg for that)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known]
            found.update(subs or ([node.module] if node.module in known else []))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
    return found


def cycles() -> list[str]:
    """Every package's import cycles among its own modules (lazy imports inside functions included)."""
    from graphlib import CycleError, TopologicalSorter

    known = modules()
    out = []
    for package in LAYERS:
        prefix = f"kvgen.{package}"
        graph = {
            name: {t for t in module_imports(path, known) if t.startswith(prefix) and t not in (name, prefix)}
            for name, path in known.items()
            if name.startswith(prefix + ".")
        }
        try:
            list(TopologicalSorter(graph).static_order())
        except CycleError as err:
            out.append(" -> ".join(err.args[1]))
    return out


@pytest.mark.heavy
def test_no_package_has_an_import_cycle():
    """Issue 34: plan/ closed a six-file circle through a lazy import (sizing -> build.own_rows), data/ one
    (catalog -> formats -> catalog); a module's dependencies are below it, never a function-level way back."""
    assert cycles() == []


def test_an_import_cycle_is_found(monkeypatch, tmp_path):
    for name, text in {
        "kvgen/plan/a.py": "from kvgen.plan import b\n",
        "kvgen/plan/b.py": "def f():\n    from kvgen.plan.a import x\n",
        "kvgen/plan/__init__.py": "",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "kvgen")
    assert len(cycles()) == 1 and "kvgen.plan.a" in cycles()[0]


def test_kvgens_layout_is_the_charts_and_decides_nothing():
    """Issue 34: kvgen/context/ holds the contract's types, the translated layout (layout.py, generated from the
    chart's kvgen.layout), the Go/Sprig runtime it runs on and the inputs it is handed (run.py): no module of
    its own lays out or decides (kvgen/context/build.py is gone)."""
    found = sorted(p.name for p in (PACKAGE / "context").glob("*.py"))
    assert found == ["__init__.py", "gotmpl.py", "layout.py", "run.py", "types.py"]
    assert (PACKAGE / "context" / "layout.py").read_text().startswith('"""Generated by tools/gotemplate.py')


def test_no_chart_context_template_cites_a_python_module_outside_plan():
    """Issue 34: the layout's comments name the planning module a value comes from, or none: there is no
    Python layout to keep in step."""
    cited = sorted(
        f"{path.name}: {m}"
        for path in (ROOT / "charts" / "kvgen" / "templates" / "context").glob("*.tpl")
        for m in re.findall(r"kvgen/[\w/]+\.py", path.read_text(encoding="utf-8"))
        if not m.startswith("kvgen/plan/")
    )
    assert cited == []


def test_the_layout_reads_the_plan_and_calls_no_planning_module():
    """Issue 34: kvgen/context/ imports from kvgen/plan/ the plan's types only (kvgen.plan.types: the plan
    document's); every decision it lays out is in the plan document (kvgen.plan.document)."""
    known = modules()
    found = sorted(
        f"{path.relative_to(ROOT)} imports {target}"
        for name, path in known.items()
        if name.startswith("kvgen.context.")
        for target in module_imports(path, known)
        if target.startswith("kvgen.plan") and target != "kvgen.plan.types"
    )
    assert found == []
