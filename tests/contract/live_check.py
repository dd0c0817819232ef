#!/usr/bin/env python3
"""Parse a batch of rendered command lines with the REAL vLLM and LMCache parsers.

Runs inside the contract venv (scripts/contract-env.sh), never in kvgen's own venv: it imports
vllm and lmcache, each once, and checks every line of the batch in this one process.

    python live_check.py BATCH.json RESULT.json [--capture]

BATCH.json: {"lines": [{"id": str, "kind": "vllm" | "lmcache" | "hf", "argv": [str, ...]}, ...]}
  - vllm:    the vllm container's args (the image's entrypoint is `vllm serve`)
  - lmcache: the full server command the launcher execs: [".../lmcache", "server", ...]
  - hf:      the arguments after `hf` of the model-download init container (`download REPO ...`)

RESULT.json: {"versions": {...}, "results": {id: {"ok": bool, "stage": str | null,
  "error": str | null, "facts": {...}}}, "snapshots": {file: text} and
  "hybrid_architectures": text of charts/kvgen/files/hybrid-architectures.yaml (with --capture)}

vLLM lines go through what `vllm serve` does before it needs a GPU: the serve parser
(make_arg_parser), validate_parsed_serve_args, AsyncEngineArgs.from_cli_args, then the
connector registry; for an OffloadingConnector the spec, eviction-policy and secondary-tier
lookups and the tier constructor's signature (what vLLM calls at start-up); for an
LMCacheMPConnector LMCache's own resolution of the lmcache.mp.* keys.
LMCache lines go through the `lmcache server` parser and every parse_args_to_*_config call
ServerCommand.execute makes. Facts are reported for the caller to compare with the spec.
On a machine without CUDA, LMCache turns lazy allocation off: no fact about it is reported.

Library output goes to stderr; the result goes only to RESULT.json.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata as md
import inspect
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("LMCACHE_DISABLE_BANNER", "1")


def _argparse_error(text: str) -> str:
    """The 'prog: error: ...' message argparse printed (with its continuation lines)."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if ": error: " in line:
            return "\n".join(lines[i:])
    return lines[-1] if lines else ""


def _error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + " ..."


def _fail(stage: str, error: str, facts: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"ok": False, "stage": stage, "error": error, "facts": facts or {}}


