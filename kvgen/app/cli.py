"""The kvgen command line.

Exit codes (also in `kvgen --help` and the README):
  0  success
  1  invalid input: a spec with problems (each named with its spec path and file:line)
  2  usage error: unknown option, missing argument, unreadable file
  3  invalid output: a rendered object failed Kubernetes validation (a kvgen bug; please report it)
  4  internal error
  5  stale: `render --check` found committed output that differs from what kvgen renders
  130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from kvgen import __version__
from kvgen.core.errors import KvgenError, OutputInvalidError, Problem, SpecError, format_path
from kvgen.data import kube
from kvgen.input.source import MAX_INPUT_BYTES

if TYPE_CHECKING:  # for annotations only: the commands import what they use when they run
    from rich.progress import Progress, TaskID

    from kvgen.app.compiler import Output
    from kvgen.app.findings import Sink
    from kvgen.input.dialects import Unit
    from kvgen.output.tree import Changes

EXIT_OK, EXIT_INVALID_INPUT, EXIT_USAGE, EXIT_INVALID_OUTPUT, EXIT_INTERNAL, EXIT_STALE = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C

EPILOG = (
    "Exit codes: 0 ok; 1 invalid input (every problem listed with its spec path and file:line); "
    "2 usage error; 3 invalid output (a rendered object failed Kubernetes validation); 4 internal error; "
    "5 stale (render --check: the committed output differs, a unified diff is printed); 130 interrupted (Ctrl-C)."
)
PROG = "kvgen"
COMPLETE_VAR = "_KVGEN_COMPLETE"  # what typer's completion scripts set when they ask kvgen for completions
PROGRESS_MIN_SPECS = 8  # a progress bar on a terminal from this many specs on

app = typer.Typer(
    name="kvgen",
    help="Compile a kvgen spec (or a KAITO InferenceSet/Workspace or KServe LLMInferenceService) into "
    "Kubernetes manifests for vLLM with KV-cache offloading.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,  # `kvgen completion SHELL` prints the script (typer's options would cost every start-up)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

SpecArgs = Annotated[
    list[str],
    typer.Argument(
        help="Spec files or directories of specs ('-' reads stdin). Native specs, KAITO InferenceSet/Workspace "
        "(+ their inference.config ConfigMap) and KServe LLMInferenceService, mixed freely.",
        show_default=False,
    ),
]
KubeVersion = Annotated[
    str | None,
    typer.Option(
        "--kube-version",
        help=f"Kubernetes version to render and validate for. [default: the spec's kubeVersion, else {kube.DEFAULT_VERSION}]",
        show_default=False,
    ),
]
Exclude = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help="Leave out files found in a directory argument whose path below it, name, or a parent directory "
        "matches GLOB (fnmatch: 'ci', 'seeds/*', '*.values.yaml'). Repeatable. Files named explicitly are always read.",
        show_default=False,
    ),
]
Catalogs = Annotated[
    list[str] | None,
    typer.Option(
        "--catalog",
        metavar="FILE",
        help="Your own models and node types: a file with a top-level catalog: of models: and instances: rows "
        "(as charts/kvgen/files/*.yaml), merged over the built-in catalog. Repeatable (later files win); read after "
        "the files in $KVGEN_CATALOG (separated by ':'). The same file is a Helm values file (helm template -f FILE).",
        show_default=False,
    ),
]
Jobs = Annotated[
    int | None,
    typer.Option(
        "-j",
        "--jobs",
        min=1,
        envvar="KVGEN_JOBS",
        metavar="N",
        help="Worker processes for a large batch (at least 50 specs per worker; Linux only). Default: one per "
        "available CPU, at most 8. 1 compiles in this process. The output is the same bytes whatever N is.",
        show_default=False,
    ),
]
Quiet = Annotated[
    bool, typer.Option("-q", "--quiet", help="Do not print decisions, warnings and skipped files on stderr.")
]
Instance = Annotated[
    str | None,
    typer.Option(
        "--instance",
        help="Instance type for KAITO/KServe inputs that name none (KServe has no such field; an input can also "
        "carry the annotation kvgen.dev/instance-type or a nodeSelector on node.kubernetes.io/instance-type).",
        show_default=False,
    ),
]

Namespace = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        help="Namespace of the objects of specs that set none (a spec whose own namespace differs is a problem). "
        "Without it such objects carry no metadata.namespace: kubectl -n, kustomize or Argo CD place them.",
        show_default=False,
    ),
]

Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Warnings are errors: exit 1 listing every warning, nothing written (for CI gates; a spec's own "
        "strict: true does the same for that spec, in kvgen and the Helm chart).",
    ),
]


class Usage(KvgenError):
    pass


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")


@dataclass
class _Input:
    name: str  # as shown in messages
    text: bytes  # at most MAX_INPUT_BYTES + 1: kvgen.input.source refuses a larger input by its size, unread
    subdir: PurePosixPath  # its directory below the directory argument it was found in
    found: bool = False  # found in a directory (not named): left out when nothing in it is kvgen's


_NOT_A_FILE = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _stat(item: str) -> os.stat_result:
    try:
        return os.stat(item)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Usage(f"{item}: a symbolic link loop") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise Usage(f"{item}: no such file or directory") from None
        raise Usage(f"{item}: cannot read it: {exc.strerror}") from None


def _read(item: str, st: os.stat_result) -> bytes:
    """A regular file's bytes. Anything else (a FIFO, /dev/zero) is a usage error, said as
    what it is, and never opened: opening a FIFO blocks, reading /dev/zero never ends."""
    if not stat.S_ISREG(st.st_mode):
        what = _NOT_A_FILE.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise Usage(f"{item}: {what}, not a file; kvgen reads regular files, directories of them, or '-' for stdin")
    try:
        with open(item, "rb") as f:
            return f.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise Usage(f"{item}: cannot read it: {exc.strerror}") from None


def _stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        return stream.read(MAX_INPUT_BYTES + 1)
    return sys.stdin.read(MAX_INPUT_BYTES + 1).encode("utf-8")


def _excluded(relative: PurePosixPath, patterns: list[str]) -> bool:
    """Whether a file found in a directory matches an --exclude GLOB: its path below the
    directory, its name, or one of its parent directories (path or name)."""
    from fnmatch import fnmatchcase

    candidates = {relative.as_posix(), relative.name}
    for parent in relative.parents:
        if parent != PurePosixPath("."):
            candidates |= {parent.as_posix(), parent.name}
    return any(fnmatchcase(c, g.rstrip("/")) for c in candidates for g in patterns)


def _inputs(specs: list[str], exclude: list[str] | None = None) -> list[_Input]:
    """Every input, directories expanded (recursively, in sorted order), less --exclude matches."""
    out: list[_Input] = []
    for item in specs:
        if item == "-":
            out.append(_Input("<stdin>", _stdin(), PurePosixPath(".")))
            continue
        st = _stat(item)
        if stat.S_ISDIR(st.st_mode):
            path = Path(item)
            found = []
            for p in sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml")):
                if exclude and _excluded(PurePosixPath(p.relative_to(path).as_posix()), exclude):
                    continue
                p_st = _stat(str(p))
                if not stat.S_ISDIR(p_st.st_mode):
                    found.append((p, p_st))
            if not found:
                left = " (after --exclude)" if exclude else ""
                raise Usage(f"{item}: no .yaml or .yml files in this directory{left}")
            out += [
                _Input(str(p), _read(str(p), p_st), PurePosixPath(p.parent.relative_to(path).as_posix()), True)
                for p, p_st in found
            ]
        else:
            out.append(_Input(item, _read(item, st), PurePosixPath(".")))
    return out


class _Progress:
    """A rich progress bar on stderr, only when stderr is a terminal and many specs compile."""

    def __init__(self, stream: TextIO | None = None, minimum: int = PROGRESS_MIN_SPECS):
        self.stream = stream if stream is not None else sys.stderr
        self.minimum = minimum
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def wanted(self, total: int) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty()) and total >= self.minimum

    def start(self, total: int) -> None:
        if not self.wanted(total):
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.bar = Progress(
            TextColumn("kvgen: compiling"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(file=self.stream),
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task("specs", total=total)

    def advance(self) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _check_version(version: str | None) -> None:
    if version is None:
        return
    try:
        kube.schema_dir(version)
    except kube.UnsupportedVersion as exc:
        raise Usage(str(exc)) from None


def _check_namespace(namespace: str | None) -> None:
    import re

    from kvgen.core.errors import quoted
    from kvgen.spec.models import NAMESPACE_PATTERN

    if namespace is not None and (len(namespace) > 63 or not re.match(NAMESPACE_PATTERN, namespace)):
        raise Usage(
            f"--namespace {quoted(namespace)} is not a namespace name (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )


def _skippable(inputs: list[_Input]) -> frozenset[str]:
    return frozenset(i.name for i in inputs if i.found)


def _say_skipped(skipped: list[tuple[str, str]], quiet: bool) -> None:
    if not quiet:
        for name, why in skipped:
            _err(f"kvgen: skipped {name}: {why}")


def _use_catalogs(catalogs: list[str] | None) -> None:
    """Merge $KVGEN_CATALOG's files, then --catalog's, over the built-in catalog."""
    if not catalogs and not os.environ.get("KVGEN_CATALOG"):
        return
    from kvgen.input import user_catalog

    named = [(f"{user_catalog.ENV}: ", f) for f in user_catalog.from_env()] + [("", f) for f in catalogs or ()]
    files = []
    for origin, name in named:
        try:
            files.append((name, _read(name, _stat(name))))
        except Usage as exc:
            raise Usage(f"{origin}{exc}") from None
    try:
        user_catalog.use(files)
    except user_catalog.CatalogErrors as exc:
        raise _Failed(exc.errors) from None


def _compile_all(
    specs: list[str],
    version: str | None,
    instance: str | None = None,
    exclude: list[str] | None = None,
    quiet: bool = False,
    catalogs: list[str] | None = None,
    namespace: str | None = None,
    jobs: int | None = None,
    keep_unfit: bool = False,
) -> tuple[list[_Input], Output]:
    """(inputs, compile output) for every spec of every input; files found in a directory that hold
    nothing of kvgen's are left out, one line each on stderr. ``keep_unfit`` (explain): specs that
    do not fit their node are in the output's ``unfit`` (compile_inputs)."""
    from kvgen.app.compiler import InputErrors, compile_inputs
    from kvgen.input.dialects import Options

    _check_version(version)
    _check_namespace(namespace)
    _use_catalogs(catalogs)
    inputs = _inputs(specs, exclude)
    try:
        output = compile_inputs(
            [(i.name, i.text) for i in inputs],
            version,
            Options(instance, namespace),
            progress=_Progress(),
            skippable=_skippable(inputs),
            jobs=jobs,
            keep_unfit=keep_unfit,
        )
    except InputErrors as exc:
        _say_skipped(exc.skipped, quiet)
        raise _Failed(exc.errors) from None
    _say_skipped(output.skipped, quiet)
    return inputs, output


