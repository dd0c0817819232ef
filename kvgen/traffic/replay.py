"""Hit ratios from a trace: which tier serves each prompt token, the curve against capacity, and the
capacity a target needs (docs/sizing.md, "Hit ratios from a trace").

Prefix semantics: vLLM reuses a prompt's longest run of leading cached blocks, first from the GPU's
prefix cache, then the continuation from the connector's tiers; the first block missing everywhere ends
the hit. So block i of a request is a hit at capacity C when every block up to it has a stack distance
of at most C: its running maximum of distances (``stack``) decides, and one histogram of running maxima
gives the hit ratio at every capacity. Tiers are inclusive (each stores what the pod computes and
refreshes what it serves, so a tier of C blocks holds the C most recently used ones), and a block is
served by the first tier, in the order vLLM reads them, that holds it. A shared tier is one LRU over
every replica's requests. A prompt's last token is always computed (vLLM schedules at least one token),
so the last block counts one token less.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from kvgen.traffic import routing as routes
from kvgen.traffic.stack import COLD, replay
from kvgen.traffic.trace import Request, Trace

TARGETS = ("0.9", "0.99")  # capacityFor's keys: shares of the maximum hit ratio
STEPS_PER_DOUBLING = 4  # the curve's points: capacities 2^(1/4) apart, from one block to the whole trace


@dataclass(frozen=True)
class Tier:
    """One tier as planned: its name (kvCache.tiers[].tier), its capacity in tokens per pod (None:
    unbounded) and whether every replica shares it."""

    name: str
    tokens: int | None
    shared: bool = False
    held: int | None = None  # the tokens it holds at most, where that is below its size (an eviction watermark)

    @property
    def holds(self) -> int | None:
        return self.tokens if self.held is None else self.held


def block_tokens(r: Request, block_size: int) -> list[int]:
    """The prompt tokens of each block of a request, the last one's less the token vLLM always computes."""
    n = len(r.blocks)
    out = [block_size] * n
    if n:
        out[-1] = r.input_tokens - block_size * (n - 1) - 1
    return out


@dataclass(frozen=True)
class Curve:
    """Hit tokens against capacity in blocks for one replay: ``hits(c)`` is exact at every capacity."""

    depths: list[int]  # the distinct running maxima, ascending (COLD left out)
    cumulative: list[int]  # hit tokens at capacity depths[i]
    block_size: int

    @classmethod
    def of(cls, requests: Sequence[Request], distances: Sequence[Sequence[int]], block_size: int) -> Curve:
        tokens_at: dict[int, int] = {}
        for r, ds in zip(requests, distances, strict=True):
            m = 0
            for d, t in zip(ds, block_tokens(r, block_size), strict=True):
                if d > m:
                    m = d
                if m == COLD:
                    break
                tokens_at[m] = tokens_at.get(m, 0) + t
        depths = sorted(tokens_at)
        return cls(depths, list(accumulate(tokens_at[d] for d in depths)), block_size)

    @property
    def max_hits(self) -> int:
        return self.cumulative[-1] if self.cumulative else 0

    def hits(self, blocks: int | None) -> int:
        """Hit tokens with a cache of ``blocks`` (None: unbounded)."""
        if blocks is None:
            return self.max_hits
        i = bisect_right(self.depths, blocks)
        return self.cumulative[i - 1] if i else 0

    def blocks_for(self, hit_tokens: float) -> int | None:
        """The smallest capacity in blocks with at least ``hit_tokens`` hits (None: no capacity has)."""
        i = bisect_left(self.cumulative, hit_tokens)
        return self.depths[i] if i < len(self.depths) else None

    def points(self) -> list[int]:
        """Capacities in blocks for the curve: 2^(k/4), k = 0, 1, ..., up to where the maximum is reached."""
        top = self.depths[-1] if self.depths else 1
        out: list[int] = []
        k = 0
        while True:
            c = round(2 ** (k / STEPS_PER_DOUBLING))
            if not out or c > out[-1]:
                out.append(min(c, top))
            if c >= top:
                return out
            k += 1


