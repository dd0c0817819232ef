"""Files a run reads beyond its arguments (a spec's ``model.config``), for replay (kvgen.output.replay).

A replayed run is keyed by its arguments' bytes; a file a spec names is not among them, so the run notes what
it read here, with the bytes' digest, and a recorded run is replayed only while each of those files still
holds the same bytes.
"""

from __future__ import annotations

import hashlib
import os

_read: dict[str, str] = {}  # absolute path -> sha256 of the bytes read


def read_bytes(path: str, limit: int) -> bytes:
    """The bytes of ``path`` (at most ``limit``: a larger file raises ValueError), noted for replay."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"it is larger than {limit // (1 << 20)} MiB")
    _read[os.path.abspath(path)] = hashlib.sha256(data).hexdigest()
    return data


def noted() -> dict[str, str]:
    """What this run read (path -> sha256)."""
    return dict(_read)


def unchanged(noted_files: dict[str, str]) -> bool:
    """Every file of ``noted_files`` still holds the bytes it held."""
    for path, digest in noted_files.items():
        try:
            with open(path, "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != digest:
                    return False
        except OSError:
            return False
    return True


def forget() -> None:
    _read.clear()