class _Failed(KvgenError):
    def __init__(self, errors: list[SpecError]):
        self.errors = errors


@dataclass(frozen=True)
class _Warning:
    """A warning of the run: as printed, and as an annotation or a finding (its message without the place)."""

    text: str
    message: str
    file: str | None = None
    problem: Problem | None = None


def _warnings(output: Output) -> list[_Warning]:
    """Every warning of the run: the input's, each conversion's, each spec's plan's."""
    found = [_Warning(w.render(), w.at(None).render(), None, w) for w in output.warnings]
    for r in output.compiled:
        if r.conversion is not None:
            found += [_Warning(w.render(), w.at(None).render(), r.source, w) for w in r.conversion.warnings]
        found += [_Warning(f"{r.source}: {r.spec.name}: {w}", f"{r.spec.name}: {w}", r.source) for w in r.plan.warnings]
    return found


class _StrictFailed(KvgenError):
    def __init__(self, warnings: list[_Warning]):
        self.warnings = warnings


def _strict(output: Output) -> None:
    """--strict: every warning of the run (the input's, each conversion's, each spec's) is an error."""
    found = _warnings(output)
    if found:
        raise _StrictFailed(found)


class MessageFormat(StrEnum):
    text = "text"
    github = "github"


Format = Annotated[
    MessageFormat,
    typer.Option(
        "--format",
        help="text, or github: also print each problem and warning as a GitHub Actions workflow command "
        "(::error file=...,line=...,col=...::), which the runner turns into an annotation on that line.",
    ),
]
_annotate = False  # --format github: set by the command, read where problems and warnings are printed
CodeQuality = Annotated[
    str | None,
    typer.Option(
        "--codequality",
        metavar="FILE",
        help="Also write every problem and warning (and each stale file of render --check) to FILE as a GitLab "
        "code-quality report, the JSON array artifacts:reports:codequality reads (docs/ci.md), whether or not the "
        "command passes. '-' writes it to stdout (validate only).",
        show_default=False,
    ),
]
Summary = Annotated[
    str | None,
    typer.Option(
        "--summary",
        metavar="FILE",
        help="Append a Markdown summary of the run to FILE: its outcome and a table of every problem and warning at "
        'its file:line (in GitHub Actions: --summary "$GITHUB_STEP_SUMMARY", the job summary; docs/ci.md).',
        show_default=False,
    ),
]
_sink: Sink | None = None  # --codequality, --summary: set by the command, fed where problems and warnings are found


