"""Replay: a finished run's output, recorded, and replayed when nothing it depends on changed.

kvgen's output is a pure function of its inputs: the same spec bytes, options, environment and
installation give the same bytes on stdout and stderr and the same exit code. CI pipelines and
pre-commit hooks re-run `kvgen render|validate|explain` on unchanged specs all day, and most of
such a run is Python importing pydantic, typer and jinja2. So a finished run is recorded in the
cache (kvgen.core.diskcache's directory, `runs/`) under a key hashing everything its output can
depend on, and the next identical run writes the recorded output without importing the compiler.

The key covers: the arguments (and the program name), the working directory, the bytes of every
argument that names a regular file (or whose --option=VALUE does, as --catalog=FILE), the
environment variables kvgen, typer or rich read (all `KVGEN_*`, terminal and locale settings; a
variable naming a file, or a ':'-separated list of files as KVGEN_CATALOG may, adds their bytes),
whether stdout and stderr are terminals, the Python version, the installed distributions (their
dist-info names, so a dependency upgrade is a new key) and the bytes of kvgen itself (its
modules, templates, schemas and data files). A run also notes the files its specs name (``model.config``,
kvgen.core.reads) with their digests: it is replayed only while they hold the same bytes.

Not recorded, always run: a command other than render, validate and explain; `render -o DIR`
(`--output-dir`; it writes files) and `explain --svg` (it writes a file); a directory or stdin
(`-`) among the arguments; stdout on a terminal (progress bars, colours); shell completion; any
exit code but 0 and 1 (a usage error may depend on the file system, an internal error must show
up again).
KVGEN_REPLAY=off turns recording and replay off (KVGEN_CACHE_DIR=off turns off every cache).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from kvgen.core import reads

FORMAT = "3"  # bump when the meaning of an entry or the derivation of its key changes
COMMANDS = frozenset({"render", "validate", "explain"})
RECORDED_EXITS = frozenset({0, 1})
MAX_ENTRIES = 512  # beyond this, the oldest entries are removed (down to 3/4 of it) when a new one is written
MAX_OUTPUT_CHARS = 4 << 20  # a larger run is not recorded

# Options that make a command write files: such runs are never replayed.
_WRITES_FILES = {"render": ("-o", "--output", "--output-dir"), "explain": ("--svg",)}
# Environment read by kvgen (KVGEN_*), click/typer and rich (terminal size, colour, encoding).
_ENV_PREFIXES = ("KVGEN_", "TERM", "TTY_", "JUPYTER_", "LC_", "PYTHON", "CLICOLOR")
_ENV_NAMES = frozenset({"COLUMNS", "LINES", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "LANG", "LANGUAGE", "HOME"})
_COMPLETION_PREFIXES = ("_KVGEN", "_TYPER")  # shell completion is driven by these variables


def _directory() -> Path | None:
    from kvgen.core import diskcache

    base = diskcache.directory()
    return None if base is None else base.parent / "runs"


def _regular_file_bytes(path: str) -> bytes | None:
    """The bytes of a regular file (symlinks followed), None if ``path`` names none."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            return fh.read()
    except (OSError, ValueError):
        return None


def _add_files(h: Any, paths: list[str]) -> None:
    """Hash the bytes of each distinct path that names a regular file (the others add nothing)."""
    for path in dict.fromkeys(p for p in paths if p):
        data = _regular_file_bytes(path)
        if data is not None:
            h.update(f"file\0{len(path)}\0{path}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
            h.update(data)


def _installation(h: Any) -> None:
    """kvgen's own bytes and the installed distributions' names and versions."""
    from kvgen.core import paths

    package = Path(__file__).resolve().parents[1]  # all of kvgen/, not only output/
    roots = [package, paths.templates_dir(), paths.files_dir()]
    seen: set[Path] = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                path = Path(dirpath, name)
                if path in seen or name.endswith((".pyc", ".pyo")):
                    continue
                seen.add(path)
                data = path.read_bytes()
                h.update(f"{path}\0{len(data)}\0".encode())
                h.update(data)
    for entry in sys.path:
        if entry.endswith("-packages") and os.path.isdir(entry):
            h.update("\0".join(sorted(n for n in os.listdir(entry) if n.endswith(".dist-info"))).encode())


def key(argv: list[str], environ: dict[str, str], stdout_tty: bool, stderr_tty: bool) -> str | None:
    """The key of a run of ``kvgen *argv``, or None when such a run is never recorded."""
    if not argv or argv[0] not in COMMANDS or stdout_tty or environ.get("KVGEN_REPLAY") == "off":
        return None
    writes = _WRITES_FILES.get(argv[0], ())
    if any(a == w or a.startswith(w + "=") or (w == "-o" and a.startswith("-o")) for a in argv for w in writes):
        return None
    if any(name.startswith(_COMPLETION_PREFIXES) for name in environ):
        return None
    h = hashlib.sha256(f"kvgen-replay {FORMAT}\0{sys.version}\0{os.path.basename(sys.argv[0])}\0".encode())
    try:
        h.update(f"{os.getcwd()}\0{stdout_tty}\0{stderr_tty}\0".encode())
    except OSError:  # the working directory was removed
        return None
    for arg in argv:
        if arg == "-":
            return None
        h.update(f"arg\0{len(arg)}\0{arg}\0".encode("utf-8", "surrogateescape"))
        if os.path.isdir(arg):
            return None
        # a file named by the argument, or by the value of --option=FILE (--catalog=FILE)
        _add_files(h, [arg, arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else ""])
    for name in sorted(environ):
        if name.startswith(_ENV_PREFIXES) or name in _ENV_NAMES:
            value = environ[name]
            h.update(f"env\0{name}\0{len(value)}\0{value}\0".encode("utf-8", "surrogateescape"))
            # a file the variable names, or each of a list of them (KVGEN_CATALOG=a.yaml:b.yaml)
            _add_files(h, [value, *value.split(os.pathsep)])
    try:
        _installation(h)
    except OSError:
        return None
    return h.hexdigest()


def _entry_path(run_key: str) -> Path | None:
    base = _directory()
    return None if base is None else base / f"{run_key}.json"


def lookup(run_key: str) -> dict[str, Any] | None:
    """The recorded run, or None (not recorded, unreadable or corrupt)."""
    path = _entry_path(run_key)
    if path is None:
        return None
    try:
        with path.open("rb") as fh:
            entry = json.loads(fh.read())
        os.utime(path)  # recently used: removed last
    except (OSError, ValueError):
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("key") != run_key
        or entry.get("exit") not in RECORDED_EXITS
        or not isinstance(entry.get("stdout"), str)
        or not isinstance(entry.get("stderr"), str)
        or not isinstance(entry.get("reads", {}), dict)
        or not reads.unchanged(entry.get("reads", {}))  # a file the spec names (model.config) changed
    ):
        return None
    return entry


