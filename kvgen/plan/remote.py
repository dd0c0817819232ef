"""``kvCacheOffloading.remote``: a Valkey/Redis tier every replica's LMCache server shares.

LMCache 0.5.6 has two adapters for the protocol. kvgen emits ``resp`` (its C++ client ships in the
LMCache wheel, ``lmcache.lmcache_redis``), which reads the password from ``LMCACHE_RESP_PASSWORD``
when its JSON has none: the Secret reaches the server's environment, never its command line or its
logged config. ``valkey`` needs the separate ``valkey-glide`` package and takes the password only
in its JSON. ``resp`` speaks plain RESP to database 0: no TLS, no database number, so the URL is
``redis://HOST[:PORT]`` (or ``valkey://``). The native backend (vLLM's OffloadingConnector) has no
such tier; its shared option is a ReadWriteMany ``pvc.ref`` secondary tier. The URL pattern, the
default port and the variable are data (``wiring.lmcache.remote`` in files/runtime.yaml); the
chart's counterpart is templates/plan/_remote.tpl.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kvgen.core.errors import Problem, quoted
from kvgen.data import connector
from kvgen.spec.models import RemoteTier, Spec

BASE = ("kvCacheOffloading", "remote")
NATIVE_MESSAGE = (
    "a remote tier needs the lmcache backend: vLLM's OffloadingConnector (the native backend) has no Valkey/Redis tier"
)
NATIVE_HINT = (
    "use backend: lmcache, or share a ReadWriteMany claim across the replicas as a secondary tier: "
    "secondary: [{fileSystem: {pvc: {ref: {name: CLAIM}}}}]"
)
URL_HINT = "write it as redis://HOST:PORT, e.g. redis://valkey.cache.svc.cluster.local:6379"


def _wiring() -> dict[str, Any]:
    return connector.wiring()["lmcache"]["remote"]


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


def endpoint(url: str) -> Endpoint | None:
    """Host and port of a URL kvgen accepts (None otherwise)."""
    w = _wiring()
    m = re.match(w["urlPattern"], url)
    if m is None:
        return None
    return Endpoint(m.group(2), int(m.group(7)) if m.group(7) else w["defaultPort"])


def _url_problem(url: str) -> Problem | None:
    path = (*BASE, "url")
    shown = quoted(url)  # at most 2048 characters (the schema's bound)
    if url.startswith(("rediss://", "valkeys://")):
        return Problem(
            path,
            f"{shown}: TLS is not supported by LMCache 0.5.6's resp adapter (plain RESP only)",
            "reach the server over plain RESP inside the cluster (redis://), e.g. a Service restricted by a NetworkPolicy",
        )
    if "@" in url:
        return Problem(
            path,
            f"{shown} carries credentials; kvgen takes a password from a Secret only",
            "remove them from the URL and set remote.username and remote.passwordSecret",
        )
    found = endpoint(url)
    if found is None:
        return Problem(
            path,
            f"{shown} is not a redis:// or valkey:// URL of a host and an optional port "
            "(the resp adapter takes no database number, path or query)",
            URL_HINT,
        )
    if not 1 <= found.port <= 65535:
        return Problem(path, f"port {found.port} is not a TCP port (1 to 65535)", URL_HINT)
    return None


def check(spec: Spec) -> list[Problem]:
    """Every problem of ``kvCacheOffloading.remote`` (none when it is unset)."""
    o = spec.kv_cache_offloading
    r = o.remote
    if r is None:
        return []
    problems: list[Problem] = []
    if o.backend == "native":
        problems.append(Problem(BASE, NATIVE_MESSAGE, NATIVE_HINT))
    url = _url_problem(r.url)
    if url is not None:
        problems.append(url)
    if r.capacity is not None and r.capacity.bytes < connector.GiB:
        problems.append(
            Problem(
                (*BASE, "capacity"),
                f"{r.capacity} is below 1Gi; LMCache counts the tier's capacity in whole GiB (max_capacity_gb)",
                "use at least 1Gi, or leave capacity out and let the server's maxmemory-policy evict",
            )
        )
    return problems


def adapter(r: RemoteTier) -> dict[str, Any]:
    """The ``--l2-adapter`` object of the remote tier (the password stays in the environment)."""
    found = endpoint(r.url)
    assert found is not None  # check() refused the spec otherwise
    out: dict[str, Any] = {"type": _wiring()["adapter"], "host": found.host, "port": found.port, "shared": True}
    if r.username is not None:
        out["username"] = r.username
    if r.capacity is not None:
        e = connector.wiring()["lmcache"]["l2Eviction"]
        out["max_capacity_gb"] = r.capacity.bytes // connector.GiB
        out["eviction"] = {
            "eviction_policy": e["policy"],
            "trigger_watermark": e["triggerWatermark"],
            "eviction_ratio": e["ratio"],
        }
    return out


def env(r: RemoteTier | None) -> list[dict[str, Any]]:
    """The LMCache server's environment for the tier: its password from the Secret."""
    if r is None or r.password_secret is None:
        return []
    ref = r.password_secret
    return [{"name": _wiring()["passwordEnv"], "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}}}]


__all__ = ["Endpoint", "adapter", "check", "endpoint", "env"]
