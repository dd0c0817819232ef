#!/usr/bin/env bash
# checkov-env.sh - build (once) and locate the venv holding checkov, the Kubernetes scanner
# that tests/test_checkov.py runs over golden/*.yaml. checkov lives in its own venv, outside
# the checkout, because its many dependencies (boto3, networkx, ...) may conflict with kvgen's.
#
# Usage:
#   scripts/checkov-env.sh            build if needed; print the venv dir, then (last line)
#                                     the checkov executable:  CHECKOV=$(scripts/checkov-env.sh | tail -1)
#   scripts/checkov-env.sh --check    build nothing; exit 0 (printing the same lines) if the
#                                     venv is complete, 1 if not
#   scripts/checkov-env.sh --rebuild  throw the venv away and build it again
#
# Environment:
#   KVGEN_ENV_CACHE_DIR parent of the venv (default: $KVGEN_CACHE_DIR, else $HOME/.cache/kvgen)
#   KVGEN_PYTHON        interpreter to build from (default: python3)
#
# As scripts/contract-env.sh (both use scripts/lib/cached-venv.sh): the venv is named after the
# pinned version, built in a temporary directory, smoke-tested, marked complete and renamed into
# place in one step; a killed build never leaves a venv that looks complete. Pip's output goes
# to stderr.
set -euo pipefail

CHECKOV_VERSION=3.3.30

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOL=checkov-env
CACHE_DIR=${KVGEN_ENV_CACHE_DIR:-${KVGEN_CACHE_DIR:-$HOME/.cache/kvgen}}
VENV_NAME="checkov-venv-${CHECKOV_VERSION}"
MARKER_NAME=.kvgen-checkov-ok
EXE=bin/checkov
HELP_END=20
PYTHON=${KVGEN_PYTHON:-python3}
# shellcheck source=lib/cached-venv.sh
. "$SCRIPT_DIR/lib/cached-venv.sh"

venv_mode "$@"
EXPECTED_STAMP="checkov==$CHECKOV_VERSION"
venv_reuse
venv_lock
venv_start
trap 'rm -rf "$BUILD"' EXIT
"$PYTHON" -m venv "$BUILD" >&2
PIP_DISABLE_PIP_VERSION_CHECK=1 "$BUILD/bin/python" -m pip install --quiet "checkov==$CHECKOV_VERSION" >&2 \
  || die "pip install checkov==$CHECKOV_VERSION failed"

log "smoke run"
"$BUILD/bin/python" -c 'import importlib.metadata as m, sys; assert m.version("checkov") == sys.argv[1]' "$CHECKOV_VERSION" >&2 \
  || die "smoke run failed; the venv was not installed"

venv_publish
