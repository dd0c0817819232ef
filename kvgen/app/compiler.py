"""The compiler: input text -> documents -> (dialects translated) native specs -> plan ->
Kubernetes objects -> YAML.

Pure: no file is written here. Every problem of every input is collected before failing.
Documents in another format (KAITO, KServe; see ``kvgen.input.dialects``) are translated into native
specs first, across all inputs at once (a KAITO resource may name a ConfigMap of another
file); a problem found in a translated spec is reported at the field the user wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from kvgen.context import run as layout
from kvgen.context.types import Context
from kvgen.core import parallel
from kvgen.core.errors import KvgenError, Problem, SpecError
from kvgen.input import model_config
from kvgen.input.dialects import NO_OPTIONS, Converted, Options, Unit, foreign, translate
from kvgen.input.source import YAML11_CODE, SourceDoc, load_documents
from kvgen.input.spec_errors import problem_of
from kvgen.plan import build as planning
from kvgen.plan import credentials, extra_objects, kube_target
from kvgen.plan.document import document
from kvgen.plan.types import Plan
from kvgen.plan.validate import namespace_conflict, parse_spec, without_refused
from kvgen.render import templates as render
from kvgen.spec.models import Spec

Input = tuple[str, str | bytes]  # (file name, its text or bytes)


@dataclass
class Compiled:
    source: str
    spec: Spec
    plan: Plan
    objects: list[dict[str, Any]]
    context: Context  # what the templates laid out (the chart computes the same)
    conversion: Converted | None = None  # set when the spec was translated from KAITO or KServe
    _yaml: str | None = field(default=None, repr=False, compare=False)

    @property
    def yaml(self) -> str:
        """The objects as YAML (written once: a worker process writes it before sending this back)."""
        if self._yaml is None:
            self._yaml = render.to_yaml(self.objects)
        return self._yaml


@dataclass
class Unfit:
    """A spec whose plan is complete but whose pod does not fit its node (compile_inputs keep_unfit, for
    kvgen explain): the plan, and its problems located in the file."""

    source: str
    plan: Plan
    problems: list[Problem]
    conversion: Converted | None = None


@dataclass
class UnfitError(SpecError):
    """compile_document's SpecError for a plan that does not fit its node (plan.problems): the plan with it."""

    plan: Plan | None = None


@dataclass
class Output:
    compiled: list[Compiled]
    warnings: list[Problem] = field(default_factory=list)  # input documents left out
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why): found in a directory, not kvgen's
    unfit: list[Unfit] = field(default_factory=list)  # keep_unfit: the specs that do not fit their node
    planned: list[Compiled | Unfit] = field(default_factory=list)  # compiled and unfit, in the inputs' order

    @property
    def input_warnings(self) -> list[Problem]:
        """Every warning about the input: documents left out, then fields not honoured."""
        out = list(self.warnings)
        for c in self.compiled:
            if c.conversion is not None:
                out += c.conversion.warnings
        return out


class InputErrors(KvgenError):
    """Problems with the inputs, one SpecError per file."""

    def __init__(self, errors: list[SpecError], skipped: list[tuple[str, str]] | None = None):
        self.errors = errors
        self.skipped = skipped or []
        super().__init__("\n".join(map(str, errors)))


class Progress(Protocol):
    def start(self, total: int) -> None: ...
    def advance(self) -> None: ...
    def stop(self) -> None: ...


def plan_document(doc: SourceDoc, k8s_version: str | None = None, namespace: str | None = None) -> Plan:
    """The plan of one native document; ``namespace`` (kvgen --namespace) for a spec that sets none. A plan
    whose pod does not fit its node carries those problems (``plan.problems``)."""
    unread = model_config.apply(doc)  # model.config: the row of its config.json is the spec's own
    spec, problems = parse_spec(doc)
    if unread:
        raise SpecError(doc.file, problems + unread)
    if spec is None:
        raise SpecError(doc.file, problems + _planning_past(doc, problems, k8s_version, namespace))
    spec, version, conflict = _target(spec, k8s_version, namespace)
    try:
        plan = planning.build(spec, version)
    except SpecError as exc:
        raise SpecError(doc.file, [p.at(doc.locate(p.path)) for p in conflict + exc.problems]) from None
    if conflict:  # the plan's own problems (it does not fit) are listed too
        raise SpecError(doc.file, [p.at(doc.locate(p.path)) for p in [*conflict, *plan.problems]])
    return plan


