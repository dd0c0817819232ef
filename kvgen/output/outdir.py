"""Reading and writing the output directory of ``kvgen render -o OUT``, safely.

The guarantees (also in docs/output-directory.md):

- kvgen creates, replaces or deletes only regular files inside OUT that it wrote itself. What it
  wrote is recorded in ``OUT/.kvgen-manifest.json`` (``kvgen.output.manifest``) with each file's sha256,
  but the manifest is input (a pull request can edit it), so it is never enough alone. A file is
  kvgen's only when its name is one kvgen writes (``tree.layout_reason``: kustomization.yaml or
  <spec name>.yaml, below no hidden directory), the manifest lists it with its digest, and it has
  kvgen's form (``tree.written_by_kvgen``). A file kvgen wants to write that holds something else
  is replaced only when it is kvgen's; otherwise (yours, a hand-written ``kustomization.yaml``, one
  edited since) it is refused, naming the file, and nothing is written. A file identical to what
  kvgen renders now is adopted: replacing it loses nothing. A file no longer produced is deleted
  only when it is kvgen's; any other manifest entry is left alone with a warning. A directory is
  removed only when emptied by those deletions and listed by the previous tree's kustomization.
- Nothing is reached through a symbolic link (``kvgen.output.safedir``), and paths come from the plan and
  the validated manifest only, never with ``..`` or an absolute path.
- All new contents are staged as temporary files, then committed in one short step with signals
  deferred (``kvgen.output.commit``, ``kvgen.core.signals``): an interrupted or failed render leaves the old
  tree or the new one, never a mix.
- One render at a time: an exclusive ``flock`` on OUT from reading it until the commit is done;
  ``--check`` takes a shared one.

This module decides (the survey); the others carry it out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from kvgen.core.signals import Deferred
from kvgen.output import commit, manifest, tree
from kvgen.output.safedir import (
    HOW_TO_RESOLVE,
    ROOT,
    Found,
    OutDirError,
    SafeDir,
    lock,
    open_root,
    read_at,
    unsafe_message,
)

_MANIFEST = PurePosixPath(manifest.NAME)
_FORM = (
    "kvgen writes its own kustomization.yaml, and in <name>.yaml objects, the first labelled "
    "app.kubernetes.io/managed-by: kvgen and app.kubernetes.io/instance: <name>"
)


@dataclass
class Survey:
    """What rendering into OUT would do, found without writing anything."""

    root: Path
    changes: tree.Changes = field(default_factory=tree.Changes)
    refusals: list[str] = field(default_factory=list)  # files render will not replace: exit 1
    warnings: list[str] = field(default_factory=list)
    writes: list[tuple[PurePosixPath, bytes, int | None]] = field(default_factory=list)  # path, content, old mode
    deletes: list[tuple[PurePosixPath, str]] = field(default_factory=list)  # path, its digest
    prunable: set[PurePosixPath] = field(default_factory=set)  # directories removed once emptied (_prunable)
    manifest_text: str = ""
    manifest_current: bool = False

    def show(self, rel: PurePosixPath) -> str:
        return f"{self.root.as_posix().rstrip('/')}/{rel}"

    @property
    def up_to_date(self) -> bool:
        return self.changes.clean and self.manifest_current


class _Fatal:
    """Problems that stop even --check: links, non-regular files, a file where a directory goes."""

    def __init__(self, d: SafeDir | None):
        self.d = d
        self.messages: list[str] = []
        self.blocked = False  # a file where a directory must go: exit 2, else 1

    def add(self, found: Found, suffix: str = "") -> None:
        assert self.d is not None, "without OUT every path is absent, never unsafe"
        self.messages.append(unsafe_message(self.d, found) + suffix)
        self.blocked |= found.kind == "notdir"

    def raise_any(self) -> None:
        if self.messages:
            raise OutDirError(list(dict.fromkeys(self.messages)), 2 if self.blocked else 1)


def _owned(d: SafeDir | None, s: Survey) -> tuple[Found, dict[PurePosixPath, str] | None]:
    """The manifest as found, and the files it says kvgen wrote (None: no manifest)."""
    if d is None:
        return Found("absent", _MANIFEST), None
    found = d.read(_MANIFEST)
    if found.kind == "absent":
        return found, None
    if found.kind != "file":
        raise OutDirError([unsafe_message(d, found)], 1)
    try:
        return found, manifest.loads(found.data.decode("utf-8"))
    except (manifest.ManifestError, UnicodeDecodeError) as exc:
        raise OutDirError(
            [
                f"{s.show(_MANIFEST)} {exc}: kvgen will not act on it; restore it from version control, "
                "or delete it (kvgen then adopts only the files identical to what it renders)"
            ],
            1,
        ) from None


def _planned(
    d: SafeDir | None, s: Survey, fatal: _Fatal, files: dict[PurePosixPath, str], owned: dict[PurePosixPath, str] | None
) -> None:
    """Each file to render: missing (write), identical (adopt), kvgen's unedited (replace) or refused."""
    for rel, text in files.items():
        _check_safe(rel)
        new = text.encode("utf-8")
        found = Found("absent", rel) if d is None else d.read(rel)
        if found.kind == "absent":
            s.changes.missing.append((rel, text))
            s.writes.append((rel, new, None))
        elif found.kind != "file":
            fatal.add(found)
        elif found.data == new:
            s.changes.unchanged += 1
        else:
            s.changes.changed.append((rel, found.data.decode("utf-8", "replace"), text))
            # kvgen's own only in kvgen's form: an earlier kvgen's kustomization (no manifest yet), or what
            # the manifest lists with this digest (the manifest is input: it may claim a file of yours)
            kvgens = tree.written_by_kvgen(rel, found.data)
            migrating = owned is None and rel.name == tree.KUSTOMIZATION and kvgens
            listed = owned is not None and owned.get(rel) == manifest.digest(found.data)
            if migrating or (listed and kvgens):
                s.writes.append((rel, new, found.mode))
            elif listed:
                s.refusals.append(
                    f"{s.show(rel)} is listed in {manifest.NAME} with its sha256, but does not hold what kvgen "
                    f"writes ({_FORM}); kvgen does not replace files it did not write: {HOW_TO_RESOLVE}"
                )
            elif owned is not None and rel in owned:
                s.refusals.append(
                    f"{s.show(rel)} was changed since kvgen wrote it (its sha256 differs from "
                    f"{manifest.NAME}); kvgen will not overwrite your edits: {HOW_TO_RESOLVE}"
                )
            else:
                s.refusals.append(
                    f"{s.show(rel)} was not written by kvgen (it is not in {manifest.NAME}), and kvgen "
                    f"does not replace files it did not write: {HOW_TO_RESOLVE}"
                )


