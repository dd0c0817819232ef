"""The checking half of the contract snapshots, used only by the tests (kvgen itself walks a
spec's vllm.extraArgs with kvgen.data.contract and needs nothing here).

Checks, against the snapshots, without importing vLLM or LMCache:

- a ``vllm serve`` argv as kvgen renders it (the model first, ``--flag=value``,
  ``--kv-transfer-config=<json>``): the flag checks of kvgen.data.contract.walk_argv, a stray
  positional; in the JSON: unknown ``KVTransferConfig`` keys, a bad ``kv_role``, an unregistered
  connector, unknown ``OffloadingConnector`` / ``LMCacheMPConnector`` extra-config keys, an
  unknown spec name, eviction policy, secondary tier type or tier key;
- an ``lmcache server`` argv (what the launcher execs: the sidecar's args after ``--`` plus
  ``--l1-size-gb``): the same flag checks, the required ``--l1-size-gb`` + ``--eviction-policy``
  pair, conflicting flags, and each ``--l2-adapter`` JSON (type, keys, eviction block);
- and finds the command lines in rendered objects (``command_lines``), with Kubernetes' $(VAR)
  expansion of their args.

Stricter than the runtimes' parsers, on purpose: unknown extra-config keys and unknown
``--l2-adapter`` keys are errors (vLLM and LMCache ignore them); a missing ``cpu_bytes_to_use`` or
a bad fs tier ``locality`` is reported here, where vLLM fails only once the engine starts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kvgen.core.errors import Path as ErrPath
from kvgen.core.errors import Problem, quoted
from kvgen.data.contract import BAD_CHOICE as BAD_CHOICE  # the flag walk's categories, re-exported
from kvgen.data.contract import BAD_VALUE as BAD_VALUE
from kvgen.data.contract import MISSING_VALUE as MISSING_VALUE
from kvgen.data.contract import UNEXPECTED_ARGUMENT as UNEXPECTED_ARGUMENT
from kvgen.data.contract import UNEXPECTED_VALUE as UNEXPECTED_VALUE
from kvgen.data.contract import UNKNOWN_FLAG as UNKNOWN_FLAG
from kvgen.data.contract import (
    Parsed,
    Snapshots,
    walk_argv,
)

# Problem categories of the whole-line checks (those of the flag walk are kvgen.data.contract's)
UNKNOWN_COMMAND = "unknown-command"
BAD_JSON = "bad-json"
UNKNOWN_KV_TRANSFER_KEY = "unknown-kv-transfer-key"
MISSING_KV_TRANSFER_KEY = "missing-kv-transfer-key"
UNREGISTERED_CONNECTOR = "unregistered-connector"
UNKNOWN_EXTRA_CONFIG_KEY = "unknown-extra-config-key"
MISSING_EXTRA_CONFIG_KEY = "missing-extra-config-key"
UNKNOWN_SPEC = "unknown-offloading-spec"
UNKNOWN_EVICTION_POLICY = "unknown-eviction-policy"
UNKNOWN_TIER_TYPE = "unknown-tier-type"
UNKNOWN_TIER_KEY = "unknown-tier-key"
MISSING_TIER_KEY = "missing-tier-key"
MISSING_REQUIRED_FLAG = "missing-required-flag"
CONFLICTING_FLAGS = "conflicting-flags"
UNKNOWN_L2_ADAPTER_TYPE = "unknown-l2-adapter-type"
UNKNOWN_L2_ADAPTER_KEY = "unknown-l2-adapter-key"
MISSING_L2_ADAPTER_KEY = "missing-l2-adapter-key"

VLLM_CONTAINER = "vllm"
LMCACHE_CONTAINER = "lmcache-mp-server"


def _p(code: str, message: str, at: ErrPath = (), hint: str | None = None) -> Problem:
    """A contract problem: ``at`` is the argument's index in the checked argv (or () for the
    whole line), ``code`` one of the categories."""
    return Problem(at, message, hint, code=code)


# ----------------------------------------------------------------------------- vLLM


def _last(parsed: Parsed, name: str) -> tuple[str | None, ErrPath]:
    """The last value given for ``name`` and the index of its option, or (None, ())."""
    if parsed.given.get(name):
        return parsed.given[name][-1], (parsed.at[name][-1],)
    return None, ()


def check_vllm_argv(argv: list[str], snapshots: Snapshots, positionals: int | None = None) -> list[Problem]:
    """Problems of one ``vllm serve`` argv (the container's args, the model first), each at the
    index of the argument it is about. ``positionals``: how many positional arguments the argv
    may hold (default: the model, as vllm serve takes; a part of an argv such as vllm.extraArgs
    holds none)."""
    snap = snapshots.vllm
    problems: list[Problem] = []
    parsed = walk_argv(list(argv), snap["serve"], problems)
    allowed = len(snap["serve"]["positionals"]) if positionals is None else positionals
    for index, extra in parsed.positionals[allowed:]:
        problems.append(
            _p(
                UNEXPECTED_ARGUMENT,
                f"unexpected positional argument {quoted(extra)} (vllm serve takes only the model)",
                (index,),
                "a value belongs to the flag before it: write --flag=value",
            )
        )
    raw, at = _last(parsed, "kv_transfer_config")
    if raw is not None:
        problems += check_kv_transfer_config(raw, snapshots, at)
    return problems


def _json_object(raw: str, name: str, at: ErrPath) -> tuple[dict[str, Any] | None, list[Problem]]:
    """A JSON object argument, or the problem that keeps it from being one."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return None, [_p(BAD_JSON, f"{name} is not JSON: {exc}", at)]
    if not isinstance(data, dict):
        return None, [_p(BAD_JSON, f"{name} must be a JSON object", at)]
    return data, []


def check_kv_transfer_config(raw: str, snapshots: Snapshots, at: ErrPath = ()) -> list[Problem]:
    """Problems of a ``--kv-transfer-config`` JSON value (the option at argv index ``at``)."""
    data, bad = _json_object(raw, "--kv-transfer-config", at)
    if data is None:
        return bad
    return _check_kv_transfer_object(data, snapshots, at)


def _check_kv_transfer_object(
    data: Mapping[str, Any], snapshots: Snapshots, at: ErrPath, within: str = ""
) -> list[Problem]:
    """Problems of one KVTransferConfig: the top-level one, or a MultiConnector child (vLLM builds
    each child as a KVTransferConfig of its own; ``within`` names it in the messages)."""
    snap = snapshots.vllm
    arg = at
    spec = snap["kv_transfer_config"]
    problems: list[Problem] = []
    fields = spec["fields"]
    for key in data:
        if key not in fields:
            problems.append(
                _p(
                    UNKNOWN_KV_TRANSFER_KEY,
                    f"KVTransferConfig has no field {key!r} (vLLM {snap['version']} forbids unknown keys)",
                    arg,
                )
            )
    for key, value in data.items():
        choices = fields.get(key, {}).get("choices")
        if choices is not None and value is not None and value not in choices:
            problems.append(
                _p(BAD_CHOICE, f"KVTransferConfig.{key}: {value!r} is not one of {', '.join(choices)}", arg)
            )
    for rule in spec["requires"]:
        if data.get(rule["if_set"]) is not None and data.get(rule["then"]) is None:
            problems.append(
                _p(
                    MISSING_KV_TRANSFER_KEY,
                    f"KVTransferConfig.{rule['then']} is required when {rule['if_set']} is set",
                    arg,
                )
            )
    connector = data.get("kv_connector")
    if (
        connector is not None
        and data.get("kv_connector_module_path") is None
        and connector not in snap["connectors"]["registered"]
    ):
        problems.append(
            _p(UNREGISTERED_CONNECTOR, f"{connector!r} is not a registered connector of vLLM {snap['version']}", arg)
        )
    extra = data.get("kv_connector_extra_config") or {}
    if not isinstance(extra, dict):
        problems.append(_p(BAD_VALUE, "kv_connector_extra_config must be a JSON object", arg))
    elif connector == snap["offloading_connector"]["connector"]:
        problems += _check_offloading_extra(extra, snap["offloading_connector"], at)
    elif connector == snapshots.lmcache["lmcache_mp_connector"]["connector"]:
        known = set(snapshots.lmcache["lmcache_mp_connector"]["extra_config_keys"]) | set(
            snap["lmcache_mp_connector_builtin"]["extra_config_keys"]
        )
        for key in extra:
            if key not in known:
                problems.append(_p(UNKNOWN_EXTRA_CONFIG_KEY, f"{connector} reads no extra-config key {key!r}", arg))
    elif connector == snap["multi_connector"]["connector"]:
        problems += _check_multi_extra(extra, snapshots, at)
    if within:
        problems = [replace(p, message=f"{within}: {p.message}") for p in problems]
    return problems


def _check_multi_extra(extra: Mapping[str, Any], snapshots: Snapshots, at: ErrPath) -> list[Problem]:
    """MultiConnector: its only keys, and every child a valid KVTransferConfig."""
    spec = snapshots.vllm["multi_connector"]
    problems = [
        _p(UNKNOWN_EXTRA_CONFIG_KEY, f"{spec['connector']} reads no extra-config key {key!r}", at)
        for key in extra
        if key not in spec["extra_config_keys"]
    ]
    children = extra.get(spec["children_key"])
    if not isinstance(children, list) or not children:
        return [
            *problems,
            _p(
                MISSING_EXTRA_CONFIG_KEY,
                f"{spec['connector']} needs a non-empty list {spec['children_key']!r} in kv_connector_extra_config",
                at,
            ),
        ]
    for index, child in enumerate(children):
        where = f"{spec['children_key']}[{index}]"
        if not isinstance(child, dict):
            problems.append(_p(BAD_VALUE, f"{where} must be a JSON object (a KVTransferConfig)", at))
            continue
        problems += _check_kv_transfer_object(child, snapshots, at, where)
    return problems


def _check_offloading_extra(extra: Mapping[str, Any], spec: Mapping[str, Any], arg: ErrPath) -> list[Problem]:
    name = spec["connector"]
    problems: list[Problem] = []
    for key in extra:
        if key not in spec["extra_config_keys"]:
            problems.append(_p(UNKNOWN_EXTRA_CONFIG_KEY, f"{name} reads no extra-config key {key!r}", arg))
    for key in spec["required_keys"]:
        if extra.get(key) is None:
            problems.append(_p(MISSING_EXTRA_CONFIG_KEY, f"{name} needs {key!r} in kv_connector_extra_config", arg))
    spec_name = extra.get("spec_name", "CPUOffloadingSpec")
    if spec_name not in spec["spec_names"] and extra.get(spec["spec_module_key"]) is None:
        problems.append(_p(UNKNOWN_SPEC, f"spec_name {spec_name!r} is not one of {', '.join(spec['spec_names'])}", arg))
    policy = extra.get("eviction_policy", "lru")
    if policy not in spec["eviction_policies"] and extra.get(spec["eviction_policy_module_key"]) is None:
        problems.append(
            _p(
                UNKNOWN_EVICTION_POLICY,
                f"eviction_policy {policy!r} is not one of {', '.join(spec['eviction_policies'])}",
                arg,
            )
        )
    tiers = extra.get("secondary_tiers", [])
    if not isinstance(tiers, list):
        return [*problems, _p(BAD_VALUE, "secondary_tiers must be a list", arg)]
    tier_spec = spec["secondary_tiers"]
    for index, tier in enumerate(tiers):
        where = f"secondary_tiers[{index}]"
        if not isinstance(tier, dict):
            problems.append(_p(BAD_VALUE, f"{where} must be an object", arg))
            continue
        kind = tier.get("type")
        known = tier_spec["types"].get(kind) if isinstance(kind, str) else None
        if known is None:
            if tier.get(tier_spec["module_key"]) is None:
                problems.append(
                    _p(
                        UNKNOWN_TIER_TYPE,
                        f"{where}: type {kind!r} is not one of {', '.join(sorted(tier_spec['types']))}",
                        arg,
                    )
                )
            continue
        if known["keys"] is None:  # not importable where the snapshot was captured: keys unknown
            continue
        for key, value in tier.items():
            if key in tier_spec["factory_keys"]:
                continue
            key_spec = known["keys"].get(key)
            if key_spec is None:
                if not known["accepts_any_key"]:
                    problems.append(
                        _p(
                            UNKNOWN_TIER_KEY,
                            f"{where}: a {kind!r} tier takes no key {key!r} (it takes {', '.join(sorted(known['keys']))})",
                            arg,
                        )
                    )
            elif key_spec.get("choices") is not None and value is not None and value not in key_spec["choices"]:
                problems.append(
                    _p(BAD_CHOICE, f"{where}.{key}: {value!r} is not one of {', '.join(key_spec['choices'])}", arg)
                )
        for key, key_spec in known["keys"].items():
            if key_spec["required"] and key not in tier:
                problems.append(_p(MISSING_TIER_KEY, f"{where}: a {kind!r} tier needs {key!r}", arg))
    return problems


# ----------------------------------------------------------------------------- LMCache


def check_lmcache_argv(argv: list[str], snapshots: Snapshots) -> list[Problem]:
    """Problems of one ``lmcache server ...`` argv, program path first."""
    snap = snapshots.lmcache
    server = snap["server"]
    problems: list[Problem] = []
    program, command = server["command"]
    if len(argv) < 2 or Path(argv[0]).name != program or argv[1] != command:
        return [_p(UNKNOWN_COMMAND, f"expected '{program} {command} ...', got {' '.join(argv[:2])!r}", (0,))]
    parsed = walk_argv(list(argv[2:]), server, problems, offset=2)
    for index, extra in parsed.positionals:
        problems.append(_p(UNEXPECTED_ARGUMENT, f"unexpected positional argument {extra!r}", (index,)))
    for rule in snap["requires"]:
        if not any(parsed.has(f) for f in rule["unless_any"]):
            missing = [f for f in rule["all_of"] if not parsed.has(f)]
            if missing:
                problems.append(_p(MISSING_REQUIRED_FLAG, f"{' and '.join(missing)} missing: {rule['message']}"))
    for rule in snap["conflicts"]:
        if parsed.has(rule["option"]):
            clash = [f for f in rule["conflicts_with"] if parsed.has(f)]
            if clash:
                problems.append(
                    _p(
                        CONFLICTING_FLAGS,
                        f"{rule['option']} cannot be combined with {', '.join(clash)}: {rule['message']}",
                    )
                )
    l2 = snap["l2_adapters"]
    for index, (raw, at) in enumerate(
        zip(parsed.given.get(l2["option"], []), parsed.at.get(l2["option"], []), strict=True), 1
    ):
        problems += _check_l2_adapter(index, raw or "", l2, (at,))
    return problems


def _check_l2_adapter(index: int, raw: str, spec: Mapping[str, Any], arg: ErrPath) -> list[Problem]:
    data, bad = _json_object(raw, f"--l2-adapter #{index}", arg)
    if data is None:
        return bad
    kind = data.get("type")
    if kind not in spec["types"]:
        return [_p(UNKNOWN_L2_ADAPTER_TYPE, f"type {kind!r} is not one of {', '.join(spec['types'])}", arg)]
    problems: list[Problem] = []
    keys = spec["type_keys"].get(kind)
    if keys is not None:
        for key in data:
            if key not in spec["common_keys"] and key not in keys["keys"]:
                problems.append(
                    _p(
                        UNKNOWN_L2_ADAPTER_KEY,
                        f"a {kind!r} adapter takes no key {key!r} (LMCache would ignore it)",
                        arg,
                    )
                )
        for key, key_spec in keys["keys"].items():
            if key_spec["required"] and key not in data:
                problems.append(_p(MISSING_L2_ADAPTER_KEY, f"a {kind!r} adapter needs {key!r}", arg))
    eviction = data.get("eviction")
    if eviction is not None:
        if not isinstance(eviction, dict):
            problems.append(_p(BAD_VALUE, "'eviction' must be an object", arg))
        else:
            for key in eviction:
                if key not in spec["eviction_keys"]:
                    problems.append(_p(UNKNOWN_L2_ADAPTER_KEY, f"eviction takes no key {key!r}", arg))
            if eviction.get("eviction_policy") not in spec["eviction_policies"]:
                problems.append(
                    _p(
                        BAD_CHOICE,
                        f"eviction.eviction_policy {eviction.get('eviction_policy')!r} is not one of {', '.join(spec['eviction_policies'])}",
                        arg,
                    )
                )
    return problems


# ----------------------------------------------------------------------------- rendered objects


@dataclass(frozen=True)
class CommandLine:
    """One container's command line in a rendered object.

    ``kind`` is "vllm" (``argv`` = the container's args: the image's entrypoint is ``vllm serve``)
    or "lmcache" (``argv`` = the server command after the launcher's ``--``, without the
    ``--l1-size-gb`` the launcher adds; ``launcher_args`` = the launcher's own options).
    """

    source: str
    workload: str
    container: str
    kind: str
    argv: tuple[str, ...]
    launcher_args: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        base = f"{self.source}/{self.workload}/{self.container}"
        # gpuAccess in-container: the vLLM container carries the LMCache line too
        return f"{base}/lmcache-server" if self.kind == "lmcache" and self.container == VLLM_CONTAINER else base


_ENV_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
POD_INDEX_FIELD = "metadata.labels['apps.kubernetes.io/pod-index']"
# what the LWS controller's pod webhook puts in every container's env (wiring.lws in files/runtime.yaml)
LWS_LEADER_ADDRESS, LWS_WORKER_INDEX = "LWS_LEADER_ADDRESS", "LWS_WORKER_INDEX"
# the label the LWS controller gives every pod of group N (wiring.lws.groupIndexLabel), read by a fieldRef
LWS_GROUP_INDEX_FIELD = "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']"


def expand_env(
    arg: str, container: Mapping[str, Any], workload: Mapping[str, Any], injected: Mapping[str, str] | None = None
) -> str:
    """Kubernetes' $(VAR) expansion of container args, for the values knowable offline: a literal
    ``value``, the StatefulSet pod index (its first ordinal), and ``injected`` (what a controller's
    webhook adds, as the LWS controller adds LWS_WORKER_INDEX; a field path there is the value of a
    fieldRef to it, as the LWS group index label). Anything else stays as written, as Kubernetes
    leaves an unresolvable reference."""

    def resolve(match: re.Match[str]) -> str:
        if injected and match.group(1) in injected:
            return injected[match.group(1)]
        for env in container.get("env") or []:
            if env.get("name") != match.group(1):
                continue
            if "value" in env:
                return str(env["value"])
            field_path = ((env.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            if field_path == POD_INDEX_FIELD:
                return str(((workload.get("spec") or {}).get("ordinals") or {}).get("start", 0))
            if injected and isinstance(field_path, str) and field_path in injected:
                return injected[field_path]
        return match.group(0)

    return _ENV_REF.sub(resolve, arg)


def pod_templates(obj: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], dict[str, str]]]:
    """(workload name, pod template, variables a controller injects) of a Deployment or StatefulSet,
    or of a LeaderWorkerSet's leader (``NAME/leader``, index 0) and first worker (``NAME/worker``,
    index 1) in group 0, with what the LWS pod webhook gives them."""
    kind, name = obj.get("kind"), obj["metadata"]["name"]
    if kind in ("Deployment", "StatefulSet"):
        return [(name, obj["spec"]["template"], {})]
    if kind != "LeaderWorkerSet":
        return []
    leader = f"{name}-0.{name}.{obj['metadata'].get('namespace', 'default')}"  # <lws>-<group>.<subdomain>.<ns>
    t = obj["spec"]["leaderWorkerTemplate"]
    return [
        (
            f"{name}/{role}",
            t[f"{role}Template"],
            {LWS_LEADER_ADDRESS: leader, LWS_WORKER_INDEX: index, LWS_GROUP_INDEX_FIELD: "0"},
        )
        for role, index in (("leader", "0"), ("worker", "1"))
    ]


def command_lines(objects: Iterable[Mapping[str, Any]], source: str = "") -> list[CommandLine]:
    """The vLLM and LMCache command lines of every workload in ``objects``."""
    out: list[CommandLine] = []
    for obj in objects:
        for name, template, injected in pod_templates(obj):
            out += _pod_lines(source, name, template["spec"], obj, injected)
    return out


def _pod_lines(
    source: str, name: str, pod: Mapping[str, Any], obj: Mapping[str, Any], injected: Mapping[str, str]
) -> list[CommandLine]:
    out: list[CommandLine] = []
    for c in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
        args = [expand_env(a, c, obj, injected) for a in c.get("args") or []]
        if c["name"] == VLLM_CONTAINER and c.get("command"):
            out += _supervised_lines(source, name, c["name"], args)
        elif c["name"] == VLLM_CONTAINER:
            out.append(CommandLine(source, name, c["name"], "vllm", tuple(args)))
        elif c["name"] == LMCACHE_CONTAINER:
            launcher, server = _launcher_split(source, name, c["name"], args)
            out.append(CommandLine(source, name, c["name"], "lmcache", server, launcher))
    return out


VLLM_ENTRYPOINT = ("vllm", "serve")  # the vLLM image's ENTRYPOINT (files/runtime.yaml)
THEN = "--then"  # the launcher's separator before the command it runs once the server is up


def _launcher_split(
    source: str, workload: str, container: str, args: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the launcher's own options, the command after its '--')."""
    if "--" not in args:
        raise ValueError(f"{source}/{workload}: the {container} args have no '--' before the server command")
    split = args.index("--")
    return tuple(args[:split]), tuple(args[split + 1 :])


def _supervised_lines(source: str, workload: str, container: str, args: list[str]) -> list[CommandLine]:
    """gpuAccess in-container: the vLLM container runs kvgen's launcher, whose args are
    ``OPTIONS -- lmcache server ... --then vllm serve VLLM_ARGS``; both command lines are checked."""
    launcher, rest = _launcher_split(source, workload, container, args)
    if THEN not in rest:
        raise ValueError(f"{source}/{workload}: the {container} launcher args have no '{THEN}' before the vLLM command")
    split = rest.index(THEN)
    server, main = rest[:split], rest[split + 1 :]
    if main[: len(VLLM_ENTRYPOINT)] != VLLM_ENTRYPOINT:
        raise ValueError(f"{source}/{workload}: the command after '{THEN}' is not '{' '.join(VLLM_ENTRYPOINT)} ...'")
    return [
        CommandLine(source, workload, container, "lmcache", server, launcher),
        CommandLine(source, workload, container, "vllm", main[len(VLLM_ENTRYPOINT) :]),
    ]
