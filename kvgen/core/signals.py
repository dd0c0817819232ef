"""Signals while kvgen writes an output directory: recorded, and acted on only where it is safe.

Inside ``Deferred()`` SIGINT, SIGTERM and SIGHUP no longer interrupt the program wherever it
happens to be: the handler only records the signal. The writer calls ``check()`` between steps
that can be undone (staging temporary files), which raises ``Interrupted`` so the temporary
files are removed; it does not call it during the short commit phase (renames, deletions, the
manifest last), so a signal there takes effect once the new tree is complete. Leaving the block
re-raises a recorded signal as ``Interrupted``; the CLI exits 128 + the signal's number (130 for
Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType
from typing import Any

from kvgen.core.errors import KvgenError

# what signal.signal() takes and returns
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

HANDLED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KvgenError):
    """A deferred signal, raised where it is safe. finished: the guarded work had completed."""

    def __init__(self, signum: int, finished: bool = False):
        self.signum = signum
        self.finished = finished
        self.name = signal.Signals(signum).name
        super().__init__(self.name)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class Deferred:
    """Record SIGINT/SIGTERM/SIGHUP instead of acting on them (main thread only; elsewhere a no-op)."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, _Handler] = {}

    def _record(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum

    def __enter__(self) -> Deferred:
        try:
            for sig in HANDLED:
                self._previous[sig] = signal.signal(sig, self._record)
        except ValueError:  # not the main thread: signals are not ours to handle
            self._restore()
        return self

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._previous.clear()

    def check(self) -> None:
        """Raise Interrupted if a signal arrived: call it only where stopping leaves nothing behind."""
        if self.received is not None:
            raise Interrupted(self.received)

    def __exit__(self, exc_type: type[BaseException] | None, _exc: BaseException | None, _tb: object) -> None:
        self._restore()
        if exc_type is None and self.received is not None:
            raise Interrupted(self.received, finished=True)


__all__ = ["Deferred", "HANDLED", "Interrupted"]