class VllmChecker:
    def __init__(self) -> None:
        from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.entrypoints.common.cli_args import make_arg_parser, validate_parsed_serve_args
        from vllm.utils.argparse_utils import FlexibleArgumentParser
        from vllm.v1.kv_offload.cpu.policies.factory import CachePolicyFactory
        from vllm.v1.kv_offload.factory import OffloadingSpecFactory
        from vllm.v1.kv_offload.tiering.factory import SecondaryTierFactory

        self.registry = KVConnectorFactory._registry
        self.engine_args = AsyncEngineArgs
        self.validate = validate_parsed_serve_args
        self.specs, self.policies, self.tiers = OffloadingSpecFactory, CachePolicyFactory, SecondaryTierFactory
        self.parser = FlexibleArgumentParser(prog="vllm")
        make_arg_parser(self.parser.add_subparsers(dest="subparser").add_parser("serve"))

    def check(self, argv: list[str]) -> dict[str, Any]:
        captured = io.StringIO()
        try:
            with contextlib.redirect_stderr(captured):
                ns = self.parser.parse_args(["serve", *argv])
        except SystemExit as exc:
            return _fail("parse", _argparse_error(captured.getvalue()) or f"argparse exit {exc.code}")
        except Exception as exc:
            return _fail("parse", _error(exc))
        try:
            self.validate(ns)
        except Exception as exc:
            return _fail("validate", _error(exc))
        ns.model = ns.model_tag  # what ServeSubcommand.cmd does first
        try:
            ea = self.engine_args.from_cli_args(ns)
        except Exception as exc:
            return _fail("engine_args", _error(exc))
        lora_modules = [{"name": m.name, "path": m.path} for m in (getattr(ns, "lora_modules", None) or [])]
        kv = ea.kv_transfer_config
        facts = {
            "model": ea.model,
            "served_model_name": ea.served_model_name,
            "tensor_parallel_size": ea.tensor_parallel_size,
            "pipeline_parallel_size": ea.pipeline_parallel_size,
            "data_parallel_size": ea.data_parallel_size,
            "max_model_len": ea.max_model_len,
            "enable_prefix_caching": ea.enable_prefix_caching,
            "headless": bool(getattr(ns, "headless", False)),
            "node_rank": getattr(ns, "node_rank", None),
            "nnodes": getattr(ns, "nnodes", None),
            "port": getattr(ns, "port", None),
            "host": getattr(ns, "host", None),
            "master_addr": getattr(ns, "master_addr", None),
            "master_port": getattr(ns, "master_port", None),
            "kv_connector": kv.kv_connector if kv else None,
            "kv_role": kv.kv_role if kv else None,
            "kv_connector_extra_config": dict(kv.kv_connector_extra_config) if kv else None,
            "enable_lora": bool(ea.enable_lora),
            "lora_modules": lora_modules,
        }
        if ea.enable_lora:
            try:
                self._lora(ea)
            except Exception as exc:
                return _fail("lora_config", _error(exc), facts)
        if kv is None or kv.kv_connector is None:
            return {"ok": True, "stage": None, "error": None, "facts": facts}
        if kv.kv_connector_module_path is None and kv.kv_connector not in self.registry:
            return _fail("connector_registry", f"{kv.kv_connector!r} is not in KVConnectorFactory._registry", facts)
        try:
            self._connector(kv)
        except Exception as exc:
            return _fail("connector_config", _error(exc), facts)
        return {"ok": True, "stage": None, "error": None, "facts": facts}

    @staticmethod
    def _lora(ea: Any) -> None:
        """The LoRAConfig vLLM builds from the flags when it creates the engine config (engine/arg_utils.py
        create_engine_config), which the parser alone does not: max_loras >= 1, max_cpu_loras >= max_loras."""
        from vllm.config.lora import LoRAConfig

        LoRAConfig(
            max_lora_rank=ea.max_lora_rank,
            max_loras=ea.max_loras,
            fully_sharded_loras=ea.fully_sharded_loras,
            lora_dtype=ea.lora_dtype,
            target_modules=ea.lora_target_modules,
            max_cpu_loras=ea.max_cpu_loras if ea.max_cpu_loras and ea.max_cpu_loras > 0 else None,
        )

    def _connector(self, kv: Any) -> None:
        """The lookups vLLM makes when it builds the connector; a MultiConnector builds each child
        as a KVTransferConfig of its own (multi_connector.py _get_connector_classes_and_configs)."""
        from vllm.config.kv_transfer import KVTransferConfig

        extra = dict(kv.kv_connector_extra_config)
        if kv.kv_connector == "OffloadingConnector":
            self._offloading(extra)
        elif kv.kv_connector == "LMCacheMPConnector":
            from lmcache.integration.vllm.vllm_multi_process_adapter import _resolve_extra_config

            with contextlib.redirect_stderr(io.StringIO()):
                _resolve_extra_config(extra)
        elif kv.kv_connector == "MultiConnector":
            children = extra.get("connectors")
            if not children:
                raise ValueError("MultiConnector needs kv_connector_extra_config.connectors")
            for child in children:
                config = KVTransferConfig(**child, engine_id=kv.engine_id)
                if config.kv_connector_module_path is None and config.kv_connector not in self.registry:
                    raise ValueError(f"{config.kv_connector!r} is not in KVConnectorFactory._registry")
                self._connector(config)

    def _offloading(self, extra: dict[str, Any]) -> None:
        """The lookups vLLM makes when it builds the offloading spec and its tiers."""
        self.specs.get_spec_cls(extra)
        self.policies.get_cache_policy_cls(extra.get("eviction_policy", "lru"), extra.get("cache_policy_module_path"))
        for tier in extra.get("secondary_tiers", []):
            cls = self.tiers.get_tier_class(tier)
            config = dict(tier)
            tier_type = config.pop("type")
            config.pop("module_path", None)
            config.pop("backpressure", None)
            # SecondaryTierFactory.create_secondary_tier calls tier_cls(offloading_spec=...,
            # primary_kv_view=..., tier_type=..., backpressure_detector=..., **config): a
            # missing or unknown key is a TypeError at start-up; bind() raises the same.
            inspect.signature(cls.__init__).bind(
                None,
                offloading_spec=None,
                primary_kv_view=None,
                tier_type=tier_type,
                backpressure_detector=None,
                **config,
            )