def _command_data(text: str) -> str:
    """A workflow command's message, escaped as the runner unescapes it (actions/toolkit's escapeData)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _command_property(text: str) -> str:
    return _command_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(level: str, message: str, file: str | None = None, problem: Problem | None = None) -> None:
    """One ::error or ::warning workflow command on stderr (the runner reads both streams for them)."""
    props = []
    where = problem.location if problem is not None else None
    if where is not None:
        props += [f"file={_command_property(where.file)}", f"line={where.line}", f"col={where.column}"]
    elif file:
        props.append(f"file={_command_property(file)}")
    title = "kvgen" if problem is None else f"kvgen: {format_path(problem.path)}"
    props.append(f"title={_command_property(title)}")
    _err(f"::{level} {','.join(props)}::{_command_data(message)}")


def _record(
    level: str,
    message: str,
    file: str | None = None,
    problem: Problem | None = None,
    check: str = "kvgen/warning",
    line: int | None = None,
) -> None:
    """One finding for --codequality and --summary (at the problem's file:line, else at ``file``)."""
    if _sink is None:
        return
    where = problem.location if problem is not None else None
    if problem is not None:
        check = f"kvgen/{problem.code or format_path(problem.path)}"
    _sink.add(
        level,
        message,
        where.file if where is not None else file,
        where.line if where is not None else line,
        format_path(problem.path) if problem is not None else "",
        check,
    )


def _outcome(line: str) -> None:
    """The command's last line, for --summary."""
    if _sink is not None:
        _sink.outcome = line


def _open_sink(specs: list[str]) -> None:
    """Check that --codequality's and --summary's files can be written before anything runs."""
    if _sink is None:
        return
    _sink.fallback = next((s for s in specs if s != "-"), "")
    try:
        _sink.open()
    except OSError as exc:
        raise Usage(f"{exc.filename}: cannot write it: {exc.strerror}") from None


def _warn(problem: Problem) -> None:
    _err(f"kvgen: warning: {problem.render()}")
    if _annotate:
        _annotation("warning", problem.at(None).render(), problem=problem)


def _report(output: Output, quiet: bool, decisions: bool = True) -> None:
    for found in _warnings(output):  # --codequality and --summary hold them, --quiet or not
        _record("warning", found.message, found.file, found.problem)
    if quiet:
        return
    for w in output.warnings:
        _warn(w)
    for r in output.compiled:
        if r.conversion is not None:
            for w in r.conversion.warnings:
                _warn(w)
        if not decisions:
            continue
        p = r.plan
        d = p.decision
        origin = f" (from {r.conversion.resource})" if r.conversion is not None else ""
        if d.enabled:
            _err(f"kvgen: {r.spec.name}: KV-cache offloading enabled ({p.backend} backend){origin}")
        else:
            _err(f"kvgen: {r.spec.name}: KV-cache offloading disabled: {d.reason_code} ({d.reason}){origin}")
        for warning in p.warnings:
            _err(f"kvgen: {r.spec.name}: warning: {warning}")
            if _annotate:
                _annotation("warning", f"{r.spec.name}: {warning}", file=r.source)


def _run(action: Callable[[], None]) -> None:
    global _annotate, _sink
    sink = _sink
    try:
        try:
            _run_reporting(action)
        except typer.Exit as exc:
            if sink is not None:
                for m in sink.close(exc.exit_code):
                    _err(f"error: {m}")
            raise
        if sink is not None:
            failed = sink.close(EXIT_OK)
            for m in failed:
                _err(f"error: {m}")
            if failed:
                raise typer.Exit(EXIT_USAGE)
    finally:
        _annotate = False  # --format github, --codequality and --summary are one command's (tests run many in one
        _sink = None  # process)


def _run_reporting(action: Callable[[], None]) -> None:
    try:
        action()
    except Usage as exc:
        _err(f"error: {exc}")
        _outcome(f"error: {exc}")
        raise typer.Exit(EXIT_USAGE) from None
    except _Failed as exc:
        total = sum(len(e.problems) for e in exc.errors)
        for e in exc.errors:
            _err(f"error: {e}")
        for e in exc.errors:
            for p in e.problems:
                if _annotate:
                    _annotation("error", p.at(None).render(), file=e.source, problem=p)
                _record("error", p.at(None).render(), e.source, p)
        _err(f"kvgen: {total} problem{'s' if total != 1 else ''} found; nothing was written")
        _outcome(f"{total} problem{'s' if total != 1 else ''} found; nothing was written")
        raise typer.Exit(EXIT_INVALID_INPUT) from None
    except _StrictFailed as exc:
        for w in exc.warnings:
            _err(f"error: {w.text}")
            if _annotate:
                _annotation("error", w.message, file=w.file, problem=w.problem)
            _record("error", w.message, w.file, w.problem)
        n = len(exc.warnings)
        _err(f"kvgen: {n} warning{'s' if n != 1 else ''} (errors with --strict); nothing was written")
        _outcome(f"{n} warning{'s' if n != 1 else ''} (errors with --strict); nothing was written")
        raise typer.Exit(EXIT_INVALID_INPUT) from None
    except OutputInvalidError as exc:
        _err("error: the rendered objects are not valid Kubernetes (this is a kvgen bug, please report it):")
        for m in exc.messages:
            _err(f"  {m}")
        _outcome("the rendered objects are not valid Kubernetes (a kvgen bug, please report it): see the log")
        raise typer.Exit(EXIT_INVALID_OUTPUT) from None
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        _err("kvgen: interrupted")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except Exception as exc:
        if os.environ.get("KVGEN_DEBUG"):
            raise
        _err(f"internal error: {type(exc).__name__}: {exc} (set KVGEN_DEBUG=1 for a traceback)")
        _outcome(f"internal error: {type(exc).__name__}: {exc}")
        raise typer.Exit(EXIT_INTERNAL) from None


@app.command()
def render(
    specs: SpecArgs,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output-dir",
            "--output",
            metavar="DIR",
            help="Write a tree into this directory instead of stdout (-o is a directory here, as helm template "
            "--output-dir; render's output is always YAML): one <name>.yaml per spec (in the spec file's "
            "sub-directory below a directory argument) and a kustomization.yaml per directory listing them. kvgen "
            "records what it wrote in DIR/.kvgen-manifest.json and only ever replaces or removes those files, when "
            "they still have its names, sha256 and form (exit 1 naming any other file in its way; the manifest is "
            "not trusted alone); files it wrote that are no longer produced are removed.",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="With -o: write nothing; compare the committed tree with what kvgen renders now, print a unified "
            "diff and exit 5 when anything differs, is missing or is no longer produced (0 when up to date).",
        ),
    ] = False,
    kustomize_resources: Annotated[
        list[str] | None,
        typer.Option(
            "--kustomize-resource",
            metavar="PATH",
            help="With -o: also list PATH (a file or directory of yours, relative to DIR and inside it) in DIR's "
            "top kustomization.yaml. Repeatable.",
            show_default=False,
        ),
    ] = None,
    kube_version: KubeVersion = None,
    instance: Instance = None,
    namespace: Namespace = None,
    exclude: Exclude = None,
    catalogs: Catalogs = None,
    quiet: Quiet = False,
    jobs: Jobs = None,
    strict: Strict = False,
    message_format: Format = MessageFormat.text,
    codequality: CodeQuality = None,
    summary: Summary = None,
) -> None:
    """Render specs to Kubernetes YAML (multi-document on stdout, or a tree of files with -o)."""
    from kvgen.output import tree

    global _annotate, _sink
    _annotate = message_format is MessageFormat.github
    if codequality is not None or summary is not None:
        from kvgen.app.findings import Sink  # only for the reports: a plain render does not import it

        _sink = Sink("render --check" if check else "render", codequality, summary)

    def action() -> None:
        if codequality == "-":
            raise Usage("render writes YAML or a diff on stdout: give --codequality a file")
        _open_sink(specs)
        if output is not None:
            _check_output_dir(output)
        if check and output is None:
            raise Usage("--check compares a committed output directory with what kvgen renders: give it with -o DIR")
        if kustomize_resources and output is None:
            raise Usage(
                "--kustomize-resource adds to the kustomization.yaml of an output directory: give it with -o DIR"
            )
        inputs, out = _compile_all(specs, kube_version, instance, exclude, quiet, catalogs, namespace, jobs)
        if strict:
            _strict(out)
        subdirs = {i.name: i.subdir for i in inputs}
        if output is None:
            same = tree.stdout_same_name(
                [
                    (tree.Entry(PurePosixPath("."), r.spec.object_name, "", r.source), _namespace(r.objects))
                    for r in out.compiled
                ]
            )
            if same:
                raise Usage("; ".join(same))
            _report(out, quiet)
            sys.stdout.write("".join(r.yaml for r in out.compiled))
            _outcome(_rendered(len(out.compiled)))
            return
        entries = [
            tree.Entry(subdirs.get(r.source, PurePosixPath(".")), r.spec.object_name, r.yaml, r.source)
            for r in out.compiled
        ]
        try:
            files = tree.layout(entries, kustomize_resources or ())
        except tree.TreeError as exc:
            raise Usage("; ".join(exc.messages)) from None
        _report(out, quiet, decisions=not check)
        _render_tree(output, files, list(kustomize_resources or ()), check, quiet)
        if not check:
            _outcome(f"{_rendered(len(out.compiled))} into {output.as_posix()}")

    _run(action)


