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
#   KVGEN_CACHE_DIR     parent of the venv (default: $HOME/.cache/kvgen)
#   KVGEN_PYTHON        interpreter to build from (default: python3)
#
# As scripts/contract-env.sh: the venv is named after the pinned version, built in a temporary
# directory, smoke-tested, marked complete and renamed into place in one step; a killed build
# never leaves a venv that looks complete. Pip's output goes to stderr.
set -euo pipefail

CHECKOV_VERSION=3.3.30

CACHE_DIR=${KVGEN_CACHE_DIR:-$HOME/.cache/kvgen}
VENV_NAME="checkov-venv-${CHECKOV_VERSION}"
VENV="$CACHE_DIR/$VENV_NAME"
MARKER_NAME=.kvgen-checkov-ok
MARKER="$VENV/$MARKER_NAME"
PYTHON=${KVGEN_PYTHON:-python3}

log() { printf 'checkov-env: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
done_ok() { printf '%s\n%s\n' "$VENV" "$VENV/bin/checkov"; exit 0; }

mode=build
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  --rebuild) mode=rebuild ;;
  -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument: $1 (try --help)" ;;
esac

EXPECTED_STAMP="checkov==$CHECKOV_VERSION"
is_complete() { [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$EXPECTED_STAMP" ] && [ -x "$VENV/bin/checkov" ]; }

if [ "$mode" != rebuild ] && is_complete; then done_ok; fi
if [ "$mode" = check ]; then log "not built (or stale): $VENV"; exit 1; fi

mkdir -p "$CACHE_DIR"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE_DIR/.$VENV_NAME.lock"
  if ! flock -n 9; then log "waiting for another build of $VENV_NAME ..."; flock 9; fi
  if [ "$mode" != rebuild ] && is_complete; then done_ok; fi
fi
rm -rf "$CACHE_DIR/.build-$VENV_NAME".* "$CACHE_DIR/.old-$VENV_NAME".* 2>/dev/null || true

BUILD=$(mktemp -d "$CACHE_DIR/.build-$VENV_NAME.XXXXXX")
chmod 755 "$BUILD"
trap 'rm -rf "$BUILD"' EXIT
start=$SECONDS
log "building $VENV (in $BUILD)"
"$PYTHON" -m venv "$BUILD" >&2
PIP_DISABLE_PIP_VERSION_CHECK=1 "$BUILD/bin/python" -m pip install --quiet "checkov==$CHECKOV_VERSION" >&2 \
  || die "pip install checkov==$CHECKOV_VERSION failed"

# Console scripts carry the build dir in their shebang; point them at the final place.
grep -rlI -- "$BUILD" "$BUILD/bin" 2>/dev/null | while IFS= read -r f; do sed -i "s|$BUILD|$VENV|g" "$f"; done
sed -i "s|$BUILD|$VENV|g" "$BUILD/pyvenv.cfg"

log "smoke run"
"$BUILD/bin/python" -c 'import importlib.metadata as m, sys; assert m.version("checkov") == sys.argv[1]' "$CHECKOV_VERSION" >&2 \
  || die "smoke run failed; the venv was not installed"

printf '%s\n' "$EXPECTED_STAMP" >"$BUILD/$MARKER_NAME"
if [ -e "$VENV" ]; then
  OLD=$(mktemp -d "$CACHE_DIR/.old-$VENV_NAME.XXXXXX")
  mv -T "$VENV" "$OLD/venv"
  rm -rf "$OLD"
fi
mv -T "$BUILD" "$VENV"
trap - EXIT
log "built in $((SECONDS - start)) s: $VENV ($(du -sh "$VENV" 2>/dev/null | cut -f1))"
done_ok