def _stale(d: SafeDir, s: Survey, stale: dict[PurePosixPath, str]) -> None:
    """Files the manifest lists that are no longer produced. The manifest is input (a pull request may
    edit it), so a file is deleted only when kvgen can tell it wrote it: a name kvgen writes
    (``tree.layout_reason``), the listed digest, and kvgen's form (``tree.written_by_kvgen``)."""
    for rel, digest in sorted(stale.items()):
        reason = tree.layout_reason(rel)
        if reason is not None:
            s.warnings.append(
                f"{s.show(_MANIFEST)} lists {str(rel)!r}, which kvgen does not remove ({reason}): left alone, "
                f"and left out of the new {manifest.NAME}"
            )
            continue
        found = d.read(rel)
        matches = found.kind == "file" and manifest.digest(found.data) == digest
        if matches and tree.written_by_kvgen(rel, found.data):
            s.changes.stale.append((rel, found.data.decode("utf-8", "replace")))
            s.deletes.append((rel, digest))
        elif matches:
            s.warnings.append(
                f"{s.show(_MANIFEST)} lists {str(rel)!r} with its sha256, but it does not hold what kvgen writes "
                f"({_FORM}): left alone, and left out of the new {manifest.NAME}"
            )
        elif found.kind == "file":
            s.warnings.append(
                f"{s.show(rel)} is no longer produced but was changed since kvgen wrote it: left in "
                "place, and no longer kvgen's; delete it if you do not need it"
            )
        elif found.kind != "absent":
            s.warnings.append(f"{s.show(rel)} is no longer produced and is no longer a regular file: left alone")


def _prunable(d: SafeDir, s: Survey, owned: dict[PurePosixPath, str]) -> set[PurePosixPath]:
    """The directories of the previous tree this render removes once its deletions leave them empty:
    each one whose stale kustomization.yaml it deletes and that its parent's kustomization.yaml (kvgen's
    form, unedited by the manifest's digest) lists. A directory of yours, even holding a copy of a file
    kvgen wrote, is never removed."""
    out = set()
    for rel, _digest in s.deletes:
        if rel.name != tree.KUSTOMIZATION or rel.parent == ROOT:
            continue
        parent = rel.parent.parent / tree.KUSTOMIZATION
        found = d.read(parent)
        if (
            found.kind == "file"
            and owned.get(parent) == manifest.digest(found.data)
            and rel.parent.name in (tree.resources_of(found.data) or ())
        ):
            out.add(rel.parent)
    return out


def _extras(d: SafeDir | None, s: Survey, fatal: _Fatal, extras: list[str]) -> None:
    """--kustomize-resource paths: never reached through a link; a warning while they do not exist."""
    for extra in extras:
        rel = PurePosixPath(extra)
        found = Found("absent", rel) if d is None else d.probe(rel)
        if found.kind in ("link", "notdir"):
            fatal.add(found, f" (named by --kustomize-resource {extra})")
        elif found.kind == "absent":
            s.warnings.append(
                f"{s.show(rel)} (--kustomize-resource) does not exist yet; kustomize will fail until you add it"
            )