def _rendered(n: int) -> str:
    return f"{n} spec{'s' if n != 1 else ''} rendered"


# kubectl's and helm's -o values: a format (kubectl get -o yaml) is no directory for render -o
_FORMATS = frozenset({"yaml", "yml", "json", "wide", "name", "go-template", "jsonpath", "custom-columns", "table"})
_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def _check_output_dir(output: Path) -> None:
    """render -o takes a directory: a value that reads as an output format (kubectl's -o yaml) or as
    one file (-o out.yaml) is a usage error, unless such a directory exists already."""
    if output.is_dir():
        return
    from kvgen.core.errors import quoted

    text = str(output)
    hint = (
        "-o takes a directory (one <name>.yaml per spec and a kustomization.yaml); render writes YAML to stdout "
        "by default, so to write one file use shell redirection: kvgen render SPEC > out.yaml"
    )
    if text.split("=", 1)[0].lower() in _FORMATS:
        raise Usage(f"-o {quoted(text)} reads as an output format, not a directory; {hint}")
    if text.lower().endswith(_FILE_SUFFIXES):
        raise Usage(f"-o {quoted(text)} reads as a file, not a directory; {hint}")


def _namespace(objects: list[dict[str, Any]]) -> str | None:
    """The namespace a spec's objects are written in (None: the one kubectl is given)."""
    found = objects[0].get("metadata", {}).get("namespace") if objects else None
    return found if isinstance(found, str) else None


