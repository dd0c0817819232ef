"""`kvgen render -o OUT` touches only regular files inside OUT that it wrote itself (issue 8, section 1).

Each attack below worked against kvgen before its manifest: a kustomization listing a path outside
OUT made the next render delete it (and `--check` print it), links were followed for writes, a
user's file listed in a kustomization was deleted, a hand-written kustomization.yaml was
overwritten, a full disk left a truncated file, Ctrl-C or SIGTERM left half a tree, two renders
interleaved, and OUT being a file was an internal error.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

import pytest
from conftest import GOLDEN, ROOT, run_kvgen
from ruamel.yaml import YAML
from typer.testing import CliRunner

from kvgen.app.cli import app
from kvgen.output import outdir, tree

EXAMPLES = ROOT / "examples"
MANIFEST = ".kvgen-manifest.json"
GEMMA = "gemma-4-12b.yaml"
PVC_REF = "prod/qwen2-7b-pvc-ref.yaml"


@pytest.fixture
def specs(tmp_path):
    """specs/ with one spec at the top and one in prod/."""
    root = tmp_path / "specs"
    (root / "prod").mkdir(parents=True)
    shutil.copy(EXAMPLES / "kaito-gemma-4-12b.yaml", root / "gemma.yaml")
    shutil.copy(EXAMPLES / "seeds" / "kserve-pvc-ref-path.yaml", root / "prod" / "pvc-ref.yaml")
    return root


@pytest.fixture
def out(specs, tmp_path):
    """OUT as kvgen renders it from specs."""
    root = tmp_path / "rendered"
    result = render(specs, root)
    assert result.returncode == 0, result.stderr
    return root


def render(specs, root, *extra, **kwargs):
    return run_kvgen("render", str(specs), "-o", str(root), *extra, **kwargs)


def snapshot(root: Path) -> dict[str, str]:
    """Every entry below root: file contents, and links as where they point."""
    found = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            found[rel] = "-> " + os.readlink(p)
        elif p.is_file():
            found[rel] = p.read_text()
    return found


def manifest_of(root: Path) -> dict:
    return json.loads((root / MANIFEST).read_text())


def assert_consistent(root: Path, ignore: tuple[str, ...] = ()) -> None:
    """The manifest lists exactly kvgen's files (all but the ignored ones, yours), with their digests;
    no temporary file is left."""
    files = {k: v for k, v in snapshot(root).items() if k != MANIFEST and k not in ignore}
    listed = manifest_of(root)["files"]
    assert listed == {k: "sha256:" + hashlib.sha256(v.encode()).hexdigest() for k, v in files.items()}
    assert not [p for p in root.rglob(".kvgen-tmp-*")]


def drop_manifest(root: Path) -> None:
    """OUT as the kvgen before the manifest left it: byte for byte the same files, no manifest
    (test_render_writes_a_tree_... and the goldens hold the rendered bytes unchanged)."""
    (root / MANIFEST).unlink(missing_ok=True)


# ----------------------------------------------------------------------------- nothing outside OUT


@pytest.mark.heavy
@pytest.mark.parametrize("outside", ["../victim/x.yaml", "ABSOLUTE"])
@pytest.mark.parametrize("with_manifest", [True, False], ids=["manifest", "earlier-version-tree"])
def test_a_kustomization_listing_a_path_outside_out_never_deletes_it(specs, out, tmp_path, outside, with_manifest):
    victim = tmp_path / "victim" / "x.yaml"
    victim.parent.mkdir()
    victim.write_text("precious: true\n")
    listed = str(victim) if outside == "ABSOLUTE" else outside
    if not with_manifest:
        drop_manifest(out)
    k = out / "kustomization.yaml"
    k.write_text(k.read_text() + f"  - {listed}\n")
    result = render(specs, out)
    assert victim.read_text() == "precious: true\n"
    if with_manifest:  # the kustomization was edited after kvgen wrote it: refused, not overwritten
        assert result.returncode == 1
        assert f"{out.as_posix()}/kustomization.yaml was changed since kvgen wrote it" in result.stderr
        assert listed in k.read_text()
    else:  # the earlier version's marked kustomization is adopted and rewritten
        assert result.returncode == 0, result.stderr
        assert listed not in k.read_text()
        assert_consistent(out)


@pytest.mark.heavy
def test_check_never_prints_a_file_outside_out(specs, out, tmp_path):
    secret = tmp_path / "victim" / "secret.yaml"
    secret.parent.mkdir()
    secret.write_text("token: hunter2-do-not-print\n")
    drop_manifest(out)
    k = out / "kustomization.yaml"
    k.write_text(k.read_text() + "  - ../victim/secret.yaml\n" + f"  - {secret}\n")
    result = render(specs, out, "--check")
    assert result.returncode == 5  # the kustomization differs
    assert "hunter2" not in result.stdout + result.stderr
    assert secret.exists()


@pytest.mark.heavy
def test_a_manifest_naming_paths_outside_out_is_refused_as_a_whole(specs, out, tmp_path):
    victim = tmp_path / "victim.yaml"
    victim.write_text("precious: true\n")
    digest = "sha256:" + hashlib.sha256(victim.read_bytes()).hexdigest()
    body = manifest_of(out)
    body["files"]["../victim.yaml"] = digest
    body["files"][str(victim)] = digest
    (out / MANIFEST).write_text(json.dumps(body))
    shutil.rmtree(specs / "prod")  # so the render would delete what the manifest lists and is no longer produced
    before = snapshot(out)
    for extra in ((), ("--check",)):
        result = render(specs, out, *extra)
        assert result.returncode == 1, result.stderr
        assert f"{out.as_posix()}/{MANIFEST} lists '../victim.yaml', which leaves the directory" in result.stderr
        assert f"lists '{victim}', which is absolute" in result.stderr
        assert victim.exists() and snapshot(out) == before


@pytest.mark.heavy
@pytest.mark.parametrize("where", [GEMMA, "prod", MANIFEST])
def test_links_inside_out_are_never_followed(specs, out, tmp_path, where):
    target = tmp_path / "victim"
    target.mkdir()
    (target / "qwen2-7b-pvc-ref.yaml").write_text("theirs: true\n")
    (target / "kustomization.yaml").write_text("theirs: true\n")
    (target / "file.yaml").write_text("theirs: true\n")
    link = out / where
    shutil.rmtree(link) if link.is_dir() else link.unlink()
    link.symlink_to(target if where == "prod" else target / "file.yaml")
    before, victim = snapshot(out), snapshot(target)
    for extra in ((), ("--check",)):
        result = render(specs, out, *extra)
        assert result.returncode == 1, result.stderr
        assert f"{out.as_posix()}/{where} is a symbolic link; kvgen never follows links" in result.stderr
        assert "theirs" not in result.stdout + result.stderr
        assert snapshot(out) == before and snapshot(target) == victim


@pytest.mark.heavy
def test_out_itself_a_link_is_a_usage_error(specs, tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (tmp_path / "rendered").symlink_to(real)
    result = render(specs, tmp_path / "rendered")
    assert result.returncode == 2
    assert "rendered is a symbolic link; kvgen writes only into a real directory" in result.stderr
    assert list(real.iterdir()) == []


# ----------------------------------------------------------------------------- only what kvgen wrote


@pytest.mark.heavy
@pytest.mark.parametrize("with_manifest", [True, False], ids=["manifest", "earlier-version-tree"])
def test_a_user_file_listed_in_a_kustomization_is_never_deleted(specs, out, with_manifest):
    (out / "prod" / "notes.yaml").write_text("mine: true\n")
    if not with_manifest:
        drop_manifest(out)
    k = out / "prod" / "kustomization.yaml"
    k.write_text(k.read_text() + "  - notes.yaml\n")
    shutil.rmtree(specs / "prod")
    result = render(specs, out)
    assert (out / "prod" / "notes.yaml").read_text() == "mine: true\n"
    if with_manifest:  # prod/kustomization.yaml no longer matches its digest: kept, with a warning
        assert result.returncode == 0, result.stderr
        assert "prod/kustomization.yaml is no longer produced but was changed since kvgen wrote it" in result.stderr
        assert not (out / PVC_REF).exists()  # kvgen's own, unedited: removed
    else:
        assert result.returncode == 0, result.stderr
        assert "prod/notes.yaml was listed by an earlier kvgen version" in result.stderr
        assert (out / PVC_REF).exists()  # without a manifest kvgen cannot tell it wrote it


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["kustomization.yaml", GEMMA, "prod/kustomization.yaml"])
def test_a_file_kvgen_did_not_write_is_refused_and_nothing_is_written(specs, tmp_path, name):
    root = tmp_path / "rendered"
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text("resources: [mine.yaml]\n")
    before = snapshot(root)
    result = render(specs, root)
    assert result.returncode == 1
    assert f"error: {root.as_posix()}/{name} was not written by kvgen (it is not in {MANIFEST})" in result.stderr
    assert "move it out of the way (or delete it) and render again" in result.stderr
    assert "nothing was written" in result.stderr
    assert snapshot(root) == before
    # --check shows the difference and says the render would refuse
    check = render(specs, root, "--check")
    assert check.returncode == 5
    assert "kvgen render would stop here" in check.stderr and "-resources: [mine.yaml]" in check.stdout


@pytest.mark.heavy
def test_a_file_kvgen_wrote_and_you_edited_is_refused_until_you_move_it(specs, out):
    edited = (out / GEMMA).read_text().replace("replicas: 1", "replicas: 3")
    (out / GEMMA).write_text(edited)
    result = render(specs, out)
    assert result.returncode == 1
    assert f"{out.as_posix()}/{GEMMA} was changed since kvgen wrote it" in result.stderr
    assert "kvgen will not overwrite your edits: move it out of the way (or delete it)" in result.stderr
    assert (out / GEMMA).read_text() == edited
    (out / GEMMA).unlink()
    assert render(specs, out).returncode == 0
    assert (out / GEMMA).read_text() == (GOLDEN / "kaito-gemma-4-12b.yaml").read_text()
    assert_consistent(out)


@pytest.mark.heavy
def test_an_edited_file_no_longer_produced_stays_and_leaves_the_manifest(specs, out):
    (out / PVC_REF).write_text((out / PVC_REF).read_text() + "# my note\n")
    shutil.rmtree(specs / "prod")
    result = render(specs, out)
    assert result.returncode == 0, result.stderr
    assert f"{out.as_posix()}/{PVC_REF} is no longer produced but was changed since kvgen wrote it" in result.stderr
    assert (out / PVC_REF).read_text().endswith("# my note\n")
    assert not (out / "prod" / "kustomization.yaml").exists()  # unedited: removed
    assert PVC_REF not in manifest_of(out)["files"]
    assert render(specs, out, "--check").returncode == 0


# ----------------------------------------------------------------------------- an OUT the previous version wrote


@pytest.mark.heavy
def test_an_out_written_before_the_manifest_is_adopted_when_identical(specs, out):
    drop_manifest(out)
    check = render(specs, out, "--check")
    assert check.returncode == 5
    assert "is stale: 1 missing" in check.stderr and f"+++ b/{out.as_posix()}/{MANIFEST}" in check.stdout
    result = render(specs, out)
    assert result.returncode == 0, result.stderr
    assert_consistent(out)
    assert render(specs, out, "--check").returncode == 0


@pytest.mark.heavy
def test_an_out_written_before_the_manifest_refuses_files_it_cannot_vouch_for(specs, out):
    drop_manifest(out)
    (specs / "gemma.yaml").write_text((specs / "gemma.yaml").read_text().replace("0.25", "0.3"))
    before = snapshot(out)
    result = render(specs, out)
    assert result.returncode == 1
    assert f"{out.as_posix()}/{GEMMA} was not written by kvgen" in result.stderr
    assert snapshot(out) == before
    (out / GEMMA).unlink()  # what the README tells an upgrading user to do
    assert render(specs, out).returncode == 0
    assert_consistent(out)


# ----------------------------------------------------------------------------- OUT unusable: usage errors


@pytest.mark.heavy
def test_out_being_a_file_is_a_usage_error(specs, tmp_path):
    root = tmp_path / "rendered"
    root.write_text("a file\n")
    for extra in ((), ("--check",)):
        result = render(specs, root, *extra)
        assert result.returncode == 2, result.stderr
        assert f"error: {root.as_posix()} exists and is not a directory" in result.stderr
        assert "internal error" not in result.stderr
    assert root.read_text() == "a file\n"


@pytest.mark.heavy
def test_a_file_where_a_directory_must_go_is_a_usage_error(specs, tmp_path):
    root = tmp_path / "rendered"
    root.mkdir()
    (root / "prod").write_text("a file\n")
    for extra in ((), ("--check",)):
        result = render(specs, root, *extra)
        assert result.returncode == 2, result.stderr
        assert f"error: {root.as_posix()}/prod is a file where kvgen needs a directory" in result.stderr
        assert "internal error" not in result.stderr
    assert snapshot(root) == {"prod": "a file\n"}


# ----------------------------------------------------------------------------- atomic: full disk, read-only


def rendered(name: str, data: str) -> str:
    """A <name>.yaml in the form kvgen renders (one object labelled as kvgen's), data its ConfigMap data."""
    return (
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n"
        f"    app.kubernetes.io/instance: {name}\n    app.kubernetes.io/managed-by: kvgen\ndata:\n{data}"
    )


def entry(subdir: str, name: str, data: str) -> tree.Entry:
    return tree.Entry(PurePosixPath(subdir), name, rendered(name, data), f"{subdir}/{name}")


PLAN_A = tree.layout([entry(".", "a", "  a: '1'\n"), entry("sub", "b", "  b: '1'\n")])
PLAN_B = tree.layout([entry(".", "a", "".join(f"  a{i}: '2'\n" for i in range(500))), entry("new", "c", "  c: '2'\n")])


@pytest.fixture
def tree_a(tmp_path):
    root = tmp_path / "out"
    outdir.write(root, PLAN_A)
    return root


def _full_disk(monkeypatch, budget: int):
    """os.write as on a disk with `budget` bytes left: short writes, then ENOSPC."""
    real = os.write
    left = [budget]

    def write(fd, data):
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real(fd, bytes(data[: left[0]]))
        left[0] -= n
        return n

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize("budget", [0, 30, 700])
def test_a_full_disk_leaves_every_previous_file_intact(tree_a, monkeypatch, budget):
    before = snapshot(tree_a)
    _full_disk(monkeypatch, budget)
    with pytest.raises(outdir.OutDirError) as exc:
        outdir.write(tree_a, PLAN_B)
    monkeypatch.undo()
    assert exc.value.code == 2
    assert "No space left on device; nothing was changed" in exc.value.messages[0]
    assert snapshot(tree_a) == before  # no truncated file, no temporary file, no new directory


def test_a_read_only_directory_is_a_clear_error_and_changes_nothing(tree_a, monkeypatch):
    before = snapshot(tree_a)
    real = os.open

    def read_only(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(outdir.OutDirError) as exc:
        outdir.write(tree_a, PLAN_B)
    monkeypatch.undo()
    assert exc.value.code == 2 and "Read-only file system; nothing was changed" in exc.value.messages[0]
    assert snapshot(tree_a) == before


@pytest.mark.heavy
def test_the_cli_reports_a_full_disk_as_exit_2_not_an_internal_error(specs, out, monkeypatch):
    (specs / "gemma.yaml").write_text((specs / "gemma.yaml").read_text().replace("0.25", "0.3"))
    before = snapshot(out)
    _full_disk(monkeypatch, 100)
    result = CliRunner().invoke(app, ["render", "-q", str(specs), "-o", str(out)])
    monkeypatch.undo()
    assert result.exit_code == 2, result.output
    assert "No space left on device; nothing was changed" in result.stderr
    assert f"kvgen: {out.as_posix()} was left as it was" in result.stderr
    assert snapshot(out) == before


def test_a_failure_while_committing_is_finished_by_the_next_render(tree_a, monkeypatch):
    real, calls = os.replace, []

    def flaky(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(outdir.OutDirError) as exc:
        outdir.write(tree_a, PLAN_B)
    monkeypatch.undo()
    assert exc.value.code == 2 and "Run kvgen render again to finish" in exc.value.messages[0]
    assert not list(tree_a.rglob(".kvgen-tmp-*"))
    outdir.write(tree_a, PLAN_B)  # adopts the file already replaced (identical to the plan)
    assert {k: v for k, v in snapshot(tree_a).items() if k != MANIFEST} == {str(k): v for k, v in PLAN_B.items()}
    assert_consistent(tree_a)


# ----------------------------------------------------------------------------- signals, real processes


HOOKED = r"""
import os, sys, time
from pathlib import Path
import kvgen.output.commit
from kvgen.core import signals
from kvgen.output import safedir

ready, mode, argv = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
got = []
record = signals.Deferred._record

def recording(self, signum, frame):
    got.append(signum)
    record(self, signum, frame)

signals.Deferred._record = recording

def pause():
    ready.write_text("ready")
    deadline = time.monotonic() + 20
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)

if mode == "staging":  # stop after two files are staged
    check, calls = signals.Deferred.check, []
    def counting(self):
        calls.append(1)
        if len(calls) == 3:
            pause()
        check(self)
    signals.Deferred.check = counting
elif mode == "commit":  # stop after the first rename of the commit
    replace = os.replace
    def replacing(*a, **k):
        replace(*a, **k)
        if not ready.exists():
            pause()
    os.replace = replacing
elif mode == "hold":  # hold the lock between staging and commit
    commit = kvgen.output.commit.commit
    def holding(*a):
        ready.write_text("ready")
        time.sleep(float(os.environ["KVGEN_TEST_HOLD"]))
        commit(*a)
    kvgen.output.commit.commit = holding
elif mode == "timeout":
    safedir.LOCK_TIMEOUT = 0.5

from kvgen.app.cli import main
sys.argv = ["kvgen", *argv]
main()
"""


def hooked(tmp_path, mode, *argv, env=None):
    ready = tmp_path / f"ready-{mode}"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOOKED, str(ready), mode, *argv],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    return proc, ready


def wait_for(path: Path, proc) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.fixture
def changed(specs):
    """specs/ changed so that the next render replaces a file, adds prod2/ and removes prod/."""
    (specs / "gemma.yaml").write_text((specs / "gemma.yaml").read_text().replace("0.25", "0.3"))
    (specs / "prod").rename(specs / "prod2")
    return specs


@pytest.mark.heavy
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_staging_leaves_the_previous_tree(out, changed, tmp_path, sig):
    before = snapshot(out)
    proc, ready = hooked(tmp_path, "staging", "render", "-q", str(changed), "-o", str(out))
    wait_for(ready, proc)
    assert [p.name for p in out.rglob(".kvgen-tmp-*")]  # it really was half-way through staging
    proc.send_signal(sig)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, stderr
    assert f"kvgen: interrupted ({sig.name}); {out.as_posix()} was left as it was" in stderr
    assert snapshot(out) == before  # no temporary file, no new directory


@pytest.mark.heavy
def test_sigterm_while_committing_waits_for_the_complete_new_tree(out, changed, tmp_path):
    proc, ready = hooked(tmp_path, "commit", "render", "-q", str(changed), "-o", str(out))
    wait_for(ready, proc)
    proc.send_signal(signal.SIGTERM)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "holds the complete new render" in stderr
    fresh = tmp_path / "fresh"
    assert render(changed, fresh).returncode == 0
    assert snapshot(out) == snapshot(fresh)
    assert_consistent(out)


@pytest.mark.heavy
def test_leftovers_of_a_killed_render_are_removed_by_the_next(out, changed, tmp_path):
    proc, ready = hooked(tmp_path, "staging", "render", "-q", str(changed), "-o", str(out))
    wait_for(ready, proc)
    proc.kill()  # SIGKILL: nothing can clean up
    proc.communicate(timeout=60)
    assert list(out.rglob(".kvgen-tmp-*"))
    result = render(changed, out)
    assert result.returncode == 0, result.stderr
    assert "left by an interrupted kvgen render" in result.stderr
    assert_consistent(out)


@pytest.mark.heavy
def test_two_renders_into_one_out_are_serialized(out, specs, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(EXAMPLES / "kserve-mixed-tiers.yaml", other / "mixed.yaml")
    expected = snapshot(out)
    # the first render (other specs) holds OUT between staging and commit; the second (back to specs) starts then
    first, ready = hooked(tmp_path, "hold", "render", "-q", str(other), "-o", str(out), env={"KVGEN_TEST_HOLD": "3"})
    wait_for(ready, first)
    second = subprocess.Popen(
        [sys.executable, "-m", "kvgen", "render", str(specs), "-o", str(out)],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _o, err2 = second.communicate(timeout=120)
    _o, err1 = first.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, err1 + err2
    assert f"waiting for another kvgen render into {out.as_posix()} to finish" in err2
    assert snapshot(out) == expected  # the second render, complete; nothing of the first left over
    assert_consistent(out)


@pytest.mark.heavy
def test_a_render_gives_up_on_a_lock_held_too_long(out, specs, tmp_path):
    before = snapshot(out)
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc, _ready = hooked(tmp_path, "timeout", "render", str(specs), "-o", str(out))
        _o, err = proc.communicate(timeout=60)
    finally:
        os.close(fd)
    assert proc.returncode == 2, err
    assert "another kvgen render has held this directory" in err
    assert snapshot(out) == before


# ----------------------------------------------------------------------------- the manifest, --kustomize-resource


@pytest.mark.heavy
def test_the_manifest_is_deterministic_and_lists_every_file_with_its_digest(specs, out, tmp_path):
    text = (out / MANIFEST).read_text()
    body = json.loads(text)
    assert text == json.dumps(body, indent=2, sort_keys=True) + "\n"
    assert set(body) == {"files", "generator", "version"} and body["version"] == 1
    assert sorted(body["files"]) == [
        "gemma-4-12b.yaml",
        "kustomization.yaml",
        "prod/kustomization.yaml",
        "prod/qwen2-7b-pvc-ref.yaml",
    ]
    assert_consistent(out)
    again = tmp_path / "again"
    render(specs, again)
    assert (again / MANIFEST).read_bytes() == text.encode()
    # a render with nothing to change writes nothing
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert render(specs, out).returncode == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == stamps


@pytest.mark.heavy
def test_kustomize_resource_adds_your_own_files_to_the_top_kustomization(specs, tmp_path):
    root = tmp_path / "rendered"
    (root / "extras").mkdir(parents=True)
    (root / "namespace.yaml").write_text("kind: Namespace\n")
    result = render(
        specs,
        root,
        "--kustomize-resource",
        "namespace.yaml",
        "--kustomize-resource",
        "extras/",
        "--kustomize-resource",
        "later.yaml",
    )
    assert result.returncode == 0, result.stderr
    top = YAML(typ="safe").load((root / "kustomization.yaml").read_text())
    assert top["resources"] == [GEMMA, "prod", "namespace.yaml", "extras", "later.yaml"]
    assert "rendered/later.yaml (--kustomize-resource) does not exist yet" in result.stderr
    assert (root / "namespace.yaml").read_text() == "kind: Namespace\n"
    assert "namespace.yaml" not in manifest_of(root)["files"]
    assert (
        render(
            specs,
            root,
            "--check",
            "--kustomize-resource",
            "namespace.yaml",
            "--kustomize-resource",
            "extras",
            "--kustomize-resource",
            "later.yaml",
        ).returncode
        == 0
    )


@pytest.mark.heavy
def test_kustomize_resource_must_stay_inside_out_and_be_yours(specs, tmp_path):
    root = tmp_path / "rendered"
    bad = ["../x.yaml", "/etc/passwd", "a/../../x.yaml", "kustomization.yaml", "prod", GEMMA, MANIFEST]
    args = [a for b in bad for a in ("--kustomize-resource", b)]
    result = render(specs, root, *args)
    assert result.returncode == 2
    for b in bad:
        assert f"--kustomize-resource {b!r}" in result.stderr
    assert not root.exists()
    no_out = run_kvgen("render", str(specs), "--kustomize-resource", "x.yaml")
    assert no_out.returncode == 2 and "give it with -o DIR" in no_out.stderr


@pytest.mark.heavy
def test_kustomize_resource_through_a_link_is_refused(specs, tmp_path):
    root = tmp_path / "rendered"
    root.mkdir()
    (root / "extras").symlink_to(tmp_path)
    result = render(specs, root, "--kustomize-resource", "extras/ns.yaml")
    assert result.returncode == 1
    assert "rendered/extras is a symbolic link" in result.stderr


# ----------------------------------------------------------------------------- the manifest is input (issue 20)


@pytest.mark.heavy
def test_a_manifest_listing_your_files_with_their_sha256_never_deletes_them(specs, out):
    """Issue 20: a pull request that edits only the manifest to list README.md and .git/config (with
    their real sha256) made the next render delete both, and the emptied .git/, with exit 0."""
    (out / "README.md").write_text("# rendered manifests\n")
    (out / ".git").mkdir()
    (out / ".git" / "config").write_text("[core]\n\tbare = false\n")
    body = manifest_of(out)
    for name in ("README.md", ".git/config"):
        body["files"][name] = "sha256:" + hashlib.sha256((out / name).read_bytes()).hexdigest()
    (out / MANIFEST).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    check = render(specs, out, "--check")
    assert check.returncode == 5, check.stderr  # the manifest is not the one kvgen writes
    result = render(specs, out)
    assert result.returncode == 0, result.stderr
    assert (out / "README.md").read_text() == "# rendered manifests\n"
    assert (out / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    for name in ("README.md", ".git/config"):
        for stderr in (check.stderr, result.stderr):
            assert f"kvgen: warning: {out.as_posix()}/{MANIFEST} lists {name!r}, which kvgen does not remove" in stderr
        assert name not in manifest_of(out)["files"]
    assert_consistent(out, ignore=("README.md", ".git/config"))
    assert render(specs, out, "--check").returncode == 0


@pytest.mark.heavy
def test_a_manifest_claiming_your_file_where_kvgen_writes_never_replaces_it(specs, tmp_path):
    root = tmp_path / "rendered"
    root.mkdir()
    mine = "# mine\nresources:\n  - namespace.yaml\n"
    (root / "kustomization.yaml").write_text(mine)
    digest = "sha256:" + hashlib.sha256(mine.encode()).hexdigest()
    (root / MANIFEST).write_text(json.dumps({"files": {"kustomization.yaml": digest}, "version": 1}))
    before = snapshot(root)
    result = render(specs, root)
    assert result.returncode == 1
    assert (
        f"error: {root.as_posix()}/kustomization.yaml is listed in {MANIFEST} with its sha256, but does not "
        "hold what kvgen writes"
    ) in result.stderr
    assert snapshot(root) == before


@pytest.mark.heavy
def test_a_manifest_claiming_your_yaml_file_with_its_sha256_leaves_it(specs, out):
    """namespace.yaml and prod/extra.yaml have names kvgen could write, but not its content."""
    (out / "namespace.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: llm\n")
    (out / "prod" / "extra.yaml").write_text((out / PVC_REF).read_text())  # kvgen's objects, another name
    body = manifest_of(out)
    for name in ("namespace.yaml", "prod/extra.yaml"):
        body["files"][name] = "sha256:" + hashlib.sha256((out / name).read_bytes()).hexdigest()
    (out / MANIFEST).write_text(json.dumps(body))
    result = render(specs, out)
    assert result.returncode == 0, result.stderr
    for name in ("namespace.yaml", "prod/extra.yaml"):
        assert (out / name).exists()
        assert f"{MANIFEST} lists {name!r} with its sha256, but it does not hold what kvgen writes" in result.stderr
    assert_consistent(out, ignore=("namespace.yaml", "prod/extra.yaml"))


@pytest.mark.heavy
def test_kvgen_tells_its_own_files_by_name_and_form(out):
    for rel, text in snapshot(out).items():
        if rel != MANIFEST:
            assert tree.layout_reason(PurePosixPath(rel)) is None
            assert tree.written_by_kvgen(PurePosixPath(rel), text.encode()), rel
    for golden in sorted(GOLDEN.glob("*.yaml")):
        data = golden.read_bytes()
        name = next(line.split(": ")[1] for line in data.decode().splitlines() if "app.kubernetes.io/instance" in line)
        assert tree.written_by_kvgen(PurePosixPath(f"{name}.yaml"), data), golden.name
        assert not tree.written_by_kvgen(PurePosixPath(f"{name}-copy.yaml"), data)
        docs = data.decode().split("\n---\n")
        unlabelled = "\n---\n".join([docs[0].replace("managed-by: kvgen", "managed-by: me"), *docs[1:]])
        assert not tree.written_by_kvgen(PurePosixPath(f"{name}.yaml"), unlabelled.encode())
        # the spec's extraObjects follow kvgen's objects, verbatim and unlabelled: still kvgen's form
        extra = data.decode() + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n"
        assert tree.written_by_kvgen(PurePosixPath(f"{name}.yaml"), extra.encode())
        assert not tree.written_by_kvgen(PurePosixPath(f"{name}.yaml"), (data.decode() + "---\n- a list\n").encode())
    k = tree.kustomization(["a.yaml", "prod"])
    assert tree.written_by_kvgen(PurePosixPath("kustomization.yaml"), k.encode())
    for other in (k + "namespace: x\n", k.replace("  - a.yaml", "- a.yaml"), k[:-1], "resources: []\n", k + "\n"):
        assert not tree.written_by_kvgen(PurePosixPath("kustomization.yaml"), other.encode()), other
    assert not tree.written_by_kvgen(PurePosixPath("kustomization.yaml"), b"\xff" + k.encode())
    for rel in (
        "README.md",
        ".git/config",
        ".git/hooks/kustomization.yaml",
        "prod/.cache/a.yaml",
        "A.yaml",
        "a.yml",
        ".kvgen-tmp-1",
        "-a.yaml",
    ):
        assert tree.layout_reason(PurePosixPath(rel)) is not None, rel