def _planning_past(
    doc: SourceDoc, problems: list[Problem], k8s_version: str | None, namespace: str | None
) -> list[Problem]:
    """What planning finds in a spec the schema refused, planned with the refused keys left out
    (kvgen.plan.validate without_refused): every independent problem in one run. A problem at (or under,
    or above) a key left out is not reported: it could be the default's, not the user's."""
    repaired = without_refused(doc)
    if repaired is None:
        return []
    data, dropped = repaired
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:  # what only the whole spec can say (exactly one of two keys...), then stop
        found = [problem_of(e, doc) for e in exc.errors(include_url=False)]
    else:
        spec, version, found = _target(spec, k8s_version, namespace)
        try:
            found += planning.build(spec, version).problems
        except SpecError as exc:
            found += exc.problems
    seen = {(p.path, p.message) for p in problems}
    return [
        p.at(doc.locate(p.path))
        for p in found
        if not planning.related(p.path, dropped) and (p.path, p.message) not in seen
    ]


def _target(spec: Spec, k8s_version: str | None, namespace: str | None) -> tuple[Spec, str, list[Problem]]:
    """The spec in the namespace it is installed into, the Kubernetes version it is planned for, and the
    conflicts: the spec's namespace against --namespace, its kubeVersion against --kube-version."""
    conflict = namespace_conflict(spec.namespace, namespace)
    if spec.namespace is None and namespace is not None:
        spec = spec.model_copy(update={"namespace": namespace})
    version, too_old = kube_target.resolve(spec.kube_version, k8s_version)
    return spec, version, conflict + too_old


def compile_document(doc: SourceDoc, k8s_version: str | None = None, namespace: str | None = None) -> Compiled:
    """Plan, lay out and render one native document; a plan that does not fit its node raises UnfitError
    (a SpecError), which carries it."""
    p = plan_document(doc, k8s_version, namespace)
    if p.problems:
        raise UnfitError(doc.file, [problem.at(doc.locate(problem.path)) for problem in p.problems], p)
    ctx = layout.build(document(p), p.spec)
    objs = render.objects(ctx)
    own = objs[: len(objs) - len(p.spec.extra_objects)]  # extraObjects come last, checked by planning
    clashes = extra_objects.clashes(p.spec, own)
    if clashes:
        raise SpecError(doc.file, [problem.at(doc.locate(problem.path)) for problem in clashes])
    too_big = render.oversized(objs)
    if too_big:
        raise SpecError(
            doc.file,
            [
                Problem(
                    (),
                    f"the rendered {name} would be {size / 1024 / 1024:.1f} MiB; the Kubernetes API server refuses "
                    f"objects over {render.MAX_OBJECT_BYTES / 1024 / 1024:g} MiB",
                    "shorten the longest values (vllm.extraArgs, vllm.env, images)",
                    doc.locate(()),
                )
                for name, size in too_big
            ],
        )
    render.check(own, p.k8s_version)
    return Compiled(doc.file, p.spec, p, objs, ctx)


def compile_unit(unit: Unit, k8s_version: str | None = None, namespace: str | None = None) -> Compiled:
    """Compile one unit; problems of a translated spec point at the field the user wrote."""
    conv = unit.conversion
    if conv is None:
        return compile_document(unit.doc, k8s_version, namespace)
    try:
        compiled = compile_document(unit.doc, k8s_version, namespace)
    except UnfitError as exc:
        raise UnfitError(conv.doc.file, [conv.translate(p) for p in exc.problems], exc.plan) from None
    except SpecError as exc:
        raise SpecError(conv.doc.file, [conv.translate(p) for p in exc.problems]) from None
    compiled.conversion = conv
    return compiled


