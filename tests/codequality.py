"""GitLab's code-quality report as a JSON schema, written from GitLab's documentation (docs.gitlab.com,
ci/testing/code_quality, "Implement a custom tool"), and the check of a report file against it: what
tests/test_ci_reports.py and tests/test_ci_replay.py hold kvgen's --codequality to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

# GitLab's code-quality report (docs.gitlab.com/ci/testing/code_quality, "Implement a custom tool"): an array of
# objects with these properties; location.lines.begin or location.positions.begin.line is the line; the path is
# relative to the repository. GitLab ignores the Code Climate spec's other properties.
CODEQUALITY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "minLength": 1, "not": {"pattern": "^/"}},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                    "positions": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {
                            "begin": {
                                "type": "object",
                                "required": ["line"],
                                "properties": {"line": {"type": "integer", "minimum": 1}},
                            }
                        },
                    },
                },
                "anyOf": [{"required": ["lines"]}, {"required": ["positions"]}],
            },
        },
    },
}


def check_codequality(path: Path) -> list[dict[str, Any]]:
    """The report at path, checked as GitLab reads it: JSON without a byte order mark, of the schema above."""
    raw = path.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), "GitLab's parser refuses a byte order mark"
    report: list[dict[str, Any]] = json.loads(raw.decode("utf-8"))
    jsonschema.Draft202012Validator(CODEQUALITY_SCHEMA).validate(report)
    return report