def _survey(d: SafeDir | None, root: Path, files: dict[PurePosixPath, str], extras: list[str]) -> Survey:
    s = Survey(root)
    found_manifest, owned = _owned(d, s)
    fatal = _Fatal(d)
    _planned(d, s, fatal, files, owned)
    if owned is not None and d is not None:  # a manifest was read, so OUT exists
        _stale(d, s, {rel: digest for rel, digest in owned.items() if rel not in files})
        s.prunable = _prunable(d, s, owned)
    _extras(d, s, fatal, extras)
    fatal.raise_any()
    if owned is None and d is not None:
        s.warnings += _earlier_version_leftovers(d, files)
    s.manifest_text = manifest.dumps({rel: manifest.digest(text.encode("utf-8")) for rel, text in files.items()})
    s.manifest_current = found_manifest.kind == "file" and found_manifest.data == s.manifest_text.encode("utf-8")
    if not s.manifest_current and s.changes.clean:
        # only the manifest is behind (an OUT written before kvgen kept one, or an edited manifest)
        if found_manifest.kind == "absent":
            s.changes.missing.append((_MANIFEST, s.manifest_text))
        else:
            s.changes.changed.append((_MANIFEST, found_manifest.data.decode("utf-8", "replace"), s.manifest_text))
    return s


def _check_safe(rel: PurePosixPath) -> None:
    reason = manifest.unsafe_reason(str(rel))
    if reason is not None:  # the plan never makes one; refuse rather than trust it
        raise OutDirError([f"refusing to write {rel}: the path {reason}"], 2)


def _earlier_version_leftovers(d: SafeDir, files: dict[PurePosixPath, str]) -> list[str]:
    """Files listed by an earlier kvgen's marked kustomizations that are no longer produced. Without a
    manifest kvgen cannot tell it wrote them, so they stay; the user is told."""
    out = []
    for top, _dirs, names, dfd in os.fwalk(dir_fd=d.fds[ROOT], follow_symlinks=False):
        if tree.KUSTOMIZATION not in names or not stat.S_ISREG(os.lstat(tree.KUSTOMIZATION, dir_fd=dfd).st_mode):
            continue
        text, _mode = read_at(dfd, tree.KUSTOMIZATION)
        if not text or not text.startswith(tree.MARKER.encode()):
            continue
        listed = [
            tree.item_value(line.strip()[2:].strip())  # quoted by kvgen where YAML needs it
            for line in text.decode("utf-8", "replace").splitlines()
            if line.strip().startswith("- ")
        ]
        for item in [tree.KUSTOMIZATION, *listed]:
            rel = PurePosixPath(top) / item
            if manifest.unsafe_reason(item) or "/" in item or rel in files or item not in names:
                continue
            if stat.S_ISREG(os.lstat(item, dir_fd=dfd).st_mode):
                out.append(
                    f"{d.show(rel)} was listed by an earlier kvgen version and is no longer produced; without "
                    f"{manifest.NAME} kvgen cannot tell it wrote it, so it stays: delete it if you do not need it"
                )
    return out


def check(
    root: Path,
    files: dict[PurePosixPath, str],
    extras: Sequence[str] = (),
    on_wait: Callable[[str], None] = lambda _m: None,
) -> Survey:
    """Compare OUT with the planned files, writing nothing (not even OUT itself)."""
    d = open_root(root, create=False)
    if d is None:
        return _survey(None, root, files, list(extras))
    try:
        lock(d, exclusive=False, pending=None, on_wait=on_wait)
        return _survey(d, root, files, list(extras))
    except OSError as exc:
        raise commit.os_error(d, None, exc, "nothing was read") from None
    finally:
        d.close()


def write(
    root: Path,
    files: dict[PurePosixPath, str],
    extras: Sequence[str] = (),
    on_wait: Callable[[str], None] = lambda _m: None,
) -> Survey:
    """Bring OUT to the planned files, or refuse and change nothing (see the module docstring)."""
    with Deferred() as pending:
        fresh = not os.path.lexists(root)
        d = open_root(root, create=True)
        try:
            lock(d, exclusive=True, pending=pending, on_wait=on_wait)
            try:
                s = _survey(d, root, files, list(extras))
                if s.refusals:
                    raise OutDirError(s.refusals, 1)
                s.warnings += commit.remove_leftovers(d)
                if s.up_to_date:
                    return s
            except OSError as exc:
                raise commit.os_error(d, None, exc, "nothing was changed") from None
            staged = commit.stage(d, s.writes, s.manifest_text, pending)
            commit.commit(d, staged, s.deletes, s.prunable)
            return s
        except BaseException:
            if fresh:  # made by this render, which failed: removed again when empty, as if never made
                d.close()
                _remove_if_empty(root)
            raise
        finally:
            d.close()


def _remove_if_empty(root: Path) -> None:
    try:
        os.rmdir(root)
    except OSError:
        pass


__all__ = ["OutDirError", "Survey", "check", "write"]
