#!/usr/bin/env bash
# promtool-env.sh - fetch (once) and locate promtool, Prometheus's rule checker, which the tests
# run over the rendered PrometheusRule groups (promtool check rules / promtool test rules).
#
# Usage:
#   scripts/promtool-env.sh            fetch if needed; print the tool dir, then (last line) the
#                                      promtool executable:  PROMTOOL=$(scripts/promtool-env.sh | tail -1)
#   scripts/promtool-env.sh --check    fetch nothing; exit 0 (printing the same lines) if the
#                                      tool dir is complete, 1 if not
#   scripts/promtool-env.sh --rebuild  throw the tool dir away and fetch it again
#
# Environment:
#   KVGEN_ENV_CACHE_DIR parent of the tool dir (default: $KVGEN_CACHE_DIR, else $HOME/.cache/kvgen)
#
# promtool comes from Debian's `prometheus` package (bookworm: 2.42.0+ds-5+deb12u1), which is
# downloaded with `apt-get download` (nothing is installed, dpkg's database is untouched) and of
# which only usr/bin/promtool is kept (a Go binary linked against libc only). If the package
# lists do not know the package (a clean machine), `apt-get update` is run once (needs root, as
# CI is). The pinned Debian version is preferred; if a Debian point release has replaced it,
# any ${PROMTOOL_VERSION}+ds-* revision is accepted (with a warning) and recorded in
# DEBIAN-VERSION beside the binary. As scripts/contract-env.sh (scripts/lib/cached-venv.sh):
# built in a temporary directory, smoke-tested, marked complete and renamed into place in one
# step, one build at a time; a killed build never leaves a tool dir that looks complete.
set -euo pipefail

PROMTOOL_VERSION=2.42.0                       # upstream version; names the tool dir
PROMETHEUS_DEB_VERSION=2.42.0+ds-5+deb12u1    # preferred Debian revision

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOL=promtool-env
CACHE_DIR=${KVGEN_ENV_CACHE_DIR:-${KVGEN_CACHE_DIR:-$HOME/.cache/kvgen}}
VENV_NAME="promtool-${PROMTOOL_VERSION}"      # not a venv: a dir holding bin/promtool
MARKER_NAME=.kvgen-promtool-ok
EXE=bin/promtool
HELP_END=23
# shellcheck source=lib/cached-venv.sh
. "$SCRIPT_DIR/lib/cached-venv.sh"

venv_mode "$@"
case $PROMETHEUS_DEB_VERSION in "$PROMTOOL_VERSION"+ds-*) ;; *) die "pins disagree: $PROMETHEUS_DEB_VERSION is not $PROMTOOL_VERSION+ds-*" ;; esac
EXPECTED_STAMP="promtool==${PROMTOOL_VERSION} from Debian prometheus ${PROMTOOL_VERSION}+ds-*"
venv_reuse
command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 \
  || die "apt-get and dpkg-deb are needed (a Debian/Ubuntu machine)"
venv_lock
venv_start
trap 'rm -rf "$BUILD"' EXIT

# The versions of `prometheus` the package lists offer, highest first.
offered() { apt-cache madison prometheus 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}'; }
pick() {
  local v
  v=$(offered)
  if grep -qxF "$PROMETHEUS_DEB_VERSION" <<<"$v"; then echo "$PROMETHEUS_DEB_VERSION"; return; fi
  grep -m1 -E "^${PROMTOOL_VERSION//./\\.}\+ds-" <<<"$v" || true
}
DEB_VERSION=$(pick)
if [ -z "$DEB_VERSION" ]; then
  log "prometheus ${PROMTOOL_VERSION} is not in the package lists; running apt-get update"
  [ "$(id -u)" = 0 ] || die "apt-get update needs root (or run it once by hand)"
  apt-get update -qq >&2 || die "apt-get update failed"
  DEB_VERSION=$(pick)
fi
[ -n "$DEB_VERSION" ] || die "no prometheus ${PROMTOOL_VERSION}+ds-* in the package lists (offered: $(offered | tr '\n' ' ')); bump PROMTOOL_VERSION"
[ "$DEB_VERSION" = "$PROMETHEUS_DEB_VERSION" ] \
  || log "warning: prometheus $PROMETHEUS_DEB_VERSION is gone; using $DEB_VERSION (bump PROMETHEUS_DEB_VERSION)"

# apt-get download checks the .deb against the hashes in the signed Release/Packages files.
# APT::Sandbox::User=root: the build dir is not writable by _apt (avoids a warning, nothing else).
log "apt-get download prometheus=$DEB_VERSION"
( cd "$BUILD" && apt-get download -qq -o APT::Sandbox::User=root "prometheus=$DEB_VERSION" ) >&2 \
  || die "apt-get download prometheus=$DEB_VERSION failed"
DEB=$(ls "$BUILD"/prometheus_*.deb)
# Extract only the one member (the package unpacks to ~96 MB).
mkdir -p "$BUILD/x" "$BUILD/bin"
dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$BUILD/x" ./usr/bin/promtool \
  || die "promtool not found in $DEB"
mv "$BUILD/x/usr/bin/promtool" "$BUILD/bin/promtool"
rm -rf "$BUILD/x" "$DEB"
printf '%s\n' "$DEB_VERSION" >"$BUILD/DEBIAN-VERSION"

log "smoke run"
SMOKE=$(mktemp -d "${TMPDIR:-/tmp}/kvgen-promtool-smoke.XXXXXX")
trap 'rm -rf "$BUILD" "$SMOKE"' EXIT
cat >"$SMOKE/rules.yaml" <<'EOF'
groups:
  - name: smoke
    rules:
      - alert: Up0
        expr: up == 0
        for: 1m
EOF
cat >"$SMOKE/test.yaml" <<'EOF'
rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'up{job="a"}'
        values: '0x5'
    alert_rule_test:
      - eval_time: 3m
        alertname: Up0
        exp_alerts:
          - exp_labels: {job: a}
EOF
{
  "$BUILD/bin/promtool" --version 2>&1 | grep -q "version ${PROMTOOL_VERSION}+ds " \
    && "$BUILD/bin/promtool" check rules "$SMOKE/rules.yaml" \
    && ( cd "$SMOKE" && "$BUILD/bin/promtool" test rules test.yaml )
} >&2 || die "smoke run failed; promtool was not installed"

# Publish: the marker, then one rename (not a venv: nothing to relocate)
dir_publish "Debian prometheus $DEB_VERSION"
