#!/usr/bin/env python3
"""Capture what vLLM and LMCache accept, from the installed packages, as committed JSON.

An importable module (``import contract_capture``: tests/contract/live_check.py, which sits
beside it, recaptures with it), also run as a script with the *contract* venv's python
(scripts/contract-env.sh); `scripts/capture-contract` locates or builds that venv and runs it:

    scripts/capture-contract            # rewrite charts/kvgen/files/contract/vllm-<v>.json, lmcache-<v>.json
    scripts/capture-contract --check    # exit 1 if the committed files differ from a fresh capture

The snapshots ship in kvgen's wheel (and the chart): ``kvgen validate`` and ``render`` check a
spec's ``vllm.extraArgs`` against them (kvgen/data/flags.py), and the tests check every command line
kvgen renders (tests/contract_check.py).

It writes two snapshots, named with the versions:

- ``vllm-<version>.json``: the ``vllm serve`` options (every accepted option string with its
  dest, action, type, choices and nargs; the ``--no-``/``--disable-`` forms included), the
  ``KVTransferConfig`` fields, the registered connector names, the ``OffloadingConnector``
  extra-config keys, spec names, eviction policies and secondary tier types with each tier's
  keys, and the keys vLLM's own ``LMCacheMPConnector`` reads; ``endpoints``: the HTTP routes of
  the OpenAI-compatible server (its FastAPI app as ``build_app`` makes it for a text-generation
  model, no engine started), the health and metrics paths and the ``--host``/``--port`` defaults.
- ``lmcache-<version>.json``: the ``lmcache server`` options (built the way the real
  ``lmcache`` command builds its parser), the required flag pair and the conflicting flags,
  the L2 adapter types with the keys of ``fs``, ``fs_native`` and ``resp``, and the ``lmcache.mp.*``
  extra-config keys LMCache's ``LMCacheMPConnector`` reads on the vLLM side; ``endpoints``: the
  MP server's HTTP API routes (``lmcache/v1/multiprocess/http_server.py``'s app with every
  auto-discovered router), the health and metrics paths and the defaults of ``--host``,
  ``--port``, ``--http-host`` and ``--http-port``.

Routes are read from the apps' route tables (path, Starlette's regex, methods; a mount takes any
method). Server-only modules absent from the contract venv get placeholders while the apps are
built (see ``SERVER_ONLY_MODULES``); each snapshot lists the ones used.

and ``charts/kvgen/files/hybrid-architectures.yaml``: the registry architectures whose model
class implements vLLM's ``IsHybrid`` (a static scan of the model sources, see ``capture_hybrid``),
which kvgen and the Helm chart use to mark a model hybrid from its architecture.

Everything that can be read from the packages is read from them: the parsers' actions,
registries (``KVConnectorFactory._registry``, ``OffloadingSpecFactory``, ``CachePolicyFactory``,
``SecondaryTierFactory``, the L2 adapter registry), ``inspect.signature`` of the tier and
adapter classes, and the string keys their source reads (an AST scan of ``extra_config.get(...)``
and friends, each key with the ``file:line`` that reads it). The few facts that live only in
control flow (the required LMCache flag pair, for example) are listed by hand under
``hand_listed``; each carries the ``file:line`` of the code it was read from, found by
searching the installed source for an anchor string, so the capture fails loudly when a new
version moves or drops that code.

The output is deterministic (sorted keys, indent 2, no paths or timestamps): the same venv
gives the same bytes. The installed versions must equal ``charts/kvgen/files/runtime.yaml``.

This script needs only the contract venv (vllm, lmcache, PyYAML); not kvgen, ruamel or pytest.
Environment: VLLM_TARGET_DEVICE=cpu (set here if unset), LMCACHE_DISABLE_BANNER=1.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import enum
import functools
import importlib
import importlib.abc
import importlib.metadata as md
import importlib.util
import inspect
import io
import json
import os
import pkgutil
import re
import sys
import sysconfig
import types
import typing
from pathlib import Path
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("LMCACHE_DISABLE_BANNER", "1")

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_YAML = ROOT / "charts" / "kvgen" / "files" / "runtime.yaml"
OUT_DIR = ROOT / "charts" / "kvgen" / "files" / "contract"
SCHEMA = 1
GENERATED_BY = "scripts/capture-contract (tests/contract/contract_capture.py run in the scripts/contract-env.sh venv)"


class CaptureError(Exception):
    pass


# ----------------------------------------------------------------------------- source helpers


def _site_root(module_file: str) -> Path:
    """The site-packages directory a module file lives under (for repo-relative paths)."""
    path = Path(module_file).resolve()
    purelib = Path(sysconfig.get_paths()["purelib"]).resolve()
    if purelib in path.parents:
        return purelib
    # an editable or unusual install: fall back to the top-level package's parent
    top = path
    while (top.parent / "__init__.py").exists():
        top = top.parent
    return top.parent


def rel(path: str | Path) -> str:
    """A package file as '<package>/<...>.py' (the path inside the wheel and the repository)."""
    p = Path(path).resolve()
    return p.relative_to(_site_root(str(p))).as_posix()


def module_file(module: str) -> Path:
    mod = importlib.import_module(module)
    return Path(inspect.getsourcefile(mod) or mod.__file__).resolve()


def anchor(module: str, needle: str) -> str:
    """'file:line' of the first line of ``module``'s source containing ``needle``.

    Used for every hand-listed fact: if a new version no longer contains the anchor text, the
    capture stops here instead of writing a snapshot with a stale fact.
    """
    path = module_file(module)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return f"{rel(path)}:{number}"
    raise CaptureError(f"anchor {needle!r} not found in {rel(path)}: the hand-listed fact needs re-checking")


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _keys_in(
    root: ast.AST, path: Path, receivers: set[str], methods: tuple[str, ...], found: dict[str, set[str]]
) -> None:
    """Add to ``found`` the string keys read under ``root`` from a mapping named one of
    ``receivers`` (a name or attribute, e.g. ``self.extra_config``): ``<recv>.get("key", ...)``
    (or another method in ``methods``), ``<recv>["key"]`` and ``"key" in <recv>``."""

    def add(key: Any, node: ast.AST) -> None:
        if isinstance(key, str):
            found.setdefault(key, set()).add(f"{rel(path)}:{node.lineno}")

    for node in ast.walk(root):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in methods
            and _name_of(node.func.value) in receivers
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            add(node.args[0].value, node)
        elif (
            isinstance(node, ast.Subscript)
            and _name_of(node.value) in receivers
            and isinstance(node.slice, ast.Constant)
        ):
            add(node.slice.value, node)
        elif (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and isinstance(node.left, ast.Constant)
            and _name_of(node.comparators[0]) in receivers
        ):
            add(node.left.value, node)


def _sorted_locations(found: dict[str, set[str]]) -> dict[str, list[str]]:
    return {k: sorted(v, key=_line_order) for k, v in sorted(found.items())}


def scan_keys(
    paths: list[Path], receivers: set[str], methods: tuple[str, ...] = ("get", "pop")
) -> dict[str, list[str]]:
    """Every key the files in ``paths`` read from ``receivers``: key -> sorted ['file:line']."""
    found: dict[str, set[str]] = {}
    for path in paths:
        _keys_in(ast.parse(path.read_text(encoding="utf-8"), str(path)), path, receivers, methods, found)
    return _sorted_locations(found)


def scan_constants(paths: list[Path], pattern: str) -> dict[str, list[str]]:
    """String constants that match ``pattern`` entirely (docstrings never do), with locations."""
    rx = re.compile(pattern)
    found: dict[str, set[str]] = {}
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        # pieces of f-strings (f"lmcache.mp.lazy_offload_{name}") are not keys themselves
        pieces = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast.walk(tree):
            if id(node) in pieces:
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and rx.fullmatch(node.value):
                found.setdefault(node.value, set()).add(f"{rel(path)}:{node.lineno}")
    return {k: sorted(v, key=_line_order) for k, v in sorted(found.items())}


def _line_order(loc: str) -> tuple[str, int]:
    file, _, line = loc.rpartition(":")
    return file, int(line)


def function_node(path: Path, qualname: str) -> ast.AST:
    """The AST of ``Class.method`` or ``function`` in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    parts = qualname.split(".")
    scope: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in parts:
        node = next(
            (
                n
                for n in scope
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part
            ),
            None,
        )
        if node is None:
            raise CaptureError(f"{qualname} not found in {rel(path)}")
        scope = node.body  # type: ignore[attr-defined]
    assert node is not None
    return node


