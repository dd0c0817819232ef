"""Writing the new tree: stage every file, then commit them in one short step.

Staging writes each new content to a temporary ``.kvgen-tmp-*`` file next to its target and
fsyncs it; any failure (a full disk, a read-only directory) or a signal there removes them all
again, with the directories made for them, so the old tree is untouched. The commit renames them
over their targets, deletes the stale files (re-checking each digest) and the directories of the
previous tree they leave empty, fsyncs the directories and renames the manifest last. It has no
signal checkpoint (``kvgen.core.signals``), so a signal waits until the new tree is complete.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath

from kvgen.core.signals import Deferred
from kvgen.output import manifest
from kvgen.output.safedir import ROOT, Found, OutDirError, SafeDir, unsafe_message


def os_error(d: SafeDir, rel: PurePosixPath | None, exc: OSError, changed: str) -> OutDirError:
    where = d.show(rel) if rel is not None else d.show(ROOT)
    return OutDirError([f"{where}: {exc.strerror or exc}; {changed}"], 2)


def remove_leftovers(d: SafeDir) -> list[str]:
    """Temporary files of a render killed outright (SIGKILL, power loss) in the directories kvgen uses.
    Only kvgen makes .kvgen-tmp-* files, and only while holding the lock this render now holds."""
    out = []
    for rel, dfd in list(d.fds.items()):
        for name in os.listdir(dfd):
            if name.startswith(manifest.TEMP_PREFIX) and stat.S_ISREG(os.lstat(name, dir_fd=dfd).st_mode):
                os.unlink(name, dir_fd=dfd)
                out.append(f"removed {d.show(rel / name)}, left by an interrupted kvgen render")
    return out


@dataclass
class _Staged:
    rel: PurePosixPath
    dfd: int
    temp: str


def stage(
    d: SafeDir, writes: list[tuple[PurePosixPath, bytes, int | None]], manifest_text: str, pending: Deferred
) -> list[_Staged]:
    """Every new content (path, bytes, the mode of the file it replaces), the manifest last, as a fsynced
    temporary file next to its target; on any failure or signal all of them (and directories made for
    them) are removed again, and the old tree is as it was."""
    staged: list[_Staged] = []
    rel: PurePosixPath | None = None
    try:
        for rel, data, mode in [*writes, (PurePosixPath(manifest.NAME), manifest_text.encode("utf-8"), None)]:
            pending.check()
            dfd = d.subdir(rel.parent, create=True)
            if isinstance(dfd, Found):  # changed under us since the survey
                raise OutDirError([unsafe_message(d, dfd) + "; nothing was changed"], 2)
            item = _Staged(rel, dfd, manifest.TEMP_PREFIX + secrets.token_hex(8))
            staged.append(item)
            fd = os.open(
                item.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dfd
            )
            try:
                if mode is not None:
                    os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        pending.check()
        return staged
    except BaseException as exc:
        _discard(d, staged)
        if isinstance(exc, OSError):
            raise os_error(d, rel, exc, "nothing was changed") from None
        raise


def _discard(d: SafeDir, staged: list[_Staged]) -> None:
    for item in staged:
        try:
            os.unlink(item.temp, dir_fd=item.dfd)
        except OSError:
            pass
    for rel in reversed(d.created):
        try:
            os.rmdir(rel.name, dir_fd=d.fds[rel.parent])
        except (OSError, KeyError):
            pass


def commit(
    d: SafeDir, staged: list[_Staged], deletes: list[tuple[PurePosixPath, str]], prunable: set[PurePosixPath]
) -> None:
    """Renames, deletions (with the directories in prunable they leave empty), then the manifest: no
    checkpoint here, so a signal waits until the end."""
    *files, last = staged
    done = 0
    try:
        for item in files:
            os.replace(item.temp, item.rel.name, src_dir_fd=item.dfd, dst_dir_fd=item.dfd)
            done += 1
        touched = {item.rel.parent for item in files}
        for rel, digest in deletes:
            found = d.read(rel)
            if found.kind != "file" or manifest.digest(found.data) != digest:
                continue  # changed since the survey: leave it
            os.unlink(rel.name, dir_fd=d.fds[rel.parent])
            touched.add(_prune(d, rel.parent, prunable))
        for rel in touched:
            while rel not in d.fds:  # pruned: its parent holds the change
                rel = rel.parent
            os.fsync(d.fds[rel])
        os.replace(last.temp, last.rel.name, src_dir_fd=last.dfd, dst_dir_fd=last.dfd)
        os.fsync(last.dfd)
    except OSError as exc:
        _discard(d, staged[done:])
        raise OutDirError(
            [
                f"{d.show(ROOT)}: {exc.strerror or exc} while replacing files; {done} of {len(files)} "
                "files hold the new render. Run kvgen render again to finish (it adopts files identical "
                "to what it renders)"
            ],
            2,
        ) from None


def _prune(d: SafeDir, rel: PurePosixPath, prunable: set[PurePosixPath]) -> PurePosixPath:
    """Remove directory rel and its parents while they are empty and in prunable; the first one kept."""
    while rel != ROOT and rel in prunable:
        try:
            os.rmdir(rel.name, dir_fd=d.fds[rel.parent])
        except OSError:
            return rel
        os.close(d.fds.pop(rel))
        rel = rel.parent
    return rel


__all__ = ["commit", "os_error", "remove_leftovers", "stage"]
