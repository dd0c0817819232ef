"""kvgen.output.replay: an identical run is replayed from its record; anything its output depends on is a new run."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvgen.core import paths, reads
from kvgen.output import replay

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "examples" / "kaito-gemma-4-12b.yaml"
GOLDEN = ROOT / "golden" / "kaito-gemma-4-12b.yaml"
BROKEN = "name: x\nmodel: {id: google/gemma-3-12b-it}\ninstance: {type: nope}\n"


def _kvgen(cache: Path, *args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("KVGEN_", "_KVGEN"))}
    environ.update({"KVGEN_CACHE_DIR": str(cache), **env})
    return subprocess.run([sys.executable, "-m", "kvgen", *args], cwd=cwd, capture_output=True, text=True, env=environ)


def _records(cache: Path) -> list[Path]:
    return sorted((cache / "runs").glob("*.json")) if (cache / "runs").is_dir() else []


def _tamper(record: Path, stdout: str) -> None:
    entry = json.loads(record.read_text())
    entry["stdout"] = stdout
    record.write_text(json.dumps(entry))


@pytest.mark.heavy
def test_a_second_identical_render_is_replayed_from_its_record(tmp_path):
    first = _kvgen(tmp_path, "render", str(SPEC))
    assert first.returncode == 0 and first.stdout == GOLDEN.read_text()
    (record,) = _records(tmp_path)
    second = _kvgen(tmp_path, "render", str(SPEC))
    assert (second.returncode, second.stdout, second.stderr) == (0, first.stdout, first.stderr)
    _tamper(record, "replayed\n")  # what a replay prints comes from the record, not from a new compile
    assert _kvgen(tmp_path, "render", str(SPEC)).stdout == "replayed\n"


@pytest.mark.heavy
def test_a_changed_spec_option_or_variable_is_a_new_run(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.read_text())
    cache = tmp_path / "cache"
    assert _kvgen(cache, "render", str(spec)).returncode == 0
    (record,) = _records(cache)
    _tamper(record, "stale\n")
    spec.write_text(SPEC.read_text().replace("name: gemma-4-12b", "name: other"))
    changed = _kvgen(cache, "render", str(spec))
    assert changed.returncode == 0 and "name: other" in changed.stdout and "stale" not in changed.stdout
    spec.write_text(SPEC.read_text())  # the original bytes again: the (tampered) record of that run
    assert _kvgen(cache, "render", str(spec)).stdout == "stale\n"
    for args, env in (
        (("render", "-q", str(spec)), {}),
        (("render", str(spec)), {"KVGEN_ANYTHING": "1"}),
        (("render", str(spec)), {"COLUMNS": "40"}),
    ):
        assert _kvgen(cache, *args, **env).stdout == GOLDEN.read_text(), (args, env)


@pytest.mark.heavy
def test_an_invalid_spec_replays_its_problems_and_exit_code(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(BROKEN)
    first = _kvgen(tmp_path / "c", "validate", str(spec))
    assert first.returncode == 1 and "instance.type" in first.stderr and "bad.yaml:3" in first.stderr
    assert len(_records(tmp_path / "c")) == 1
    second = _kvgen(tmp_path / "c", "validate", str(spec))
    assert (second.returncode, second.stdout, second.stderr) == (1, first.stdout, first.stderr)


@pytest.mark.heavy
def test_explain_text_replays_byte_for_byte(tmp_path):
    first = _kvgen(tmp_path, "explain", str(SPEC))
    second = _kvgen(tmp_path, "explain", str(SPEC))
    assert first.returncode == 0 and "gemma-4-12b" in first.stdout
    assert (second.stdout, second.stderr) == (first.stdout, first.stderr) and len(_records(tmp_path)) == 1


@pytest.mark.heavy
@pytest.mark.parametrize(
    "args",
    [
        ("render", str(SPEC), "-o", "OUT"),  # writes files
        ("render", str(SPEC), "--output=OUT"),
        ("render", str(SPEC), "-oOUT"),
        ("explain", str(SPEC), "--svg", "OUT.svg"),  # writes a file
        ("render", "examples"),  # a directory: its listing is not in the key
        ("convert", str(SPEC)),  # not a recorded command
        ("render", "--no-such-option", str(SPEC)),  # exit 2
        ("render", "missing.yaml"),  # exit 2
    ],
)
def test_runs_that_are_never_recorded(tmp_path, args):
    args = tuple(a.replace("OUT", str(tmp_path / "out")) for a in args)
    _kvgen(tmp_path / "c", *args)
    assert _records(tmp_path / "c") == []


@pytest.mark.heavy
def test_stdin_and_an_off_cache_are_never_recorded(tmp_path):
    environ = {**os.environ, "KVGEN_CACHE_DIR": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "kvgen", "render", "-"],
        input=SPEC.read_text(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=environ,
    )
    assert run.returncode == 0 and _records(tmp_path) == []
    assert _kvgen(tmp_path, "render", str(SPEC), KVGEN_CACHE_DIR="off").returncode == 0
    assert not (ROOT / "off").exists() and _records(tmp_path) == []


def test_the_key_covers_what_output_depends_on(tmp_path, monkeypatch):
    spec = tmp_path / "s.yaml"
    spec.write_text("a")
    monkeypatch.chdir(tmp_path)
    base = replay.key(["render", "s.yaml"], {}, False, False)
    assert base is not None and base == replay.key(["render", "s.yaml"], {"PATH": "/x", "OLDPWD": "/y"}, False, False)
    variants = {
        "stderr a terminal": replay.key(["render", "s.yaml"], {}, False, True),
        "another option": replay.key(["render", "s.yaml", "-q"], {}, False, False),
        "a kvgen variable": replay.key(["render", "s.yaml"], {"KVGEN_CATALOG": "x"}, False, False),
        "terminal width": replay.key(["render", "s.yaml"], {"COLUMNS": "100"}, False, False),
        "colour": replay.key(["render", "s.yaml"], {"NO_COLOR": "1"}, False, False),
    }
    spec.write_text("b")
    variants["the spec's bytes"] = replay.key(["render", "s.yaml"], {}, False, False)
    spec.write_text("a")
    (tmp_path / "cat.yaml").write_text("1")
    with_catalog = replay.key(["render", "s.yaml"], {"KVGEN_CATALOG": "cat.yaml"}, False, False)
    (tmp_path / "cat.yaml").write_text("2")
    variants["a file a variable names"] = replay.key(["render", "s.yaml"], {"KVGEN_CATALOG": "cat.yaml"}, False, False)
    assert with_catalog not in (None, variants["a file a variable names"])
    (tmp_path / "sub").mkdir()
    shutil.copy(spec, tmp_path / "sub" / "s.yaml")
    monkeypatch.chdir(tmp_path / "sub")
    variants["the working directory"] = replay.key(["render", "s.yaml"], {}, False, False)
    monkeypatch.chdir(tmp_path)
    assert replay.key(["render", "s.yaml"], {}, False, False) == base
    keys = list(variants.values())
    assert None not in keys and base not in keys and len(set(keys)) == len(keys), variants


def test_the_key_covers_kvgen_itself(tmp_path, monkeypatch):
    """A changed data file, template or module of kvgen is a new key (an upgrade is never replayed stale)."""
    (tmp_path / "s.yaml").write_text("a")
    monkeypatch.chdir(tmp_path)
    files = tmp_path / "files"
    shutil.copytree(paths.files_dir(), files)
    monkeypatch.setattr(paths, "files_dir", lambda: files)
    before = replay.key(["render", "s.yaml"], {}, False, False)
    with (files / "models.yaml").open("a") as fh:
        fh.write("\n")
    after = replay.key(["render", "s.yaml"], {}, False, False)
    assert None not in (before, after) and before != after


@pytest.mark.parametrize(
    "argv, env, stdout_tty",
    [
        (["render", "s.yaml"], {}, True),  # a terminal: progress and colour
        (["render", "s.yaml"], {"_KVGEN_COMPLETE": "bash_complete"}, False),  # shell completion
        (["schema"], {}, False),
        (["render", "s.yaml"], {"KVGEN_REPLAY": "off"}, False),
        ([], {}, False),
    ],
)
def test_no_key_for_runs_that_are_not_recorded(tmp_path, monkeypatch, argv, env, stdout_tty):
    (tmp_path / "s.yaml").write_text("a")
    monkeypatch.chdir(tmp_path)
    assert replay.key(argv, env, stdout_tty, False) is None


def test_old_records_are_removed_beyond_the_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("KVGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(replay, "MAX_ENTRIES", 8)
    counts = []
    for i in range(9):
        replay.store(f"{i:064x}", 0, f"out {i}", "")
        os.utime(tmp_path / "runs" / f"{i:064x}.json", ns=(i * 10**9, i * 10**9))
        counts.append(len(_records(tmp_path)))
    assert counts == [1, 2, 3, 4, 5, 6, 7, 8, 6]  # the 9th record: the oldest removed down to 3/4 of the limit
    names = {p.name for p in _records(tmp_path)}
    assert names == {f"{i:064x}.json" for i in range(3, 9)}


def test_a_corrupt_or_foreign_record_is_not_replayed(tmp_path, monkeypatch):
    monkeypatch.setenv("KVGEN_CACHE_DIR", str(tmp_path))
    k = "ab" * 32
    (tmp_path / "runs").mkdir()
    for junk in (
        "{",
        "[]",
        json.dumps({"key": "other", "exit": 0, "stdout": "", "stderr": ""}),
        json.dumps({"key": k, "exit": 4, "stdout": "", "stderr": ""}),
    ):
        (tmp_path / "runs" / f"{k}.json").write_text(junk)
        assert replay.lookup(k) is None, junk
    replay.store(k, 4, "x", "")  # an internal error is not recorded
    assert replay.lookup(k) is None
    reads.forget()  # what earlier tests of this process read is not this run's
    replay.store(k, 1, "", "problems\n")
    assert replay.lookup(k) == {"key": k, "exit": 1, "stdout": "", "stderr": "problems\n", "reads": {}}
    # a run that read a file a spec names (model.config) is replayed only while it holds the same bytes
    read = tmp_path / "config.json"
    read.write_text("{}")
    reads.forget()
    reads.read_bytes(str(read), 1024)
    replay.store(k, 0, "out", "")
    reads.forget()
    assert replay.lookup(k)["stdout"] == "out"
    read.write_text('{"changed": 1}')
    assert replay.lookup(k) is None
    read.unlink()
    assert replay.lookup(k) is None


class _Lenient(io.StringIO):
    """A stream that takes bytes too, as some wrapped terminals do."""

    def write(self, s):
        return super().write(s.decode() if isinstance(s, bytes) else s)


def test_what_a_stream_refuses_is_not_output_and_bytes_are_never_recorded(tmp_path, monkeypatch):
    """click probes a stream with write(b""): a refused write is no output; a run whose bytes went
    through (to a lenient stream) is not recorded, as its record would be text only."""
    monkeypatch.setenv("KVGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text("a")
    monkeypatch.setattr(replay, "_isatty", lambda stream: False)

    def main():
        try:
            sys.stderr.write(b"probe")
        except TypeError:
            pass
        sys.stdout.write("text\n")

    monkeypatch.setattr(sys, "stderr", _Lenient())
    replay.run(main, ["render", "s.yaml"])
    assert sys.stderr.getvalue() == "probe" and _records(tmp_path) == []
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # refuses bytes: the probe wrote nothing
    replay.run(main, ["render", "s.yaml"])
    (record,) = _records(tmp_path)
    assert json.loads(record.read_text())["stdout"] == "text\n" and json.loads(record.read_text())["stderr"] == ""