def store(run_key: str, exit_code: int, stdout: str, stderr: str) -> None:
    """Record a finished run; never fails (a read-only or full cache just records nothing)."""
    path = _entry_path(run_key)
    if path is None or exit_code not in RECORDED_EXITS or len(stdout) + len(stderr) > MAX_OUTPUT_CHARS:
        return
    from kvgen.core import diskcache

    entry = {"key": run_key, "exit": exit_code, "stdout": stdout, "stderr": stderr, "reads": reads.noted()}
    text = json.dumps(entry, ensure_ascii=False)
    try:
        diskcache.write_file(path, text)
        _prune(path.parent)
    except (OSError, UnicodeEncodeError):  # UnicodeEncodeError: a lone surrogate (a file name that is not UTF-8)
        pass


def _prune(directory: Path) -> None:
    """Beyond MAX_ENTRIES records, remove the oldest down to 3/4 of it: counting names is cheap, so
    only one store in MAX_ENTRIES / 4 pays for reading every record's time."""
    with os.scandir(directory) as found:
        names = [e.name for e in found if e.name.endswith(".json")]
    if len(names) <= MAX_ENTRIES:
        return
    entries = []
    for name in names:
        try:
            entries.append((os.stat(directory / name).st_mtime_ns, name))
        except OSError:
            continue
    for _, name in sorted(entries)[: max(0, len(entries) - MAX_ENTRIES * 3 // 4)]:
        try:
            os.unlink(directory / name)
        except OSError:
            pass


class _Tee(io.TextIOBase):
    """A text stream that writes through to ``target`` and keeps a copy of what was written."""

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self.parts: list[str] = []
        self.whole = True  # False once something other than text went through

    def write(self, s: Any) -> int:  # Any: a caller may pass bytes, which the target refuses
        written = self._target.write(s)  # first: what the target refuses (bytes, say) is not kept
        if isinstance(s, str):
            self.parts.append(s)
        else:
            self.whole = False
        return written

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase declares it read-only
        return self._target.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._target.errors

    @property
    def buffer(self) -> Any:
        raise AttributeError("kvgen records text output only")  # so nothing bypasses the copy


@contextmanager
def _recording() -> Iterator[tuple[_Tee, _Tee]]:
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = out._target, err._target


def _isatty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):
        return False


def run(main: Any, argv: list[str]) -> None:
    """Replay the recorded run of ``kvgen *argv`` if there is one, else run ``main()`` and record it."""
    run_key = key(argv, dict(os.environ), _isatty(sys.stdout), _isatty(sys.stderr))
    reads.forget()  # the files this run reads, from here
    if run_key is None:
        main()
        return
    entry = lookup(run_key)
    if entry is not None:
        sys.stdout.write(entry["stdout"])
        sys.stderr.write(entry["stderr"])
        sys.stdout.flush()
        sys.stderr.flush()
        raise SystemExit(entry["exit"])
    with _recording() as (out, err):
        try:
            main()
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code
            if isinstance(code, int) and out.whole and err.whole:
                store(run_key, code, "".join(out.parts), "".join(err.parts))
            raise
        if out.whole and err.whole:
            store(run_key, 0, "".join(out.parts), "".join(err.parts))
