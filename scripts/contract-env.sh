#!/usr/bin/env bash
# contract-env.sh - build (once) and locate the "contract" venv that holds the REAL
# command-line parsers of vLLM and LMCache, so that kvgen's rendered command lines can be
# checked against them on a machine without a GPU.
#
# Usage:
#   scripts/contract-env.sh            build if needed; print the venv dir, then (last line)
#                                      the venv's python:  PY=$(scripts/contract-env.sh | tail -1)
#   scripts/contract-env.sh --check    build nothing; exit 0 (printing the same lines) if the
#                                      venv is complete, 1 if not
#   scripts/contract-env.sh --rebuild  throw the venv away and build it again
#
# Run the parsers with VLLM_TARGET_DEVICE=cpu in the environment.
#
# Environment:
#   KVGEN_ENV_CACHE_DIR parent of the venv (default: $KVGEN_CACHE_DIR, else $HOME/.cache/kvgen)
#   KVGEN_PYTHON        interpreter to build from (default: python3.11, else python3; must be 3.11)
#   KVGEN_WHEEL_DIR     extra --find-links dir holding the CPU torch wheel (default: /opt/wheels)
#
# The venv lives outside the checkout, in a directory named after the pinned versions. It is
# complete only when its marker file exists; the marker is written after a smoke run of both
# parsers succeeded, while the venv still sits in a temporary build directory, and the build
# directory is then renamed into place in one step. A build that is killed leaves at most a
# .build-* directory (removed by the next build), never a venv that looks complete.
# Pip's output goes to stderr; stdout carries only the venv dir and the python path. The venv
# bookkeeping (marker, lock, build dir, publish) is scripts/lib/cached-venv.sh, shared with
# scripts/checkov-env.sh.
set -euo pipefail

VLLM_VERSION=0.33.0
LMCACHE_VERSION=0.5.6
TORCH_VERSION=2.13.0
TORCH_LOCAL=cpu          # the local version label of the CPU build: torch==2.13.0+cpu
PY_VERSION=3.11
PY_TAG=py${PY_VERSION/./}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REQUIREMENTS="$SCRIPT_DIR/contract-requirements.txt"
CACHE_DIR=${KVGEN_ENV_CACHE_DIR:-${KVGEN_CACHE_DIR:-$HOME/.cache/kvgen}}
WHEEL_DIR=${KVGEN_WHEEL_DIR:-/opt/wheels}
TOOL=contract-env
VENV_NAME="contract-venv-vllm${VLLM_VERSION}-lmcache${LMCACHE_VERSION}-${PY_TAG}"
MARKER_NAME=.kvgen-contract-ok
EXE=bin/python
HELP_END=27
# shellcheck source=lib/cached-venv.sh
. "$SCRIPT_DIR/lib/cached-venv.sh"

venv_mode "$@"
[ -f "$REQUIREMENTS" ] || die "missing $REQUIREMENTS"

# The marker records what was installed, so that a change of pins invalidates the venv.
stamp() {
  printf 'vllm==%s lmcache==%s torch==%s+%s python=%s\n' \
    "$VLLM_VERSION" "$LMCACHE_VERSION" "$TORCH_VERSION" "$TORCH_LOCAL" "$PY_VERSION"
  printf 'requirements-sha256=%s\n' "$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
}
EXPECTED_STAMP=$(stamp)
venv_reuse

# Pick the interpreter.
if [ -n "${KVGEN_PYTHON:-}" ]; then PYTHON=$KVGEN_PYTHON
elif command -v "python$PY_VERSION" >/dev/null 2>&1; then PYTHON=python$PY_VERSION
else PYTHON=python3; fi
have=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
  || die "cannot run $PYTHON"
[ "$have" = "$PY_VERSION" ] || die "$PYTHON is Python $have; the pins in $REQUIREMENTS need Python $PY_VERSION (set KVGEN_PYTHON)"

venv_lock
venv_start
CONSTRAINTS=$(mktemp "${TMPDIR:-/tmp}/kvgen-contract-constraints.XXXXXX")
trap 'rm -rf "$BUILD" "$CONSTRAINTS"' EXIT
echo "torch==$TORCH_VERSION" >"$CONSTRAINTS"
"$PYTHON" -m venv "$BUILD" >&2

find_links=()
[ -d "$WHEEL_DIR" ] && find_links=(--find-links "$WHEEL_DIR")

