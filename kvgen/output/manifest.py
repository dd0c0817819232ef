"""kvgen's record of the files it wrote into an output directory: ``OUT/.kvgen-manifest.json``.

kvgen replaces or deletes a file in OUT only when this manifest lists it and the file's sha256
still matches, so a file you wrote (or edited after kvgen wrote it) is never lost. The manifest is
itself input (a pull request may edit it), so that is necessary, never sufficient: ``kvgen.output.outdir``
also requires a name and a content of kvgen's own (``kvgen.output.tree``). The manifest
is deterministic (sorted keys, no timestamps), meant to be committed with the rendered tree:

    {"files": {"kustomization.yaml": "sha256:...", "prod/a.yaml": "sha256:..."},
     "generator": "kvgen render", "version": 1}

Paths are relative to OUT, in POSIX form, and must stay inside it: a manifest naming an absolute
path, ``..``, ``.`` or an empty component is refused as a whole, never acted upon.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import PurePosixPath

from kvgen.core.errors import KvgenError

NAME = ".kvgen-manifest.json"
TEMP_PREFIX = ".kvgen-tmp-"  # kvgen's temporary files, renamed into place or removed
VERSION = 1
GENERATOR = "kvgen render"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class ManifestError(KvgenError):
    pass


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def unsafe_reason(path: str) -> str | None:
    """Why a relative path must not be used inside OUT, or None when it stays inside OUT."""
    if not path or "\\" in path or "\0" in path:
        return "is empty or holds a backslash or NUL"
    pure = PurePosixPath(path)
    if pure.is_absolute():
        return "is absolute"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "leaves the directory (a '..', '.' or empty component)"
    return None


def dumps(files: dict[PurePosixPath, str]) -> str:
    """The manifest for files (relative path -> sha256 digest): sorted, stable bytes."""
    body = {"files": {str(k): v for k, v in files.items()}, "generator": GENERATOR, "version": VERSION}
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def loads(text: str) -> dict[PurePosixPath, str]:
    """The files a manifest lists; ManifestError naming every entry that is not kvgen's format."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ManifestError(f"is not JSON ({exc})") from None
    except RecursionError:  # json nests recursively: 100,000 "[" exhaust Python's stack
        raise ManifestError(f"is not a version-{VERSION} kvgen manifest (JSON nested too deep)") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("files"), dict):
        raise ManifestError(f"is not a version-{VERSION} kvgen manifest (an object with 'version' and 'files')")
    out: dict[PurePosixPath, str] = {}
    problems = []
    for key, value in data["files"].items():
        reason = unsafe_reason(key)
        if reason is None and key == NAME:
            reason = "is the manifest itself"
        if reason is not None:
            problems.append(f"lists {key!r}, which {reason}")
        elif not isinstance(value, str) or not _DIGEST.fullmatch(value):
            problems.append(f"lists {key!r} with {value!r}, not a 'sha256:<64 hex digits>' digest")
        else:
            out[PurePosixPath(key)] = value
    if problems:
        raise ManifestError("; ".join(problems))
    return out


__all__ = ["GENERATOR", "ManifestError", "NAME", "TEMP_PREFIX", "VERSION", "digest", "dumps", "loads", "unsafe_reason"]
