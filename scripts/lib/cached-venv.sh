# Sourced by scripts/contract-env.sh and scripts/checkov-env.sh: a tool's venv kept outside the
# checkout, in a directory named after its pins, so a clean clone and CI reuse it.
#
# A venv is complete only when its marker file holds the expected stamp (what was installed);
# it is built in a temporary .build-* directory, its scripts pointed at the final place, the
# marker written, and then renamed into place in one step, one build at a time (flock). A build
# that is killed leaves at most a .build-* directory, removed by the next build, never a venv
# that looks complete.
#
# The caller sets TOOL (the log prefix), CACHE_DIR, VENV_NAME, MARKER_NAME and EXE (the file
# printed last, relative to the venv), calls venv_mode "$@", then sets EXPECTED_STAMP and
# calls venv_reuse, venv_lock and venv_start; it installs into "$BUILD" and ends with
# venv_publish, which prints the venv dir and the executable and exits 0.

log() { printf '%s: %s\n' "$TOOL" "$*" >&2; }
die() { log "error: $*"; exit 1; }
done_ok() { printf '%s\n%s\n' "$VENV" "$VENV/$EXE"; exit 0; }

# venv_mode ARG: build (no argument), --check, --rebuild, or --help (the caller's header comment,
# lines 2..HELP_END of the calling script).
venv_mode() {
  VENV="$CACHE_DIR/$VENV_NAME"
  MARKER="$VENV/$MARKER_NAME"
  mode=build
  case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    --rebuild) mode=rebuild ;;
    -h|--help) sed -n "2,${HELP_END}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
}

venv_is_complete() { [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$EXPECTED_STAMP" ] && [ -x "$VENV/$EXE" ]; }

# Nothing to do when the venv is complete; --check stops here either way.
venv_reuse() {
  if [ "$mode" != rebuild ] && venv_is_complete; then done_ok; fi
  if [ "$mode" = check ]; then log "not built (or stale): $VENV"; exit 1; fi
}

# One build at a time per venv; whoever waited re-checks, because the other may have finished.
# Then the leftovers of killed builds go (we hold the lock, so nobody else is using them).
venv_lock() {
  mkdir -p "$CACHE_DIR"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_DIR/.$VENV_NAME.lock"
    if ! flock -n 9; then log "waiting for another build of $VENV_NAME ..."; flock 9; fi
    if [ "$mode" != rebuild ] && venv_is_complete; then done_ok; fi
  fi
  rm -rf "$CACHE_DIR/.build-$VENV_NAME".* "$CACHE_DIR/.old-$VENV_NAME".* 2>/dev/null || true
}

# BUILD: a new, empty build directory (the caller removes it on failure with its own trap).
venv_start() {
  BUILD=$(mktemp -d "$CACHE_DIR/.build-$VENV_NAME.XXXXXX")
  chmod 755 "$BUILD"   # mktemp -d makes it 0700
  start=$SECONDS
  log "building $VENV (in $BUILD)"
}

# Point the console scripts (their shebangs carry the build dir) at the final place, then publish.
venv_publish() {
  grep -rlI -- "$BUILD" "$BUILD/bin" 2>/dev/null | while IFS= read -r f; do sed -i "s|$BUILD|$VENV|g" "$f"; done
  sed -i "s|$BUILD|$VENV|g" "$BUILD/pyvenv.cfg"
  dir_publish ""
}

# Write the marker inside the build dir, swap it in with one rename, and print where it is. A tool
# directory that is not a venv (scripts/promtool-env.sh) publishes with this alone; ARG: a note for the log.
dir_publish() {
  printf '%s\n' "$EXPECTED_STAMP" >"$BUILD/$MARKER_NAME"
  if [ -e "$VENV" ]; then
    OLD=$(mktemp -d "$CACHE_DIR/.old-$VENV_NAME.XXXXXX")
    mv -T "$VENV" "$OLD/venv"
    rm -rf "$OLD"
  fi
  mv -T "$BUILD" "$VENV"
  log "built in $((SECONDS - start)) s: $VENV (${1:+$1, }$(du -sh "$VENV" 2>/dev/null | cut -f1))"
  done_ok
}
