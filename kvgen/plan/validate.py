"""Turn an input document into a Spec, or into a list of problems with spec paths.

pydantic collects every field error of a document in one pass; kvgen.input.spec_errors rewrites
them for people. Then what no schema can say: a credential written as a literal
(kvgen.plan.credentials), and a spec with no name.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from kvgen.core.errors import Path, Problem, format_path, quoted
from kvgen.data import catalog
from kvgen.input.source import SourceDoc
from kvgen.input.spec_errors import problem_of
from kvgen.plan import credentials
from kvgen.spec.models import Spec
from kvgen.spec.sections import INDEPENDENT


def _name_missing(doc: SourceDoc) -> list[Problem]:
    """kvgen's objects need a name: the spec's, or its fullnameOverride (the chart can take the release's)."""
    data = doc.data
    if data.get("name") is not None or data.get("fullnameOverride") is not None:
        return []
    hint = "kvgen has no release to name the objects after: set name (the Helm chart uses the release name)"
    return [Problem(("name",), "required key is missing", hint, doc.locate(("name",)))]


def _name_conflict(doc: SourceDoc) -> list[Problem]:
    """name and fullnameOverride both name the objects: set to two names, neither silently wins
    (the chart's kvgen.resolveName says the same)."""
    data = doc.data
    name, full = data.get("name"), data.get("fullnameOverride")
    if not (isinstance(name, str) and isinstance(full, str)) or name == full:
        return []
    return [
        Problem(
            ("name",),
            f"{quoted(name)} and fullnameOverride {quoted(full)} both name the objects",
            "keep one of them (name is kvgen's, fullnameOverride the Helm convention)",
            doc.locate(("name",)),
        )
    ]


NULLED = (
    "null removes the default: Helm deletes a key set to null where the chart's values.yaml has one, and the chart "
    "would render without it"
)


def nulled_defaults(doc: SourceDoc) -> list[Problem]:
    """A key set to null where the chart's values.yaml has a value (files/values-defaults.json): Helm deletes it
    while merging the values, so the chart would render without the default. Both faces refuse it, in these
    words (the chart's kvgen.checkNulledDefaults); kvgen would otherwise read it as unset or as a wrong type."""
    out: list[Problem] = []

    def walk(data: dict[Any, Any], tree: dict[str, Any], path: Path) -> None:
        for key, sub in tree.items():
            if key not in data:
                continue
            at: Path = (*path, key)
            if data[key] is None:
                hint = f"leave {format_path(at)} out for its default, or give it a value"
                out.append(Problem(at, NULLED, hint, doc.locate(at)))
            elif sub and isinstance(data[key], dict):
                walk(data[key], sub, at)

    walk(doc.data, catalog.load("values-defaults.json"), ())
    return out


def namespace_conflict(spec_namespace: str | None, namespace: str | None) -> list[Problem]:
    """The spec's namespace against the one it is installed into (kvgen --namespace; the chart: the
    release namespace, helm -n, when it is not "default", which Helm cannot tell from no -n): a
    conflict is a problem naming both, never a silent winner."""
    if spec_namespace is None or namespace is None or spec_namespace == namespace:
        return []
    return [
        Problem(
            ("namespace",),
            f"the spec's namespace {quoted(spec_namespace)} differs from the namespace it is installed into, "
            f"{quoted(namespace)} (helm -n, kvgen --namespace)",
            f"remove namespace from the spec to follow -n, or install with -n {spec_namespace}",
        )
    ]


def _under(problem: Problem, nulled: list[Problem]) -> bool:
    return any(problem.path[: len(n.path)] == n.path for n in nulled)


UNNAMED = "unnamed"  # the name planning gives a spec that has none, or a refused one


def _independent(path: Path) -> bool:
    return path[:1] in INDEPENDENT or path[:2] in INDEPENDENT


def _key_of(path: Path) -> Path:
    """The mapping key a problem's path is under: up to its first list index (a refused list item leaves the
    whole list out, so that the later problems' indices stay the ones the user wrote)."""
    for i, part in enumerate(path):
        if isinstance(part, int):
            return path[:i]
    return path


def _drop(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """``data`` without the key at ``path`` (copied along the path; the rest shared)."""
    if not path or not isinstance(data, dict) or path[0] not in data:
        return data
    head, rest = path[0], path[1:]
    if not rest:
        return {k: v for k, v in data.items() if k != head}
    return {**data, head: _drop(data[head], rest)}


def without_refused(doc: SourceDoc) -> tuple[dict[str, Any], list[Path]] | None:
    """The spec's data with every key the schema refuses left out, and those keys' paths, when planning can go
    on without them: each is an unknown key, or a value in an INDEPENDENT section. None where it cannot: a
    required key is missing, a value elsewhere is refused, a default is nulled or a credential written."""
    data = doc.data
    if not isinstance(data, dict) or nulled_defaults(doc) or _name_conflict(doc) or credentials.literals(data):
        return None
    try:
        Spec.model_validate(data)
        errors = []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    dropped: list[Path] = []
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "missing" or (error["type"] != "extra_forbidden" and not _independent(loc)):
            return None
        dropped.append(_key_of(loc))
    for path in dropped:
        data = _drop(data, path)
    if data.get("name") is None and data.get("fullnameOverride") is None:
        data = {**data, "name": UNNAMED}
    return data, dropped


def parse_spec(doc: SourceDoc) -> tuple[Spec | None, list[Problem]]:
    if not isinstance(doc.data, dict):
        return None, [Problem((), f"a spec must be a mapping, not {type(doc.data).__name__}", location=doc.locate(()))]
    literal = [p.at(doc.locate(p.path)) for p in credentials.literals(doc.data)]
    unnamed = _name_missing(doc) + _name_conflict(doc)
    nulled = nulled_defaults(doc)
    try:
        spec = Spec.model_validate(doc.data)
    except ValidationError as exc:
        # a nulled default is reported as that, not as the wrong type pydantic finds there
        found = [p for p in map(lambda e: problem_of(e, doc), exc.errors(include_url=False)) if not _under(p, nulled)]
        return None, nulled + found + unnamed + literal
    if nulled or unnamed or literal:
        return None, nulled + unnamed + literal
    if spec.name is None:
        spec = spec.model_copy(update={"name": spec.fullname_override})
    return spec, []
