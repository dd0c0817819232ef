"""The API server's name and label formats (files/apiserver.yaml formats: apimachinery's IsDNS1123Subdomain,
IsQualifiedName, IsValidLabelValue and their kin), as data: read by the plan's API-server rules
(kvgen.plan.apiserver) and by the catalog's row checks (kvgen.data.catalog), and by the chart's kvgen.apiFits."""

from __future__ import annotations

import re
from functools import cache

from kvgen.data.files import load

_RULES = load("apiserver.yaml")


@cache
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def fits(kind: str, value: str) -> bool:
    """``value`` fits a format of files/apiserver.yaml: within maxLength, matching its pattern and
    not its except; a format with prefix and name is [prefix "/"] name (IsQualifiedName)."""
    fmt = _RULES["formats"][kind]
    if "name" in fmt:
        parts = value.split("/")
        return len(parts) <= 2 and (len(parts) == 1 or fits(fmt["prefix"], parts[0])) and fits(fmt["name"], parts[-1])
    return (
        len(value) <= fmt["maxLength"]
        and _pattern(fmt["pattern"]).fullmatch(value) is not None
        and not ("except" in fmt and _pattern(fmt["except"]).search(value))
    )


def what(kind: str) -> str:
    return _RULES["formats"][kind]["what"]


def is_label_value(value: str) -> bool:
    """apimachinery content.IsLabelValue."""
    return fits("labelValue", value)


def is_dns1123_subdomain(value: str) -> bool:
    """apimachinery validation.IsDNS1123Subdomain."""
    return fits("dns1123Subdomain", value)


def is_label_key(value: str) -> bool:
    """apimachinery content.IsLabelKey (IsQualifiedName): [prefix/]name."""
    return fits("labelKey", value)


def is_config_map_key(value: str) -> bool:
    """apimachinery validation.IsConfigMapKey, with its hasChDirPrefix."""
    return fits("configMapKey", value)