def keys_read_in(
    path: Path, qualname: str, receivers: set[str], methods: tuple[str, ...] = ("get", "pop")
) -> dict[str, list[str]]:
    """Like scan_keys, restricted to one function or method of ``path``."""
    found: dict[str, set[str]] = {}
    _keys_in(function_node(path, qualname), path, receivers, methods, found)
    return _sorted_locations(found)


# ----------------------------------------------------------------------------- value helpers


def type_name(t: Any) -> str | None:
    """A stable, readable name for an argparse ``type=`` callable or a typing annotation."""
    if t is None:
        return None
    if isinstance(t, str):
        return t
    if isinstance(t, type) and not typing.get_args(t):
        return t.__name__
    if callable(t) and getattr(t, "__name__", None) == "_optional_type":
        inner = dict(zip(t.__code__.co_freevars, (c.cell_contents for c in t.__closure__ or ()), strict=True))
        return f"optional[{type_name(inner.get('return_type'))}]"
    if inspect.isfunction(t) or inspect.isbuiltin(t) or inspect.ismethod(t):
        if t.__name__ == "<lambda>":
            return "lambda"
        return t.__qualname__
    if isinstance(t, functools.partial):
        return f"partial[{type_name(t.func)}]"
    text = repr(t).replace("typing.", "")
    text = re.sub(r"<class '([\w.]+)'>", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = re.sub(r"\b(?:[a-z_]+\.)+([A-Z]\w*)", r"\1", text)  # drop module paths of classes
    return text


def jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def literal_choices(annotation: Any) -> list[Any] | None:
    """The values of a Literal[...] (possibly inside Optional / a union)."""
    if typing.get_origin(annotation) is typing.Literal:
        return [jsonable(a) for a in typing.get_args(annotation)]
    for arg in typing.get_args(annotation):
        inner = literal_choices(arg)
        if inner is not None:
            return inner
    return None


# ----------------------------------------------------------------------------- argparse


ACTION_NAMES = {
    "_StoreAction": "store",
    "_StoreConstAction": "store_const",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_AppendAction": "append",
    "_AppendConstAction": "append_const",
    "_CountAction": "count",
    "_HelpAction": "help",
    "_VersionAction": "version",
    "_ExtendAction": "extend",
    "BooleanOptionalAction": "boolean_optional",
    "EnableDisableAction": "enable_disable",
}


def describe_option(parser: argparse.ArgumentParser, option: str, action: argparse.Action) -> dict[str, Any]:
    name = type(action).__name__
    takes_value = action.nargs != 0
    entry: dict[str, Any] = {
        "dest": action.dest,
        "action": ACTION_NAMES.get(name, name),
        "takes_value": takes_value,
        "nargs": action.nargs if action.nargs not in (None,) else None,
        "type": type_name(action.type),
        "choices": None if action.choices is None else [jsonable(c) for c in action.choices],
        "required": bool(action.required),
        "hidden": action.help == argparse.SUPPRESS or option not in action.option_strings,
    }
    if not takes_value:
        # the value this spelling stores: --x / --no-x, --enable-x / --disable-x
        if name == "EnableDisableAction":
            entry["sets"] = option not in action.negative_option_strings  # type: ignore[attr-defined]
        elif isinstance(action, argparse.BooleanOptionalAction):
            entry["sets"] = not option.startswith("--no-")
        elif isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction)):
            entry["sets"] = jsonable(action.const)
    return entry


