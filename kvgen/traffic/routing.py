"""Which replica serves each request of a trace, as each routing mode kvgen renders would send it
(docs/routing.md; the model and what it leaves out: docs/sizing.md, "Hit ratios from a trace").

- ``none``: a plain Service; kube-proxy spreads requests evenly whatever their prompt (modelled as
  round robin in arrival order: the same shares as random choice, and repeatable).
- ``sessionAffinity``: ``sessionAffinity: ClientIP``. A trace names no clients, so a conversation stands
  for one: a request that extends an earlier prompt (every full block of it, at least two, is its own
  leading blocks) continues that prompt's conversation and pod; any other request starts a conversation
  on the next pod in turn. The best case of affinity: one client per conversation.
- ``gateway``: the endpoint picker's profile, its scorers weighted as rendered: the prefix-cache scorer
  (the share of the request's leading blocks the pod's prefix index holds; the index is taken to mirror
  the pod's tiers, as kvgen sizes it), the KV-utilization scorer (1 - usage; a trace has no service
  times, so usage is the prompt and output tokens of the requests sent to the pod in the last
  ``LOAD_WINDOW_MS`` over its GPU tier), the queue scorer (no request waits in this model: equal for
  every pod) and the no-hit-LRU scorer (a request no pod has any prefix of goes to
  the pod least recently given such a request); the highest score wins, the first pod on a tie.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kvgen.traffic.stack import LruStack
from kvgen.traffic.trace import Request

MODES = ("none", "sessionAffinity", "gateway")
LOAD_WINDOW_MS = 10_000  # the load the queue and KV-utilization scorers see: requests of the last 10 s
MIN_CONVERSATION_BLOCKS = 2  # a prompt shorter than two full blocks is a shared preamble, not a conversation


@dataclass(frozen=True)
class Scorers:
    """The picker's scheduling profile weights (routing.picker.scorers; 0 leaves a scorer out)."""

    queue: float = 2
    kv_cache_utilization: float = 2
    prefix_cache: float = 3
    no_hit_lru: float = 2

    @classmethod
    def of(cls, weights: Mapping[str, float] | None) -> Scorers:
        w = dict(weights or {})
        return cls(
            queue=w.get("queue", cls.queue),
            kv_cache_utilization=w.get("kvCacheUtilization", cls.kv_cache_utilization),
            prefix_cache=w.get("prefixCache", cls.prefix_cache),
            no_hit_lru=w.get("noHitLru", cls.no_hit_lru),
        )


def _full_blocks(r: Request, block_size: int) -> int:
    return r.input_tokens // block_size


def spread(requests: Sequence[Request], replicas: int) -> list[int]:
    return [i % replicas for i in range(len(requests))]


def by_conversation(requests: Sequence[Request], replicas: int, block_size: int) -> list[int]:
    ends: dict[int, int] = {}  # the last full block of a conversation's latest prompt -> its pod
    started = 0
    pods = []
    for r in requests:
        pod = None
        for b in reversed(r.blocks):
            pod = ends.get(b)
            if pod is not None:
                break
        if pod is None:
            pod = started % replicas
            started += 1
        full = _full_blocks(r, block_size)
        if full >= MIN_CONVERSATION_BLOCKS:
            ends[r.blocks[full - 1]] = pod
        pods.append(pod)
    return pods


def by_picker(
    requests: Sequence[Request], replicas: int, index_blocks: int, scorers: Scorers, kv_tokens: int = 0
) -> list[int]:
    stacks = [LruStack() for _ in range(replicas)]
    recent: deque[tuple[int, int, int]] = deque()  # (timestamp, pod, tokens) of the requests in the load window
    held = [0] * replicas  # tokens (prompt and output) of the pod's requests in the load window
    cold_turn = list(range(replicas))  # least recently given a request without any cached prefix first
    pods = []
    for r in requests:
        while recent and recent[0][0] <= r.timestamp_ms - LOAD_WINDOW_MS:
            _, p, t = recent.popleft()
            held[p] -= t
        matched = []
        for s in stacks:
            n = 0
            for b in r.blocks:
                if s.distance(b) > index_blocks:
                    break
                n += 1
            matched.append(n)
        total = len(r.blocks) or 1
        cold = not any(matched)
        best, best_score = 0, float("-inf")
        for p in range(replicas):
            score = scorers.prefix_cache * matched[p] / total
            # queue-scorer: no request waits in this model (every pod's queue is empty: equal scores)
            score += scorers.queue
            if kv_tokens:
                score += scorers.kv_cache_utilization * max(0.0, 1 - held[p] / kv_tokens)
            if cold and replicas > 1:
                score += scorers.no_hit_lru * (1 - cold_turn.index(p) / (replicas - 1))
            if score > best_score:
                best, best_score = p, score
        if cold:
            cold_turn.remove(best)
            cold_turn.append(best)
        stacks[best].touch(reversed(r.blocks))
        tokens = r.input_tokens + r.output_tokens
        recent.append((r.timestamp_ms, best, tokens))
        held[best] += tokens
        pods.append(best)
    return pods


def assign(
    mode: str,
    requests: Sequence[Request],
    replicas: int,
    block_size: int,
    index_blocks: int = 0,
    scorers: Scorers | None = None,
    kv_tokens: int = 0,
) -> list[int]:
    """The pod (0 .. replicas-1) of every request under ``mode``."""
    if replicas <= 1:
        return [0] * len(requests)
    if mode == "none":
        return spread(requests, replicas)
    if mode == "sessionAffinity":
        return by_conversation(requests, replicas, block_size)
    if mode == "gateway":
        return by_picker(requests, replicas, index_blocks, scorers or Scorers(), kv_tokens)
    raise ValueError(f"unknown routing mode {mode!r}")
