"""The kvgen command line.

Exit codes (also in `kvgen --help` and the README):
  0  success
  1  invalid input: a spec with problems (each named with its spec path and file:line)
  2  usage error: unknown option, missing argument, unreadable file
  3  invalid output: a rendered object failed Kubernetes validation (a kvgen bug; please report it)
  4  internal error
"""

from __future__ import annotations

import json
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from kvgen import __version__, kube
from kvgen.errors import OutputInvalidError, SpecError

EXIT_OK, EXIT_INVALID_INPUT, EXIT_USAGE, EXIT_INVALID_OUTPUT, EXIT_INTERNAL = 0, 1, 2, 3, 4

EPILOG = (
    "Exit codes: 0 ok; 1 invalid input (every problem listed with its spec path and file:line); "
    "2 usage error; 3 invalid output (a rendered object failed Kubernetes validation); 4 internal error."
)

app = typer.Typer(
    name="kvgen",
    help="Compile a kvgen spec into Kubernetes manifests for vLLM with KV-cache offloading.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

SpecArgs = Annotated[
    list[str],
    typer.Argument(help="Spec files or directories of specs ('-' reads stdin).", show_default=False),
]
KubeVersion = Annotated[
    str, typer.Option("--kube-version", help="Kubernetes version to validate the output against.")
]


class Usage(Exception):
    pass


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")


def _inputs(specs: list[str]) -> list[tuple[str, str]]:
    """(display name, text) for every input, directories expanded in sorted order."""
    out: list[tuple[str, str]] = []
    for item in specs:
        if item == "-":
            out.append(("<stdin>", sys.stdin.read()))
            continue
        path = Path(item)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            if not files:
                raise Usage(f"{item}: no .yaml or .yml files in this directory")
            out += [(str(p), p.read_text(encoding="utf-8")) for p in files]
        elif path.is_file():
            out.append((item, path.read_text(encoding="utf-8")))
        else:
            raise Usage(f"{item}: no such file or directory")
    return out


def _compile_all(specs: list[str], version: str):
    from kvgen.compiler import compile_text

    try:
        kube.schema_dir(version)
    except kube.UnsupportedVersion as exc:
        raise Usage(str(exc)) from None
    results, errors = [], []
    for name, text in _inputs(specs):
        try:
            results += compile_text(text, name, version)
        except SpecError as exc:
            errors.append(exc)
    if errors:
        raise _Failed(errors)
    return results


class _Failed(Exception):
    def __init__(self, errors: list[SpecError]):
        self.errors = errors


def _report(results, quiet: bool) -> None:
    if quiet:
        return
    for r in results:
        p = r.plan
        d = p.decision
        if d.enabled:
            detail = f"{p.backend} backend"
            _err(f"kvgen: {r.spec.name}: KV-cache offloading enabled ({detail})")
        else:
            _err(f"kvgen: {r.spec.name}: KV-cache offloading disabled: {d.reason_code} ({d.reason})")
        for w in p.warnings:
            _err(f"kvgen: {r.spec.name}: warning: {w}")


def _run(action) -> None:
    try:
        action()
    except Usage as exc:
        _err(f"error: {exc}")
        raise typer.Exit(EXIT_USAGE) from None
    except _Failed as exc:
        total = sum(len(e.problems) for e in exc.errors)
        for e in exc.errors:
            _err(f"error: {e}")
        _err(f"kvgen: {total} problem{'s' if total != 1 else ''} found; nothing was written")
        raise typer.Exit(EXIT_INVALID_INPUT) from None
    except OutputInvalidError as exc:
        _err("error: the rendered objects are not valid Kubernetes (this is a kvgen bug, please report it):")
        for m in exc.messages:
            _err(f"  {m}")
        raise typer.Exit(EXIT_INVALID_OUTPUT) from None
    except typer.Exit:
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        if os.environ.get("KVGEN_DEBUG"):
            raise
        _err(f"internal error: {type(exc).__name__}: {exc} (set KVGEN_DEBUG=1 for a traceback)")
        raise typer.Exit(EXIT_INTERNAL) from None


@app.command()
def render(
    specs: SpecArgs,
    output: Annotated[
        Optional[Path],
        typer.Option("-o", "--output", help="Write one <name>.yaml per spec into this directory instead of stdout."),
    ] = None,
    kube_version: KubeVersion = kube.DEFAULT_VERSION,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="Do not print decisions and warnings on stderr.")] = False,
) -> None:
    """Render specs to Kubernetes YAML (multi-document on stdout, or one file per spec with -o)."""

    def action():
        results = _compile_all(specs, kube_version)
        names = [r.spec.name for r in results]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if output is not None and dupes:
            raise Usage(f"several specs are named {', '.join(dupes)}; each needs its own name to get its own file")
        _report(results, quiet)
        if output is None:
            sys.stdout.write("".join(r.yaml for r in results))
            return
        output.mkdir(parents=True, exist_ok=True)
        for r in results:
            (output / f"{r.spec.name}.yaml").write_text(r.yaml, encoding="utf-8")

    _run(action)


@app.command()
def validate(specs: SpecArgs, kube_version: KubeVersion = kube.DEFAULT_VERSION) -> None:
    """Check specs and the objects they render, without writing anything."""

    def action():
        results = _compile_all(specs, kube_version)
        _report(results, quiet=False)
        for r in results:
            _err(f"ok: {r.source}: {r.spec.name} ({len(r.objects)} objects valid for Kubernetes {kube_version})")

    _run(action)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the spec."""
    from kvgen.schema import schema_text

    sys.stdout.write(schema_text())


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


@app.command()
def explain(
    specs: SpecArgs,
    output_format: Annotated[OutputFormat, typer.Option("--output", help="text (tables) or json.")] = OutputFormat.text,
    kube_version: KubeVersion = kube.DEFAULT_VERSION,
) -> None:
    """Explain the offloading decision (every rule checked) and the sizing of each spec."""
    from kvgen import explain as explaining

    def action():
        results = _compile_all(specs, kube_version)
        reports = [explaining.report(r.plan) for r in results]
        if output_format is OutputFormat.json:
            sys.stdout.write(json.dumps(reports if len(reports) > 1 else reports[0], indent=2) + "\n")
        else:
            explaining.print_text(reports)

    _run(action)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"kvgen {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """kvgen: vLLM + KV-cache offloading manifests, sized and checked."""


def main() -> None:
    app()
