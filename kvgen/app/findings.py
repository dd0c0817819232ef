"""The problems and warnings of one ``kvgen validate`` or ``kvgen render`` as CI shows them (issue 36):
``--codequality FILE``, GitLab's code-quality report (a JSON array its merge request widget and
``artifacts:reports:codequality`` read), and ``--summary FILE``, a Markdown summary of the run appended
to a file (GitHub Actions' job summary, ``$GITHUB_STEP_SUMMARY``). docs/ci.md says what each holds.

GitLab's format (docs.gitlab.com, "Code Quality", "Implement a custom tool"): an array of objects with
``description``, ``check_name``, ``fingerprint``, ``severity`` (info, minor, major, critical, blocker) and
``location.path`` (relative to the repository) with ``location.lines.begin``. An error is ``major``, a
warning ``minor``. The fingerprint identifies a finding across runs (GitLab compares the merge request's
report with the target branch's by it): a hash of the file, the spec path, the message and how many
identical ones came before it in this run, never of the line (a line added above a problem does not
make it a new one).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEVERITY = {"error": "major", "warning": "minor"}  # GitLab's code-quality severities
# what the exit code of validate and render says, as the summary's heading
OUTCOMES = {0: "passed", 1: "failed", 2: "usage error", 3: "invalid output", 4: "internal error", 5: "stale"}
REPORTED_EXITS = frozenset({0, 1, 3, 5})  # the inputs were read: the code-quality report says what they hold
SUMMARY_ROWS = 200  # a job summary holds at most 1 MiB (GitHub): the rest of a long list is in the log


@dataclass(frozen=True)
class Finding:
    level: str  # error or warning
    message: str  # one line
    file: str  # as the command was given it ('' when unknown)
    line: int  # 1-based; 1 when only the file is known
    where: str  # the spec path ('' when none)
    check: str  # kvgen/<the problem's code or spec path>, kvgen/warning, kvgen/stale, kvgen/output-dir


def one_line(text: str) -> str:
    """A problem as rendered (its hint on an indented second line) on one line."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def relative(file: str, cwd: Path | None = None) -> str:
    """A file as a repository path: relative to the working directory when it lies below it (CI runs in
    the checkout's root), '/'-separated, without a leading './'."""
    if not file:
        return file
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(cwd or Path.cwd())
        except ValueError:
            pass
    return path.as_posix()


def codequality(findings: list[Finding], cwd: Path | None = None) -> list[dict[str, Any]]:
    """The findings as GitLab's code-quality report."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for f in findings:
        path = relative(f.file, cwd)
        key = (path, f.where, f.message)
        n = seen.get(key, 0)
        seen[key] = n + 1
        fingerprint = hashlib.sha256("\0".join([*key, str(n)]).encode("utf-8")).hexdigest()
        out.append(
            {
                "description": f.message,
                "check_name": f.check,
                "fingerprint": fingerprint,
                "severity": SEVERITY[f.level],
                "location": {"path": path, "lines": {"begin": max(f.line, 1)}},
            }
        )
    return out


def _cell(text: str) -> str:
    """Text in a Markdown table cell: a '|' escaped, no line break, no HTML."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def summary(command: str, exit_code: int, outcome: str, findings: list[Finding], cwd: Path | None = None) -> str:
    """The run as Markdown: a heading with its outcome, the last line kvgen printed, and a table of the
    problems and warnings at their file:line."""
    status = OUTCOMES.get(exit_code, "interrupted" if exit_code == 130 else f"exit {exit_code}")
    if exit_code:
        status += f" (exit {exit_code})"
    errors = sum(f.level == "error" for f in findings)
    warnings = len(findings) - errors
    counts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((errors, "error"), (warnings, "warning")) if n]
    heading = f"### kvgen {command}: {status}" + (f", {', '.join(counts)}" if counts else "")
    out = [heading, ""]
    if outcome:
        out += [_cell(outcome), ""]
    if findings:
        out += ["| | where | what |", "|---|---|---|"]
        for f in findings[:SUMMARY_ROWS]:
            path = relative(f.file, cwd)
            where = f"`{_cell(path)}:{f.line}`" if path else ""
            out.append(f"| {f.level} | {where} | {_cell(f.message)} |")
        out.append("")
        if len(findings) > SUMMARY_ROWS:
            out += [f"And {len(findings) - SUMMARY_ROWS} more in the job's log.", ""]
    return "\n".join(out) + "\n"


@dataclass
class Sink:
    """What one command collects for --codequality and --summary, and writes when it ends."""

    command: str  # as the summary names it: validate, render, render --check
    codequality_to: str | None  # a file, or '-' for stdout
    summary_to: str | None  # a file, appended to
    fallback: str = ""  # the file a finding without one is shown at: the first input
    findings: list[Finding] = field(default_factory=list)
    outcome: str = ""  # the command's last line
    _opened: set[str] = field(default_factory=set)

    def open(self) -> None:
        """Make sure each file can be written before anything runs (OSError otherwise), changing nothing: a
        report created here is removed again if the command ends before it read its inputs (a usage error)."""
        if self.codequality_to is not None and self.codequality_to != "-":
            existed = os.path.lexists(self.codequality_to)
            with open(self.codequality_to, "a", encoding="utf-8"):
                pass
            self._opened.add("codequality" if existed else "codequality-created")
        if self.summary_to is not None:
            with open(self.summary_to, "a", encoding="utf-8"):
                pass
            self._opened.add("summary")

    def add(
        self, level: str, message: str, file: str | None, line: int | None = None, where: str = "", check: str = ""
    ) -> None:
        self.findings.append(
            Finding(level, one_line(message), file or self.fallback, line or 1, where, check or "kvgen/warning")
        )

    def close(self, exit_code: int) -> list[str]:
        """Write the report (when the inputs were read) and the summary; the errors writing them."""
        errors = []
        if self.codequality_to is not None and exit_code in REPORTED_EXITS:
            text = json.dumps(codequality(self.findings), indent=2) + "\n"
            try:
                if self.codequality_to == "-":
                    sys.stdout.write(text)
                elif self._opened & {"codequality", "codequality-created"}:
                    Path(self.codequality_to).write_text(text, encoding="utf-8")
            except OSError as exc:
                errors.append(f"--codequality {self.codequality_to}: {exc.strerror or exc}")
        elif "codequality-created" in self._opened and self.codequality_to is not None:
            Path(self.codequality_to).unlink(missing_ok=True)  # no report rather than an empty file GitLab cannot read
        if "summary" in self._opened:
            try:
                with open(self.summary_to or os.devnull, "a", encoding="utf-8") as f:
                    f.write(summary(self.command, exit_code, self.outcome, self.findings))
            except OSError as exc:
                errors.append(f"--summary {self.summary_to}: {exc.strerror or exc}")
        return errors
