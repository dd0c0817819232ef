"""A request trace: one JSON object a line, as Mooncake's FAST'25 release writes them.

Each line holds ``timestamp`` (milliseconds from the trace's start), ``input_length`` (prompt tokens),
``output_length`` and ``hash_ids``: one id per block of ``block_size`` prompt tokens, the last block
possibly partial; equal ids are equal prefixes (the ids are chained: an id names its block and every
block before it). Every problem of the file is reported at once, each at its line, and nothing is
replayed from a file with problems.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass

from kvgen.core.errors import Location, Problem, SpecError, shown

MOONCAKE_BLOCK_TOKENS = 512  # Mooncake's FAST'25 traces: "each block is 512 tokens" (FAST25-release/README.md)
MAX_PROBLEMS = 50  # a file that is not a trace at all would otherwise print one problem per line
_INT_MAX = 2**53  # the largest integer JSON readers agree on


@dataclass(frozen=True, slots=True)
class Request:
    timestamp_ms: int
    input_tokens: int
    output_tokens: int
    blocks: tuple[int, ...]


@dataclass(frozen=True)
class Trace:
    source: str
    block_size: int
    requests: list[Request]

    @property
    def input_tokens(self) -> int:
        return sum(r.input_tokens for r in self.requests)

    @property
    def duration_s(self) -> float:
        """Seconds from the first request to the last (0 for one request)."""
        if not self.requests:
            return 0.0
        return (self.requests[-1].timestamp_ms - self.requests[0].timestamp_ms) / 1000


def _count(obj: dict[str, object], key: str, problems: list[Problem], at: Location) -> int:
    value = obj.get(key)
    if key not in obj:
        problems.append(Problem((key,), f"missing: every request needs {key}", location=at))
    elif isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _INT_MAX:
        problems.append(Problem((key,), f"{shown(value)} is not a whole number of at least 0", location=at))
    else:
        return value
    return 0


def parse(text: str, source: str, block_size: int = MOONCAKE_BLOCK_TOKENS) -> Trace:
    """The trace in ``text`` (read from ``source``), or a SpecError listing every problem by line."""
    problems: list[Problem] = []
    requests: list[Request] = []
    last_ts = 0
    for n, line in enumerate(text.splitlines(), 1):
        if len(problems) >= MAX_PROBLEMS:
            break
        if not line.strip():
            continue
        at = Location(source, n, 1)
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:
            problems.append(Problem((), f"not a JSON object: {exc}", location=at))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem((), f"not a JSON object but {type(obj).__name__}", location=at))
            continue
        found = len(problems)
        ts = _count(obj, "timestamp", problems, at)
        length = _count(obj, "input_length", problems, at)
        out = _count(obj, "output_length", problems, at) if "output_length" in obj else 0
        ids = obj.get("hash_ids")
        if not isinstance(ids, list):
            problems.append(Problem(("hash_ids",), f"{shown(ids)} is not a list of block ids", location=at))
            ids = []
        bad = [] if all(type(h) is int for h in ids) else [i for i, h in enumerate(ids) if type(h) is not int]
        for i in bad[:3]:
            problems.append(Problem(("hash_ids", i), f"{shown(ids[i])} is not a block id (an integer)", location=at))
        need = -(-length // block_size)
        if len(problems) == found and len(ids) != need:
            problems.append(
                Problem(
                    ("hash_ids",),
                    f"{len(ids)} block ids for {length} input tokens: blocks of {block_size} tokens need {need}",
                    hint="--trace-block-size is the tokens one id covers (Mooncake's traces: 512)",
                    location=at,
                )
            )
        if len(problems) == found and ts < last_ts:
            problems.append(
                Problem(
                    ("timestamp",),
                    f"{ts} is before the previous request's {last_ts}: sort the trace by time",
                    location=at,
                )
            )
        if len(problems) == found:
            last_ts = ts
            requests.append(Request(ts, length, out, tuple(ids)))
    if not problems and not requests:
        problems.append(
            Problem((), "no requests: a trace holds one JSON object a line", location=Location(source, 1, 1))
        )
    if problems:
        raise SpecError(source, problems[:MAX_PROBLEMS])
    return Trace(source, block_size, requests)


MAX_BYTES = 2 << 30  # a trace larger than this (uncompressed) is refused, not read into memory


def read(path: str, block_size: int = MOONCAKE_BLOCK_TOKENS) -> Trace:
    """The trace file at ``path`` (gzip-compressed when it ends in .gz); an unreadable file is a SpecError too."""
    try:
        with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise SpecError(path, [Problem((), f"larger than {MAX_BYTES >> 30} GiB: replay a sample of it")])
        text = data.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise SpecError(path, [Problem((), f"cannot read the trace: {exc}")]) from None
    return parse(text, path, block_size)