def _render_tree(output: Path, files: dict[PurePosixPath, str], extras: list[str], check: bool, quiet: bool) -> None:
    """render -o: write (or --check) the tree through kvgen.output.outdir, mapping its outcomes to exit codes."""
    from kvgen.core.signals import Interrupted
    from kvgen.output import outdir, tree

    say = (lambda _m: None) if quiet else _err
    shown = output.as_posix()
    try:
        survey = (outdir.check if check else outdir.write)(output, files, extras, on_wait=say)
    except outdir.OutDirError as exc:
        for m in exc.messages:
            _err(f"error: {m}")
            if _annotate:
                _annotation("error", m, file=shown)
            _record("error", m, shown, check="kvgen/output-dir")
        n = len(exc.messages)
        last = (
            f"{n} problem{'s' if n != 1 else ''} with the output directory {shown}; nothing was written"
            if exc.code == 1
            else f"{shown} was left as it was"
        )
        _err(f"kvgen: {last}")
        _outcome(last)
        raise typer.Exit(exc.code) from None
    except Interrupted as exc:
        state = "holds the complete new render" if exc.finished else "was left as it was"
        _err(f"kvgen: interrupted ({exc.name}); {shown} {state}")
        raise typer.Exit(exc.exit_code) from None
    if not quiet:
        for w in survey.warnings:
            _err(f"kvgen: warning: {w}")
    if not check:
        return
    for m in survey.refusals:
        _err(f"kvgen: warning: kvgen render would stop here: {m}")
    if survey.up_to_date:
        if not quiet:
            _err(f"kvgen: {shown} is up to date ({survey.changes.summary()})")
        _outcome(f"{shown} is up to date ({survey.changes.summary()})")
        return
    sys.stdout.write(tree.unified_diff(output, survey.changes))
    last = f"{shown} is stale: {survey.changes.summary()}; run kvgen render without --check to update it"
    _err(f"kvgen: {last}")
    _outcome(f"{last}, and commit the result (the unified diff is in the log)")
    _stale_findings(output, survey.changes)
    raise typer.Exit(EXIT_STALE)


def _stale_findings(output: Path, changes: Changes) -> None:
    """render --check --format github / --codequality: each file that differs, is missing or is no longer
    produced, at its first line that differs."""
    if not (_annotate or _sink is not None):
        return
    base = output.as_posix().rstrip("/")
    stale = [(rel, _first_difference(old, new), "differs from what kvgen renders") for rel, old, new in changes.changed]
    stale += [(rel, 1, "is missing: kvgen renders it") for rel, _new in changes.missing]
    stale += [(rel, 1, "is no longer produced: kvgen render removes it") for rel, _old in changes.stale]
    for rel, line, what in stale:
        file = f"{base}/{rel}"
        message = f"{file} {what}; run kvgen render without --check and commit the result"
        if _annotate:
            _err(f"::error file={_command_property(file)},line={line},title=kvgen%3A stale::{_command_data(message)}")
        _record("error", message, file, check="kvgen/stale", line=line)


def _first_difference(old: str, new: str) -> int:
    """The 1-based number of the first line where two texts differ."""
    a, b = old.splitlines(), new.splitlines()
    return next((i + 1 for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)) + 1)