def _group(errors: list[SpecError]) -> list[SpecError]:
    """One SpecError per file, sorted by file (each one's problems by line, then path)."""
    by_file: dict[str, list[Problem]] = {}
    for e in errors:
        by_file.setdefault(e.source, []).extend(e.problems)
    return [SpecError(f, ps) for f, ps in sorted(by_file.items())]


def _not_ours(docs: list[SourceDoc]) -> str | None:
    """Why a file found in a directory is left out: none of its documents is kvgen's input."""
    if not docs:
        return "empty"
    reasons = [foreign(d.data) for d in docs]
    if any(r is None for r in reasons):
        return None
    return reasons[0] if len(set(reasons)) == 1 else f"{reasons[0]} (and {len(reasons) - 1} more documents)"


def _translate(
    inputs: Sequence[Input], options: Options, skippable: frozenset[str] = frozenset()
) -> tuple[list[Unit], list[Problem], list[SpecError], list[tuple[str, str]]]:
    """Units, warnings, errors, and the files of ``skippable`` (found in a directory) left out
    because nothing in them is kvgen's (a CI workflow, another tool's manifests)."""
    docs: list[SourceDoc] = []
    errors: list[SpecError] = []
    skipped: list[tuple[str, str]] = []
    for name, text in inputs:
        try:
            file_docs = load_documents(text, name)
        except SpecError as exc:
            if not all(p.code == YAML11_CODE for p in exc.problems):
                errors.append(exc)
                continue
            # only plain values that YAML 1.1 reads otherwise (on, 010): read on as kvgen reads them, so that
            # the spec's other problems are reported with them, and a CI workflow's `on:` is skipped as not ours
            file_docs = load_documents(text, name, check_yaml11=False)
            if not (name in skippable and _not_ours(file_docs) is not None):
                errors.append(exc)
        if name in skippable:
            why = _not_ours(file_docs)
            if why is not None:
                skipped.append((name, why))
                continue
        if not file_docs:
            errors.append(SpecError(name, [Problem((), "no spec found (the input is empty)")]))
        docs += file_docs
    units, warnings, translate_errors = translate(docs, options)
    # what the inputs' other fields are called is echoed in warnings and problems: never a credential
    warnings = [credentials.masked(w) for w in warnings]
    for unit in units:
        if unit.conversion is not None:
            unit.conversion.warnings = [credentials.masked(w) for w in unit.conversion.warnings]
    errors += [SpecError(e.source, [credentials.masked(p) for p in e.problems]) for e in translate_errors]
    if not errors and not units and inputs:
        left = f" ({len(skipped)} file{'s' if len(skipped) != 1 else ''} skipped as not kvgen's)" if skipped else ""
        errors.append(
            SpecError(
                inputs[0][0],
                [Problem((), f"no spec found: no native spec, KAITO or KServe resource in the input{left}")],
            )
        )
    return units, warnings, errors, skipped


def translate_inputs(
    inputs: Sequence[Input],
    options: Options = NO_OPTIONS,
    skippable: frozenset[str] = frozenset(),
    skipped: list[tuple[str, str]] | None = None,
) -> tuple[list[Unit], list[Problem]]:
    """Every input (name, text) as units to compile, and warnings; InputErrors if any input
    cannot be read or translated. Files of ``skippable`` left out are added to ``skipped``."""
    units, warnings, errors, left_out = _translate(inputs, options, skippable)
    if skipped is not None:
        skipped += left_out
    if errors:
        raise InputErrors(_group(errors), left_out)
    return units, warnings


