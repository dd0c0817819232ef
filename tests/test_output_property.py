"""`kvgen render -o OUT` never removes or changes a file whose content it did not produce (issue 20).

The manifest (``OUT/.kvgen-manifest.json``) is input: a pull request can edit it. Hypothesis renders a
tree A into OUT, adds your files anywhere in it (README.md, .git/config, notes, edits over kvgen's
files), rewrites the manifest arbitrarily (entries for every file in OUT with its true sha256, names
with dots, slashes, ``..``, absolute paths, digests true or not, entries dropped, not JSON at all),
then renders a tree B. Whatever the render decides (write, refuse, warn), a file whose bytes kvgen
did not produce for A or B is still there, unchanged, and so is every directory kvgen did not make.
With the manifest kvgen wrote and none of its files edited, OUT ends as exactly B plus your files.

    pytest tests/test_output_property.py                                  # the default 150 cases
    KVGEN_OUTDIR_EXAMPLES=5000 pytest tests/test_output_property.py       # a longer local run
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvgen.output import outdir, tree

EXAMPLES = int(os.environ.get("KVGEN_OUTDIR_EXAMPLES", "150"))
MANIFEST = ".kvgen-manifest.json"
FAST_TMP = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None  # a memory file system: 150 trees in seconds


def rendered(name: str, value: str) -> str:
    """A <name>.yaml in the form kvgen renders (an object labelled as kvgen's)."""
    return (
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n"
        f"    app.kubernetes.io/instance: {name}\n    app.kubernetes.io/managed-by: kvgen\ndata:\n  v: '{value}'\n"
    )


SUBDIRS = [".", "prod", "prod/eu", "dev", ".hidden"]  # a spec may sit in a hidden directory: kvgen writes there
NAMES = ["a", "b", "gemma", "prod", "readme"]
SPECS = st.lists(
    st.tuples(st.sampled_from(SUBDIRS), st.sampled_from(NAMES), st.sampled_from(["1", "2"])),
    max_size=5,
    unique_by=lambda t: (t[0], t[1]),
)

# your files: mostly beside kvgen's (README.md, .git/config, notes), sometimes where kvgen writes
YOURS = [
    "README.md",
    ".git/config",
    ".git/HEAD",
    "notes.yaml",
    "x/a.yaml",
    "prod/notes.md",
    "prod/eu/x.yaml",
    ".hidden/kustomization.yaml",
    "x/kustomization.yaml",
    "gemma-copy.yaml",
    "dev/.env",
]
IN_THE_WAY = ["kustomization.yaml", "a.yaml", "gemma.yaml", "prod/kustomization.yaml", "prod/b.yaml", "prod", "dev"]
USER_PATHS = st.one_of(*[st.sampled_from(YOURS)] * 4, st.sampled_from(IN_THE_WAY))
# bytes of yours, or (an int) a copy of the i-th file of tree A somewhere else: kvgen's bytes in your directory
USER_FILES = st.dictionaries(USER_PATHS, st.one_of(st.binary(max_size=24), st.integers(0, 9)), max_size=4)
ODD_KEYS = st.one_of(
    *[st.sampled_from(YOURS + IN_THE_WAY)] * 6,  # names within OUT: the manifest stays valid
    st.text(st.sampled_from("ab.-/"), min_size=1, max_size=8).filter(lambda k: "//" not in k and "/." not in k),
    st.sampled_from(
        [
            "..",
            "../x.yaml",
            "/etc/passwd",
            "a/../b.yaml",
            "./a.yaml",
            "a//b.yaml",
            "",
            ".",
            "a\\b.yaml",
            MANIFEST,
            ".git/../README.md",
        ]
    ),  # refused as a whole
)


@st.composite
def tamperings(draw: st.DrawFn) -> dict:
    return {
        "every_file": draw(st.booleans()),  # list every file in OUT with its true sha256
        "drop": draw(st.sets(st.integers(0, 20), max_size=3)),  # indices of genuine entries to drop
        "extra": draw(st.dictionaries(ODD_KEYS, st.one_of(st.none(), st.integers(0, 20)), max_size=3)),
        "garbage": draw(st.text(max_size=20)) if draw(st.integers(0, 9)) == 7 else None,  # not a manifest
    }


def plan(specs: list[tuple[str, str, str]]) -> dict[PurePosixPath, str]:
    return tree.layout([tree.Entry(PurePosixPath(d), n, rendered(n, v), f"{d}/{n}") for d, n, v in specs])


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def files_and_dirs(root: Path) -> tuple[dict[str, bytes], set[str]]:
    files: dict[str, bytes] = {}
    dirs: set[str] = set()
    for top, dirnames, names in os.walk(root):
        rel = Path(top).relative_to(root)
        dirs |= {(rel / d).as_posix() for d in dirnames}
        files |= {(rel / n).as_posix(): (Path(top) / n).read_bytes() for n in names}
    return files, dirs


def add_user_files(root: Path, user: dict[str, bytes | int], plan_a: dict[PurePosixPath, str]) -> None:
    copies = [text.encode() for text in plan_a.values()]
    for rel, data in user.items():
        path = root / rel
        if any(p.is_file() for p in [*path.parents] if root in p.parents) or path.is_dir():
            continue  # a file where a directory goes, or the other way round: not a tree a user can have
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(copies[data % len(copies)] if isinstance(data, int) else data)


def tamper(root: Path, how: dict) -> bool:
    """Rewrite the manifest as a pull request might; whether it was left as kvgen wrote it."""
    text = (root / MANIFEST).read_text()
    body = json.loads(text)
    files, _dirs = files_and_dirs(root)
    digests = [sha(data) for _rel, data in sorted(files.items())] or [sha(b"")]
    genuine = sorted(body["files"])
    for i in how["drop"]:
        if i < len(genuine):
            body["files"].pop(genuine[i], None)
    if how["every_file"]:
        body["files"].update({rel: sha(data) for rel, data in files.items() if rel != MANIFEST})
    for key, pick in how["extra"].items():
        body["files"][key] = "sha256:" + "0" * 64 if pick is None else digests[pick % len(digests)]
    new = json.dumps(body, indent=2, sort_keys=True) + "\n" if how["garbage"] is None else how["garbage"]
    (root / MANIFEST).write_text(new)
    return new == text


def dirs_of(files: dict[PurePosixPath, str]) -> set[str]:
    return {p.as_posix() for rel in files for p in rel.parents if p != PurePosixPath(".")}


@pytest.mark.heavy
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(a=SPECS, b=SPECS, user=USER_FILES, how=tamperings())
def test_render_never_removes_or_changes_a_file_kvgen_did_not_produce(a, b, user, how):
    plan_a, plan_b = plan(a), plan(b)
    produced = {text.encode() for text in [*plan_a.values(), *plan_b.values()]}
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as tmp:
        root = Path(tmp) / "out"
        outdir.write(root, plan_a)
        add_user_files(root, user, plan_a)
        untouched = tamper(root, how)
        before, dirs_before = files_and_dirs(root)
        try:
            outdir.write(root, plan_b)
            refused = False
        except outdir.OutDirError:
            refused = True
        after, dirs_after = files_and_dirs(root)
    for rel, data in before.items():
        if rel != MANIFEST and data not in produced:
            assert after.get(rel) == data, f"{rel} was {'changed' if rel in after else 'removed'}"
    assert dirs_before - dirs_of(plan_a) <= dirs_after, "a directory kvgen did not make was removed"
    if refused:
        assert (after, dirs_after) == (before, dirs_before), "a refused render changed OUT"
        return
    assert {rel: after[str(rel)] for rel in plan_b} == {rel: text.encode() for rel, text in plan_b.items()}
    edited = any(before.get(str(rel), text.encode()) != text.encode() for rel, text in plan_a.items())
    if untouched and not edited:
        # the manifest kvgen wrote, its files unedited: exactly B and every other file (stale files of A
        # removed, except below a hidden directory, where kvgen removes nothing)
        others = {rel: data for rel, data in before.items() if rel != MANIFEST and PurePosixPath(rel) not in plan_a}
        hidden = {str(rel): text.encode() for rel, text in plan_a.items() if str(rel).startswith(".hidden/")}
        expected = hidden | others | {str(rel): text.encode() for rel, text in plan_b.items()}
        assert {rel: data for rel, data in after.items() if rel != MANIFEST} == expected
        assert all(any(f.startswith(d + "/") for f in after) for d in dirs_after), "an emptied directory was left"
