"""Where kvgen's data lives, in a source checkout and in an installed wheel.

The project keeps templates, the JSON Schema and the chart's data files at the top of the
repository (the chart reads the same files through ``.Files.Get``). The wheel copies them
into ``kvgen/_data`` (see ``pyproject.toml``), so both layouts are looked up here, wheel first.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # kvgen/, above core/
_WHEEL_DATA = _PACKAGE / "_data"
_REPO = _PACKAGE.parent


@cache
def _root(wheel_name: str, repo_relative: str) -> Path:
    installed = _WHEEL_DATA / wheel_name
    if installed.is_dir():
        return installed
    checkout = _REPO / repo_relative
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"kvgen data directory {repo_relative!r} is missing from this installation")


def templates_dir() -> Path:
    return _root("templates", "templates")


def files_dir() -> Path:
    """The chart's data files: catalogs, rule table, image pins, the LMCache launcher."""
    return _root("files", "charts/kvgen/files")
