"""The output directory, reached without following any symbolic link.

OUT itself is opened with O_NOFOLLOW; every directory below it is opened relative to its parent's
descriptor with O_NOFOLLOW, and every file with O_NOFOLLOW after an lstat, so a link planted
anywhere in OUT (or swapped in meanwhile) is reported, never followed. ``lock`` serializes renders
into one OUT with ``flock`` on that descriptor: no lock file, and a killed render's lock goes with it.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal, overload

from kvgen.core.errors import KvgenError
from kvgen.core.signals import Deferred

LOCK_TIMEOUT = 60.0  # seconds a render waits for another render into the same OUT
ROOT = PurePosixPath(".")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
HOW_TO_RESOLVE = "move it out of the way (or delete it) and render again"


class OutDirError(KvgenError):
    """OUT cannot be used as asked. code 1: its contents are in the way (files kvgen did not write,
    links, an invalid manifest); code 2: OUT itself is unusable (a file, a link, full, read-only,
    locked)."""

    def __init__(self, messages: list[str], code: int):
        self.messages = messages
        self.code = code
        super().__init__("; ".join(messages))


@dataclass
class Found:
    kind: str  # absent | file | link | other (a directory, FIFO, device...) | notdir (a parent is not a directory)
    at: PurePosixPath  # the path the kind is about (a parent for link/notdir met on the way)
    data: bytes = b""
    mode: int = 0


class SafeDir:
    """OUT, opened without following links; sub-directories opened relative to it."""

    def __init__(self, root: Path, fd: int):
        self.root = root
        self.fds: dict[PurePosixPath, int] = {ROOT: fd}
        self.created: list[PurePosixPath] = []  # directories this render made, in order

    def show(self, rel: PurePosixPath) -> str:
        return f"{self.root.as_posix().rstrip('/')}/{rel}" if rel != ROOT else self.root.as_posix()

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()

    def subdir(self, rel: PurePosixPath, create: bool = False) -> int | Found:
        """A descriptor for directory rel, or why there is none (absent, a link, not a directory)."""
        if rel in self.fds:
            return self.fds[rel]
        parent = self.subdir(rel.parent, create)
        if isinstance(parent, Found):
            return parent
        try:
            st = os.lstat(rel.name, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return Found("absent", rel)
            os.mkdir(rel.name, 0o777, dir_fd=parent)
            self.created.append(rel)
            st = os.lstat(rel.name, dir_fd=parent)
        if stat.S_ISLNK(st.st_mode):
            return Found("link", rel)
        if not stat.S_ISDIR(st.st_mode):
            return Found("notdir", rel)
        self.fds[rel] = os.open(rel.name, _DIR_FLAGS, dir_fd=parent)
        return self.fds[rel]

    def read(self, rel: PurePosixPath) -> Found:
        """What rel is; a regular file's bytes and mode with it."""
        parent = self.subdir(rel.parent)
        if isinstance(parent, Found):
            return Found("absent", rel) if parent.kind == "absent" else parent
        try:
            st = os.lstat(rel.name, dir_fd=parent)
        except FileNotFoundError:
            return Found("absent", rel)
        if stat.S_ISLNK(st.st_mode):
            return Found("link", rel)
        if not stat.S_ISREG(st.st_mode):
            return Found("other", rel)
        data, mode = read_at(parent, rel.name)
        return Found("other", rel) if data is None else Found("file", rel, data, mode)

    def probe(self, rel: PurePosixPath) -> Found:
        """What rel is, without reading it: absent, a link (itself or on the way), notdir, or file."""
        parent = self.subdir(rel.parent)
        if isinstance(parent, Found):
            return parent
        try:
            st = os.lstat(rel.name, dir_fd=parent)
        except FileNotFoundError:
            return Found("absent", rel)
        return Found("link" if stat.S_ISLNK(st.st_mode) else "file", rel)


def read_at(dfd: int, name: str) -> tuple[bytes | None, int]:
    """The bytes and mode of regular file name in directory dfd, never through a link; (None, 0) when
    it is anything else (swapped for a FIFO between an lstat and now, say)."""
    fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, 0
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), stat.S_IMODE(st.st_mode)
    finally:
        os.close(fd)


def unsafe_message(d: SafeDir, found: Found) -> str:
    where = d.show(found.at)
    if found.kind == "link":
        return (
            f"{where} is a symbolic link; kvgen never follows links inside the output directory: replace it "
            "with a real directory or file, or remove it"
        )
    if found.kind == "notdir":
        return f"{where} is a file where kvgen needs a directory; {HOW_TO_RESOLVE}"
    return f"{where} is not a regular file (a directory, FIFO or device?); {HOW_TO_RESOLVE}"


@overload
def open_root(root: Path, create: Literal[True]) -> SafeDir: ...
@overload
def open_root(root: Path, create: bool) -> SafeDir | None: ...
def open_root(root: Path, create: bool) -> SafeDir | None:
    """OUT opened with O_NOFOLLOW (created when asked), or None when absent and not created."""
    shown = root.as_posix()
    try:
        try:
            st = os.lstat(root)
        except FileNotFoundError:
            if not create:
                return None
            os.makedirs(root, exist_ok=True)
            st = os.lstat(root)
        if stat.S_ISLNK(st.st_mode):
            raise OutDirError(
                [
                    f"{shown} is a symbolic link; kvgen writes only into a real directory: give the "
                    "directory it points to, or remove the link"
                ],
                2,
            )
        if not stat.S_ISDIR(st.st_mode):
            raise OutDirError(
                [f"{shown} exists and is not a directory; give -o a directory (kvgen writes a tree of files into it)"],
                2,
            )
        return SafeDir(root, os.open(root, _DIR_FLAGS))
    except (NotADirectoryError, FileExistsError):
        raise OutDirError([f"{shown}: a parent of the output directory is a file, not a directory"], 2) from None
    except OSError as exc:
        raise OutDirError([f"{shown}: cannot use the output directory: {exc.strerror or exc}"], 2) from None


def lock(d: SafeDir, exclusive: bool, pending: Deferred | None, on_wait: Callable[[str], None]) -> None:
    import fcntl

    op = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    deadline = time.monotonic() + LOCK_TIMEOUT
    waited = False
    while True:
        try:
            fcntl.flock(d.fds[ROOT], op | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP) and not exclusive:
                return  # a file system without locks: --check reads anyway
            raise OutDirError([f"{d.show(ROOT)}: cannot lock the output directory: {exc.strerror}"], 2) from None
        if not waited:
            on_wait(f"kvgen: waiting for another kvgen render into {d.show(ROOT)} to finish")
            waited = True
        if time.monotonic() > deadline:
            raise OutDirError(
                [
                    f"{d.show(ROOT)}: another kvgen render has held this directory for {LOCK_TIMEOUT:.0f} s; "
                    "try again when it has finished"
                ],
                2,
            )
        if pending is not None:
            pending.check()
        time.sleep(0.05)


__all__ = [
    "Found",
    "HOW_TO_RESOLVE",
    "LOCK_TIMEOUT",
    "OutDirError",
    "ROOT",
    "SafeDir",
    "lock",
    "open_root",
    "read_at",
    "unsafe_message",
]