def describe_parser(parser: argparse.ArgumentParser, prog: str) -> dict[str, Any]:
    options = {opt: describe_option(parser, opt, action) for opt, action in parser._option_string_actions.items()}
    positionals = [
        {
            "dest": a.dest,
            "nargs": a.nargs,
            "type": type_name(a.type),
            "choices": None if a.choices is None else [jsonable(c) for c in a.choices],
        }
        for a in parser._actions
        if not a.option_strings
    ]
    return {
        "prog": prog,
        "allow_abbrev": parser.allow_abbrev,
        "prefix_chars": parser.prefix_chars,
        "option_count": len(options),
        "options": dict(sorted(options.items())),
        "positionals": positionals,
    }


class HandListed:
    """Facts that live in code logic rather than an API: each is anchored (see ``anchor``)
    and recorded with its file:line. Calling it returns the location."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def __call__(self, what: str, module: str, needle: str) -> str:
        loc = anchor(module, needle)
        self.items.append({"fact": what, "source": loc})
        return loc

    def listed(self) -> list[dict[str, Any]]:
        return sorted(self.items, key=lambda h: h["source"])


# ----------------------------------------------------------------------------- HTTP endpoints


def describe_routes(app: Any) -> list[dict[str, Any]]:
    """Every route a Starlette/FastAPI ``app`` registers, as its router matches them: the path,
    the regex Starlette matches it with, and the methods (None for a mount: any method)."""
    out = []
    for route in app.routes:
        methods = getattr(route, "methods", None)
        out.append(
            {
                "path": route.path,
                "regex": route.path_regex.pattern,
                "methods": sorted(methods) if methods is not None else None,
                "kind": type(route).__name__,
            }
        )
    return sorted(out, key=lambda r: (r["path"], r["methods"] or []))


def parser_default(parser: argparse.ArgumentParser, option: str) -> Any:
    return jsonable(parser._option_string_actions[option].default)


def endpoint_paths(
    routes: list[dict[str, Any]], fact: HandListed, roles: dict[str, tuple[str, str, str]]
) -> dict[str, str]:
    """{role: path} for hand-listed paths (health, metrics), each anchored and checked to be a route."""
    out = {}
    for role, (path, module, needle) in roles.items():
        fact(f"{role} endpoint: {path}", module, needle)
        if not any(r["path"] == path for r in routes):
            raise CaptureError(f"the {role} path {path} is not among the captured routes")
        out[role] = path
    return out


# Imported by the servers' modules but not installed in the contract venv (its requirements are
# the parsers' closure): the web server (uvicorn) and its file watcher (watchfiles), an HTTP
# client (httpx), a JSON encoder (orjson), AWS's SageMaker hosting helpers and the Prometheus
# instrumentator. Placeholders let the modules import and the apps be built; the snapshot names
# them. Routes such a package would add itself are therefore missing: the instrumentator's own
# GET /metrics (vLLM mounts /metrics anyway) and whatever SageMaker's bootstrap adds.
SERVER_ONLY_MODULES = (
    "httpx",
    "model_hosting_container_standards",
    "model_hosting_container_standards.sagemaker",
    "orjson",
    "prometheus_fastapi_instrumentator",
    "uvicorn",
    "watchfiles",
)


class _AnyMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything


class _Anything(metaclass=_AnyMeta):
    """Every attribute of a placeholder module: a base class, a decorator (``f(x)`` returns ``x``,
    as does ``bootstrap(app)``), a decorator factory or a builder whose every method returns it."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is _Anything and len(args) == 1 and not kwargs:
            return args[0]
        return super().__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return args[0] if len(args) == 1 and not kwargs else self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self