@app.command()
def validate(
    specs: SpecArgs,
    kube_version: KubeVersion = None,
    instance: Instance = None,
    namespace: Namespace = None,
    exclude: Exclude = None,
    catalogs: Catalogs = None,
    quiet: Quiet = False,
    jobs: Jobs = None,
    strict: Strict = False,
    message_format: Format = MessageFormat.text,
    codequality: CodeQuality = None,
    summary: Summary = None,
) -> None:
    """Check specs and the objects they render, without writing anything."""
    global _annotate, _sink
    _annotate = message_format is MessageFormat.github
    if codequality is not None or summary is not None:
        from kvgen.app.findings import Sink  # only for the reports: a plain validate does not import it

        _sink = Sink("validate", codequality, summary)

    def action() -> None:
        _open_sink(specs)
        _inputs_, out = _compile_all(specs, kube_version, instance, exclude, quiet, catalogs, namespace, jobs)
        if strict:
            _strict(out)
        _report(out, quiet)
        for r in out.compiled:
            _err(f"ok: {r.source}: {r.spec.name} ({len(r.objects)} objects valid for Kubernetes {r.plan.k8s_version})")
        n = len(out.compiled)
        _outcome(
            f"{n} spec{'s' if n != 1 else ''} and the objects {'they render' if n != 1 else 'it renders'} are valid"
        )

    _run(action)


@app.command()
def convert(
    specs: SpecArgs, instance: Instance = None, exclude: Exclude = None, catalogs: Catalogs = None, quiet: Quiet = False
) -> None:
    """Print the native spec(s) that KAITO / KServe inputs translate to (native specs pass through)."""
    from kvgen.app.compiler import InputErrors, convert_inputs
    from kvgen.input.dialects import Options

    def action() -> None:
        _use_catalogs(catalogs)
        inputs = _inputs(specs, exclude)
        skipped: list[tuple[str, str]] = []
        try:
            units, warnings = convert_inputs(
                [(i.name, i.text) for i in inputs], Options(instance), _skippable(inputs), skipped
            )
        except InputErrors as exc:
            _say_skipped(exc.skipped, quiet)
            raise _Failed(exc.errors) from None
        _say_skipped(skipped, quiet)
        for w in [] if quiet else warnings:
            _warn(w)
        docs = []
        for unit in units:
            conv = unit.conversion
            if conv is not None and not quiet:
                for w in conv.warnings:
                    _warn(w)
            docs.append(_native_yaml(unit))
        sys.stdout.write("---\n".join(docs))

    _run(action)


def _yaml_text(data: Any) -> str:
    """Block-style YAML, keys in their order, long lines unfolded."""
    import io

    from ruamel.yaml import YAML

    from kvgen.core.plain_tags import for_yaml11_readers

    dumper = YAML(typ="safe", pure=True)
    for_yaml11_readers(dumper)  # a native spec is a Helm values file too: YAML 1.1 must read it as kvgen does
    dumper.default_flow_style = False
    # ruamel.yaml initialises it to None ("default: sort") without an annotation, so mypy infers None
    dumper.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    dumper.width = 4096
    buf = io.StringIO()
    dumper.dump(data, buf)
    return buf.getvalue()