def served(
    requests: Sequence[Request],
    block_size: int,
    local: Sequence[Sequence[int]],
    local_tiers: Sequence[Tier],
    shared_dist: Sequence[Sequence[int]] | None,
    shared_tier: Tier | None,
) -> dict[str, int]:
    """Prompt tokens each tier serves: a block from the first local tier holding it, else from the shared
    tier; a block neither holds ends the request's hit."""
    caps = [COLD - 1 if t.holds is None else t.holds // block_size for t in local_tiers]
    # the first tier holding a block is the first whose capacity reaches its distance: the first place
    # where the running maximum of the capacities does (bisect over that non-decreasing list)
    reach = list(accumulate(caps, max))
    names = [t.name for t in local_tiers]
    count = len(names)
    tokens_of = [0] * count
    shared_tokens = 0
    shared_cap = (
        -1 if shared_tier is None else (COLD - 1 if shared_tier.holds is None else shared_tier.holds // block_size)
    )
    for i, r in enumerate(requests):
        ds = local[i]
        ss = shared_dist[i] if shared_dist is not None else None
        m = 0
        for j, t in enumerate(block_tokens(r, block_size)):
            d = ds[j]
            if d > m:
                m = d
            k = bisect_left(reach, m)
            if k < count:
                tokens_of[k] += t
            elif ss is not None and ss[j] <= shared_cap:
                shared_tokens += t
                m = 0  # the local tiers may hold the continuation again
            else:
                break
    out = dict(zip(names, tokens_of, strict=True))
    if shared_tier is not None:
        out[shared_tier.name] = shared_tokens
    return out


def _ratio(part: float, whole: int) -> float:
    return round(part / whole, 6) if whole else 0.0


class Replayer:
    """One trace's replays, kept: the one-cache replay and each routing's per-pod replay are the same for
    every tier size (only the gateway's routing depends on the sizes it is given), so the replays of a
    changed spec reuse them."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self._blocks = [r.blocks for r in trace.requests]
        self.one = replay(self._blocks)
        self.curve = Curve.of(trace.requests, self.one, trace.block_size)
        self._runs: dict[tuple[object, ...], tuple[list[list[int]], list[int]]] = {}
        self._pod_curves: dict[tuple[object, ...], Curve] = {}  # the per-pod replays' curves, by the same key

    @staticmethod
    def _key(
        mode: str, replicas: int, index_blocks: int, scorers: routes.Scorers, kv_tokens: int
    ) -> tuple[object, ...]:
        """What a routing's per-pod replay depends on: only the gateway's routing depends on the sizes."""
        key: tuple[object, ...] = (mode, replicas)
        return key + (index_blocks, scorers, kv_tokens) if mode == "gateway" else key

    def routed(
        self, mode: str, replicas: int, index_blocks: int, scorers: routes.Scorers, kv_tokens: int
    ) -> tuple[list[list[int]], list[int]]:
        """(per-pod distances, pods) of every request under ``mode``."""
        if replicas <= 1:
            return self.one, [0] * len(self._blocks)
        key = self._key(mode, replicas, index_blocks, scorers, kv_tokens)
        if key not in self._runs:
            pods = routes.assign(
                mode, self.trace.requests, replicas, self.trace.block_size, index_blocks, scorers, kv_tokens
            )
            self._runs[key] = (replay(self._blocks, pods, replicas), pods)
        return self._runs[key]

    def analyse(
        self, tiers: Sequence[Tier], replicas: int = 1, mode: str = "none", scorers: routes.Scorers | None = None
    ) -> dict[str, object]:
        """The ``trace`` object of ``kvgen explain --trace`` (docs/explain.md): see the module's docstring."""
        trace, curve = self.trace, self.curve
        reqs, bs = trace.requests, trace.block_size
        total = trace.input_tokens
        scorers = scorers or routes.Scorers()
        local_tiers = [t for t in tiers if not t.shared]
        shared = next((t for t in tiers if t.shared), None)
        local_blocks = max((COLD if t.holds is None else t.holds // bs) for t in local_tiers) if local_tiers else 0
        gpu_tokens = (local_tiers[0].tokens or 0) if local_tiers else 0
        shared_dist = self.one if shared is not None else None
        seconds = trace.duration_s

        def run(how: str) -> tuple[dict[str, int], list[list[int]], list[int]]:
            dists, pods = self.routed(how, replicas, local_blocks, scorers, gpu_tokens)
            return served(reqs, bs, dists, local_tiers, shared_dist, shared), dists, pods

        def busiest(pods: list[int]) -> float:
            load = [0] * max(replicas, 1)
            for r, p in zip(reqs, pods, strict=True):
                load[p] += r.input_tokens
            return _ratio(max(load), total)

        by_tier, dists, pods = run(mode)
        hit = sum(by_tier.values())
        per_pod = curve
        if replicas > 1:
            key = self._key(mode, replicas, local_blocks, scorers, gpu_tokens)
            if key not in self._pod_curves:
                self._pod_curves[key] = Curve.of(reqs, dists, bs)
            per_pod = self._pod_curves[key]
        routing = []
        if replicas > 1:
            for how in routes.MODES:
                got, _, where = (by_tier, dists, pods) if how == mode else run(how)
                routing.append(
                    {
                        "mode": how,
                        "replicas": replicas,
                        "hitRatio": _ratio(sum(got.values()), total),
                        "busiestShare": busiest(where),
                    }
                )
        return {
            "requests": len(reqs),
            "inputTokens": total,
            "blockSize": bs,
            "durationSeconds": seconds,
            "maxHitRatio": _ratio(curve.max_hits, total),
            "hitRatio": _ratio(hit, total),
            "recomputeRatio": _ratio(total - hit, total),
            "tiers": [
                {
                    "tier": t.name,
                    "capacityTokens": t.tokens,
                    "heldTokens": t.holds,
                    "shared": t.shared,
                    "hitRatio": _ratio(by_tier[t.name], total),
                    "tokensPerSecond": round(by_tier[t.name] / seconds, 1) if seconds else None,
                }
                for t in tiers
            ],
            "curve": [{"capacityTokens": c * bs, "hitRatio": _ratio(curve.hits(c), total)} for c in curve.points()],
            "capacityFor": {k: _tokens(curve.blocks_for(float(k) * curve.max_hits), bs) for k in TARGETS},
            "routing": routing,
            "routingMode": mode,
            "perPod": {
                "maxHitRatio": _ratio(per_pod.max_hits, total),
                "capacityFor": {k: _tokens(per_pod.blocks_for(float(k) * curve.max_hits), bs) for k in TARGETS},
            },
        }


def analyse(
    trace: Trace,
    tiers: Sequence[Tier],
    replicas: int = 1,
    mode: str = "none",
    scorers: routes.Scorers | None = None,
) -> dict[str, object]:
    """Replayer(trace).analyse(...): one trace, one set of tiers."""
    return Replayer(trace).analyse(tiers, replicas, mode, scorers)


def _tokens(blocks: int | None, block_size: int) -> int | None:
    return None if blocks is None else blocks * block_size
