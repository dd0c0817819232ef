"""LRU stack distances in one pass (Mattson et al., 1970): LRU is a stack algorithm, so the cache of C
blocks holds exactly the C most recently used blocks, and a block is a hit at every capacity at or above
its stack distance. One replay answers every capacity at once.

A block's distance is taken when its request arrives (before the request touches anything): 1 for the
block used last, k for the k-th most recently used distinct block, ``COLD`` for one never seen. Then the
request touches its blocks in order, every one of them (a hit is refreshed, a miss is stored: every
tier kvgen plans stores what the pod computes), tail first, so that the request's first block ends
most recent: vLLM frees a finished request's blocks tail first, LMCache's LRU inserts a request's keys
reversed, vLLM's CPU LRU ranks tails before heads; the tail is evicted before the head that makes it
useful. Memory is linear in distinct blocks: their last-use
times, kept sorted, and a dict from block to time.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

COLD = 1 << 62  # the distance of a block never seen: a miss at any capacity


class LruStack:
    """The recency order of every block seen: ``distance`` is the block's place from the top."""

    __slots__ = ("_clock", "_last", "_times")

    def __init__(self) -> None:
        self._last: dict[int, int] = {}  # block -> the time it was last used
        self._times: list[int] = []  # every block's last-use time, ascending (appends keep it sorted)
        self._clock = 0

    def __len__(self) -> int:
        return len(self._times)

    def distance(self, block: int) -> int:
        t = self._last.get(block)
        if t is None:
            return COLD
        return len(self._times) - bisect_left(self._times, t)

    def distances(self, blocks: Sequence[int]) -> list[int]:
        return [self.distance(b) for b in blocks]

    def touch(self, blocks: Iterable[int]) -> None:
        last, times = self._last, self._times
        for b in blocks:
            t = last.get(b)
            if t is not None:
                del times[bisect_left(times, t)]
            self._clock += 1
            last[b] = self._clock
            times.append(self._clock)

    def visit(self, blocks: Sequence[int]) -> list[int]:
        """The blocks' distances as the request arrives, then the request's touch."""
        found = self.distances(blocks)
        self.touch(reversed(blocks))
        return found


def replay(requests: Sequence[Sequence[int]], pods: Sequence[int] | None = None, count: int = 1) -> list[list[int]]:
    """Every request's block distances, each request replayed on its pod's own stack (``pods[i]``, one of
    ``count``; all on one stack when ``pods`` is None). LruStack.visit for each request, inlined: this loop
    is the replay's cost."""
    lasts: list[dict[int, int]] = [{} for _ in range(count)]
    all_times: list[list[int]] = [[] for _ in range(count)]
    clock = 0
    out = []
    for i, blocks in enumerate(requests):
        p = pods[i] if pods is not None else 0
        last, times = lasts[p], all_times[p]
        n = len(times)
        seen = [last.get(b) for b in blocks]
        out.append([COLD if t is None else n - bisect_left(times, t) for t in seen])
        for b in reversed(blocks):
            t = last.get(b)  # not seen[j]: a block twice in one request was touched a moment ago
            if t is not None:
                del times[bisect_left(times, t)]
            clock += 1
            last[b] = clock
            times.append(clock)
    return out