def compile_inputs(
    inputs: Sequence[Input],
    k8s_version: str | None = None,
    options: Options = NO_OPTIONS,
    progress: Progress | None = None,
    skippable: frozenset[str] = frozenset(),
    jobs: int | None = 1,
    keep_unfit: bool = False,
) -> Output:
    """Compile every spec of every input. Raises InputErrors with the problems of all of them.
    Inputs named in ``skippable`` (found in a directory) are left out when nothing in them is kvgen's.
    ``jobs``: worker processes for a large batch (None: one per CPU; kvgen.core.parallel), 1 for serial.
    ``keep_unfit`` (kvgen explain): when every problem is a pod that does not fit its node, the
    output holds those plans (``unfit``) with their problems instead of raising."""
    units, warnings, errors, skipped = _translate(inputs, options, skippable)
    results: list[Compiled] = []
    unfit: list[Unfit] = []
    planned: list[Compiled | Unfit] = []
    jobs = parallel.jobs_for(len(units), jobs)

    def compile_one(unit: Unit) -> Compiled | Unfit | SpecError:
        try:
            compiled = compile_unit(unit, k8s_version, options.namespace)
        except UnfitError as exc:
            if not keep_unfit:  # render, validate: a refusal like any other (the plan stays here)
                return SpecError(exc.source, exc.problems)
            assert exc.plan is not None
            return Unfit(exc.source, exc.plan, exc.problems)
        except SpecError as exc:
            return exc
        if jobs > 1:  # sent back from a worker: the YAML written there, the conversion left here
            compiled.yaml  # noqa: B018 (the property stores the text)
            compiled.conversion = None
        return compiled

    outcomes = map(compile_one, units) if jobs == 1 else parallel.imap_ordered(compile_one, units, jobs)
    if progress is not None:
        progress.start(len(units))  # after the workers are forked: the bar's thread is not theirs
    try:
        for outcome, unit in zip(
            outcomes, units, strict=True
        ):  # the results first: the workers' pool closes at their end
            if isinstance(outcome, SpecError):
                errors.append(outcome)
            elif isinstance(outcome, Unfit):
                outcome.conversion = unit.conversion
                unfit.append(outcome)
                planned.append(outcome)
            else:
                outcome.conversion = unit.conversion
                results.append(outcome)
                planned.append(outcome)
            if progress is not None:
                progress.advance()
    finally:
        if progress is not None:
            progress.stop()
    if errors:  # a spec that cannot be planned: every problem, the unfit ones' too
        raise InputErrors(_group(errors + [SpecError(u.source, u.problems) for u in unfit]), skipped)
    return Output(results, warnings, skipped, unfit, planned)


def compile_text(text: str, file: str, k8s_version: str | None = None, options: Options = NO_OPTIONS) -> list[Compiled]:
    """Every spec document of one input; a SpecError carries the problems of all of them."""
    try:
        return compile_inputs([(file, text)], k8s_version, options).compiled
    except InputErrors as exc:
        raise SpecError(file, [p for e in exc.errors for p in e.problems]) from None


def convert_inputs(
    inputs: Sequence[Input],
    options: Options = NO_OPTIONS,
    skippable: frozenset[str] = frozenset(),
    skipped: list[tuple[str, str]] | None = None,
) -> tuple[list[Unit], list[Problem]]:
    """Translate every input to native specs and check them against the spec's schema (not
    the catalog or the node: that is what render and validate do). InputErrors on problems."""
    skipped = [] if skipped is None else skipped
    units, warnings = translate_inputs(inputs, options, skippable, skipped)
    errors: list[SpecError] = []
    for unit in units:
        _spec, problems = parse_spec(unit.doc)
        if problems:
            if unit.conversion is not None:
                problems = [unit.conversion.translate(p) for p in problems]
            errors.append(SpecError(unit.conversion.doc.file if unit.conversion else unit.doc.file, problems))
    if errors:
        raise InputErrors(_group(errors), skipped)
    return units, warnings


__all__ = [
    "Compiled",
    "InputErrors",
    "Options",
    "Output",
    "Progress",
    "Unfit",
    "UnfitError",
    "compile_document",
    "compile_inputs",
    "compile_text",
    "compile_unit",
    "convert_inputs",
    "plan_document",
    "translate_inputs",
]
