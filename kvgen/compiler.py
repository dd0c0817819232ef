"""The compiler: input text -> validated spec -> plan -> Kubernetes objects -> YAML.

Pure: no file is written here. Every problem of a document is collected before failing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvgen import kube, plan as planning, render
from kvgen.errors import Problem, SpecError
from kvgen.source import SourceDoc, load_documents
from kvgen.spec import Spec
from kvgen.validate_spec import parse_spec


@dataclass
class Compiled:
    source: str
    spec: Spec
    plan: planning.Plan
    objects: list[dict[str, Any]]

    @property
    def yaml(self) -> str:
        return render.to_yaml(self.objects)


def plan_document(doc: SourceDoc, k8s_version: str = kube.DEFAULT_VERSION) -> planning.Plan:
    spec, problems = parse_spec(doc)
    if spec is None:
        raise SpecError(doc.file, problems)
    try:
        return planning.build(spec, k8s_version)
    except planning.PlanError as exc:
        raise SpecError(
            doc.file, [Problem(path, message, hint, doc.locate(path)) for path, message, hint in exc.problems]
        ) from None


def compile_document(doc: SourceDoc, k8s_version: str = kube.DEFAULT_VERSION) -> Compiled:
    p = plan_document(doc, k8s_version)
    objs = render.objects(planning.context(p))
    render.check(objs, k8s_version)
    return Compiled(doc.file, p.spec, p, objs)


def compile_text(text: str, file: str, k8s_version: str = kube.DEFAULT_VERSION) -> list[Compiled]:
    """Every spec document of one input; a SpecError carries the problems of all of them."""
    docs = load_documents(text, file)
    if not docs:
        raise SpecError(file, [Problem((), "no spec found (the input is empty)")])
    results, problems = [], []
    for doc in docs:
        try:
            results.append(compile_document(doc, k8s_version))
        except SpecError as exc:
            problems += exc.problems
    if problems:
        raise SpecError(file, problems)
    return results