class _Placeholder(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything


class _PlaceholderFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: imports of SERVER_ONLY_MODULES that nothing else found get a
    placeholder, and are recorded."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in SERVER_ONLY_MODULES:
            return None
        self.used.add(name)
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        return _Placeholder(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__path__ = []  # a package: its submodules are placeholders too


@contextlib.contextmanager
def server_imports() -> Any:
    """Placeholders for the SERVER_ONLY_MODULES that are not installed; yields the sorted list of
    those imported, filled in when the block ends. Library output and warnings are silenced."""
    import warnings

    finder = _PlaceholderFinder()
    used: list[str] = []
    sys.meta_path.append(finder)
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(io.StringIO()),
            contextlib.redirect_stderr(io.StringIO()),
        ):
            warnings.simplefilter("ignore")
            yield used
    finally:
        sys.meta_path.remove(finder)
        for name in finder.used:
            sys.modules.pop(name, None)
        used.extend(sorted(finder.used))


def vllm_endpoints(root: argparse.ArgumentParser, serve: argparse.ArgumentParser, fact: HandListed) -> dict[str, Any]:
    """The OpenAI-compatible server's routes as ``vllm serve`` builds its app (build_app, for a
    text-generation model: vLLM's fallback task list), without an engine, and where it listens."""
    from vllm.tasks import FALLBACK_SUPPORTED_TASKS

    args = root.parse_args(["serve", "model"])
    with server_imports() as placeholders:
        from vllm.entrypoints.launchers.app import build_app

        app = build_app(args, supported_tasks=FALLBACK_SUPPORTED_TASKS)
    routes = describe_routes(app)
    paths = endpoint_paths(
        routes,
        fact,
        {
            "health": ("/health", "vllm.entrypoints.serve.instrumentator.health", '@router.get("/health"'),
            "metrics": ("/metrics", "vllm.entrypoints.serve.instrumentator.metrics", 'Mount("/metrics"'),
        },
    )
    return {
        "app": f"{rel(module_file('vllm.entrypoints.launchers.app'))} (build_app)",
        "supported_tasks": list(FALLBACK_SUPPORTED_TASKS),
        "placeholders": placeholders,
        "routes": routes,
        **paths,
        "defaults": {"host": parser_default(serve, "--host"), "port": parser_default(serve, "--port")},
    }


def lmcache_endpoints(server: argparse.ArgumentParser, fact: HandListed) -> dict[str, Any]:
    """The MP server's HTTP API (its FastAPI app with every auto-discovered router) and where
    `lmcache server` listens by default."""
    with server_imports() as placeholders:
        http_server = importlib.import_module("lmcache.v1.multiprocess.http_server")
    routes = describe_routes(http_server.app)
    paths = endpoint_paths(
        routes,
        fact,
        {
            "health": ("/healthcheck", "lmcache.v1.multiprocess.http_apis.info_api", '@router.get("/healthcheck")'),
            "metrics": ("/metrics", "lmcache.v1.internal_api_server.common.metrics_api", '@router.get("/metrics")'),
        },
    )
    return {
        "app": f"{rel(module_file(http_server.__name__))} (app)",
        "placeholders": placeholders,
        "routes": routes,
        **paths,
        "defaults": {
            key.removeprefix("--").replace("-", "_"): parser_default(server, key)
            for key in ("--host", "--port", "--http-host", "--http-port")
        },
    }


# ----------------------------------------------------------------------------- vLLM


def capture_vllm() -> dict[str, Any]:
    from vllm.config.kv_transfer import KVTransferConfig
    from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory
    from vllm.entrypoints.common.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    from vllm.v1.kv_offload.cpu.policies.factory import CachePolicyFactory
    from vllm.v1.kv_offload.factory import OffloadingSpecFactory
    from vllm.v1.kv_offload.tiering.factory import SecondaryTierFactory

    fact = HandListed()

    # --- vllm serve: the parser exactly as `vllm serve` builds it (entrypoints/cli/serve.py)
    root = FlexibleArgumentParser(prog="vllm")
    serve = make_arg_parser(root.add_subparsers(dest="subparser").add_parser("serve"))
    serve_info = describe_parser(serve, "vllm serve")
    serve_info["normalizes_underscores"] = True
    fact(
        "option names: '_' and '-' are interchangeable before the first '.'; '--x.y v' sets key y of JSON option --x",
        "vllm.utils.argparse_utils",
        "Convert underscores to dashes and vice versa in argument names",
    )
    if "--swap-space" in serve_info["options"]:
        raise CaptureError("--swap-space is back in vLLM's parser: re-check runtime.md section 3")

    # --- KVTransferConfig (vllm/config/kv_transfer.py): pydantic dataclass, extra="forbid"
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(KVTransferConfig):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING  # type: ignore[misc]
        fields[f.name] = {"type": type_name(f.type), "choices": literal_choices(f.type), "required": required}
    extra = (getattr(KVTransferConfig, "__pydantic_config__", None) or {}).get("extra")
    kv_transfer = {
        "source": rel(inspect.getsourcefile(KVTransferConfig)),
        "extra": extra,
        "fields": dict(sorted(fields.items())),
        "requires": [
            {
                "if_set": "kv_connector",
                "then": "kv_role",
                "source": fact(
                    "kv_role is required whenever kv_connector is set",
                    "vllm.config.kv_transfer",
                    "Please specify kv_role when kv_connector",
                ),
            },
        ],
    }
    if extra != "forbid":
        raise CaptureError(f"KVTransferConfig extra={extra!r}: unknown keys are no longer rejected")

    connectors = {
        "source": f"{rel(module_file('vllm.distributed.kv_transfer.kv_connector.factory'))} (KVConnectorFactory._registry)",
        "registered": sorted(KVConnectorFactory._registry),
    }

    # --- OffloadingConnector: the keys its code reads from kv_connector_extra_config
    site = module_file("vllm").parent
    offload_files = sorted((site / "v1" / "kv_offload").rglob("*.py"))
    offload_files += sorted((site / "distributed" / "kv_transfer" / "kv_connector" / "v1" / "offloading").rglob("*.py"))
    offload_files.append(site / "distributed" / "kv_transfer" / "kv_connector" / "v1" / "offloading_connector.py")
    offload_keys = scan_keys([p for p in offload_files if p.exists()], {"extra_config", "kv_connector_extra_config"})
    expected = {"spec_name", "cpu_bytes_to_use", "eviction_policy", "secondary_tiers", "block_size", "blocks_per_chunk"}
    if not expected <= set(offload_keys):
        raise CaptureError(f"the extra-config scan missed {sorted(expected - set(offload_keys))}: fix scan_keys")

    tier_factory = module_file("vllm.v1.kv_offload.tiering.factory")
    create = function_node(tier_factory, "SecondaryTierFactory.create_secondary_tier")
    # keys the factory itself consumes (config.pop("type"), ...), and the keyword arguments it
    # passes to the tier class itself (so they are not tier keys)
    factory_keys = keys_read_in(
        tier_factory, "SecondaryTierFactory.create_secondary_tier", {"config"}, methods=("pop",)
    )
    injected = sorted(
        {
            kw.arg
            for n in ast.walk(create)
            if isinstance(n, ast.Call) and _name_of(n.func) == "tier_cls"
            for kw in n.keywords
            if kw.arg
        }
    )
    if not injected or "type" not in factory_keys:
        raise CaptureError("SecondaryTierFactory.create_secondary_tier changed shape; re-check the tier capture")

    tiers: dict[str, Any] = {}
    for tier_type in sorted(SecondaryTierFactory._registry):
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                cls = SecondaryTierFactory._registry[tier_type]()
        except Exception as exc:
            tiers[tier_type] = {
                "class": None,
                "keys": None,
                "accepts_any_key": None,
                "unavailable": f"{type(exc).__name__}: {exc}",
            }
            continue
        sig = inspect.signature(cls.__init__)
        keys: dict[str, Any] = {}
        any_key = False
        for p in list(sig.parameters.values())[1:]:
            if p.kind is p.VAR_KEYWORD:
                any_key = True
                continue
            if p.name in injected:
                continue
            keys[p.name] = {
                "required": p.default is p.empty,
                "type": type_name(p.annotation) if p.annotation is not p.empty else None,
            }
        tiers[tier_type] = {
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "source": f"{rel(inspect.getsourcefile(cls))} ({cls.__qualname__}.__init__)",
            "keys": keys,
            "accepts_any_key": any_key,
        }
    fs_manager = importlib.import_module("vllm.v1.kv_offload.tiering.fs.manager")
    locality = [m.value for m in fs_manager.Locality]
    tiers["fs"]["keys"]["locality"]["choices"] = locality
    fact(
        "fs tier 'locality' is converted with Locality(locality): LOCAL or REMOTE",
        "vllm.v1.kv_offload.tiering.fs.manager",
        "Locality(locality)",
    )

    offloading = {
        "connector": "OffloadingConnector",
        "extra_config_keys": offload_keys,
        "required_keys": {
            "cpu_bytes_to_use": fact(
                "cpu_bytes_to_use is required (CPUOffloadingSpec and TieringOffloadingSpec)",
                "vllm.v1.kv_offload.cpu.spec",
                "cpu_bytes_to_use must be specified",
            ),
        },
        "spec_names": sorted(OffloadingSpecFactory._registry),
        "spec_names_source": f"{rel(module_file('vllm.v1.kv_offload.factory'))} (OffloadingSpecFactory._registry)",
        "spec_module_key": "spec_module_path",
        "eviction_policies": sorted(CachePolicyFactory._registry),
        "eviction_policies_source": f"{rel(module_file('vllm.v1.kv_offload.cpu.policies.factory'))} (CachePolicyFactory._registry)",
        "eviction_policy_module_key": "cache_policy_module_path",
        "secondary_tiers": {
            "types": tiers,
            "types_source": f"{rel(tier_factory)} (SecondaryTierFactory._registry)",
            "factory_keys": factory_keys,
            "injected_arguments": injected,
            "module_key": "module_path",
        },
    }
    for key in ("spec_module_path", "cache_policy_module_path"):
        if key not in offload_keys:
            raise CaptureError(f"{key} is no longer read; re-check the OffloadingConnector capture")

    # --- MultiConnector: the keys it reads from kv_connector_extra_config; each entry of
    # "connectors" is built as a KVTransferConfig of its own (so it is checked like one)
    multi_file = site / "distributed" / "kv_transfer" / "kv_connector" / "v1" / "multi_connector.py"
    multi_keys = scan_keys([multi_file], {"extra_config", "kv_connector_extra_config"})
    if "connectors" not in multi_keys:
        raise CaptureError("MultiConnector no longer reads 'connectors'; re-check the MultiConnector capture")
    multi = {
        "connector": "MultiConnector",
        "extra_config_keys": multi_keys,
        "children_key": "connectors",
        "children_are_kv_transfer_configs": fact(
            "each entry of MultiConnector's 'connectors' is a KVTransferConfig of its own",
            "vllm.distributed.kv_transfer.kv_connector.v1.multi_connector",
            "temp_config.kv_transfer_config = KVTransferConfig(",
        ),
    }

    # --- vLLM's built-in LMCacheMPConnector (used when lmcache's own class cannot be imported)
    builtin = module_file("vllm.distributed.kv_transfer.kv_connector.v1.lmcache_mp_connector")
    lmcache_mp_builtin = {
        "connector": "LMCacheMPConnector",
        "class": "vllm.distributed.kv_transfer.kv_connector.v1.lmcache_mp_connector (built-in fallback)",
        "extra_config_keys": scan_constants([builtin], r"lmcache\.mp\.[a-z0-9_.]+"),
    }

    endpoints = vllm_endpoints(root, serve, fact)

    return {
        "serve": serve_info,
        "endpoints": endpoints,
        "kv_transfer_config": kv_transfer,
        "connectors": connectors,
        "offloading_connector": offloading,
        "multi_connector": multi,
        "lmcache_mp_connector_builtin": lmcache_mp_builtin,
        "hand_listed": fact.listed(),
    }


# ----------------------------------------------------------------------------- LMCache


def capture_lmcache() -> dict[str, Any]:
    fact = HandListed()

    with contextlib.redirect_stdout(io.StringIO()):
        from lmcache.cli.commands import register_commands
        from lmcache.v1.distributed.l2_adapters import config as l2config

    # --- the parser exactly as `lmcache server ...` builds it (lmcache/cli/main.py)
    root = argparse.ArgumentParser(prog="lmcache")
    sub = root.add_subparsers(dest="command")
    register_commands(sub, ["server"])
    server = sub.choices["server"]
    server_info = describe_parser(server, "lmcache server")
    server_info["command"] = ["lmcache", "server"]
    server_info["normalizes_underscores"] = False
    server_info["source"] = f"{rel(module_file('lmcache.cli.commands.server'))} (ServerCommand.add_arguments)"

    requires = [
        {
            "all_of": ["--l1-size-gb", "--eviction-policy"],
            "unless_any": ["--l1-manager"],
            "message": "Legacy L1 configuration requires --l1-size-gb and --eviction-policy",
            "source": fact(
                "--l1-size-gb and --eviction-policy are both required unless --l1-manager is used",
                "lmcache.v1.distributed.config",
                "Legacy L1 configuration requires --l1-size-gb and --eviction-policy",
            ),
        }
    ]
    conflicts = [
        {
            "option": "--l1-manager",
            "conflicts_with": ["--l1-size-gb", "--gds-l1-path", "--l1-devdax-path"],
            "message": "Use either --l1-manager or legacy L1 flags",
            "source": fact(
                "--l1-manager excludes the legacy L1 flags",
                "lmcache.v1.distributed.config",
                "Use either --l1-manager or legacy L1 flags",
            ),
        }
    ]
    for rule in requires + conflicts:
        for flag in (
            rule.get("all_of", []) + rule.get("unless_any", []) + [rule.get("option")] + rule.get("conflicts_with", [])
        ):
            if flag and flag not in server_info["options"]:
                raise CaptureError(f"hand-listed flag {flag} is not an option of lmcache server")

    # --- L2 adapters: every type the registry knows in this venv (forces the lazy imports)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        types = l2config.get_registered_l2_adapter_types()
    package = importlib.import_module("lmcache.v1.distributed.l2_adapters")
    unavailable: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.name.endswith("_l2_adapter"):
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                importlib.import_module(f"{package.__name__}.{info.name}")
        except Exception as exc:
            unavailable[info.name] = type(exc).__name__

    cfg_file = module_file("lmcache.v1.distributed.l2_adapters.config")
    common = keys_read_in(cfg_file, "parse_args_to_l2_adapters_config", {"d"})
    for fn in (
        "L2AdapterConfigBase._parse_eviction_config",
        "L2AdapterConfigBase._parse_persist_config",
        "L2AdapterConfigBase._parse_serde_config",
    ):
        for key, locs in keys_read_in(cfg_file, fn, {"d"}).items():
            common.setdefault(key, []).extend(locs)
    eviction_keys = keys_read_in(cfg_file, "L2AdapterConfigBase._parse_eviction_config", {"eviction_dict"})
    # the policy check is a literal tuple: `if policy not in ("LRU", ...)`
    node = function_node(cfg_file, "L2AdapterConfigBase._parse_eviction_config")
    policies = [
        [c.value for c in n.comparators[0].elts]
        for n in ast.walk(node)
        if isinstance(n, ast.Compare) and isinstance(n.ops[0], ast.NotIn) and isinstance(n.comparators[0], ast.Tuple)
    ]
    if len(policies) != 1:
        raise CaptureError("could not find the L2 eviction policy check in _parse_eviction_config")
    if sorted(policies[0]) != sorted(server_info["options"]["--eviction-policy"]["choices"]):
        raise CaptureError("L2 eviction policies differ from --eviction-policy choices; re-check")

    type_keys: dict[str, Any] = {}
    for type_name_ in ("fs", "fs_native", "resp"):  # the types kvgen emits (resp: kvCacheOffloading.remote)
        cls = l2config.get_l2_adapter_config_class(type_name_)
        path = Path(inspect.getsourcefile(cls)).resolve()
        read = keys_read_in(path, f"{cls.__name__}.from_dict", {"d"})
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        own = {k: v for k, v in read.items() if k not in common}
        if set(own) != {p.name for p in params}:
            raise CaptureError(
                f"{type_name_}: from_dict reads {sorted(own)} but __init__ takes {[p.name for p in params]}"
            )
        type_keys[type_name_] = {
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "keys": {
                p.name: {
                    "required": p.default is p.empty,
                    "type": type_name(p.annotation) if p.annotation is not p.empty else None,
                    "read_at": own[p.name],
                }
                for p in params
            },
        }

    l2 = {
        "option": "--l2-adapter",
        "types": types,
        "types_source": f"{rel(module_file('lmcache.v1.distributed.l2_adapters.factory'))} (get_all_registered_names)",
        "modules_not_importable_here": unavailable,
        "common_keys": dict(sorted(common.items())),
        "eviction_keys": eviction_keys,
        "eviction_policies": policies[0],
        "type_keys": type_keys,
        "note": "LMCache ignores unknown keys in an --l2-adapter object; the snapshot check rejects them.",
    }

    # --- lmcache.mp.* keys LMCache's LMCacheMPConnector (the class vLLM prefers) reads
    integration = module_file("lmcache.integration.vllm.lmcache_mp_connector").parent
    files = sorted(integration.rglob("*.py"))
    mp_keys = scan_constants(files, r"lmcache\.mp\.[a-z0-9_.]+")
    adapter = importlib.import_module("lmcache.integration.vllm.vllm_multi_process_adapter")
    adapter_loc = anchor("lmcache.integration.vllm.vllm_multi_process_adapter", "class ExtraConfigDefault")
    for member in adapter.ExtraConfigDefault:
        mp_keys.setdefault(f"lmcache.mp.{member.name}", []).append(f"{adapter_loc} (ExtraConfigDefault.{member.name})")
    eviction_aware = importlib.import_module("lmcache.integration.vllm.lazy_offload_policy.eviction_aware")
    loc = fact(
        "lmcache.mp.lazy_offload_<field> for each EvictionAwarePolicyConfig field",
        "lmcache.integration.vllm.lazy_offload_policy.eviction_aware",
        'key = f"lmcache.mp.lazy_offload_{name}"',
    )
    for f in dataclasses.fields(eviction_aware.EvictionAwarePolicyConfig):
        mp_keys.setdefault(f"lmcache.mp.lazy_offload_{f.name}", []).append(loc)
    mp_keys = {k: sorted(set(v), key=lambda s: _line_order(s.split(" ")[0])) for k, v in sorted(mp_keys.items())}

    endpoints = lmcache_endpoints(server, fact)

    return {
        "server": server_info,
        "endpoints": endpoints,
        "requires": requires,
        "conflicts": conflicts,
        "l2_adapters": l2,
        "lmcache_mp_connector": {
            "connector": "LMCacheMPConnector",
            "class": "lmcache.integration.vllm.lmcache_mp_connector.LMCacheMPConnector",
            "extra_config_prefix": "lmcache.mp.",
            "extra_config_keys": mp_keys,
        },
        "hand_listed": fact.listed(),
    }


# ----------------------------------------------------------------------------- hybrid architectures

HYBRID_YAML = ROOT / "charts" / "kvgen" / "files" / "hybrid-architectures.yaml"
HYBRID_INTERFACE = ("vllm.model_executor.models.interfaces", "IsHybrid")
MODELS_PACKAGE = "vllm.model_executor.models"


def _module_statements(body: list[ast.stmt]):
    """A module's top-level statements, including those inside if/try blocks (platform-dependent
    imports such as vllm/models/kimi_k3/__init__.py), but not inside functions or classes."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _module_statements(node.body)
            yield from _module_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_statements(block)


def _class_index(
    roots: list[Path], site: Path
) -> dict[str, tuple[dict[str, tuple[str, str]], dict[str, tuple[list[str], bool | None]]]]:
    """{module: (imported names -> (module, name), classes -> (base names, explicit is_hybrid))}."""
    index = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(site).with_suffix("").parts)
            package = parts[-1] == "__init__"
            if package:
                parts = parts[:-1]
            module = ".".join(parts)
            imports: dict[str, tuple[str, str]] = {}
            classes: dict[str, tuple[list[str], bool | None]] = {}
            for node in _module_statements(ast.parse(path.read_text(encoding="utf-8")).body):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = parts if package else parts[:-1]
                        base = base[: len(base) - (node.level - 1)]
                        source = ".".join(base + ([node.module] if node.module else []))
                    else:
                        source = node.module or ""
                    for alias in node.names:
                        imports.setdefault(alias.asname or alias.name, (source, alias.name))
                elif isinstance(node, ast.ClassDef):
                    bases = []
                    for b in node.bases:
                        b = b.value if isinstance(b, ast.Subscript) else b
                        if isinstance(b, (ast.Name, ast.Attribute)):
                            bases.append(b.id if isinstance(b, ast.Name) else b.attr)
                    flag = None
                    for st in node.body:  # an explicit `is_hybrid = True/False` in the class body
                        target = (
                            st.targets[0]
                            if isinstance(st, ast.Assign) and len(st.targets) == 1
                            else getattr(st, "target", None)
                        )
                        value = getattr(st, "value", None)
                        if (
                            isinstance(target, ast.Name)
                            and target.id == "is_hybrid"
                            and isinstance(value, ast.Constant)
                            and isinstance(value.value, bool)
                        ):
                            flag = value.value
                    classes[node.name] = (bases, flag)
            index[module] = (imports, classes)
    return index


def capture_hybrid() -> str:
    """charts/kvgen/files/hybrid-architectures.yaml: every registry architecture whose model class
    implements vLLM's IsHybrid interface (is_hybrid = True), found by a static scan.

    Importing the model classes is not possible in the CPU-only contract venv (many need einops,
    torchvision, ...), so the scan reads the source instead: it indexes every class and import of
    vllm/model_executor/models and vllm/models, follows re-exports and base classes across
    modules, and marks a class hybrid when IsHybrid is among its ancestors (or its body sets
    ``is_hybrid`` itself). The registry (``_VLLM_MODELS``) maps each architecture to its class.
    """
    from vllm.model_executor.models import registry

    vllm_root = module_file("vllm").parent
    site = _site_root(str(vllm_root / "__init__.py"))
    index = _class_index([vllm_root / "model_executor" / "models", vllm_root / "models"], site)
    anchor(HYBRID_INTERFACE[0], "class IsHybrid")  # the interface must still exist where we look

    def defining(module: str, name: str, depth: int = 0) -> tuple[str, str]:
        if depth < 20 and module in index:
            imports, classes = index[module]
            if name not in classes and name in imports:
                return defining(*imports[name], depth + 1)
        return module, name

    memo: dict[tuple[str, str], bool] = {}

    def hybrid(key: tuple[str, str], seen: frozenset = frozenset()) -> bool:
        key = defining(*key)
        if key == HYBRID_INTERFACE:
            return True
        if key in memo or key in seen or key[0] not in index or key[1] not in index[key[0]][1]:
            return memo.get(key, False)
        bases, flag = index[key[0]][1][key[1]]
        memo[key] = flag if flag is not None else any(hybrid((key[0], b), seen | {key}) for b in bases)
        return memo[key]

    found = {}
    for arch, (module, cls) in sorted(registry._VLLM_MODELS.items()):
        qualified = module if module.startswith("vllm.") else f"{MODELS_PACKAGE}.{module}"
        if hybrid((qualified, cls)):
            found[arch] = ".".join(defining(qualified, cls))
    if not found:
        raise CaptureError("no IsHybrid architecture found: the static scan needs re-checking")
    version = md.version("vllm")
    lines = [
        "# Hybrid architectures: vLLM model classes implementing IsHybrid (Mamba / linear attention + attention).",
        f"# Generated by {GENERATED_BY}. Do not edit by hand; regenerate with scripts/capture-contract.",
        "#",
        "# Read by kvgen (kvgen/data/catalog.py) and by the Helm chart (templates/plan/_resolve.tpl): a model whose",
        "# architecture is listed here is hybrid, so the hybrid-architecture rule turns offloading off.",
        "# Each architecture maps to the class vLLM's registry (_VLLM_MODELS) loads for it.",
        "source:",
        "  package: vllm",
        f"  version: {json.dumps(version)}",
        f"  registry: {json.dumps(rel(module_file(registry.__name__)))}",
        f"  interface: {json.dumps(anchor(HYBRID_INTERFACE[0], 'class IsHybrid'))}",
        '  how: "a static scan of vllm/model_executor/models and vllm/models (imports, re-exports and base classes '
        'followed across modules): IsHybrid among the ancestors of the class the registry maps the architecture to"',
        "architectures:",
        *(f"  {arch}: {json.dumps(target)}" for arch, target in found.items()),
    ]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- main


def runtime_versions() -> dict[str, str]:
    import yaml  # PyYAML: pinned in scripts/contract-requirements.txt

    data = yaml.safe_load(RUNTIME_YAML.read_text(encoding="utf-8"))
    return {"vllm": str(data["vllm"]["version"]), "lmcache": str(data["lmcache"]["version"])}


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def capture() -> dict[str, str]:
    """{file name: JSON text} for both snapshots. Raises CaptureError on any mismatch."""
    pins = runtime_versions()
    installed = {name: md.version(name) for name in ("vllm", "lmcache")}
    if installed != pins:
        raise CaptureError(f"installed {installed} differ from charts/kvgen/files/runtime.yaml {pins}")
    env = {
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "torch": md.version("torch"),
        "VLLM_TARGET_DEVICE": os.environ["VLLM_TARGET_DEVICE"],
    }
    with contextlib.redirect_stdout(sys.stderr):  # keep library chatter off our stdout
        vllm_part = capture_vllm()
        lmcache_part = capture_lmcache()
    out = {}
    for name, part in (("vllm", vllm_part), ("lmcache", lmcache_part)):
        doc = {
            "$comment": f"Generated by {GENERATED_BY}. Do not edit by hand; regenerate with scripts/capture-contract.",
            "schema": SCHEMA,
            "package": name,
            "version": installed[name],
            "captured_with": {**env, "other": {k: v for k, v in installed.items() if k != name}},
            **part,
        }
        out[f"{name}-{installed[name]}.json"] = dumps(doc)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="compare with the committed files instead of writing them")
    p.add_argument(
        "--out-dir", type=Path, default=OUT_DIR, help="where the snapshots live (default: charts/kvgen/files/contract)"
    )
    args = p.parse_args(argv)
    try:
        files = capture()
        with contextlib.redirect_stdout(sys.stderr):
            hybrid = capture_hybrid()
    except CaptureError as exc:
        print(f"capture-contract: error: {exc}", file=sys.stderr)
        return 1
    stale = []
    for name, text in files.items():
        path = args.out_dir / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(
                f"capture-contract: wrote {path.relative_to(ROOT) if ROOT in path.parents else path}", file=sys.stderr
            )
    if args.check:
        if not HYBRID_YAML.exists() or HYBRID_YAML.read_text(encoding="utf-8") != hybrid:
            stale.append(HYBRID_YAML.name)
    else:
        HYBRID_YAML.write_text(hybrid, encoding="utf-8")
        print(f"capture-contract: wrote {HYBRID_YAML.relative_to(ROOT)}", file=sys.stderr)
    if stale:
        print(f"capture-contract: out of date: {', '.join(stale)} (run scripts/capture-contract)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
