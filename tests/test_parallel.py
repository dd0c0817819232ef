"""A large batch compiles in forked worker processes (kvgen.core.parallel) and gives the same bytes,
the same problems in the same order, and the same exit codes as a serial run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, run_kvgen

from kvgen.app import compiler
from kvgen.app.compiler import InputErrors, compile_inputs
from kvgen.core import parallel

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")

# the native examples that render for the default Kubernetes version
NATIVES = [
    p
    for p in EXAMPLES
    if re.search(r"^name: ", p.read_text(), re.M) and not re.search(r"^(apiVersion|kubeVersion):", p.read_text(), re.M)
]


def _renamed(text: str, prefix: str) -> str:
    """The spec with ``prefix`` before its name (cut to 58 characters with the key)."""
    return re.sub(r"^name: (.*)$", lambda m: f"name: {prefix}{m.group(1)}"[:58], text, count=1, flags=re.M)


def batch(directory: Path, count: int, bad: tuple[int, ...] = ()) -> list[Path]:
    """``count`` specs made from the native examples (unique names); those at ``bad`` have an unknown key."""
    paths = []
    for i in range(count):
        source = NATIVES[i % len(NATIVES)]
        text = _renamed(source.read_text(), f"b{i:03d}-")
        if i in bad:
            text += f"bogus{i}: 1\n"
        path = directory / f"group-{i // 40}" / f"spec-{i:03d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return paths


@pytest.mark.heavy
def test_results_come_back_in_order_from_forked_workers():
    items = list(range(300))
    got = list(parallel.imap_ordered(lambda i: (time.sleep(0.005), i * i, os.getpid())[1:], items, 2))
    assert [r for r, _ in got] == [i * i for i in items]
    pids = {pid for _, pid in got}
    assert len(pids) == 2 and os.getpid() not in pids


def test_how_many_jobs(monkeypatch):
    monkeypatch.setattr(parallel, "available_cpus", lambda: 16)
    assert parallel.jobs_for(1000) == parallel.MAX_AUTO_JOBS  # the default's cap
    assert parallel.jobs_for(1000, 12) == 12  # asked for: not capped
    assert parallel.jobs_for(1000, 1) == 1
    assert parallel.jobs_for(120, 8) == 2  # at least MIN_UNITS_PER_JOB units per worker
    assert parallel.jobs_for(99) == 1
    monkeypatch.setattr(parallel, "_can_fork", lambda: False)
    assert parallel.jobs_for(1000, 4) == 1


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [("200000 100000\n", 2), ("150000 100000\n", 2), ("50000 100000\n", 1), ("max 100000\n", None), ("", None)],
)
def test_a_containers_cpu_quota_caps_the_jobs(tmp_path, monkeypatch, cpu_max, expected):
    (tmp_path / "cpu.max").write_text(cpu_max)
    monkeypatch.setattr(parallel, "CGROUP_CPU_MAX", str(tmp_path / "cpu.max"))
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: set(range(64)))
    assert parallel._cgroup_cpus() == expected
    assert parallel.available_cpus() == (expected or 64)


@pytest.mark.heavy
def test_a_batch_compiles_in_workers_with_the_same_results_and_problems(tmp_path, monkeypatch):
    paths = batch(tmp_path, 110, bad=(3, 57, 104))
    inputs = [(str(p), p.read_text()) for p in paths]
    used = []
    real = parallel.imap_ordered
    monkeypatch.setattr(parallel, "imap_ordered", lambda f, items, jobs: used.append(jobs) or real(f, items, jobs))
    with pytest.raises(InputErrors) as serial:
        compile_inputs(inputs, jobs=1)
    assert used == []
    with pytest.raises(InputErrors) as forked:
        compile_inputs(inputs, jobs=2)
    assert used == [2]
    assert [str(e) for e in forked.value.errors] == [str(e) for e in serial.value.errors]
    assert [e.source for e in forked.value.errors] == [str(paths[i]) for i in (3, 57, 104)]

    good = inputs[:3] + inputs[4:57] + inputs[58:104] + inputs[105:]
    one = compile_inputs(good, jobs=1).compiled
    two = compile_inputs(good, jobs=2).compiled
    assert [c.yaml for c in two] == [c.yaml for c in one]
    assert [(c.source, c.spec, c.plan.decision, c.objects) for c in two] == [
        (c.source, c.spec, c.plan.decision, c.objects) for c in one
    ]


@pytest.mark.heavy
def test_a_translated_batch_keeps_its_conversions():
    seed = (ROOT / "examples" / "seeds" / "kaito-workspace-gemma-4-12b.yaml").read_text()
    assert "inference-params" in seed and "name: gemma-4-12b" in seed
    inputs = [
        (
            f"w{i}.yaml",
            seed.replace("inference-params", f"params-{i}").replace("name: gemma-4-12b", f"name: w{i}-gemma"),
        )
        for i in range(110)
    ]
    two = compile_inputs(inputs, jobs=2).compiled
    assert [c.conversion.doc.file if c.conversion else None for c in two] == [name for name, _ in inputs]
    assert [c.yaml for c in two] == [c.yaml for c in compile_inputs(inputs, jobs=1).compiled]


@pytest.mark.heavy
def test_the_cli_gives_the_same_tree_and_messages_whatever_the_jobs(tmp_path):
    specs = tmp_path / "specs"
    batch(specs, 105)
    env = {"KVGEN_REPLAY": "off"}
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out-{jobs}"
        result = run_kvgen("render", str(specs), "-o", str(out), "-j", jobs, env=env)
        assert result.returncode == 0, result.stderr
        runs[jobs] = (
            result.stderr.replace(str(out), "OUT"),
            {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()},
        )
    assert runs["2"] == runs["1"]
    assert len(runs["1"][1]) > 105  # the specs and the kustomization files
    via_env = run_kvgen("validate", str(specs), env={**env, "KVGEN_JOBS": "2"})
    assert (
        via_env.returncode == 0 and via_env.stderr == run_kvgen("validate", str(specs), "--jobs", "1", env=env).stderr
    )
    refused = run_kvgen("validate", str(specs), "-j", "0", env=env)
    assert refused.returncode == 2 and "--jobs" in refused.stderr


@pytest.mark.heavy
def test_ctrl_c_stops_the_workers_and_exits_130(tmp_path):
    specs = tmp_path / "specs"
    batch(specs, 200)
    pids = tmp_path / "pids"
    # a real SIGINT to the parent once the first results are back; every worker must end with it
    code = textwrap.dedent(f"""\
        import os, signal, sys
        from concurrent.futures import Future, ProcessPoolExecutor
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a shell; a background job inherits SIG_IGN
        submit, result = ProcessPoolExecutor.submit, Future.result
        def recording(self, *args):
            future = submit(self, *args)
            with open({str(pids)!r}, "w") as fh:
                fh.write(" ".join(map(str, self._processes)))
            return future
        calls = []
        def interrupting(self, *args):
            calls.append(1)
            if len(calls) == 2:
                os.kill(os.getpid(), signal.SIGINT)
            return result(self, *args)
        ProcessPoolExecutor.submit, Future.result = recording, interrupting
        from kvgen.app import cli
        sys.argv = ["kvgen", "render", "-j", "2", {str(specs)!r}]
        cli.main()
        """)
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "KVGEN_REPLAY": "off"},
    )
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr and "kvgen: interrupted" in result.stderr
    assert result.stdout == ""
    workers = [int(p) for p in pids.read_text().split()]
    assert len(workers) == 2
    assert not [p for p in workers if Path(f"/proc/{p}").exists()], "a worker outlived kvgen"


def test_a_worker_that_dies_fails_the_batch_instead_of_hanging():
    # as when the OOM killer ends a worker: multiprocessing.Pool would wait for its results forever
    code = textwrap.dedent("""\
        import os
        from kvgen.core import parallel
        try:
            list(parallel.imap_ordered(lambda i: os._exit(9) if i == 150 else i, list(range(300)), 2))
        except Exception as exc:
            print(type(exc).__name__)
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.stdout.strip() == "BrokenProcessPool", result.stderr


def test_a_platform_that_refuses_the_workers_compiles_serially(monkeypatch):
    # a sandbox without /dev/shm: multiprocessing cannot make its semaphores (OSError ENOSYS)
    import concurrent.futures

    def refused(*args, **kwargs):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refused)
    assert list(parallel.imap_ordered(lambda i: (i, os.getpid()), list(range(120)), 2)) == [
        (i, os.getpid()) for i in range(120)
    ]


@pytest.mark.heavy
def test_no_worker_is_forked_for_a_small_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(compiler.parallel, "imap_ordered", lambda *a: pytest.fail("forked for a small batch"))
    paths = batch(tmp_path, 20)
    assert len(compile_inputs([(str(p), p.read_text()) for p in paths], jobs=None).compiled) == 20