def _native_yaml(unit: Unit) -> str:
    conv = unit.conversion
    head = ""
    if conv is not None:
        loc = conv.doc.locate(())
        head = f"# kvgen convert: {conv.api_version} {conv.resource} ({loc})\n"
        head += "".join(f"# {note}\n" for note in conv.notes)
    return head + _yaml_text(unit.doc.data)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the spec."""
    from kvgen.spec.schema import schema_text

    sys.stdout.write(schema_text())


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    yaml = "yaml"


@app.command()
def explain(
    specs: SpecArgs,
    output_format: Annotated[
        OutputFormat,
        typer.Option(
            "-o",
            "--output",
            help="text (tables and a bar per budget), json (stable keys, see docs/explain.md) or yaml (the same data as "
            "json), as kubectl -o.",
        ),
    ] = OutputFormat.text,
    svg: Annotated[
        Path | None, typer.Option("--svg", help="Also write the text view as an SVG picture to this file.")
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            help="Replay a request trace (JSONL, Mooncake's FAST'25 format: timestamp, input_length, hash_ids) "
            "through the planned tiers: the hit ratio each tier serves, the curve against capacity, each routing "
            "mode, and the change that reaches 90% of the maximum (docs/sizing.md).",
        ),
    ] = None,
    trace_block_size: Annotated[
        int,
        typer.Option("--trace-block-size", min=1, help="Tokens one hash id of the trace covers (Mooncake's: 512)."),
    ] = 512,
    kube_version: KubeVersion = None,
    instance: Instance = None,
    exclude: Exclude = None,
    catalogs: Catalogs = None,
    quiet: Quiet = False,
    jobs: Jobs = None,
) -> None:
    """The planning view: the offloading decision and every rule checked, the memory and disk budget
    against the instance, and the capacity of each KV-cache tier in tokens and full-length sequences.
    A spec whose pod does not fit its node is shown too, the lines that do not fit marked, then its
    problems (exit 1)."""
    from kvgen.app import explain as explaining
    from kvgen.app.compiler import Unfit

    def action() -> None:
        replayed = None
        if trace is not None:
            from kvgen.traffic import replay
            from kvgen.traffic import trace as traces

            try:
                replayed = replay.Replayer(traces.read(str(trace), trace_block_size))
            except SpecError as exc:
                raise _Failed([exc]) from None
        _inputs_, out = _compile_all(
            specs, kube_version, instance, exclude, quiet, catalogs, jobs=jobs, keep_unfit=True
        )
        for w in [] if quiet else out.warnings:
            _warn(w)
        try:
            reports = [
                explaining.report(r.plan, r.conversion, r.source, r.problems if isinstance(r, Unfit) else [], replayed)
                for r in out.planned
            ]
        except SpecError as exc:
            raise _Failed([exc]) from None
        data = reports if len(reports) > 1 else reports[0]
        if output_format is OutputFormat.json:
            sys.stdout.write(json.dumps(data, indent=2) + "\n")
        elif output_format is OutputFormat.yaml:
            sys.stdout.write(_yaml_text(data))
        else:
            explaining.print_text(reports)
        if svg is not None:
            explaining.save_svg(reports, str(svg))
            _err(f"kvgen: wrote {svg}")
        if out.unfit:  # shown with the lines that do not fit marked; now the problems, as validate prints them
            by_file: dict[str, list[Problem]] = {}
            for u in out.unfit:
                by_file.setdefault(u.source, []).extend(u.problems)
            raise _Failed([SpecError(file, problems) for file, problems in sorted(by_file.items())])

    _run(action)


class DiffFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


def _side(
    name: str, text: str, kube_version: str | None, instance: str | None
) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """spec name -> (explain report, objects) of every spec of one side of kvgen diff."""
    from kvgen.app import explain as explaining
    from kvgen.app.compiler import Compiled, InputErrors, Unfit, compile_inputs
    from kvgen.input.dialects import Options

    try:
        out = compile_inputs([(name, text)], kube_version, Options(instance), keep_unfit=True)
    except InputErrors as exc:
        raise _Failed(exc.errors) from None
    sides: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for r in out.planned:
        problems = r.problems if isinstance(r, Unfit) else []
        objects = r.objects if isinstance(r, Compiled) else []
        sides[r.plan.spec.object_name] = (explaining.report(r.plan, r.conversion, r.source, problems), objects)
    return sides


def _at_revision(path: str, revision: str) -> str:
    """The file as it is at a git revision (git show REV:./NAME in its directory)."""
    import subprocess

    where = Path(path).resolve().parent
    try:
        result = subprocess.run(
            ["git", "show", f"{revision}:./{Path(path).name}"], cwd=where, capture_output=True, text=True
        )
    except OSError as exc:
        raise Usage(f"--against needs git: {exc}") from None
    if result.returncode != 0:
        raise Usage(f"--against {revision}: {result.stderr.strip() or 'git show failed'}")
    return result.stdout


@app.command()
def diff(
    old: Annotated[str, typer.Argument(help="The spec before the change (a file), or with --against the spec itself.")],
    new: Annotated[str | None, typer.Argument(help="The spec after the change (a file).")] = None,
    against: Annotated[
        str | None,
        typer.Option("--against", help="Compare OLD with itself at this git revision (HEAD, main, a commit)."),
    ] = None,
    output_format: Annotated[
        DiffFormat,
        typer.Option(
            "-o", "--output", help="text, json (stable keys: docs/diff.md) or markdown (a pull request comment)."
        ),
    ] = DiffFormat.text,
    kube_version: KubeVersion = None,
    instance: Instance = None,
    catalogs: Catalogs = None,
) -> None:
    """What a change to a spec does: the offloading decision, the pod's memory and disk, each KV-cache tier's
    size and tokens, context, routing, replicas, and the objects added, removed or changed (with the fields)."""
    from kvgen.app import diff as diffing

    def action() -> None:
        if (new is None) == (against is None):
            raise Usage("give OLD and NEW, or one spec and --against REVISION")
        _use_catalogs(catalogs)
        _check_version(kube_version)
        if against is not None:
            before_name, after_name = f"{old}@{against}", old
            before_text = _at_revision(old, against)
        else:
            assert new is not None
            before_name, after_name = old, new
            before_text = Path(old).read_text(encoding="utf-8")
        after_text = Path(after_name).read_text(encoding="utf-8")
        before = _side(before_name, before_text, kube_version, instance)
        after = _side(after_name, after_text, kube_version, instance)
        result = []
        for name in [*before, *(n for n in after if n not in before)]:
            a, b = before.get(name), after.get(name)
            only = before_name if b is None else (after_name if a is None else None)
            entry = diffing.compare(a and a[0], b and b[0], a[1] if a else [], b[1] if b else [])
            result.append({"name": name, "only": only, **entry})
        if output_format is DiffFormat.json:
            sys.stdout.write(json.dumps({"old": before_name, "new": after_name, "specs": result}, indent=2) + "\n")
        elif output_format is DiffFormat.markdown:
            sys.stdout.write(diffing.markdown(result, before_name, after_name))
        else:
            sys.stdout.write(diffing.text(result))

    _run(action)


catalog_app = typer.Typer(
    name="catalog",
    help="List and show what the catalog holds: the built-in models and instance types, with the rows of "
    "$KVGEN_CATALOG and --catalog files merged over them (as render sees them).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(catalog_app)

CatalogFormat = Annotated[
    OutputFormat,
    typer.Option("-o", "--output", help="text (a table), json or yaml (every field of each row, sorted by name)."),
]


def _catalog_rows(
    rows: list[dict[str, Any]], columns: tuple[tuple[str, str], ...], output_format: OutputFormat
) -> None:
    from kvgen.app import catalog_view

    if output_format is OutputFormat.json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    elif output_format is OutputFormat.yaml:
        sys.stdout.write(_yaml_text(rows))
    else:
        sys.stdout.write(catalog_view.table(rows, columns))


@catalog_app.command("models")
def catalog_models(output_format: CatalogFormat = OutputFormat.text, catalogs: Catalogs = None) -> None:
    """The models: name, weights (the checkpoint's size), its quantization, layers, KV heads and context
    length (maxModelLen)."""
    from kvgen.app import catalog_view

    def action() -> None:
        _use_catalogs(catalogs)
        _catalog_rows(catalog_view.models(), catalog_view.MODEL_COLUMNS, output_format)

    _run(action)


@catalog_app.command("instances")
def catalog_instances(
    gpu: Annotated[
        str | None,
        typer.Option(
            "--gpu",
            metavar="MODEL",
            help="Only types whose GPU model contains this (case-insensitive): A100, H100, L4.",
            show_default=False,
        ),
    ] = None,
    min_gpu_memory: Annotated[
        str | None,
        typer.Option(
            "--min-gpu-memory",
            metavar="QUANTITY",
            help="Only types whose GPUs have at least this much memory each (a Kubernetes quantity: 80Gi).",
            show_default=False,
        ),
    ] = None,
    output_format: CatalogFormat = OutputFormat.text,
    catalogs: Catalogs = None,
) -> None:
    """The instance types: name, GPUs, GPU model, memory per GPU, host RAM and local disk."""
    from kvgen.app import catalog_view
    from kvgen.core import quantity
    from kvgen.core.errors import quoted

    def action() -> None:
        least = None
        if min_gpu_memory is not None:
            try:
                least = quantity.to_bytes(min_gpu_memory)
            except (ValueError, TypeError):
                raise Usage(
                    f"--min-gpu-memory {quoted(min_gpu_memory)} is not a quantity (such as 80Gi or 40G)"
                ) from None
        _use_catalogs(catalogs)
        rows = catalog_view.instances(gpu, least)
        _catalog_rows(rows, catalog_view.INSTANCE_COLUMNS, output_format)

    _run(action)


def _catalog_names(incomplete: str) -> list[str]:
    """Shell completion of `kvgen catalog show`: the built-in names that start with what was typed."""
    from kvgen.data import catalog

    return sorted(n for n in [*catalog.models(), *catalog.instances()] if n.startswith(incomplete))


@catalog_app.command("show")
def catalog_show(
    name: Annotated[
        str,
        typer.Argument(help="A model id or an instance type.", autocompletion=_catalog_names, show_default=False),
    ],
    output_format: Annotated[
        OutputFormat, typer.Option("-o", "--output", help="yaml (the default; text is the same) or json.")
    ] = OutputFormat.yaml,
    catalogs: Catalogs = None,
) -> None:
    """One model or instance type in full, as a catalog file holds it (copy it into one to describe your own)."""
    from kvgen.app import catalog_view

    def action() -> None:
        _use_catalogs(catalogs)
        try:
            row = catalog_view.show(name)
        except catalog_view.UnknownName as exc:
            _err(f"error: {exc.message}")
            _err(f"    hint: {exc.hint}")
            raise typer.Exit(EXIT_INVALID_INPUT) from None
        sys.stdout.write(json.dumps(row, indent=2) + "\n" if output_format is OutputFormat.json else _yaml_text(row))

    _run(action)


@catalog_app.command("import")
def catalog_import(
    path: Annotated[
        Path,
        typer.Argument(
            help="A Hugging Face config.json, or a directory holding one (a downloaded snapshot); an "
            "hf_quant_config.json beside it (NVIDIA ModelOpt checkpoints) is read too.",
            show_default=False,
        ),
    ],
    model_id: Annotated[str, typer.Option("--id", help="The model id the row is for, e.g. acme/llama-3.1-8b-ft.")],
) -> None:
    """Print the catalog row of a model from its config.json, derived as kvgen's built-in rows are (KV-cache
    geometry, the sizes tensor parallelism must divide, layer kinds, quantization, weights): a catalog file for
    kvgen --catalog FILE and helm -f FILE. A config kvgen cannot size is refused with the reason."""
    from kvgen.input import model_config

    def action() -> None:
        try:
            row, config_path = model_config.row(path)
        except model_config.ConfigError as exc:
            raise _Failed([SpecError(str(path), [Problem(("config.json",), str(exc))])]) from None
        row["source"] += " (kvgen catalog import)"
        sys.stdout.write(
            f"# {model_id}: kvgen catalog import {config_path}; use it with kvgen --catalog FILE or helm -f FILE\n"
        )
        sys.stdout.write(_yaml_text({"catalog": {"models": {model_id: row}}}))

    _run(action)


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@app.command()
def completion(shell: Annotated[Shell, typer.Argument(help="bash, zsh, fish or powershell.")]) -> None:
    """Print the shell completion script, as helm completion and kubectl completion do:
    `source <(kvgen completion bash)`, or save it where your shell loads completions."""
    # typer.completion re-exports it without __all__; its home is the private _completion_shared
    from typer.completion import get_completion_script  # type: ignore[attr-defined]

    script = get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell.value)
    sys.stdout.write(script + "\n")


def _version(value: bool) -> None:
    """`kvgen --version`: kvgen's version and the runtimes it emits flags for (files/runtime.yaml)."""
    if value:
        from kvgen.data import catalog

        rt = catalog.runtime()
        sys.stdout.write(f"kvgen {__version__} (vLLM {rt['vllm']['version']}, LMCache {rt['lmcache']['version']})\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """kvgen: vLLM + KV-cache offloading manifests, sized and checked."""


def main() -> None:
    if COMPLETE_VAR in os.environ:  # the completion script asks for completions: typer's shell classes answer
        from typer.completion import completion_init  # type: ignore[attr-defined]  # re-exported, no __all__

        completion_init()
    try:
        app(prog_name=PROG)  # also as `python -m kvgen`: the completion scripts call `kvgen`
    except KeyboardInterrupt:  # outside a command (while starting up): no traceback either
        _err("kvgen: interrupted")
        sys.exit(EXIT_INTERRUPTED)