class LMCacheChecker:
    def __init__(self) -> None:
        from lmcache.cli.commands import register_commands
        from lmcache.v1.distributed.config import parse_args_to_config
        from lmcache.v1.distributed.l2_adapters.config import get_type_name_for_config
        from lmcache.v1.mp_observability.config import parse_args_to_observability_config
        from lmcache.v1.multiprocess.config import (
            parse_args_to_coordinator_config,
            parse_args_to_http_frontend_config,
            parse_args_to_mp_server_config,
        )

        # the parser exactly as the `lmcache` console script builds it (lmcache/cli/main.py)
        self.parser = argparse.ArgumentParser(prog="lmcache")
        register_commands(self.parser.add_subparsers(dest="command"), ["server"])
        # the calls ServerCommand.execute makes, in its order (lmcache/cli/commands/server.py)
        self.stages = [
            ("http_frontend_config", parse_args_to_http_frontend_config),
            ("mp_server_config", parse_args_to_mp_server_config),
            ("storage_manager_config", parse_args_to_config),
            ("observability_config", parse_args_to_observability_config),
            ("coordinator_config", parse_args_to_coordinator_config),
        ]
        self.type_name = get_type_name_for_config

    def check(self, argv: list[str]) -> dict[str, Any]:
        if not argv or Path(argv[0]).name != "lmcache":
            return _fail("command", f"not an lmcache command: {argv[:1]}")
        captured = io.StringIO()
        try:
            with contextlib.redirect_stderr(captured):
                ns = self.parser.parse_args(argv[1:])
        except SystemExit as exc:
            return _fail("parse", _argparse_error(captured.getvalue()) or f"argparse exit {exc.code}")
        if ns.command != "server":
            return _fail("command", f"subcommand {ns.command!r}, not 'server'")
        configs: dict[str, Any] = {}
        for stage, parse in self.stages:
            try:
                configs[stage] = parse(ns)
            except Exception as exc:
                return _fail(stage, _error(exc))
        mp, sm, http = configs["mp_server_config"], configs["storage_manager_config"], configs["http_frontend_config"]
        facts = {
            "host": mp.host,
            "port": mp.port,
            "chunk_size": mp.chunk_size,
            "http_host": http.http_host,
            "http_port": http.http_port,
            "l1_size_bytes": sm.l1_manager_config.memory_config.size_in_bytes,
            "eviction_policy": sm.eviction_config.eviction_policy,
            "l2_adapters": [self.type_name(a) for a in sm.l2_adapter_config.adapters],
            "l2_base_paths": [getattr(a, "base_path", None) for a in sm.l2_adapter_config.adapters],
            # what a remote (resp) adapter was configured with; the password must come from the environment
            "l2_remotes": [
                {k: getattr(a, k) for k in ("host", "port", "username", "password", "max_capacity_gb", "shared")}
                | {"eviction": a.eviction_config is not None}
                for a in sm.l2_adapter_config.adapters
                if self.type_name(a) == "resp"
            ],
        }
        return {"ok": True, "stage": None, "error": None, "facts": facts}


class HfChecker:
    """`hf download ...` (huggingface_hub's console script, `hf = huggingface_hub.cli.hf:main`)
    through the CLI's own click command, parsed without running: the options it takes, and the
    checks `download` makes before any network call (--local-dir with --cache-dir, an hf:// URI
    with --revision or --repo-type)."""

    def __init__(self) -> None:
        import click
        import typer
        from huggingface_hub.cli.hf import app

        self.click = click
        self.command = app if isinstance(app, click.Command) else typer.main.get_command(app)

    def check(self, argv: list[str]) -> dict[str, Any]:
        import warnings

        if argv[:1] != ["download"]:
            return _fail("command", f"not `hf download`: {argv[:1]}")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # click 8.2: protected_args
                ctx = self.command.make_context("hf", list(argv))
                name, sub, rest = self.command.resolve_command(ctx, [*ctx.protected_args, *ctx.args])
                assert sub is not None
                params = sub.make_context(name or "download", rest, parent=ctx).params
        except self.click.ClickException as exc:
            return _fail("parse", exc.format_message())
        facts = {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()}
        if facts.get("local_dir") is not None and facts.get("cache_dir") is not None:
            return _fail("download", "Cannot use both `--local-dir` and `--cache-dir` at the same time.", facts)
        if str(facts.get("repo_id", "")).startswith("hf://") and (facts.get("revision") or facts.get("repo_type")):
            return _fail("download", "'--revision' and '--repo-type' cannot be used with an 'hf://' URI", facts)
        return {"ok": True, "stage": None, "error": None, "facts": facts}


def _capture() -> dict[str, Any]:
    import contract_capture  # beside this script (its directory is on sys.path)

    try:
        return {"snapshots": contract_capture.capture(), "hybrid_architectures": contract_capture.capture_hybrid()}
    except contract_capture.CaptureError as exc:
        return {"capture_error": str(exc)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batch", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--capture", action="store_true", help="also capture the snapshots (contract_capture.py)")
    args = ap.parse_args()
    lines = json.loads(args.batch.read_text(encoding="utf-8"))["lines"]
    out: dict[str, Any] = {"versions": {name: md.version(name) for name in ("vllm", "lmcache", "torch")}, "results": {}}
    started = time.monotonic()
    with contextlib.redirect_stdout(sys.stderr):
        checkers = {"vllm": VllmChecker(), "lmcache": LMCacheChecker(), "hf": HfChecker()}
        out["load_seconds"] = round(time.monotonic() - started, 2)
        for line in lines:
            out["results"][line["id"]] = checkers[line["kind"]].check(list(line["argv"]))
        out["check_seconds"] = round(time.monotonic() - started - out["load_seconds"], 2)
        if args.capture:
            out.update(_capture())
    args.output.write_text(json.dumps(out, indent=1, sort_keys=True, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
