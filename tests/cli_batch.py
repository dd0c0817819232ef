"""Many bad specs through one CLI process: ``kvgen validate`` and ``kvgen render`` report every
file's problems at once, each file under its own header, so one run answers what one run per file
answered (the per-file lines, line numbers and hints), in a fraction of the time.

Where the process itself is the subject (its exit code for one file, signals, a tty, stdin, a crash
mid-commit), a test runs its own process (conftest.run_kvgen); here the exit code and the files
written are those of the whole batch.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from conftest import run_kvgen


@dataclass(frozen=True)
class Batch:
    result: subprocess.CompletedProcess[str]
    files: dict[str, Path]  # case -> the file it was written to
    blocks: dict[str, str]  # case -> its part of stderr: the header and its indented lines

    def problems(self, case: str) -> list[str]:
        """The case's problem lines ("FILE:LINE:COL: path: message"), stripped, in order."""
        prefix = str(self.files[case]) + ":"
        return [line.strip() for line in self.blocks.get(case, "").splitlines() if line.strip().startswith(prefix)]


def run(command: str, texts: dict[str, str], directory: Path, *args: str) -> Batch:
    """``kvgen COMMAND FILE... ARGS`` over one file per case (named after it, in ``directory``)."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {}
    for case, text in texts.items():
        f = directory / f"{case}.yaml"
        f.write_text(text, encoding="utf-8")
        files[case] = f
    result = run_kvgen(command, *map(str, files.values()), *args)
    by_header = {f"error: {f}: ": case for case, f in files.items()}
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in result.stderr.splitlines():
        if line.startswith("error: "):
            current = next((case for header, case in by_header.items() if line.startswith(header)), None)
            if current is not None:
                blocks.setdefault(current, []).append(line)
            continue
        if line.startswith("  ") and current is not None:
            blocks[current].append(line)
        else:
            current = None
    return Batch(result, files, {case: "\n".join(lines) for case, lines in blocks.items()})
