"""The quick tier's list of heavy tests (tests/conftest.py) names tests that exist, so a renamed
or removed test cannot leave a stale entry behind while its successor runs in the quick tier."""

from __future__ import annotations

import ast

import pytest
from conftest import HEAVY_MODULES, HEAVY_TESTS, ROOT

TESTS = ROOT / "tests"


def _functions(module: str) -> set[str]:
    tree = ast.parse((TESTS / module).read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test")}


@pytest.mark.parametrize("module", sorted(HEAVY_MODULES))
def test_a_heavy_module_exists(module):
    assert (TESTS / module).is_file()


def test_every_heavy_test_function_exists():
    missing = sorted((m, f) for m, f in HEAVY_TESTS if m in HEAVY_MODULES or f not in _functions(m))
    assert missing == [], f"stale or redundant entries in tests/conftest.py HEAVY_TESTS: {missing}"