# Everything is pinned and installed with --no-deps: pip resolves nothing, so vllm's
# torch==2.14.0 / CUDA / nvidia-* requirements and xgrammar's triton are never pulled in.
# torch==X+cpu exists only as the local CPU wheel: if it is missing, pip fails here rather
# than downloading the multi-GB CUDA build from PyPI.
log "pip install (torch ${TORCH_VERSION}+${TORCH_LOCAL}, vllm ${VLLM_VERSION}, lmcache ${LMCACHE_VERSION}, light deps)"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$BUILD/bin/python" -m pip install \
  --no-deps --no-compile --only-binary=:all: "${find_links[@]}" \
  -c "$CONSTRAINTS" \
  -r "$REQUIREMENTS" \
  "torch==${TORCH_VERSION}+${TORCH_LOCAL}" \
  "vllm==${VLLM_VERSION}" \
  "lmcache==${LMCACHE_VERSION}" >&2 \
  || die "pip install failed (is the CPU torch wheel torch-${TORCH_VERSION}+${TORCH_LOCAL}-*.whl in ${WHEEL_DIR}?)"

# Smoke run: both parsers, in one process, as callers will use them.
SMOKE=$(cat <<'PYEOF'
import argparse, os, sys
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
want_vllm, want_lmc = sys.argv[1], sys.argv[2]
import vllm, importlib.metadata as md
assert md.version("vllm") == want_vllm, md.version("vllm")
assert md.version("lmcache") == want_lmc, md.version("lmcache")
from vllm.utils.argparse_utils import FlexibleArgumentParser
from vllm.entrypoints.common.cli_args import make_arg_parser, validate_parsed_serve_args
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory
p = FlexibleArgumentParser(prog="vllm")
make_arg_parser(p.add_subparsers(dest="subparser").add_parser("serve"))
a = p.parse_args(["serve", "--model=Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size=2",
    '--kv-transfer-config={"kv_connector":"OffloadingConnector","kv_role":"kv_both",'
    '"kv_connector_extra_config":{"cpu_bytes_to_use":1073741824}}'])
validate_parsed_serve_args(a)
ea = AsyncEngineArgs.from_cli_args(a)
assert ea.tensor_parallel_size == 2 and ea.kv_transfer_config.kv_connector == "OffloadingConnector"
for name in ("OffloadingConnector", "LMCacheMPConnector"):
    assert name in KVConnectorFactory._registry, name
from lmcache import device_ops  # needs numba
from lmcache.v1.multiprocess.config import (add_mp_server_args, add_p2p_args,
    add_http_frontend_args, add_coordinator_args, parse_args_to_mp_server_config)
from lmcache.v1.distributed.config import add_storage_manager_args, parse_args_to_config
from lmcache.v1.mp_observability.config import add_observability_args
q = argparse.ArgumentParser(prog="lmcache server")
for add in (add_mp_server_args, add_p2p_args, add_storage_manager_args,
            add_http_frontend_args, add_observability_args, add_coordinator_args):
    add(q)
b = q.parse_args(["--port", "5555", "--l1-size-gb", "4", "--eviction-policy", "LRU",
    "--l2-adapter", '{"type":"fs","base_path":"/tmp/kvgen-smoke"}'])
parse_args_to_mp_server_config(b)
sm = parse_args_to_config(b)
assert sm.l2_adapter_config.adapters, "fs L2 adapter not parsed"
print("contract-env smoke OK: vllm", want_vllm, "lmcache", want_lmc)
PYEOF
)
# Byte-compile now, recording the FINAL path in the .pyc files (so tracebacks name it).
# Without .pyc files every run re-compiles vLLM from source, which doubles the start-up
# time, and environments with PYTHONDONTWRITEBYTECODE=1 never write them at run time.
log "byte-compiling site-packages"
"$BUILD/bin/python" -m compileall -q -j 0 -s "$BUILD" -p "$VENV" \
  "$BUILD/lib/python$PY_VERSION/site-packages" >/dev/null 2>&1 || true  # a few test files fail; harmless

log "smoke run of both parsers"
( cd / && PYTHONDONTWRITEBYTECODE=1 VLLM_TARGET_DEVICE=cpu LMCACHE_DISABLE_BANNER=1 \
    "$BUILD/bin/python" -c "$SMOKE" "$VLLM_VERSION" "$LMCACHE_VERSION" ) >&2 \
  || die "smoke run failed; the venv was not installed"

venv_publish
